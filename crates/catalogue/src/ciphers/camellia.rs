//! Table-driven Camellia block cipher (RFC 3713).
//!
//! # Why this exists
//!
//! The RustCrypto [`camellia`](https://docs.rs/camellia) 0.2 crate evaluates
//! the F-function as eight byte S-box lookups, each spread over the output by a
//! 64-bit multiplication, and runs one block at a time: about 0.7x OpenSSL's C
//! Camellia on x86-64 and 0.77x libgcrypt's aarch64 assembly in instructions
//! per byte. Here S-box and P-function are folded into eight 256-entry `u64`
//! tables (16 KiB, the classic "SP table" layout of the Camellia designers'
//! reference code and of OpenSSL), so a round is eight byte extractions, eight
//! loads and eight XORs; [`PAR_BLOCKS`] blocks run interleaved so that the
//! loads of different blocks overlap.
//!
//! The output is bit-for-bit that of the `camellia` crate (the test oracle)
//! and of RFC 3713's vectors. Like every table-driven Camellia (the crate's
//! byte S-boxes, OpenSSL's and libgcrypt's scalar code), lookups are indexed
//! by secret-dependent bytes: this implementation is not constant-time with
//! respect to cache-timing side channels.

use core::fmt;

use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InOutBuf, InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
    consts::{U16, U32},
};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Number of blocks the multi-block path processes interleaved.
pub const PAR_BLOCKS: usize = 4;

/// `ParBlocksSize` of the backend; must equal [`PAR_BLOCKS`].
type ParSize = cipher::consts::U4;

/// SBOX1 of RFC 3713, section 2.4.4; SBOX2-4 are rotations of it.
const SBOX1: [u8; 256] = [
    0x70, 0x82, 0x2c, 0xec, 0xb3, 0x27, 0xc0, 0xe5, 0xe4, 0x85, 0x57, 0x35, 0xea, 0x0c, 0xae, 0x41,
    0x23, 0xef, 0x6b, 0x93, 0x45, 0x19, 0xa5, 0x21, 0xed, 0x0e, 0x4f, 0x4e, 0x1d, 0x65, 0x92, 0xbd,
    0x86, 0xb8, 0xaf, 0x8f, 0x7c, 0xeb, 0x1f, 0xce, 0x3e, 0x30, 0xdc, 0x5f, 0x5e, 0xc5, 0x0b, 0x1a,
    0xa6, 0xe1, 0x39, 0xca, 0xd5, 0x47, 0x5d, 0x3d, 0xd9, 0x01, 0x5a, 0xd6, 0x51, 0x56, 0x6c, 0x4d,
    0x8b, 0x0d, 0x9a, 0x66, 0xfb, 0xcc, 0xb0, 0x2d, 0x74, 0x12, 0x2b, 0x20, 0xf0, 0xb1, 0x84, 0x99,
    0xdf, 0x4c, 0xcb, 0xc2, 0x34, 0x7e, 0x76, 0x05, 0x6d, 0xb7, 0xa9, 0x31, 0xd1, 0x17, 0x04, 0xd7,
    0x14, 0x58, 0x3a, 0x61, 0xde, 0x1b, 0x11, 0x1c, 0x32, 0x0f, 0x9c, 0x16, 0x53, 0x18, 0xf2, 0x22,
    0xfe, 0x44, 0xcf, 0xb2, 0xc3, 0xb5, 0x7a, 0x91, 0x24, 0x08, 0xe8, 0xa8, 0x60, 0xfc, 0x69, 0x50,
    0xaa, 0xd0, 0xa0, 0x7d, 0xa1, 0x89, 0x62, 0x97, 0x54, 0x5b, 0x1e, 0x95, 0xe0, 0xff, 0x64, 0xd2,
    0x10, 0xc4, 0x00, 0x48, 0xa3, 0xf7, 0x75, 0xdb, 0x8a, 0x03, 0xe6, 0xda, 0x09, 0x3f, 0xdd, 0x94,
    0x87, 0x5c, 0x83, 0x02, 0xcd, 0x4a, 0x90, 0x33, 0x73, 0x67, 0xf6, 0xf3, 0x9d, 0x7f, 0xbf, 0xe2,
    0x52, 0x9b, 0xd8, 0x26, 0xc8, 0x37, 0xc6, 0x3b, 0x81, 0x96, 0x6f, 0x4b, 0x13, 0xbe, 0x63, 0x2e,
    0xe9, 0x79, 0xa7, 0x8c, 0x9f, 0x6e, 0xbc, 0x8e, 0x29, 0xf5, 0xf9, 0xb6, 0x2f, 0xfd, 0xb4, 0x59,
    0x78, 0x98, 0x06, 0x6a, 0xe7, 0x46, 0x71, 0xba, 0xd4, 0x25, 0xab, 0x42, 0x88, 0xa2, 0x8d, 0xfa,
    0x72, 0x07, 0xb9, 0x55, 0xf8, 0xee, 0xac, 0x0a, 0x36, 0x49, 0x2a, 0x68, 0x3c, 0x38, 0xf1, 0xa4,
    0x40, 0x28, 0xd3, 0x7b, 0xbb, 0xc9, 0x43, 0xc1, 0x15, 0xe3, 0xad, 0xf4, 0x77, 0xc7, 0x80, 0x9e,
];

/// The key schedule's constants Sigma1..Sigma6 (RFC 3713, section 2.2).
const SIGMA: [u64; 6] = [
    0xA09E_667F_3BCC_908B,
    0xB67A_E858_4CAA_73B2,
    0xC6EF_372F_E94F_82BE,
    0x54FF_53A5_F1D3_6F1C,
    0x10E5_27FA_DE68_2D1D,
    0xB056_88C2_B3E6_C1FD,
];

/// The S-box each byte of F's input goes through (byte 0 the most
/// significant): SBOX1, 2, 3, 4, 2, 3, 4, 1 (RFC 3713, section 2.4.1).
const SBOX_OF_BYTE: [u8; 8] = [1, 2, 3, 4, 2, 3, 4, 1];

/// The P-function as a multiplier per input byte: output byte `i` (0 the most
/// significant) receives input byte `j` where byte `i` of `P_SPREAD[j]` is 1.
const P_SPREAD: [u64; 8] = [
    0x0101_0100_0100_0001,
    0x0001_0101_0101_0000,
    0x0100_0101_0001_0100,
    0x0101_0001_0000_0101,
    0x0001_0101_0001_0101,
    0x0100_0101_0100_0101,
    0x0101_0001_0101_0001,
    0x0101_0100_0101_0100,
];

/// SBOXn(x) for n in 1..=4.
const fn sbox(n: u8, x: u8) -> u8 {
    match n {
        1 => SBOX1[x as usize],
        2 => SBOX1[x as usize].rotate_left(1),
        3 => SBOX1[x as usize].rotate_right(1),
        _ => SBOX1[x.rotate_left(1) as usize],
    }
}

/// The eight SP tables, each aligned to a cache line.
#[repr(C, align(64))]
struct SpTables([[u64; 256]; 8]);

