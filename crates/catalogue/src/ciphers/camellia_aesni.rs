//! Camellia on x86-64 with AES-NI and AVX: 16 blocks at a time, byte-sliced,
//! the S-boxes computed with `AESENCLAST`; with AVX2 the same kernel on ymm
//! registers runs 32 blocks, 16 in each 128-bit lane, its S-boxes with VAES
//! or, without VAES, with AES-NI on each 128-bit half.
//!
//! The 16 blocks are transposed so that register `j` holds byte `j` of every
//! block (byte 0 the most significant of the left half). Then:
//! - Camellia's SBOX1 is affine-equivalent to the AES S-box: SBOX1(x) =
//!   post(AES_SBOX(pre(x))), with `pre` and `post` affine maps over GF(2)
//!   computed as two 16-entry nibble lookups (`PSHUFB`); SBOX2 and SBOX3 fold
//!   their output rotation into `post`, SBOX4 its input rotation into `pre`.
//!   It is as well affine-equivalent to the inverse AES S-box (other filters);
//! - a round key is folded into that round's pre-filter tables at key setup
//!   (whitening and FL keys are broadcast bytes);
//! - `AESENCLAST` with a zero key is ShiftRows then SubBytes, `AESDECLAST`
//!   the inverse ShiftRows then the inverse S-box: rounds alternate between
//!   them and the right half is kept in ShiftRows lane order, so every
//!   round's output lands in the lanes of the half it is XORed into;
//! - the P-function is 16 register XORs, the FL layers 32-bit AND/OR/rotate
//!   done bytewise.
//!
//! The approach is Jussi Kivilinna's (*Block Ciphers: Fast Implementations on
//! x86-64 Architecture*, 2013, pp. 42-50; libgcrypt's and Linux's
//! `camellia-aesni-avx`). The filter constants were derived and checked
//! exhaustively against SBOX1-4 by a Python model of this data path. Without
//! table lookups, this code is constant-time, unlike the table path.
//!
//! Tested against the table implementation (itself tested against the
//! `camellia` crate and RFC 3713) in `camellia.rs`.

use core::arch::x86_64::*;

use super::camellia::Schedule;

/// Blocks per call of the AES-NI kernel ([`crypt16`]).
pub const BLOCKS: usize = 16;
/// Blocks per call of the 32-block kernels ([`crypt32`]).
pub const BLOCKS_WIDE: usize = 32;

/// A 32-block kernel: both run the same code on ymm registers and differ
/// only in how they compute the S-boxes' `AESENCLAST`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wide {
    /// One VAES instruction on the whole register.
    Vaes,
    /// Without VAES: two AES-NI instructions, one on each 128-bit half
    /// (libgcrypt's `camellia-aesni-avx2`). The rest of the round is 256-bit
    /// AVX2, so this still does twice the work per instruction of the
    /// 16-block kernel in all but the S-boxes' AES step.
    AesniAvx2,
}

