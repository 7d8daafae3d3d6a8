//! ChaCha20 on SSSE3 stitched with scalar Poly1305, for the ChaCha20-Poly1305
//! AEAD ([`crate::aead::chacha20_poly1305`]) on x86-64 below AVX2: the
//! technique of libgcrypt's `_gcry_chacha20_poly1305_amd64_ssse3_blocks4`
//! and of [`super::x86_avx2_poly1305`], on 128-bit registers.
//!
//! A batch is 4 ChaCha blocks (256 bytes) in the layout of
//! [`super::x86_ssse3`], one state word of each block per xmm register, and
//! 16 Poly1305 blocks: one in the second and one in the fourth step (column
//! or diagonal pairs) of each of the first 8 double rounds, cut in four
//! parts between the step's vector instructions; the out-of-order core runs
//! the scalar multiplies beside the vector rounds. Old CPUs of this tier
//! have no BMI2, so the products are plain `mul` (result in `rdx:rax`, 31
//! instructions a block); where the CPU has BMI2, `mulx` (25).
//!
//! Opening hashes each batch's ciphertext while it computes the batch's key
//! stream, then decrypts it; sealing hashes the previous batch's ciphertext
//! (one batch behind) and the last one after the loop.

use core::arch::x86_64::*;

use super::x86_ssse3::{N, ROT8, ROT16};
use super::{BLOCK, KEY_LEN, NONCE_LEN, state};
use crate::dispatch::ChaChaImpl;
use crate::wide::poly1305::{self, Key, Poly1305Hash};
use zeroize::Zeroizing;

/// Bytes per batch: 4 ChaCha blocks, 16 Poly1305 blocks.
pub(crate) const BATCH: usize = N * BLOCK;

/// Double rounds of ChaCha20.
const DOUBLE_ROUNDS: usize = 10;

/// Double rounds that hash two Poly1305 blocks each: the batch's 16
/// (`hashing_double_rounds!` is written out for 8).
const HASHING: usize = 8;
const _: () = assert!(HASHING * 2 * poly1305::BLOCK == BATCH && HASHING <= DOUBLE_ROUNDS);

/// Whether this CPU can run the stitched code: SSSE3 (and x86-64's `mul`).
pub(crate) fn runnable() -> bool {
    super::runnable(ChaChaImpl::Ssse3)
}

/// Two quarter rounds, `(a1, b1, c1, d1)` and `(a2, b2, c2, d2)`, on named
/// xmm registers, with `t` as the temporary of the shifts: the assembly text
/// of one step of [`rounds`]. The rotations by 16 and 8 are one `pshufb`
/// each, by 12 and 7 a copy, two shifts and an OR. With `yes`, the four
/// parts of a Poly1305 block (`poly!`, at offset `o` of `{m}`; `o8` is
/// `o + 8`) go one before each quarter; with `mulx` the same with `mulx`.
macro_rules! qr2 {
    ($p:tt, $o:literal, $o8:literal;
     $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal, $t:literal) => {
        concat!(
            poly!($p, 1, $o, $o8),
            qr2!(@add_xor_shuf $a1, $b1, $d1, $a2, $b2, $d2, "{r16}"),
            poly!($p, 2, $o, $o8),
            qr2!(@add_xor_shift $b1, $c1, $d1, $b2, $c2, $d2, $t, "20", "12"),
            poly!($p, 3, $o, $o8),
            qr2!(@add_xor_shuf $a1, $b1, $d1, $a2, $b2, $d2, "{r8}"),
            poly!($p, 4, $o, $o8),
            qr2!(@add_xor_shift $b1, $c1, $d1, $b2, $c2, $d2, $t, "25", "7"),
        )
    };
    // a += b; d ^= a; d <<<= 16 or 8 (a byte shuffle by the mask in memory).
    (@add_xor_shuf $a1:literal, $b1:literal, $d1:literal,
     $a2:literal, $b2:literal, $d2:literal, $mask:literal) => {
        concat!(
            "paddd ", $a1, ", ", $b1, "\n",
            "paddd ", $a2, ", ", $b2, "\n",
            "pxor ", $d1, ", ", $a1, "\n",
            "pxor ", $d2, ", ", $a2, "\n",
            "pshufb ", $d1, ", xmmword ptr [rip + ", $mask, "]\n",
            "pshufb ", $d2, ", xmmword ptr [rip + ", $mask, "]\n",
        )
    };
    // c += d; b ^= c; b <<<= 12 or 7 (a copy, two shifts and an OR).
    (@add_xor_shift $b1:literal, $c1:literal, $d1:literal,
     $b2:literal, $c2:literal, $d2:literal, $t:literal, $right:literal, $left:literal) => {
        concat!(
            "paddd ", $c1, ", ", $d1, "\n",
            "paddd ", $c2, ", ", $d2, "\n",
            "pxor ", $b1, ", ", $c1, "\n",
            "pxor ", $b2, ", ", $c2, "\n",
            "movdqa ", $t, ", ", $b1, "\n",
            "psrld ", $t, ", ", $right, "\n",
            "pslld ", $b1, ", ", $left, "\n",
            "por ", $b1, ", ", $t, "\n",
            "movdqa ", $t, ", ", $b2, "\n",
            "psrld ", $t, ", ", $right, "\n",
            "pslld ", $b2, ", ", $left, "\n",
            "por ", $b2, ", ", $t, "\n",
        )
    };
}