/// `SP.0[j][x]`: byte `j` of F's input equal to `x`, through its S-box and
/// the P-function. F(X) is the XOR of `SP.0[j][byte j of X]`.
static SP: SpTables = {
    let mut t = [[0u64; 256]; 8];
    let mut j = 0;
    while j < 8 {
        let mut x = 0;
        while x < 256 {
            t[j][x] = P_SPREAD[j] * sbox(SBOX_OF_BYTE[j], x as u8) as u64;
            x += 1;
        }
        j += 1;
    }
    SpTables(t)
};

/// Byte `j` of `x`, 0 the most significant (shifts, not a byte swap: one
/// instruction fewer on the critical path).
#[inline(always)]
fn byte(x: u64, j: usize) -> usize {
    usize::from((x >> (56 - 8 * j)) as u8)
}

/// The F-function without its key: F(x ^ k) = `f(x ^ k)`.
#[inline(always)]
fn f(x: u64) -> u64 {
    let t = &SP.0;
    (t[0][byte(x, 0)] ^ t[1][byte(x, 1)])
        ^ (t[2][byte(x, 2)] ^ t[3][byte(x, 3)])
        ^ ((t[4][byte(x, 4)] ^ t[5][byte(x, 5)]) ^ (t[6][byte(x, 6)] ^ t[7][byte(x, 7)]))
}

/// `f` for one block at a time (CBC encryption), where latency decides: the
/// eight lookups combined as a tree of depth 3. LLVM turns the tree into a
/// chain of eight XORs with memory operands (depth 8), which `opaque` stops.
#[inline(always)]
fn f_latency(x: u64) -> u64 {
    let t = &SP.0;
    let a = opaque(t[0][byte(x, 0)] ^ t[1][byte(x, 1)]);
    let b = opaque(t[2][byte(x, 2)] ^ t[3][byte(x, 3)]);
    let c = opaque(t[4][byte(x, 4)] ^ t[5][byte(x, 5)]);
    let d = opaque(t[6][byte(x, 6)] ^ t[7][byte(x, 7)]);
    opaque(a ^ b) ^ opaque(c ^ d)
}

/// `f(x) ^ hk` for one block at a time, and a value whose byte 4 is that
/// of the result, earlier: the XORs are ordered by when their operands
/// arrive. With three loads a cycle the eight lookups arrive over three
/// cycles; byte 4 of F's output takes only lookups 0, 1, 5, 6 and 7 (the P
/// function), so it is ready a cycle before the rest and its lookup in the
/// next round (byte 4 of `x` taken from `x4`) goes first, while the other
/// bytes are extracted. `hk`, known early, joins the first pair.
#[inline(always)]
fn f_xor(x: u64, x4: u64, hk: u64) -> (u64, u64) {
    let b = |j| byte(x, j);
    f_xor_at([b(0), b(1), b(2), b(3), byte(x4, 4), b(5), b(6), b(7)], hk)
}

/// [`f_xor`] of the F input whose bytes are `i`.
#[inline(always)]
fn f_xor_at(i: [usize; 8], hk: u64) -> (u64, u64) {
    let t = &SP.0;
    let t4 = t[4][i[4]];
    let a = opaque(t[0][i[0]] ^ t[6][i[6]]);
    let b = opaque(t[7][i[7]] ^ opaque(hk));
    let c = opaque(t[1][i[1]] ^ t[5][i[5]]);
    let p4 = opaque(opaque(a ^ b) ^ c);
    let q = opaque(opaque(t4 ^ t[2][i[2]]) ^ t[3][i[3]]);
    (p4 ^ q, p4)
}

/// `fl(x, ke) ^ k` as the bytes of an F input (for the next round's
/// lookups), and as a `u64`. FL's left half, `x1 ^ ((x2 ^ r) | k2)` with
/// `r = (x1 & k1) <<< 1`, is taken as `x1 ^ (x2 | k2) ^ (r & !k2)`, where
/// `r & !k2 = (x1 & k1 & (!k2 >>> 1)) <<< 1`: it no longer waits for the
/// right half, both halves are four operations from `x` (six and two more
/// to join them before), and each half's bytes come from its own 32-bit
/// register.
#[inline(always)]
fn fl_key(x: u64, ke: u64, k: u64) -> ([usize; 8], u64) {
    let (k1, k2) = ((ke >> 32) as u32, ke as u32);
    let (x1, x2) = ((x >> 32) as u32, x as u32);
    let r = (x1 & k1).rotate_left(1);
    let r2 = (x1 & (k1 & (!k2).rotate_right(1))).rotate_left(1);
    let lo = opaque32(x2 ^ k as u32) ^ r;
    let hi = opaque32(opaque32(x1 ^ (k >> 32) as u32) ^ (x2 | k2)) ^ r2;
    let b = |v: u32, s: u32| usize::from((v >> s) as u8);
    let i = [
        b(hi, 24),
        b(hi, 16),
        b(hi, 8),
        b(hi, 0),
        b(lo, 24),
        b(lo, 16),
        b(lo, 8),
        b(lo, 0),
    ];
    (i, (u64::from(hi) << 32) | u64::from(lo))
}

/// `v`, hidden from the optimizer's reassociation (no instruction; 32-bit
/// targets, which hold a `u64` in two registers, pass it through).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn opaque(mut v: u64) -> u64 {
    // SAFETY: an empty asm block that leaves its register as it is.
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) v, options(pure, nomem, nostack, preserves_flags));
    }
    v
}

/// [`opaque`] for a `u32`.
#[inline(always)]
fn opaque32(v: u32) -> u32 {
    opaque(u64::from(v)) as u32
}

/// `v` (see the 64-bit version).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn opaque(v: u64) -> u64 {
    v
}

/// The FL-function (RFC 3713, section 2.4.2).
#[inline(always)]
fn fl(x: u64, k: u64) -> u64 {
    let (mut x1, mut x2) = ((x >> 32) as u32, x as u32);
    let (k1, k2) = ((k >> 32) as u32, k as u32);
    x2 ^= (x1 & k1).rotate_left(1);
    x1 ^= x2 | k2;
    (u64::from(x1) << 32) | u64::from(x2)
}

/// The FLINV-function (RFC 3713, section 2.4.3).
#[inline(always)]
fn fl_inv(y: u64, k: u64) -> u64 {
    let (mut y1, mut y2) = ((y >> 32) as u32, y as u32);
    let (k1, k2) = ((k >> 32) as u32, k as u32);
    y1 ^= y2 | k2;
    y2 ^= (y1 & k1).rotate_left(1);
    (u64::from(y1) << 32) | u64::from(y2)
}

/// Subkeys in the order one direction applies them: decryption is encryption
/// with the subkeys reversed (RFC 3713, section 2.3.1).
#[derive(Clone)]
pub(super) struct Schedule {
    /// Whitening: `kw[0..2]` before the rounds, `kw[2..4]` after.
    pub(super) kw: [u64; 4],
    /// Round keys, 18 or 24 used.
    pub(super) k: [u64; 24],
    /// FL / FLINV keys, two per FL layer, 4 or 6 used.
    pub(super) ke: [u64; 6],
}

