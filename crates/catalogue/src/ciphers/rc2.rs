//! RC2 (RFC 2268), sixteen blocks at a time.
//!
//! The `rc2` crate processes one block per call, and RC2's MIX rounds are a
//! serial chain of 16-bit adds, ANDs and rotations, so one block keeps a core
//! mostly waiting. The MIX rounds of sixteen blocks kept in `u16` lane arrays
//! compile to SIMD (eight 16-bit lanes per SSE2/NEON register, no target
//! feature needed); the two MASH rounds index the key table with data, one
//! lane at a time. The `rc2` crate stays the oracle in the tests.
//!
//! RC2 is broken (related-key attacks, 64-bit block) and the MASH lookups
//! depend on data: it is here to be measured and for legacy files only.

use core::fmt;

use cipher::consts::{U8, U16};
use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Blocks per parallel call.
pub const LANES: usize = 16;

/// RFC 2268 section 2: PITABLE, the digits of pi as a permutation of 0..=255.
const PITABLE: [u8; 256] = [
    0xd9, 0x78, 0xf9, 0xc4, 0x19, 0xdd, 0xb5, 0xed, 0x28, 0xe9, 0xfd, 0x79, 0x4a, 0xa0, 0xd8, 0x9d,
    0xc6, 0x7e, 0x37, 0x83, 0x2b, 0x76, 0x53, 0x8e, 0x62, 0x4c, 0x64, 0x88, 0x44, 0x8b, 0xfb, 0xa2,
    0x17, 0x9a, 0x59, 0xf5, 0x87, 0xb3, 0x4f, 0x13, 0x61, 0x45, 0x6d, 0x8d, 0x09, 0x81, 0x7d, 0x32,
    0xbd, 0x8f, 0x40, 0xeb, 0x86, 0xb7, 0x7b, 0x0b, 0xf0, 0x95, 0x21, 0x22, 0x5c, 0x6b, 0x4e, 0x82,
    0x54, 0xd6, 0x65, 0x93, 0xce, 0x60, 0xb2, 0x1c, 0x73, 0x56, 0xc0, 0x14, 0xa7, 0x8c, 0xf1, 0xdc,
    0x12, 0x75, 0xca, 0x1f, 0x3b, 0xbe, 0xe4, 0xd1, 0x42, 0x3d, 0xd4, 0x30, 0xa3, 0x3c, 0xb6, 0x26,
    0x6f, 0xbf, 0x0e, 0xda, 0x46, 0x69, 0x07, 0x57, 0x27, 0xf2, 0x1d, 0x9b, 0xbc, 0x94, 0x43, 0x03,
    0xf8, 0x11, 0xc7, 0xf6, 0x90, 0xef, 0x3e, 0xe7, 0x06, 0xc3, 0xd5, 0x2f, 0xc8, 0x66, 0x1e, 0xd7,
    0x08, 0xe8, 0xea, 0xde, 0x80, 0x52, 0xee, 0xf7, 0x84, 0xaa, 0x72, 0xac, 0x35, 0x4d, 0x6a, 0x2a,
    0x96, 0x1a, 0xd2, 0x71, 0x5a, 0x15, 0x49, 0x74, 0x4b, 0x9f, 0xd0, 0x5e, 0x04, 0x18, 0xa4, 0xec,
    0xc2, 0xe0, 0x41, 0x6e, 0x0f, 0x51, 0xcb, 0xcc, 0x24, 0x91, 0xaf, 0x50, 0xa1, 0xf4, 0x70, 0x39,
    0x99, 0x7c, 0x3a, 0x85, 0x23, 0xb8, 0xb4, 0x7a, 0xfc, 0x02, 0x36, 0x5b, 0x25, 0x55, 0x97, 0x31,
    0x2d, 0x5d, 0xfa, 0x98, 0xe3, 0x8a, 0x92, 0xae, 0x05, 0xdf, 0x29, 0x10, 0x67, 0x6c, 0xba, 0xc9,
    0xd3, 0x00, 0xe6, 0xcf, 0xe1, 0x9e, 0xa8, 0x2c, 0x63, 0x16, 0x01, 0x3f, 0x58, 0xe2, 0x89, 0xa9,
    0x0d, 0x38, 0x34, 0x1b, 0xab, 0x33, 0xff, 0xb0, 0xbb, 0x48, 0x0c, 0x5f, 0xb9, 0xb1, 0xcd, 0x2e,
    0xc5, 0xf3, 0xdb, 0x47, 0xe5, 0xa5, 0x9c, 0x77, 0x0a, 0xa6, 0x20, 0x68, 0xfe, 0x7f, 0xc1, 0xad,
];

