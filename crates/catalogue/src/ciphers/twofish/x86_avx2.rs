//! Twofish on AVX2 with gathers: sixteen blocks at a time, word `j` of eight
//! blocks per 256-bit register, two registers per word.
//!
//! A round's `g` functions are eight lookups per block in the four
//! key-dependent 1 KiB tables of [`Twofish`]; here each is one `VPGATHERDD`
//! for eight blocks, the byte extraction and everything else one vector
//! instruction for eight blocks. The table code spends two or three integer
//! instructions a lookup on the extraction alone, so where gathers run at
//! the load ports' rate (Intel's big cores from Skylake on, unless the
//! Gather Data Sampling microcode slows them: [`crate::cpu::fast_gather`])
//! this does the same loads with a fraction of the instructions. As
//! libgcrypt's `twofish-avx2-amd64.S`, which makes the same choice.
//!
//! Like the table code, lookups are indexed by secret bytes: not constant
//! time with respect to cache-timing side channels.

use core::arch::x86_64::*;

use crate::backends::x86_avx2::transpose4;

use super::Twofish;
use super::x86_rounds::{self as rounds, Words};

/// Blocks per call.
pub(super) const LANES: usize = 16;

type V = __m256i;

/// The four words of eight blocks, two such sets per call.
type State = [[V; 4]; 2];

impl Words for V {
    /// The four key-dependent tables of [`Twofish`].
    type G = [[u32; 256]; 4];

    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: in the kernels, with AVX2.
        unsafe { _mm256_xor_si256(self, o) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: in the kernels, with AVX2.
        unsafe { _mm256_add_epi32(self, o) }
    }
    #[inline(always)]
    unsafe fn rol1(self) -> Self {
        // SAFETY: in the kernels, with AVX2.
        unsafe { _mm256_or_si256(_mm256_slli_epi32::<1>(self), _mm256_srli_epi32::<31>(self)) }
    }
    #[inline(always)]
    unsafe fn ror1(self) -> Self {
        // SAFETY: in the kernels, with AVX2.
        unsafe { _mm256_or_si256(_mm256_srli_epi32::<1>(self), _mm256_slli_epi32::<31>(self)) }
    }
    #[inline(always)]
    unsafe fn splat(k: u32) -> Self {
        // SAFETY: in the kernels, with AVX2.
        unsafe { _mm256_set1_epi32(k as i32) }
    }
    /// Four gathers, one from each table.
    #[inline(always)]
    unsafe fn g(self, s: &Self::G, rot: bool) -> Self {
        // SAFETY: in the kernels, with AVX2. Every index is a byte (masked to
        // 0..=255 or a shift by 24 of a 32-bit lane), so each gather reads
        // inside its 256-entry table.
        unsafe {
            let x = self;
            let ff = _mm256_set1_epi32(0xFF);
            let b0 = _mm256_and_si256(x, ff);
            let b1 = _mm256_and_si256(_mm256_srli_epi32::<8>(x), ff);
            let b2 = _mm256_and_si256(_mm256_srli_epi32::<16>(x), ff);
            let b3 = _mm256_srli_epi32::<24>(x);
            // g(x <<< 8) takes byte 3 of x at position 0, byte 0 at 1, ...
            let (i0, i1, i2, i3) = if rot {
                (b3, b0, b1, b2)
            } else {
                (b0, b1, b2, b3)
            };
            let t0 = _mm256_i32gather_epi32::<4>(s[0].as_ptr().cast(), i0);
            let t1 = _mm256_i32gather_epi32::<4>(s[1].as_ptr().cast(), i1);
            let t2 = _mm256_i32gather_epi32::<4>(s[2].as_ptr().cast(), i2);
            let t3 = _mm256_i32gather_epi32::<4>(s[3].as_ptr().cast(), i3);
            _mm256_xor_si256(_mm256_xor_si256(t0, t1), _mm256_xor_si256(t2, t3))
        }
    }
}

