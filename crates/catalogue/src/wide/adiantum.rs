//! Adiantum (Crowley and Biggers, "Adiantum: length-preserving encryption for
//! entry-level processors", IACR ToSC 2018(4), section 4; the Linux kernel's
//! `crypto/adiantum.c`): a hash, encrypt, hash (HBSH) wide-block cipher from
//! XChaCha12 or XChaCha20 (our ChaCha kernels), one AES-256 block and NH + Poly1305. Every bit of
//! the sector depends on every bit of the plaintext and of the tweak.
//!
//! Encryption of `P = P_L || P_R` (`P_R` the last 16 bytes), tweak `T`:
//! `P_M = P_R + H(T, P_L)`, `C_M = AES(P_M)`,
//! `C_L = P_L ^ XChaCha(C_M || 1 || 0^7)`, `C_R = C_M - H(T, C_L)`, with
//! additions modulo 2^128 of little-endian numbers and
//! `H(T, M) = Poly1305_{K_T}(le128(8|M|) || T) + NHPoly1305_{K_M}(M)`.

use cipher::consts::U16;
use cipher::{Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use zeroize::Zeroizing;

use super::nh::{NHPOLY1305_KEY_BYTES, NhPoly1305};
use super::poly1305::Poly1305Hash;
use crate::chacha;

/// Adiantum's key: the XChaCha key, from which the others are derived.
pub const KEY_BYTES: usize = 32;
/// The shortest message Adiantum takes: one AES block.
pub const MIN_BYTES: usize = 16;

/// How many ChaCha rounds the stream cipher runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XChaChaRounds {
    /// XChaCha12, the variant Android and `cryptsetup` default to.
    R12,
    /// XChaCha20.
    R20,
}

/// Adiantum keyed with one 32-byte key, over the AES-256 implementation `C`.
pub struct Adiantum<C> {
    rounds: XChaChaRounds,
    stream_key: Zeroizing<[u8; 32]>,
    aes: C,
    header: Poly1305Hash,
    bulk: NhPoly1305,
}

impl<C> Adiantum<C>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    /// Derives the AES key `K_E`, the header hash key `K_T` and the
    /// NHPoly1305 key `K_M` from the XChaCha key stream of nonce `1 || 0^191`.
    pub fn new(key: &[u8; KEY_BYTES], rounds: XChaChaRounds) -> Self {
        let stream_key = Zeroizing::new(*key);
        let mut derived = Zeroizing::new([0u8; 32 + 16 + NHPOLY1305_KEY_BYTES]);
        // XChaCha nonce 1 || 0^191 (the kernel's `iv[0] = 1`), counter 0.
        let mut full = [0u8; 24];
        full[0] = 1;
        xchacha_xor(rounds, &stream_key, &full, &mut derived[..]);
        let aes = C::new_from_slice(&derived[..32]).expect("AES-256 takes 32 bytes");
        let header = Poly1305Hash::new(derived[32..48].try_into().expect("16 bytes"));
        let bulk = NhPoly1305::new(derived[48..].try_into().expect("NHPoly1305 key"));
        Adiantum {
            rounds,
            stream_key,
            aes,
            header,
            bulk,
        }
    }

    /// `H(T, M)` as a little-endian 128-bit number.
    fn hash(&self, tweak: &[u8], msg: &[u8]) -> u128 {
        let mut header = self.header.clone();
        header.reset();
        let mut head = Vec::with_capacity(16 + tweak.len());
        head.extend_from_slice(&((msg.len() as u128) * 8).to_le_bytes());
        head.extend_from_slice(tweak);
        header.update_message(&head);
        header.finish().wrapping_add(self.bulk.hash(msg))
    }

    fn stream(&self, c_m: &Block<C>, data: &mut [u8]) {
        let mut nonce = [0u8; 24];
        nonce[..16].copy_from_slice(c_m);
        nonce[16] = 1;
        xchacha_xor(self.rounds, &self.stream_key, &nonce, data);
    }

    /// Encrypts `data` (at least 16 bytes) in place under `tweak`.
    pub fn encrypt(&self, tweak: &[u8], data: &mut [u8]) {
        assert!(data.len() >= MIN_BYTES, "Adiantum needs at least 16 bytes");
        let (left, right) = data.split_at_mut(data.len() - 16);
        let p_r = u128::from_le_bytes((&*right).try_into().expect("16 bytes"));
        let mut block = Block::<C>::from(p_r.wrapping_add(self.hash(tweak, left)).to_le_bytes());
        self.aes.encrypt_block(&mut block);
        self.stream(&block, left);
        let c_m = u128::from_le_bytes(block.into());
        right.copy_from_slice(&c_m.wrapping_sub(self.hash(tweak, left)).to_le_bytes());
    }

    /// Decrypts `data` (at least 16 bytes) in place under `tweak`.
    pub fn decrypt(&self, tweak: &[u8], data: &mut [u8]) {
        assert!(data.len() >= MIN_BYTES, "Adiantum needs at least 16 bytes");
        let (left, right) = data.split_at_mut(data.len() - 16);
        let c_r = u128::from_le_bytes((&*right).try_into().expect("16 bytes"));
        let mut block = Block::<C>::from(c_r.wrapping_add(self.hash(tweak, left)).to_le_bytes());
        self.stream(&block, left);
        self.aes.decrypt_block(&mut block);
        let p_m = u128::from_le_bytes(block.into());
        right.copy_from_slice(&p_m.wrapping_sub(self.hash(tweak, left)).to_le_bytes());
    }
}

/// XChaCha through our dispatched ChaCha kernels (`crate::chacha`), counter 0.
fn xchacha_xor(rounds: XChaChaRounds, key: &[u8; 32], nonce: &[u8; 24], data: &mut [u8]) {
    let r = match rounds {
        XChaChaRounds::R12 => chacha::xchacha_xor_keystream::<12>(key, nonce, 0, data),
        XChaChaRounds::R20 => chacha::xchacha_xor_keystream::<20>(key, nonce, 0, data),
    };
    // Sectors and the key derivation are far below 2^32 blocks of 64 bytes.
    r.expect("Adiantum messages are shorter than 256 GiB");
}
