//! AVX2 code for the XTS tweak chain and for XOR passes.
//!
//! XTS tweaks are T·α^i (IEEE 1619 §5.2), a serial chain that in scalar u128
//! code costs more than AES-NI itself. Here four registers hold eight
//! consecutive tweaks, two per register, and each register steps by α^8: a
//! 64-bit shift by 8, the carried-out byte of the low half moved into the high
//! half, and the byte shifted out of the top folded back by
//! x^128 = x^7 + x^2 + x + 1, i.e. c·(x^7 + x^2 + x + 1) = c<<7 ^ c<<2 ^ c<<1 ^ c,
//! which needs no carry-less multiply.

use core::arch::x86_64::*;

/// Tweaks per iteration of the main loop.
pub const TWEAKS_PER_STEP: usize = 8;

#[inline(always)]
fn split(t: u128) -> (i64, i64) {
    (t as u64 as i64, (t >> 64) as u64 as i64)
}

/// Multiplies both 128-bit lanes of `t` by α^8.
#[inline]
#[target_feature(enable = "avx2")]
fn step8(t: __m256i, low: __m256i, high: __m256i) -> __m256i {
    let shifted = _mm256_slli_epi64::<8>(t);
    let carry = _mm256_srli_epi64::<56>(t);
    // Swap the 64-bit halves of each lane: the low half's carry goes up, the
    // top's overflow goes down to be reduced.
    let r = _mm256_shuffle_epi32::<0x4E>(carry);
    let reduced = _mm256_xor_si256(
        _mm256_xor_si256(r, _mm256_slli_epi64::<1>(r)),
        _mm256_xor_si256(_mm256_slli_epi64::<2>(r), _mm256_slli_epi64::<7>(r)),
    );
    _mm256_xor_si256(
        shifted,
        _mm256_or_si256(_mm256_and_si256(reduced, low), _mm256_and_si256(r, high)),
    )
}

/// XORs consecutive tweaks starting at `first` (the tweaks of `data`'s blocks,
/// `first_eight[j]` = T·α^j) into `data` and stores them in `tweaks`; returns the
/// tweak after the last block. `data.len()` must be a multiple of
/// `16 * TWEAKS_PER_STEP` and equal `tweaks.len()`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn xor_tweaks(first_eight: &[u128; 8], data: &mut [u8], tweaks: &mut [u8]) -> u128 {
    assert_eq!(data.len(), tweaks.len());
    assert!(data.len().is_multiple_of(16 * TWEAKS_PER_STEP));
    let lane = |a: u128, b: u128| {
        let (a0, a1) = split(a);
        let (b0, b1) = split(b);
        _mm256_set_epi64x(b1, b0, a1, a0)
    };
    let f = first_eight;
    let (mut t0, mut t1, mut t2, mut t3) = (
        lane(f[0], f[1]),
        lane(f[2], f[3]),
        lane(f[4], f[5]),
        lane(f[6], f[7]),
    );
    let low = _mm256_set_epi64x(0, -1, 0, -1);
    let high = _mm256_set_epi64x(-1, 0, -1, 0);
    for (d, w) in data.chunks_exact_mut(128).zip(tweaks.chunks_exact_mut(128)) {
        let dp = d.as_mut_ptr().cast::<__m256i>();
        let wp = w.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `d` and `w` are 128 bytes long: four unaligned 32-byte loads or
        // stores at offsets 0, 32, 64 and 96 stay in bounds.
        unsafe {
            _mm256_storeu_si256(dp, _mm256_xor_si256(_mm256_loadu_si256(dp), t0));
            _mm256_storeu_si256(
                dp.add(1),
                _mm256_xor_si256(_mm256_loadu_si256(dp.add(1)), t1),
            );
            _mm256_storeu_si256(
                dp.add(2),
                _mm256_xor_si256(_mm256_loadu_si256(dp.add(2)), t2),
            );
            _mm256_storeu_si256(
                dp.add(3),
                _mm256_xor_si256(_mm256_loadu_si256(dp.add(3)), t3),
            );
            _mm256_storeu_si256(wp, t0);
            _mm256_storeu_si256(wp.add(1), t1);
            _mm256_storeu_si256(wp.add(2), t2);
            _mm256_storeu_si256(wp.add(3), t3);
        }
        t0 = step8(t0, low, high);
        t1 = step8(t1, low, high);
        t2 = step8(t2, low, high);
        t3 = step8(t3, low, high);
    }
    let lo = _mm256_extract_epi64::<0>(t0) as u64;
    let hi = _mm256_extract_epi64::<1>(t0) as u64;
    (u128::from(hi) << 64) | u128::from(lo)
}

/// `dst ^= src`, 32 bytes at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    // The compiler vectorises this loop with 256-bit registers inside this function.
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Writes consecutive 128-bit big-endian counters starting at `start` into
/// `out` (a multiple of 32 bytes). The low 64 bits must not wrap within `out`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn fill_counters_be(start: u128, out: &mut [u8]) {
    assert!(out.len().is_multiple_of(32));
    let (lo, hi) = split(start);
    let mut v = _mm256_set_epi64x(hi, lo.wrapping_add(1), hi, lo);
    let inc = _mm256_set_epi64x(0, 2, 0, 2);
    // Reverses the 16 bytes of each lane: little-endian numbers to big-endian blocks.
    let reverse = _mm256_broadcastsi128_si256(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    for chunk in out.chunks_exact_mut(32) {
        // SAFETY: `chunk` is 32 bytes; the store is unaligned.
        unsafe {
            _mm256_storeu_si256(chunk.as_mut_ptr().cast(), _mm256_shuffle_epi8(v, reverse));
        }
        v = _mm256_add_epi64(v, inc);
    }
}

/// 4x4 transpose of 32-bit words (its own inverse) within each 128-bit half.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn transpose4(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(a, b);
    let t1 = _mm256_unpackhi_epi32(a, b);
    let t2 = _mm256_unpacklo_epi32(c, d);
    let t3 = _mm256_unpackhi_epi32(c, d);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}