/// The RC2 block cipher with the effective key length equal to the key
/// length, as OpenSSL's `rc2-*` ciphers and the `rc2` crate's `KeyInit` use it.
#[derive(Clone)]
pub struct Rc2 {
    k: [u16; 64],
}

impl Rc2 {
    /// RC2 with `key` (1 to 128 bytes) and `eff_bits` effective key bits
    /// (1 to 1024): RFC 2268 section 2, key expansion.
    pub fn with_effective_bits(key: &[u8], eff_bits: usize) -> Result<Self, InvalidLength> {
        if key.is_empty() || key.len() > 128 || !(1..=1024).contains(&eff_bits) {
            return Err(InvalidLength);
        }
        let t = key.len();
        let t8 = eff_bits.div_ceil(8);
        let tm = (0xffu32 >> (8 * t8 - eff_bits)) as u8;
        let mut l = [0u8; 128];
        l[..t].copy_from_slice(key);
        for i in t..128 {
            l[i] = PITABLE[usize::from(l[i - 1].wrapping_add(l[i - t]))];
        }
        l[128 - t8] = PITABLE[usize::from(l[128 - t8] & tm)];
        for i in (0..128 - t8).rev() {
            l[i] = PITABLE[usize::from(l[i + 1] ^ l[i + t8])];
        }
        let mut k = [0u16; 64];
        for (w, pair) in k.iter_mut().zip(l.chunks_exact(2)) {
            *w = u16::from_le_bytes([pair[0], pair[1]]);
        }
        l.zeroize();
        Ok(Rc2 { k })
    }
}

type Lanes<const N: usize> = [[u16; N]; 4];

#[inline(always)]
fn load<const N: usize>(blocks: &[&[u8]; N]) -> Lanes<N> {
    let mut r = [[0u16; N]; 4];
    for (i, b) in blocks.iter().enumerate() {
        for (j, w) in r.iter_mut().enumerate() {
            w[i] = u16::from_le_bytes([b[2 * j], b[2 * j + 1]]);
        }
    }
    r
}

#[inline(always)]
fn store<const N: usize>(r: &Lanes<N>, out: &mut [Block<Rc2>]) {
    for (i, b) in out.iter_mut().enumerate() {
        for (j, w) in r.iter().enumerate() {
            b[2 * j..2 * j + 2].copy_from_slice(&w[i].to_le_bytes());
        }
    }
}

/// The rotation of word `i` in MIX (RFC 2268 section 3.1: s = 1, 2, 3, 5).
const S: [u32; 4] = [1, 2, 3, 5];

#[inline(always)]
fn encrypt<const N: usize>(k: &[u16; 64], r: &mut Lanes<N>) {
    let mut j = 0;
    for round in 0..16 {
        // MIX: R[i] += K[j] + (R[i-1] & R[i-2]) + (~R[i-1] & R[i-3]); R[i] <<<= s[i].
        for i in 0..4 {
            let (a, b, c) = (r[(i + 3) % 4], r[(i + 2) % 4], r[(i + 1) % 4]);
            for l in 0..N {
                r[i][l] = r[i][l]
                    .wrapping_add(k[j])
                    .wrapping_add(a[l] & b[l])
                    .wrapping_add(!a[l] & c[l])
                    .rotate_left(S[i]);
            }
            j += 1;
        }
        // MASH after the fifth and the eleventh MIX round: R[i] += K[R[i-1] & 63].
        if round == 4 || round == 10 {
            for i in 0..4 {
                for l in 0..N {
                    r[i][l] = r[i][l].wrapping_add(k[usize::from(r[(i + 3) % 4][l] & 63)]);
                }
            }
        }
    }
}

