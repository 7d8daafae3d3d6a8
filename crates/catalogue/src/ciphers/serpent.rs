//! Serpent block cipher with multi-block SIMD backends chosen at run time.
//!
//! Serpent (R. Anderson, E. Biham, L. Knudsen, "Serpent: A Proposal for the
//! Advanced Encryption Standard", 1998,
//! <https://www.cl.cam.ac.uk/~rja14/Papers/serpent.pdf>) is a 32-round SP
//! network designed in *bitslice* style: every round operation (the 4-bit
//! S-boxes applied as Boolean circuits, the linear transform built from
//! rotations, shifts and XORs, and the round-key XOR) works on whole 32-bit
//! words.  `N` independent blocks can therefore be processed at once by
//! transposing them so that word `j` of block `i` sits in SIMD lane `i` of
//! vector `j`.
//!
//! # Why this exists
//!
//! The RustCrypto `serpent` 0.6 crate encrypts one block at a time
//! (`ParBlocksSize = U1`) and reaches roughly 130–160 MiB/s, whereas
//! libgcrypt's SIMD Serpent reaches ~900 MiB/s in the parallelisable modes
//! (ECB, CBC decryption, CTR, XTS).  This module is a drop-in replacement
//! (same key schedule, same byte conventions, same output) whose
//! [`BlockCipherEncBackend`] / [`BlockCipherDecBackend`] process many blocks
//! per call:
//!
//! * `"avx512"`: 80 blocks per call, five 512-bit registers per state word
//!   (x86/x86-64 with AVX-512F; LLVM uses `vprold` and `vpternlogd`),
//! * `"avx2"`: 32 blocks per call, four 256-bit registers per state word
//!   (x86/x86-64 with AVX2),
//! * `"soft"`: portable code, 2 blocks per call interleaved for
//!   instruction-level parallelism.  Wider portable lane counts compiled for
//!   the x86-64 baseline (SSE2) were partly scalarised by LLVM and slower.
//!
//! The round functions are written once, generically over a `Word` type
//! that is either one `u32` or a lane array `[u32; N]` holding the same word
//! of `N` blocks.  The lane-array instances are compiled inside
//! `#[target_feature]` functions so that LLVM auto-vectorises each to the
//! right register width (checked in the generated assembly; no explicit
//! intrinsics are used).  The backend is chosen once at key setup with
//! `crate::cpu::features` (the mask applies) and cached in the [`Serpent`] value.  A single block, and a
//! one-block tail, use a scalar path.
//!
//! The S-box circuits are D. A. Osvik's ("Speeding up Serpent", 2000), as used
//! by the `serpent` crate, Linux and libgcrypt.
//!
//! # Byte order
//!
//! Keys and blocks are read as little-endian 32-bit words, word 0 first.  This
//! is the convention of the `serpent` crate, NESSIE, libgcrypt, Nettle and
//! Linux.  The test files of the original AES submission print keys and
//! blocks as big hexadecimal numbers, i.e. byte-reversed with respect to this
//! convention.
//!
//! # Keys
//!
//! Keys of 16 to 32 bytes are accepted, as by the `serpent` crate.  Keys
//! shorter than 256 bits are padded as the specification says: a single `1`
//! bit is appended after the most significant key bit, then zeros.
//!
//! # Security
//!
//! The implementation uses no table look-ups and no data-dependent branches
//! or memory accesses, so it is constant time with respect to keys and data.
//! The round keys are zeroized on drop.  Like every raw block cipher, this is
//! a building block for modes of operation, not an encryption scheme.

#![allow(clippy::needless_range_loop)]

use core::fmt;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

#[cfg(target_arch = "x86_64")]
use cipher::consts::U8;
use cipher::consts::{U2, U16, U32};
use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InOutBuf, InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
};
use zeroize::{Zeroize, ZeroizeOnDrop};

mod sbox_depth;
use sbox_depth::{s0_d, s1_d, s2_d, s3_d, s4_d, s5_d, s6_d, s7_d};

/// Golden-ratio constant of the key schedule.
const PHI: u32 = 0x9e37_79b9;
/// Number of rounds.
const ROUNDS: usize = 32;

/// The 33 128-bit subkeys, each as four little-endian words.
type RoundKeys = [[u32; 4]; ROUNDS + 1];

/// A 16-byte Serpent block.
type Blk = Block<Serpent>;

/// Blocks per call of the portable backend: 8, so that the lane loops fill the
/// 128-bit registers every x86-64 (SSE2) and aarch64 (NEON) CPU has twice over;
/// the compiler vectorises them without any target feature.
const SOFT_LANES: usize = 2;
/// Blocks per call of the auto-vectorised AVX2 backend (32-bit x86; x86-64
/// uses the explicit kernel of `serpent_avx2.rs`).
#[cfg(target_arch = "x86")]
const AVX2_LANES: usize = 32;
/// Blocks per call of the auto-vectorised AVX-512 backend (32-bit x86; x86-64
/// uses the explicit kernel of `serpent_avx512.rs`).
#[cfg(target_arch = "x86")]
const AVX512_LANES: usize = 32;
/// Lanes of the AVX-512 kernel used for tails of at most this many blocks.
#[cfg(target_arch = "x86")]
const AVX512_SHORT: usize = 16;

// ---------------------------------------------------------------------------
// Words: one 32-bit word of one block (`u32`) or of N blocks (`Lanes<N>`).
// ---------------------------------------------------------------------------

/// A value the bitsliced round functions operate on.
trait Word:
    Copy
    + BitXor<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + Not<Output = Self>
    + BitXorAssign
    + BitAndAssign
    + BitOrAssign
{
    /// The same word in every lane.
    fn splat(v: u32) -> Self;
    /// Rotate every lane left by `R` bits.
    fn rotl<const R: u32>(self) -> Self;
    /// Shift every lane left by `R` bits.
    fn shl<const R: u32>(self) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn splat(v: u32) -> Self {
        v
    }
    #[inline(always)]
    fn rotl<const R: u32>(self) -> Self {
        self.rotate_left(R)
    }
    #[inline(always)]
    fn shl<const R: u32>(self) -> Self {
        self << R
    }
}

/// Word `j` of `N` blocks, one block per lane.
#[derive(Clone, Copy)]
struct Lanes<const N: usize>([u32; N]);

macro_rules! lanes_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl<const N: usize> $tr for Lanes<N> {
            type Output = Self;
            #[inline(always)]
            fn $f(self, rhs: Self) -> Self {
                let mut out = [0u32; N];
                for i in 0..N {
                    out[i] = self.0[i] $op rhs.0[i];
                }
                Lanes(out)
            }
        }

        impl<const N: usize> $atr for Lanes<N> {
            #[inline(always)]
            fn $af(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
    };
}

lanes_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);
lanes_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
lanes_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);

impl<const N: usize> Not for Lanes<N> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        let mut out = [0u32; N];
        for i in 0..N {
            out[i] = !self.0[i];
        }
        Lanes(out)
    }
}

impl<const N: usize> Word for Lanes<N> {
    #[inline(always)]
    fn splat(v: u32) -> Self {
        Lanes([v; N])
    }
    #[inline(always)]
    fn rotl<const R: u32>(self) -> Self {
        let mut out = [0u32; N];
        for i in 0..N {
            out[i] = self.0[i].rotate_left(R);
        }
        Lanes(out)
    }
    #[inline(always)]
    fn shl<const R: u32>(self) -> Self {
        let mut out = [0u32; N];
        for i in 0..N {
            out[i] = self.0[i] << R;
        }
        Lanes(out)
    }
}

// ---------------------------------------------------------------------------
// Round functions, written once for every `Word`.
// ---------------------------------------------------------------------------

/// XOR the round key into the state.
#[inline(always)]
fn xor_key<W: Word>(mut x: [W; 4], k: &[u32; 4]) -> [W; 4] {
    for j in 0..4 {
        x[j] ^= W::splat(k[j]);
    }
    x
}

/// The linear transformation LT.
#[inline(always)]
fn lt<W: Word>([x0, x1, x2, x3]: [W; 4]) -> [W; 4] {
    let x0 = x0.rotl::<13>();
    let x2 = x2.rotl::<3>();
    let x1 = x1 ^ x0 ^ x2;
    let x3 = x3 ^ x2 ^ x0.shl::<3>();
    let x1 = x1.rotl::<1>();
    let x3 = x3.rotl::<7>();
    let x0 = x0 ^ x1 ^ x3;
    let x2 = x2 ^ x3 ^ x1.shl::<7>();
    let x0 = x0.rotl::<5>();
    let x2 = x2.rotl::<22>();
    [x0, x1, x2, x3]
}

/// The inverse linear transformation; right rotations by `r` are written as
/// left rotations by `32 - r`.
#[inline(always)]
fn lt_inv<W: Word>([x0, x1, x2, x3]: [W; 4]) -> [W; 4] {
    let x2 = x2.rotl::<10>();
    let x0 = x0.rotl::<27>();
    let x2 = x2 ^ x3 ^ x1.shl::<7>();
    let x0 = x0 ^ x1 ^ x3;
    let x3 = x3.rotl::<25>();
    let x1 = x1.rotl::<31>();
    let x3 = x3 ^ x2 ^ x0.shl::<3>();
    let x1 = x1 ^ x0 ^ x2;
    let x2 = x2.rotl::<29>();
    let x0 = x0.rotl::<19>();
    [x0, x1, x2, x3]
}

// S-box circuits S0..S7 and their inverses (Osvik's instruction sequences).

#[inline(always)]
fn s0<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w4 ^= w1;
    let mut t0 = w2;
    w2 &= w4;
    t0 ^= w3;
    w2 ^= w1;
    w1 |= w4;
    w1 ^= t0;
    t0 ^= w4;
    w4 ^= w3;
    w3 |= w2;
    w3 ^= t0;
    t0 = !t0;
    t0 |= w2;
    w2 ^= w4;
    w2 ^= t0;
    w4 |= w1;
    w2 ^= w4;
    t0 ^= w4;
    [w2, t0, w3, w1]
}

#[inline(always)]
fn s1<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w1 = !w1;
    w3 = !w3;
    let mut t0 = w1;
    w1 &= w2;
    w3 ^= w1;
    w1 |= w4;
    w4 ^= w3;
    w2 ^= w1;
    w1 ^= t0;
    t0 |= w2;
    w2 ^= w4;
    w3 |= w1;
    w3 &= t0;
    w1 ^= w2;
    w2 &= w3;
    w2 ^= w1;
    w1 &= w3;
    t0 ^= w1;
    [w3, t0, w4, w2]
}

#[inline(always)]
fn s2<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w1;
    w1 &= w3;
    w1 ^= w4;
    w3 ^= w2;
    w3 ^= w1;
    w4 |= t0;
    w4 ^= w2;
    t0 ^= w3;
    w2 = w4;
    w4 |= t0;
    w4 ^= w1;
    w1 &= w2;
    t0 ^= w1;
    w2 ^= w4;
    w2 ^= t0;
    t0 = !t0;
    [w3, w4, w2, t0]
}

