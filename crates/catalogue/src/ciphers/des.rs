//! Table-driven DES and Triple-DES (EDE3).
//!
//! # Why this exists
//!
//! The RustCrypto [`des`](https://docs.rs/des) 0.9 crate evaluates the
//! expansion `E`, the S-boxes and the permutation `P` of every round with
//! bit-level shifts and masks on a `u64`, one block at a time, and runs
//! Triple-DES as three complete DES calls (each with its own initial and
//! final permutation). On the benchmark machine (one AMD EPYC Zen 5 core,
//! 1 MiB buffers, ECB) that gives about 47 MiB/s for DES and 15 MiB/s for
//! Triple-DES, against about 119 and 48 MiB/s for libgcrypt and 103 and
//! 37 MiB/s for OpenSSL, so a cipher benchmark would report DES as about
//! three times slower than it is. This module runs at about 270 MiB/s (DES)
//! and 100 MiB/s (Triple-DES) on the same machine, and about 100 and
//! 40 MiB/s one block at a time (CBC encryption).
//!
//! This module implements the classic fast software technique (as in
//! R. Outerbridge's `d3des`, OpenSSL's `des_enc.c` and libgcrypt's
//! `des-amd64.S`):
//!
//! * the halves are kept rotated left by one bit and *expanded*: the eight
//!   6-bit groups of `E(R)` sit one per byte of a `u64` ([`expand`]; the
//!   expansion is linear, so rounds XOR expanded values into an expanded
//!   half and never expand again);
//! * the S-boxes, the permutation `P` and the expansion are folded into
//!   eight `u64` tables (`SPX`), one per byte of the expanded half, so a
//!   round is one key XOR and eight lookups XORed into the other half;
//! * the initial and final permutations are five "swap-and-mask" steps
//!   (`PERM_OP`) each, done once per block: Triple-DES (EDE3: encrypt with
//!   `K1`, decrypt with `K2`, encrypt with `K3`) runs 48 rounds between them,
//!   since `IP(FP(x)) = x` between the stages;
//! * the key schedule is precomputed into round keys in the expanded
//!   layout, once in encryption and once in decryption order.
//!
//! Bulk data (ECB, CBC decryption and CTR through [`crate::modes::block64`])
//! goes through the bitsliced rounds of [`super::des_bitslice`] where the CPU
//! has SIMD registers (AVX2, SSE2, NEON), hundreds of blocks at once; what
//! is left over (fewer blocks than a batch) and CPUs without them take the
//! table rounds [`PAR_BLOCKS`] blocks at a time, interleaved so that the
//! lookups of independent blocks overlap (each round's eight lookups go into
//! two chains of four). The single-block path (CBC encryption) is one long
//! dependency chain: its lookups are combined as a tree shaped for the
//! order they arrive in, the round key goes in off the chain, and in CBC
//! the chaining value stays after `IP`, so that `FP` of one block and `IP`
//! of the next run beside the chain instead of on it.
//!
//! The algorithm follows FIPS PUB 46-3, *Data Encryption Standard (DES)*
//! (withdrawn 2005), and NIST SP 800-67 Rev. 2, *Recommendation for the
//! Triple Data Encryption Algorithm (TDEA) Block Cipher* (withdrawn 2024).
//! All tables below are computed at compile time from the tables printed in
//! FIPS 46-3. The output is bit-for-bit identical to the `des` crate
//! (checked by the tests against it and against published known-answer
//! vectors), and the types implement the same `cipher` 0.5 traits.
//!
//! DES (56-bit key) is broken by exhaustive search and Triple-DES has a
//! 64-bit block (Sweet32); both exist here for measuring and legacy data
//! only. Like every table-driven DES, lookups are indexed by secret data,
//! so this is not constant-time with respect to cache-timing side channels.

use core::fmt;

use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InOutBuf, InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
    consts::{U8, U24},
};
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::des_bitslice::{BsKeys, crypt_batch};
use super::opaque;
use crate::dispatch::DesImpl;
use crate::modes::Kernel64;

/// Number of blocks the multi-block path processes interleaved.
pub const PAR_BLOCKS: usize = 4;

/// `ParBlocksSize` of the backends; must equal [`PAR_BLOCKS`].
type ParSize = cipher::consts::U4;

// ---------------------------------------------------------------------------
// FIPS 46-3 tables (1-based bit numbers, bit 1 = most significant).
// ---------------------------------------------------------------------------

/// Permuted choice 1 (FIPS 46-3, "Key Schedule Calculation").
const PC1: [u8; 56] = [
    57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18, 10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60,
    52, 44, 36, 63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6, 61, 53, 45, 37, 29,
    21, 13, 5, 28, 20, 12, 4,
];

/// Permuted choice 2.
const PC2: [u8; 48] = [
    14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2, 41, 52,
    31, 37, 47, 55, 30, 40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
];

/// Left shifts of `C` and `D` before each round.
const SHIFTS: [u8; 16] = [1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1];

/// The initial permutation `IP`: output bit `i + 1` is input bit `IP[i]`.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64", test)),
    allow(dead_code)
)]
pub(super) const IP_TABLE: [u8; 64] = [
    58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4, 62, 54, 46, 38, 30, 22, 14, 6,
    64, 56, 48, 40, 32, 24, 16, 8, 57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3, 61,
    53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7,
];

/// The expansion `E`: output bit `i + 1` is bit `E[i]` of the right half.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64", test)),
    allow(dead_code)
)]
pub(super) const E_TABLE: [u8; 48] = [
    32, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 8, 9, 10, 11, 12, 13, 12, 13, 14, 15, 16, 17, 16, 17, 18,
    19, 20, 21, 20, 21, 22, 23, 24, 25, 24, 25, 26, 27, 28, 29, 28, 29, 30, 31, 32, 1,
];

/// The permutation `P` of the cipher function `f`.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64", test)),
    allow(dead_code)
)]
pub(super) const P_TABLE: [u8; 32] = P;

/// The permutation `P` of the cipher function `f`.
const P: [u8; 32] = [
    16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10, 2, 8, 24, 14, 32, 27, 3, 9, 19,
    13, 30, 6, 22, 11, 4, 25,
];

