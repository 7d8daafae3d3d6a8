//! ChaCha on AVX-512: 16 blocks, one state word of each in a 512-bit
//! register (16 of the 32 registers: no spills); rotations are `vprold`.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

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

/// 4x4 transpose of 32-bit words within each 128-bit lane.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose4(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
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

/// One batch of `N` blocks from counter `ctr` XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "avx512f")]
fn batch<const R: usize>(st: &[u32; 16], ctr: u32, out: &mut [u8]) {
    let mut x = [_mm512_setzero_si512(); 16];
    for (v, &w) in x.iter_mut().zip(st) {
        *v = _mm512_set1_epi32(w as i32);
    }
    x[12] = _mm512_add_epi32(
        _mm512_set1_epi32(ctr as i32),
        _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
    );
    let init = x;
    rounds!(R, x, add, xor, r16, r12, r8, r7);
    for (v, i) in x.iter_mut().zip(init) {
        *v = add(*v, i);
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
    batches!(N, st[12], data, |ctr, out| batch::<R>(st, ctr, out));
}