#[inline(always)]
fn s3<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w1;
    w1 |= w4;
    w4 ^= w2;
    w2 &= t0;
    t0 ^= w3;
    w3 ^= w4;
    w4 &= w1;
    t0 |= w2;
    w4 ^= t0;
    w1 ^= w2;
    t0 &= w1;
    w2 ^= w4;
    t0 ^= w3;
    w2 |= w1;
    w2 ^= w3;
    w1 ^= w4;
    w3 = w2;
    w2 |= w4;
    w1 ^= w2;
    [w1, w3, w4, t0]
}

#[inline(always)]
fn s4<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w2 ^= w4;
    w4 = !w4;
    w3 ^= w4;
    w4 ^= w1;
    let mut t0 = w2;
    w2 &= w4;
    w2 ^= w3;
    t0 ^= w4;
    w1 ^= t0;
    w3 &= t0;
    w3 ^= w1;
    w1 &= w2;
    w4 ^= w1;
    t0 |= w2;
    t0 ^= w1;
    w1 |= w4;
    w1 ^= w3;
    w3 &= w4;
    w1 = !w1;
    t0 ^= w3;
    [w2, t0, w1, w4]
}

#[inline(always)]
fn s5<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w1 ^= w2;
    w2 ^= w4;
    w4 = !w4;
    let mut t0 = w2;
    w2 &= w1;
    w3 ^= w4;
    w2 ^= w3;
    w3 |= t0;
    t0 ^= w4;
    w4 &= w2;
    w4 ^= w1;
    t0 ^= w2;
    t0 ^= w3;
    w3 ^= w1;
    w1 &= w4;
    w3 = !w3;
    w1 ^= t0;
    t0 |= w4;
    t0 ^= w3;
    [w2, w4, w1, t0]
}

#[inline(always)]
fn s6<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w3 = !w3;
    let mut t0 = w4;
    w4 &= w1;
    w1 ^= t0;
    w4 ^= w3;
    w3 |= t0;
    w2 ^= w4;
    w3 ^= w1;
    w1 |= w2;
    w3 ^= w2;
    t0 ^= w1;
    w1 |= w4;
    w1 ^= w3;
    t0 ^= w4;
    t0 ^= w1;
    w4 = !w4;
    w3 &= t0;
    w4 ^= w3;
    [w1, w2, t0, w4]
}

#[inline(always)]
fn s7<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w2;
    w2 |= w3;
    w2 ^= w4;
    t0 ^= w3;
    w3 ^= w2;
    w4 |= t0;
    w4 &= w1;
    t0 ^= w3;
    w4 ^= w2;
    w2 |= t0;
    w2 ^= w1;
    w1 |= t0;
    w1 ^= w3;
    w2 ^= t0;
    w3 ^= w2;
    w2 &= w1;
    w2 ^= t0;
    w3 = !w3;
    w3 |= w1;
    t0 ^= w3;
    [t0, w4, w2, w1]
}

#[inline(always)]
fn si0<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w3 = !w3;
    let mut t0 = w2;
    w2 |= w1;
    t0 = !t0;
    w2 ^= w3;
    w3 |= t0;
    w2 ^= w4;
    w1 ^= t0;
    w3 ^= w1;
    w1 &= w4;
    t0 ^= w1;
    w1 |= w2;
    w1 ^= w3;
    w4 ^= t0;
    w3 ^= w2;
    w4 ^= w1;
    w4 ^= w2;
    w3 &= w4;
    t0 ^= w3;
    [w1, t0, w2, w4]
}

#[inline(always)]
fn si1<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w2;
    w2 ^= w4;
    w4 &= w2;
    t0 ^= w3;
    w4 ^= w1;
    w1 |= w2;
    w3 ^= w4;
    w1 ^= t0;
    w1 |= w3;
    w2 ^= w4;
    w1 ^= w2;
    w2 |= w4;
    w2 ^= w1;
    t0 = !t0;
    t0 ^= w2;
    w2 |= w1;
    w2 ^= w1;
    w2 |= t0;
    w4 ^= w2;
    [t0, w1, w4, w3]
}

#[inline(always)]
fn si2<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w3 ^= w4;
    w4 ^= w1;
    let mut t0 = w4;
    w4 &= w3;
    w4 ^= w2;
    w2 |= w3;
    w2 ^= t0;
    t0 &= w4;
    w3 ^= w4;
    t0 &= w1;
    t0 ^= w3;
    w3 &= w2;
    w3 |= w1;
    w4 = !w4;
    w3 ^= w4;
    w1 ^= w4;
    w1 &= w2;
    w4 ^= t0;
    w4 ^= w1;
    [w2, t0, w3, w4]
}

#[inline(always)]
fn si3<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w3;
    w3 ^= w2;
    w1 ^= w3;
    t0 &= w3;
    t0 ^= w1;
    w1 &= w2;
    w2 ^= w4;
    w4 |= t0;
    w3 ^= w4;
    w1 ^= w4;
    w2 ^= t0;
    w4 &= w3;
    w4 ^= w2;
    w2 ^= w1;
    w2 |= w3;
    w1 ^= w4;
    w2 ^= t0;
    w1 ^= w2;
    [w3, w2, w4, w1]
}

#[inline(always)]
fn si4<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w3;
    w3 &= w4;
    w3 ^= w2;
    w2 |= w4;
    w2 &= w1;
    t0 ^= w3;
    t0 ^= w2;
    w2 &= w3;
    w1 = !w1;
    w4 ^= t0;
    w2 ^= w4;
    w4 &= w1;
    w4 ^= w3;
    w1 ^= w2;
    w3 &= w1;
    w4 ^= w1;
    w3 ^= t0;
    w3 |= w4;
    w4 ^= w1;
    w3 ^= w2;
    [w1, w4, w3, t0]
}

#[inline(always)]
fn si5<W: Word>([w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w2 = !w2;
    let mut t0 = w4;
    w3 ^= w2;
    w4 |= w1;
    w4 ^= w3;
    w3 |= w2;
    w3 &= w1;
    t0 ^= w4;
    w3 ^= t0;
    t0 |= w1;
    t0 ^= w2;
    w2 &= w3;
    w2 ^= w4;
    t0 ^= w3;
    w4 &= t0;
    t0 ^= w2;
    w4 ^= t0;
    t0 = !t0;
    w4 ^= w1;
    [w2, t0, w4, w3]
}

#[inline(always)]
fn si6<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    w1 ^= w3;
    let mut t0 = w3;
    w3 &= w1;
    t0 ^= w4;
    w3 = !w3;
    w4 ^= w2;
    w3 ^= w4;
    t0 |= w1;
    w1 ^= w3;
    w4 ^= t0;
    t0 ^= w2;
    w2 &= w4;
    w2 ^= w1;
    w1 ^= w4;
    w1 |= w3;
    w4 ^= w2;
    t0 ^= w1;
    [w2, w3, t0, w4]
}

#[inline(always)]
fn si7<W: Word>([mut w1, mut w2, mut w3, mut w4]: [W; 4]) -> [W; 4] {
    let mut t0 = w3;
    w3 ^= w1;
    w1 &= w4;
    t0 |= w4;
    w3 = !w3;
    w4 ^= w2;
    w2 |= w1;
    w1 ^= w3;
    w3 &= t0;
    w4 &= t0;
    w2 ^= w3;
    w3 ^= w1;
    w1 |= w3;
    t0 ^= w2;
    w1 ^= w4;
    w4 ^= t0;
    t0 |= w1;
    w4 ^= w3;
    t0 ^= w3;
    [w4, w1, w2, t0]
}

/// Encrypt: 32 rounds of key XOR, S-box `S[r mod 8]` and LT, the last round
/// replacing LT by an XOR with the 33rd subkey.  Used by the wide kernels.
///
/// The shape of this function is tuned for LLVM's SLP vectoriser and register
/// allocator (measured on x86-64 with rustc 1.95): a loop over groups of
/// eight rounds written out inline.  Full unrolling, or calling
/// [`enc_group`] from the loop, compiled to code with more spills and cross-lane
/// shuffles that ran up to 2x slower.  Check the benchmark after changing it.
#[inline(always)]
fn encrypt_words<W: Word>(rk: &RoundKeys, mut x: [W; 4]) -> [W; 4] {
    for g in 0..ROUNDS / 8 {
        let k = 8 * g;
        x = lt(s0(xor_key(x, &rk[k])));
        x = lt(s1(xor_key(x, &rk[k + 1])));
        x = lt(s2(xor_key(x, &rk[k + 2])));
        x = lt(s3(xor_key(x, &rk[k + 3])));
        x = lt(s4(xor_key(x, &rk[k + 4])));
        x = lt(s5(xor_key(x, &rk[k + 5])));
        x = lt(s6(xor_key(x, &rk[k + 6])));
        x = s7(xor_key(x, &rk[k + 7]));
        if g + 1 < ROUNDS / 8 {
            x = lt(x);
        }
    }
    xor_key(x, &rk[ROUNDS])
}

/// Decrypt: the encryption rounds inverted, in reverse order.
#[inline(always)]
fn decrypt_words<W: Word>(rk: &RoundKeys, mut x: [W; 4]) -> [W; 4] {
    x = xor_key(x, &rk[ROUNDS]);
    for g in (0..ROUNDS / 8).rev() {
        let k = 8 * g;
        if g + 1 < ROUNDS / 8 {
            x = lt_inv(x);
        }
        x = xor_key(si7(x), &rk[k + 7]);
        x = xor_key(si6(lt_inv(x)), &rk[k + 6]);
        x = xor_key(si5(lt_inv(x)), &rk[k + 5]);
        x = xor_key(si4(lt_inv(x)), &rk[k + 4]);
        x = xor_key(si3(lt_inv(x)), &rk[k + 3]);
        x = xor_key(si2(lt_inv(x)), &rk[k + 2]);
        x = xor_key(si1(lt_inv(x)), &rk[k + 1]);
        x = xor_key(si0(lt_inv(x)), &rk[k]);
    }
    x
}

/// [`decrypt_words`] on two states, a round of one and then of the other
/// (each its inverse LT, inverse S-box and key), as libgcrypt orders its
/// two AVX2 register sets (see the x86 backends' [`X86Words::decrypt`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn decrypt_pair<W: Word>(rk: &RoundKeys, mut a: [W; 4], mut b: [W; 4]) -> ([W; 4], [W; 4]) {
    a = xor_key(a, &rk[ROUNDS]);
    b = xor_key(b, &rk[ROUNDS]);
    for g in (0..ROUNDS / 8).rev() {
        let k = 8 * g;
        if g + 1 < ROUNDS / 8 {
            a = lt_inv(a);
            b = lt_inv(b);
        }
        a = xor_key(si7(a), &rk[k + 7]);
        b = xor_key(si7(b), &rk[k + 7]);
        macro_rules! inv_round {
            ($si:ident, $r:expr) => {
                a = lt_inv(a);
                b = lt_inv(b);
                a = xor_key($si(a), &rk[k + $r]);
                b = xor_key($si(b), &rk[k + $r]);
            };
        }
        inv_round!(si6, 6);
        inv_round!(si5, 5);
        inv_round!(si4, 4);
        inv_round!(si3, 3);
        inv_round!(si2, 2);
        inv_round!(si1, 1);
        inv_round!(si0, 0);
    }
    (a, b)
}

