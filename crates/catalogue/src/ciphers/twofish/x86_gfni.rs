//! Twofish on AVX-512 with VBMI and GFNI: 32 blocks at a time, word `j` of
//! sixteen blocks per 512-bit register, two registers per word; no table
//! lookups in memory, so constant time.
//!
//! `g` is four key-dependent S-boxes and a multiplication by the MDS matrix
//! in GF(2^8) modulo `x^8 + x^6 + x^5 + x^3 + 1`. Each S-box is a 256-byte
//! table held in four registers and looked up for all 64 bytes at once
//! (`VPERMI2B` twice, 128 entries each, and a blend on the index's top bit).
//! `GF2P8MULB` multiplies bytes in AES's field, not Twofish's, so the S-box
//! tables hold their outputs mapped into AES's field by the field
//! isomorphism `phi` ([`PHI`]): there the MDS product is a `GF2P8MULB` by
//! a constant per byte position (`phi` of the matrix entries), and one
//! `GF2P8AFFINEQB` maps the sum back. 27 vector instructions for sixteen
//! blocks' `g`, against four gathers for eight ([`super::x86_avx2`]).

use core::arch::x86_64::*;

use crate::backends::x86_avx512::transpose4;

use super::x86_rounds::{self as rounds, Words};
use super::{MDS, Twofish, gf_mul};

/// Blocks per call.
pub(super) const LANES: usize = 32;

type V = __m512i;

/// The four words of sixteen blocks, two such sets per call.
type State = [[V; 4]; 2];

/// AES's field polynomial `x^8 + x^4 + x^3 + x + 1`, without `x^8`.
const AES_POLY: u8 = 0x1B;

/// A root in AES's field of Twofish's MDS polynomial: `phi` maps `x` to it.
const BETA: u8 = {
    let mut b = 2u8;
    loop {
        let b2 = gf_mul(b, b, AES_POLY);
        let b3 = gf_mul(b2, b, AES_POLY);
        let b5 = gf_mul(b3, b2, AES_POLY);
        let b6 = gf_mul(b5, b, AES_POLY);
        let b8 = gf_mul(b6, b2, AES_POLY);
        if b8 ^ b6 ^ b5 ^ b3 ^ 1 == 0 {
            break b;
        }
        b += 1;
    }
};

/// `phi`: Twofish's MDS field to AES's, `sum a_i x^i -> sum a_i BETA^i`, a
/// ring isomorphism (and linear over GF(2)).
pub(super) const PHI: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut y = 0;
    while y < 256 {
        let (mut acc, mut p, mut i) = (0u8, 1u8, 0);
        while i < 8 {
            if (y >> i) & 1 != 0 {
                acc ^= p;
            }
            p = gf_mul(p, BETA, AES_POLY);
            i += 1;
        }
        t[y] = acc;
        y += 1;
    }
    t
};

