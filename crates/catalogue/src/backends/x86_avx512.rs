//! AVX-512 + VPCLMULQDQ code for the XTS tweak chain.
//!
//! Four registers hold sixteen consecutive tweaks, four per register, and each
//! register steps by α^16 in five instructions: a 64-bit shift by 16, the 16
//! bits carried out of each low half moved into its high half (a byte shift
//! within the lane), and the 16 bits shifted out of the top multiplied by
//! x^7 + x^2 + x + 1 (0x87) with one carry-less multiply and folded back
//! (IEEE 1619 §5.2; the same technique as Linux's aes-xts-avx-x86_64.S).

use core::arch::x86_64::*;

/// Tweaks per iteration of the main loop.
pub const TWEAKS_PER_STEP: usize = 16;

/// Whether this CPU can run this module.
pub fn available() -> bool {
    let f = crate::cpu::features();
    f.avx512 && f.vpclmul
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn step16(t: __m512i, poly: __m512i) -> __m512i {
    let shifted = _mm512_slli_epi64::<16>(t);
    let carry = _mm512_srli_epi64::<48>(t);
    let up = _mm512_bslli_epi128::<8>(carry);
    // High half of `carry` times the low half of `poly` (0x87): at most 23 bits.
    let folded = _mm512_clmulepi64_epi128::<0x01>(carry, poly);
    _mm512_ternarylogic_epi64::<0x96>(shifted, up, folded)
}

/// XORs the tweaks `first[0]·α^i` into `data`'s blocks and stores them in
/// `tweaks`; `first[j]` must be `first[0]·α^j`. Returns the tweak after the last
/// block. `data.len()` must be a multiple of `16 * TWEAKS_PER_STEP` and equal
/// `tweaks.len()`.
///
/// # Safety
/// [`available`] must be true.
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
pub unsafe fn xor_tweaks(first: &[u128; 16], data: &mut [u8], tweaks: &mut [u8]) -> u128 {
    assert_eq!(data.len(), tweaks.len());
    assert!(data.len().is_multiple_of(16 * TWEAKS_PER_STEP));
    let reg = |k: usize| {
        let q = |t: u128, hi: bool| (if hi { t >> 64 } else { t }) as u64 as i64;
        let f = &first[4 * k..4 * k + 4];
        _mm512_set_epi64(
            q(f[3], true),
            q(f[3], false),
            q(f[2], true),
            q(f[2], false),
            q(f[1], true),
            q(f[1], false),
            q(f[0], true),
            q(f[0], false),
        )
    };
    let (mut t0, mut t1, mut t2, mut t3) = (reg(0), reg(1), reg(2), reg(3));
    let poly = _mm512_set1_epi64(0x87);
    for (d, w) in data.chunks_exact_mut(256).zip(tweaks.chunks_exact_mut(256)) {
        let dp = d.as_mut_ptr().cast::<__m512i>();
        let wp = w.as_mut_ptr().cast::<__m512i>();
        // SAFETY: `d` and `w` are 256 bytes long: four unaligned 64-byte loads or
        // stores at offsets 0, 64, 128 and 192 stay in bounds.
        unsafe {
            _mm512_storeu_si512(dp, _mm512_xor_si512(_mm512_loadu_si512(dp), t0));
            _mm512_storeu_si512(
                dp.add(1),
                _mm512_xor_si512(_mm512_loadu_si512(dp.add(1)), t1),
            );
            _mm512_storeu_si512(
                dp.add(2),
                _mm512_xor_si512(_mm512_loadu_si512(dp.add(2)), t2),
            );
            _mm512_storeu_si512(
                dp.add(3),
                _mm512_xor_si512(_mm512_loadu_si512(dp.add(3)), t3),
            );
            _mm512_storeu_si512(wp, t0);
            _mm512_storeu_si512(wp.add(1), t1);
            _mm512_storeu_si512(wp.add(2), t2);
            _mm512_storeu_si512(wp.add(3), t3);
        }
        t0 = step16(t0, poly);
        t1 = step16(t1, poly);
        t2 = step16(t2, poly);
        t3 = step16(t3, poly);
    }
    let mut out = [0u64; 8];
    // SAFETY: `out` is 64 bytes, the size of one register.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), t0) };
    (u128::from(out[1]) << 64) | u128::from(out[0])
}

/// `dst ^= src` with 512-bit registers.
///
/// # Safety
/// [`available`] must be true.
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
pub unsafe fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    // The compiler vectorises this loop with 512-bit registers inside this function.
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Writes consecutive 128-bit big-endian counters starting at `start` into
/// `out` (a multiple of 64 bytes). The low 64 bits must not wrap within `out`.
///
/// # Safety
/// [`available`] must be true.
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
pub unsafe fn fill_counters_be(start: u128, out: &mut [u8]) {
    assert!(out.len().is_multiple_of(64));
    let lo = start as u64 as i64;
    let hi = (start >> 64) as u64 as i64;
    let mut v = _mm512_set_epi64(
        hi,
        lo.wrapping_add(3),
        hi,
        lo.wrapping_add(2),
        hi,
        lo.wrapping_add(1),
        hi,
        lo,
    );
    let inc = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
    // Reverses the 16 bytes of each lane: little-endian numbers to big-endian blocks.
    let reverse = _mm512_broadcast_i32x4(_mm_set_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ));
    for chunk in out.chunks_exact_mut(64) {
        // SAFETY: `chunk` is 64 bytes; the store is unaligned.
        unsafe {
            _mm512_storeu_si512(chunk.as_mut_ptr().cast(), _mm512_shuffle_epi8(v, reverse));
        }
        v = _mm512_add_epi64(v, inc);
    }
}

/// 4x4 transpose of 32-bit words (its own inverse) within each 128-bit lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn transpose4(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(a, b);
    let t1 = _mm512_unpackhi_epi32(a, b);
    let t2 = _mm512_unpacklo_epi32(c, d);
    let t3 = _mm512_unpackhi_epi32(c, d);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}