/// Rounds `k .. k + 8` of encryption (`k` a multiple of 8) without the LT of
/// the last one; the single-block path calls it with constant `k`.
#[inline(always)]
fn enc_group<W: Word>(rk: &RoundKeys, k: usize, x: [W; 4]) -> [W; 4] {
    let x = lt(s0(xor_key(x, &rk[k])));
    let x = lt(s1(xor_key(x, &rk[k + 1])));
    let x = lt(s2(xor_key(x, &rk[k + 2])));
    let x = lt(s3(xor_key(x, &rk[k + 3])));
    let x = lt(s4(xor_key(x, &rk[k + 4])));
    let x = lt(s5(xor_key(x, &rk[k + 5])));
    let x = lt(s6(xor_key(x, &rk[k + 6])));
    s7(xor_key(x, &rk[k + 7]))
}

/// `LT(x)` with round key `k` XORed in, for the scalar rounds of one block,
/// which wait on the chain from round to round (CBC encryption): the key's
/// words 0 and 2 go in before LT's last rotations (`rotl(a, n) ^ k =
/// rotl(a ^ rotr(k, n), n)`), inside XOR trees whose other inputs come
/// later, so the key adds no step to that chain. (The vector paths, bound
/// by throughput, keep `xor_key` after `lt`: the rotated keys would cost
/// them broadcasts.)
#[inline(always)]
fn lt_then_key([x0, x1, x2, x3]: [u32; 4], k: &[u32; 4]) -> [u32; 4] {
    let x0 = x0.rotate_left(13);
    let x2 = x2.rotate_left(3);
    let x1 = x1 ^ x0 ^ x2;
    let x3 = x3 ^ x2 ^ (x0 << 3);
    let x1 = x1.rotate_left(1);
    let x3 = x3.rotate_left(7);
    let x0 = x0 ^ k[0].rotate_right(5) ^ x1 ^ x3;
    let x2 = x2 ^ k[2].rotate_right(22) ^ x3 ^ (x1 << 7);
    [x0.rotate_left(5), x1 ^ k[1], x2.rotate_left(22), x3 ^ k[3]]
}

/// [`enc_group`] on one block whose input has round key `k` XORed in
/// already, each later key joined by [`lt_then_key`].
#[inline(always)]
fn enc_group_keyed(rk: &RoundKeys, k: usize, x: [u32; 4]) -> [u32; 4] {
    let x = lt_then_key(s0_d(x), &rk[k + 1]);
    let x = lt_then_key(s1_d(x), &rk[k + 2]);
    let x = lt_then_key(s2_d(x), &rk[k + 3]);
    let x = lt_then_key(s3_d(x), &rk[k + 4]);
    let x = lt_then_key(s4_d(x), &rk[k + 5]);
    let x = lt_then_key(s5_d(x), &rk[k + 6]);
    let x = lt_then_key(s6_d(x), &rk[k + 7]);
    s7_d(x)
}

/// [`encrypt_unrolled`] on one block with the keys joined by
/// [`lt_then_key`]: the shortest chain from round to round, for CBC
/// encryption.
#[inline(always)]
fn encrypt_chained(rk: &RoundKeys, x: [u32; 4]) -> [u32; 4] {
    let x = enc_group_keyed(rk, 0, xor_key(x, &rk[0]));
    let x = enc_group_keyed(rk, 8, lt_then_key(x, &rk[8]));
    let x = enc_group_keyed(rk, 16, lt_then_key(x, &rk[16]));
    let x = enc_group_keyed(rk, 24, lt_then_key(x, &rk[24]));
    xor_key(x, &rk[ROUNDS])
}

/// Inverse of [`enc_group`].
#[inline(always)]
fn dec_group<W: Word>(rk: &RoundKeys, k: usize, x: [W; 4]) -> [W; 4] {
    let x = xor_key(si7(x), &rk[k + 7]);
    let x = xor_key(si6(lt_inv(x)), &rk[k + 6]);
    let x = xor_key(si5(lt_inv(x)), &rk[k + 5]);
    let x = xor_key(si4(lt_inv(x)), &rk[k + 4]);
    let x = xor_key(si3(lt_inv(x)), &rk[k + 3]);
    let x = xor_key(si2(lt_inv(x)), &rk[k + 2]);
    let x = xor_key(si1(lt_inv(x)), &rk[k + 1]);
    xor_key(si0(lt_inv(x)), &rk[k])
}

/// [`encrypt_words`] fully unrolled, for the scalar single-block path, which
/// is faster without the loop.
#[inline(always)]
fn encrypt_unrolled<W: Word>(rk: &RoundKeys, x: [W; 4]) -> [W; 4] {
    let x = enc_group(rk, 0, x);
    let x = enc_group(rk, 8, lt(x));
    let x = enc_group(rk, 16, lt(x));
    let x = enc_group(rk, 24, lt(x));
    xor_key(x, &rk[ROUNDS])
}

/// [`decrypt_words`] fully unrolled.
#[inline(always)]
fn decrypt_unrolled<W: Word>(rk: &RoundKeys, x: [W; 4]) -> [W; 4] {
    let x = xor_key(x, &rk[ROUNDS]);
    let x = lt_inv(dec_group(rk, 24, x));
    let x = lt_inv(dec_group(rk, 16, x));
    let x = lt_inv(dec_group(rk, 8, x));
    dec_group(rk, 0, x)
}

// ---------------------------------------------------------------------------
// Single block and N-block kernels.
// ---------------------------------------------------------------------------

/// Read a block as four little-endian words.
#[inline(always)]
fn block_words(b: &Blk) -> [u32; 4] {
    let mut w = [0u32; 4];
    for j in 0..4 {
        w[j] = u32::from_le_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]);
    }
    w
}

/// Write four words as a little-endian block.
#[inline(always)]
fn words_block(w: &[u32; 4], b: &mut Blk) {
    for j in 0..4 {
        b[4 * j..4 * j + 4].copy_from_slice(&w[j].to_le_bytes());
    }
}

/// Encrypt or decrypt one block with the scalar round functions.
#[inline(always)]
fn crypt_one<const ENC: bool>(rk: &RoundKeys, mut block: InOut<'_, '_, Blk>) {
    let x = block_words(block.get_in());
    let y = if ENC {
        encrypt_unrolled::<u32>(rk, x)
    } else {
        decrypt_unrolled::<u32>(rk, x)
    };
    words_block(&y, block.get_out());
}

/// Transpose `N` blocks into four lane vectors (word `j` of block `i` goes to
/// lane `i` of vector `j`).
#[inline(always)]
fn load<const N: usize>(blocks: &[Blk; N]) -> [Lanes<N>; 4] {
    let mut x = [Lanes([0u32; N]); 4];
    for i in 0..N {
        let w = block_words(&blocks[i]);
        for j in 0..4 {
            x[j].0[i] = w[j];
        }
    }
    x
}

/// Inverse of [`load`].
#[inline(always)]
fn store<const N: usize>(x: &[Lanes<N>; 4], blocks: &mut [Blk; N]) {
    for i in 0..N {
        words_block(
            &[x[0].0[i], x[1].0[i], x[2].0[i], x[3].0[i]],
            &mut blocks[i],
        );
    }
}

/// Encrypt or decrypt up to `N` blocks in `N` lanes.  A short buffer is
/// padded with zero blocks whose output is discarded.
#[inline(always)]
fn crypt_lanes<const N: usize, const ENC: bool>(rk: &RoundKeys, mut blocks: InOutBuf<'_, '_, Blk>) {
    let n = blocks.len();
    assert!(n <= N, "too many blocks for the lane count");
    let x = match <&[Blk; N]>::try_from(blocks.get_in()) {
        Ok(full) => load(full),
        Err(_) => {
            let mut tmp = [Blk::default(); N];
            tmp[..n].copy_from_slice(blocks.get_in());
            load(&tmp)
        }
    };
    let y = if ENC {
        encrypt_words(rk, x)
    } else {
        decrypt_words(rk, x)
    };
    match <&mut [Blk; N]>::try_from(blocks.get_out()) {
        Ok(full) => store(&y, full),
        Err(_) => {
            let mut tmp = [Blk::default(); N];
            store(&y, &mut tmp);
            blocks.get_out().copy_from_slice(&tmp[..n]);
        }
    }
}

/// The backends' closures compiled with AVX2 or AVX-512F enabled (on 32-bit
/// x86 also the auto-vectorised lane kernels; x86-64 has explicit ones in
/// `serpent_avx2.rs` and `serpent_avx512.rs`).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86 {
    use super::{
        Avx2Backend, Avx512Backend, BlockCipherDecClosure, BlockCipherEncClosure, RoundKeys, U16,
    };
    #[cfg(target_arch = "x86")]
    use super::{Blk, InOutBuf, crypt_lanes};

    /// Whether AVX2 is usable (CPU and OS support, and not masked).
    pub(super) fn has_avx2() -> bool {
        crate::cpu::features().avx2
    }

    /// Whether AVX-512 is usable (CPU and OS support, and not masked).
    pub(super) fn has_avx512() -> bool {
        crate::cpu::features().avx512
    }

    /// Up to `N` blocks with AVX2 (32-bit x86).
    #[cfg(target_arch = "x86")]
    #[target_feature(enable = "avx2")]
    pub(super) fn lanes_avx2<const N: usize, const ENC: bool>(
        rk: &RoundKeys,
        blocks: InOutBuf<'_, '_, Blk>,
    ) {
        crypt_lanes::<N, ENC>(rk, blocks)
    }

    /// Up to `N` blocks with AVX-512F (32-bit x86).
    #[cfg(target_arch = "x86")]
    #[target_feature(enable = "avx512f")]
    pub(super) fn lanes_avx512<const N: usize, const ENC: bool>(
        rk: &RoundKeys,
        blocks: InOutBuf<'_, '_, Blk>,
    ) {
        crypt_lanes::<N, ENC>(rk, blocks)
    }

    /// Run an encryption closure with the AVX2 backend; the closure's block
    /// loop is compiled with AVX2 enabled.
    #[target_feature(enable = "avx2")]
    pub(super) fn enc_avx2(rk: &RoundKeys, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        f.call(&Avx2Backend(rk))
    }

    /// Run a decryption closure with the AVX2 backend.
    #[target_feature(enable = "avx2")]
    pub(super) fn dec_avx2(rk: &RoundKeys, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        f.call(&Avx2Backend(rk))
    }

    /// Run an encryption closure with the AVX-512 backend.
    #[target_feature(enable = "avx512f")]
    pub(super) fn enc_avx512(rk: &RoundKeys, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        f.call(&Avx512Backend(rk))
    }

    /// Run a decryption closure with the AVX-512 backend.
    #[target_feature(enable = "avx512f")]
    pub(super) fn dec_avx512(rk: &RoundKeys, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        f.call(&Avx512Backend(rk))
    }
}