/// Pre-filter of SBOX1-3: low-nibble and high-nibble tables.
const PRE_S1: [[u8; 16]; 2] = [
    [
        0x45, 0xe8, 0x40, 0xed, 0x2e, 0x83, 0x2b, 0x86, 0x4b, 0xe6, 0x4e, 0xe3, 0x20, 0x8d, 0x25,
        0x88,
    ],
    [
        0x00, 0x51, 0xf1, 0xa0, 0x8a, 0xdb, 0x7b, 0x2a, 0x09, 0x58, 0xf8, 0xa9, 0x83, 0xd2, 0x72,
        0x23,
    ],
];
/// Pre-filter of SBOX4 (SBOX1's with the input rotated left by one).
const PRE_S4: [[u8; 16]; 2] = [
    [
        0x45, 0x40, 0x2e, 0x2b, 0x4b, 0x4e, 0x20, 0x25, 0x14, 0x11, 0x7f, 0x7a, 0x1a, 0x1f, 0x71,
        0x74,
    ],
    [
        0x00, 0xf1, 0x8a, 0x7b, 0x09, 0xf8, 0x83, 0x72, 0xad, 0x5c, 0x27, 0xd6, 0xa4, 0x55, 0x2e,
        0xdf,
    ],
];
/// Post-filter of SBOX1 and SBOX4.
const POST_S1: [[u8; 16]; 2] = [
    [
        0x3c, 0xcc, 0xcf, 0x3f, 0x32, 0xc2, 0xc1, 0x31, 0xdc, 0x2c, 0x2f, 0xdf, 0xd2, 0x22, 0x21,
        0xd1,
    ],
    [
        0x00, 0xf9, 0x86, 0x7f, 0xd7, 0x2e, 0x51, 0xa8, 0xa4, 0x5d, 0x22, 0xdb, 0x73, 0x8a, 0xf5,
        0x0c,
    ],
];
/// Post-filter of SBOX2 (SBOX1's output rotated left by one).
const POST_S2: [[u8; 16]; 2] = [
    [
        0x78, 0x99, 0x9f, 0x7e, 0x64, 0x85, 0x83, 0x62, 0xb9, 0x58, 0x5e, 0xbf, 0xa5, 0x44, 0x42,
        0xa3,
    ],
    [
        0x00, 0xf3, 0x0d, 0xfe, 0xaf, 0x5c, 0xa2, 0x51, 0x49, 0xba, 0x44, 0xb7, 0xe6, 0x15, 0xeb,
        0x18,
    ],
];
/// Post-filter of SBOX3 (SBOX1's output rotated right by one).
const POST_S3: [[u8; 16]; 2] = [
    [
        0x1e, 0x66, 0xe7, 0x9f, 0x19, 0x61, 0xe0, 0x98, 0x6e, 0x16, 0x97, 0xef, 0x69, 0x11, 0x90,
        0xe8,
    ],
    [
        0x00, 0xfc, 0x43, 0xbf, 0xeb, 0x17, 0xa8, 0x54, 0x52, 0xae, 0x11, 0xed, 0xb9, 0x45, 0xfa,
        0x06,
    ],
];
/// Pre-filter of SBOX1-3 in the rounds that use `AESDECLAST` (its inverse
/// S-box): `A(pre(x)) ^ 0x63`, A the AES S-box's linear map.
const PRE_S1_DEC: [[u8; 16]; 2] = [
    [
        0xc7, 0x30, 0xa4, 0x53, 0x3a, 0xcd, 0x59, 0xae, 0x7d, 0x8a, 0x1e, 0xe9, 0x80, 0x77, 0xe3,
        0x14,
    ],
    [
        0x00, 0x29, 0x45, 0x6c, 0x49, 0x60, 0x0c, 0x25, 0xe7, 0xce, 0xa2, 0x8b, 0xae, 0x87, 0xeb,
        0xc2,
    ],
];
/// Pre-filter of SBOX4 in the `AESDECLAST` rounds.
const PRE_S4_DEC: [[u8; 16]; 2] = [
    [
        0xc7, 0xa4, 0x3a, 0x59, 0x7d, 0x1e, 0x80, 0xe3, 0xee, 0x8d, 0x13, 0x70, 0x54, 0x37, 0xa9,
        0xca,
    ],
    [
        0x00, 0x45, 0x49, 0x0c, 0xe7, 0xa2, 0xae, 0xeb, 0xf7, 0xb2, 0xbe, 0xfb, 0x10, 0x55, 0x59,
        0x1c,
    ],
];
/// Post-filter of SBOX1 and SBOX4 in the `AESDECLAST` rounds: `post(A(y) ^ 0x63)`.
const POST_S1_DEC: [[u8; 16]; 2] = [
    [
        0x6e, 0x7a, 0x0c, 0x18, 0x28, 0x3c, 0x4a, 0x5e, 0x82, 0x96, 0xe0, 0xf4, 0xc4, 0xd0, 0xa6,
        0xb2,
    ],
    [
        0x00, 0xfc, 0xf6, 0x0a, 0x7e, 0x82, 0x88, 0x74, 0x49, 0xb5, 0xbf, 0x43, 0x37, 0xcb, 0xc1,
        0x3d,
    ],
];
/// Post-filter of SBOX2 in the `AESDECLAST` rounds.
const POST_S2_DEC: [[u8; 16]; 2] = [
    [
        0xdc, 0xf4, 0x18, 0x30, 0x50, 0x78, 0x94, 0xbc, 0x05, 0x2d, 0xc1, 0xe9, 0x89, 0xa1, 0x4d,
        0x65,
    ],
    [
        0x00, 0xf9, 0xed, 0x14, 0xfc, 0x05, 0x11, 0xe8, 0x92, 0x6b, 0x7f, 0x86, 0x6e, 0x97, 0x83,
        0x7a,
    ],
];
/// Post-filter of SBOX3 in the `AESDECLAST` rounds.
const POST_S3_DEC: [[u8; 16]; 2] = [
    [
        0x37, 0x3d, 0x06, 0x0c, 0x14, 0x1e, 0x25, 0x2f, 0x41, 0x4b, 0x70, 0x7a, 0x62, 0x68, 0x53,
        0x59,
    ],
    [
        0x00, 0x7e, 0x7b, 0x05, 0x3f, 0x41, 0x44, 0x3a, 0xa4, 0xda, 0xdf, 0xa1, 0x9b, 0xe5, 0xe0,
        0x9e,
    ],
];
/// AES ShiftRows as a byte shuffle.
const SHIFT_ROWS: [u8; 16] = [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11];
/// The inverse of AES ShiftRows as a byte shuffle.
const INV_SHIFT_ROWS: [u8; 16] = [
    0x00, 0x0d, 0x0a, 0x07, 0x04, 0x01, 0x0e, 0x0b, 0x08, 0x05, 0x02, 0x0f, 0x0c, 0x09, 0x06, 0x03,
];

/// One subkey as eight registers' worth of bytes: `b[j]` is key byte `j`
/// (0 the most significant) sixteen times.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Bytes8 {
    b: [[u8; 16]; 8],
}

impl Bytes8 {
    fn of(k: u64) -> Self {
        let mut b = [[0u8; 16]; 8];
        for (j, row) in b.iter_mut().enumerate() {
            *row = [k.to_be_bytes()[j]; 16];
        }
        Self { b }
    }
}

/// A round's key folded into its pre-filters: for key byte `j`, the nibble
/// tables of `x -> pre(x ^ k_j)` (`lo[n ^ k_lo]`, `hi[m ^ k_hi]`), so the
/// key costs nothing in the round.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct KeyedPre {
    t: [[[u8; 16]; 2]; 8],
}

impl KeyedPre {
    /// Round key `k`; `dec` for the rounds that use `AESDECLAST`.
    fn of(k: u64, dec: bool) -> Self {
        let mut t = [[[0u8; 16]; 2]; 8];
        for (j, (t, kb)) in t.iter_mut().zip(k.to_be_bytes()).enumerate() {
            let base = pre_table(j, dec);
            for n in 0..16 {
                t[0][n] = base[0][n ^ usize::from(kb & 15)];
                t[1][n] = base[1][n ^ usize::from(kb >> 4)];
            }
        }
        Self { t }
    }
}

/// The pre-filter of byte `j` (S-box 1, 2, 3, 4, 2, 3, 4, 1: SBOX4 for
/// bytes 3 and 6), for an `AESENCLAST` or an `AESDECLAST` round.
fn pre_table(j: usize, dec: bool) -> &'static [[u8; 16]; 2] {
    match (j == 3 || j == 6, dec) {
        (false, false) => &PRE_S1,
        (true, false) => &PRE_S4,
        (false, true) => &PRE_S1_DEC,
        (true, true) => &PRE_S4_DEC,
    }
}