/// Part 1-4 of one Poly1305 block at `{m} + $o` (`$o8` = `$o + 8`), with
/// `mul` (`yes`) or BMI2's `mulx` (`mulx`), or nothing (`no`): the
/// arithmetic of [`crate::wide::poly1305`]'s `absorb` in radix 2^64, `h =
/// (h + m + 2^128) * r` partially reduced (`h2 <= 4` after it), with the
/// key limbs `r0, r1, s1` read from `{k}`. `h1`'s products come first so
/// that its register takes the low limb of `d1`. Each part leaves no carry
/// pending for the next.
macro_rules! poly {
    (no, $part:tt, $o:literal, $o8:literal) => {
        ""
    };
    // Instead of Poly1305, the same quarter of step `$s` of a scalar ChaCha
    // block's double round ([`batch_and_block`]).
    ([key $s:tt], $part:tt, $o:literal, $o8:literal) => {
        scalar_part!($s, $part)
    };
    // h += m + 2^128; d0 = h1 * s1, d1 = h1 * r0 (low limb in h1). `mul`
    // leaves its product in rdx:rax.
    (yes, 1, $o:literal, $o8:literal) => {
        concat!(
            poly!(@add $o, $o8),
            "mov rax, qword ptr [{k} + 16]\n",
            "mul {h1}\n",
            "mov {x0l}, rax\n",
            "mov {x0h}, rdx\n",
            "mov rax, qword ptr [{k}]\n",
            "mul {h1}\n",
            "mov {h1}, rax\n",
            "mov {x1h}, rdx\n",
        )
    };
    // d0 += h0 * r0, d1 += h0 * r1.
    (yes, 2, $o:literal, $o8:literal) => {
        concat!(
            "mov rax, qword ptr [{k}]\n",
            "mul {h0}\n",
            "add {x0l}, rax\n",
            "adc {x0h}, rdx\n",
            "mov rax, qword ptr [{k} + 8]\n",
            "mul {h0}\n",
            "add {h1}, rax\n",
            "adc {x1h}, rdx\n",
        )
    };
    // The same with `mulx` (multiplies rdx, writes any two registers): h0,
    // copied to rdx, is the high half's register in part 2.
    (mulx, 1, $o:literal, $o8:literal) => {
        concat!(
            poly!(@add $o, $o8),
            "mov rdx, {h1}\n",
            "mulx {x0h}, {x0l}, qword ptr [{k} + 16]\n",
            "mulx {x1h}, {h1}, qword ptr [{k}]\n",
        )
    };
    (mulx, 2, $o:literal, $o8:literal) => {
        concat!(
            "mov rdx, {h0}\n",
            "mulx {h0}, rax, qword ptr [{k}]\n",
            "add {x0l}, rax\n",
            "adc {x0h}, {h0}\n",
            "mulx {h0}, rax, qword ptr [{k} + 8]\n",
            "add {h1}, rax\n",
            "adc {x1h}, {h0}\n",
        )
    };
    // d1 += h2 * s1, d2 = h2 * r0 + the high half of d1; h0 = (d2 >> 2) * 5.
    ($p:ident, 3, $o:literal, $o8:literal) => {
        concat!(
            "mov {h0}, {h2}\n",
            "imul {h0}, qword ptr [{k} + 16]\n",
            "imul {h2}, qword ptr [{k}]\n",
            "add {h1}, {h0}\n",
            "adc {h2}, {x1h}\n",
            "mov {h0}, {h2}\n",
            "shr {h0}, 2\n",
            "lea {h0}, [{h0} + 4 * {h0}]\n",
        )
    };
    // h = (d2 >> 2) * 5 + d0 + d1_lo * 2^64 + (d2 & 3) * 2^128.
    ($p:ident, 4, $o:literal, $o8:literal) => {
        concat!(
            "and {h2}, 3\n",
            "add {h0}, {x0l}\n",
            "adc {h1}, {x0h}\n",
            "adc {h2}, 0\n",
        )
    };
    // h += m + 2^128.
    (@add $o:literal, $o8:literal) => {
        concat!(
            "add {h0}, qword ptr [{m} + ", $o, "]\n",
            "adc {h1}, qword ptr [{m} + ", $o8, "]\n",
            "adc {h2}, 1\n",
        )
    };
}