// ---------------------------------------------------------------------------
// Backends for the cipher traits.
// ---------------------------------------------------------------------------

/// The [`X86Words`] items that are the same in every x86 backend, whose word
/// `Wk<2>` holds two registers `V` and whose `$transpose` transposes within
/// 128-bit lanes.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_words_regs {
    ($transpose:path) => {
        type Half = Wk<1>;
        #[inline(always)]
        fn regs(self) -> [V; 2] {
            self.0
        }
        #[inline(always)]
        fn from_regs(r: [V; 2]) -> Self {
            Wk(r)
        }
        #[inline(always)]
        fn half(v: V) -> Wk<1> {
            Wk([v])
        }
        #[inline(always)]
        fn unhalf(h: Wk<1>) -> V {
            h.0[0]
        }
        #[inline(always)]
        fn transpose(b: [V; 4]) -> [V; 4] {
            $transpose(b)
        }
    };
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[path = "serpent_simd128.rs"]
mod simd128;

#[cfg(target_arch = "x86_64")]
#[path = "serpent_avx2.rs"]
mod avx2x;

#[cfg(target_arch = "x86_64")]
#[path = "serpent_avx512.rs"]
mod avx512x;

/// Vectors of blocks per batch in every x86 backend: a word is two
/// registers, each the transposition of four vectors.
#[cfg(target_arch = "x86_64")]
const VECS: usize = 8;

/// A multi-block word type of an x86-64 SIMD backend, which moves its
/// [`X86Words::LANES`] blocks between vectors of whole blocks and words. The
/// fused CBC decryption and CTR loops ([`cbc_decrypt_x86`], [`ctr_x86`]) are
/// written once over it.
#[cfg(target_arch = "x86_64")]
trait X86Words: Word {
    /// Blocks per word.
    const LANES: usize;
    /// A register of consecutive blocks, as the backend loads and stores them
    /// (AVX2: two blocks, so that a batch is transposed in its 256-bit
    /// registers, as libgcrypt does, not block by block). A word is two such
    /// registers of 32-bit lanes.
    type Vec: Copy;
    /// The word of one register's blocks alone.
    type Half: Word;
    /// The word's two registers.
    fn regs(self) -> [Self::Vec; 2];
    /// The word of two registers.
    fn from_regs(r: [Self::Vec; 2]) -> Self;
    /// One register as a word of its own.
    fn half(v: Self::Vec) -> Self::Half;
    /// Inverse of [`X86Words::half`].
    fn unhalf(h: Self::Half) -> Self::Vec;
    /// The 4x4 transposition of 32-bit words within each 128-bit lane of
    /// four registers (its own inverse).
    fn transpose(b: [Self::Vec; 4]) -> [Self::Vec; 4];
    /// A word whose lane of block `i` (of `0..LANES`) is `f(i)`, lanes placed
    /// as [`X86Words::from_vecs`] places blocks.
    fn from_fn(f: impl Fn(usize) -> u32) -> Self;
    /// The [`VECS`] vectors of `LANES` consecutive blocks transposed into
    /// words: vectors `4h .. 4h + 4` make register `h` of each word.
    #[inline(always)]
    fn from_vecs(b: &[Self::Vec; VECS]) -> [Self; 4] {
        let lo = Self::transpose([b[0], b[1], b[2], b[3]]);
        let hi = Self::transpose([b[4], b[5], b[6], b[7]]);
        core::array::from_fn(|j| Self::from_regs([lo[j], hi[j]]))
    }
    /// Inverse of [`X86Words::from_vecs`].
    #[inline(always)]
    fn to_vecs(x: [Self; 4]) -> [Self::Vec; VECS] {
        let r = x.map(Self::regs);
        let [a, b, c, d] = Self::transpose([r[0][0], r[1][0], r[2][0], r[3][0]]);
        let [e, f, g, h] = Self::transpose([r[0][1], r[1][1], r[2][1], r[3][1]]);
        [a, b, c, d, e, f, g, h]
    }
    /// [`decrypt_words`] with the two registers as two states, a round of
    /// one and then of the other ([`decrypt_pair`]): through the two-register
    /// word LLVM interleaves them op by op, and that order decrypts 2-5%
    /// slower on Zen 4 (SSE2, AVX2, AVX-512; encryption gained nothing from
    /// the same change).
    #[inline(always)]
    fn decrypt(rk: &RoundKeys, x: [Self; 4]) -> [Self; 4] {
        let r = x.map(Self::regs);
        let (a, b) = decrypt_pair(rk, r.map(|v| Self::half(v[0])), r.map(|v| Self::half(v[1])));
        core::array::from_fn(|j| Self::from_regs([Self::unhalf(a[j]), Self::unhalf(b[j])]))
    }
    /// Unaligned load of a vector.
    ///
    /// # Safety
    /// `p` is valid for reading a vector, and the CPU has the backend's features.
    unsafe fn load(p: *const u8) -> Self::Vec;
    /// Unaligned store of `v`.
    ///
    /// # Safety
    /// `p` is valid for writing a vector, and the CPU has the backend's features.
    unsafe fn store(p: *mut u8, v: Self::Vec);
    /// Unaligned store of `v ^ m`.
    ///
    /// # Safety
    /// `p` is valid for writing a vector, and the CPU has the backend's features.
    unsafe fn store_xor(p: *mut u8, v: Self::Vec, m: Self::Vec);
    /// The vector of `prev` and then the blocks from `p`, one fewer than a
    /// vector holds.
    ///
    /// # Safety
    /// `p` is valid for reading a vector, and the CPU has the backend's features.
    unsafe fn load_after(prev: core::arch::x86_64::__m128i, p: *const u8) -> Self::Vec;
}

/// Unaligned 16-byte load (SSE2, the x86-64 baseline).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ld16(b: &[u8; 16]) -> core::arch::x86_64::__m128i {
    // SAFETY: `b` is 16 readable bytes; unaligned loads are allowed and SSE2
    // is part of the x86-64 baseline.
    unsafe { core::arch::x86_64::_mm_loadu_si128(b.as_ptr().cast()) }
}

/// The [`VECS`] vectors of the `L` blocks at `p`.
///
/// # Safety
/// `p` is valid for reading `L` blocks, the CPU has `W`'s features.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load_vecs<W: X86Words, const L: usize>(p: *const u8) -> [W::Vec; VECS] {
    let vb = 16 * L / VECS;
    // SAFETY: vector `v` is bytes `v * vb ..` of the `L` blocks at `p` (a loop,
    // not `array::from_fn`: closures do not inherit the caller's features).
    unsafe {
        let mut c = [W::load(p); VECS];
        for (v, x) in c.iter_mut().enumerate().skip(1) {
            *x = W::load(p.add(v * vb));
        }
        c
    }
}

/// Encrypts or decrypts up to `L = W::LANES` blocks ([`VECS`] vectors), a short
/// group through a padded copy.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn crypt_x86<W: X86Words, const L: usize, const ENC: bool>(
    rk: &RoundKeys,
    mut blocks: InOutBuf<'_, '_, Blk>,
) {
    const { assert!(W::LANES == L && L.is_multiple_of(VECS)) };
    let n = blocks.len();
    assert!(n <= L, "too many blocks for the lane count");
    let vb = 16 * L / VECS;
    let mut tmp = [Blk::default(); L];
    let input: &[Blk] = if n == L {
        blocks.get_in()
    } else {
        tmp[..n].copy_from_slice(blocks.get_in());
        &tmp
    };
    // SAFETY: `input` is `L` blocks; the callers run with `W`'s features.
    let x = W::from_vecs(&unsafe { load_vecs::<W, L>(input.as_ptr().cast()) });
    let y = if ENC {
        encrypt_words(rk, x)
    } else {
        W::decrypt(rk, x)
    };
    let v = W::to_vecs(y);
    let out: &mut [Blk] = if n == L { blocks.get_out() } else { &mut tmp };
    let p = out.as_mut_ptr().cast::<u8>();
    for (i, x) in v.iter().enumerate() {
        // SAFETY: vector `i` of the `L` blocks of `out`; as above.
        unsafe { W::store(p.add(i * vb), *x) };
    }
    if n < L {
        blocks.get_out().copy_from_slice(&tmp[..n]);
    }
}

/// One step of [`cbc_decrypt_x86`]: the `L` blocks of `g` decrypted in
/// place, each XORed with the ciphertext before it (`prev` for the first),
/// and `prev` set to the last ciphertext block. A function, not a closure:
/// closures do not inherit the AVX2 target feature of the caller.
///
/// The previous blocks are read from memory after the rounds, where they
/// still are because the vectors are stored last to first: the ciphertext
/// does not stay in registers (or spill) through the rounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn cbc_step<W: X86Words, const L: usize>(
    rk: &RoundKeys,
    g: &mut [[u8; 16]],
    prev: &mut core::arch::x86_64::__m128i,
) {
    assert_eq!(g.len(), L);
    let vb = 16 * L / VECS;
    let next = ld16(&g[L - 1]);
    let p = g.as_mut_ptr().cast::<u8>();
    // SAFETY: `g` is `L` blocks at `p`; every vector read or written below
    // starts at `v * vb` (v < VECS) or `v * vb - 16` (v >= 1), inside `g`. The
    // callers run with `W`'s features.
    unsafe {
        let y = W::decrypt(rk, W::from_vecs(&load_vecs::<W, L>(p)));
        let out = W::to_vecs(y);
        for v in (1..VECS).rev() {
            let q = p.add(v * vb);
            W::store_xor(q, out[v], W::load(q.sub(16)));
        }
        W::store_xor(p, out[0], W::load_after(*prev, p));
    }
    *prev = next;
}

/// CBC decryption of `L = W::LANES` blocks ([`VECS`] vectors) per step with the
/// previous ciphertext XORed in as the blocks are stored (the generic batched
/// mode copies the ciphertext aside and makes an extra pass). In place; `iv`
/// becomes the last ciphertext block.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn cbc_decrypt_x86<W: X86Words, const L: usize>(
    rk: &RoundKeys,
    iv: &mut [u8; 16],
    blocks: &mut [[u8; 16]],
) {
    const { assert!(W::LANES == L && L.is_multiple_of(VECS)) };
    let mut prev = ld16(iv);
    let mut groups = blocks.chunks_exact_mut(L);
    for g in &mut groups {
        cbc_step::<W, L>(rk, g, &mut prev);
    }
    let tail = groups.into_remainder();
    if let Some(last) = tail.last() {
        // A short last group through a padded copy; the chaining value is
        // its last real ciphertext block, not the padding's.
        let n = tail.len();
        let next = ld16(last);
        let mut tmp = [[0u8; 16]; L];
        tmp[..n].copy_from_slice(tail);
        cbc_step::<W, L>(rk, &mut tmp, &mut prev);
        tail.copy_from_slice(&tmp[..n]);
        prev = next;
    }
    // SAFETY: `iv` is 16 writable bytes; SSE2 is the x86-64 baseline.
    unsafe { core::arch::x86_64::_mm_storeu_si128(iv.as_mut_ptr().cast(), prev) };
}

