//! TEA and XTEA, eight blocks at a time.
//!
//! There is no TEA crate on the current `cipher` traits, and the `xtea` crate
//! processes one block per call. Both ciphers are 32 Feistel cycles of adds,
//! shifts and XORs on 32-bit words, so eight blocks kept in lane arrays let the
//! compiler use SIMD registers for the parallel modes.
//!
//! TEA: Wheeler and Needham, "TEA, a Tiny Encryption Algorithm", FSE 1994.
//! XTEA: Needham and Wheeler, "Tea extensions", 1997.
//! Words are little-endian, as in the Linux kernel's `crypto/tea.c` and the
//! `xtea` crate, and as the TEA study's C code read them on the Raspberry Pi.

use core::fmt;

use cipher::consts::{U8, U16};
use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
};
use zeroize::{Zeroize, ZeroizeOnDrop};

const DELTA: u32 = 0x9e37_79b9;
const CYCLES: u32 = 32;
/// Blocks the parallel kernels take at once.
pub const LANES: usize = 8;

fn load_key(key: &[u8]) -> Result<[u32; 4], InvalidLength> {
    if key.len() != 16 {
        return Err(InvalidLength);
    }
    let mut k = [0u32; 4];
    for (w, c) in k.iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    Ok(k)
}

#[inline(always)]
fn load<const N: usize>(blocks: &[&[u8]; N]) -> ([u32; N], [u32; N]) {
    let mut v0 = [0u32; N];
    let mut v1 = [0u32; N];
    for i in 0..N {
        v0[i] = u32::from_le_bytes(blocks[i][..4].try_into().expect("4 bytes"));
        v1[i] = u32::from_le_bytes(blocks[i][4..8].try_into().expect("4 bytes"));
    }
    (v0, v1)
}

