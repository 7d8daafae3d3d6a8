//! AEADs: AES-GCM and ChaCha20-Poly1305, from AWS-LC (`aws-lc-rs`) or ours
//! ([`crate::gcm`]) as [`crate::dispatch`] decides.
//!
//! AWS-LC picks VAES/AVX-512, AES-NI+CLMUL or NEON+PMULL at run time; on the
//! Zen 4 it measured about 5x the `aes-gcm` crate. Nonces are 96 bits and
//! tags 128 bits (NIST SP 800-38D, RFC 8439).

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};

/// Nonce length in bytes.
pub const NONCE_LEN: usize = 12;
/// Tag length in bytes.
pub const TAG_LEN: usize = 16;

/// Which AEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AeadAlgorithm {
    /// AES-GCM with a 128, 192 or 256-bit key.
    AesGcm,
    /// ChaCha20-Poly1305 (256-bit key).
    ChaCha20Poly1305,
}

/// A keyed AEAD.
pub struct Aead {
    key: Key,
    algorithm: AeadAlgorithm,
}

/// The implementation behind an [`Aead`].
enum Key {
    AwsLc(LessSafeKey),
    Gcm(Box<crate::gcm::AesGcm>),
}

/// The AEAD rejected a ciphertext: wrong key, or the data or tag was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("authentication failed")]
pub struct AuthError;

impl Aead {
    /// Keys an AEAD; `None` if the key length does not fit the algorithm.
    pub fn new(algorithm: AeadAlgorithm, key: &[u8]) -> Option<Aead> {
        let alg = match (algorithm, key.len()) {
            (AeadAlgorithm::AesGcm, 16) => &aead::AES_128_GCM,
            (AeadAlgorithm::AesGcm, 24) => &aead::AES_192_GCM,
            (AeadAlgorithm::AesGcm, 32) => &aead::AES_256_GCM,
            (AeadAlgorithm::ChaCha20Poly1305, 32) => &aead::CHACHA20_POLY1305,
            _ => return None,
        };
        if algorithm == AeadAlgorithm::AesGcm
            && let Some(ghash) = crate::dispatch::aes_gcm()
            && let Some(gcm) = crate::gcm::AesGcm::new(key, ghash)
        {
            return Some(Aead {
                key: Key::Gcm(Box::new(gcm)),
                algorithm,
            });
        }
        let key = Key::AwsLc(LessSafeKey::new(UnboundKey::new(alg, key).ok()?));
        Some(Aead { key, algorithm })
    }

    /// Encrypts `data` in place and returns the tag.
    pub fn seal(&self, nonce: &[u8; NONCE_LEN], aad: &[u8], data: &mut [u8]) -> [u8; TAG_LEN] {
        let key = match &self.key {
            Key::Gcm(gcm) => return gcm.seal(nonce, aad, data),
            Key::AwsLc(key) => key,
        };
        let tag = key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*nonce), Aad::from(aad), data)
            .expect("AEAD sealing cannot fail for in-range lengths");
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(tag.as_ref());
        out
    }

    /// Verifies `tag` and decrypts `data` in place. On failure `data` holds no
    /// plaintext of use and must be discarded.
    pub fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), AuthError> {
        let key = match &self.key {
            Key::Gcm(gcm) => return gcm.open(nonce, aad, data, tag),
            Key::AwsLc(key) => key,
        };
        key.open_in_place_separate_tag(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(aad),
            tag,
            data,
        )
        .map(|_| ())
        .map_err(|_| AuthError)
    }

    /// Which implementation runs on this CPU (under the mask).
    pub fn backend(&self) -> &'static str {
        crate::dispatch::aead_name(self.algorithm == AeadAlgorithm::AesGcm)
    }
}