/// Loads blocks `8h .. 8h + 8` and transposes them: word `j` of the eight
/// blocks in register `j` (lanes in the order 0, 1, 2, 3 / 4, 5, 6, 7 by
/// 128-bit half, as [`store`] expects).
#[inline(always)]
unsafe fn load(inp: *const [u8; 16], h: usize) -> [V; 4] {
    // SAFETY: the caller runs with AVX2 and passes LANES readable blocks;
    // each load reads one whole block.
    unsafe {
        let half = |i: usize| {
            _mm256_loadu2_m128i(inp.add(8 * h + i + 4).cast(), inp.add(8 * h + i).cast())
        };
        transpose4(half(0), half(1), half(2), half(3))
    }
}

/// The inverse of [`load`].
#[inline(always)]
unsafe fn store(out: *mut [u8; 16], h: usize, w: [V; 4]) {
    // SAFETY: the caller runs with AVX2 and passes LANES writable blocks;
    // each store writes one whole block.
    unsafe {
        let r = transpose4(w[0], w[1], w[2], w[3]);
        for (i, v) in r.into_iter().enumerate() {
            _mm256_storeu2_m128i(out.add(8 * h + i + 4).cast(), out.add(8 * h + i).cast(), v);
        }
    }
}

/// Encrypts the [`LANES`] blocks at `inp` into `out` (the same blocks, or
/// [`LANES`] others that do not overlap them).
///
/// # Safety
///
/// The CPU must support AVX2; `inp` must be valid for reading and `out` for
/// writing [`LANES`] blocks. All of the input is read before any output is
/// written, so `inp == out` is allowed.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn encrypt(c: &Twofish, inp: *const [u8; 16], out: *mut [u8; 16]) {
    // SAFETY: AVX2 is enabled for this function; the pointers as the
    // caller promised.
    unsafe {
        let mut x: State = [load(inp, 0), load(inp, 1)];
        rounds::encrypt(&c.s, &c.k, &mut x);
        store(out, 0, x[0]);
        store(out, 1, x[1]);
    }
}

/// Decrypts the [`LANES`] blocks at `inp` into `out` (the same blocks, or
/// [`LANES`] others that do not overlap them).
///
/// # Safety
///
/// The CPU must support AVX2; `inp` must be valid for reading and `out` for
/// writing [`LANES`] blocks. All of the input is read before any output is
/// written, so `inp == out` is allowed.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decrypt(c: &Twofish, inp: *const [u8; 16], out: *mut [u8; 16]) {
    // SAFETY: AVX2 is enabled for this function; the pointers as the
    // caller promised.
    unsafe {
        let mut x: State = [load(inp, 0), load(inp, 1)];
        rounds::decrypt(&c.s, &c.k, &mut x);
        store(out, 0, x[0]);
        store(out, 1, x[1]);
    }
}

/// CBC decryption of one batch: block `j` of `out` is block `j` of `inp`
/// decrypted, XORed with block `j - 1` of `inp` (`iv` for block 0) as it is
/// stored, with no second pass over the batch. The second half is stored
/// first and each half's previous blocks are read before its stores, so
/// `out` may be `inp`.
///
/// # Safety
///
/// The CPU must have AVX2; `inp` valid for reading and `out` for writing
/// [`LANES`] blocks, the same blocks or disjoint ones.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn cbc_decrypt(
    c: &Twofish,
    iv: &[u8; 16],
    inp: *const [u8; 16],
    out: *mut [u8; 16],
) {
    // SAFETY: as the caller promised; every block read or written is one
    // of the LANES blocks at `inp` or `out`, or `iv`.
    unsafe {
        let mut x: State = [load(inp, 0), load(inp, 1)];
        rounds::decrypt(&c.s, &c.k, &mut x);
        let prev = |k: usize| -> *const __m128i {
            if k == 0 {
                iv.as_ptr().cast()
            } else {
                inp.add(k - 1).cast()
            }
        };
        for h in [1, 0] {
            let r = transpose4(x[h][0], x[h][1], x[h][2], x[h][3]);
            let p: [V; 4] =
                core::array::from_fn(|i| _mm256_loadu2_m128i(prev(8 * h + i + 4), prev(8 * h + i)));
            for (i, v) in r.into_iter().enumerate() {
                _mm256_storeu2_m128i(
                    out.add(8 * h + i + 4).cast(),
                    out.add(8 * h + i).cast(),
                    _mm256_xor_si256(v, p[i]),
                );
            }
        }
    }
}