/// One step of [`rounds`]: the assembly `$text` on the 16 xmm registers,
/// `$v[i]` in `xmm{i}`, with the extra operands `$extra`.
macro_rules! step {
    ($v:ident, $text:expr, ($($opt:ident),*), $($extra:tt)*) => {
        // SAFETY: register arithmetic on the operands; aligned 16-byte reads
        // of the masks and of and writes to the swap slot (a live local);
        // 16-byte reads of a Poly1305 block and 24 of the key, which the
        // caller checked are in bounds. SSSE3 is enabled in the caller, and
        // BMI2 where Poly1305 uses `mulx` ([`rounds`]' safety contract).
        unsafe {
            core::arch::asm!(
                $text,
                r16 = sym ROT16,
                r8 = sym ROT8,
                $($extra)*
                inout("xmm0") $v[0], inout("xmm1") $v[1], inout("xmm2") $v[2],
                inout("xmm3") $v[3], inout("xmm4") $v[4], inout("xmm5") $v[5],
                inout("xmm6") $v[6], inout("xmm7") $v[7], inout("xmm8") $v[8],
                inout("xmm9") $v[9], inout("xmm10") $v[10], inout("xmm11") $v[11],
                inout("xmm12") $v[12], inout("xmm13") $v[13], inout("xmm14") $v[14],
                inout("xmm15") $v[15],
                options($($opt),*),
            )
        }
    };
}

/// One double round on `v` (`v[i]` in `xmm{i}`) and the swap slot `slot`
/// (libgcrypt's schedule, as in [`super::x86_avx2`]: word 15 lives in the
/// slot during the first two steps, word 8 during the last two); with `yes`
/// (`mul`) or `mulx`, a Poly1305 block in its second and its fourth step, at
/// offsets `$o0` and `$o1` of `$m` (`$o08`, `$o18` 8 more): `$h` the hash
/// limbs, `$key` the key limbs.
macro_rules! double_round {
    ($v:ident, $slot:ident, no) => {
        double_round!(@one $v, $slot, no, ("0", "0", "0", "0"), [], [],
            (pure, readonly, nostack, preserves_flags));
    };
    ($v:ident, $slot:ident, $p:ident, $h:ident, $m:ident, $key:ident,
     $o0:literal, $o08:literal, $o1:literal, $o18:literal) => {
        double_round!(@one $v, $slot, $p, ($o0, $o08, $o1, $o18),
            [h0 = inout(reg) $h[0], h1 = inout(reg) $h[1], h2 = inout(reg) $h[2],
             m = in(reg) $m, k = in(reg) $key.as_ptr(),
             x0l = out(reg) _, x0h = out(reg) _, x1h = out(reg) _,
             out("rax") _, out("rdx") _,],
            [h0 = inout(reg) $h[0], h1 = inout(reg) $h[1], h2 = inout(reg) $h[2],
             m = in(reg) $m, k = in(reg) $key.as_ptr(),
             x0l = out(reg) _, x0h = out(reg) _, x1h = out(reg) _,
             out("rax") _, out("rdx") _,],
            (pure, readonly, nostack));
    };
    (@one $v:ident, $slot:ident, $p:ident, ($o0:literal, $o08:literal, $o1:literal, $o18:literal),
     [$($e1:tt)*], [$($e2:tt)*], ($($ro:ident),*)) => {
        step!($v, concat!(
            qr2!(no, "0", "0";
                "xmm0", "xmm4", "xmm8", "xmm12", "xmm1", "xmm5", "xmm9", "xmm13", "xmm15"),
            "movdqa xmm15, xmmword ptr [{s}]\n",
            "movdqa xmmword ptr [{s}], xmm8\n",
        ), (nostack, preserves_flags), s = in(reg) &raw mut $slot,);
        step!($v,
            qr2!($p, $o0, $o08;
                "xmm2", "xmm6", "xmm10", "xmm14", "xmm3", "xmm7", "xmm11", "xmm15", "xmm8"),
            ($($ro),*), $($e1)*);
        step!($v, concat!(
            qr2!(no, "0", "0";
                "xmm0", "xmm5", "xmm10", "xmm15", "xmm1", "xmm6", "xmm11", "xmm12", "xmm8"),
            "movdqa xmm8, xmmword ptr [{s}]\n",
            "movdqa xmmword ptr [{s}], xmm15\n",
        ), (nostack, preserves_flags), s = in(reg) &raw mut $slot,);
        step!($v,
            qr2!($p, $o1, $o18;
                "xmm2", "xmm7", "xmm8", "xmm13", "xmm3", "xmm4", "xmm9", "xmm14", "xmm15"),
            ($($ro),*), $($e2)*);
    };
}