/// `phi`'s inverse as a `GF2P8AFFINEQB` matrix: byte `7 - i` holds the
/// bits `k` that feed output bit `i` (bit `i` of `phi^-1(1 << k)`).
const PHI_INV_MATRIX: u64 = {
    let mut inv = [0u8; 256];
    let mut y = 0;
    while y < 256 {
        inv[PHI[y] as usize] = y as u8;
        y += 1;
    }
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut k = 0;
        while k < 8 {
            row |= ((inv[1 << k] >> i) & 1) << k;
            k += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m
};

/// Per word, `phi` of the MDS matrix's diagonal `r`: byte `i` holds
/// `phi(MDS[i][i - r])`, the factor of S-box output `i - r` (mod 4) in
/// output byte `i`, which a rotation of the word by `r` bytes brings there.
const MDS_PHI: [u32; 4] = {
    let mut c = [0u32; 4];
    let mut r = 0;
    while r < 4 {
        let mut i = 0;
        while i < 4 {
            c[r] |= (PHI[MDS[i][(i + 4 - r) % 4] as usize] as u32) << (8 * i);
            i += 1;
        }
        r += 1;
    }
    c
};

/// Byte masks of byte positions 1, 2 and 3 of every word.
const POSITION: [u64; 3] = [
    0x2222_2222_2222_2222,
    0x4444_4444_4444_4444,
    0x8888_8888_8888_8888,
];

/// What `g` needs in registers: the S-box tables, the MDS constants and
/// `phi^-1`.
pub(super) struct Consts {
    /// S-box `j`'s 256 bytes as four registers of 64.
    sbox: [[V; 4]; 4],
    mds: [V; 4],
    phi_inv: V,
}

#[inline(always)]
unsafe fn consts(c: &Twofish) -> Consts {
    // SAFETY: the caller runs with AVX-512F; every load reads 64 bytes of an
    // array of at least that size.
    unsafe {
        let load = |p: &[u8]| _mm512_loadu_si512(p.as_ptr().cast());
        Consts {
            sbox: core::array::from_fn(|j| {
                core::array::from_fn(|q| load(&c.sbox_phi[j][64 * q..64 * q + 64]))
            }),
            mds: MDS_PHI.map(|m| _mm512_set1_epi32(m as i32)),
            phi_inv: _mm512_set1_epi64(PHI_INV_MATRIX as i64),
        }
    }
}

impl Words for V {
    type G = Consts;

    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: in the kernels, with AVX-512F.
        unsafe { _mm512_xor_si512(self, o) }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        // SAFETY: in the kernels, with AVX-512F.
        unsafe { _mm512_add_epi32(self, o) }
    }
    #[inline(always)]
    unsafe fn rol1(self) -> Self {
        // SAFETY: in the kernels, with AVX-512F.
        unsafe { _mm512_rol_epi32::<1>(self) }
    }
    #[inline(always)]
    unsafe fn ror1(self) -> Self {
        // SAFETY: in the kernels, with AVX-512F.
        unsafe { _mm512_ror_epi32::<1>(self) }
    }
    #[inline(always)]
    unsafe fn splat(k: u32) -> Self {
        // SAFETY: in the kernels, with AVX-512F.
        unsafe { _mm512_set1_epi32(k as i32) }
    }
    /// S-boxes by byte permutes, the MDS product by GFNI.
    #[inline(always)]
    unsafe fn g(self, k: &Consts, rot: bool) -> Self {
        // SAFETY: in the kernels, with AVX-512F/BW, VBMI and GFNI.
        unsafe {
            let x = self;
            let x = if rot { _mm512_rol_epi32::<8>(x) } else { x };
            let top = _mm512_movepi8_mask(x);
            // Every S-box looks up every byte; byte j of each word keeps S-box
            // j's output.
            let sbox = |t: &[V; 4]| {
                let lo = _mm512_permutex2var_epi8(t[0], x, t[1]);
                let hi = _mm512_permutex2var_epi8(t[2], x, t[3]);
                _mm512_mask_blend_epi8(top, lo, hi)
            };
            let mut y = sbox(&k.sbox[0]);
            for (j, &pos) in POSITION.iter().enumerate() {
                y = _mm512_mask_blend_epi8(pos, y, sbox(&k.sbox[j + 1]));
            }
            // The MDS product as the sum over its diagonals.
            let d0 = _mm512_gf2p8mul_epi8(y, k.mds[0]);
            let d1 = _mm512_gf2p8mul_epi8(_mm512_rol_epi32::<8>(y), k.mds[1]);
            let d2 = _mm512_gf2p8mul_epi8(_mm512_rol_epi32::<16>(y), k.mds[2]);
            let d3 = _mm512_gf2p8mul_epi8(_mm512_rol_epi32::<24>(y), k.mds[3]);
            let acc = _mm512_xor_si512(_mm512_xor_si512(d0, d1), _mm512_xor_si512(d2, d3));
            _mm512_gf2p8affine_epi64_epi8::<0>(acc, k.phi_inv)
        }
    }
}