impl Schedule {
    /// The same keys applied the other way round.
    fn reversed(&self, rounds: usize) -> Self {
        let mut out = self.clone();
        out.kw = [self.kw[2], self.kw[3], self.kw[0], self.kw[1]];
        out.k[..rounds].reverse();
        out.ke[..rounds / 3 - 2].reverse();
        out
    }

    /// Runs `G` groups of six rounds (3 for 128-bit keys, 4 otherwise) with
    /// an FL layer between groups over `N` blocks, interleaved.
    #[inline(always)]
    fn crypt<const N: usize, const G: usize>(&self, x: &mut [[u64; 2]; N]) {
        for b in x.iter_mut() {
            b[0] ^= self.kw[0];
            b[1] ^= self.kw[1];
        }
        for g in 0..G {
            if g > 0 {
                let (ka, kb) = (self.ke[2 * g - 2], self.ke[2 * g - 1]);
                for b in x.iter_mut() {
                    b[0] = fl(b[0], ka);
                    b[1] = fl_inv(b[1], kb);
                }
            }
            for r in 0..3 {
                let (ka, kb) = (self.k[6 * g + 2 * r], self.k[6 * g + 2 * r + 1]);
                for b in x.iter_mut() {
                    b[1] ^= f(b[0] ^ ka);
                }
                for b in x.iter_mut() {
                    b[0] ^= f(b[1] ^ kb);
                }
            }
        }
        for b in x.iter_mut() {
            *b = [b[1] ^ self.kw[2], b[0] ^ self.kw[3]];
        }
    }
}

impl Schedule {
    /// One block, `G` groups of six rounds, shaped for latency: each round's
    /// key is XORed into the half it will read while the previous round
    /// still runs (`x = (h ^ k) ^ y` instead of `(h ^ y) ^ k`), and F's
    /// lookups combine as a tree.
    #[inline(always)]
    fn crypt1<const G: usize>(&self, x: [u64; 2]) -> [u64; 2] {
        let mut h = [x[0] ^ self.kw[0], x[1] ^ self.kw[1]];
        for g in 0..G {
            if g > 0 {
                h[0] = fl(h[0], self.ke[2 * g - 2]);
                h[1] = fl_inv(h[1], self.ke[2 * g - 1]);
            }
            let k = &self.k[6 * g..6 * g + 6];
            let mut input = h[0] ^ k[0];
            for i in 0..6 {
                let y = f_latency(input);
                // Round i reads half i % 2 and changes the other one, which
                // round i + 1 reads.
                let d = (i + 1) % 2;
                if i < 5 {
                    input = opaque(h[d] ^ k[i + 1]) ^ y;
                }
                h[d] ^= y;
            }
        }
        [h[1] ^ self.kw[2], h[0] ^ self.kw[3]]
    }
}

impl Schedule {
    /// The rounds of CBC encryption: `x` is the first F input (the block
    /// whitened, XORed with k0) and `hk` the other half XORed with k1.
    /// Returns the two halves after the rounds, unwhitened and swapped.
    ///
    /// Each round computes the next F input directly, `f_xor(x, h ^ k)`,
    /// and the half it changed as that XOR k, off the chain.
    #[inline(always)]
    fn cbc_rounds<const G: usize>(&self, x: u64, hk: u64) -> (u64, u64) {
        let mut h = [x ^ self.k[0], hk ^ self.k[1]];
        // Group 0's first F input comes from the caller, the others' from
        // the FL layer before them.
        self.cbc_group(0, f_xor(x, x, hk), &mut h);
        for g in 1..G {
            let k = &self.k[6 * g..6 * g + 2];
            let (i, x) = fl_key(h[0], self.ke[2 * g - 2], k[0]);
            h[0] = x ^ k[0];
            h[1] = fl_inv(h[1], self.ke[2 * g - 1]);
            self.cbc_group(g, f_xor_at(i, h[1] ^ k[1]), &mut h);
        }
        (h[1], h[0])
    }

    /// Six rounds, given the first one's result (the second round's F input
    /// and its early byte 4; see [`f_xor`]).
    #[inline(always)]
    fn cbc_group(&self, g: usize, first: (u64, u64), h: &mut [u64; 2]) {
        let k = &self.k[6 * g..6 * g + 6];
        let (mut x, mut x4) = first;
        h[1] = x ^ k[1];
        let mut hk = h[0] ^ k[2];
        for i in 1..5 {
            // Round i reads half i % 2 and changes the other one, which
            // round i + 1 reads.
            let d = (i + 1) % 2;
            (x, x4) = f_xor(x, x4, hk);
            h[d] = x ^ k[i + 1];
            if i < 4 {
                hk = h[i % 2] ^ k[i + 2];
            }
        }
        h[0] = f_xor(x, x4, h[0]).0;
    }
}

impl Zeroize for Schedule {
    fn zeroize(&mut self) {
        self.kw.zeroize();
        self.k.zeroize();
        self.ke.zeroize();
    }
}

/// Camellia block cipher (128-bit block; 128, 192 or 256-bit key) with
/// SP tables and interleaved blocks.
///
/// Same interface and output as the `camellia` crate's `Camellia128`,
/// `Camellia192` and `Camellia256` in one type; the key length chooses.
#[derive(Clone)]
pub struct Camellia {
    enc: Schedule,
    dec: Schedule,
    /// 18 or 24.
    rounds: usize,
    /// Both directions' keys for the byte-sliced kernels, when they run.
    #[cfg(target_arch = "x86_64")]
    sliced: Option<(Box<SlicedKeys>, Box<SlicedKeys>)>,
    /// The 32-block kernel batches run, if any (else 16 blocks, AES-NI).
    #[cfg(target_arch = "x86_64")]
    wide: Option<aesni::Wide>,
}

#[cfg(target_arch = "x86_64")]
use super::camellia_aesni::{self as aesni, SlicedKeys};

impl Camellia {
    /// Expands a 16, 24 or 32-byte key for the implementation the dispatch
    /// chooses (length checked by the caller).
    fn expand(key: &[u8]) -> Self {
        Self::expand_for(key, crate::dispatch::camellia())
    }

