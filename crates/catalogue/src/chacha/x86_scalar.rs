//! One more ChaCha block in scalar registers beside a vector batch, on
//! x86-64: the parts that the AVX2 and SSSE3 kernels' `batch_and_block`
//! share.
//!
//! The vector rounds keep the vector ports busy and leave integer ALUs idle
//! on CPUs with ALUs apart from the vector ports (AMD Zen; Intel's P-cores
//! from Golden Cove on, ports 6 and 10: [`crate::cpu::integer_ports_spare`]).
//! One more block's rounds in general-purpose registers, a quarter-round
//! pair inside each vector step, then costs a few percent of the batch's
//! time and adds a ninth block to an AVX2 batch, a fifth to an SSSE3 one:
//! the technique of Linux's arm64 `chacha_4block_xor_neon` (four NEON blocks
//! and one scalar). On Intel's Skylake-family cores vector and integer ALU
//! instructions share ports 0, 1 and 5, with one integer ALU beside them, so
//! there the extra block would take the vector rounds' slots; and with a
//! second hardware thread on the core the two threads share its issue
//! width, which the extra block needs. The dispatch uses it only where
//! neither holds ([`crate::cpu::scalar_beside_vector`]).
//!
//! The register plan, the same in every double round: words 8-15 each in a
//! register of their own (`edi`, `r8d`-`r14d`), and words 0/2, 1/3, 4/6 and
//! 5/7 sharing `eax`, `ecx`, `edx` and `esi` (no step uses both words of a
//! pair). Twelve registers and a pointer to [`Scratch`]: at each step the
//! assembly stores the outgoing words of the shared registers and loads the
//! incoming ones, 14 of each a double round. Left to the compiler (one
//! `asm!` a step with the 16 words as operands), the words moved between
//! registers and memory at every step, 100 instructions a double round
//! beside the vector work's 132, and the ninth block gained nothing.

/// The shared words' homes (words 2, 3, 6, 7, 0, 1, 4, 5 at byte offsets 0
/// to 28), then the vector kernel's swap slot at offset 32.
#[repr(C, align(32))]
pub(super) struct Scratch<V> {
    /// The homes of words 2, 3, 6, 7, 0, 1, 4, 5.
    pub(super) words: [u32; 8],
    /// The vector kernel's swap slot.
    pub(super) slot: V,
}

/// Part `$part` (1-4) of step `$step` (1-4: the column pairs (0, 4, 8, 12)
/// and (1, 5, 9, 13), then (2, 6, 10, 14) and (3, 7, 11, 15), the diagonal
/// pairs (0, 5, 10, 15) and (1, 6, 11, 12), then (2, 7, 8, 13) and (3, 4, 9,
/// 14)) of a double round on the scalar block, as assembly text: a += b,
/// d ^= a, d <<<= 16; c += d, b ^= c, b <<<= 12; then 8 and 7.
macro_rules! scalar_part {
    (1, $n:tt) => {
        scalar_part!(@regs $n, "eax", "edx", "edi", "r11d", "ecx", "esi", "r8d", "r12d")
    };
    (2, $n:tt) => {
        scalar_part!(@regs $n, "eax", "edx", "r9d", "r13d", "ecx", "esi", "r10d", "r14d")
    };
    (3, $n:tt) => {
        scalar_part!(@regs $n, "eax", "esi", "r9d", "r14d", "ecx", "edx", "r10d", "r11d")
    };
    (4, $n:tt) => {
        scalar_part!(@regs $n, "eax", "esi", "edi", "r12d", "ecx", "edx", "r8d", "r13d")
    };
    (@regs 1, $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal) => {
        scalar_part!(@qr $a1, $b1, $d1, $a2, $b2, $d2, "16")
    };
    (@regs 2, $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal) => {
        scalar_part!(@qr $c1, $d1, $b1, $c2, $d2, $b2, "12")
    };
    (@regs 3, $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal) => {
        scalar_part!(@qr $a1, $b1, $d1, $a2, $b2, $d2, "8")
    };
    (@regs 4, $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal) => {
        scalar_part!(@qr $c1, $d1, $b1, $c2, $d2, $b2, "7")
    };
    // x1 += y1, z1 ^= x1, z1 <<<= rot; the same on x2, y2, z2.
    (@qr $x1:literal, $y1:literal, $z1:literal,
     $x2:literal, $y2:literal, $z2:literal, $rot:literal) => {
        concat!(
            "add ", $x1, ", ", $y1, "\n",
            "add ", $x2, ", ", $y2, "\n",
            "xor ", $z1, ", ", $x1, "\n",
            "xor ", $z2, ", ", $x2, "\n",
            "rol ", $z1, ", ", $rot, "\n",
            "rol ", $z2, ", ", $rot, "\n",
        )
    };
}