/// A direction's subkeys for the byte-sliced kernel.
#[derive(Clone)]
pub struct SlicedKeys {
    kw: [Bytes8; 4],
    /// Round `i`'s key in its pre-filters: even rounds use `AESENCLAST`,
    /// odd ones `AESDECLAST`.
    k: [KeyedPre; 24],
    ke: [Bytes8; 6],
    /// Groups of six rounds: 3 (128-bit keys) or 4.
    groups: usize,
}

impl SlicedKeys {
    /// The kernel's form of `s` for `rounds` (18 or 24) rounds.
    pub fn new(s: &Schedule, rounds: usize) -> Box<Self> {
        let mut k = [KeyedPre {
            t: [[[0; 16]; 2]; 8],
        }; 24];
        for (i, (k, &key)) in k.iter_mut().zip(&s.k).enumerate() {
            *k = KeyedPre::of(key, i % 2 == 1);
        }
        Box::new(Self {
            kw: s.kw.map(Bytes8::of),
            k,
            ke: s.ke.map(Bytes8::of),
            groups: rounds / 6,
        })
    }

    /// Overwrites the keys.
    pub fn wipe(&mut self) {
        use zeroize::Zeroize;
        for b in self.kw.iter_mut().chain(&mut self.ke) {
            b.b.zeroize();
        }
        for k in &mut self.k {
            k.t.zeroize();
        }
    }
}

/// Whether this CPU runs the 16-block kernel (the dispatch decides whether
/// it may).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("avx")
}

/// Whether this CPU runs the 32-block kernel `w`.
pub fn available_wide(w: Wide) -> bool {
    available()
        && std::arch::is_x86_feature_detected!("avx2")
        && (w == Wide::AesniAvx2 || std::arch::is_x86_feature_detected!("vaes"))
}

/// Encrypts or decrypts (the keys decide) the 16 blocks at `input` into
/// `output` (they may be the same place: every block is read before any is
/// written).
///
/// # Safety
/// `input` must be valid for reading and `output` for writing 256 bytes.
pub unsafe fn crypt16(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    assert!(available(), "AES-NI and AVX");
    // SAFETY: the CPU has AES-NI and AVX (checked above); the pointers as
    // the caller promised.
    unsafe { crypt16_aesni(keys, input, output) }
}

/// [`crypt16`] for 32 blocks (512 bytes) on 256-bit registers, with kernel
/// `w`.
///
/// # Safety
/// `input` must be valid for reading and `output` for writing 512 bytes.
pub unsafe fn crypt32(w: Wide, keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    assert!(available_wide(w), "{w:?}: AES-NI, AVX2 (and VAES)");
    // SAFETY: the CPU has the kernel's features (checked above); the
    // pointers as the caller promised.
    unsafe {
        match w {
            Wide::Vaes => crypt32_vaes(keys, input, output),
            Wide::AesniAvx2 => crypt32_aesni_avx2(keys, input, output),
        }
    }
}

/// CTR over the whole 16-block (`w` `None`) or 32-block batches at the
/// start of `data`: XORs the key stream of the big-endian counter blocks
/// `*c`, `*c + 1`, ... (mod 2^128, as OpenSSL) into them and advances `*c`
/// by the blocks used. Returns the bytes done (`data.len()` rounded down to
/// a batch); the caller does the rest.
///
/// The kernels make the counter blocks in registers and XOR the data as they
/// store their output: no counter buffer, and the data is read and written
/// once. A batch in which the low 64 bits of the counter carry (once in 2^59
/// batches, and at the wrap) takes a slower path: its counter blocks written
/// out, encrypted by [`crypt16`]/[`crypt32`], then XORed.
///
/// `keys` must be the encryption keys.
pub fn ctr(w: Option<Wide>, keys: &SlicedKeys, c: &mut u128, data: &mut [u8]) -> usize {
    let blocks = if w.is_some() { BLOCKS_WIDE } else { BLOCKS };
    match w {
        Some(w) => assert!(available_wide(w), "{w:?}: AES-NI, AVX2 (and VAES)"),
        None => assert!(available(), "AES-NI and AVX"),
    }
    let done = data.len() / (16 * blocks) * (16 * blocks);
    for batch in data[..done].chunks_exact_mut(16 * blocks) {
        let p = batch.as_mut_ptr();
        if (*c as u64).checked_add(blocks as u64 - 1).is_some() {
            // SAFETY: the CPU has the kernel's features (asserted above);
            // `batch` is `blocks` blocks; no carry out of the low word in
            // the batch (just checked).
            unsafe {
                match w {
                    None => ctr16_aesni(keys, *c, p),
                    Some(Wide::Vaes) => ctr32_vaes(keys, *c, p),
                    Some(Wide::AesniAvx2) => ctr32_aesni_avx2(keys, *c, p),
                }
            }
        } else {
            let mut stream = [0u8; 16 * BLOCKS_WIDE];
            let stream = &mut stream[..16 * blocks];
            for (i, s) in stream.chunks_exact_mut(16).enumerate() {
                s.copy_from_slice(&c.wrapping_add(i as u128).to_be_bytes());
            }
            let s = stream.as_mut_ptr();
            // SAFETY: `stream` is `blocks` blocks, encrypted in place; the
            // features as asserted above.
            unsafe {
                match w {
                    None => crypt16(keys, s, s),
                    Some(w) => crypt32(w, keys, s, s),
                }
            }
            for (d, s) in batch.iter_mut().zip(&*stream) {
                *d ^= s;
            }
        }
        *c = c.wrapping_add(blocks as u128);
    }
    done
}