/// The S-boxes `S1..S8`, as printed: `S[i][row][column]`, where the row is
/// the first and last of the six input bits and the column the middle four.
const S: [[[u8; 16]; 4]; 8] = [
    [
        [14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7],
        [0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8],
        [4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0],
        [15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13],
    ],
    [
        [15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10],
        [3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5],
        [0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15],
        [13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9],
    ],
    [
        [10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8],
        [13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1],
        [13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7],
        [1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12],
    ],
    [
        [7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15],
        [13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9],
        [10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4],
        [3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14],
    ],
    [
        [2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9],
        [14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6],
        [4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14],
        [11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3],
    ],
    [
        [12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11],
        [10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8],
        [9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6],
        [4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13],
    ],
    [
        [4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1],
        [13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6],
        [1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2],
        [6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12],
    ],
    [
        [13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7],
        [1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2],
        [7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8],
        [2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11],
    ],
];

// ---------------------------------------------------------------------------
// Derived tables.
// ---------------------------------------------------------------------------

/// Applies a bit permutation table: output bit `j` (1-based, from the most
/// significant of `out_bits`) is input bit `table[j - 1]` (1-based, from the
/// most significant of `in_bits`).
const fn permute(x: u64, in_bits: u32, table: &[u8]) -> u64 {
    let mut out = 0u64;
    let mut j = 0;
    while j < table.len() {
        let bit = (x >> (in_bits - table[j] as u32)) & 1;
        out = (out << 1) | bit;
        j += 1;
    }
    out
}

/// `SP[i][v]`: S-box `i + 1` applied to the 6-bit group `v` (first input
/// bit most significant), placed at its nibble of the 32-bit output of the
/// S-box layer, permuted by `P`, and rotated left by one bit (the rotated
/// representation the rounds work in).
const SP: [[u32; 64]; 8] = {
    let mut t = [[0u32; 64]; 8];
    let mut i = 0;
    while i < 8 {
        let mut v = 0;
        while v < 64 {
            let row = ((v >> 4) & 2) | (v & 1);
            let col = (v >> 1) & 0xF;
            let s = S[i][row][col] as u64;
            let p = permute(s << (28 - 4 * i), 32, &P) as u32;
            t[i][v] = p.rotate_left(1);
            v += 1;
        }
        i += 1;
    }
    t
};

/// The 6-bit groups of an expanded half (see [`expand`]).
const EXPANDED: u64 = 0x3F3F_3F3F_3F3F_3F3F;

/// Expands a rotated half `x` to the eight 6-bit groups of `E`, one per
/// byte: bytes 0 to 3 hold the groups 8, 6, 4, 2 (`x` masked), bytes 4 to 7
/// the groups 7, 5, 3, 1 (`x` rotated right by 4, masked). Every bit of `x`
/// is kept (the two masks cover complementary nibble halves), so
/// [`compress`] undoes it, and it commutes with XOR, so the rounds can XOR
/// expanded values into an expanded half and never expand again.
#[inline(always)]
const fn expand(x: u32) -> u64 {
    ((x.rotate_right(4) as u64) << 32 | x as u64) & EXPANDED
}

/// The inverse of [`expand`].
#[inline(always)]
const fn compress(y: u64) -> u32 {
    (y as u32) | ((y >> 32) as u32).rotate_left(4)
}

/// Which S-box reads byte `j` of an expanded half.
pub(super) const SBOX_OF_BYTE: [usize; 8] = [7, 5, 3, 1, 6, 4, 2, 0];

/// `SPX[j][v]`: the S-box of byte `j` (see [`SBOX_OF_BYTE`]) followed by `P`,
/// on the 6-bit group `v`, expanded: one round is eight lookups XORed into
/// the other expanded half. Entries 64 to 255 are never read (the bytes of an
/// expanded half are below 64); they make any `u8` a valid index, so the
/// lookups need neither masks nor bounds checks.
static SPX: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut j = 0;
    while j < 8 {
        let mut v = 0;
        while v < 64 {
            t[j][v] = expand(SP[SBOX_OF_BYTE[j]][v]);
            v += 1;
        }
        j += 1;
    }
    t
};

// ---------------------------------------------------------------------------
// Key schedule.
// ---------------------------------------------------------------------------

/// Round keys of one DES key in encryption order, in the layout of an
/// expanded half (see [`expand`]): byte `j` of round key `r` holds the 6-bit
/// group of `K_r` that byte `j` of the expanded right half meets.
fn key_schedule(key: &[u8]) -> [u64; 16] {
    let mut key: [u8; 8] = key.try_into().expect("8-byte DES key");
    let mut cd = permute(u64::from_be_bytes(key), 64, &PC1);
    key.zeroize();
    let mut c = (cd >> 28) as u32;
    let mut d = (cd & 0x0FFF_FFFF) as u32;
    let mut ks = [0u64; 16];
    for (r, &shift) in SHIFTS.iter().enumerate() {
        c = ((c << shift) | (c >> (28 - shift))) & 0x0FFF_FFFF;
        d = ((d << shift) | (d >> (28 - shift))) & 0x0FFF_FFFF;
        cd = (u64::from(c) << 28) | u64::from(d);
        let mut k = permute(cd, 56, &PC2);
        let g = |n: u32| (k >> (42 - 6 * n)) & 0x3F;
        // Groups 8, 6, 4, 2 in bytes 0..4, groups 7, 5, 3, 1 in bytes 4..8.
        ks[r] = g(7)
            | (g(5) << 8)
            | (g(3) << 16)
            | (g(1) << 24)
            | (g(6) << 32)
            | (g(4) << 40)
            | (g(2) << 48)
            | (g(0) << 56);
        k.zeroize();
    }
    cd.zeroize();
    c.zeroize();
    d.zeroize();
    ks
}

/// The same round keys in decryption (reverse round) order.
fn reverse_schedule(ks: &[u64; 16]) -> [u64; 16] {
    let mut out = *ks;
    out.reverse();
    out
}

// ---------------------------------------------------------------------------
// The rounds.
// ---------------------------------------------------------------------------

/// Swaps the bits of `a` selected by `mask << n` with the bits of `b`
/// selected by `mask` (`PERM_OP` of the classic implementations).
#[inline(always)]
fn perm_op(a: &mut u32, b: &mut u32, n: u32, mask: u32) {
    let t = ((*a >> n) ^ *b) & mask;
    *b ^= t;
    *a ^= t << n;
}