macro_rules! tea_family {
    ($name:ident, $label:literal, $enc:ident, $dec:ident) => {
        #[doc = concat!("The ", $label, " block cipher (64-bit block, 128-bit key).")]
        #[derive(Clone)]
        pub struct $name {
            k: [u32; 4],
            /// Per-cycle round constants (XTEA: `sum + k[..]`), computed at key setup.
            rk: [u32; 64],
            repeats: u32,
        }

        impl $name {
            /// A cipher that applies the whole block function `repeats` times to each
            /// block (the TEA study's "rounds" knob that makes the work heavier).
            pub fn with_repeats(key: &[u8], repeats: u32) -> Result<Self, InvalidLength> {
                let k = load_key(key)?;
                Ok($name {
                    k,
                    rk: xtea_schedule(&k),
                    repeats: repeats.max(1),
                })
            }
        }

        impl KeySizeUser for $name {
            type KeySize = U16;
        }

        impl KeyInit for $name {
            fn new(key: &Key<Self>) -> Self {
                Self::new_from_slice(key).expect("16-byte key")
            }

            fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
                Self::with_repeats(key, 1)
            }
        }

        impl BlockSizeUser for $name {
            type BlockSize = U8;
        }

        impl ParBlocksSizeUser for $name {
            type ParBlocksSize = U8;
        }

        impl BlockCipherEncrypt for $name {
            fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U8>) {
                f.call(self)
            }
        }

        impl BlockCipherDecrypt for $name {
            fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U8>) {
                f.call(self)
            }
        }

        impl BlockCipherEncBackend for $name {
            #[inline]
            fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
                let (mut v0, mut v1) = load::<1>(&[&block.get_in()[..]]);
                for _ in 0..self.repeats {
                    $enc(&self.k, &self.rk, &mut v0, &mut v1);
                }
                store(block.get_out(), v0[0], v1[0]);
            }

            #[inline]
            fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
                let input = blocks.get_in();
                let refs: [&[u8]; LANES] = core::array::from_fn(|i| &input[i][..]);
                let (mut v0, mut v1) = load::<LANES>(&refs);
                for _ in 0..self.repeats {
                    $enc(&self.k, &self.rk, &mut v0, &mut v1);
                }
                let out = blocks.get_out();
                for i in 0..LANES {
                    store(&mut out[i], v0[i], v1[i]);
                }
            }
        }

        /// The catalogue's rows run on [`crate::modes::block64`], whose
        /// blocks are big-endian `u64`s: word 0 is the high half, byte-swapped.
        impl crate::modes::Kernel64<LANES> for $name {
            #[inline]
            fn encrypt_one(&self, x: u64) -> u64 {
                let (mut v0, mut v1) = ([word0(x)], [word1(x)]);
                for _ in 0..self.repeats {
                    $enc(&self.k, &self.rk, &mut v0, &mut v1);
                }
                join(v0[0], v1[0])
            }

            #[inline]
            fn decrypt_one(&self, x: u64) -> u64 {
                let (mut v0, mut v1) = ([word0(x)], [word1(x)]);
                for _ in 0..self.repeats {
                    $dec(&self.k, &self.rk, &mut v0, &mut v1);
                }
                join(v0[0], v1[0])
            }

            #[inline]
            fn encrypt_par(&self, x: &mut [u64; LANES]) {
                let mut v0 = x.map(word0);
                let mut v1 = x.map(word1);
                for _ in 0..self.repeats {
                    $enc(&self.k, &self.rk, &mut v0, &mut v1);
                }
                *x = core::array::from_fn(|i| join(v0[i], v1[i]));
            }

            #[inline]
            fn decrypt_par(&self, x: &mut [u64; LANES]) {
                let mut v0 = x.map(word0);
                let mut v1 = x.map(word1);
                for _ in 0..self.repeats {
                    $dec(&self.k, &self.rk, &mut v0, &mut v1);
                }
                *x = core::array::from_fn(|i| join(v0[i], v1[i]));
            }

            /// The chaining value stays in the cipher's two words, in
            /// registers: one block waits for the one before it, and the
            /// generic loop's store and reload of it lengthened that wait.
            #[inline]
            fn cbc_encrypt(&self, iv: u64, blocks: &mut [[u8; 8]]) -> u64 {
                let (mut v0, mut v1) = ([word0(iv)], [word1(iv)]);
                for b in blocks {
                    let (p0, p1) = load::<1>(&[&b[..]]);
                    v0[0] ^= p0[0];
                    v1[0] ^= p1[0];
                    for _ in 0..self.repeats {
                        $enc(&self.k, &self.rk, &mut v0, &mut v1);
                    }
                    store(b, v0[0], v1[0]);
                }
                join(v0[0], v1[0])
            }
        }

        impl BlockCipherDecBackend for $name {
            #[inline]
            fn decrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
                let (mut v0, mut v1) = load::<1>(&[&block.get_in()[..]]);
                for _ in 0..self.repeats {
                    $dec(&self.k, &self.rk, &mut v0, &mut v1);
                }
                store(block.get_out(), v0[0], v1[0]);
            }

            #[inline]
            fn decrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
                let input = blocks.get_in();
                let refs: [&[u8]; LANES] = core::array::from_fn(|i| &input[i][..]);
                let (mut v0, mut v1) = load::<LANES>(&refs);
                for _ in 0..self.repeats {
                    $dec(&self.k, &self.rk, &mut v0, &mut v1);
                }
                let out = blocks.get_out();
                for i in 0..LANES {
                    store(&mut out[i], v0[i], v1[i]);
                }
            }
        }

        impl AlgorithmName for $name {
            fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($label)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!($label, " { ... }"))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.k.zeroize();
                self.rk.zeroize();
            }
        }

        impl ZeroizeOnDrop for $name {}
    };
}

/// Word 0 (little-endian bytes 0-3) of a block held as a big-endian `u64`.
#[inline(always)]
fn word0(x: u64) -> u32 {
    ((x >> 32) as u32).swap_bytes()
}

/// Word 1 (little-endian bytes 4-7) of a block held as a big-endian `u64`.
#[inline(always)]
fn word1(x: u64) -> u32 {
    (x as u32).swap_bytes()
}

/// The big-endian `u64` of the block with words `v0` and `v1`.
#[inline(always)]
fn join(v0: u32, v1: u32) -> u64 {
    (u64::from(v0.swap_bytes()) << 32) | u64::from(v1.swap_bytes())
}