/// Loads blocks `16h .. 16h + 16` (four a register) and transposes them:
/// word `j` of the sixteen blocks in register `j`.
#[inline(always)]
unsafe fn load(inp: *const [u8; 16], h: usize) -> [V; 4] {
    // SAFETY: the caller runs with AVX-512F and passes LANES readable
    // blocks; each load reads four whole blocks.
    unsafe {
        let v: [V; 4] =
            core::array::from_fn(|i| _mm512_loadu_si512(inp.add(16 * h + 4 * i).cast()));
        transpose4(v[0], v[1], v[2], v[3])
    }
}

/// The inverse of [`load`].
#[inline(always)]
unsafe fn store(out: *mut [u8; 16], h: usize, w: [V; 4]) {
    // SAFETY: the caller runs with AVX-512F and passes LANES writable
    // blocks; each store writes four whole blocks.
    unsafe {
        for (i, v) in transpose4(w[0], w[1], w[2], w[3]).into_iter().enumerate() {
            _mm512_storeu_si512(out.add(16 * h + 4 * i).cast(), v);
        }
    }
}

/// Encrypts the [`LANES`] blocks at `inp` into `out` (the same blocks, or
/// [`LANES`] others that do not overlap them).
///
/// # Safety
///
/// The CPU must support AVX-512F/BW, AVX-512 VBMI and GFNI; `inp` must be
/// valid for reading and `out` for writing [`LANES`] blocks. All of the
/// input is read before any output is written, so `inp == out` is allowed.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(super) unsafe fn encrypt(c: &Twofish, inp: *const [u8; 16], out: *mut [u8; 16]) {
    // SAFETY: the features are enabled for this function; the pointers as
    // the caller promised.
    unsafe {
        let t = consts(c);
        let mut x: State = [load(inp, 0), load(inp, 1)];
        rounds::encrypt(&t, &c.k, &mut x);
        store(out, 0, x[0]);
        store(out, 1, x[1]);
    }
}

/// Decrypts the [`LANES`] blocks at `inp` into `out`, as [`encrypt`].
///
/// # Safety
///
/// As [`encrypt`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(super) unsafe fn decrypt(c: &Twofish, inp: *const [u8; 16], out: *mut [u8; 16]) {
    // SAFETY: the features are enabled for this function; the pointers as
    // the caller promised.
    unsafe {
        let t = consts(c);
        let mut x: State = [load(inp, 0), load(inp, 1)];
        rounds::decrypt(&t, &c.k, &mut x);
        store(out, 0, x[0]);
        store(out, 1, x[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `phi` is a field isomorphism: a bijection that carries Twofish's MDS
    /// multiplication to AES's, for every pair of bytes.
    #[test]
    fn phi_is_a_field_isomorphism() {
        let mut seen = [false; 256];
        for a in 0..=255u8 {
            assert!(!seen[usize::from(PHI[usize::from(a)])]);
            seen[usize::from(PHI[usize::from(a)])] = true;
            for b in 0..=255u8 {
                let twofish = gf_mul(a, b, super::super::MDS_POLY);
                let aes = gf_mul(PHI[usize::from(a)], PHI[usize::from(b)], AES_POLY);
                assert_eq!(PHI[usize::from(twofish)], aes);
                assert_eq!(
                    PHI[usize::from(a ^ b)],
                    PHI[usize::from(a)] ^ PHI[usize::from(b)]
                );
            }
        }
    }

    /// `phi^-1` by the matrix, bit by bit as `GF2P8AFFINEQB` applies it.
    #[test]
    fn phi_inverse_matrix() {
        for y in 0..=255u8 {
            let x = PHI[usize::from(y)];
            let mut out = 0u8;
            for i in 0..8 {
                let row = (PHI_INV_MATRIX >> (8 * (7 - i))) as u8;
                out |= (((row & x).count_ones() & 1) as u8) << i;
            }
            assert_eq!(out, y);
        }
    }
}