#[inline(always)]
fn decrypt<const N: usize>(k: &[u16; 64], r: &mut Lanes<N>) {
    let mut j = 64;
    for round in (0..16).rev() {
        if round == 4 || round == 10 {
            for i in (0..4).rev() {
                for l in 0..N {
                    r[i][l] = r[i][l].wrapping_sub(k[usize::from(r[(i + 3) % 4][l] & 63)]);
                }
            }
        }
        for i in (0..4).rev() {
            j -= 1;
            let (a, b, c) = (r[(i + 3) % 4], r[(i + 2) % 4], r[(i + 1) % 4]);
            for l in 0..N {
                r[i][l] = r[i][l]
                    .rotate_right(S[i])
                    .wrapping_sub(k[j])
                    .wrapping_sub(a[l] & b[l])
                    .wrapping_sub(!a[l] & c[l]);
            }
        }
    }
}

/// One MIX step of one block: `r + k + (a & b) + (!a & c)` rotated by `s`,
/// where `a` is the word just computed. The select is written
/// `((b ^ c) & a) ^ c` (its two terms have no bit in common) and the key
/// added first, hidden from LLVM's reassociation, so that the chain from `a`
/// is AND, XOR, ADD, ROL: four cycles, not five (`b ^ c` and `r + k` are
/// ready before `a`).
#[inline(always)]
fn mix1(r: u16, k: u16, a: u16, b: u16, c: u16, s: u32) -> u16 {
    let t = super::opaque(u64::from(r.wrapping_add(k))) as u16;
    t.wrapping_add(((b ^ c) & a) ^ c).rotate_left(s)
}

/// One block with the four words in registers: the latency-bound path of CBC
/// encryption, where lane arrays of one cost more than they give.
#[inline(always)]
fn encrypt1(k: &[u16; 64], w: [u16; 4]) -> [u16; 4] {
    let [mut r0, mut r1, mut r2, mut r3] = w;
    let mut j = 0;
    for round in 0..16 {
        r0 = mix1(r0, k[j], r3, r2, r1, 1);
        r1 = mix1(r1, k[j + 1], r0, r3, r2, 2);
        r2 = mix1(r2, k[j + 2], r1, r0, r3, 3);
        r3 = mix1(r3, k[j + 3], r2, r1, r0, 5);
        j += 4;
        if round == 4 || round == 10 {
            r0 = r0.wrapping_add(k[usize::from(r3 & 63)]);
            r1 = r1.wrapping_add(k[usize::from(r0 & 63)]);
            r2 = r2.wrapping_add(k[usize::from(r1 & 63)]);
            r3 = r3.wrapping_add(k[usize::from(r2 & 63)]);
        }
    }
    [r0, r1, r2, r3]
}

impl KeySizeUser for Rc2 {
    type KeySize = U16;
}

impl KeyInit for Rc2 {
    fn new(key: &Key<Self>) -> Self {
        Self::new_from_slice(key).expect("16-byte key")
    }

    /// Any key of 1 to 128 bytes, with as many effective bits as it has.
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        Self::with_effective_bits(key, 8 * key.len().min(128))
    }
}

impl BlockSizeUser for Rc2 {
    type BlockSize = U8;
}

/// Block `x` of [`crate::modes::block64`] (a big-endian `u64`) as RC2's four
/// little-endian words, word 0 first.
#[inline(always)]
fn words(x: u64) -> [u16; 4] {
    let y = x.swap_bytes();
    [
        y as u16,
        (y >> 16) as u16,
        (y >> 32) as u16,
        (y >> 48) as u16,
    ]
}

