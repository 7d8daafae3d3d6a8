//! Constant-time AES on aarch64 NEON without the crypto extensions (Raspberry
//! Pi 3 and 4): eight blocks bitsliced in eight registers, the rounds of
//! [`super::simd128`] with `tbl` for ShiftRows and `ext` for the row
//! rotations of MixColumns.
//!
//! NEON is part of the aarch64 baseline, so the intrinsics need no run-time
//! check; the mask can still hide NEON (`CLUSTERCRYPT_DISABLE_HWF=neon`) and
//! [`crate::dispatch`] then picks the portable code.

use core::arch::aarch64::*;
use core::ops::{BitAnd, BitXor, Not};

use cipher::InOutBuf;
use cipher::consts::U8;

use super::bitsliced::{Rows, bitsliced_aes};
use super::simd128::{self, Block, Schedule, Vector};

pub use super::simd128::PAR_BLOCKS;

/// One NEON register of bit planes.
#[derive(Clone, Copy)]
struct Neon(uint8x16_t);

/// Calls NEON intrinsics.
macro_rules! neon {
    ($e:expr) => {
        // SAFETY: NEON is part of the aarch64 baseline, enabled at compile
        // time for every aarch64 target, so these intrinsics can execute.
        unsafe { $e }
    };
}

impl BitXor for Neon {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, rhs: Self) -> Self {
        Neon(neon!(veorq_u8(self.0, rhs.0)))
    }
}

impl BitAnd for Neon {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, rhs: Self) -> Self {
        Neon(neon!(vandq_u8(self.0, rhs.0)))
    }
}

impl Not for Neon {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Neon(neon!(vmvnq_u8(self.0)))
    }
}

impl Rows for Neon {
    #[inline(always)]
    fn rot1(self) -> Self {
        Neon(neon!(vextq_u8::<4>(self.0, self.0)))
    }
    #[inline(always)]
    fn rot2(self) -> Self {
        Neon(neon!(vextq_u8::<8>(self.0, self.0)))
    }
}

impl Vector for Neon {
    #[inline(always)]
    fn load(bytes: &[u8; 16]) -> Self {
        // SAFETY: `bytes` is 16 readable bytes; `vld1q_u8` has no alignment
        // requirement.
        Neon(unsafe { vld1q_u8(bytes.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, bytes: &mut [u8; 16]) {
        // SAFETY: `bytes` is 16 writable bytes; no alignment requirement.
        unsafe { vst1q_u8(bytes.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn splat(b: u8) -> Self {
        Neon(neon!(vdupq_n_u8(b)))
    }
    #[inline(always)]
    fn permute(self, idx: &'static [u8; 16]) -> Self {
        let idx = Self::load(idx);
        Neon(neon!(vqtbl1q_u8(self.0, idx.0)))
    }
    #[inline(always)]
    fn shr64<const N: i32>(self) -> Self {
        Neon(neon!(vreinterpretq_u8_u64(vshrq_n_u64::<N>(
            vreinterpretq_u64_u8(self.0)
        ))))
    }
    #[inline(always)]
    fn shl64<const N: i32>(self) -> Self {
        Neon(neon!(vreinterpretq_u8_u64(vshlq_n_u64::<N>(
            vreinterpretq_u64_u8(self.0)
        ))))
    }
}

#[inline(always)]
fn encrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    simd128::encrypt::<Neon>(s, buf)
}

#[inline(always)]
fn decrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    simd128::decrypt::<Neon>(s, buf)
}

bitsliced_aes!(
    U8,
    "constant-time NEON bitsliced (eight blocks in 128-bit registers)."
);

#[cfg(test)]
mod tests {
    use super::super::tests_common::{check_against_oracle, fips197, modes};
    use super::*;

    #[test]
    fn neon_matches_the_aes_crate() {
        check_against_oracle::<Aes128, aes::Aes128>();
        check_against_oracle::<Aes192, aes::Aes192>();
        check_against_oracle::<Aes256, aes::Aes256>();
    }

    #[test]
    fn neon_matches_soft() {
        check_against_oracle::<Aes128, super::super::soft::Aes128>();
        check_against_oracle::<Aes256, super::super::soft::Aes256>();
    }

    #[test]
    fn neon_fips197_appendix_c() {
        fips197::<Aes128, Aes192, Aes256>();
    }

    #[test]
    fn neon_in_every_mode() {
        modes::<Aes128, aes::Aes128>();
        modes::<Aes192, aes::Aes192>();
        modes::<Aes256, aes::Aes256>();
    }
}
