//! GHASH as POLYVAL with PMULL on aarch64 (ARMv8 crypto extensions: a
//! Raspberry Pi 5). Eight blocks per reduction: each block's four 64x64
//! products (PMULL and PMULL2 against the power of H and against it with its
//! halves swapped, kept in registers) summed unreduced, then one reduction
//! by two folds with 0xc2 << 56, as the x86 code.

use core::arch::aarch64::*;
use core::arch::asm;

use super::Powers;

/// Byte reversal of a register (GHASH's byte order to POLYVAL's), for TBL.
const REV: [u8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

/// The unreduced sums `lo`, `mid`, `hi` of a batch of products.
type Acc = [uint8x16_t; 3];

/// Adds the schoolbook product of `x` and `h` (`hs`: `h` with its halves
/// swapped) into `acc`. `asm!` because the PMULL intrinsics take 64-bit
/// scalars, which LLVM may move through general registers.
#[inline(always)]
unsafe fn mul_acc(x: uint8x16_t, h: uint8x16_t, hs: uint8x16_t, acc: &mut Acc) {
    // SAFETY: register operands only; the caller runs with the `aes` feature
    // (PMULL).
    unsafe {
        asm!(
            "pmull  {t:v}.1q, {x:v}.1d, {h:v}.1d",
            "pmull2 {u:v}.1q, {x:v}.2d, {h:v}.2d",
            "eor    {lo:v}.16b, {lo:v}.16b, {t:v}.16b",
            "eor    {hi:v}.16b, {hi:v}.16b, {u:v}.16b",
            "pmull  {t:v}.1q, {x:v}.1d, {hs:v}.1d",
            "pmull2 {u:v}.1q, {x:v}.2d, {hs:v}.2d",
            "eor    {mid:v}.16b, {mid:v}.16b, {t:v}.16b",
            "eor    {mid:v}.16b, {mid:v}.16b, {u:v}.16b",
            x = in(vreg) x,
            h = in(vreg) h,
            hs = in(vreg) hs,
            lo = inout(vreg) acc[0],
            mid = inout(vreg) acc[1],
            hi = inout(vreg) acc[2],
            t = out(vreg) _,
            u = out(vreg) _,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
}

/// Reduces the sums to one element: `(hi:lo) · x^-128 mod g`.
#[inline(always)]
unsafe fn finish(acc: Acc) -> uint8x16_t {
    // SAFETY: register operands only; the caller runs with the `aes` feature.
    unsafe {
        let zero = vdupq_n_u8(0);
        let lo = veorq_u8(acc[0], vextq_u8::<8>(zero, acc[1]));
        let hi = veorq_u8(acc[2], vextq_u8::<8>(acc[1], zero));
        let c = vreinterpretq_u8_u64(vdupq_n_u64(0xc200_0000_0000_0000));
        let out: uint8x16_t;
        asm!(
            "pmull {t:v}.1q, {lo:v}.1d, {c:v}.1d",
            "ext   {lo:v}.16b, {lo:v}.16b, {lo:v}.16b, #8",
            "eor   {lo:v}.16b, {lo:v}.16b, {t:v}.16b",
            "pmull {t:v}.1q, {lo:v}.1d, {c:v}.1d",
            "ext   {lo:v}.16b, {lo:v}.16b, {lo:v}.16b, #8",
            "eor   {lo:v}.16b, {lo:v}.16b, {t:v}.16b",
            "eor   {out:v}.16b, {lo:v}.16b, {hi:v}.16b",
            lo = inout(vreg) lo => _,
            hi = in(vreg) hi,
            c = in(vreg) c,
            t = out(vreg) _,
            out = lateout(vreg) out,
            options(pure, nomem, nostack, preserves_flags),
        );
        out
    }
}

/// POLYVAL's product `a · b · x^-128` (key set-up: the powers of H).
///
/// # Safety
/// The CPU must have PMULL (the `aes` feature).
#[target_feature(enable = "neon,aes")]
pub(super) unsafe fn mul(a: u128, b: u128) -> u128 {
    // SAFETY: register operands; u128 to bytes and back is plain data
    // (aarch64 Linux is little-endian, so lane 0 is the low half).
    unsafe {
        let x = vld1q_u8(a.to_le_bytes().as_ptr());
        let h = vld1q_u8(b.to_le_bytes().as_ptr());
        let mut acc = [vdupq_n_u8(0); 3];
        mul_acc(x, h, vextq_u8::<8>(h, h), &mut acc);
        let mut out = [0u8; 16];
        vst1q_u8(out.as_mut_ptr(), finish(acc));
        u128::from_le_bytes(out)
    }
}

/// Absorbs the whole blocks of `data` into `acc` (POLYVAL form).
///
/// # Safety
/// The CPU must have PMULL (the `aes` feature).
#[target_feature(enable = "neon,aes")]
pub(super) unsafe fn update(acc: &mut u128, powers: &Powers, data: &[u8]) {
    // SAFETY: every load is of 16 bytes inside `data`, `powers` or `REV`;
    // the rest are register operations.
    unsafe {
        let rev = vld1q_u8(REV.as_ptr());
        let mut a = vld1q_u8(acc.to_le_bytes().as_ptr());
        let pw = powers.as_ptr().cast::<u8>();
        // H^8 .. H^1 and their swapped copies: 16 of the 32 registers.
        let mut h = [vdupq_n_u8(0); 8];
        let mut hs = [vdupq_n_u8(0); 8];
        for j in 0..8 {
            h[j] = vld1q_u8(pw.add(16 * (8 + j)));
            hs[j] = vextq_u8::<8>(h[j], h[j]);
        }
        let mut batches = data.chunks_exact(128);
        for batch in &mut batches {
            let p = batch.as_ptr();
            let mut s = [vdupq_n_u8(0); 3];
            for j in 0..8 {
                let mut x = vqtbl1q_u8(vld1q_u8(p.add(16 * j)), rev);
                if j == 0 {
                    x = veorq_u8(x, a);
                }
                mul_acc(x, h[j], hs[j], &mut s);
            }
            a = finish(s);
        }
        // Fewer than 8 blocks left: block i of r takes H^(r-i).
        let rest = batches.remainder();
        let r = rest.len() / 16;
        if r > 0 {
            let mut s = [vdupq_n_u8(0); 3];
            for i in 0..r {
                let mut x = vqtbl1q_u8(vld1q_u8(rest.as_ptr().add(16 * i)), rev);
                if i == 0 {
                    x = veorq_u8(x, a);
                }
                let j = 8 - r + i;
                mul_acc(x, h[j], hs[j], &mut s);
            }
            a = finish(s);
        }
        let mut out = [0u8; 16];
        vst1q_u8(out.as_mut_ptr(), a);
        *acc = u128::from_le_bytes(out);
    }
}