    /// Which implementation multi-block calls run: `"vaes-avx2"`,
    /// `"aesni-avx2"`, `"aesni-avx"` or `"table"`.
    pub fn backend(&self) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        if self.sliced.is_some() {
            return match self.wide {
                Some(aesni::Wide::Vaes) => "vaes-avx2",
                Some(aesni::Wide::AesniAvx2) => "aesni-avx2",
                None => "aesni-avx",
            };
        }
        "table"
    }

    /// CTR with the byte-sliced kernels' fused entry
    /// ([`super::camellia_aesni::ctr`]: counter blocks made in registers, the
    /// data XORed as the output is stored) over the whole 32-block batches
    /// at the start of `data` (with a 32-block kernel), then the whole
    /// 16-block ones. `counter` is big-endian over the whole block, wraps
    /// mod 2^128 and advances by the blocks used. Returns the bytes done:
    /// the caller runs the generic CTR (`crate::modes::BlockModes`) on the
    /// rest, all of `data` with the table backend (0 returned).
    pub fn ctr_batches(&self, counter: &mut [u8; 16], data: &mut [u8]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if let Some((keys, _)) = &self.sliced {
            let mut c = u128::from_be_bytes(*counter);
            let mut done = 0;
            if self.wide.is_some() {
                done = aesni::ctr(self.wide, keys, &mut c, data);
            }
            // A tail of 16 or more blocks: the 16-block kernel, as in `Wide`.
            done += aesni::ctr(None, keys, &mut c, &mut data[done..]);
            *counter = c.to_be_bytes();
            return done;
        }
        let _ = (counter, data);
        0
    }

    /// CBC encryption in place, one block at a time on the table code with
    /// the chaining value held in registers as two `u64` halves: through
    /// the block-cipher traits, each block went out to memory, was read
    /// back and XORed in a vector register and moved to integer registers
    /// again, about 40 cycles more on each block's serial chain.
    ///
    /// # Panics
    ///
    /// If `data` is not a whole number of blocks.
    pub fn cbc_encrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        if self.rounds == 18 {
            self.cbc_encrypt_groups::<3>(iv, data)
        } else {
            self.cbc_encrypt_groups::<4>(iv, data)
        }
    }

    #[inline(always)]
    fn cbc_encrypt_groups<const G: usize>(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        let (blocks, rest) = data.as_chunks_mut::<16>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        let halves = |b: &[u8; 16]| {
            let (hi, lo) = b.split_at(8);
            [hi, lo].map(|h| u64::from_be_bytes(h.try_into().expect("8 bytes")))
        };
        let bytes = |c: [u64; 2]| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&c[0].to_be_bytes());
            b[8..].copy_from_slice(&c[1].to_be_bytes());
            b
        };
        let s = &self.enc;
        // The chaining value without its output whitening: the ciphertext is
        // [a ^ kw2, b ^ kw3]. The next block's first F input is then
        // a ^ p0 ^ (kw2 ^ kw0 ^ k0) and its first round's other half, with
        // that round's key, b ^ p1 ^ (kw3 ^ kw1 ^ k1): the plaintext and the
        // keys combine off the chain, one XOR on it.
        let c = halves(iv);
        let (mut a, mut b) = (c[0] ^ s.kw[2], c[1] ^ s.kw[3]);
        let key0 = s.kw[2] ^ s.kw[0] ^ s.k[0];
        let key1 = s.kw[3] ^ s.kw[1] ^ s.k[1];
        for block in blocks {
            let p = halves(block);
            (a, b) = s.cbc_rounds::<G>(a ^ opaque(p[0] ^ key0), b ^ opaque(p[1] ^ key1));
            *block = bytes([a ^ s.kw[2], b ^ s.kw[3]]);
        }
        *iv = bytes([a ^ s.kw[2], b ^ s.kw[3]]);
    }

    /// CBC decryption in place with the byte-sliced kernels' fused entry
    /// ([`super::camellia_aesni::cbc_decrypt`]: each block XORed with the
    /// ciphertext before it as it is stored) over the whole 32-block batches
    /// at the start of `data` (with a 32-block kernel), then the whole
    /// 16-block ones; `iv` becomes the last ciphertext block done. Returns
    /// the bytes done: the caller decrypts the rest (all of `data` with the
    /// table backend, 0 returned) chained from the new `iv`.
    pub fn cbc_decrypt_batches(&self, iv: &mut [u8; 16], data: &mut [u8]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if let Some((_, keys)) = &self.sliced {
            let mut done = 0;
            if self.wide.is_some() {
                done = aesni::cbc_decrypt(self.wide, keys, iv, data);
            }
            done += aesni::cbc_decrypt(None, keys, iv, &mut data[done..]);
            return done;
        }
        let _ = (iv, data);
        0
    }

    /// Expands a key for implementation `backend` (`"vaes-avx2"`,
    /// `"aesni-avx2"` or `"aesni-avx"` where this CPU has it, otherwise the
    /// table code).
    pub(crate) fn expand_for(key: &[u8], backend: &str) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let mut c = Self::schedule(key);
            c.wide = match backend {
                "vaes-avx2" => Some(aesni::Wide::Vaes),
                "aesni-avx2" => Some(aesni::Wide::AesniAvx2),
                _ => None,
            }
            .filter(|&w| aesni::available_wide(w));
            if c.wide.is_some() || (backend == "aesni-avx" && aesni::available()) {
                c.sliced = Some((
                    SlicedKeys::new(&c.enc, c.rounds),
                    SlicedKeys::new(&c.dec, c.rounds),
                ));
            }
            c
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = backend;
            Self::schedule(key)
        }
    }

    /// The key schedule (RFC 3713, section 2.2).
    fn schedule(key: &[u8]) -> Self {
        debug_assert!(matches!(key.len(), 16 | 24 | 32));
        let be128 = |b: &[u8]| u128::from_be_bytes(b.try_into().expect("16 bytes"));
        let mut kl = be128(&key[..16]);
        let mut kr = match key.len() {
            16 => 0,
            24 => {
                let r = u64::from_be_bytes(key[16..24].try_into().expect("8 bytes"));
                (u128::from(r) << 64) | u128::from(!r)
            }
            _ => be128(&key[16..32]),
        };
        let halves = |v: u128| ((v >> 64) as u64, v as u64);
        let join = |d1: u64, d2: u64| (u128::from(d1) << 64) | u128::from(d2);

        let (mut d1, mut d2) = halves(kl ^ kr);
        d2 ^= f(d1 ^ SIGMA[0]);
        d1 ^= f(d2 ^ SIGMA[1]);
        let (l1, l2) = halves(kl);
        d1 ^= l1;
        d2 ^= l2;
        d2 ^= f(d1 ^ SIGMA[2]);
        d1 ^= f(d2 ^ SIGMA[3]);
        let mut ka = join(d1, d2);
        (d1, d2) = halves(ka ^ kr);
        d2 ^= f(d1 ^ SIGMA[4]);
        d1 ^= f(d2 ^ SIGMA[5]);
        let mut kb = join(d1, d2);

        // (v <<< n) as its two halves, high first: two consecutive subkeys.
        let pair = |v: u128, n: u32| halves(v.rotate_left(n));
        let mut s = Schedule {
            kw: [0; 4],
            k: [0; 24],
            ke: [0; 6],
        };
        // RFC 3713, section 2.2: subkey pairs in the order they are used.
        let (rounds, kw, k, ke): (usize, [_; 2], &[_], &[_]) = if key.len() == 16 {
            (
                18,
                [pair(kl, 0), pair(ka, 111)],
                &[
                    pair(ka, 0),
                    pair(kl, 15),
                    pair(ka, 15),
                    pair(kl, 45),
                    (pair(ka, 45).0, pair(kl, 60).1),
                    pair(ka, 60),
                    pair(kl, 94),
                    pair(ka, 94),
                    pair(kl, 111),
                ],
                &[pair(ka, 30), pair(kl, 77)],
            )
        } else {
            (
                24,
                [pair(kl, 0), pair(kb, 111)],
                &[
                    pair(kb, 0),
                    pair(kr, 15),
                    pair(ka, 15),
                    pair(kb, 30),
                    pair(kl, 45),
                    pair(ka, 45),
                    pair(kr, 60),
                    pair(kb, 60),
                    pair(kl, 77),
                    pair(kr, 94),
                    pair(ka, 94),
                    pair(kl, 111),
                ],
                &[pair(kr, 30), pair(kl, 60), pair(ka, 77)],
            )
        };
        for (i, (hi, lo)) in kw.into_iter().enumerate() {
            (s.kw[2 * i], s.kw[2 * i + 1]) = (hi, lo);
        }
        for (i, &(hi, lo)) in k.iter().enumerate() {
            (s.k[2 * i], s.k[2 * i + 1]) = (hi, lo);
        }
        for (i, &(hi, lo)) in ke.iter().enumerate() {
            (s.ke[2 * i], s.ke[2 * i + 1]) = (hi, lo);
        }
        kl.zeroize();
        kr.zeroize();
        ka.zeroize();
        kb.zeroize();
        d1.zeroize();
        d2.zeroize();
        Self {
            dec: s.reversed(rounds),
            enc: s,
            rounds,
            #[cfg(target_arch = "x86_64")]
            sliced: None,
            #[cfg(target_arch = "x86_64")]
            wide: None,
        }
    }
}

