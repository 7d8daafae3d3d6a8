//! ChaCha on AVX-512: 16 blocks, one state word of each in a 512-bit
//! register (16 of the 32 registers: no spills); rotations are `vprold`.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::backends::x86_avx512::transpose4;

/// Blocks per batch.
const N: usize = 16;

#[inline]
#[target_feature(enable = "avx512f")]
fn add(a: __m512i, b: __m512i) -> __m512i {
    _mm512_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn xor(a: __m512i, b: __m512i) -> __m512i {
    _mm512_xor_si512(a, b)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r16(x: __m512i) -> __m512i {
    _mm512_rol_epi32::<16>(x)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r12(x: __m512i) -> __m512i {
    _mm512_rol_epi32::<12>(x)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r8(x: __m512i) -> __m512i {
    _mm512_rol_epi32::<8>(x)
}
#[inline]
#[target_feature(enable = "avx512f")]
fn r7(x: __m512i) -> __m512i {
    _mm512_rol_epi32::<7>(x)
}

/// XORs 64 bytes of key stream `k` into `out[at..at + 64]`.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor_into(out: &mut [u8], at: usize, k: __m512i) {
    let p = out[at..at + 64].as_mut_ptr().cast::<__m512i>();
    // SAFETY: the slice above is 64 bytes long; unaligned load and store.
    unsafe { _mm512_storeu_si512(p, _mm512_xor_si512(_mm512_loadu_si512(p), k)) };
}

/// The 16 state words, each broadcast to a vector: made once per call.
type Words = [__m512i; 16];

/// The state `st` as [`Words`].
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(st: &[u32; 16]) -> Words {
    let mut w = [_mm512_setzero_si512(); 16];
    for (v, &x) in w.iter_mut().zip(st) {
        *v = _mm512_set1_epi32(x as i32);
    }
    w
}

/// The counters of blocks `ctr` to `ctr + 15`, one per lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn counters(ctr: u32) -> __m512i {
    _mm512_add_epi32(
        _mm512_set1_epi32(ctr as i32),
        _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
    )
}

/// The feed-forward of the state `st` with counters `ctrs` into the
/// rounds' output `x`, and the key stream XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "avx512f")]
fn finish(mut x: [__m512i; 16], st: &Words, ctrs: __m512i, out: &mut [u8]) {
    for (i, v) in x.iter_mut().enumerate() {
        *v = add(*v, if i == 12 { ctrs } else { st[i] });
    }
    // After the in-lane transposes, t[g][k] has in its 128-bit lane L words
    // 4g..4g+3 of block 4L + k; a 4x4 transpose of lanes gathers each block.
    let t = [
        transpose4(x[0], x[1], x[2], x[3]),
        transpose4(x[4], x[5], x[6], x[7]),
        transpose4(x[8], x[9], x[10], x[11]),
        transpose4(x[12], x[13], x[14], x[15]),
    ];
    #[allow(
        clippy::needless_range_loop,
        reason = "k picks one of each of t's four rows"
    )]
    for k in 0..4 {
        let a = _mm512_shuffle_i32x4::<0x44>(t[0][k], t[1][k]);
        let b = _mm512_shuffle_i32x4::<0x44>(t[2][k], t[3][k]);
        let c = _mm512_shuffle_i32x4::<0xEE>(t[0][k], t[1][k]);
        let d = _mm512_shuffle_i32x4::<0xEE>(t[2][k], t[3][k]);
        xor_into(out, 64 * k, _mm512_shuffle_i32x4::<0x88>(a, b));
        xor_into(out, 64 * (k + 4), _mm512_shuffle_i32x4::<0xDD>(a, b));
        xor_into(out, 64 * (k + 8), _mm512_shuffle_i32x4::<0x88>(c, d));
        xor_into(out, 64 * (k + 12), _mm512_shuffle_i32x4::<0xDD>(c, d));
    }
}

/// One batch of `N` blocks from counter `ctr` XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "avx512f")]
fn batch<const R: usize>(st: &Words, ctr: u32, out: &mut [u8]) {
    let mut x = *st;
    x[12] = counters(ctr);
    let ctrs = x[12];
    rounds!(R, x, add, xor, r16, r12, r8, r7);
    finish(x, st, ctrs, out);
}

/// `a += b; d ^= a; d <<<= n` for each `(a, b, d)` of zmm register numbers:
/// the additions first, then each XOR with its rotation; by 16 and 8 a byte
/// shuffle (`shuf` and the mask operand), by 12 and 7 a `vprold`. Intel's
/// tables put the two kinds on different execution ports (not measured
/// here); on Zen 4 the mix measured 2% faster than `vprold` alone.
#[cfg(target_arch = "x86_64")]
macro_rules! arx {
    (shuf $m:literal; $(($a:literal, $b:literal, $d:literal)),*) => {
        concat!(
            $( "vpaddd zmm", $a, ", zmm", $a, ", zmm", $b, "\n", )*
            $( "vpxord zmm", $d, ", zmm", $d, ", zmm", $a, "\n",
               "vpshufb zmm", $d, ", zmm", $d, ", zmmword ptr [rip + ", $m, "]\n", )*
        )
    };
    ($n:literal; $(($a:literal, $b:literal, $d:literal)),*) => {
        concat!(
            $( "vpaddd zmm", $a, ", zmm", $a, ", zmm", $b, "\n", )*
            $( "vpxord zmm", $d, ", zmm", $d, ", zmm", $a, "\n",
               "vprold zmm", $d, ", zmm", $d, ", ", $n, "\n", )*
        )
    };
}