/// The stores and loads of the shared registers after step `$step` of
/// [`scalar_part!`] (`{p}` points to [`Scratch`]); after step 4 the
/// registers hold words 0, 1, 4, 5 again, as the double round began.
macro_rules! scalar_swap {
    // Words 0, 1, 4, 5 out; 2, 3, 6, 7 in.
    (1) => {
        concat!(
            "mov dword ptr [{p} + 16], eax\n",
            "mov dword ptr [{p} + 20], ecx\n",
            "mov dword ptr [{p} + 24], edx\n",
            "mov dword ptr [{p} + 28], esi\n",
            "mov eax, dword ptr [{p}]\n",
            "mov ecx, dword ptr [{p} + 4]\n",
            "mov edx, dword ptr [{p} + 8]\n",
            "mov esi, dword ptr [{p} + 12]\n",
        )
    };
    // Words 2, 3, 7 out; 0, 1, 5 in (6 stays).
    (2) => {
        concat!(
            "mov dword ptr [{p}], eax\n",
            "mov dword ptr [{p} + 4], ecx\n",
            "mov dword ptr [{p} + 12], esi\n",
            "mov eax, dword ptr [{p} + 16]\n",
            "mov ecx, dword ptr [{p} + 20]\n",
            "mov esi, dword ptr [{p} + 28]\n",
        )
    };
    // Words 0, 1, 5, 6 out; 2, 3, 7, 4 in.
    (3) => {
        concat!(
            "mov dword ptr [{p} + 16], eax\n",
            "mov dword ptr [{p} + 20], ecx\n",
            "mov dword ptr [{p} + 28], esi\n",
            "mov dword ptr [{p} + 8], edx\n",
            "mov eax, dword ptr [{p}]\n",
            "mov ecx, dword ptr [{p} + 4]\n",
            "mov esi, dword ptr [{p} + 12]\n",
            "mov edx, dword ptr [{p} + 24]\n",
        )
    };
    // Words 2, 3, 7 out; 0, 1, 5 in (4 stays).
    (4) => {
        scalar_swap!(2)
    };
}

/// `$n` double rounds of the vector words `$v` and of the scalar block
/// `$block` (a `&[u32; 16]`) together, one `asm!` each through the kernel's
/// `step!` macro `$step`: `$text` uses `{p}` for the [`Scratch`], whose
/// swap slot starts as `$slot`. Evaluates to the scratch and the twelve
/// registers of [`split`] after the rounds. The registers are twelve locals,
/// not an array: as an array's elements, LLVM stored all twelve to the
/// stack after each double round. The count is opaque so that LLVM keeps
/// the loop: unrolled, the ten double rounds are 2,600 instructions, which
/// ran 0.94x as fast on Zen 4.
macro_rules! scalar_rounds {
    ($step:ident, $v:ident, $n:expr, $block:expr, $slot:expr, $text:expr) => {{
        let (r, words) = super::x86_scalar::split($block);
        let [mut r0, mut r1, mut r2, mut r3, mut r4, mut r5, mut r6, mut r7, mut r8, mut r9, mut r10, mut r11] = r;
        let mut sc = super::x86_scalar::Scratch { words, slot: $slot };
        for _ in 0..core::hint::black_box($n) {
            $step!($v, $text, (nostack), p = in(reg) &raw mut sc,
                inout("eax") r0, inout("ecx") r1, inout("edx") r2, inout("esi") r3,
                inout("edi") r4, inout("r8d") r5, inout("r9d") r6, inout("r10d") r7,
                inout("r11d") r8, inout("r12d") r9, inout("r13d") r10, inout("r14d") r11,);
        }
        (sc, [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11])
    }};
}