fn store(out: &mut [u8], v0: u32, v1: u32) {
    out[..4].copy_from_slice(&v0.to_le_bytes());
    out[4..8].copy_from_slice(&v1.to_le_bytes());
}

/// XTEA's round constants: `sum + k[sum & 3]` and `sum' + k[(sum' >> 11) & 3]`
/// for each of the 32 cycles, where sum' is sum after adding delta.
fn xtea_schedule(k: &[u32; 4]) -> [u32; 64] {
    let mut rk = [0u32; 64];
    let mut sum = 0u32;
    for c in 0..CYCLES as usize {
        rk[2 * c] = sum.wrapping_add(k[(sum & 3) as usize]);
        sum = sum.wrapping_add(DELTA);
        rk[2 * c + 1] = sum.wrapping_add(k[((sum >> 11) & 3) as usize]);
    }
    rk
}

#[inline(always)]
fn tea_encrypt<const N: usize>(k: &[u32; 4], _: &[u32; 64], v0: &mut [u32; N], v1: &mut [u32; N]) {
    let mut sum = 0u32;
    for _ in 0..CYCLES {
        sum = sum.wrapping_add(DELTA);
        for i in 0..N {
            let y = v1[i];
            v0[i] = v0[i].wrapping_add(
                (y << 4).wrapping_add(k[0]) ^ y.wrapping_add(sum) ^ (y >> 5).wrapping_add(k[1]),
            );
            let z = v0[i];
            v1[i] = v1[i].wrapping_add(
                (z << 4).wrapping_add(k[2]) ^ z.wrapping_add(sum) ^ (z >> 5).wrapping_add(k[3]),
            );
        }
    }
}

#[inline(always)]
fn tea_decrypt<const N: usize>(k: &[u32; 4], _: &[u32; 64], v0: &mut [u32; N], v1: &mut [u32; N]) {
    let mut sum = DELTA.wrapping_mul(CYCLES);
    for _ in 0..CYCLES {
        for i in 0..N {
            let z = v0[i];
            v1[i] = v1[i].wrapping_sub(
                (z << 4).wrapping_add(k[2]) ^ z.wrapping_add(sum) ^ (z >> 5).wrapping_add(k[3]),
            );
            let y = v1[i];
            v0[i] = v0[i].wrapping_sub(
                (y << 4).wrapping_add(k[0]) ^ y.wrapping_add(sum) ^ (y >> 5).wrapping_add(k[1]),
            );
        }
        sum = sum.wrapping_sub(DELTA);
    }
}

#[inline(always)]
fn xtea_encrypt<const N: usize>(
    _: &[u32; 4],
    rk: &[u32; 64],
    v0: &mut [u32; N],
    v1: &mut [u32; N],
) {
    for c in 0..CYCLES as usize {
        let (a, b) = (rk[2 * c], rk[2 * c + 1]);
        for i in 0..N {
            let y = v1[i];
            v0[i] = v0[i].wrapping_add((((y << 4) ^ (y >> 5)).wrapping_add(y)) ^ a);
            let z = v0[i];
            v1[i] = v1[i].wrapping_add((((z << 4) ^ (z >> 5)).wrapping_add(z)) ^ b);
        }
    }
}

#[inline(always)]
fn xtea_decrypt<const N: usize>(
    _: &[u32; 4],
    rk: &[u32; 64],
    v0: &mut [u32; N],
    v1: &mut [u32; N],
) {
    for c in (0..CYCLES as usize).rev() {
        let (a, b) = (rk[2 * c], rk[2 * c + 1]);
        for i in 0..N {
            let z = v0[i];
            v1[i] = v1[i].wrapping_sub((((z << 4) ^ (z >> 5)).wrapping_add(z)) ^ b);
            let y = v1[i];
            v0[i] = v0[i].wrapping_sub((((y << 4) ^ (y >> 5)).wrapping_add(y)) ^ a);
        }
    }
}

