//! GHASH as POLYVAL with PCLMULQDQ on 128-bit registers (x86-64 with AES-NI
//! but no VPCLMULQDQ: the `aesni-avx2` tier). Eight blocks per reduction
//! (Gueron and Kounavis's aggregation): each block's Karatsuba product with
//! its power of H (three multiplies, the powers' `hi ^ lo` made once per
//! call) summed unreduced, then one reduction; schoolbook products in the
//! tail. Also the 128-bit helpers the VPCLMULQDQ backend shares: the
//! reduction is Gueron's for POLYVAL (two folds by x^64 with 0xc2 << 56).

use core::arch::x86_64::*;

use super::Powers;

/// Blocks per reduction.
const BATCH: usize = 8;

/// The byte reversal of a 128-bit lane: GHASH's byte order to POLYVAL's.
#[inline(always)]
pub(super) fn rev128() -> __m128i {
    // SAFETY: SSE2 is in the x86-64 baseline.
    unsafe { _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) }
}

/// `(hi:lo) · x^-128 mod g`: the 256-bit product reduced to 128 bits.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn reduce(lo: __m128i, hi: __m128i) -> __m128i {
    let poly = _mm_set_epi64x(0xc200_0000_0000_0000_u64 as i64, 1);
    let t = _mm_clmulepi64_si128::<0x10>(lo, poly);
    let lo = _mm_xor_si128(_mm_shuffle_epi32::<0x4e>(lo), t);
    let t = _mm_clmulepi64_si128::<0x10>(lo, poly);
    let lo = _mm_xor_si128(_mm_shuffle_epi32::<0x4e>(lo), t);
    _mm_xor_si128(lo, hi)
}

/// Adds the schoolbook product of `x` and `k` into `(lo, mid, hi)`.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn mul_acc128(x: __m128i, k: __m128i, acc: &mut [__m128i; 3]) {
    acc[0] = _mm_xor_si128(acc[0], _mm_clmulepi64_si128::<0x00>(x, k));
    acc[1] = _mm_xor_si128(acc[1], _mm_clmulepi64_si128::<0x01>(x, k));
    acc[1] = _mm_xor_si128(acc[1], _mm_clmulepi64_si128::<0x10>(x, k));
    acc[2] = _mm_xor_si128(acc[2], _mm_clmulepi64_si128::<0x11>(x, k));
}

/// Reduces the sums `(lo, mid, hi)` to one field element.
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) fn finish(acc: [__m128i; 3]) -> __m128i {
    let lo = _mm_xor_si128(acc[0], _mm_slli_si128::<8>(acc[1]));
    let hi = _mm_xor_si128(acc[2], _mm_srli_si128::<8>(acc[1]));
    reduce(lo, hi)
}

/// A u128 as a register, its low half in lane 0 (x86 is little-endian).
#[inline(always)]
pub(super) fn m128(x: u128) -> __m128i {
    // SAFETY: u128 and __m128i are both 16 bytes of plain data.
    unsafe { core::mem::transmute::<u128, __m128i>(x) }
}

/// The register as a u128 (the inverse of [`m128`]).
#[inline(always)]
pub(super) fn u128_of(x: __m128i) -> u128 {
    // SAFETY: as in `m128`.
    unsafe { core::mem::transmute::<__m128i, u128>(x) }
}

/// POLYVAL's product `a · b · x^-128` (key set-up: the powers of H).
///
/// # Safety
/// The CPU must have PCLMULQDQ.
#[target_feature(enable = "pclmulqdq,sse2")]
pub(super) unsafe fn mul(a: u128, b: u128) -> u128 {
    let (a, b) = (m128(a), m128(b));
    let mut acc = [_mm_setzero_si128(); 3];
    mul_acc128(a, b, &mut acc);
    u128_of(finish(acc))
}

/// Adds the Karatsuba product of `x` and `k` into `(lo, mid, hi)`; `kmid`
/// holds `k.lo ^ k.hi` in the half `SEL` picks (0x00: low, 0x10: high), so
/// one register serves two powers. The middle sum is Karatsuba's until
/// [`karatsuba_mid`].
///
/// # Safety
/// The CPU must have PCLMULQDQ (callers are `#[target_feature]` functions).
#[inline(always)]
unsafe fn mul_acc_kara<const SEL: i32>(
    x: __m128i,
    k: __m128i,
    kmid: __m128i,
    acc: &mut [__m128i; 3],
) {
    // SAFETY: PCLMULQDQ as the caller promises; SSE2 is the baseline.
    unsafe {
        let xm = _mm_xor_si128(x, _mm_shuffle_epi32::<0x4e>(x));
        acc[0] = _mm_xor_si128(acc[0], _mm_clmulepi64_si128::<0x00>(x, k));
        acc[1] = _mm_xor_si128(acc[1], _mm_clmulepi64_si128::<SEL>(xm, kmid));
        acc[2] = _mm_xor_si128(acc[2], _mm_clmulepi64_si128::<0x11>(x, k));
    }
}