/// The 8 double rounds that hash the batch's 16 Poly1305 blocks at `$m`
/// with `$p` (`yes` for `mul`, `mulx`), unrolled with the blocks' offsets
/// written into the assembly (no pointer arithmetic between them).
macro_rules! hashing_double_rounds {
    ($v:ident, $slot:ident, $p:ident, $h:ident, $m:ident, $key:ident) => {
        double_round!($v, $slot, $p, $h, $m, $key, "0", "8", "16", "24");
        double_round!($v, $slot, $p, $h, $m, $key, "32", "40", "48", "56");
        double_round!($v, $slot, $p, $h, $m, $key, "64", "72", "80", "88");
        double_round!($v, $slot, $p, $h, $m, $key, "96", "104", "112", "120");
        double_round!($v, $slot, $p, $h, $m, $key, "128", "136", "144", "152");
        double_round!($v, $slot, $p, $h, $m, $key, "160", "168", "176", "184");
        double_round!($v, $slot, $p, $h, $m, $key, "192", "200", "208", "216");
        double_round!($v, $slot, $p, $h, $m, $key, "224", "232", "240", "248");
    };
}

/// Poly1305 work for [`keystream`]'s rounds: the running hash `h` (`h2 <=
/// 4`), the clamped key `r0, r1, s1 = r1 + r1 / 4` and the batch's 16 blocks.
pub(super) struct Hash<'a> {
    h: &'a mut [u64; 3],
    key: &'a [u64; 3],
    blocks: &'a [u8; BATCH],
}

/// The 20 rounds on the 16 word vectors `x`, hashing `hash`'s blocks if
/// any, with `mulx` if `MULX`. Written as assembly on fixed registers for
/// the reasons of [`super::x86_avx2`]'s (16 state vectors and a temporary
/// do not fit 16 registers: one word lives in a stack slot); always inlined,
/// so that each caller's `hash` is a constant `Some` or `None`.
///
/// # Safety
/// With `MULX`, the CPU must support BMI2.
#[inline(always)]
unsafe fn rounds<const MULX: bool>(x: &mut [__m128i; 16], hash: Option<Hash<'_>>) {
    let mut v = *x;
    let mut slot = x[15];
    match hash {
        None => {
            for _ in 0..DOUBLE_ROUNDS {
                double_round!(v, slot, no);
            }
        }
        Some(Hash { h, key, blocks }) => {
            let mut hh = *h;
            let m = blocks.as_ptr();
            if MULX {
                hashing_double_rounds!(v, slot, mulx, hh, m, key);
            } else {
                hashing_double_rounds!(v, slot, yes, hh, m, key);
            }
            for _ in HASHING..DOUBLE_ROUNDS {
                double_round!(v, slot, no);
            }
            *h = hh;
        }
    }
    v[15] = slot;
    *x = v;
}