/// Initial permutation `IP` of the block `(hi, lo)` (big-endian halves).
/// Returns `(L0, R0)`, each rotated left by one bit.
#[inline(always)]
fn ip(mut l: u32, mut r: u32) -> (u32, u32) {
    perm_op(&mut l, &mut r, 4, 0x0F0F_0F0F);
    perm_op(&mut l, &mut r, 16, 0x0000_FFFF);
    perm_op(&mut r, &mut l, 2, 0x3333_3333);
    perm_op(&mut r, &mut l, 8, 0x00FF_00FF);
    r = r.rotate_left(1);
    let t = (l ^ r) & 0xAAAA_AAAA;
    l ^= t;
    r ^= t;
    (l.rotate_left(1), r)
}

/// Final permutation `IP^-1`, the exact inverse of [`ip`]: takes the
/// pre-output `(R16, L16)` (rotated left by one bit) and returns the
/// big-endian halves of the output block.
#[inline(always)]
fn fp(mut l: u32, mut r: u32) -> (u32, u32) {
    l = l.rotate_right(1);
    let t = (l ^ r) & 0xAAAA_AAAA;
    l ^= t;
    r ^= t;
    r = r.rotate_right(1);
    perm_op(&mut r, &mut l, 8, 0x00FF_00FF);
    perm_op(&mut r, &mut l, 2, 0x3333_3333);
    perm_op(&mut l, &mut r, 16, 0x0000_FFFF);
    perm_op(&mut l, &mut r, 4, 0x0F0F_0F0F);
    (l, r)
}

/// Byte `j` of `w` as a table index.
#[inline(always)]
fn byte(w: u64, j: u32) -> usize {
    usize::from((w >> (8 * j)) as u8)
}

/// The lookup of byte `j` of `w`.
#[inline(always)]
fn sp(w: u64, j: u32) -> u64 {
    SPX[j as usize][byte(w, j)]
}

/// The cipher function `f` on `w`, the expanded right half XOR the round
/// key, for the interleaved path: the eight lookups in two groups of four,
/// each a chain of OR instructions with memory operands, added together.
/// OR and addition equal XOR here because the eight tables have pairwise
/// disjoint output bits (`P` is a permutation, each S-box feeds its own four
/// bits, and [`expand`] keeps them apart); written with XOR, the compiler
/// makes one chain of eight, twice as long.
#[inline(always)]
fn f(w: u64) -> u64 {
    let lo = (sp(w, 0) | sp(w, 1)) | (sp(w, 2) | sp(w, 3));
    let hi = (sp(w, 4) | sp(w, 5)) | (sp(w, 6) | sp(w, 7));
    lo.wrapping_add(hi)
}

/// `h ^ f(w)` for a single block, whose rounds are one long dependency
/// chain: a tree shaped for the times the lookups arrive. Bytes 0 and 1
/// (a zero extension), 3 and 7 (one shift) and 2 (a shift and a mask into a
/// byte offset, whose load needs no scaling) are ready first, `h` long
/// before; bytes 4 to 6 take a shift and a zero extension, so their lookups
/// come last and meet the rest one or two XORs before the end. `opaque`
/// keeps the compiler from re-linearising the tree.
#[inline(always)]
fn f_latency(w: u64, h: u64) -> u64 {
    let a = opaque(sp(w, 0) ^ sp(w, 1));
    let b = opaque(h ^ sp(w, 7));
    let c = opaque(sp(w, 2) ^ sp(w, 3));
    let d = opaque(sp(w, 4) ^ sp(w, 5));
    opaque(opaque(opaque(a ^ b) ^ c) ^ opaque(d ^ sp(w, 6)))
}

/// Initial permutation of a block (`u64::from_be_bytes`), expanded.
#[inline(always)]
fn ip_expand(x: u64) -> (u64, u64) {
    let (l, r) = ip((x >> 32) as u32, x as u32);
    (expand(l), expand(r))
}

/// Final permutation of the expanded pre-output `(a, b)`.
#[inline(always)]
fn compress_fp(a: u64, b: u64) -> u64 {
    let (hi, lo) = fp(compress(a), compress(b));
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The 16 rounds of one DES stage on one block: `a ^= f(b ^ k0)`,
/// `b ^= f(a ^ k1)`, and so on. Written for latency: the next round's input
/// `h ^ f ^ k` is formed as `f_latency(w, h ^ k)` (the key goes in off the
/// chain), and the half itself is recovered from it off the chain too.
#[inline(always)]
fn stage1(k: &[u64; 16], a: &mut u64, b: &mut u64) {
    let mut w = *b ^ k[0];
    for i in 0..7 {
        w = f_latency(w, *a ^ k[2 * i + 1]);
        *a = w ^ k[2 * i + 1];
        w = f_latency(w, *b ^ k[2 * i + 2]);
        *b = w ^ k[2 * i + 2];
    }
    w = f_latency(w, *a ^ k[15]);
    *a = w ^ k[15];
    *b = f_latency(w, *b);
}

/// The 16 rounds of one DES stage on `N` blocks, interleaved.
#[inline(always)]
fn stage_par<const N: usize>(k: &[u64; 16], a: &mut [u64; N], b: &mut [u64; N]) {
    for k in k.as_chunks::<2>().0 {
        for i in 0..N {
            a[i] ^= f(b[i] ^ k[0]);
        }
        for i in 0..N {
            b[i] ^= f(a[i] ^ k[1]);
        }
    }
}

/// The rounds of `S` DES stages on the expanded halves `(l, r)` after
/// `IP`; returns the pre-output for `FP`. Between two stages no `FP` and
/// `IP` are needed (`IP(FP(x)) = x`), only the halves trade roles.
#[inline(always)]
fn rounds1<const S: usize>(ks: &[[u64; 16]; S], mut l: u64, mut r: u64) -> (u64, u64) {
    for (s, k) in ks.iter().enumerate() {
        if s % 2 == 0 {
            stage1(k, &mut l, &mut r);
        } else {
            stage1(k, &mut r, &mut l);
        }
    }
    if S % 2 == 1 { (r, l) } else { (l, r) }
}

/// One block through `S` DES stages (`IP` once, `16 S` rounds, `FP` once).
#[inline(always)]
fn crypt1<const S: usize>(ks: &[[u64; 16]; S], x: u64) -> u64 {
    let (l, r) = ip_expand(x);
    let (a, b) = rounds1(ks, l, r);
    compress_fp(a, b)
}

/// `N` blocks through `S` DES stages, the rounds of the blocks interleaved.
#[inline(always)]
fn crypt_par<const N: usize, const S: usize>(ks: &[[u64; 16]; S], x: &mut [u64; N]) {
    let mut l = [0u64; N];
    let mut r = [0u64; N];
    for i in 0..N {
        (l[i], r[i]) = ip_expand(x[i]);
    }
    let mut s = 0;
    while s + 1 < S {
        stage_par(&ks[s], &mut l, &mut r);
        stage_par(&ks[s + 1], &mut r, &mut l);
        s += 2;
    }
    if s < S {
        stage_par(&ks[s], &mut l, &mut r);
    }
    for i in 0..N {
        x[i] = if S % 2 == 1 {
            compress_fp(r[i], l[i])
        } else {
            compress_fp(l[i], r[i])
        };
    }
}

/// CBC encryption through `S` DES stages. The chaining value stays in the
/// permuted, expanded domain: the next block's input after `IP` is
/// `IP(P) ^ IP(C)`, and `IP(C) = IP(FP(pre-output))` is the pre-output
/// itself, so the chain is two XORs per block instead of `FP`, `IP` and the
/// expansion; `FP` of each ciphertext block and `IP` of the next plaintext
/// block run beside the chain.
#[inline(always)]
fn cbc_encrypt1<const S: usize>(ks: &[[u64; 16]; S], iv: u64, blocks: &mut [[u8; 8]]) -> u64 {
    let (mut a, mut b) = ip_expand(iv);
    for blk in blocks {
        let (pl, pr) = ip_expand(u64::from_be_bytes(*blk));
        (a, b) = rounds1(ks, pl ^ a, pr ^ b);
        *blk = compress_fp(a, b).to_be_bytes();
    }
    compress_fp(a, b)
}

/// Splits a block into big-endian halves.
#[inline(always)]
fn load(block: &Block<Des>) -> u64 {
    u64::from_be_bytes((*block).into())
}

/// Writes big-endian halves into a block.
#[inline(always)]
fn store(block: &mut Block<Des>, x: u64) {
    *block = x.to_be_bytes().into();
}

// ---------------------------------------------------------------------------
// Backend shared by DES and Triple-DES, encryption and decryption (which
// differ only in the round-key array).
// ---------------------------------------------------------------------------

/// A block backend running `S` DES stages of a precomputed schedule
/// (one for DES, three for Triple-DES) in the order given.
struct Backend<'a, const S: usize>(&'a [[u64; 16]; S]);