/// The state `s` as the registers of [`scalar_rounds!`] (words 0, 1,
/// 4, 5, 8-15) and the homes of [`Scratch::words`] (words 2, 3, 6, 7, then
/// room for 0, 1, 4, 5).
pub(super) fn split(s: &[u32; 16]) -> ([u32; 12], [u32; 8]) {
    let r = [
        s[0], s[1], s[4], s[5], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15],
    ];
    (r, [s[2], s[3], s[6], s[7], 0, 0, 0, 0])
}

/// How many batches of `n + 1` blocks (`n` vector, one scalar) to run over
/// `blocks` whole blocks, leaving a multiple of `n` to the plain batches
/// where it can: `a` batches and `b` plain ones make `(n + 1) * a + n * b`
/// blocks, so `a` is congruent to `blocks` modulo `n`. Where no such `a`
/// fits (fewer than `n * (n + 1)` blocks), as many as fit, and the plain
/// kernel's short tail takes the rest.
pub(super) fn hybrid_batches(blocks: usize, n: usize) -> usize {
    let most = blocks / (n + 1);
    let want = blocks % n;
    if most < want {
        return most;
    }
    most - (most - want) % n
}

/// The key stream of `st` (counter in word 12) XORed into `data`: first
/// [`hybrid_batches`] batches of `n + 1` blocks, each by `batch(ctr, out,
/// extra, extra_out)` with the vector blocks from `ctr` into `out` and the
/// state `extra` (block `ctr + n`) into `extra_out`, then the rest by
/// `rest(state, data)`.
pub(super) fn xor_keystream(
    st: &[u32; 16],
    data: &mut [u8],
    n: usize,
    mut batch: impl FnMut(u32, &mut [u8], &[u32; 16], &mut [u8; super::BLOCK]),
    rest: impl FnOnce(&[u32; 16], &mut [u8]),
) {
    let hybrid = hybrid_batches(data.len() / super::BLOCK, n);
    let (head, tail) = data.split_at_mut(hybrid * (n + 1) * super::BLOCK);
    let mut extra = zeroize::Zeroizing::new(*st);
    let mut ctr = st[12];
    for out in head.chunks_exact_mut((n + 1) * super::BLOCK) {
        extra[12] = ctr.wrapping_add(n as u32);
        let (vector, scalar) = out.split_at_mut(n * super::BLOCK);
        batch(ctr, vector, &extra, scalar.try_into().expect("a block"));
        ctr = ctr.wrapping_add(n as u32 + 1);
    }
    extra[12] = ctr;
    rest(&extra, tail);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a search: the most batches that leave a multiple of `n`
    /// blocks, else the most that fit.
    #[test]
    fn hybrid_batches_leave_whole_plain_batches() {
        for n in [4, 8] {
            for blocks in 0..2000 {
                let fit = blocks / (n + 1);
                let want = (0..=fit)
                    .rev()
                    .find(|a| (blocks - (n + 1) * a) % n == 0)
                    .unwrap_or(fit);
                assert_eq!(hybrid_batches(blocks, n), want, "n {n} blocks {blocks}");
            }
        }
        // 64 KiB in 64-byte blocks: 112 batches of 9 and 2 of 8.
        assert_eq!(hybrid_batches(1024, 8), 112);
    }
}