/// CBC decryption over the whole 16-block (`w` `None`) or 32-block batches
/// at the start of `data`, in place, chained from `iv`, which becomes the
/// last ciphertext block done. Returns the bytes done (`data.len()` rounded
/// down to a batch); the caller does the rest.
///
/// The kernels XOR each decrypted block with the ciphertext before it as
/// they store it: no copy of the ciphertext and no second pass.
///
/// `keys` must be the decryption keys.
pub fn cbc_decrypt(
    w: Option<Wide>,
    keys: &SlicedKeys,
    iv: &mut [u8; 16],
    data: &mut [u8],
) -> usize {
    let blocks = if w.is_some() { BLOCKS_WIDE } else { BLOCKS };
    match w {
        Some(w) => assert!(available_wide(w), "{w:?}: AES-NI, AVX2 (and VAES)"),
        None => assert!(available(), "AES-NI and AVX"),
    }
    let done = data.len() / (16 * blocks) * (16 * blocks);
    for batch in data[..done].chunks_exact_mut(16 * blocks) {
        let last: [u8; 16] = batch[batch.len() - 16..].try_into().expect("a block");
        let p = batch.as_mut_ptr();
        // SAFETY: the CPU has the kernel's features (asserted above);
        // `batch` is `blocks` blocks.
        unsafe {
            match w {
                None => cbc_dec16_aesni(keys, iv, p),
                Some(Wide::Vaes) => cbc_dec32_vaes(keys, iv, p),
                Some(Wide::AesniAvx2) => cbc_dec32_aesni_avx2(keys, iv, p),
            }
        }
        *iv = last;
    }
    done
}

/// A register of byte slices: each 128-bit lane holds one byte position of
/// 16 blocks. The kernel is written once over it, for xmm (16 blocks) and
/// ymm (32: lane 1 holds blocks 16-31, and every operation, `AESENCLAST`
/// included, stays within its lane), the latter with VAES ([`__m256i`]) or
/// AES-NI on each half ([`Halves`]).
///
/// # Safety
/// Every method needs the CPU features of its implementation; callers run
/// them only inside functions compiled with those features (where these
/// `#[inline(always)]` methods inline to single instructions), after
/// checking the CPU has them.
trait Slices: Copy {
    /// Block `b` of each lane: `p + 16 * b` into lane 0, `p + 16 * (b + 16)`
    /// into lane 1.
    unsafe fn load_block(p: *const u8, b: usize) -> Self;
    /// The block at `lo` into lane 0 and the one at `hi` into lane 1 (xmm:
    /// `lo` only).
    unsafe fn load_lanes(lo: *const u8, hi: *const u8) -> Self;
    /// Stores as [`Slices::load_block`] loads.
    unsafe fn store_block(self, p: *mut u8, b: usize);
    /// The same 16 bytes in every lane.
    unsafe fn splat(t: &[u8; 16]) -> Self;
    /// All zero.
    unsafe fn zero() -> Self;
    /// `0x0f` in every byte.
    unsafe fn low_nibbles() -> Self;
    /// `self ^ o`.
    unsafe fn xor(self, o: Self) -> Self;
    /// `self & o`.
    unsafe fn and(self, o: Self) -> Self;
    /// `!self & o`.
    unsafe fn andnot(self, o: Self) -> Self;
    /// `self | o`.
    unsafe fn or(self, o: Self) -> Self;
    /// Each 32-bit word shifted right by 4.
    unsafe fn shr4(self) -> Self;
    /// `PSHUFB`: `self[idx[i]]` per lane.
    unsafe fn shuffle(self, idx: Self) -> Self;
    /// `AESENCLAST` with a zero key.
    unsafe fn enc_last(self) -> Self;
    /// `AESDECLAST` with a zero key.
    unsafe fn dec_last(self) -> Self;
    /// All ones in each byte whose top bit is set.
    unsafe fn sign(self) -> Self;
    /// Bytewise `self + o`.
    unsafe fn add8(self, o: Self) -> Self;
    /// Bytewise `self - o`.
    unsafe fn sub8(self, o: Self) -> Self;
    /// `PUNPCKLBW`.
    unsafe fn unpacklo8(self, o: Self) -> Self;
    /// `PUNPCKHBW`.
    unsafe fn unpackhi8(self, o: Self) -> Self;
    /// Counter `c` for [`Slices::counter`]: little-endian 64-bit words, lane
    /// `l` holding `c + 16 * l` (low word only: the caller rules out a carry).
    unsafe fn counter_base(c: u128) -> Self;
    /// Block `b` of each lane as a big-endian counter block: `base` plus `b`
    /// in the low words, byte-reversed.
    unsafe fn counter(base: Self, b: usize) -> Self;
}

/// `x ^ key byte j` for the eight registers of a half.
#[inline(always)]
unsafe fn xor_key<V: Slices>(x: &mut [V; 8], k: &Bytes8) {
    for (x, b) in x.iter_mut().zip(&k.b) {
        // SAFETY: the caller runs with `V`'s features.
        *x = unsafe { x.xor(V::splat(b)) };
    }
}

/// The affine map given by nibble tables `t` (low, high) on every byte of `x`.
#[inline(always)]
unsafe fn filter<V: Slices>(x: V, t: &[[u8; 16]; 2], mask: V) -> V {
    // SAFETY: the caller runs with `V`'s features.
    unsafe {
        let lo = x.and(mask);
        let hi = mask.andnot(x).shr4();
        V::splat(&t[0]).shuffle(lo).xor(V::splat(&t[1]).shuffle(hi))
    }
}