impl<const S: usize> Backend<'_, S> {
    #[inline(always)]
    fn one(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let x = crypt1(self.0, load(block.get_in()));
        store(block.get_out(), x);
    }

    #[inline(always)]
    fn par(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let mut x = [0u64; PAR_BLOCKS];
        for (x, blk) in x.iter_mut().zip(blocks.get_in().iter()) {
            *x = load(blk);
        }
        crypt_par(self.0, &mut x);
        for (x, blk) in x.iter().zip(blocks.get_out().iter_mut()) {
            store(blk, *x);
        }
    }

    /// Tails of two or more blocks go through the interleaved path, padded
    /// with dummy blocks: cheaper than one block at a time.
    #[inline(always)]
    fn tail(&self, mut blocks: InOutBuf<'_, '_, Block<Self>>) {
        assert!(blocks.len() < PAR_BLOCKS);
        if blocks.len() < 2 {
            for block in blocks {
                self.one(block);
            }
            return;
        }
        let mut x = [0u64; PAR_BLOCKS];
        for (x, blk) in x.iter_mut().zip(blocks.get_in().iter()) {
            *x = load(blk);
        }
        crypt_par(self.0, &mut x);
        for (x, blk) in x.iter().zip(blocks.get_out().iter_mut()) {
            store(blk, *x);
        }
    }
}

impl<const S: usize> BlockSizeUser for Backend<'_, S> {
    type BlockSize = U8;
}

impl<const S: usize> ParBlocksSizeUser for Backend<'_, S> {
    type ParBlocksSize = ParSize;
}

impl<const S: usize> BlockCipherEncBackend for Backend<'_, S> {
    #[inline]
    fn encrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.one(block);
    }

    #[inline]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.par(blocks);
    }

    #[inline]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        self.tail(blocks);
    }
}

impl<const S: usize> BlockCipherDecBackend for Backend<'_, S> {
    #[inline]
    fn decrypt_block(&self, block: InOut<'_, '_, Block<Self>>) {
        self.one(block);
    }

    #[inline]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.par(blocks);
    }

    #[inline]
    fn decrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        self.tail(blocks);
    }
}

// ---------------------------------------------------------------------------
// The kernel of the catalogue's rows.
// ---------------------------------------------------------------------------

/// The bitsliced rounds (`des_bitslice`) for bulk data (ECB, CBC
/// decryption, CTR), where the CPU has SIMD registers for them
/// ([`crate::dispatch::des`]).
#[derive(Clone)]
struct Bulk<const S: usize> {
    imp: DesImpl,
    enc: BsKeys<S>,
    dec: BsKeys<S>,
}

impl<const S: usize> Bulk<S> {
    fn new(ek: &[[u64; 16]; S], dk: &[[u64; 16]; S]) -> Option<Self> {
        let imp = crate::dispatch::des();
        (imp != DesImpl::Table).then(|| Bulk {
            imp,
            enc: BsKeys::new(ek),
            dec: BsKeys::new(dk),
        })
    }
}

/// [`Kernel64`] for `$t` (`$s` stages): the table rounds for single blocks and the
/// interleaved groups, the bitsliced rounds for bulk data.
macro_rules! kernel64 {
    ($t:ty, $s:literal) => {
        impl Kernel64<PAR_BLOCKS> for $t {
            #[inline]
            fn encrypt_one(&self, x: u64) -> u64 {
                crypt1(&self.ek, x)
            }
            #[inline]
            fn decrypt_one(&self, x: u64) -> u64 {
                crypt1(&self.dk, x)
            }
            #[inline]
            fn encrypt_par(&self, x: &mut [u64; PAR_BLOCKS]) {
                crypt_par(&self.ek, x);
            }
            #[inline]
            fn decrypt_par(&self, x: &mut [u64; PAR_BLOCKS]) {
                crypt_par(&self.dk, x);
            }
            #[inline]
            fn cbc_encrypt(&self, iv: u64, blocks: &mut [[u8; 8]]) -> u64 {
                cbc_encrypt1(&self.ek, iv, blocks)
            }
            #[inline]
            fn bulk_blocks(&self) -> usize {
                self.bulk.as_ref().map_or(0, |b| b.imp.blocks())
            }
            #[inline]
            fn encrypt_bulk(&self, x: &mut [u64]) {
                let b = self.bulk.as_ref().expect("a bulk kernel");
                crypt_batch(b.imp, &b.enc, x);
            }
            #[inline]
            fn decrypt_bulk(&self, x: &mut [u64]) {
                let b = self.bulk.as_ref().expect("a bulk kernel");
                crypt_batch(b.imp, &b.dec, x);
            }
        }

        impl $t {
            /// The bitsliced round keys, whatever the CPU (for the tests).
            #[cfg(test)]
            pub(super) fn bitslice_keys(&self) -> (BsKeys<$s>, BsKeys<$s>) {
                (BsKeys::new(&self.ek), BsKeys::new(&self.dk))
            }
        }
    };
}

