//! ChaCha on NEON (aarch64): 4 blocks, one state word of each in a 128-bit
//! register; the 16-bit rotation is `rev32`, the 8-bit one a table lookup,
//! the others shift-and-insert.

use core::arch::aarch64::*;

/// Blocks per batch.
const N: usize = 4;

#[inline]
#[target_feature(enable = "neon")]
fn add(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    vaddq_u32(a, b)
}
#[inline]
#[target_feature(enable = "neon")]
fn xor(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    veorq_u32(a, b)
}
#[inline]
#[target_feature(enable = "neon")]
fn r16(x: uint32x4_t) -> uint32x4_t {
    vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(x)))
}
#[inline]
#[target_feature(enable = "neon")]
fn r12(x: uint32x4_t) -> uint32x4_t {
    vsriq_n_u32::<20>(vshlq_n_u32::<12>(x), x)
}
#[inline]
#[target_feature(enable = "neon")]
fn r8(x: uint32x4_t) -> uint32x4_t {
    const ROT8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];
    // SAFETY: reads the 16 bytes of a constant array.
    let t = unsafe { vld1q_u8(ROT8.as_ptr()) };
    vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x), t))
}
#[inline]
#[target_feature(enable = "neon")]
fn r7(x: uint32x4_t) -> uint32x4_t {
    vsriq_n_u32::<25>(vshlq_n_u32::<7>(x), x)
}

/// XORs 16 bytes of key stream `k` into `out[at..at + 16]`.
#[inline]
#[target_feature(enable = "neon")]
fn xor_into(out: &mut [u8], at: usize, k: uint32x4_t) {
    let p = out[at..at + 16].as_mut_ptr();
    // SAFETY: the slice above is 16 bytes long; NEON loads and stores of u8
    // lanes need no alignment.
    unsafe { vst1q_u8(p, veorq_u8(vld1q_u8(p), vreinterpretq_u8_u32(k))) };
}

/// One batch of `N` blocks from counter `ctr` XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "neon")]
fn batch<const R: usize>(st: &[u32; 16], ctr: u32, out: &mut [u8]) {
    let mut x = [vdupq_n_u32(0); 16];
    for (v, &w) in x.iter_mut().zip(st) {
        *v = vdupq_n_u32(w);
    }
    const LANES: [u32; 4] = [0, 1, 2, 3];
    // SAFETY: reads the 16 bytes of a constant array.
    x[12] = vaddq_u32(vdupq_n_u32(ctr), unsafe { vld1q_u32(LANES.as_ptr()) });
    let init = x;
    rounds!(R, x, add, xor, r16, r12, r8, r7);
    for g in 0..4 {
        let a = add(x[4 * g], init[4 * g]);
        let b = add(x[4 * g + 1], init[4 * g + 1]);
        let c = add(x[4 * g + 2], init[4 * g + 2]);
        let d = add(x[4 * g + 3], init[4 * g + 3]);
        // 4x4 transpose: lane j of the four words -> block j's 16 bytes.
        let t0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b));
        let t1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b));
        let t2 = vreinterpretq_u64_u32(vtrn1q_u32(c, d));
        let t3 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
        xor_into(out, 16 * g, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
        xor_into(out, 64 + 16 * g, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
        xor_into(out, 128 + 16 * g, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
        xor_into(out, 192 + 16 * g, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
    }
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    batches!(N, st, data, batch, R);
}