/// `dst ^= F(src ^ k)` over a register's blocks, the key in the
/// pre-filters `k`.
///
/// `AESENCLAST` applies ShiftRows first, which moves bytes between blocks
/// (lanes); `AESDECLAST` applies its inverse. Rounds alternate between them
/// (`DEC`), and the right half is kept with its lanes in ShiftRows order:
/// each round's output lands in the lane order of the half it is XORed into,
/// with no shuffle in the rounds.
#[inline(always)]
unsafe fn round<V: Slices, const DEC: bool>(src: &[V; 8], dst: &mut [V; 8], k: &KeyedPre) {
    // SAFETY: the caller runs with `V`'s features.
    let mask = unsafe { V::low_nibbles() };
    // Byte j goes through SBOX 1, 2, 3, 4, 2, 3, 4, 1 (RFC 3713, 2.4.1).
    let post: [&[[u8; 16]; 2]; 8] = if DEC {
        [
            &POST_S1_DEC,
            &POST_S2_DEC,
            &POST_S3_DEC,
            &POST_S1_DEC,
            &POST_S2_DEC,
            &POST_S3_DEC,
            &POST_S1_DEC,
            &POST_S1_DEC,
        ]
    } else {
        [
            &POST_S1, &POST_S2, &POST_S3, &POST_S1, &POST_S2, &POST_S3, &POST_S1, &POST_S1,
        ]
    };
    // In three passes over the eight bytes, not byte by byte: each pass's
    // eight operations are independent, so the core overlaps them rather
    // than waiting out one byte's filter-AES-filter latency chain after
    // another (measured 5-12% faster, most with two AES-NI operations per
    // register).
    let mut y = *src;
    for (y, t) in y.iter_mut().zip(&k.t) {
        // SAFETY: the caller runs with `V`'s features.
        *y = unsafe { filter(*y, t, mask) };
    }
    for y in &mut y {
        // SAFETY: the caller runs with `V`'s features.
        *y = unsafe { if DEC { y.dec_last() } else { y.enc_last() } };
    }
    for (y, t) in y.iter_mut().zip(post) {
        // SAFETY: the caller runs with `V`'s features.
        *y = unsafe { filter(*y, t, mask) };
    }
    // The P-function: y[d] ^= y[s] in this order leaves z1..z4 in y[4..8]
    // and z5..z8 in y[0..4].
    const P: [(usize, usize); 16] = [
        (0, 5),
        (1, 6),
        (2, 7),
        (3, 4),
        (4, 2),
        (5, 3),
        (6, 0),
        (7, 1),
        (0, 7),
        (1, 4),
        (2, 5),
        (3, 6),
        (4, 3),
        (5, 0),
        (6, 1),
        (7, 2),
    ];
    for (d, s) in P {
        // SAFETY: the caller runs with `V`'s features.
        y[d] = unsafe { y[d].xor(y[s]) };
    }
    for j in 0..8 {
        // SAFETY: the caller runs with `V`'s features.
        dst[j] = unsafe { dst[j].xor(y[(j + 4) % 8]) };
    }
}

/// `d ^= t <<< 1` for 32-bit words held as four byte registers, most
/// significant first.
#[inline(always)]
unsafe fn rol1_xor<V: Slices>(t: &[V; 4], d: &mut [V]) {
    // All ones in a lane whose byte has its top bit set.
    let mut top = *t;
    for x in &mut top {
        // SAFETY: the caller runs with `V`'s features.
        *x = unsafe { x.sign() };
    }
    for j in 0..4 {
        // Subtracting all ones sets the low bit the next byte's top bit gives.
        // SAFETY: the caller runs with `V`'s features.
        d[j] = unsafe { d[j].xor(t[j].add8(t[j]).sub8(top[(j + 1) % 4])) };
    }
}

/// `v[j] & key byte j` for the first four registers of a half.
#[inline(always)]
unsafe fn and_key<V: Slices>(v: &[V; 8], k: &Bytes8) -> [V; 4] {
    let mut t = [v[0]; 4];
    for j in 0..4 {
        // SAFETY: the caller runs with `V`'s features.
        t[j] = unsafe { v[j].and(V::splat(&k.b[j])) };
    }
    t
}

/// `v[j] ^= v[4 + j] | key byte 4 + j` for the first four registers.
#[inline(always)]
unsafe fn xor_or_key<V: Slices>(v: &mut [V; 8], k: &Bytes8) {
    for j in 0..4 {
        // SAFETY: the caller runs with `V`'s features.
        v[j] = unsafe { v[j].xor(v[4 + j].or(V::splat(&k.b[4 + j]))) };
    }
}

/// FL (RFC 3713, 2.4.2) on a half of eight byte registers.
#[inline(always)]
unsafe fn fl<V: Slices>(v: &mut [V; 8], k: &Bytes8) {
    // SAFETY: the caller runs with `V`'s features.
    unsafe {
        let t = and_key(v, k);
        rol1_xor(&t, &mut v[4..]);
        xor_or_key(v, k);
    }
}

/// FL^-1 (RFC 3713, 2.4.3) on a half of eight byte registers.
#[inline(always)]
unsafe fn fl_inv<V: Slices>(w: &mut [V; 8], k: &Bytes8) {
    // SAFETY: the caller runs with `V`'s features.
    unsafe {
        xor_or_key(w, k);
        let t = and_key(w, k);
        rol1_xor(&t, &mut w[4..]);
    }
}

/// The 16x16 byte transpose of each lane (its own inverse): four rounds of
/// byte unpacks.
#[inline(always)]
unsafe fn transpose<V: Slices>(r: &mut [V; 16]) {
    for _ in 0..4 {
        let mut n = *r;
        for i in 0..8 {
            // SAFETY: the caller runs with `V`'s features.
            unsafe {
                n[2 * i] = r[i].unpacklo8(r[i + 8]);
                n[2 * i + 1] = r[i].unpackhi8(r[i + 8]);
            }
        }
        *r = n;
    }
}