/// Byte-shuffle masks of the 16- and 8-bit rotations of `double_round2!`,
/// read from memory by `vpshufb`: every register holds state.
#[cfg(target_arch = "x86_64")]
#[repr(align(64))]
struct Mask(#[allow(dead_code, reason = "read by asm! only")] [u8; 64]);
#[cfg(target_arch = "x86_64")]
impl Mask {
    /// `pattern` in each of the four 128-bit lanes.
    const fn lanes(pattern: [u8; 16]) -> Self {
        let mut m = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            m[i] = pattern[i % 16];
            i += 1;
        }
        Mask(m)
    }
}
#[cfg(target_arch = "x86_64")]
static ROT16: Mask = Mask::lanes([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);
#[cfg(target_arch = "x86_64")]
static ROT8: Mask = Mask::lanes([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]);

/// A double round of two batches at once, the first in zmm0-15 and the
/// second in zmm16-31, each quarter-round step of one next to the same step
/// of the other. A batch alone has four independent quarter rounds, too few
/// for CPUs whose 512-bit rotation takes two cycles (Zen 4: 64 cycles a
/// double round alone, 58 for each of two together; see docs/PERFORMANCE-LOG.md).
/// x86-64 only: 32-bit x86 has 8 vector registers.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
macro_rules! double_round2 {
    () => {
        concat!(
            // Columns (0, 4, 8, 12) ... (3, 7, 11, 15).
            round2!(
                [(0, 4, 12), (1, 5, 13), (2, 6, 14), (3, 7, 15),
                 (16, 20, 28), (17, 21, 29), (18, 22, 30), (19, 23, 31)],
                [(8, 12, 4), (9, 13, 5), (10, 14, 6), (11, 15, 7),
                 (24, 28, 20), (25, 29, 21), (26, 30, 22), (27, 31, 23)]
            ),
            // Diagonals (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14).
            round2!(
                [(0, 5, 15), (1, 6, 12), (2, 7, 13), (3, 4, 14),
                 (16, 21, 31), (17, 22, 28), (18, 23, 29), (19, 20, 30)],
                [(10, 15, 5), (11, 12, 6), (8, 13, 7), (9, 14, 4),
                 (26, 31, 21), (27, 28, 22), (24, 29, 23), (25, 30, 20)]
            ),
        )
    };
}

/// One round of `double_round2!`: its quarter rounds' `(a, b, d)` and
/// `(c, d, b)` register triples, through the four steps.
#[cfg(target_arch = "x86_64")]
macro_rules! round2 {
    ([$($abd:tt),*], [$($cdb:tt),*]) => {
        concat!(
            arx!(shuf "{r16}"; $($abd),*),
            arx!(12; $($cdb),*),
            arx!(shuf "{r8}"; $($abd),*),
            arx!(7; $($cdb),*),
        )
    };
}

/// Two batches (`2 * N` blocks) from counter `ctr` XORed into `out`
/// (`2 * N * 64` bytes), their rounds interleaved (`double_round2!`).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn batch2<const R: usize>(st: &Words, ctr: u32, out: &mut [u8]) {
    let (mut x, mut y) = (*st, *st);
    x[12] = counters(ctr);
    y[12] = counters(ctr.wrapping_add(N as u32));
    let (cx, cy) = (x[12], y[12]);
    for _ in 0..R / 2 {
        // SAFETY: arithmetic on the 32 zmm registers, which hold the
        // operands; AVX-512 F is enabled here.
        unsafe {
            core::arch::asm!(
                double_round2!(),
                r16 = sym ROT16,
                r8 = sym ROT8,
                inout("zmm0") x[0], inout("zmm1") x[1], inout("zmm2") x[2],
                inout("zmm3") x[3], inout("zmm4") x[4], inout("zmm5") x[5],
                inout("zmm6") x[6], inout("zmm7") x[7], inout("zmm8") x[8],
                inout("zmm9") x[9], inout("zmm10") x[10], inout("zmm11") x[11],
                inout("zmm12") x[12], inout("zmm13") x[13], inout("zmm14") x[14],
                inout("zmm15") x[15],
                inout("zmm16") y[0], inout("zmm17") y[1], inout("zmm18") y[2],
                inout("zmm19") y[3], inout("zmm20") y[4], inout("zmm21") y[5],
                inout("zmm22") y[6], inout("zmm23") y[7], inout("zmm24") y[8],
                inout("zmm25") y[9], inout("zmm26") y[10], inout("zmm27") y[11],
                inout("zmm28") y[12], inout("zmm29") y[13], inout("zmm30") y[14],
                inout("zmm31") y[15],
                options(pure, readonly, nostack, preserves_flags),
            );
        }
    }
    let (first, second) = out.split_at_mut(N * super::BLOCK);
    finish(x, st, cx, first);
    finish(y, st, cy, second);
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
///
/// # Safety
/// The CPU must support AVX-512 F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    if data.len() <= 8 * super::BLOCK {
        // SAFETY: AVX-512 F implies AVX2 (every CPU with it has AVX2, and so
        // does the target feature); a short request takes the 8-block code.
        unsafe { super::x86_avx2::xor_keystream::<R>(st, data) };
        return;
    }
    let words = zeroize::Zeroizing::new(broadcast(st));
    #[allow(unused_mut, reason = "32-bit x86 has only the single batches")]
    let (mut ctr, mut tail) = (st[12], data);
    #[cfg(target_arch = "x86_64")]
    {
        let pairs = tail.len() / (2 * N * super::BLOCK) * (2 * N * super::BLOCK);
        let (head, rest) = tail.split_at_mut(pairs);
        for out in head.chunks_exact_mut(2 * N * super::BLOCK) {
            batch2::<R>(&words, ctr, out);
            ctr = ctr.wrapping_add(2 * N as u32);
        }
        tail = rest;
    }
    batches!(N, ctr, tail, |c, out| batch::<R>(&words, c, out));
}