/// The inverse of [`words`].
#[inline(always)]
fn join(w: [u16; 4]) -> u64 {
    (u64::from(w[0]) | u64::from(w[1]) << 16 | u64::from(w[2]) << 32 | u64::from(w[3]) << 48)
        .swap_bytes()
}

/// `x` as lane arrays of words through `f`, and back.
#[inline(always)]
fn through_lanes(x: &mut [u64; LANES], f: impl FnOnce(&mut Lanes<LANES>)) {
    let w = x.map(words);
    let mut r: Lanes<LANES> = core::array::from_fn(|j| core::array::from_fn(|l| w[l][j]));
    f(&mut r);
    *x = core::array::from_fn(|l| join(core::array::from_fn(|j| r[j][l])));
}

/// The catalogue's rows run on [`crate::modes::block64`]: counters and
/// chaining values in registers, no scratch copy of the data.
impl crate::modes::Kernel64<LANES> for Rc2 {
    #[inline]
    fn encrypt_one(&self, x: u64) -> u64 {
        join(encrypt1(&self.k, words(x)))
    }

    #[inline]
    fn decrypt_one(&self, x: u64) -> u64 {
        let mut r = words(x).map(|w| [w]);
        decrypt(&self.k, &mut r);
        join(r.map(|w| w[0]))
    }

    #[inline]
    fn encrypt_par(&self, x: &mut [u64; LANES]) {
        through_lanes(x, |r| encrypt(&self.k, r));
    }

    #[inline]
    fn decrypt_par(&self, x: &mut [u64; LANES]) {
        through_lanes(x, |r| decrypt(&self.k, r));
    }

    /// The chaining value stays in RC2's four words, in registers: each
    /// block waits for the one before it, and the generic loop's store and
    /// reload of it lengthened that wait.
    #[inline]
    fn cbc_encrypt(&self, iv: u64, blocks: &mut [[u8; 8]]) -> u64 {
        let mut w = words(iv);
        for b in blocks {
            let p: [u16; 4] =
                core::array::from_fn(|j| u16::from_le_bytes([b[2 * j], b[2 * j + 1]]));
            w = encrypt1(&self.k, core::array::from_fn(|j| w[j] ^ p[j]));
            for (c, w) in b.chunks_exact_mut(2).zip(w) {
                c.copy_from_slice(&w.to_le_bytes());
            }
        }
        join(w)
    }
}

impl ParBlocksSizeUser for Rc2 {
    type ParBlocksSize = U16;
}

impl BlockCipherEncrypt for Rc2 {
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U8>) {
        f.call(self)
    }
}

impl BlockCipherDecrypt for Rc2 {
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U8>) {
        f.call(self)
    }
}

impl BlockCipherEncBackend for Rc2 {
    #[inline]
    fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let r = load::<1>(&[&block.get_in()[..]]);
        let w = encrypt1(&self.k, [r[0][0], r[1][0], r[2][0], r[3][0]]);
        store(&w.map(|x| [x]), core::slice::from_mut(block.get_out()));
    }

    #[inline]
    fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let input = blocks.get_in();
        let mut r = load::<LANES>(&core::array::from_fn(|i| &input[i][..]));
        encrypt(&self.k, &mut r);
        store(&r, blocks.get_out());
    }
}

impl BlockCipherDecBackend for Rc2 {
    #[inline]
    fn decrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut r = load::<1>(&[&block.get_in()[..]]);
        decrypt(&self.k, &mut r);
        store(&r, core::slice::from_mut(block.get_out()));
    }

    #[inline]
    fn decrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let input = blocks.get_in();
        let mut r = load::<LANES>(&core::array::from_fn(|i| &input[i][..]));
        decrypt(&self.k, &mut r);
        store(&r, blocks.get_out());
    }
}