// ---------------------------------------------------------------------------
// DES.
// ---------------------------------------------------------------------------

/// DES block cipher (FIPS 46-3): 64-bit block, 64-bit key of which 56 bits
/// are used (the parity bits are ignored, as in the `des` crate).
///
/// Same interface and output as `des::Des` from the `des` crate.
#[derive(Clone)]
pub struct Des {
    /// Round keys in encryption order.
    ek: [[u64; 16]; 1],
    /// Round keys in decryption order.
    dk: [[u64; 16]; 1],
    /// The bitsliced rounds for bulk data, where the CPU has them.
    bulk: Option<Bulk<1>>,
}

impl Des {
    /// Expands an 8-byte key (length checked by the caller).
    fn expand(key: &[u8]) -> Self {
        let ek = [key_schedule(key)];
        let dk = [reverse_schedule(&ek[0])];
        let bulk = Bulk::new(&ek, &dk);
        Self { ek, dk, bulk }
    }
}

impl KeySizeUser for Des {
    type KeySize = U8;
}

impl KeyInit for Des {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        Self::expand(key)
    }

    #[inline]
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        if key.len() == 8 {
            Ok(Self::expand(key))
        } else {
            Err(InvalidLength)
        }
    }
}

impl BlockSizeUser for Des {
    type BlockSize = U8;
}

impl BlockCipherEncrypt for Des {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = Self::BlockSize>) {
        f.call(&Backend(&self.ek));
    }
}

impl BlockCipherDecrypt for Des {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = Self::BlockSize>) {
        f.call(&Backend(&self.dk));
    }
}

kernel64!(Des, 1);

impl fmt::Debug for Des {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Des { ... }")
    }
}

impl AlgorithmName for Des {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Des")
    }
}

impl Drop for Des {
    fn drop(&mut self) {
        self.ek.zeroize();
        self.dk.zeroize();
    }
}

impl ZeroizeOnDrop for Des {}

// ---------------------------------------------------------------------------
// Triple-DES.
// ---------------------------------------------------------------------------

/// Triple-DES in the EDE3 keying option (NIST SP 800-67): a 24-byte key
/// `K1 || K2 || K3`, encryption is `E_K3(D_K2(E_K1(x)))`.
///
/// Same interface and output as `des::TdesEde3` from the `des` crate.
#[derive(Clone)]
pub struct TdesEde3 {
    /// 48 rounds of encryption: `K1` forward, `K2` reversed, `K3` forward.
    ek: [[u64; 16]; 3],
    /// 48 rounds of decryption: `K3` reversed, `K2` forward, `K1` reversed.
    dk: [[u64; 16]; 3],
    /// The bitsliced rounds for bulk data, where the CPU has them.
    bulk: Option<Bulk<3>>,
}

impl TdesEde3 {
    /// Expands a 24-byte key (length checked by the caller).
    fn expand(key: &[u8]) -> Self {
        let mut k1 = key_schedule(&key[..8]);
        let mut k2 = key_schedule(&key[8..16]);
        let mut k3 = key_schedule(&key[16..24]);
        let mut r1 = reverse_schedule(&k1);
        let mut r2 = reverse_schedule(&k2);
        let mut r3 = reverse_schedule(&k3);
        let (ek, dk) = ([k1, r2, k3], [r3, k2, r1]);
        let bulk = Bulk::new(&ek, &dk);
        let out = Self { ek, dk, bulk };
        for k in [&mut k1, &mut k2, &mut k3, &mut r1, &mut r2, &mut r3] {
            k.zeroize();
        }
        out
    }
}

impl KeySizeUser for TdesEde3 {
    type KeySize = U24;
}

impl KeyInit for TdesEde3 {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        Self::expand(key)
    }

    #[inline]
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        if key.len() == 24 {
            Ok(Self::expand(key))
        } else {
            Err(InvalidLength)
        }
    }
}

impl BlockSizeUser for TdesEde3 {
    type BlockSize = U8;
}

impl BlockCipherEncrypt for TdesEde3 {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = Self::BlockSize>) {
        f.call(&Backend(&self.ek));
    }
}

impl BlockCipherDecrypt for TdesEde3 {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = Self::BlockSize>) {
        f.call(&Backend(&self.dk));
    }
}

kernel64!(TdesEde3, 3);

impl fmt::Debug for TdesEde3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TdesEde3 { ... }")
    }
}

impl AlgorithmName for TdesEde3 {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TdesEde3")
    }
}

impl Drop for TdesEde3 {
    fn drop(&mut self) {
        self.ek.zeroize();
        self.dk.zeroize();
    }
}

impl ZeroizeOnDrop for TdesEde3 {}

/// S-box `j + 1` of FIPS 46-3 on the 6-bit group `v` (first bit most
/// significant).
#[cfg(test)]
pub(super) fn sbox_value(j: usize, v: usize) -> u8 {
    S[j][((v >> 4) & 2) | (v & 1)][(v >> 1) & 0xF]
}

#[cfg(test)]
mod tests {
    use super::*;
    use hex_literal::hex;

    const IP: [u8; 64] = IP_TABLE;
    const E: [u8; 48] = E_TABLE;

    use crate::ciphers::test_support::XorShift;