/// The kernel over `V::BLOCKS` blocks.
///
/// # Safety
/// Runs inside a function compiled with `V`'s features, on a CPU that has
/// them; `V::BLOCKS` blocks readable at `input` and writable at `output`.
#[inline(always)]
unsafe fn crypt<V: Slices>(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    // SAFETY: `V`'s features (the caller's promise); `load_block` and
    // `store_block` touch the `V::BLOCKS` blocks at `input` and `output`.
    unsafe {
        crypt_with::<V>(
            keys,
            |b| V::load_block(input, b),
            |b, v| v.store_block(output, b),
        )
    }
}

/// CTR over `V::BLOCKS` blocks: encrypts the counter blocks `c`, `c + 1`,
/// ... made in registers (no carry out of the low 64 bits within the
/// batch: the caller's check) and XORs the key stream into the data at
/// `data` as it stores it, so the data is read and written once.
///
/// # Safety
/// Runs inside a function compiled with `V`'s features, on a CPU that has
/// them; `V::BLOCKS` blocks readable and writable at `data`; the low 64
/// bits of `c` plus `V::BLOCKS - 1` do not overflow.
#[inline(always)]
unsafe fn ctr_kernel<V: Slices>(keys: &SlicedKeys, c: u128, data: *mut u8) {
    // SAFETY: `V`'s features (the caller's promise); `load_block` and
    // `store_block` touch the `V::BLOCKS` blocks at `data`, each read
    // before it is written.
    unsafe {
        let base = V::counter_base(c);
        crypt_with::<V>(
            keys,
            |b| V::counter(base, b),
            |b, v| v.xor(V::load_block(data, b)).store_block(data, b),
        )
    }
}

/// CBC decryption of `V::BLOCKS` blocks in place at `data` (decryption
/// keys): each plaintext is the decrypted block XORed, as it is stored, with
/// the ciphertext before it, read from `data` (the stores run last block
/// first) or, for the batch's first, `iv`.
///
/// # Safety
/// Runs inside a function compiled with `V`'s features, on a CPU that has
/// them; `V::BLOCKS` blocks readable and writable at `data`.
#[inline(always)]
unsafe fn cbc_dec_kernel<V: Slices>(keys: &SlicedKeys, iv: &[u8; 16], data: *mut u8) {
    // SAFETY: `V`'s features (the caller's promise); every load and store is
    // of a block among the `V::BLOCKS` at `data`, and a store's chaining
    // block b - 1 of its lane is stored after it (reverse order).
    unsafe {
        // Lane 1's first block (32-block kernels) chains from lane 0's last,
        // which the reverse-order stores overwrite first: a copy of it.
        let mid: [u8; 16] = data.add(16 * 15).cast::<[u8; 16]>().read_unaligned();
        crypt_with::<V>(
            keys,
            |b| V::load_block(data, b),
            |b, v| {
                let prev = if b == 0 {
                    V::load_lanes(iv.as_ptr(), mid.as_ptr())
                } else {
                    V::load_block(data.add(16 * (b - 1)), 0)
                };
                v.xor(prev).store_block(data, b)
            },
        )
    }
}

/// The kernel over `V::BLOCKS` blocks, block `b` of each lane from
/// `load(b)` and its result handed to `store(b, _)` (after every load, the
/// last block first).
///
/// # Safety
/// Runs inside a function compiled with `V`'s features, on a CPU that has
/// them; `load` and `store` safe to call for `b` in `0..16`.
#[inline(always)]
unsafe fn crypt_with<V: Slices>(
    keys: &SlicedKeys,
    load: impl Fn(usize) -> V,
    store: impl Fn(usize, V),
) {
    // SAFETY: `V`'s features (the caller's promise) for every operation.
    unsafe {
        let mut r = [V::zero(); 16];
        for (b, r) in r.iter_mut().enumerate() {
            *r = load(b);
        }
        transpose(&mut r);
        let mut left: [V; 8] = r[..8].try_into().expect("8 registers");
        let mut right: [V; 8] = r[8..].try_into().expect("8 registers");
        xor_key(&mut left, &keys.kw[0]);
        xor_key(&mut right, &keys.kw[1]);
        let sr = V::splat(&SHIFT_ROWS);
        for r in &mut right {
            *r = r.shuffle(sr);
        }
        for g in 0..keys.groups {
            if g > 0 {
                fl(&mut left, &keys.ke[2 * g - 2]);
                fl_inv(&mut right, &keys.ke[2 * g - 1]);
            }
            // Six rounds written out: as a loop, its back edge cost register
            // moves and a store-reload of the state.
            let k = &keys.k[6 * g..6 * g + 6];
            round::<V, false>(&left, &mut right, &k[0]);
            round::<V, true>(&right, &mut left, &k[1]);
            round::<V, false>(&left, &mut right, &k[2]);
            round::<V, true>(&right, &mut left, &k[3]);
            round::<V, false>(&left, &mut right, &k[4]);
            round::<V, true>(&right, &mut left, &k[5]);
        }
        let inv_sr = V::splat(&INV_SHIFT_ROWS);
        for r in &mut right {
            *r = r.shuffle(inv_sr);
        }
        xor_key(&mut right, &keys.kw[2]);
        xor_key(&mut left, &keys.kw[3]);
        r[..8].copy_from_slice(&right);
        r[8..].copy_from_slice(&left);
        transpose(&mut r);
        // Last block first: a `store` that reads block b - 1 (CBC
        // decryption) finds it not yet overwritten.
        for (b, r) in r.into_iter().enumerate().rev() {
            store(b, r);
        }
    }
}

#[target_feature(enable = "aes,avx")]
unsafe fn crypt16_aesni(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX, which the caller checked; the
    // pointers as the caller promised.
    unsafe { crypt::<__m128i>(keys, input, output) }
}

#[target_feature(enable = "aes,vaes,avx2")]
unsafe fn crypt32_vaes(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    // SAFETY: compiled with VAES and AVX2, which the caller checked; the
    // pointers as the caller promised.
    unsafe { crypt::<__m256i>(keys, input, output) }
}