/// The 16 state words, each broadcast to a vector, made once per call.
pub(super) type Words = [__m128i; 16];

/// The state `st` as [`Words`].
#[inline]
#[target_feature(enable = "ssse3")]
pub(super) fn broadcast(st: &[u32; 16]) -> Words {
    let mut w = [_mm_setzero_si128(); 16];
    for (v, &x) in w.iter_mut().zip(st) {
        *v = _mm_set1_epi32(x as i32);
    }
    w
}

/// The key stream of `N` blocks from counter `ctr` of the state `st`: the
/// 16 state words after the rounds (hashing `hash`'s blocks) and the
/// feed-forward, one word of each block per vector.
///
/// # Safety
/// The CPU must support SSSE3, and BMI2 with `MULX`. Always inlined (it has
/// no target features of its own, so it is callable only from code with
/// them enabled), so that the key stream goes from registers to [`xor_out`].
#[inline(always)]
pub(super) unsafe fn keystream<const MULX: bool>(
    st: &Words,
    ctr: u32,
    hash: Option<Hash<'_>>,
) -> [__m128i; 16] {
    // SAFETY: the caller guarantees SSSE3 (SSE2 is the x86-64 baseline),
    // and BMI2 with `MULX`.
    unsafe {
        let counters = || _mm_add_epi32(_mm_set1_epi32(ctr as i32), _mm_set_epi32(3, 2, 1, 0));
        let mut x = *st;
        x[12] = counters();
        rounds::<MULX>(&mut x, hash);
        // The input state again from memory (an opaque pointer) and the
        // counters made again, rather than the values from before the
        // rounds, which LLVM spilled to the stack (see the AVX2 kernel's
        // `feed_forward`; here ChaCha20 1.005x, the AEAD level, Zen 3).
        let st = core::hint::black_box(st);
        for (i, v) in x.iter_mut().enumerate() {
            let input = if i == 12 { counters() } else { st[i] };
            *v = _mm_add_epi32(*v, input);
        }
        x
    }
}

/// The key stream of `N` blocks from counter `ctr` of `st` ([`broadcast`])
/// XORed into `out`, and that of one more block, the state `block` (with its
/// own counter), XORed into `block_out`: its rounds run in scalar registers
/// inside the vector steps ([`super::x86_scalar`]), `R / 2` double rounds.
#[inline(never)]
#[target_feature(enable = "ssse3")]
pub(super) fn batch_and_block<const R: usize>(
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    block: &[u32; 16],
    block_out: &mut [u8; BLOCK],
) {
    let counters = || _mm_add_epi32(_mm_set1_epi32(ctr as i32), _mm_set_epi32(3, 2, 1, 0));
    let mut v = *st;
    v[12] = counters();
    // [`double_round!`]'s steps (its swap slot at `{p} + 32`), a
    // quarter-round pair of the scalar block in each.
    let (mut sc, mut r) = scalar_rounds!(
        step,
        v,
        R / 2,
        block,
        v[15],
        concat!(
            qr2!([key 1], "0", "0";
                "xmm0", "xmm4", "xmm8", "xmm12", "xmm1", "xmm5", "xmm9", "xmm13", "xmm15"),
            "movdqa xmm15, xmmword ptr [{p} + 32]\n",
            "movdqa xmmword ptr [{p} + 32], xmm8\n",
            scalar_swap!(1),
            qr2!([key 2], "0", "0";
                "xmm2", "xmm6", "xmm10", "xmm14", "xmm3", "xmm7", "xmm11", "xmm15", "xmm8"),
            scalar_swap!(2),
            qr2!([key 3], "0", "0";
                "xmm0", "xmm5", "xmm10", "xmm15", "xmm1", "xmm6", "xmm11", "xmm12", "xmm8"),
            "movdqa xmm8, xmmword ptr [{p} + 32]\n",
            "movdqa xmmword ptr [{p} + 32], xmm15\n",
            scalar_swap!(3),
            qr2!([key 4], "0", "0";
                "xmm2", "xmm7", "xmm8", "xmm13", "xmm3", "xmm4", "xmm9", "xmm14", "xmm15"),
            scalar_swap!(4),
        )
    );
    v[15] = sc.slot;
    // The feed-forward as in [`keystream`].
    let init = core::hint::black_box(st);
    for (i, x) in v.iter_mut().enumerate() {
        let input = if i == 12 { counters() } else { init[i] };
        *x = _mm_add_epi32(*x, input);
    }
    xor_out(&v, out);
    // The scalar block's words into vectors straight from the registers
    // (through memory, the wide loads would wait on the narrow stores).
    let [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11] = r;
    let w = sc.words.map(|x| x as i32);
    let k = [
        _mm_setr_epi32(r0 as _, r1 as _, w[0], w[1]),
        _mm_setr_epi32(r2 as _, r3 as _, w[2], w[3]),
        _mm_setr_epi32(r4 as _, r5 as _, r6 as _, r7 as _),
        _mm_setr_epi32(r8 as _, r9 as _, r10 as _, r11 as _),
    ];
    for (q, k) in k.into_iter().enumerate() {
        let p = block_out[16 * q..16 * q + 16]
            .as_mut_ptr()
            .cast::<__m128i>();
        // SAFETY: 16-byte unaligned loads of the input block's quarter and
        // of the output's, and a store to the output's (in bounds).
        unsafe {
            let i = _mm_loadu_si128(block[4 * q..].as_ptr().cast());
            _mm_storeu_si128(p, _mm_xor_si128(_mm_loadu_si128(p), _mm_add_epi32(k, i)));
        }
    }
    // Plain locals, in registers or spilled: wipe the copies.
    zeroize::Zeroize::zeroize(&mut r);
    zeroize::Zeroize::zeroize(&mut sc.words);
}