/// The counter blocks `c .. c + L` (big-endian, as [`crate::modes`] counts)
/// as words. Words 0 to 2 are the same in every lane unless the low 32 bits
/// wrap inside the group, so they are splats and word 3 is built from
/// scalars, without a transposition.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn counter_words<W: X86Words, const L: usize>(c: u128) -> [W; 4] {
    let lo = c as u32;
    if lo.checked_add(L as u32 - 1).is_some() {
        [
            W::splat(((c >> 96) as u32).swap_bytes()),
            W::splat(((c >> 64) as u32).swap_bytes()),
            W::splat(((c >> 32) as u32).swap_bytes()),
            W::from_fn(|i| lo.wrapping_add(i as u32).swap_bytes()),
        ]
    } else {
        let mut b = [[0u8; 16]; L];
        for (i, x) in b.iter_mut().enumerate() {
            *x = c.wrapping_add(i as u128).to_be_bytes();
        }
        // SAFETY: `b` is `L` blocks; the callers run with `W`'s features.
        W::from_vecs(&unsafe { load_vecs::<W, L>(b.as_ptr().cast()) })
    }
}

/// The key stream of counters `c .. c + L`, as vectors of blocks (a
/// function, not a closure, for the reason given at [`cbc_step`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ctr_stream<W: X86Words, const L: usize>(rk: &RoundKeys, c: u128) -> [W::Vec; VECS] {
    W::to_vecs(encrypt_words(rk, counter_words::<W, L>(c)))
}

/// CTR mode: the key stream of counters `ctr, ctr + 1, ...` (a 128-bit
/// big-endian counter that wraps) XORed into `data` as each group is
/// stored, with the counters built in registers. A final partial block uses
/// up a whole counter value, as [`crate::modes::BlockModes::ctr_apply`] does.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ctr_x86<W: X86Words, const L: usize>(rk: &RoundKeys, ctr: &mut [u8; 16], data: &mut [u8]) {
    const { assert!(W::LANES == L && L.is_multiple_of(VECS)) };
    let vb = 16 * L / VECS;
    let mut c = u128::from_be_bytes(*ctr);
    let (groups, rest) = data.as_chunks_mut::<16>();
    let mut groups = groups.chunks_exact_mut(L);
    for g in &mut groups {
        let ks = ctr_stream::<W, L>(rk, c);
        let p = g.as_mut_ptr().cast::<u8>();
        for (v, k) in ks.iter().enumerate() {
            // SAFETY: vector `v` of the `L` blocks of `g`; the callers run
            // with `W`'s features.
            unsafe {
                let q = p.add(v * vb);
                W::store_xor(q, *k, W::load(q));
            }
        }
        c = c.wrapping_add(L as u128);
    }
    let whole = groups.into_remainder();
    let n = whole.len() + usize::from(!rest.is_empty());
    if n > 0 {
        let ks = ctr_stream::<W, L>(rk, c);
        let mut buf = [[0u8; 16]; L];
        let p = buf.as_mut_ptr().cast::<u8>();
        for (v, k) in ks.iter().enumerate() {
            // SAFETY: vector `v` of the `L` blocks of `buf`, as above.
            unsafe {
                let q = p.add(v * vb);
                W::store_xor(q, *k, W::load(q));
            }
        }
        let ks = buf.as_flattened();
        for (d, k) in whole
            .as_flattened_mut()
            .iter_mut()
            .chain(rest.iter_mut())
            .zip(ks)
        {
            *d ^= k;
        }
        c = c.wrapping_add(n as u128);
    }
    *ctr = c.to_be_bytes();
}

/// The name of the 128-bit vector backend on this architecture.
#[cfg(target_arch = "x86_64")]
const SIMD128: &str = "sse2";
#[cfg(target_arch = "aarch64")]
const SIMD128: &str = "neon";

/// 128-bit vector backend (SSE2 / NEON): `simd128::LANES` blocks per call.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
struct Simd128Backend<'a>(&'a RoundKeys);

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
impl Simd128Backend<'_> {
    #[inline(always)]
    fn lanes<const ENC: bool>(&self, blocks: InOutBuf<'_, '_, Blk>) {
        simd128::crypt::<ENC>(self.0, blocks)
    }
}

/// Portable backend: `SOFT_LANES` blocks per call.
struct SoftBackend<'a>(&'a RoundKeys);

impl SoftBackend<'_> {
    #[inline(always)]
    fn lanes<const ENC: bool>(&self, blocks: InOutBuf<'_, '_, Blk>) {
        crypt_lanes::<SOFT_LANES, ENC>(self.0, blocks)
    }
}

/// AVX2 backend: `AVX2_LANES` blocks per call.
///
/// Invariant: only constructed (by `x86::enc_avx2` / `x86::dec_avx2`) when
/// AVX2 has been detected on the running CPU.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
struct Avx2Backend<'a>(&'a RoundKeys);

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Avx2Backend<'_> {
    #[inline(always)]
    fn lanes<const ENC: bool>(&self, blocks: InOutBuf<'_, '_, Blk>) {
        // SAFETY: an `Avx2Backend` exists only when AVX2 was detected at run
        // time (see the type's invariant), so the AVX2 code can execute.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            avx2x::crypt::<ENC>(self.0, blocks)
        }
        // SAFETY: as above.
        #[cfg(target_arch = "x86")]
        unsafe {
            x86::lanes_avx2::<AVX2_LANES, ENC>(self.0, blocks)
        }
    }
}

/// AVX-512 backend: `AVX512_LANES` blocks per call.
///
/// Invariant: only constructed (by `x86::enc_avx512` / `x86::dec_avx512`)
/// when AVX-512F has been detected on the running CPU.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
struct Avx512Backend<'a>(&'a RoundKeys);

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Avx512Backend<'_> {
    #[inline(always)]
    fn lanes<const ENC: bool>(&self, blocks: InOutBuf<'_, '_, Blk>) {
        // SAFETY: an `Avx512Backend` exists only when AVX-512 is among the
        // CPU features in use (see the type's invariant).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            avx512x::crypt::<ENC>(self.0, blocks)
        }
        #[cfg(target_arch = "x86")]
        if blocks.len() <= AVX512_SHORT {
            // SAFETY: as above.
            unsafe { x86::lanes_avx512::<AVX512_SHORT, ENC>(self.0, blocks) }
        } else {
            // SAFETY: as above.
            unsafe { x86::lanes_avx512::<AVX512_LANES, ENC>(self.0, blocks) }
        }
    }
}

/// Implements the cipher backend traits for a backend type with a `lanes`
/// method processing up to `ParBlocksSize` blocks.
macro_rules! impl_backend {
    ($name:ident, $par:ty) => {
        impl BlockSizeUser for $name<'_> {
            type BlockSize = U16;
        }

        impl ParBlocksSizeUser for $name<'_> {
            type ParBlocksSize = $par;
        }

        impl BlockCipherEncBackend for $name<'_> {
            #[inline(always)]
            fn encrypt_block(&self, block: InOut<'_, '_, Blk>) {
                crypt_one::<true>(self.0, block)
            }

            #[inline(always)]
            fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                self.lanes::<true>(blocks.into_buf())
            }

            #[inline(always)]
            fn encrypt_tail_blocks(&self, mut blocks: InOutBuf<'_, '_, Blk>) {
                match blocks.len() {
                    0 => {}
                    1 => crypt_one::<true>(self.0, blocks.get(0)),
                    _ => self.lanes::<true>(blocks),
                }
            }
        }

        impl BlockCipherDecBackend for $name<'_> {
            #[inline(always)]
            fn decrypt_block(&self, block: InOut<'_, '_, Blk>) {
                crypt_one::<false>(self.0, block)
            }

            #[inline(always)]
            fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
                self.lanes::<false>(blocks.into_buf())
            }

            #[inline(always)]
            fn decrypt_tail_blocks(&self, mut blocks: InOutBuf<'_, '_, Blk>) {
                match blocks.len() {
                    0 => {}
                    1 => crypt_one::<false>(self.0, blocks.get(0)),
                    _ => self.lanes::<false>(blocks),
                }
            }
        }
    };
}

impl_backend!(SoftBackend, U2);
#[cfg(target_arch = "x86_64")]
impl_backend!(Simd128Backend, U8);
#[cfg(target_arch = "aarch64")]
impl_backend!(Simd128Backend, U16);
#[cfg(target_arch = "x86_64")]
impl_backend!(Avx2Backend, U16);
#[cfg(target_arch = "x86")]
impl_backend!(Avx2Backend, U16);
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl_backend!(Avx512Backend, U32);

// ---------------------------------------------------------------------------
// Public cipher type.
// ---------------------------------------------------------------------------

/// Implementation selected at key setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Portable code.
    Soft,
    /// SSE2 (eight blocks at a time) or NEON (sixteen); the architecture's baseline.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    Simd128,
    /// AVX2; only constructed (by `detect` or `from_name`) after run-time
    /// detection of AVX2.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx2,
    /// AVX-512F; only constructed (by `detect` or `from_name`) after run-time
    /// detection of AVX-512F.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx512,
}

impl Kind {
    /// The implementation `crate::dispatch` chooses.
    fn detect() -> Self {
        Kind::from_name(crate::dispatch::serpent()).unwrap_or(Kind::Soft)
    }

    /// The named implementation, if the running CPU supports it.
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "soft" => Some(Kind::Soft),
            #[cfg(target_arch = "x86_64")]
            "sse2" => Some(Kind::Simd128),
            #[cfg(target_arch = "aarch64")]
            "neon" if crate::cpu::features().neon => Some(Kind::Simd128),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            "avx2" if x86::has_avx2() => Some(Kind::Avx2),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            "avx512" if x86::has_avx512() => Some(Kind::Avx512),
            _ => None,
        }
    }
}

/// Serpent block cipher (128-bit block, 128- to 256-bit key) with multi-block
/// SIMD backends selected at run time.
///
/// Produces the same output as `serpent::Serpent` 0.6 for the same key.
/// [`KeyInit::new`] takes a 32-byte key; [`KeyInit::new_from_slice`] accepts
/// 16 to 32 bytes.
#[derive(Clone)]
pub struct Serpent {
    /// Subkeys `K_0..K_32`.
    rk: RoundKeys,
    /// Backend chosen (and CPU features checked) at key setup.
    kind: Kind,
}

impl Serpent {
    /// Like [`KeyInit::new_from_slice`], but always uses the portable
    /// backend.  Meant for testing and benchmarking.
    ///
    /// # Errors
    /// [`InvalidLength`] unless the key is 16 to 32 bytes long.
    pub fn new_soft(key: &[u8]) -> Result<Self, InvalidLength> {
        Ok(Self {
            rk: key_schedule(key)?,
            kind: Kind::Soft,
        })
    }