#[target_feature(enable = "aes,avx2")]
unsafe fn crypt32_aesni_avx2(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX2, which the caller checked; the
    // pointers as the caller promised.
    unsafe { crypt::<Halves>(keys, input, output) }
}

#[target_feature(enable = "aes,avx")]
unsafe fn ctr16_aesni(keys: &SlicedKeys, c: u128, data: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX, which the caller checked; the
    // pointer and counter as the caller promised.
    unsafe { ctr_kernel::<__m128i>(keys, c, data) }
}

#[target_feature(enable = "aes,vaes,avx2")]
unsafe fn ctr32_vaes(keys: &SlicedKeys, c: u128, data: *mut u8) {
    // SAFETY: compiled with VAES and AVX2, which the caller checked; the
    // pointer and counter as the caller promised.
    unsafe { ctr_kernel::<__m256i>(keys, c, data) }
}

#[target_feature(enable = "aes,avx2")]
unsafe fn ctr32_aesni_avx2(keys: &SlicedKeys, c: u128, data: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX2, which the caller checked; the
    // pointer and counter as the caller promised.
    unsafe { ctr_kernel::<Halves>(keys, c, data) }
}

#[target_feature(enable = "aes,avx")]
unsafe fn cbc_dec16_aesni(keys: &SlicedKeys, iv: &[u8; 16], data: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX, which the caller checked; the
    // pointer as the caller promised.
    unsafe { cbc_dec_kernel::<__m128i>(keys, iv, data) }
}

#[target_feature(enable = "aes,vaes,avx2")]
unsafe fn cbc_dec32_vaes(keys: &SlicedKeys, iv: &[u8; 16], data: *mut u8) {
    // SAFETY: compiled with VAES and AVX2, which the caller checked; the
    // pointer as the caller promised.
    unsafe { cbc_dec_kernel::<__m256i>(keys, iv, data) }
}

#[target_feature(enable = "aes,avx2")]
unsafe fn cbc_dec32_aesni_avx2(keys: &SlicedKeys, iv: &[u8; 16], data: *mut u8) {
    // SAFETY: compiled with AES-NI and AVX2, which the caller checked; the
    // pointer as the caller promised.
    unsafe { cbc_dec_kernel::<Halves>(keys, iv, data) }
}

/// Byte reversal of each 128-bit lane: a little-endian counter to the
/// big-endian block.
const BSWAP128: [u8; 16] = [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];

/// 16 blocks in xmm registers (AES-NI and AVX).
impl Slices for __m128i {
    #[inline(always)]
    unsafe fn load_block(p: *const u8, b: usize) -> Self {
        // SAFETY: the caller passes 16 readable blocks at `p`.
        unsafe { _mm_loadu_si128(p.add(16 * b).cast()) }
    }
    #[inline(always)]
    unsafe fn load_lanes(lo: *const u8, _hi: *const u8) -> Self {
        // SAFETY: the caller passes a readable block at `lo`.
        unsafe { _mm_loadu_si128(lo.cast()) }
    }
    #[inline(always)]
    unsafe fn store_block(self, p: *mut u8, b: usize) {
        // SAFETY: the caller passes 16 writable blocks at `p`.
        unsafe { _mm_storeu_si128(p.add(16 * b).cast(), self) }
    }
    #[inline(always)]
    unsafe fn splat(t: &[u8; 16]) -> Self {
        // SAFETY: `t` is 16 readable bytes; the caller runs with AES-NI and AVX.
        unsafe { _mm_loadu_si128(t.as_ptr().cast()) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_setzero_si128() }
    }
    #[inline(always)]
    unsafe fn low_nibbles() -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_set1_epi8(0x0f) }
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_xor_si128(self, o) }
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_and_si128(self, o) }
    }
    #[inline(always)]
    unsafe fn andnot(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_andnot_si128(self, o) }
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_or_si128(self, o) }
    }
    #[inline(always)]
    unsafe fn shr4(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_srli_epi32::<4>(self) }
    }
    #[inline(always)]
    unsafe fn shuffle(self, idx: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_shuffle_epi8(self, idx) }
    }
    #[inline(always)]
    unsafe fn enc_last(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_aesenclast_si128(self, Self::zero()) }
    }
    #[inline(always)]
    unsafe fn dec_last(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_aesdeclast_si128(self, Self::zero()) }
    }
    #[inline(always)]
    unsafe fn sign(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_cmpgt_epi8(_mm_setzero_si128(), self) }
    }
    #[inline(always)]
    unsafe fn add8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_add_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn sub8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_sub_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn unpacklo8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_unpacklo_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn unpackhi8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_unpackhi_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn counter_base(c: u128) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_set_epi64x((c >> 64) as i64, c as i64) }
    }
    #[inline(always)]
    unsafe fn counter(base: Self, b: usize) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX.
        unsafe { _mm_add_epi64(base, _mm_set_epi64x(0, b as i64)).shuffle(Self::splat(&BSWAP128)) }
    }
}