/// (a.lo + a.hi)(b.lo + b.hi) - lo - hi: the schoolbook middle term from
/// Karatsuba's, for the whole sum at once (it is linear).
#[inline(always)]
fn karatsuba_mid(mut acc: [__m128i; 3]) -> [__m128i; 3] {
    // SAFETY: SSE2 is in the x86-64 baseline.
    acc[1] = unsafe { _mm_xor_si128(acc[1], _mm_xor_si128(acc[0], acc[2])) };
    acc
}

/// The eight-block batch's key material: `H^8 .. H^1`, and their `hi ^ lo`
/// two to a register (`mid[j / 2]`, power `j` in the low half if `j` is even).
#[derive(Clone, Copy)]
pub(super) struct BatchKeys {
    pow: [__m128i; BATCH],
    mid: [__m128i; BATCH / 2],
}

impl BatchKeys {
    /// Loads `H^8 .. H^1` from the last eight `powers`.
    #[inline(always)]
    pub(super) fn new(powers: &Powers) -> BatchKeys {
        // SAFETY: SSE2 is in the x86-64 baseline.
        unsafe {
            let mut pow = [_mm_setzero_si128(); BATCH];
            let mut mid = [_mm_setzero_si128(); BATCH / 2];
            for (p, &h) in pow.iter_mut().zip(&powers[16 - BATCH..]) {
                *p = m128(h);
            }
            for (j, m) in mid.iter_mut().enumerate() {
                let (a, b) = (pow[2 * j], pow[2 * j + 1]);
                // Low half: a.lo ^ a.hi; high half: b.lo ^ b.hi.
                *m = _mm_xor_si128(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
            }
            BatchKeys { pow, mid }
        }
    }
}

/// The hash of eight blocks `x` (already in POLYVAL's byte order) into `a`:
/// `(a + x0) H^8 + x1 H^7 + .. + x7 H^1`, reduced once.
///
/// # Safety
/// The CPU must have PCLMULQDQ; callers are `#[target_feature]` functions
/// with it.
#[inline(always)]
pub(super) unsafe fn batch8(a: __m128i, x: &[__m128i; BATCH], k: &BatchKeys) -> __m128i {
    // SAFETY: SSE2 is in the x86-64 baseline; PCLMULQDQ as the caller promises.
    unsafe {
        let mut s = [_mm_setzero_si128(); 3];
        // The blocks that do not depend on the running hash first, so their
        // products overlap the previous batch's reduction.
        for j in (1..BATCH).rev() {
            if j % 2 == 0 {
                mul_acc_kara::<0x00>(x[j], k.pow[j], k.mid[j / 2], &mut s);
            } else {
                mul_acc_kara::<0x10>(x[j], k.pow[j], k.mid[j / 2], &mut s);
            }
        }
        mul_acc_kara::<0x00>(_mm_xor_si128(x[0], a), k.pow[0], k.mid[0], &mut s);
        finish(karatsuba_mid(s))
    }
}

/// Absorbs the whole blocks of `data` into `acc` (POLYVAL form).
///
/// # Safety
/// The CPU must have PCLMULQDQ and SSSE3.
#[target_feature(enable = "pclmulqdq,ssse3")]
pub(super) unsafe fn update(acc: &mut u128, powers: &Powers, data: &[u8]) {
    let rev = rev128();
    let mut a = m128(*acc);
    let keys = BatchKeys::new(powers);
    let mut blocks = data.chunks_exact(16 * BATCH);
    for batch in &mut blocks {
        let p = batch.as_ptr();
        let mut x = [_mm_setzero_si128(); BATCH];
        for (j, x) in x.iter_mut().enumerate() {
            // SAFETY: the batch is 128 bytes: 16 from 16 j are inside it.
            *x = _mm_shuffle_epi8(unsafe { _mm_loadu_si128(p.add(16 * j).cast()) }, rev);
        }
        // SAFETY: this function runs with PCLMULQDQ.
        a = unsafe { batch8(a, &x, &keys) };
    }
    // Fewer than 8 blocks left: block i of r takes H^(r-i), summed
    // unreduced (schoolbook), one reduction.
    let rest = blocks.remainder();
    let r = rest.len() / 16;
    if r > 0 {
        let mut s = [_mm_setzero_si128(); 3];
        for (i, b) in rest.chunks_exact(16).enumerate() {
            // SAFETY: `b` is 16 bytes.
            let mut x = _mm_shuffle_epi8(unsafe { _mm_loadu_si128(b.as_ptr().cast()) }, rev);
            if i == 0 {
                x = _mm_xor_si128(x, a);
            }
            mul_acc128(x, m128(powers[16 - r + i]), &mut s);
        }
        a = finish(s);
    }
    *acc = u128_of(a);
}