/// XORs the key stream `x` of [`keystream`] into `out`.
#[inline]
#[target_feature(enable = "ssse3")]
pub(super) fn xor_out(x: &[__m128i; 16], out: &mut [u8; BATCH]) {
    let mut xor_into = |at: usize, k: __m128i| {
        let p = out[at..at + 16].as_mut_ptr().cast::<__m128i>();
        // SAFETY: the slice above is 16 bytes long; unaligned load and
        // store (SSE2, the x86-64 baseline).
        unsafe { _mm_storeu_si128(p, _mm_xor_si128(_mm_loadu_si128(p), k)) };
    };
    for g in 0..4 {
        // 4x4 transpose: lane j of words 4g..4g+3 -> block j's 16 bytes.
        let t0 = _mm_unpacklo_epi32(x[4 * g], x[4 * g + 1]);
        let t1 = _mm_unpackhi_epi32(x[4 * g], x[4 * g + 1]);
        let t2 = _mm_unpacklo_epi32(x[4 * g + 2], x[4 * g + 3]);
        let t3 = _mm_unpackhi_epi32(x[4 * g + 2], x[4 * g + 3]);
        xor_into(16 * g, _mm_unpacklo_epi64(t0, t2));
        xor_into(64 + 16 * g, _mm_unpackhi_epi64(t0, t2));
        xor_into(128 + 16 * g, _mm_unpacklo_epi64(t1, t3));
        xor_into(192 + 16 * g, _mm_unpackhi_epi64(t1, t3));
    }
}

/// The ChaCha20 key stream of the batch at counter `ctr` XORed into `out`,
/// with the 16 Poly1305 blocks of `prev`, or if none of `out` before the
/// XOR, absorbed into `h` along with the rounds, by `mul` or by `mulx`
/// (`MULX`).
///
/// # Safety
/// The CPU must support SSSE3, and BMI2 with `MULX`. Always inlined into
/// [`batch_mul`] and [`batch_mulx`], which enable them.
#[inline(always)]
unsafe fn batch_hashing<const MULX: bool>(
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    prev: Option<&[u8; BATCH]>,
    key: Key,
    h: &mut [u64; 3],
) {
    let blocks = prev.unwrap_or(out);
    let key = key.limbs();
    let hash = Hash {
        h,
        key: &key,
        blocks,
    };
    // SAFETY: the caller guarantees SSSE3, and BMI2 with `MULX`.
    unsafe {
        let x = keystream::<MULX>(st, ctr, Some(hash));
        xor_out(&x, out);
    }
}

/// [`batch_hashing`] with `mul`. Out of line, as
/// [`super::x86_avx2_poly1305`]'s, so that the loops around it keep their
/// registers to themselves.
#[inline(never)]
#[target_feature(enable = "ssse3")]
fn batch_mul(
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    prev: Option<&[u8; BATCH]>,
    key: Key,
    h: &mut [u64; 3],
) {
    // SAFETY: SSSE3 is enabled here.
    unsafe { batch_hashing::<false>(st, ctr, out, prev, key, h) }
}