    /// The swap-and-mask `IP` and `FP` against the FIPS 46-3 table, and the
    /// bytes of an expanded half against the `E` table.
    #[test]
    fn permutations_match_fips_tables() {
        let mut rng = XorShift(0x0123_4567_89AB_CDEF);
        for _ in 0..10_000 {
            let x = rng.next_u64();
            let y = permute(x, 64, &IP);
            let (l, r) = ip((x >> 32) as u32, x as u32);
            assert_eq!(l, ((y >> 32) as u32).rotate_left(1));
            assert_eq!(r, (y as u32).rotate_left(1));
            let (hi, lo) = fp(l, r);
            assert_eq!((u64::from(hi) << 32) | u64::from(lo), x);
            let (el, er) = ip_expand(x);
            assert_eq!((compress(el), compress(er)), (l, r));
            assert_eq!(compress_fp(el, er), x);

            // E(R): byte j of the expanded (rotated) half holds the 6-bit
            // group that S-box SBOX_OF_BYTE[j] reads.
            let half = x as u32;
            let e = permute(u64::from(half), 32, &E);
            let w = expand(half.rotate_left(1));
            assert_eq!(w & !EXPANDED, 0);
            for (j, &g) in SBOX_OF_BYTE.iter().enumerate() {
                assert_eq!(
                    (w >> (8 * j)) & 0x3F,
                    (e >> (42 - 6 * g)) & 0x3F,
                    "byte {j}"
                );
            }
        }
    }

    /// [`f`] and [`f_latency`] rely on the eight `SPX` tables having
    /// pairwise disjoint output bits, so that OR and addition act as XOR;
    /// both against the round function written out with XOR.
    #[test]
    fn sp_tables_have_disjoint_outputs() {
        let masks = SP.map(|t| t.iter().fold(0u32, |m, &v| m | v));
        for (i, m) in masks.iter().enumerate() {
            assert_eq!(m.count_ones(), 4, "S{}", i + 1);
        }
        assert_eq!(masks.iter().fold(0, |a, m| a | m), u32::MAX);
        let xmasks = SPX.map(|t| t.iter().fold(0u64, |m, &v| m | v));
        for (i, m) in xmasks.iter().enumerate() {
            for (j, n) in xmasks.iter().enumerate() {
                assert!(i == j || m & n == 0, "tables {i} and {j}");
            }
        }
        let mut rng = XorShift(7);
        for _ in 0..10_000 {
            let w = rng.next_u64() & EXPANDED;
            let h = rng.next_u64() & EXPANDED;
            let xor = (0..8).fold(0, |a, j| a ^ sp(w, j));
            assert_eq!(f(w), xor);
            assert_eq!(f_latency(w, h), h ^ xor);
        }
    }

    /// The round function on expanded halves against FIPS 46-3 written
    /// out: `P(S(E(R) ^ K))`.
    #[test]
    fn round_function_matches_fips() {
        let mut rng = XorShift(99);
        for _ in 0..10_000 {
            let r = rng.next_u64() as u32;
            let k48 = rng.next_u64() & ((1 << 48) - 1);
            let e = permute(u64::from(r), 32, &E) ^ k48;
            let mut s_out = 0u64;
            for (i, sbox) in S.iter().enumerate() {
                let v = ((e >> (42 - 6 * i)) & 0x3F) as usize;
                let row = ((v >> 4) & 2) | (v & 1);
                let col = (v >> 1) & 0xF;
                s_out = (s_out << 4) | u64::from(sbox[row][col]);
            }
            let want = permute(s_out, 32, &P) as u32;
            // The key in the expanded layout, as `key_schedule` builds it.
            let g = |n: u32| (k48 >> (42 - 6 * n)) & 0x3F;
            let k = g(7)
                | (g(5) << 8)
                | (g(3) << 16)
                | (g(1) << 24)
                | (g(6) << 32)
                | (g(4) << 40)
                | (g(2) << 48)
                | (g(0) << 56);
            let got = compress(f(expand(r.rotate_left(1)) ^ k)).rotate_right(1);
            assert_eq!(got, want);
        }
    }

    /// Encrypts and decrypts one block through both the single-block and
    /// the multi-block paths.
    fn check<C: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U8>>(
        c: &C,
        pt: [u8; 8],
        ct: [u8; 8],
        what: &str,
    ) {
        let mut block = Block::<C>::from(pt);
        c.encrypt_block(&mut block);
        assert_eq!(block[..], ct, "encrypt {what}");
        c.decrypt_block(&mut block);
        assert_eq!(block[..], pt, "decrypt {what}");
        let mut blocks = [Block::<C>::from(pt); 2 * PAR_BLOCKS + 3];
        c.encrypt_blocks(&mut blocks);
        assert!(blocks.iter().all(|b| b[..] == ct), "encrypt_blocks {what}");
        c.decrypt_blocks(&mut blocks);
        assert!(blocks.iter().all(|b| b[..] == pt), "decrypt_blocks {what}");
    }

    /// The classic example of FIPS 81 (DES Modes of Operation), appendix B,
    /// table B1 (ECB): key `0123456789ABCDEF`, "Now is the time for all ".
    #[test]
    fn fips81_ecb() {
        let c = Des::new(&hex!("0123456789ABCDEF").into());
        let pt = *b"Now is the time for all ";
        let ct = hex!("3FA40E8A984D4815 6A271787AB8883F9 893D51EC4B563B53");
        for (p, q) in pt.chunks_exact(8).zip(ct.chunks_exact(8)) {
            check(&c, p.try_into().unwrap(), q.try_into().unwrap(), "FIPS 81");
        }
        let mut buf = pt;
        let blocks = Block::<Des>::slice_as_chunks_mut(&mut buf).0;
        c.encrypt_blocks(blocks);
        assert_eq!(buf, ct);
    }

