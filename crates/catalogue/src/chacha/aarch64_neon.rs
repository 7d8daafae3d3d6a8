//! ChaCha on NEON (aarch64): 4 blocks, one state word of each in a 128-bit
//! register; the 16-bit rotation is `rev32`, the 8-bit one a table lookup,
//! the others shift-and-insert. The state broadcast to the lanes waits in
//! memory, loaded four registers at a time.

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

/// Words of the broadcast state: 16 state words times 4 lanes.
const WORDS: usize = 16 * N;

/// The four state vectors `4 * i .. 4 * i + 4` from the broadcast state (one
/// LD1 of four registers).
#[inline(always)]
unsafe fn load4(bc: &[u32; WORDS], i: usize) -> [uint32x4_t; 4] {
    // SAFETY: 16 words from 16 * i <= 48 are inside `bc`.
    let v = unsafe { vld1q_u32_x4(bc.as_ptr().add(16 * i)) };
    [v.0, v.1, v.2, v.3]
}

/// One batch of `N` blocks XORed into `out` (`N * 64` bytes); `bc` holds the
/// state broadcast to the lanes, the counters of this batch in words 48-51.
///
/// The state is read from memory at the start and again for the final
/// addition (four LD1s each): kept in registers across the rounds it would
/// need 16 more than NEON's 32, and the spills and per-batch broadcasts cost
/// more (about 50 instructions a batch, 0.2 an output byte).
#[inline(always)]
unsafe fn batch<const R: usize>(bc: &[u32; WORDS], out: &mut [u8]) {
    // SAFETY: NEON is part of aarch64; `load4` reads inside `bc`.
    unsafe {
        let mut x = [vdupq_n_u32(0); 16];
        for i in 0..4 {
            x[4 * i..4 * i + 4].copy_from_slice(&load4(bc, i));
        }
        // LLVM does not unroll a loop body this long by itself, and the
        // loop's `subs`/`b.ne` were 20 instructions a batch of ChaCha20,
        // 0.08 per output byte. ChaCha20 (the rows that count) runs fully
        // unrolled (4.5 KB of code), ChaCha12 and ChaCha8 two double rounds
        // per iteration.
        macro_rules! double_round {
            () => {
                rounds!(2, x, add, xor, r16, r12, r8, r7)
            };
        }
        const { assert!(R.is_multiple_of(4)) };
        if R == 20 {
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
            double_round!();
        } else {
            for _ in 0..R / 4 {
                double_round!();
                double_round!();
            }
        }
        // A compiler barrier (no instruction) that may have written `bc`, so
        // the state is loaded again rather than kept live through the rounds.
        core::arch::asm!("/* {0} */", in(reg) bc.as_ptr(), options(nostack, preserves_flags));
        for g in 0..4 {
            let init = load4(bc, g);
            let a = add(x[4 * g], init[0]);
            let b = add(x[4 * g + 1], init[1]);
            let c = add(x[4 * g + 2], init[2]);
            let d = add(x[4 * g + 3], init[3]);
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
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
///
/// # Safety
/// The CPU must support NEON.
#[target_feature(enable = "neon")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    let mut bc = [0u32; WORDS];
    for (lanes, &w) in bc.chunks_exact_mut(N).zip(st) {
        lanes.fill(w);
    }
    batches!(N, st[12], data, |ctr, out| {
        for (l, w) in bc[48..52].iter_mut().enumerate() {
            *w = ctr.wrapping_add(l as u32);
        }
        // SAFETY: NEON is enabled; `out` is one batch long.
        unsafe { batch::<R>(&bc, out) }
    });
    zeroize::Zeroize::zeroize(&mut bc);
}