    /// Like [`KeyInit::new_from_slice`], but with the named backend
    /// (`"avx512"`, `"avx2"` or `"soft"`).  Meant for testing and
    /// benchmarking.
    ///
    /// Returns `None` if the key is not 16 to 32 bytes long, or the backend
    /// is unknown or not supported by the running CPU (see
    /// [`Serpent::available_backends`]).
    pub fn new_with_backend(key: &[u8], backend: &str) -> Option<Self> {
        let kind = Kind::from_name(backend)?;
        Some(Self {
            rk: key_schedule(key).ok()?,
            kind,
        })
    }

    /// Names of the backends the running CPU supports, widest (the one
    /// [`KeyInit`] picks) first; `"soft"` is always last.
    pub fn available_backends() -> &'static [&'static str] {
        #[cfg(target_arch = "x86_64")]
        return match (x86::has_avx512(), x86::has_avx2()) {
            (true, _) => &["avx512", "avx2", "sse2", "soft"],
            (false, true) => &["avx2", "sse2", "soft"],
            (false, false) => &["sse2", "soft"],
        };
        #[cfg(target_arch = "x86")]
        return match (x86::has_avx512(), x86::has_avx2()) {
            (true, _) => &["avx512", "avx2", "soft"],
            (false, true) => &["avx2", "soft"],
            (false, false) => &["soft"],
        };
        #[cfg(target_arch = "aarch64")]
        return if crate::cpu::features().neon {
            &["neon", "soft"]
        } else {
            &["soft"]
        };
        #[allow(unreachable_code)]
        &["soft"]
    }

    /// The backend in use: `"avx512"`, `"avx2"`, `"sse2"`, `"neon"` or `"soft"`.
    pub fn backend(&self) -> &'static str {
        match self.kind {
            Kind::Soft => "soft",
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Kind::Simd128 => SIMD128,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kind::Avx2 => "avx2",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Kind::Avx512 => "avx512",
        }
    }

    /// CBC encryption in place, one block at a time on the scalar rounds
    /// with the chaining value held in registers: through the block-cipher
    /// traits each block went out to memory and was read back on the serial
    /// chain (a store-to-load forwarding delay on every block).
    ///
    /// # Panics
    ///
    /// If `data` is not a whole number of blocks.
    pub fn cbc_encrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        let (blocks, rest) = data.as_chunks_mut::<16>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        let mut c = block_words((&*iv).into());
        for block in blocks {
            let p = block_words((&*block).into());
            c = encrypt_chained(&self.rk, [0, 1, 2, 3].map(|j| p[j] ^ c[j]));
            words_block(&c, block.into());
        }
        words_block(&c, iv.into());
    }
}

impl Serpent {
    /// CBC decryption of whole blocks in place with the previous ciphertext
    /// XORed in as the blocks are stored, if this backend has such a loop
    /// (x86-64 SSE2, AVX2 and AVX-512); returns `false`, leaving everything untouched, otherwise.
    /// `iv` becomes the last ciphertext block.
    ///
    /// # Panics
    ///
    /// If `data` is not a whole number of blocks.
    pub fn cbc_decrypt_fused(&self, iv: &mut [u8; 16], data: &mut [u8]) -> bool {
        let (blocks, rest) = data.as_chunks_mut::<16>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            Kind::Simd128 => {
                simd128::cbc_decrypt(&self.rk, iv, blocks);
                true
            }
            #[cfg(target_arch = "x86_64")]
            Kind::Avx2 => {
                // SAFETY: `Kind::Avx2` is only constructed after checking
                // that the CPU features in use include AVX2.
                unsafe { avx2x::cbc_decrypt(&self.rk, iv, blocks) };
                true
            }
            #[cfg(target_arch = "x86_64")]
            Kind::Avx512 => {
                // SAFETY: `Kind::Avx512` is only constructed after checking
                // that the CPU features in use include AVX-512.
                unsafe { avx512x::cbc_decrypt(&self.rk, iv, blocks) };
                true
            }
            _ => {
                let _ = (iv, blocks);
                false
            }
        }
    }

    /// CTR mode in place (a 128-bit big-endian counter, advanced by the
    /// blocks used; a final partial block uses up a whole counter value)
    /// with the counters built in registers and the key stream XORed as it
    /// is stored, if this backend has such a loop (x86-64 SSE2, AVX2 and
    /// AVX-512); returns `false`, leaving everything untouched, otherwise.
    pub fn ctr_apply_fused(&self, ctr: &mut [u8; 16], data: &mut [u8]) -> bool {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            Kind::Simd128 => {
                simd128::ctr(&self.rk, ctr, data);
                true
            }
            #[cfg(target_arch = "x86_64")]
            Kind::Avx2 => {
                // SAFETY: `Kind::Avx2` is only constructed after checking
                // that the CPU features in use include AVX2.
                unsafe { avx2x::ctr(&self.rk, ctr, data) };
                true
            }
            #[cfg(target_arch = "x86_64")]
            Kind::Avx512 => {
                // SAFETY: `Kind::Avx512` is only constructed after checking
                // that the CPU features in use include AVX-512.
                unsafe { avx512x::ctr(&self.rk, ctr, data) };
                true
            }
            _ => {
                let _ = (ctr, data);
                false
            }
        }
    }
}

/// Serpent key schedule: pad the key to 256 bits, expand it with the affine
/// recurrence into 132 prekey words and pass each group of four through
/// S-box `S[(3 - i) mod 8]`.
fn key_schedule(key: &[u8]) -> Result<RoundKeys, InvalidLength> {
    if !(16..=32).contains(&key.len()) {
        return Err(InvalidLength);
    }
    let mut padded = [0u8; 32];
    padded[..key.len()].copy_from_slice(key);
    if key.len() < 32 {
        // Append a single 1 bit after the key's most significant bit.
        padded[key.len()] = 1;
    }

    let mut w = [0u32; 8 + 4 * (ROUNDS + 1)];
    for (dst, src) in w.iter_mut().zip(padded.chunks_exact(4)) {
        *dst = u32::from_le_bytes([src[0], src[1], src[2], src[3]]);
    }
    for i in 0..4 * (ROUNDS + 1) {
        w[i + 8] = (w[i] ^ w[i + 3] ^ w[i + 5] ^ w[i + 7] ^ PHI ^ i as u32).rotate_left(11);
    }

    let mut rk: RoundKeys = [[0; 4]; ROUNDS + 1];
    for (i, k) in rk.iter_mut().enumerate() {
        let p = [w[8 + 4 * i], w[9 + 4 * i], w[10 + 4 * i], w[11 + 4 * i]];
        *k = match (ROUNDS + 3 - i) % 8 {
            0 => s0(p),
            1 => s1(p),
            2 => s2(p),
            3 => s3(p),
            4 => s4(p),
            5 => s5(p),
            6 => s6(p),
            _ => s7(p),
        };
    }
    padded.zeroize();
    w.zeroize();
    Ok(rk)
}

impl KeySizeUser for Serpent {
    type KeySize = U32;
}

impl KeyInit for Serpent {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        match Self::new_from_slice(key) {
            Ok(cipher) => cipher,
            Err(InvalidLength) => unreachable!("a 32-byte key is always valid"),
        }
    }

    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        Ok(Self {
            rk: key_schedule(key)?,
            kind: Kind::detect(),
        })
    }
}

impl BlockSizeUser for Serpent {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Serpent {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        match self.kind {
            Kind::Soft => f.call(&SoftBackend(&self.rk)),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Kind::Simd128 => f.call(&Simd128Backend(&self.rk)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `Kind::Avx2` is only constructed by `Kind::detect` or
            // `Kind::from_name`, after checking
            // that the CPU features in use include AVX2.
            Kind::Avx2 => unsafe { x86::enc_avx2(&self.rk, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `Kind::Avx512` is only constructed by `Kind::detect` or
            // `Kind::from_name`, after checking
            // that the CPU features in use include AVX-512.
            Kind::Avx512 => unsafe { x86::enc_avx512(&self.rk, f) },
        }
    }
}

impl BlockCipherDecrypt for Serpent {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        match self.kind {
            Kind::Soft => f.call(&SoftBackend(&self.rk)),
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Kind::Simd128 => f.call(&Simd128Backend(&self.rk)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `Kind::Avx2` is only constructed by `Kind::detect` or
            // `Kind::from_name`, after checking
            // that the CPU features in use include AVX2.
            Kind::Avx2 => unsafe { x86::dec_avx2(&self.rk, f) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: `Kind::Avx512` is only constructed by `Kind::detect` or
            // `Kind::from_name`, after checking
            // that the CPU features in use include AVX-512.
            Kind::Avx512 => unsafe { x86::dec_avx512(&self.rk, f) },
        }
    }
}

impl AlgorithmName for Serpent {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Serpent")
    }
}

impl fmt::Debug for Serpent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serpent")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

impl Drop for Serpent {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

impl ZeroizeOnDrop for Serpent {}

#[cfg(test)]
mod tests {
    use super::*;
    use ::serpent::Serpent as RefSerpent;
    use hex_literal::hex;

    /// Tiny xorshift64 generator for reproducible test data.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn fill(&mut self, buf: &mut [u8]) {
            for chunk in buf.chunks_mut(8) {
                let r = self.next().to_le_bytes();
                chunk.copy_from_slice(&r[..chunk.len()]);
            }
        }

        fn blocks(&mut self, n: usize) -> Vec<Blk> {
            (0..n)
                .map(|_| {
                    let mut b = Blk::default();
                    self.fill(&mut b);
                    b
                })
                .collect()
        }
    }

    /// One cipher per backend available on this CPU, the detected one first,
    /// the forced portable one last.
    fn all_backends(key: &[u8]) -> Vec<Serpent> {
        let names = Serpent::available_backends();
        assert_eq!(names.last(), Some(&"soft"));
        let detected = Serpent::new_from_slice(key).unwrap();
        assert_eq!(detected.backend(), names[0]);
        assert_eq!(Serpent::new_soft(key).unwrap().backend(), "soft");
        let mut out = vec![detected];
        for name in &names[1..] {
            let c = Serpent::new_with_backend(key, name).unwrap();
            assert_eq!(c.backend(), *name);
            out.push(c);
        }
        out
    }

    /// Check one known answer on every backend, through the single-block path
    /// and through the multi-block path (40 copies: full chunks plus a tail).
    fn check_kat(key: &[u8], pt: &[u8; 16], ct: &[u8; 16]) {
        let pt = Blk::from(*pt);
        let ct = Blk::from(*ct);
        for c in all_backends(key) {
            let name = c.backend();
            let mut b = pt;
            c.encrypt_block(&mut b);
            assert_eq!(b, ct, "{name}: encrypt_block, key {}", hex::encode(key));
            c.decrypt_block(&mut b);
            assert_eq!(b, pt, "{name}: decrypt_block, key {}", hex::encode(key));

            let mut buf = vec![pt; 40];
            c.encrypt_blocks(&mut buf);
            assert!(buf.iter().all(|b| *b == ct), "{name}: encrypt_blocks");
            c.decrypt_blocks(&mut buf);
            assert!(buf.iter().all(|b| *b == pt), "{name}: decrypt_blocks");
        }
    }