/// [`batch_hashing`] with `mulx` (BMI2).
#[inline(never)]
#[target_feature(enable = "ssse3,bmi2")]
fn batch_mulx(
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    prev: Option<&[u8; BATCH]>,
    key: Key,
    h: &mut [u64; 3],
) {
    // SAFETY: SSSE3 and BMI2 are enabled here.
    unsafe { batch_hashing::<true>(st, ctr, out, prev, key, h) }
}

/// One stitched batch ([`batch_hashing`]) with `mulx` if `mulx`.
///
/// # Safety
/// The CPU must support SSSE3, and BMI2 if `mulx`.
#[inline(always)]
unsafe fn batch(
    mulx: bool,
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    prev: Option<&[u8; BATCH]>,
    key: Key,
    h: &mut [u64; 3],
) {
    // SAFETY: the caller guarantees SSSE3, and BMI2 if `mulx`.
    unsafe {
        if mulx {
            batch_mulx(st, ctr, out, prev, key, h)
        } else {
            batch_mul(st, ctr, out, prev, key, h)
        }
    }
}

/// Seals `data` (whole batches) from the state `st`, hashing the ciphertext.
///
/// # Safety
/// The CPU must support SSSE3, and BMI2 if `mulx`.
#[target_feature(enable = "ssse3")]
unsafe fn seal_batches(st: &[u32; 16], data: &mut [u8], key: Key, h: &mut [u64; 3], mulx: bool) {
    debug_assert!(data.len().is_multiple_of(BATCH));
    let batches = data.len() / BATCH;
    if batches == 0 {
        return;
    }
    let mut hh = *h;
    let mut ctr = st[12];
    let st = &Zeroizing::new(broadcast(st));
    // Nothing sealed yet to hash while the first batch's key stream runs.
    let first: &mut [u8; BATCH] = (&mut data[..BATCH]).try_into().expect("a batch");
    // SAFETY: SSSE3 is enabled here.
    xor_out(&unsafe { keystream::<false>(st, ctr, None) }, first);
    for i in 1..batches {
        ctr = ctr.wrapping_add(N as u32);
        let (done, rest) = data.split_at_mut(i * BATCH);
        let prev: &[u8; BATCH] = done[done.len() - BATCH..].try_into().expect("a batch");
        let out: &mut [u8; BATCH] = (&mut rest[..BATCH]).try_into().expect("a batch");
        // SAFETY: SSSE3 is enabled here; the caller guarantees BMI2 if `mulx`.
        unsafe { batch(mulx, st, ctr, out, Some(prev), key, &mut hh) };
    }
    for b in data[data.len() - BATCH..].chunks_exact(poly1305::BLOCK) {
        key.absorb(
            &mut hh,
            u128::from_le_bytes(b.try_into().expect("16 bytes")),
            1,
        );
    }
    *h = hh;
}

/// Opens `data` (whole batches) from the state `st`, hashing the ciphertext
/// of each batch before it decrypts it.
///
/// # Safety
/// The CPU must support SSSE3, and BMI2 if `mulx`.
#[target_feature(enable = "ssse3")]
unsafe fn open_batches(st: &[u32; 16], data: &mut [u8], key: Key, h: &mut [u64; 3], mulx: bool) {
    debug_assert!(data.len().is_multiple_of(BATCH));
    let mut hh = *h;
    let mut ctr = st[12];
    let st = &Zeroizing::new(broadcast(st));
    for chunk in data.chunks_exact_mut(BATCH) {
        let out: &mut [u8; BATCH] = chunk.try_into().expect("a batch");
        // SAFETY: SSSE3 is enabled here; the caller guarantees BMI2 if `mulx`.
        unsafe { batch(mulx, st, ctr, out, None, key, &mut hh) };
        ctr = ctr.wrapping_add(N as u32);
    }
    *h = hh;
}

/// Whether the CPU has BMI2, for `mulx` (most x86-64 CPUs since 2013 and
/// 2015; the older ones this tier is for do not).
fn bmi2() -> bool {
    std::arch::is_x86_feature_detected!("bmi2")
}

