//! Sealing and opening one chunk with a file's data key, for every suite.
//!
//! AEAD suites use the catalogue's AWS-LC AEADs with the STREAM nonce. The
//! CTR+HMAC suites are encrypt-then-MAC (Bellare and Namprempre 2000): CTR with
//! the counter block `nonce ‖ 0u32` (a chunk is far below 2^32 blocks), then
//! HMAC-SHA256 over `nonce ‖ aad ‖ ciphertext` (all fixed-length but the last,
//! so the encoding is unambiguous), checked in constant time before decrypting.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use clustercrypt_catalogue::aead::{Aead, AeadAlgorithm, TAG_LEN};
use clustercrypt_catalogue::ciphers;
use clustercrypt_catalogue::modes::BlockModes;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::format::Suite;

/// A chunk failed to verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unauthentic;

/// A suite keyed with a file's data key.
pub enum ChunkCipher {
    /// An AEAD.
    Aead(Aead),
    /// CTR with a block cipher, then HMAC-SHA256.
    CtrHmac(Box<CtrHmac>),
}

/// CTR + HMAC-SHA256 state: the keyed block cipher and the MAC key.
pub struct CtrHmac {
    cipher: CtrCipher,
    mac_key: Zeroizing<[u8; 32]>,
}

enum CtrCipher {
    Aes(Box<aes::Aes256>),
    Twofish(Box<ciphers::twofish::Twofish>),
    Serpent(Box<ciphers::Serpent>),
}

fn ctr<C: BlockCipherEncrypt + BlockCipherDecrypt + Clone>(
    c: &C,
    nonce: &[u8; 12],
    data: &mut [u8],
) {
    let mut counter = [0u8; 16];
    counter[..12].copy_from_slice(nonce);
    BlockModes::new(c.clone()).ctr_apply(&mut counter, data);
}

impl CtrHmac {
    fn apply(&self, nonce: &[u8; 12], data: &mut [u8]) {
        match &self.cipher {
            CtrCipher::Aes(c) => ctr(&**c, nonce, data),
            CtrCipher::Twofish(c) => ctr(&**c, nonce, data),
            CtrCipher::Serpent(c) => ctr(&**c, nonce, data),
        }
    }

    fn mac(&self, nonce: &[u8; 12], aad: &[u8], ciphertext: &[u8]) -> Hmac<Sha256> {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&*self.mac_key)
            .expect("HMAC takes any key length");
        m.update(nonce);
        m.update(aad);
        m.update(ciphertext);
        m
    }
}

impl ChunkCipher {
    /// Keys `suite` with `data_key` (32 bytes for AEADs, 64 for CTR+HMAC).
    pub fn new(suite: Suite, data_key: &[u8]) -> ChunkCipher {
        let aead = |alg| ChunkCipher::Aead(Aead::new(alg, data_key).expect("32-byte AEAD key"));
        let ctr_hmac = |cipher| {
            let mut mac_key = Zeroizing::new([0u8; 32]);
            mac_key.copy_from_slice(&data_key[32..64]);
            ChunkCipher::CtrHmac(Box::new(CtrHmac { cipher, mac_key }))
        };
        let k = &data_key[..32];
        match suite {
            Suite::Aes256Gcm => aead(AeadAlgorithm::AesGcm),
            Suite::ChaCha20Poly1305 => aead(AeadAlgorithm::ChaCha20Poly1305),
            Suite::Aes256CtrHmac => ctr_hmac(CtrCipher::Aes(Box::new(
                aes::Aes256::new_from_slice(k).expect("32-byte key"),
            ))),
            Suite::Twofish256CtrHmac => ctr_hmac(CtrCipher::Twofish(Box::new(
                ciphers::twofish::Twofish::new_from_slice(k).expect("32-byte key"),
            ))),
            Suite::Serpent256CtrHmac => ctr_hmac(CtrCipher::Serpent(Box::new(
                ciphers::Serpent::new_from_slice(k).expect("32-byte key"),
            ))),
        }
    }

    /// Encrypts `data` in place and appends the tag.
    pub fn seal(&self, nonce: &[u8; 12], aad: &[u8], data: &mut Vec<u8>) {
        match self {
            ChunkCipher::Aead(a) => {
                let tag = a.seal(nonce, aad, data);
                data.extend_from_slice(&tag);
            }
            ChunkCipher::CtrHmac(c) => {
                c.apply(nonce, data);
                let tag = c.mac(nonce, aad, data).finalize().into_bytes();
                data.extend_from_slice(&tag);
            }
        }
    }

    /// Checks the tag at the end of `data` and decrypts the rest in place,
    /// removing the tag. On failure `data` must be discarded.
    pub fn open(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        data: &mut Vec<u8>,
    ) -> Result<(), Unauthentic> {
        match self {
            ChunkCipher::Aead(a) => {
                let at = data.len().checked_sub(TAG_LEN).ok_or(Unauthentic)?;
                let tag: [u8; TAG_LEN] = data[at..].try_into().expect("16 bytes");
                data.truncate(at);
                a.open(nonce, aad, data, &tag).map_err(|_| Unauthentic)
            }
            ChunkCipher::CtrHmac(c) => {
                let at = data.len().checked_sub(32).ok_or(Unauthentic)?;
                // `verify_slice` compares in constant time.
                c.mac(nonce, aad, &data[..at])
                    .verify_slice(&data[at..])
                    .map_err(|_| Unauthentic)?;
                data.truncate(at);
                c.apply(nonce, data);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_round_trips_and_rejects_changes() {
        let key: Vec<u8> = (0..64).collect();
        for suite in Suite::ALL {
            let c = ChunkCipher::new(suite, &key[..if suite.tag_len() == 16 { 32 } else { 64 }]);
            let nonce = [3u8; 12];
            let plain: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
            let mut data = plain.clone();
            c.seal(&nonce, b"aad", &mut data);
            assert_eq!(data.len(), plain.len() + suite.tag_len(), "{suite:?}");
            assert_ne!(&data[..plain.len()], &plain[..]);
            let sealed = data.clone();
            c.open(&nonce, b"aad", &mut data).unwrap();
            assert_eq!(data, plain, "{suite:?}");
            for flip in [0, 500, sealed.len() - 1] {
                let mut bad = sealed.clone();
                bad[flip] ^= 1;
                assert_eq!(
                    c.open(&nonce, b"aad", &mut bad),
                    Err(Unauthentic),
                    "{suite:?}"
                );
            }
            let mut bad = sealed.clone();
            assert_eq!(c.open(&[4u8; 12], b"aad", &mut bad), Err(Unauthentic));
            let mut bad = sealed.clone();
            assert_eq!(c.open(&nonce, b"aaD", &mut bad), Err(Unauthentic));
            let mut short = vec![0u8; 3];
            assert_eq!(c.open(&nonce, b"aad", &mut short), Err(Unauthentic));
        }
    }
}