/// 32 blocks in ymm registers (AVX2; VAES for the S-boxes' AES step).
impl Slices for __m256i {
    #[inline(always)]
    unsafe fn load_block(p: *const u8, b: usize) -> Self {
        // SAFETY: the caller passes 32 readable blocks at `p`.
        unsafe { _mm256_loadu2_m128i(p.add(16 * (b + 16)).cast(), p.add(16 * b).cast()) }
    }
    #[inline(always)]
    unsafe fn load_lanes(lo: *const u8, hi: *const u8) -> Self {
        // SAFETY: the caller passes a readable block at each pointer.
        unsafe { _mm256_loadu2_m128i(hi.cast(), lo.cast()) }
    }
    #[inline(always)]
    unsafe fn store_block(self, p: *mut u8, b: usize) {
        // SAFETY: the caller passes 32 writable blocks at `p`.
        unsafe { _mm256_storeu2_m128i(p.add(16 * (b + 16)).cast(), p.add(16 * b).cast(), self) }
    }
    #[inline(always)]
    unsafe fn splat(t: &[u8; 16]) -> Self {
        // SAFETY: `t` is 16 readable bytes; the caller runs with AVX2.
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast())) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    unsafe fn low_nibbles() -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_set1_epi8(0x0f) }
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_xor_si256(self, o) }
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_and_si256(self, o) }
    }
    #[inline(always)]
    unsafe fn andnot(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_andnot_si256(self, o) }
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_or_si256(self, o) }
    }
    #[inline(always)]
    unsafe fn shr4(self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_srli_epi32::<4>(self) }
    }
    #[inline(always)]
    unsafe fn shuffle(self, idx: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_shuffle_epi8(self, idx) }
    }
    #[inline(always)]
    unsafe fn enc_last(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe { _mm256_aesenclast_epi128(self, Self::zero()) }
    }
    #[inline(always)]
    unsafe fn dec_last(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe { _mm256_aesdeclast_epi128(self, Self::zero()) }
    }
    #[inline(always)]
    unsafe fn sign(self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_cmpgt_epi8(_mm256_setzero_si256(), self) }
    }
    #[inline(always)]
    unsafe fn add8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_add_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn sub8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_sub_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn unpacklo8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_unpacklo_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn unpackhi8(self, o: Self) -> Self {
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_unpackhi_epi8(self, o) }
    }
    #[inline(always)]
    unsafe fn counter_base(c: u128) -> Self {
        let (hi, lo) = ((c >> 64) as i64, c as i64);
        // SAFETY: the caller runs with AVX2.
        unsafe { _mm256_set_epi64x(hi, lo.wrapping_add(16), hi, lo) }
    }
    #[inline(always)]
    unsafe fn counter(base: Self, b: usize) -> Self {
        let b = b as i64;
        // SAFETY: the caller runs with AVX2.
        unsafe {
            _mm256_add_epi64(base, _mm256_set_epi64x(0, b, 0, b)).shuffle(Self::splat(&BSWAP128))
        }
    }
}

/// 32 blocks in ymm registers without VAES: [`__m256i`]'s AVX2 operations,
/// but the S-boxes' `AESENCLAST`/`AESDECLAST` split into one AES-NI
/// instruction on each 128-bit half (`VEXTRACTI128`, two `VAESENCLAST` xmm,
/// `VINSERTI128`).
#[derive(Clone, Copy)]
struct Halves(__m256i);

impl Halves {
    /// `AESENCLAST` (`AESDECLAST` if `DEC`) with a zero key on each 128-bit
    /// half.
    #[inline(always)]
    unsafe fn aes_last<const DEC: bool>(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX2.
        unsafe {
            let lo = _mm256_castsi256_si128(self.0);
            let hi = _mm256_extracti128_si256::<1>(self.0);
            let (lo, hi) = if DEC {
                (lo.dec_last(), hi.dec_last())
            } else {
                (lo.enc_last(), hi.enc_last())
            };
            Self(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi))
        }
    }
}

/// [`Halves`]' operations other than the AES step: [`__m256i`]'s, which
/// need only AVX2.
macro_rules! halves_as_ymm {
    ($($name:ident($($arg:ident),*)),* $(,)?) => {
        $(
            #[inline(always)]
            unsafe fn $name(self $(, $arg: Self)*) -> Self {
                // SAFETY: the caller runs with AVX2.
                Self(unsafe { self.0.$name($($arg.0),*) })
            }
        )*
    };
}

impl Slices for Halves {
    #[inline(always)]
    unsafe fn load_block(p: *const u8, b: usize) -> Self {
        // SAFETY: the caller passes 32 readable blocks at `p` and runs with AVX2.
        Self(unsafe { __m256i::load_block(p, b) })
    }
    #[inline(always)]
    unsafe fn load_lanes(lo: *const u8, hi: *const u8) -> Self {
        // SAFETY: the caller passes a readable block at each pointer and runs with AVX2.
        Self(unsafe { __m256i::load_lanes(lo, hi) })
    }
    #[inline(always)]
    unsafe fn store_block(self, p: *mut u8, b: usize) {
        // SAFETY: the caller passes 32 writable blocks at `p` and runs with AVX2.
        unsafe { self.0.store_block(p, b) }
    }
    #[inline(always)]
    unsafe fn splat(t: &[u8; 16]) -> Self {
        // SAFETY: the caller runs with AVX2.
        Self(unsafe { __m256i::splat(t) })
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller runs with AVX2.
        Self(unsafe { __m256i::zero() })
    }
    #[inline(always)]
    unsafe fn low_nibbles() -> Self {
        // SAFETY: the caller runs with AVX2.
        Self(unsafe { __m256i::low_nibbles() })
    }
    halves_as_ymm!(
        xor(o),
        and(o),
        andnot(o),
        or(o),
        shr4(),
        shuffle(idx),
        sign(),
        add8(o),
        sub8(o),
        unpacklo8(o),
        unpackhi8(o),
    );
    #[inline(always)]
    unsafe fn enc_last(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX2.
        unsafe { self.aes_last::<false>() }
    }
    #[inline(always)]
    unsafe fn dec_last(self) -> Self {
        // SAFETY: the caller runs with AES-NI and AVX2.
        unsafe { self.aes_last::<true>() }
    }
    #[inline(always)]
    unsafe fn counter_base(c: u128) -> Self {
        // SAFETY: the caller runs with AVX2.
        Self(unsafe { __m256i::counter_base(c) })
    }
    #[inline(always)]
    unsafe fn counter(base: Self, b: usize) -> Self {
        // SAFETY: the caller runs with AVX2.
        Self(unsafe { __m256i::counter(base.0, b) })
    }
}