/// ChaCha20 for `key` and `nonce` from block `counter` XORed into the whole
/// 256-byte batches of `data`, and Poly1305 (`mac`) over the result (`seal`)
/// or Poly1305 over them and then ChaCha20 (open, which decrypts before the
/// tag is known: the caller undoes it on a bad tag). Returns the bytes done;
/// the caller finishes the rest (under 256 bytes).
///
/// # Panics
/// If the CPU cannot run it ([`runnable`]), or the batches would run the
/// block counter past `u32::MAX`.
pub(crate) fn apply(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
    mac: &mut Poly1305Hash,
    seal: bool,
) -> usize {
    apply_with(bmi2(), key, nonce, counter, data, mac, seal)
}

/// [`apply`], hashing with `mulx` if `mulx` (else `mul`).
///
/// # Panics
/// As [`apply`], and if `mulx` but the CPU has no BMI2.
fn apply_with(
    mulx: bool,
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
    mac: &mut Poly1305Hash,
    seal: bool,
) -> usize {
    assert!(runnable() && (!mulx || bmi2()), "SSSE3 (and BMI2 for mulx)");
    let len = data.len() / BATCH * BATCH;
    assert!(
        (len / BLOCK) as u64 <= u64::from(u32::MAX - counter),
        "ChaCha block counter would wrap"
    );
    let data = &mut data[..len];
    let st = Zeroizing::new(state(key, counter, nonce));
    let (k, mut h) = mac.state();
    // SAFETY: `runnable` checked SSSE3, `bmi2` BMI2 if `mulx`.
    unsafe {
        if seal {
            seal_batches(&st, data, k, &mut h, mulx)
        } else {
            open_batches(&st, data, k, &mut h, mulx)
        }
    };
    mac.set_h(h);
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chacha::tests::Rng;

    /// The stitched pass with `mul` and (where the CPU has BMI2) `mulx`,
    /// sealing and opening, against the two passes it replaces (ChaCha20
    /// from the portable kernel, Poly1305 from [`Poly1305Hash`]): lengths
    /// around the 256-byte batches, a hash that did not start at zero (as
    /// after the aad), counters near the end of their range; the bytes past
    /// the last whole batch are left alone.
    #[test]
    fn mul_and_mulx_equal_the_two_passes() {
        if !runnable() {
            println!("note: stitched SSSE3 ChaCha20-Poly1305 not tested: no SSSE3");
            return;
        }
        let mut rng = Rng(0x55e3_1305);
        let mut muls = vec![false];
        if bmi2() {
            muls.push(true);
        } else {
            println!("note: the mulx path not tested: this CPU lacks BMI2");
        }
        for mulx in muls {
            for len in [
                0,
                1,
                255,
                256,
                257,
                511,
                512,
                700,
                768,
                1024,
                2560,
                4096 + 17,
            ] {
                let blocks = (len / BATCH * BATCH / BLOCK) as u32;
                for counter in [1, 7, u32::MAX - blocks] {
                    let mut key = [0u8; KEY_LEN];
                    let mut nonce = [0u8; NONCE_LEN];
                    let mut r = [0u8; 16];
                    let mut prefix = [0u8; 48];
                    let mut data = vec![0u8; len];
                    rng.fill(&mut key);
                    rng.fill(&mut nonce);
                    rng.fill(&mut r);
                    rng.fill(&mut prefix);
                    rng.fill(&mut data);
                    for seal in [true, false] {
                        let what = format!("mulx {mulx} len {len} counter {counter} seal {seal}");
                        let mut mac = Poly1305Hash::new(&r);
                        mac.update_blocks(&prefix);
                        let mut want_mac = mac.clone();
                        let mut got = data.clone();
                        let done =
                            apply_with(mulx, &key, &nonce, counter, &mut got, &mut mac, seal);
                        assert_eq!(done, len / BATCH * BATCH, "{what}");
                        let mut want = data.clone();
                        super::super::xor_keystream_with::<20>(
                            ChaChaImpl::Soft,
                            &key,
                            &nonce,
                            counter,
                            &mut want[..done],
                        )
                        .unwrap();
                        let ct = if seal { &want[..done] } else { &data[..done] };
                        want_mac.update_blocks(ct);
                        assert!(got == want, "{what}: data");
                        assert_eq!(mac.finish(), want_mac.finish(), "{what}: hash");
                    }
                }
            }
        }
    }
}