/// Loads a block as two big-endian halves.
#[inline(always)]
fn load(block: &Block<Camellia>) -> [u64; 2] {
    let (hi, lo) = block.split_at(8);
    [
        u64::from_be_bytes(hi.try_into().expect("8 bytes")),
        u64::from_be_bytes(lo.try_into().expect("8 bytes")),
    ]
}

/// Stores two halves into a block, big-endian.
#[inline(always)]
fn store(block: &mut Block<Camellia>, x: &[u64; 2]) {
    block[..8].copy_from_slice(&x[0].to_be_bytes());
    block[8..].copy_from_slice(&x[1].to_be_bytes());
}

impl KeySizeUser for Camellia {
    type KeySize = U32;
}

impl KeyInit for Camellia {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        Self::expand(key)
    }

    #[inline]
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        match key.len() {
            16 | 24 | 32 => Ok(Self::expand(key)),
            _ => Err(InvalidLength),
        }
    }
}

impl BlockSizeUser for Camellia {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Camellia {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = Self::BlockSize>) {
        #[cfg(target_arch = "x86_64")]
        if let Some((keys, _)) = &self.sliced {
            let s = Sliced(keys, Backend(&self.enc, self.rounds));
            return match self.wide {
                Some(w) => f.call(&Wide(s, w)),
                None => f.call(&s),
            };
        }
        f.call(&Backend(&self.enc, self.rounds));
    }
}

impl BlockCipherDecrypt for Camellia {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = Self::BlockSize>) {
        #[cfg(target_arch = "x86_64")]
        if let Some((_, keys)) = &self.sliced {
            let s = Sliced(keys, Backend(&self.dec, self.rounds));
            return match self.wide {
                Some(w) => f.call(&Wide(s, w)),
                None => f.call(&s),
            };
        }
        f.call(&Backend(&self.dec, self.rounds));
    }
}

/// Either direction (the schedule decides): one block at a time, or
/// [`PAR_BLOCKS`] interleaved.
struct Backend<'a>(&'a Schedule, usize);

impl Backend<'_> {
    /// Runs `N` blocks through the schedule.
    #[inline(always)]
    fn run<const N: usize>(&self, x: &mut [[u64; 2]; N]) {
        if self.1 == 18 {
            self.0.crypt::<N, 3>(x);
        } else {
            self.0.crypt::<N, 4>(x);
        }
    }

    /// [`PAR_BLOCKS`] blocks, in one function that both directions call:
    /// inlined into each, the two copies were register-allocated apart and
    /// decryption ran 25% slower than encryption on x86-64.
    #[inline(never)]
    fn run_par(&self, x: &mut [[u64; 2]; PAR_BLOCKS]) {
        self.run(x);
    }

    #[inline(always)]
    fn one(&self, mut block: InOut<'_, '_, Block<Camellia>>) {
        let x = load(block.get_in());
        let y = if self.1 == 18 {
            self.0.crypt1::<3>(x)
        } else {
            self.0.crypt1::<4>(x)
        };
        store(block.get_out(), &y);
    }

    #[inline(always)]
    fn par(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let mut x = [[0u64; 2]; PAR_BLOCKS];
        for (x, b) in x.iter_mut().zip(blocks.get_in().iter()) {
            *x = load(b);
        }
        self.run_par(&mut x);
        for (x, b) in x.iter().zip(blocks.get_out().iter_mut()) {
            store(b, x);
        }
    }

    /// A tail of two or more blocks goes through the interleaved path
    /// (padded with dummy blocks): cheaper than one block at a time.
    #[inline(always)]
    fn tail(&self, mut blocks: InOutBuf<'_, '_, Block<Camellia>>) {
        assert!(blocks.len() < PAR_BLOCKS);
        if blocks.len() < 2 {
            for block in blocks {
                self.one(block);
            }
            return;
        }
        let mut x = [[0u64; 2]; PAR_BLOCKS];
        for (x, b) in x.iter_mut().zip(blocks.get_in()) {
            *x = load(b);
        }
        self.run_par(&mut x);
        for (x, b) in x.iter().zip(blocks.get_out()) {
            store(b, x);
        }
    }
}

/// Both directions' backend traits for `$t`, which has `one`, `par` and
/// `tail` (the schedule it holds decides the direction).
macro_rules! backend_traits {
    ($t:ident, $par:ty) => {
        impl BlockSizeUser for $t<'_> {
            type BlockSize = U16;
        }

        impl ParBlocksSizeUser for $t<'_> {
            type ParBlocksSize = $par;
        }

        impl BlockCipherEncBackend for $t<'_> {
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

        impl BlockCipherDecBackend for $t<'_> {
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
    };
}

backend_traits!(Backend, ParSize);

/// x86-64 with AES-NI: 16 blocks byte-sliced; single blocks (CBC
/// encryption) and tails through the table code.
#[cfg(target_arch = "x86_64")]
struct Sliced<'a>(&'a SlicedKeys, Backend<'a>);

#[cfg(target_arch = "x86_64")]
impl Sliced<'_> {
    #[inline(always)]
    fn one(&self, block: InOut<'_, '_, Block<Camellia>>) {
        self.1.one(block);
    }

    #[inline(always)]
    fn par(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        const _: () = assert!(aesni::BLOCKS == 16);
        let (input, output) = blocks.into_raw();
        // SAFETY: `ParBlocks<Self>` is 16 blocks of 16 bytes, readable at
        // `input` and writable at `output` (`InOut`'s guarantee).
        unsafe { aesni::crypt16(self.0, input.cast(), output.cast()) };
    }

    /// Fewer than 16 blocks: four at a time, then the rest, with the table.
    #[inline(always)]
    fn tail(&self, blocks: InOutBuf<'_, '_, Block<Camellia>>) {
        let (chunks, rest) = blocks.into_chunks::<ParSize>();
        for mut chunk in chunks {
            let mut x = [[0u64; 2]; PAR_BLOCKS];
            for (x, b) in x.iter_mut().zip(chunk.get_in().iter()) {
                *x = load(b);
            }
            self.1.run_par(&mut x);
            for (x, b) in x.iter().zip(chunk.get_out().iter_mut()) {
                store(b, x);
            }
        }
        self.1.tail(rest);
    }
}

