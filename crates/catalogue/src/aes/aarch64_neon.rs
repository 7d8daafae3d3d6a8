//! Constant-time AES on aarch64 NEON without the crypto extensions (Raspberry
//! Pi 3 and 4), two ways:
//!
//! - full batches of eight blocks (ECB, CBC decryption, CTR, XTS) are
//!   bitsliced in eight registers: the rounds of [`super::simd128`] with
//!   `tbl` for ShiftRows and `ext` for the row rotations of MixColumns;
//! - fewer blocks (CBC encryption is one at a time) keep the whole S-box in
//!   sixteen registers and look bytes up with `tbl`/`tbx`, as the Linux
//!   kernel's `aes-neon.S` does: a register permute whose timing does not
//!   depend on the indices, unlike a table in memory. Each block then costs
//!   the same whether it travels alone or not.
//!
//! NEON is part of the aarch64 baseline, so the intrinsics need no run-time
//! check; the mask can still hide NEON (`CLUSTERCRYPT_DISABLE_HWF=neon`) and
//! [`crate::dispatch`] then picks the portable code.

use core::arch::aarch64::*;
use core::ops::{BitAnd, BitXor, Not};

use cipher::InOutBuf;
use cipher::consts::U8;

use zeroize::Zeroize;

use super::bitsliced::{ByteKeys, MAX_ROUND_KEYS, Rows, SBOX, bitsliced_aes};
use super::simd128::{self, Block, Vector};

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
    const FRAMES: bool = true;

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

/// Both forms of the round keys.
#[derive(Clone)]
struct Schedule {
    /// Bit planes for the eight-block code.
    planes: simd128::Schedule,
    /// The FIPS-197 bytes, for the table code.
    bytes: [[u8; 16]; MAX_ROUND_KEYS],
    rounds: usize,
}

impl Schedule {
    fn new(bytes: &ByteKeys, rounds: usize) -> Self {
        Schedule {
            planes: simd128::Schedule::new(bytes, rounds),
            bytes: **bytes,
            rounds,
        }
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

/// ShiftRows on FIPS-197 byte order (column by column).
static SHIFT_ROWS: [u8; 16] = [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11];
/// Byte `r` of each column takes byte `r + 1 (mod 4)` of the same column.
static ROT_ROW: [u8; 16] = [1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12];

/// The S-box in sixteen registers.
struct SboxRegs([uint8x16x4_t; 4]);

impl SboxRegs {
    #[inline(always)]
    fn load() -> Self {
        // SAFETY: each of the four reads is 64 bytes inside the 256-byte SBOX.
        SboxRegs(core::array::from_fn(|i| unsafe {
            vld1q_u8_x4(SBOX.as_ptr().add(64 * i))
        }))
    }

    /// SubBytes of 16 bytes: `tbl` answers indices 0..63 and zeroes the
    /// rest, each `tbx` fills the next 64 and leaves the others alone.
    #[inline(always)]
    fn sub_bytes(&self, x: uint8x16_t) -> uint8x16_t {
        neon!({
            let step = vdupq_n_u8(0x40);
            let mut r = vqtbl4q_u8(self.0[0], x);
            let x1 = vsubq_u8(x, step);
            r = vqtbx4q_u8(r, self.0[1], x1);
            let x2 = vsubq_u8(x1, step);
            r = vqtbx4q_u8(r, self.0[2], x2);
            let x3 = vsubq_u8(x2, step);
            vqtbx4q_u8(r, self.0[3], x3)
        })
    }
}

/// Encrypts one block with the table in registers (FIPS-197 §5.1).
#[inline(always)]
fn encrypt_one(s: &Schedule, sbox: &SboxRegs, block: &mut Block) {
    let rk = |r: usize| Neon::load(&s.bytes[r]).0;
    let shift_rows = Neon::load(&SHIFT_ROWS).0;
    let rot_row = Neon::load(&ROT_ROW).0;
    let mut x = neon!(veorq_u8(Neon::load(block.as_ref()).0, rk(0)));
    for r in 1..s.rounds {
        x = neon!({
            let a = vqtbl1q_u8(sbox.sub_bytes(x), shift_rows);
            // MixColumns: with t = a rotated one row and y = a ^ t, each
            // byte becomes 2·y ^ t ^ (y rotated two rows).
            let t = vqtbl1q_u8(a, rot_row);
            let y = veorq_u8(a, t);
            let carry = vandq_u8(
                vreinterpretq_u8_s8(vshrq_n_s8::<7>(vreinterpretq_s8_u8(y))),
                vdupq_n_u8(0x1b),
            );
            let y2 = veorq_u8(vshlq_n_u8::<1>(y), carry);
            let y_rot2 = vreinterpretq_u8_u16(vrev32q_u16(vreinterpretq_u16_u8(y)));
            veorq_u8(veorq_u8(y2, t), veorq_u8(y_rot2, rk(r)))
        });
    }
    x = neon!(veorq_u8(
        vqtbl1q_u8(sbox.sub_bytes(x), shift_rows),
        rk(s.rounds)
    ));
    Neon(x).store(block.as_mut());
}

#[inline(always)]
fn encrypt(s: &Schedule, mut buf: InOutBuf<'_, '_, Block>) {
    if buf.len() == PAR_BLOCKS {
        simd128::encrypt::<Neon>(&s.planes, buf)
    } else {
        let sbox = SboxRegs::load();
        for mut block in buf.reborrow() {
            let mut b = block.clone_in();
            encrypt_one(s, &sbox, &mut b);
            *block.get_out() = b;
        }
    }
}

#[inline(always)]
fn decrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    simd128::decrypt::<Neon>(&s.planes, buf)
}

bitsliced_aes!(
    U8,
    "constant-time NEON bitsliced (eight blocks in 128-bit registers)."
);

#[cfg(test)]
mod tests {
    use super::super::tests_common::{check_against_oracle, fips197, modes};
    use super::*;
    use cipher::{BlockCipherEncrypt, KeyInit};

    #[test]
    fn neon_matches_the_aes_crate() {
        check_against_oracle::<Aes128, aes::Aes128>();
        check_against_oracle::<Aes192, aes::Aes192>();
        check_against_oracle::<Aes256, aes::Aes256>();
    }

    #[test]
    fn neon_table_path_matches_the_aes_crate() {
        // One to seven blocks take the table path, eight the bitsliced one.
        let mut rng = super::super::tests_common::Rng::new(11);
        for bits in [128, 192, 256] {
            let mut key = vec![0u8; bits / 8];
            rng.fill(&mut key);
            for n in 1..=9 {
                let mut data = vec![Block::default(); n];
                for b in &mut data {
                    rng.fill(b);
                }
                let mut expect = data.clone();
                let mut got = data.clone();
                match bits {
                    128 => {
                        Aes128::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut got);
                        aes::Aes128::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut expect);
                    }
                    192 => {
                        Aes192::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut got);
                        aes::Aes192::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut expect);
                    }
                    _ => {
                        Aes256::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut got);
                        aes::Aes256::new_from_slice(&key)
                            .unwrap()
                            .encrypt_blocks(&mut expect);
                    }
                }
                assert_eq!(got, expect, "{bits}-bit key, {n} blocks");
            }
        }
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
