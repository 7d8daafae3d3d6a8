//! Camellia on x86-64 with AES-NI and AVX: 16 blocks at a time, byte-sliced,
//! the S-boxes computed with `AESENCLAST`.
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

/// Blocks per kernel call.
pub const BLOCKS: usize = 16;

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

/// Whether this CPU runs the kernel (the dispatch decides whether it may).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("avx")
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

#[inline(always)]
fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: 16 readable bytes; unaligned load.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

/// `x ^ key byte j` for the eight registers of a half.
#[inline]
#[target_feature(enable = "avx")]
fn xor_key(x: &mut [__m128i; 8], k: &Bytes8) {
    for (x, b) in x.iter_mut().zip(&k.b) {
        // SAFETY: `b` is 16 readable bytes, 16-aligned (`Bytes8` is).
        *x = _mm_xor_si128(*x, unsafe { _mm_load_si128(b.as_ptr().cast()) });
    }
}

/// The affine map given by nibble tables `t` (low, high) on every byte of `x`.
#[inline]
#[target_feature(enable = "avx")]
fn filter(x: __m128i, t: &[[u8; 16]; 2], mask: __m128i) -> __m128i {
    let lo = _mm_and_si128(x, mask);
    let hi = _mm_srli_epi32(_mm_andnot_si128(mask, x), 4);
    _mm_xor_si128(
        _mm_shuffle_epi8(load(&t[0]), lo),
        _mm_shuffle_epi8(load(&t[1]), hi),
    )
}

/// `dst ^= F(src ^ k)` over 16 blocks, the key in the pre-filters `k`.
///
/// `AESENCLAST` applies ShiftRows first, which moves bytes between blocks
/// (lanes); `AESDECLAST` applies its inverse. Rounds alternate between them
/// (`DEC`), and the right half is kept with its lanes in ShiftRows order:
/// each round's output lands in the lane order of the half it is XORed into,
/// with no shuffle in the rounds.
#[inline]
#[target_feature(enable = "aes,avx")]
fn round<const DEC: bool>(src: &[__m128i; 8], dst: &mut [__m128i; 8], k: &KeyedPre) {
    let mask = _mm_set1_epi8(0x0f);
    let zero = _mm_setzero_si128();
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
    let mut y = *src;
    for j in 0..8 {
        let t = filter(y[j], &k.t[j], mask);
        let t = if DEC {
            _mm_aesdeclast_si128(t, zero)
        } else {
            _mm_aesenclast_si128(t, zero)
        };
        y[j] = filter(t, post[j], mask);
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
        y[d] = _mm_xor_si128(y[d], y[s]);
    }
    for j in 0..8 {
        dst[j] = _mm_xor_si128(dst[j], y[(j + 4) % 8]);
    }
}

/// `d ^= t <<< 1` for 32-bit words held as four byte registers, most
/// significant first.
#[inline]
#[target_feature(enable = "avx")]
fn rol1_xor(t: &[__m128i; 4], d: &mut [__m128i]) {
    let zero = _mm_setzero_si128();
    // All ones in a lane whose byte has its top bit set.
    let top = t.map(|t| _mm_cmpgt_epi8(zero, t));
    for j in 0..4 {
        let doubled = _mm_add_epi8(t[j], t[j]);
        // Subtracting all ones sets the low bit the next byte's top bit gives.
        d[j] = _mm_xor_si128(d[j], _mm_sub_epi8(doubled, top[(j + 1) % 4]));
    }
}

/// FL (RFC 3713, 2.4.2) on a half of eight byte registers.
#[inline]
#[target_feature(enable = "avx")]
fn fl(v: &mut [__m128i; 8], k: &Bytes8) {
    let kb = k.b.map(|b| load(&b));
    let t = [0, 1, 2, 3].map(|j| _mm_and_si128(v[j], kb[j]));
    rol1_xor(&t, &mut v[4..]);
    for j in 0..4 {
        v[j] = _mm_xor_si128(v[j], _mm_or_si128(v[4 + j], kb[4 + j]));
    }
}

/// FL^-1 (RFC 3713, 2.4.3) on a half of eight byte registers.
#[inline]
#[target_feature(enable = "avx")]
fn fl_inv(w: &mut [__m128i; 8], k: &Bytes8) {
    let kb = k.b.map(|b| load(&b));
    for j in 0..4 {
        w[j] = _mm_xor_si128(w[j], _mm_or_si128(w[4 + j], kb[4 + j]));
    }
    let t = [0, 1, 2, 3].map(|j| _mm_and_si128(w[j], kb[j]));
    rol1_xor(&t, &mut w[4..]);
}

/// The 16x16 byte transpose (its own inverse): four rounds of byte unpacks.
#[inline]
#[target_feature(enable = "avx")]
fn transpose(r: &mut [__m128i; 16]) {
    for _ in 0..4 {
        let mut n = [_mm_setzero_si128(); 16];
        for i in 0..8 {
            n[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            n[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        *r = n;
    }
}

#[target_feature(enable = "aes,avx")]
unsafe fn crypt16_aesni(keys: &SlicedKeys, input: *const u8, output: *mut u8) {
    // SAFETY: 256 readable bytes at `input` (the caller's promise).
    let mut r: [__m128i; BLOCKS] =
        core::array::from_fn(|b| unsafe { _mm_loadu_si128(input.add(16 * b).cast()) });
    {
        transpose(&mut r);
        let mut left: [__m128i; 8] = r[..8].try_into().expect("8 registers");
        let mut right: [__m128i; 8] = r[8..].try_into().expect("8 registers");
        xor_key(&mut left, &keys.kw[0]);
        xor_key(&mut right, &keys.kw[1]);
        let sr = load(&SHIFT_ROWS);
        for r in &mut right {
            *r = _mm_shuffle_epi8(*r, sr);
        }
        for g in 0..keys.groups {
            if g > 0 {
                fl(&mut left, &keys.ke[2 * g - 2]);
                fl_inv(&mut right, &keys.ke[2 * g - 1]);
            }
            for i in 0..3 {
                round::<false>(&left, &mut right, &keys.k[6 * g + 2 * i]);
                round::<true>(&right, &mut left, &keys.k[6 * g + 2 * i + 1]);
            }
        }
        let inv_sr = load(&INV_SHIFT_ROWS);
        for r in &mut right {
            *r = _mm_shuffle_epi8(*r, inv_sr);
        }
        xor_key(&mut right, &keys.kw[2]);
        xor_key(&mut left, &keys.kw[3]);
        r[..8].copy_from_slice(&right);
        r[8..].copy_from_slice(&left);
        transpose(&mut r);
        for (b, r) in r.into_iter().enumerate() {
            // SAFETY: 256 writable bytes at `output` (the caller's promise).
            unsafe { _mm_storeu_si128(output.add(16 * b).cast(), r) };
        }
    }
}