    /// NIST SP 800-17 (also SP 800-20 for TDEA with `K1 = K2 = K3`),
    /// table 1, the variable plaintext known-answer test: key
    /// `0101010101010101`, plaintext with one bit set, bit 1 first.
    #[test]
    fn sp800_17_variable_plaintext() {
        const CT: [[u8; 8]; 64] = [
            hex!("95F8A5E5DD31D900"),
            hex!("DD7F121CA5015619"),
            hex!("2E8653104F3834EA"),
            hex!("4BD388FF6CD81D4F"),
            hex!("20B9E767B2FB1456"),
            hex!("55579380D77138EF"),
            hex!("6CC5DEFAAF04512F"),
            hex!("0D9F279BA5D87260"),
            hex!("D9031B0271BD5A0A"),
            hex!("424250B37C3DD951"),
            hex!("B8061B7ECD9A21E5"),
            hex!("F15D0F286B65BD28"),
            hex!("ADD0CC8D6E5DEBA1"),
            hex!("E6D5F82752AD63D1"),
            hex!("ECBFE3BD3F591A5E"),
            hex!("F356834379D165CD"),
            hex!("2B9F982F20037FA9"),
            hex!("889DE068A16F0BE6"),
            hex!("E19E275D846A1298"),
            hex!("329A8ED523D71AEC"),
            hex!("E7FCE22557D23C97"),
            hex!("12A9F5817FF2D65D"),
            hex!("A484C3AD38DC9C19"),
            hex!("FBE00A8A1EF8AD72"),
            hex!("750D079407521363"),
            hex!("64FEED9C724C2FAF"),
            hex!("F02B263B328E2B60"),
            hex!("9D64555A9A10B852"),
            hex!("D106FF0BED5255D7"),
            hex!("E1652C6B138C64A5"),
            hex!("E428581186EC8F46"),
            hex!("AEB5F5EDE22D1A36"),
            hex!("E943D7568AEC0C5C"),
            hex!("DF98C8276F54B04B"),
            hex!("B160E4680F6C696F"),
            hex!("FA0752B07D9C4AB8"),
            hex!("CA3A2B036DBC8502"),
            hex!("5E0905517BB59BCF"),
            hex!("814EEB3B91D90726"),
            hex!("4D49DB1532919C9F"),
            hex!("25EB5FC3F8CF0621"),
            hex!("AB6A20C0620D1C6F"),
            hex!("79E90DBC98F92CCA"),
            hex!("866ECEDD8072BB0E"),
            hex!("8B54536F2F3E64A8"),
            hex!("EA51D3975595B86B"),
            hex!("CAFFC6AC4542DE31"),
            hex!("8DD45A2DDF90796C"),
            hex!("1029D55E880EC2D0"),
            hex!("5D86CB23639DBEA9"),
            hex!("1D1CA853AE7C0C5F"),
            hex!("CE332329248F3228"),
            hex!("8405D1ABE24FB942"),
            hex!("E643D78090CA4207"),
            hex!("48221B9937748A23"),
            hex!("DD7C0BBD61FAFD54"),
            hex!("2FBC291A570DB5C4"),
            hex!("E07C30D7E4E26E12"),
            hex!("0953E2258E8E90A1"),
            hex!("5B711BC4CEEBF2EE"),
            hex!("CC083F1E6D9E85F6"),
            hex!("D2FD8867D50D2DFE"),
            hex!("06E7EA22CE92708F"),
            hex!("166B40B44ABA4BD6"),
        ];
        let des = Des::new(&hex!("0101010101010101").into());
        let tdes = TdesEde3::new(&[1u8; 24].into());
        for (bit, ct) in CT.iter().enumerate() {
            let pt = (1u64 << (63 - bit)).to_be_bytes();
            check(&des, pt, *ct, &format!("DES bit {}", bit + 1));
            check(&tdes, pt, *ct, &format!("TDES bit {}", bit + 1));
        }
    }

    /// NIST SP 800-17 table 2 (variable key: one non-parity key bit set,
    /// plaintext zero; first rows), table 3 (permutation operation; first
    /// rows) and table 4 (substitution table test; first rows), plus the
    /// worked example of J. O. Grabbe, "The DES Algorithm Illustrated".
    #[test]
    fn sp800_17_tables_2_3_4() {
        let cases: [([u8; 8], [u8; 8], [u8; 8]); 16] = [
            // Table 2.
            (hex!("8001010101010101"), [0; 8], hex!("95A8D72813DAA94D")),
            (hex!("4001010101010101"), [0; 8], hex!("0EEC1487DD8C26D5")),
            (hex!("2001010101010101"), [0; 8], hex!("7AD16FFB79C45926")),
            (hex!("1001010101010101"), [0; 8], hex!("D3746294CA6A6CF3")),
            (hex!("0801010101010101"), [0; 8], hex!("809F5F873C1FD761")),
            (hex!("0401010101010101"), [0; 8], hex!("C02FAFFEC989D1FC")),
            (hex!("0201010101010101"), [0; 8], hex!("4615AA1D33E72F10")),
            (hex!("0180010101010101"), [0; 8], hex!("2055123350C00858")),
            // Table 3.
            (hex!("1046913489980131"), [0; 8], hex!("88D55E54F54C97B4")),
            (hex!("1007103489988020"), [0; 8], hex!("0C0CC00C83EA48FD")),
            (hex!("10071034C8980120"), [0; 8], hex!("83BC8EF3A6570183")),
            // Table 4.
            (
                hex!("7CA110454A1A6E57"),
                hex!("01A1D6D039776742"),
                hex!("690F5B0D9A26939B"),
            ),
            (
                hex!("0131D9619DC1376E"),
                hex!("5CD54CA83DEF57DA"),
                hex!("7A389D10354BD271"),
            ),
            (
                hex!("07A1133E4A0B2686"),
                hex!("0248D43806F67172"),
                hex!("868EBB51CAB4599A"),
            ),
            // Grabbe.
            (
                hex!("133457799BBCDFF1"),
                hex!("0123456789ABCDEF"),
                hex!("85E813540F0AB405"),
            ),
            // The same key with every parity bit flipped: parity is ignored.
            (
                hex!("123456789ABCDEF0"),
                hex!("0123456789ABCDEF"),
                hex!("85E813540F0AB405"),
            ),
        ];
        for (key, pt, ct) in cases {
            let c = Des::new(&key.into());
            check(&c, pt, ct, &hex::encode(key));
        }
    }