    // NESSIE verified test vectors for Serpent, from
    // https://www.cs.technion.ac.il/~biham/Reports/Serpent/Serpent-128-128.verified.test-vectors
    // https://www.cs.technion.ac.il/~biham/Reports/Serpent/Serpent-192-128.verified.test-vectors
    // https://www.cs.technion.ac.il/~biham/Reports/Serpent/Serpent-256-128.verified.test-vectors
    // (the same data ships with the `serpent` crate as tests/data/*.blb).
    // NESSIE writes keys and blocks as byte strings in memory order, which is
    // the convention of the `serpent` crate, libgcrypt and Linux; see
    // `submission_byte_order` for the original submission's reversed order.
    // Entries: (set and vector number, key, plaintext, ciphertext).
    #[allow(clippy::type_complexity)]
    const NESSIE: &[(&str, &[u8], [u8; 16], [u8; 16])] = &[
        // 128-bit keys.
        (
            "128 set 1 #0",
            &hex!("80000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("264e5481eff42a4606abda06c0bfda3d"),
        ),
        (
            "128 set 1 #127",
            &hex!("00000000000000000000000000000001"),
            hex!("00000000000000000000000000000000"),
            hex!("f668c7091f81b2827da77dd419b708e1"),
        ),
        (
            "128 set 2 #0",
            &hex!("00000000000000000000000000000000"),
            hex!("80000000000000000000000000000000"),
            hex!("a3b35de7c358ddd82644678c64b8bcbb"),
        ),
        (
            "128 set 2 #127",
            &hex!("00000000000000000000000000000000"),
            hex!("00000000000000000000000000000001"),
            hex!("9bedcea16bde863526a937208cbf0abc"),
        ),
        (
            "128 set 3 #0",
            &hex!("00000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("3620b17ae6a993d09618b8768266bae9"),
        ),
        (
            "128 set 3 #1",
            &hex!("01010101010101010101010101010101"),
            hex!("01010101010101010101010101010101"),
            hex!("5107e36dbe81d9996d1ef7f3656ffc63"),
        ),
        (
            "128 set 3 #255",
            &hex!("ffffffffffffffffffffffffffffffff"),
            hex!("ffffffffffffffffffffffffffffffff"),
            hex!("2dee675b6b7401367da2a80fb44b8065"),
        ),
        (
            "128 set 4 #0",
            &hex!("000102030405060708090a0b0c0d0e0f"),
            hex!("00112233445566778899aabbccddeeff"),
            hex!("563e2cf8740a27c164804560391e9b27"),
        ),
        (
            "128 set 4 #1",
            &hex!("2bd6459f82c5b300952c49104881ff48"),
            hex!("ea024714ad5c4d84ea024714ad5c4d84"),
            hex!("92d7f8ef2c36c53409f275902f06539f"),
        ),
        // 192-bit keys.
        (
            "192 set 1 #0",
            &hex!("800000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("9e274ead9b737bb21efcfca548602689"),
        ),
        (
            "192 set 1 #191",
            &hex!("000000000000000000000000000000000000000000000001"),
            hex!("00000000000000000000000000000000"),
            hex!("5d058517ac7cc5afd5c33253d4703b46"),
        ),
        (
            "192 set 2 #0",
            &hex!("000000000000000000000000000000000000000000000000"),
            hex!("80000000000000000000000000000000"),
            hex!("23f5f432ad687e0d4574c16459618abb"),
        ),
        (
            "192 set 2 #127",
            &hex!("000000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000001"),
            hex!("497ea15a5aab3cb115c3e0091c2e4047"),
        ),
        (
            "192 set 3 #0",
            &hex!("000000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("a583ef976a292b406bbd5dc8256b0442"),
        ),
        (
            "192 set 3 #1",
            &hex!("010101010101010101010101010101010101010101010101"),
            hex!("01010101010101010101010101010101"),
            hex!("3c30cc53b1408bf333b85dd1c6632a29"),
        ),
        (
            "192 set 3 #255",
            &hex!("ffffffffffffffffffffffffffffffffffffffffffffffff"),
            hex!("ffffffffffffffffffffffffffffffff"),
            hex!("08fc09bd2580a3ffbc8453faf21417c0"),
        ),
        (
            "192 set 4 #0",
            &hex!("000102030405060708090a0b0c0d0e0f1011121314151617"),
            hex!("00112233445566778899aabbccddeeff"),
            hex!("6ab816c82de53b93005008afa2246a02"),
        ),
        (
            "192 set 4 #1",
            &hex!("2bd6459f82c5b300952c49104881ff482bd6459f82c5b300"),
            hex!("ea024714ad5c4d84ea024714ad5c4d84"),
            hex!("827b18c2678a239dfc5512842000e204"),
        ),
        // 256-bit keys.
        (
            "256 set 1 #0",
            &hex!("8000000000000000000000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("a223aa1288463c0e2be38ebd825616c0"),
        ),
        (
            "256 set 1 #255",
            &hex!("0000000000000000000000000000000000000000000000000000000000000001"),
            hex!("00000000000000000000000000000000"),
            hex!("9858fd31c9c6b54ac0c99cc52324ed34"),
        ),
        (
            "256 set 2 #0",
            &hex!("0000000000000000000000000000000000000000000000000000000000000000"),
            hex!("80000000000000000000000000000000"),
            hex!("8314675e8ad5c3ecd83d852bcf7f566e"),
        ),
        (
            "256 set 2 #127",
            &hex!("0000000000000000000000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000001"),
            hex!("ad86de83231c3203a86ae33b721eaa9f"),
        ),
        (
            "256 set 3 #0",
            &hex!("0000000000000000000000000000000000000000000000000000000000000000"),
            hex!("00000000000000000000000000000000"),
            hex!("49672ba898d98df95019180445491089"),
        ),
        (
            "256 set 3 #1",
            &hex!("0101010101010101010101010101010101010101010101010101010101010101"),
            hex!("01010101010101010101010101010101"),
            hex!("ec9723b15b2a6489f84c4524fffc2748"),
        ),
        (
            "256 set 3 #255",
            &hex!("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
            hex!("ffffffffffffffffffffffffffffffff"),
            hex!("6ac7579d9377845a816ca6d758f3feff"),
        ),
        (
            "256 set 4 #0",
            &hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
            hex!("00112233445566778899aabbccddeeff"),
            hex!("2868b7a2d28ecd5e4fdefac3c4330074"),
        ),
        (
            "256 set 4 #1",
            &hex!("2bd6459f82c5b300952c49104881ff482bd6459f82c5b300952c49104881ff48"),
            hex!("ea024714ad5c4d84ea024714ad5c4d84"),
            hex!("3e507730776b93fdea661235e1dd99f0"),
        ),
    ];

    /// [`Serpent::cbc_encrypt`] (the rows' CBC encryption) against the
    /// generic CBC of [`crate::modes::BlockModes`] over the `serpent` crate:
    /// random keys of 16 to 32 bytes, IVs and lengths (0 to 40 blocks), one
    /// call or split in two calls that must chain.
    /// The fused CBC decryption and CTR loops against the reference crate
    /// one block at a time: every backend that has them, lengths around the
    /// group sizes, two chained calls (the IV and counter carried over),
    /// counters whose low 32 bits or all 128 bits wrap inside a group.
    #[test]
    fn fused_cbc_decrypt_and_ctr_match_reference() {
        let mut rng = XorShift(0x5E4F_3E2D_1C0B_0A99);
        let mut fused_seen = 0;
        for iter in 0..60 {
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let reference = RefSerpent::new_from_slice(&key).unwrap();
            let enc = |b: [u8; 16]| {
                let mut blk = b.into();
                BlockCipherEncrypt::encrypt_block(&reference, &mut blk);
                <[u8; 16]>::from(blk)
            };
            let dec = |b: [u8; 16]| {
                let mut blk = b.into();
                BlockCipherDecrypt::decrypt_block(&reference, &mut blk);
                <[u8; 16]>::from(blk)
            };
            let blocks = rng.below(70);
            let split = rng.below(blocks + 1);
            let mut data = vec![0u8; 16 * blocks];
            rng.fill(&mut data);
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            let mut want = data.clone();
            let mut prev = iv;
            for (w, c) in want.chunks_exact_mut(16).zip(data.chunks_exact(16)) {
                let p = dec(c.try_into().unwrap());
                for k in 0..16 {
                    w[k] = p[k] ^ prev[k];
                }
                prev = c.try_into().unwrap();
            }
            let mut ctr = [0u8; 16];
            rng.fill(&mut ctr);
            match iter % 4 {
                0 => ctr[12..].copy_from_slice(&(u32::MAX - rng.below(20) as u32).to_be_bytes()),
                1 => ctr = (u128::MAX - rng.below(20) as u128).to_be_bytes(),
                _ => {}
            }
            let bytes = 16 * blocks + rng.below(16);
            let mut ctr_data = vec![0u8; bytes];
            rng.fill(&mut ctr_data);
            let mut ctr_want = ctr_data.clone();
            let c0 = u128::from_be_bytes(ctr);
            for (i, chunk) in ctr_want.chunks_mut(16).enumerate() {
                let ks = enc(c0.wrapping_add(i as u128).to_be_bytes());
                for (d, k) in chunk.iter_mut().zip(ks) {
                    *d ^= k;
                }
            }
            let ctr_end = c0.wrapping_add(bytes.div_ceil(16) as u128).to_be_bytes();
            let ctr_split = (16 * split).min(bytes);
            for cipher in all_backends(&key) {
                let mut got = data.clone();
                let mut iv2 = iv;
                let (a, b) = got.split_at_mut(16 * split);
                if !cipher.cbc_decrypt_fused(&mut iv2, a) {
                    assert_eq!((got, iv2), (data.clone(), iv), "{}", cipher.backend());
                    continue;
                }
                fused_seen += 1;
                assert!(cipher.cbc_decrypt_fused(&mut iv2, b));
                assert_eq!(got, want, "cbc {} blocks {blocks}", cipher.backend());
                assert_eq!(iv2, prev, "cbc iv {}", cipher.backend());
                let mut got = ctr_data.clone();
                let mut c = ctr;
                let (a, b) = got.split_at_mut(ctr_split);
                assert!(cipher.ctr_apply_fused(&mut c, a));
                assert!(cipher.ctr_apply_fused(&mut c, b));
                assert_eq!(got, ctr_want, "ctr {} bytes {bytes}", cipher.backend());
                assert_eq!(c, ctr_end, "ctr counter {}", cipher.backend());
            }
        }
        assert!(cfg!(not(target_arch = "x86_64")) || fused_seen > 0);
    }

    #[test]
    fn cbc_encrypt_matches_generic_cbc() {
        crate::ciphers::test_support::check_cbc_encrypt(
            400,
            |rng, _| 16 + rng.below(17),
            |key| Serpent::new_from_slice(key).unwrap(),
            Serpent::cbc_encrypt,
            |key| RefSerpent::new_from_slice(key).unwrap(),
        );
    }

    /// The depth-4 S-boxes of the CBC encryption path (`sbox_depth.rs`)
    /// against Osvik's, on random words (every bit position an input), and
    /// the keyed LT against LT then the key.
    #[test]
    fn chained_rounds_match_the_plain_ones() {
        type Sbox = fn([u32; 4]) -> [u32; 4];
        let pairs: [(Sbox, Sbox); 8] = [
            (s0, s0_d),
            (s1, s1_d),
            (s2, s2_d),
            (s3, s3_d),
            (s4, s4_d),
            (s5, s5_d),
            (s6, s6_d),
            (s7, s7_d),
        ];
        let mut rng = XorShift(0x5e4b_e47d_d3b7);
        for _ in 0..2000 {
            let x = [0; 4].map(|_: u32| rng.next() as u32);
            let k = [0; 4].map(|_: u32| rng.next() as u32);
            for (i, (plain, deep)) in pairs.iter().enumerate() {
                assert_eq!(plain(x), deep(x), "S{i} on {x:08x?}");
            }
            assert_eq!(lt_then_key(x, &k), xor_key(lt(x), &k), "LT on {x:08x?}");
        }
    }

    #[test]
    #[should_panic(expected = "multiple of the block size")]
    fn cbc_encrypt_rejects_partial_blocks() {
        let c = Serpent::new_from_slice(&[1u8; 16]).unwrap();
        c.cbc_encrypt(&mut [0u8; 16], &mut [0u8; 17]);
    }

    #[test]
    fn nessie_vectors() {
        for (name, key, pt, ct) in NESSIE {
            eprintln!("{name}");
            check_kat(key, pt, ct);
        }
    }

    /// NESSIE set 4 "Iterated 100 times" / "Iterated 1000 times" values:
    /// the plaintext encrypted 100 and 1000 times in a row (same files).
    #[test]
    fn nessie_iterated() {
        #[allow(clippy::type_complexity)]
        const ITERATED: &[(&[u8], [u8; 16], [u8; 16], [u8; 16])] = &[
            (
                &hex!("000102030405060708090a0b0c0d0e0f"),
                hex!("00112233445566778899aabbccddeeff"),
                hex!("70795d35dec6561f8ad83b2f454f9cc5"),
                hex!("4ea3765a7c3a94786850df4812249718"),
            ),
            (
                &hex!("2bd6459f82c5b300952c49104881ff48"),
                hex!("ea024714ad5c4d84ea024714ad5c4d84"),
                hex!("180b795ead8c6cb128348093a7e8e442"),
                hex!("c5f9e521f5fc7d9bb0c4674c48525460"),
            ),
            (
                &hex!("000102030405060708090a0b0c0d0e0f1011121314151617"),
                hex!("00112233445566778899aabbccddeeff"),
                hex!("d8789291a6307a1dfcfb310cb5cee8e1"),
                hex!("d4d1005991acf56fdd6c45ed867cd679"),
            ),
            (
                &hex!("2bd6459f82c5b300952c49104881ff482bd6459f82c5b300"),
                hex!("ea024714ad5c4d84ea024714ad5c4d84"),
                hex!("696e45b38a8181d1b07f1d311a6f4cfe"),
                hex!("7ecd356d2be7b1fb7971a1a94bc7be49"),
            ),
            (
                &hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
                hex!("00112233445566778899aabbccddeeff"),
                hex!("8bf56992354f3f1a0f4e49dcba82cbc0"),
                hex!("9b1d8b34845df9bfd36aaad0cda1c8fe"),
            ),
            (
                &hex!("2bd6459f82c5b300952c49104881ff482bd6459f82c5b300952c49104881ff48"),
                hex!("ea024714ad5c4d84ea024714ad5c4d84"),
                hex!("3b5462e5d87a40c4be745e3994d5e373"),
                hex!("99d5d067ef7c787e6a764eb47dac59ad"),
            ),
        ];
        for (key, pt, it100, it1000) in ITERATED {
            for c in all_backends(key) {
                // 33 copies: every lane of the widest backend plus a tail.
                let mut buf = vec![Blk::from(*pt); 33];
                let mut single = Blk::from(*pt);
                for i in 1..=1000 {
                    c.encrypt_blocks(&mut buf);
                    c.encrypt_block(&mut single);
                    let want = match i {
                        100 => it100,
                        1000 => it1000,
                        _ => continue,
                    };
                    assert_eq!(single, Blk::from(*want), "{}: {i} times", c.backend());
                    assert!(buf.iter().all(|b| b == want), "{}: {i} times", c.backend());
                }
                for _ in 0..1000 {
                    c.decrypt_blocks(&mut buf);
                }
                assert!(buf.iter().all(|b| b == pt), "{}: decrypt", c.backend());
            }
        }
    }

    /// The original AES submission's files (ecb_vk.txt and friends, in the
    /// Serpent package at https://www.cl.cam.ac.uk/~rja14/serpent.html) print
    /// keys and blocks as big hexadecimal numbers: their byte order is the
    /// reverse of NESSIE's.  Vector "vk I=1" of ecb_vk.txt for each key size,
    /// reversed into our convention.
    #[test]
    fn submission_byte_order() {
        fn rev<const L: usize>(mut b: [u8; L]) -> [u8; L] {
            b.reverse();
            b
        }
        check_kat(
            &rev(hex!("80000000000000000000000000000000")),
            &[0; 16],
            &rev(hex!("49afbfad9d5a34052cd8ffa5986bd2dd")),
        );
    }

    /// Random keys of every accepted length and random buffers of awkward
    /// lengths, against the `serpent` crate, on every backend, in place and
    /// buffer to buffer, both directions.
    #[test]
    fn cross_check_random() {
        const LENS: [usize; 20] = [
            1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 97, 100,
        ];
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut key = [0u8; 32];
        for iter in 0..3000 {
            let key_len = match iter % 4 {
                0 => 16,
                1 => 24,
                2 => 32,
                _ => 16 + rng.below(17),
            };
            let key = &mut key[..key_len];
            rng.fill(key);
            let n = LENS[rng.below(LENS.len())];
            let pt = rng.blocks(n);

            let reference = RefSerpent::new_from_slice(key).unwrap();
            let ct: Vec<Blk> = pt
                .iter()
                .map(|b| {
                    let mut b = *b;
                    BlockCipherEncrypt::encrypt_block(&reference, &mut b);
                    b
                })
                .collect();

            for c in all_backends(key) {
                let ctx = || format!("{} key {} n {n}", c.backend(), hex::encode(&key));

                let mut buf = pt.clone();
                c.encrypt_blocks(&mut buf);
                assert!(buf == ct, "encrypt_blocks {}", ctx());
                c.decrypt_blocks(&mut buf);
                assert!(buf == pt, "decrypt_blocks {}", ctx());

                let mut out = vec![Blk::default(); n];
                c.encrypt_blocks_b2b(&pt, &mut out).unwrap();
                assert!(out == ct, "encrypt_blocks_b2b {}", ctx());
                c.decrypt_blocks_b2b(&ct, &mut out).unwrap();
                assert!(out == pt, "decrypt_blocks_b2b {}", ctx());

                let mut one = pt[0];
                c.encrypt_block(&mut one);
                assert_eq!(one, ct[0], "encrypt_block {}", ctx());
                c.decrypt_block(&mut one);
                assert_eq!(one, pt[0], "decrypt_block {}", ctx());
            }
        }
    }

    /// Every buffer length from 0 to 100 blocks: all chunk/tail splits of
    /// every backend.
    #[test]
    fn every_length() {
        let mut rng = XorShift(0x0123_4567_89ab_cdef);
        for key_len in [16, 24, 32] {
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let reference = RefSerpent::new_from_slice(&key).unwrap();
            let ciphers = all_backends(&key);
            for n in 0..=100 {
                let pt = rng.blocks(n);
                let mut ct = pt.clone();
                for b in &mut ct {
                    BlockCipherEncrypt::encrypt_block(&reference, b);
                }
                for c in &ciphers {
                    let mut buf = pt.clone();
                    c.encrypt_blocks(&mut buf);
                    assert!(buf == ct, "{} encrypt n {n}", c.backend());
                    c.decrypt_blocks(&mut buf);
                    assert!(buf == pt, "{} decrypt n {n}", c.backend());
                }
            }
        }
    }

    #[test]
    fn key_lengths() {
        for len in [0, 1, 8, 15, 33, 48, 64] {
            let key = vec![0u8; len];
            assert!(Serpent::new_from_slice(&key).is_err(), "length {len}");
            assert!(Serpent::new_soft(&key).is_err(), "length {len}");
            assert!(Serpent::new_with_backend(&key, "soft").is_none());
        }
        for len in 16..=32 {
            let key = vec![0x5au8; len];
            assert!(Serpent::new_from_slice(&key).is_ok(), "length {len}");
        }
        // `new` takes exactly 32 bytes and agrees with `new_from_slice`.
        let key = Key::<Serpent>::from([7u8; 32]);
        let a = Serpent::new(&key);
        let b = Serpent::new_from_slice(&[7u8; 32]).unwrap();
        assert_eq!(a.rk, b.rk);
        assert!(Serpent::new_with_backend(&[0; 16], "sse9").is_none());
    }

    /// The widest backend the CPU supports is selected, and every supported
    /// backend is listed (so that the other tests exercise all of them).
    #[test]
    fn backend_detection() {
        let c = Serpent::new_from_slice(&[0; 32]).unwrap();
        let f = crate::cpu::features();
        #[cfg(target_arch = "x86_64")]
        let want: &[&str] = match (f.avx512, f.avx2) {
            (true, _) => &["avx512", "avx2", "sse2", "soft"],
            (false, true) => &["avx2", "sse2", "soft"],
            (false, false) => &["sse2", "soft"],
        };
        #[cfg(target_arch = "aarch64")]
        let want: &[&str] = if f.neon { &["neon", "soft"] } else { &["soft"] };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let want: &[&str] = &["soft"];
        let _ = f;
        assert_eq!(Serpent::available_backends(), want);
        assert_eq!(c.backend(), want[0]);
        for name in want {
            let c = Serpent::new_with_backend(&[0; 32], name).unwrap();
            assert_eq!(c.backend(), *name);
        }
    }

    #[test]
    fn names_and_debug() {
        struct Name;
        impl fmt::Display for Name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                Serpent::write_alg_name(f)
            }
        }
        assert_eq!(Name.to_string(), "Serpent");
        let c = Serpent::new_soft(&[0xab; 32]).unwrap();
        let dbg = format!("{c:?}");
        assert_eq!(dbg, r#"Serpent { backend: "soft", .. }"#);
    }
}