impl AlgorithmName for Rc2 {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RC2")
    }
}

impl fmt::Debug for Rc2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rc2 { ... }")
    }
}

impl Drop for Rc2 {
    fn drop(&mut self) {
        self.k.zeroize();
    }
}

impl ZeroizeOnDrop for Rc2 {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ciphers::test_support::XorShift;
    use hex_literal::hex;

    /// Key, effective bits, plaintext, ciphertext.
    type Vector = (&'static [u8], usize, [u8; 8], [u8; 8]);

    /// RFC 2268 section 5.
    #[test]
    fn rfc2268_vectors() {
        let cases: &[Vector] = &[
            (
                &hex!("0000000000000000"),
                63,
                hex!("0000000000000000"),
                hex!("ebb773f993278eff"),
            ),
            (
                &hex!("ffffffffffffffff"),
                64,
                hex!("ffffffffffffffff"),
                hex!("278b27e42e2f0d49"),
            ),
            (
                &hex!("3000000000000000"),
                64,
                hex!("1000000000000001"),
                hex!("30649edf9be7d2c2"),
            ),
            (
                &hex!("88"),
                64,
                hex!("0000000000000000"),
                hex!("61a8a244adacccf0"),
            ),
            (
                &hex!("88bca90e90875a"),
                64,
                hex!("0000000000000000"),
                hex!("6ccf4308974c267f"),
            ),
            (
                &hex!("88bca90e90875a7f0f79c384627bafb2"),
                64,
                hex!("0000000000000000"),
                hex!("1a807d272bbe5db1"),
            ),
            (
                &hex!("88bca90e90875a7f0f79c384627bafb2"),
                128,
                hex!("0000000000000000"),
                hex!("2269552ab0f85ca6"),
            ),
            (
                &hex!("88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e"),
                129,
                hex!("0000000000000000"),
                hex!("5b78d3a43dfff1f1"),
            ),
        ];
        for (key, bits, pt, ct) in cases {
            let c = Rc2::with_effective_bits(key, *bits).unwrap();
            let mut b = Block::<Rc2>::from(*pt);
            BlockCipherEncrypt::encrypt_block(&c, &mut b);
            assert_eq!(b, Block::<Rc2>::from(*ct), "key {}", hex::encode(key));
            BlockCipherDecrypt::decrypt_block(&c, &mut b);
            assert_eq!(b, Block::<Rc2>::from(*pt));
        }
    }

    /// Every lane count against the `rc2` crate, random keys of every length.
    #[test]
    fn matches_the_rc2_crate() {
        let mut rng = XorShift(0x2268);
        for len in [1usize, 5, 8, 16, 33, 128] {
            let mut key = vec![0u8; len];
            rng.fill(&mut key);
            let ours = Rc2::new_from_slice(&key).unwrap();
            let oracle = rc2::Rc2::new_from_slice(&key).unwrap();
            for blocks in [1usize, 3, 16, 17, 40] {
                let mut data = vec![0u8; 8 * blocks];
                rng.fill(&mut data);
                let (mut a, mut b) = (data.clone(), data.clone());
                let (ab, _) = Block::<Rc2>::slice_as_chunks_mut(&mut a);
                ours.encrypt_blocks(ab);
                let (bb, _) = Block::<rc2::Rc2>::slice_as_chunks_mut(&mut b);
                oracle.encrypt_blocks(bb);
                assert_eq!(a, b, "key length {len}, {blocks} blocks");
                let (ab, _) = Block::<Rc2>::slice_as_chunks_mut(&mut a);
                ours.decrypt_blocks(ab);
                assert_eq!(a, data);
            }
        }
        assert!(Rc2::new_from_slice(&[]).is_err());
        assert!(Rc2::new_from_slice(&[0; 129]).is_err());
        assert!(Rc2::with_effective_bits(&[1], 0).is_err());
    }
}