#[cfg(target_arch = "x86_64")]
backend_traits!(Sliced, U16);

/// x86-64 with AVX2: 32 blocks byte-sliced in ymm registers (the kernel
/// given: VAES, or AES-NI on each half); a tail of 16 or more starts with the
/// 16-block AES-NI kernel, the rest as [`Sliced`].
#[cfg(target_arch = "x86_64")]
struct Wide<'a>(Sliced<'a>, aesni::Wide);

#[cfg(target_arch = "x86_64")]
impl Wide<'_> {
    #[inline(always)]
    fn one(&self, block: InOut<'_, '_, Block<Camellia>>) {
        self.0.one(block);
    }

    #[inline(always)]
    fn par(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        const _: () = assert!(aesni::BLOCKS_WIDE == 32);
        let (input, output) = blocks.into_raw();
        // SAFETY: `ParBlocks<Self>` is 32 blocks of 16 bytes, readable at
        // `input` and writable at `output` (`InOut`'s guarantee).
        unsafe { aesni::crypt32(self.1, (self.0).0, input.cast(), output.cast()) };
    }

    /// Fewer than 32 blocks.
    #[inline(always)]
    fn tail(&self, blocks: InOutBuf<'_, '_, Block<Camellia>>) {
        let (chunks, rest) = blocks.into_chunks::<U16>();
        for chunk in chunks {
            self.0.par(chunk);
        }
        self.0.tail(rest);
    }
}

#[cfg(target_arch = "x86_64")]
backend_traits!(Wide, U32);

impl fmt::Debug for Camellia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Camellia { ... }")
    }
}

impl AlgorithmName for Camellia {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Camellia")
    }
}

impl Drop for Camellia {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
        #[cfg(target_arch = "x86_64")]
        if let Some((e, d)) = &mut self.sliced {
            e.wipe();
            d.wipe();
        }
    }
}

impl ZeroizeOnDrop for Camellia {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ciphers::test_support::XorShift;
    use hex_literal::hex;

    /// RFC 3713, appendix A: the three key sizes over the same plaintext.
    #[test]
    fn rfc3713_vectors() {
        let pt = hex!("0123456789abcdeffedcba9876543210");
        let cases: [(&[u8], [u8; 16]); 3] = [
            (
                &hex!("0123456789abcdeffedcba9876543210"),
                hex!("67673138549669730857065648eabe43"),
            ),
            (
                &hex!("0123456789abcdeffedcba98765432100011223344556677"),
                hex!("b4993401b3e996f84ee5cee7d79b09b9"),
            ),
            (
                &hex!("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff"),
                hex!("9acc237dff16d76c20ef7c919e3a7509"),
            ),
        ];
        for (key, ct) in cases {
            let c = Camellia::new_from_slice(key).unwrap();
            let mut block = Block::<Camellia>::from(pt);
            c.encrypt_block(&mut block);
            assert_eq!(block[..], ct, "key {}", hex::encode(key));
            c.decrypt_block(&mut block);
            assert_eq!(block[..], pt);
            // The interleaved path and every tail length give the same blocks.
            for n in 1..=2 * PAR_BLOCKS + 1 {
                let mut blocks = vec![Block::<Camellia>::from(pt); n];
                c.encrypt_blocks(&mut blocks);
                assert!(blocks.iter().all(|b| b[..] == ct), "n={n}");
                c.decrypt_blocks(&mut blocks);
                assert!(blocks.iter().all(|b| b[..] == pt), "n={n}");
            }
        }
    }

    #[test]
    fn sp_tables_spread_the_sboxes() {
        // SBOX1(0) = 0x70 in every output byte that P takes byte 0 into;
        // the other S-boxes are rotations of SBOX1 (RFC 3713, 2.4.4).
        assert_eq!(SP.0[0][0], 0x7070_7000_7000_0070);
        assert_eq!(sbox(2, 0), 0xE0);
        assert_eq!(sbox(3, 0), 0x38);
        assert_eq!(sbox(4, 1), SBOX1[2]);
        let mut seen = [false; 256];
        for &v in &SBOX1 {
            assert!(!seen[usize::from(v)]);
            seen[usize::from(v)] = true;
        }
    }

    #[test]
    fn rejects_bad_key_lengths() {
        for len in [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 64] {
            assert!(Camellia::new_from_slice(&vec![0u8; len]).is_err(), "{len}");
        }
    }

    #[test]
    fn names() {
        let c = Camellia::new_from_slice(&[7u8; 16]).unwrap();
        assert_eq!(format!("{c:?}"), "Camellia { ... }");
    }

    /// One block both ways against the `camellia` crate.
    fn check_block<R>(ours: &Camellia, reference: &R, rng: &mut XorShift)
    where
        R: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    {
        let mut pt = Block::<Camellia>::default();
        rng.fill(&mut pt);
        let (mut a, mut b) = (pt, pt);
        ours.encrypt_block(&mut a);
        reference.encrypt_block(&mut b);
        assert_eq!(a, b, "encrypt");
        ours.decrypt_block(&mut a);
        assert_eq!(a, pt);
        let (mut a, mut b) = (pt, pt);
        ours.decrypt_block(&mut a);
        reference.decrypt_block(&mut b);
        assert_eq!(a, b, "decrypt");
    }

    /// Many blocks (every length modulo `PAR_BLOCKS`, in place and buffer to
    /// buffer) both ways against the `camellia` crate.
    fn check_blocks<R>(ours: &Camellia, reference: &R, n: usize, rng: &mut XorShift)
    where
        R: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    {
        let mut data = vec![Block::<Camellia>::default(); n];
        for blk in &mut data {
            rng.fill(blk);
        }
        let (mut a, mut b) = (data.clone(), data.clone());
        ours.encrypt_blocks(&mut a);
        reference.encrypt_blocks(&mut b);
        assert_eq!(a, b, "encrypt_blocks n={n}");
        let mut out = vec![Block::<Camellia>::default(); n];
        ours.encrypt_blocks_b2b(&data, &mut out).unwrap();
        assert_eq!(out, b, "encrypt_blocks_b2b n={n}");
        ours.decrypt_blocks(&mut a);
        assert_eq!(a, data, "round trip n={n}");
        let (mut a, mut b) = (data.clone(), data.clone());
        ours.decrypt_blocks(&mut a);
        reference.decrypt_blocks(&mut b);
        assert_eq!(a, b, "decrypt_blocks n={n}");
        ours.decrypt_blocks_b2b(&data, &mut out).unwrap();
        assert_eq!(out, b, "decrypt_blocks_b2b n={n}");
    }

