//! ChaCha on SSSE3 (every x86-64 CPU since 2006; no AVX): 4 blocks, one
//! state word of each in a 128-bit register; the 16- and 8-bit rotations are
//! byte shuffles. On x86-64 ChaCha20 runs the assembly rounds of
//! [`super::x86_ssse3_poly1305`] (see [`xor_keystream`]).
//!
//! One batch at a time: two batches with their rounds interleaved (the
//! generated assembly of the Zen 4 sessions, one batch's words in memory)
//! were 1-5% faster at best, but on a shared Zen 3 their median was
//! 0.65-0.89x of one batch's, measured in the same process between them,
//! which held steady (see docs/PERFORMANCE-LOG.md, "Ninth Zen 3 session").

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Blocks per batch.
pub(super) const N: usize = 4;

#[inline]
#[target_feature(enable = "ssse3")]
fn add(a: __m128i, b: __m128i) -> __m128i {
    _mm_add_epi32(a, b)
}
#[inline]
#[target_feature(enable = "ssse3")]
fn xor(a: __m128i, b: __m128i) -> __m128i {
    _mm_xor_si128(a, b)
}
/// Byte-shuffle masks of the 16- and 8-bit rotations, read from memory by
/// `pshufb` so that they take no register.
#[repr(align(16))]
pub(super) struct Mask(#[allow(dead_code, reason = "read by asm! only")] [u8; 16]);
pub(super) static ROT16: Mask = Mask([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);
pub(super) static ROT8: Mask = Mask([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]);

// One `pshufb` each, as `asm!` so that LLVM keeps them so (see the AVX2
// backend).
#[inline]
#[target_feature(enable = "ssse3")]
fn r16(mut x: __m128i) -> __m128i {
    // SAFETY: `pshufb` reads the 16-byte aligned static mask; SSSE3 is enabled.
    unsafe {
        core::arch::asm!("pshufb {x}, xmmword ptr [rip + {m}]", x = inout(xmm_reg) x,
            m = sym ROT16, options(pure, readonly, nostack, preserves_flags));
    }
    x
}
#[inline]
#[target_feature(enable = "ssse3")]
fn r12(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<12>(x), _mm_srli_epi32::<20>(x))
}
#[inline]
#[target_feature(enable = "ssse3")]
fn r8(mut x: __m128i) -> __m128i {
    // SAFETY: `pshufb` reads the 16-byte aligned static mask; SSSE3 is enabled.
    unsafe {
        core::arch::asm!("pshufb {x}, xmmword ptr [rip + {m}]", x = inout(xmm_reg) x,
            m = sym ROT8, options(pure, readonly, nostack, preserves_flags));
    }
    x
}
#[inline]
#[target_feature(enable = "ssse3")]
fn r7(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<7>(x), _mm_srli_epi32::<25>(x))
}

/// XORs 16 bytes of key stream `k` into `out[at..at + 16]`.
#[inline]
#[target_feature(enable = "ssse3")]
fn xor_into(out: &mut [u8], at: usize, k: __m128i) {
    let p = out[at..at + 16].as_mut_ptr().cast::<__m128i>();
    // SAFETY: the slice above is 16 bytes long; unaligned load and store.
    unsafe { _mm_storeu_si128(p, _mm_xor_si128(_mm_loadu_si128(p), k)) };
}

/// The state `st` with each word broadcast to a vector, the counters of
/// blocks `ctr` to `ctr + 3` in word 12.
#[inline]
#[target_feature(enable = "ssse3")]
fn initial(st: &[u32; 16], ctr: u32) -> [__m128i; 16] {
    let mut x = [_mm_setzero_si128(); 16];
    for (v, &w) in x.iter_mut().zip(st) {
        *v = _mm_set1_epi32(w as i32);
    }
    x[12] = _mm_add_epi32(_mm_set1_epi32(ctr as i32), _mm_set_epi32(3, 2, 1, 0));
    x
}

/// The feed-forward of `init` into the rounds' output `x`, and the key
/// stream XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "ssse3")]
fn finish(x: &[__m128i], init: &[__m128i; 16], out: &mut [u8]) {
    for g in 0..4 {
        let a = add(x[4 * g], init[4 * g]);
        let b = add(x[4 * g + 1], init[4 * g + 1]);
        let c = add(x[4 * g + 2], init[4 * g + 2]);
        let d = add(x[4 * g + 3], init[4 * g + 3]);
        // 4x4 transpose: lane j of the four words -> block j's 16 bytes.
        let t0 = _mm_unpacklo_epi32(a, b);
        let t1 = _mm_unpackhi_epi32(a, b);
        let t2 = _mm_unpacklo_epi32(c, d);
        let t3 = _mm_unpackhi_epi32(c, d);
        xor_into(out, 16 * g, _mm_unpacklo_epi64(t0, t2));
        xor_into(out, 64 + 16 * g, _mm_unpackhi_epi64(t0, t2));
        xor_into(out, 128 + 16 * g, _mm_unpacklo_epi64(t1, t3));
        xor_into(out, 192 + 16 * g, _mm_unpackhi_epi64(t1, t3));
    }
}

/// One batch of `N` blocks from counter `ctr` XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "ssse3")]
fn batch<const R: usize>(st: &[u32; 16], ctr: u32, out: &mut [u8]) {
    let init = initial(st, ctr);
    let mut x = init;
    rounds_c_in_memory!(R, x, add, xor, r16, r12, r8, r7);
    finish(&x, &init, out);
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
///
/// # Safety
/// The CPU must support SSSE3.
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    let (ctr, tail) = (st[12], data);
    // One batch at a time, not two interleaved: see the module docs.
    #[cfg(target_arch = "x86_64")]
    if R == 20 {
        // The assembly rounds of the stitched AEAD, without hashing:
        // 1.02-1.05x this file's rounds on Zen 4, which LLVM schedules from
        // intrinsics with two words in memory. Other round counts and
        // 32-bit x86 stay here.
        use super::x86_ssse3_poly1305 as a;
        let words = zeroize::Zeroizing::new(a::broadcast(st));
        batches!(N, ctr, tail, |c, out| {
            // SAFETY: SSSE3 is enabled here; no hashing, so no BMI2.
            let x = unsafe { a::keystream::<false>(&words, c, None) };
            a::xor_out(&x, out.try_into().expect("a batch"));
        });
        return;
    }
    batches!(N, ctr, tail, |c, out| batch::<R>(st, c, out));
}

/// [`xor_keystream`] with a fifth block in each batch, on the integer units
/// ([`super::x86_ssse3_poly1305::batch_and_block`]): for CPUs whose vector
/// kernels leave integer ALUs idle ([`crate::cpu::scalar_beside_vector`]).
///
/// # Safety
/// The CPU must support SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn xor_keystream_hybrid<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    use super::x86_ssse3_poly1305 as a;
    let words = zeroize::Zeroizing::new(a::broadcast(st));
    super::x86_scalar::xor_keystream(
        st,
        data,
        N,
        |ctr, out, extra, extra_out| {
            a::batch_and_block::<R>(
                &words,
                ctr,
                out.try_into().expect("a batch"),
                extra,
                extra_out,
            );
        },
        // SAFETY: SSSE3 is enabled here.
        |st, rest| unsafe { xor_keystream::<R>(st, rest) },
    );
}
