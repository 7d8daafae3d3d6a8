//! GHASH as POLYVAL with VPCLMULQDQ on 256-bit registers (x86-64 with VAES
//! and AVX2, no AVX-512: Zen 3, Alder Lake). Two blocks a register, eight
//! registers (16 blocks) per reduction; Karatsuba products in the batches
//! (three VPCLMULQDQ a register, not four: the multiplier is what limits
//! this loop on Zen 3, and GHASH's share of AES-128-GCM's time fell from 1.9x
//! to 1.2x that of CTR), schoolbook in the tail, summed unreduced. The 128-bit helpers (the
//! reduction) are [`super::x86_pclmul`]'s.

use core::arch::x86_64::*;

use super::Powers;
use super::x86_pclmul::{finish, m128, mul_acc128, rev128, u128_of};

/// Adds the schoolbook products of the two lanes of `x` and `k`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_acc256(x: __m256i, k: __m256i, acc: &mut [__m256i; 3]) {
    acc[0] = _mm256_xor_si256(acc[0], _mm256_clmulepi64_epi128::<0x00>(x, k));
    acc[1] = _mm256_xor_si256(acc[1], _mm256_clmulepi64_epi128::<0x01>(x, k));
    acc[1] = _mm256_xor_si256(acc[1], _mm256_clmulepi64_epi128::<0x10>(x, k));
    acc[2] = _mm256_xor_si256(acc[2], _mm256_clmulepi64_epi128::<0x11>(x, k));
}

/// Adds the Karatsuba products of the two lanes of `x` and `k` (`kmid`: each
/// lane's `k.lo ^ k.hi` in its low half): three multiplies instead of four;
/// [`karatsuba_mid`] turns the middle sum into the schoolbook one.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_acc256_kara(x: __m256i, k: __m256i, kmid: __m256i, acc: &mut [__m256i; 3]) {
    let xm = _mm256_xor_si256(x, _mm256_shuffle_epi32::<0x4e>(x));
    acc[0] = _mm256_xor_si256(acc[0], _mm256_clmulepi64_epi128::<0x00>(x, k));
    acc[1] = _mm256_xor_si256(acc[1], _mm256_clmulepi64_epi128::<0x00>(xm, kmid));
    acc[2] = _mm256_xor_si256(acc[2], _mm256_clmulepi64_epi128::<0x11>(x, k));
}

/// (a.lo + a.hi)(b.lo + b.hi) - lo - hi: the schoolbook middle term from
/// Karatsuba's, for the whole sum at once (it is linear).
#[inline]
#[target_feature(enable = "avx2")]
fn karatsuba_mid(mut acc: [__m256i; 3]) -> [__m256i; 3] {
    acc[1] = _mm256_xor_si256(acc[1], _mm256_xor_si256(acc[0], acc[2]));
    acc
}

/// The two lanes of each sum added together.
#[inline]
#[target_feature(enable = "avx2")]
fn fold_lanes(acc: [__m256i; 3]) -> [__m128i; 3] {
    // No closure (`map`): closures do not get the target features, and the
    // intrinsics in them would stay calls.
    let mut out = [_mm_setzero_si128(); 3];
    for (o, a) in out.iter_mut().zip(acc) {
        *o = _mm_xor_si128(_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
    }
    out
}

/// Absorbs the whole blocks of `data` into `acc` (POLYVAL form).
///
/// # Safety
/// The CPU must have AVX2, PCLMULQDQ and VPCLMULQDQ.
#[target_feature(enable = "avx2,pclmulqdq,vpclmulqdq")]
pub(super) unsafe fn update(acc: &mut u128, powers: &Powers, data: &[u8]) {
    let rev = _mm256_broadcastsi128_si256(rev128());
    let mut a = m128(*acc);
    let pw = powers.as_ptr().cast::<u8>();
    let mut keys = [_mm256_setzero_si256(); 8];
    let mut kmid = [_mm256_setzero_si256(); 8];
    for (j, (k, m)) in keys.iter_mut().zip(&mut kmid).enumerate() {
        // SAFETY: `powers` is 16 blocks: register j loads blocks 2j and 2j + 1.
        *k = unsafe { _mm256_loadu_si256(pw.add(32 * j).cast()) };
        *m = _mm256_xor_si256(*k, _mm256_shuffle_epi32::<0x4e>(*k));
    }
    let mut blocks = data.chunks_exact(256);
    for batch in &mut blocks {
        let p = batch.as_ptr();
        // SAFETY: the batch is 256 bytes: 32 from 32 j are inside it.
        let load = |j: usize| unsafe { _mm256_loadu_si256(p.add(32 * j).cast()) };
        // The registers that do not depend on the running hash first, so
        // that their products overlap the previous batch's reduction; the
        // one that does last, its chain to the next reduction short.
        let mut s = [_mm256_setzero_si256(); 3];
        for (j, (k, m)) in keys.iter().zip(&kmid).enumerate().skip(1) {
            mul_acc256_kara(_mm256_shuffle_epi8(load(j), rev), *k, *m, &mut s);
        }
        let x = _mm256_xor_si256(_mm256_shuffle_epi8(load(0), rev), _mm256_zextsi128_si256(a));
        mul_acc256_kara(x, keys[0], kmid[0], &mut s);
        a = finish(fold_lanes(karatsuba_mid(s)));
    }
    // Fewer than 16 blocks left: block i of r takes H^(r-i), pairs in ymm
    // registers, an odd last block in an xmm one.
    let rest = blocks.remainder();
    let r = rest.len() / 16;
    if r > 0 {
        let mut s = [_mm256_setzero_si256(); 3];
        let mut i = 0;
        while i + 2 <= r {
            // SAFETY: blocks i and i + 1 are inside `rest`; powers 16 - r + i
            // and the next are inside `powers` (i + 2 <= r).
            let (mut x, k) = unsafe {
                (
                    _mm256_shuffle_epi8(_mm256_loadu_si256(rest.as_ptr().add(16 * i).cast()), rev),
                    _mm256_loadu_si256(pw.add(16 * (16 - r + i)).cast()),
                )
            };
            if i == 0 {
                x = _mm256_xor_si256(x, _mm256_zextsi128_si256(a));
            }
            mul_acc256(x, k, &mut s);
            i += 2;
        }
        let mut t = fold_lanes(s);
        if i < r {
            // SAFETY: block i is inside `rest`; H^1 is the last power.
            let (mut x, k) = unsafe {
                (
                    _mm_shuffle_epi8(_mm_loadu_si128(rest.as_ptr().add(16 * i).cast()), rev128()),
                    _mm_loadu_si128(pw.add(16 * 15).cast()),
                )
            };
            if i == 0 {
                x = _mm_xor_si128(x, a);
            }
            mul_acc128(x, k, &mut t);
        }
        a = finish(t);
    }
    *acc = u128_of(a);
}