    /// A byte-sliced kernel (`backend`, `batch` blocks a call) against the
    /// table code (forced on each side by the constructor): random keys of
    /// every size, batches with every tail length and lengths across the 16
    /// and 32-block boundaries, both directions, and RFC 3713's vectors.
    /// Skipped, with a note, on a CPU without it.
    #[cfg(target_arch = "x86_64")]
    fn check_kernel(backend: &str, batch: usize, available: bool) {
        use std::io::Write;
        if !available {
            writeln!(
                std::io::stderr(),
                "note: the Camellia {backend} kernel is not tested: this CPU lacks it"
            )
            .unwrap();
            return;
        }
        let mut rng = XorShift(0x0123_4567_89AB_CDEF);
        let boundaries = [1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 97];
        for iter in 0..300 + boundaries.len() * 3 {
            let len = [16, 24, 32][iter % 3];
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let fast = Camellia::expand_for(&key[..len], backend);
            let table = Camellia::expand_for(&key[..len], "table");
            assert_eq!((fast.backend(), table.backend()), (backend, "table"));
            let n = match iter.checked_sub(300) {
                Some(i) => boundaries[i / 3],
                None => batch * (1 + iter % 3) + iter % (batch + 1),
            };
            let mut data = vec![Block::<Camellia>::default(); n];
            for b in &mut data {
                rng.fill(b);
            }
            let (mut a, mut b) = (data.clone(), data.clone());
            fast.encrypt_blocks(&mut a);
            table.encrypt_blocks(&mut b);
            assert_eq!(a, b, "encrypt, {len}-byte key, {n} blocks");
            fast.decrypt_blocks(&mut a);
            assert_eq!(a, data, "round trip, {len}-byte key, {n} blocks");
            let mut a = data.clone();
            fast.decrypt_blocks(&mut a);
            table.decrypt_blocks(&mut b);
            table.decrypt_blocks(&mut b);
            assert_eq!(a, b, "decrypt, {len}-byte key, {n} blocks");
        }
        // RFC 3713's vectors through the kernel.
        let pt = hex!("0123456789abcdeffedcba9876543210");
        let key = hex!("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff");
        let ct = [
            hex!("67673138549669730857065648eabe43"),
            hex!("b4993401b3e996f84ee5cee7d79b09b9"),
            hex!("9acc237dff16d76c20ef7c919e3a7509"),
        ];
        for (len, ct) in [16, 24, 32].into_iter().zip(ct) {
            let c = Camellia::expand_for(&key[..len], backend);
            let mut blocks = vec![Block::<Camellia>::from(pt); batch];
            c.encrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|b| b[..] == ct), "{len}");
            c.decrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|b| b[..] == pt), "{len}");
        }
    }

    /// The AES-NI kernel against the table code, 16-block batches.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_kernel_matches_the_table_code() {
        check_kernel("aesni-avx", aesni::BLOCKS, aesni::available());
    }

    /// The VAES kernel against the table code, 32-block batches and their
    /// tails through the AES-NI kernel.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vaes_kernel_matches_the_table_code() {
        let available = aesni::available_wide(aesni::Wide::Vaes);
        check_kernel("vaes-avx2", aesni::BLOCKS_WIDE, available);
    }

    /// The 32-block kernel without VAES (AES-NI on each 128-bit half)
    /// against the table code, 32-block batches and their tails.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_avx2_kernel_matches_the_table_code() {
        let available = aesni::available_wide(aesni::Wide::AesniAvx2);
        check_kernel("aesni-avx2", aesni::BLOCKS_WIDE, available);
    }

    /// CTR as the Camellia rows run it (`op::camellia_modes`: the kernels'
    /// fused CTR, the generic CTR for the tail) with backend `backend`
    /// forced, against the generic CTR over the table code and, for some,
    /// over the `camellia` crate: random keys of every size, every length
    /// from 0 to 2100 bytes (partial last blocks, the 16 and 32-block batch
    /// boundaries) and some longer, counters whose low 32 or 64 bits carry
    /// inside a batch, or that wrap at 2^128, and chained calls. Skipped,
    /// with a note, on a CPU without the backend.
    fn check_ctr(backend: &str) {
        use crate::modes::BlockModes;
        use std::io::Write;
        if Camellia::expand_for(&[0; 16], backend).backend() != backend {
            writeln!(
                std::io::stderr(),
                "note: Camellia CTR at {backend} is not tested: this CPU lacks it"
            )
            .unwrap();
            return;
        }
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        // Counter starts, as (high, low) 64-bit words: random, the low 32
        // or 64 bits carrying early or late in a 16 or 32-block batch, and
        // the wrap at 2^128.
        let starts = |rng: &mut XorShift, i: usize| -> u128 {
            let r = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
            let near = |top: u128, back: u128| (r & !(top - 1)) | (top - 1 - back);
            match i % 8 {
                0 | 1 => r,
                2 => near(1 << 32, (i / 8 % 40) as u128),
                3 => near(1 << 64, (i / 8 % 40) as u128),
                4 => near(1 << 64, (i / 8 % 70) as u128),
                5 => u128::MAX - (i / 8 % 40) as u128,
                6 => u128::MAX - (i / 8 % 70) as u128,
                _ => (i / 8 % 40) as u128,
            }
        };
        let long = [4096 + 17, 4 * 4096 - 1, 16384 + 512 + 255, 40000];
        for (i, len) in (0..=2100).chain(long).enumerate() {
            let klen = [16, 24, 32][i % 3];
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let key = &key[..klen];
            let start = starts(&mut rng, i).to_be_bytes();
            let mut data = vec![0u8; len];
            rng.fill(&mut data);
            let mut fast = crate::op::camellia_modes(Camellia::expand_for(key, backend));
            assert_eq!(fast.backend(), backend);
            let mut table = BlockModes::new(Camellia::expand_for(key, "table"));
            let (mut a, mut b) = (data.clone(), data.clone());
            let (mut ca, mut cb) = (start, start);
            fast.ctr_apply(&mut ca, &mut a);
            table.ctr_apply(&mut cb, &mut b);
            let what = format!("{backend}, {klen}-byte key, {len} bytes from {start:02x?}");
            assert!(a == b, "{what}");
            assert_eq!(ca, cb, "counter after, {what}");
            // Two calls split at a block boundary are one call.
            let cut = 16 * rng.below(len / 16 + 1);
            let mut s = data.clone();
            let (x, y) = s.split_at_mut(cut);
            let mut c = start;
            fast.ctr_apply(&mut c, x);
            fast.ctr_apply(&mut c, y);
            assert!(s == b, "split at {cut}, {what}");
            assert_eq!(c, cb, "counter after split, {what}");
            if i % 16 == 0 {
                // The same through the generic CTR over the `camellia` crate.
                let (mut r, mut cr) = (data.clone(), start);
                match klen {
                    16 => BlockModes::new(::camellia::Camellia128::new_from_slice(key).unwrap())
                        .ctr_apply(&mut cr, &mut r),
                    24 => BlockModes::new(::camellia::Camellia192::new_from_slice(key).unwrap())
                        .ctr_apply(&mut cr, &mut r),
                    _ => BlockModes::new(::camellia::Camellia256::new_from_slice(key).unwrap())
                        .ctr_apply(&mut cr, &mut r),
                }
                assert!(r == a, "camellia crate, {what}");
            }
        }
    }

    /// Camellia CTR rows at each backend against the generic CTR.
    #[test]
    fn ctr_matches_generic_ctr() {
        check_ctr("table");
    }

    /// The 16-block kernel's fused CTR.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_ctr_matches_generic_ctr() {
        check_ctr("aesni-avx");
    }

    /// The VAES kernel's fused CTR (and the 16-block one on tails).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vaes_ctr_matches_generic_ctr() {
        check_ctr("vaes-avx2");
    }

    /// The 32-block AES-NI kernel's fused CTR (and the 16-block one on tails).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_avx2_ctr_matches_generic_ctr() {
        check_ctr("aesni-avx2");
    }

    /// CBC as the Camellia rows run it (`op::camellia_modes`: encryption by
    /// its own one-block loop, decryption by the kernels' fused CBC and the
    /// generic mode for the tail) with
    /// `backend` forced, against the generic CBC decryption over the table
    /// code and, for some, CBC encryption over the `camellia` crate: random
    /// keys of every size, every whole-block length up to 100 blocks (the 16
    /// and 32-block batch boundaries) and some longer, and calls split at a
    /// block boundary (the IV chains). Skipped, with a note, on a CPU
    /// without the backend.
    fn check_cbc(backend: &str) {
        use crate::modes::BlockModes;
        use std::io::Write;
        if Camellia::expand_for(&[0; 16], backend).backend() != backend {
            writeln!(
                std::io::stderr(),
                "note: Camellia CBC at {backend} is not tested: this CPU lacks it"
            )
            .unwrap();
            return;
        }
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        for (i, blocks) in (0..=100).chain([256 + 17, 1024 + 31, 2500]).enumerate() {
            let len = 16 * blocks;
            let klen = [16, 24, 32][i % 3];
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            let key = &key[..klen];
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            let mut plain = vec![0u8; len];
            rng.fill(&mut plain);
            let mut fast = crate::op::camellia_modes(Camellia::expand_for(key, backend));
            assert_eq!(fast.backend(), backend);
            let mut table = BlockModes::new(Camellia::expand_for(key, "table"));
            let mut ct = plain.clone();
            table.cbc_encrypt(&mut iv.clone(), &mut ct);
            if i % 16 == 0 {
                // The ciphertext is the `camellia` crate's.
                let mut r = plain.clone();
                let mut v = iv;
                match klen {
                    16 => BlockModes::new(::camellia::Camellia128::new_from_slice(key).unwrap())
                        .cbc_encrypt(&mut v, &mut r),
                    24 => BlockModes::new(::camellia::Camellia192::new_from_slice(key).unwrap())
                        .cbc_encrypt(&mut v, &mut r),
                    _ => BlockModes::new(::camellia::Camellia256::new_from_slice(key).unwrap())
                        .cbc_encrypt(&mut v, &mut r),
                }
                assert!(r == ct, "camellia crate, {klen}-byte key, {len} bytes");
            }
            let what = format!("{backend}, {klen}-byte key, {len} bytes");
            let want_iv: [u8; 16] = if len == 0 {
                iv
            } else {
                ct[len - 16..].try_into().unwrap()
            };
            // Encryption (the row's own loop) gives the same ciphertext.
            let (mut e, mut ve) = (plain.clone(), iv);
            fast.cbc_encrypt(&mut ve, &mut e);
            assert!(e == ct, "encryption, {what}");
            assert_eq!(ve, want_iv, "IV after encryption, {what}");
            let (mut a, mut va) = (ct.clone(), iv);
            fast.cbc_decrypt(&mut va, &mut a);
            assert!(a == plain, "{what}");
            assert_eq!(va, want_iv, "IV after, {what}");
            let (mut b, mut vb) = (ct.clone(), iv);
            table.cbc_decrypt(&mut vb, &mut b);
            assert!(b == plain, "table, {what}");
            // Two calls split at a block boundary are one call.
            let cut = 16 * rng.below(blocks + 1);
            let (mut s, mut v) = (ct.clone(), iv);
            let (x, y) = s.split_at_mut(cut);
            fast.cbc_decrypt(&mut v, x);
            fast.cbc_decrypt(&mut v, y);
            assert!(s == plain, "split at {cut}, {what}");
            let (mut s, mut v) = (plain.clone(), iv);
            let (x, y) = s.split_at_mut(cut);
            fast.cbc_encrypt(&mut v, x);
            fast.cbc_encrypt(&mut v, y);
            assert!(s == ct, "encryption split at {cut}, {what}");
        }
    }

    /// [`Camellia::cbc_encrypt`] against the generic CBC of
    /// [`crate::modes::BlockModes`] over the `camellia` crate, for each key
    /// size: random keys, IVs and lengths (0 to 40 blocks), one call or
    /// split in two calls that must chain.
    #[test]
    fn cbc_encrypt_matches_the_camellia_crate() {
        use crate::ciphers::test_support::check_cbc_encrypt;
        let ours = |key: &[u8]| Camellia::new_from_slice(key).unwrap();
        check_cbc_encrypt(
            200,
            |_, _| 16,
            ours,
            Camellia::cbc_encrypt,
            |key| ::camellia::Camellia128::new_from_slice(key).unwrap(),
        );
        check_cbc_encrypt(
            200,
            |_, _| 24,
            ours,
            Camellia::cbc_encrypt,
            |key| ::camellia::Camellia192::new_from_slice(key).unwrap(),
        );
        check_cbc_encrypt(
            200,
            |_, _| 32,
            ours,
            Camellia::cbc_encrypt,
            |key| ::camellia::Camellia256::new_from_slice(key).unwrap(),
        );
    }

    /// Camellia CBC at each backend against the generic mode.
    #[test]
    fn cbc_matches_generic_cbc() {
        check_cbc("table");
    }

    /// The 16-block kernel's fused CBC decryption.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_cbc_matches_generic_cbc() {
        check_cbc("aesni-avx");
    }

    /// The VAES kernel's fused CBC decryption (and the 16-block one on tails).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn vaes_cbc_matches_generic_cbc() {
        check_cbc("vaes-avx2");
    }

    /// The 32-block AES-NI kernel's fused CBC decryption (and the 16-block
    /// one on tails).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn aesni_avx2_cbc_matches_generic_cbc() {
        check_cbc("aesni-avx2");
    }

    /// Random keys of every size against the `camellia` crate.
    #[test]
    fn matches_reference_crate() {
        let mut rng = XorShift(0x5DEE_CE66_D1CE_4E5B);
        for iter in 0..600 {
            let n = if iter % 50 == 0 {
                67
            } else {
                iter % (2 * PAR_BLOCKS + 2)
            };
            let mut key = [0u8; 32];
            rng.fill(&mut key);
            for len in [16, 24, 32] {
                let ours = Camellia::new_from_slice(&key[..len]).unwrap();
                match len {
                    16 => {
                        let r = ::camellia::Camellia128::new_from_slice(&key[..len]).unwrap();
                        check_block(&ours, &r, &mut rng);
                        check_blocks(&ours, &r, n, &mut rng);
                    }
                    24 => {
                        let r = ::camellia::Camellia192::new_from_slice(&key[..len]).unwrap();
                        check_block(&ours, &r, &mut rng);
                        check_blocks(&ours, &r, n, &mut rng);
                    }
                    _ => {
                        let r = ::camellia::Camellia256::new_from_slice(&key[..len]).unwrap();
                        check_block(&ours, &r, &mut rng);
                        check_blocks(&ours, &r, n, &mut rng);
                    }
                }
            }
        }
    }
}