tea_family!(Tea, "TEA", tea_encrypt, tea_decrypt);
tea_family!(Xtea, "XTEA", xtea_encrypt, xtea_decrypt);

#[cfg(test)]
mod tests {
    use super::*;
    use hex_literal::hex;

    fn check<C: KeyInit + BlockCipherEncrypt + BlockCipherDecrypt>(
        key: &[u8],
        pt: [u8; 8],
        ct: [u8; 8],
    ) {
        let c = C::new_from_slice(key).unwrap();
        let mut b = Block::<C>::try_from(&pt[..]).unwrap();
        c.encrypt_block(&mut b);
        assert_eq!(b.as_slice(), ct);
        c.decrypt_block(&mut b);
        assert_eq!(b.as_slice(), pt);
        // The eight-lane path must give the same bytes as the one-block path.
        let mut many = [pt; 11].concat();
        let (blocks, _) = Block::<C>::slice_as_chunks_mut(&mut many);
        c.encrypt_blocks(blocks);
        assert!(many.chunks(8).all(|x| x == ct));
    }

    /// Linux kernel crypto/testmgr.h, tea_enc_tv_template (little-endian words).
    #[test]
    fn tea_known_answers() {
        check::<Tea>(&[0; 16], [0; 8], hex!("0a3aea4140a9ba94"));
        check::<Tea>(
            &hex!("2b02056806144976775d0e266c287843"),
            hex!("74657374206d652e"),
            hex!("775d2a6af6ce9209"),
        );
        let k2 = hex!("0965431166443925513a16100a08126e");
        check::<Tea>(&k2, hex!("6c6f6e6765725f74"), hex!("be7abb81952d1f1e"));
        check::<Tea>(&k2, hex!("6573745f76656374"), hex!("dd89a1250421df95"));
        let k3 = hex!("4d763217053f752c5d0416361572632f");
        check::<Tea>(&k3, hex!("5465612069732067"), hex!("e04d5d3cb78c3647"));
        check::<Tea>(&k3, hex!("6f6f6420666f7220"), hex!("94189591a9fc49f8"));
        check::<Tea>(&k3, hex!("796f752121212072"), hex!("44d12dc299b8082a"));
    }

    /// The vector the `xtea` crate tests with (asecuritysite.com/encryption/xtea).
    #[test]
    fn xtea_known_answer() {
        check::<Xtea>(b"0123456789012345", *b"ABCDEFGH", hex!("ea0c3d7c1c22557f"));
    }

    #[test]
    fn repeats_apply_the_cipher_again() {
        let once = Tea::new_from_slice(&[9; 16]).unwrap();
        let thrice = Tea::with_repeats(&[9; 16], 3).unwrap();
        let mut a = Block::<Tea>::from([1, 2, 3, 4, 5, 6, 7, 8]);
        let mut b = a;
        for _ in 0..3 {
            BlockCipherEncrypt::encrypt_block(&once, &mut a);
        }
        BlockCipherEncrypt::encrypt_block(&thrice, &mut b);
        assert_eq!(a, b);
        BlockCipherDecrypt::decrypt_block(&thrice, &mut b);
        assert_eq!(b.as_slice(), [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn xtea_matches_the_xtea_crate() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&next().to_le_bytes());
            key[8..].copy_from_slice(&next().to_le_bytes());
            let mut data: Vec<u8> = (0..19).flat_map(|_| next().to_le_bytes()).collect();
            let mut reference = data.clone();
            let ours = Xtea::new_from_slice(&key).unwrap();
            let theirs = xtea::Xtea::new_from_slice(&key).unwrap();
            ours.encrypt_blocks(Block::<Xtea>::slice_as_chunks_mut(&mut data).0);
            theirs.encrypt_blocks(Block::<xtea::Xtea>::slice_as_chunks_mut(&mut reference).0);
            assert_eq!(data, reference);
            ours.decrypt_blocks(Block::<Xtea>::slice_as_chunks_mut(&mut data).0);
            theirs.decrypt_blocks(Block::<xtea::Xtea>::slice_as_chunks_mut(&mut reference).0);
            assert_eq!(data, reference);
        }
    }
}