    /// NIST SP 800-67 Rev. 1, appendix B: three independent keys, "The
    /// qufck brown fox jump" in ECB mode; and the first three-key example
    /// of the NIST CAVP TDES Multi-block Message Test (`DESMMT.pdf`), one
    /// block of CBC, i.e. `C = E(P xor IV)`.
    #[test]
    fn sp800_67_example_and_cavp() {
        let key = hex!("0123456789ABCDEF 23456789ABCDEF01 456789ABCDEF0123");
        let c = TdesEde3::new(&key.into());
        let pt = *b"The qufck brown fox jump";
        let ct = hex!("A826FD8CE53B855F CCE21C8112256FE6 68D5C05DD9B6B900");
        for (p, q) in pt.chunks_exact(8).zip(ct.chunks_exact(8)) {
            check(
                &c,
                p.try_into().unwrap(),
                q.try_into().unwrap(),
                "SP 800-67",
            );
        }
        let mut buf = pt;
        let blocks = Block::<TdesEde3>::slice_as_chunks_mut(&mut buf).0;
        c.encrypt_blocks(blocks);
        assert_eq!(buf, ct);
        let blocks = Block::<TdesEde3>::slice_as_chunks_mut(&mut buf).0;
        c.decrypt_blocks(blocks);
        assert_eq!(buf, pt);

        let key = hex!("627F460E08104A10 43CD265D5840EAF1 313EDF97DF2A8A8C");
        let iv = hex!("8E29F75EA77E5475");
        let pt = hex!("326A494CD33FE756");
        let ct = hex!("B22B8D66DE970692");
        let xored: [u8; 8] = core::array::from_fn(|i| pt[i] ^ iv[i]);
        check(&TdesEde3::new(&key.into()), xored, ct, "CAVP MMT");
    }

    #[test]
    fn rejects_bad_key_lengths() {
        for len in [0, 1, 7, 9, 16, 24, 32] {
            assert!(Des::new_from_slice(&vec![1u8; len]).is_err(), "DES {len}");
        }
        assert!(Des::new_from_slice(&[1u8; 8]).is_ok());
        for len in [0, 8, 16, 23, 25, 32] {
            assert!(
                TdesEde3::new_from_slice(&vec![1u8; len]).is_err(),
                "TDES {len}"
            );
        }
        assert!(TdesEde3::new_from_slice(&[1u8; 24]).is_ok());
    }

    #[test]
    fn names_and_traits() {
        struct Name<T>(core::marker::PhantomData<T>);
        impl<T: AlgorithmName> fmt::Display for Name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                T::write_alg_name(f)
            }
        }
        assert_eq!(Name::<Des>(core::marker::PhantomData).to_string(), "Des");
        assert_eq!(
            Name::<TdesEde3>(core::marker::PhantomData).to_string(),
            "TdesEde3"
        );
        assert_eq!(format!("{:?}", Des::new(&[7; 8].into())), "Des { ... }");
        assert_eq!(
            format!("{:?}", TdesEde3::new(&[7; 24].into())),
            "TdesEde3 { ... }"
        );
        fn zeroizes<T: ZeroizeOnDrop>() {}
        zeroizes::<Des>();
        zeroizes::<TdesEde3>();
    }

    /// Compares `ours` with the reference on a single random block and on
    /// `n` random blocks, both directions, in place and buffer to buffer.
    fn cross_check<A, B>(ours: &A, reference: &B, rng: &mut XorShift, n: usize, what: &str)
    where
        A: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U8>,
        B: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U8>,
    {
        let mut one = Block::<A>::default();
        rng.fill(&mut one);
        let (mut a, mut b) = (one, one);
        ours.encrypt_block(&mut a);
        reference.encrypt_block(&mut b);
        assert_eq!(a, b, "encrypt_block {what}");
        let (mut a, mut b) = (one, one);
        ours.decrypt_block(&mut a);
        reference.decrypt_block(&mut b);
        assert_eq!(a, b, "decrypt_block {what}");

        let mut data = vec![Block::<A>::default(); n];
        for blk in &mut data {
            rng.fill(blk);
        }
        let mut out = vec![Block::<A>::default(); n];

        let mut a = data.clone();
        let mut b = data.clone();
        ours.encrypt_blocks(&mut a);
        reference.encrypt_blocks(&mut b);
        assert_eq!(a, b, "encrypt_blocks n={n} {what}");
        ours.encrypt_blocks_b2b(&data, &mut out).unwrap();
        assert_eq!(out, b, "encrypt_blocks_b2b n={n} {what}");
        ours.decrypt_blocks(&mut a);
        assert_eq!(a, data, "round trip n={n} {what}");

        let mut a = data.clone();
        let mut b = data.clone();
        ours.decrypt_blocks(&mut a);
        reference.decrypt_blocks(&mut b);
        assert_eq!(a, b, "decrypt_blocks n={n} {what}");
        ours.decrypt_blocks_b2b(&data, &mut out).unwrap();
        assert_eq!(out, b, "decrypt_blocks_b2b n={n} {what}");
    }

    /// Cross-check against the `des` crate: 3000 random keys each, buffers
    /// of 1 to 100 blocks (every length modulo `PAR_BLOCKS`, so both the
    /// interleaved and the tail paths).
    #[test]
    fn matches_des_crate() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for iter in 0..3000 {
            let mut key = [0u8; 8];
            rng.fill(&mut key);
            let ours = Des::new(&key.into());
            let reference = ::des::Des::new(&key.into());
            let n = if iter < 100 {
                iter + 1
            } else {
                1 + rng.below(100)
            };
            cross_check(&ours, &reference, &mut rng, n, &hex::encode(key));
        }
    }

    /// Cross-check against the `des` crate's `TdesEde3`, as above, including
    /// keys with two or three equal thirds.
    #[test]
    fn matches_des_crate_tdes() {
        let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
        for iter in 0..3000 {
            let mut key = [0u8; 24];
            rng.fill(&mut key);
            match iter % 10 {
                0 => key.copy_within(..8, 8),    // K1 = K2: single DES with K3
                1 => key.copy_within(8..16, 16), // K2 = K3: single DES with K1
                2 => key.copy_within(..8, 16),   // K1 = K3: two-key TDES
                _ => {}
            }
            let ours = TdesEde3::new(&key.into());
            let reference = ::des::TdesEde3::new(&key.into());
            let n = if iter < 100 {
                iter + 1
            } else {
                1 + rng.below(100)
            };
            cross_check(&ours, &reference, &mut rng, n, &hex::encode(key));
        }
    }

    /// With `K1 = K2 = K3`, EDE3 is single DES.
    #[test]
    fn tdes_with_equal_keys_is_des() {
        let mut rng = XorShift(42);
        for _ in 0..200 {
            let mut k = [0u8; 8];
            rng.fill(&mut k);
            let mut key = [0u8; 24];
            for c in key.chunks_exact_mut(8) {
                c.copy_from_slice(&k);
            }
            cross_check(
                &TdesEde3::new(&key.into()),
                &Des::new(&k.into()),
                &mut rng,
                17,
                "equal keys",
            );
        }
    }
}
