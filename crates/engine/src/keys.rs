//! Keys: where the master key comes from and how each file's keys derive from it.
//!
//! The master key is either a raw 256-bit key (a key file) or Argon2id
//! (RFC 9106) of a passphrase with the file's random salt. From it, HKDF-SHA256
//! (RFC 5869) with the same salt derives the file's keys, so two encryptions of
//! one file under one key never share keys or nonces:
//!
//! - `info = "clustercrypt/v1 header"`: the 32-byte header MAC key;
//! - `info = "clustercrypt/v1 data"`: the data key (32 bytes for the AEADs,
//!   64 bytes = cipher key ‖ HMAC key for the CTR+HMAC suites).

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::{Zeroize, Zeroizing};

use crate::error::EngineError;
use crate::format::{Header, Kdf, SALT_LEN, Suite};

/// Length of a master key and of a key file.
pub const KEY_LEN: usize = 32;

/// A 256-bit master key, wiped from memory when dropped.
pub struct MasterKey(Zeroizing<[u8; KEY_LEN]>);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(..)")
    }
}

/// A passphrase, wiped from memory when dropped.
pub struct Passphrase(Zeroizing<Vec<u8>>);

impl std::fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Passphrase(..)")
    }
}

impl Passphrase {
    /// Takes ownership of the passphrase bytes.
    pub fn new(bytes: Vec<u8>) -> Result<Passphrase, EngineError> {
        let p = Passphrase(Zeroizing::new(bytes));
        if p.0.is_empty() {
            return Err(EngineError::Input("the passphrase is empty".into()));
        }
        Ok(p)
    }
}

/// Default Argon2id cost for passphrases: 64 MiB, 3 passes, 4 lanes.
pub const DEFAULT_ARGON2: Kdf = Kdf::Argon2id {
    memory_kib: 64 * 1024,
    iterations: 3,
    parallel: 4,
};

/// What the user gave to key a file.
#[derive(Debug)]
pub enum KeySource {
    /// A raw key (from a key file).
    Key(MasterKey),
    /// A passphrase, stretched with Argon2id.
    Passphrase(Passphrase),
}

impl MasterKey {
    /// Wraps raw key bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> MasterKey {
        MasterKey(Zeroizing::new(bytes))
    }

    /// A fresh random key from the operating system.
    pub fn generate() -> Result<MasterKey, EngineError> {
        let mut k = Zeroizing::new([0u8; KEY_LEN]);
        getrandom::fill(&mut *k)
            .map_err(|e| EngineError::Input(format!("no randomness from the OS: {e}")))?;
        Ok(MasterKey(k))
    }

    /// Parses a key file: 32 raw bytes, or 64 hexadecimal digits (whitespace allowed).
    pub fn from_key_file(contents: &[u8]) -> Result<MasterKey, EngineError> {
        if contents.len() == KEY_LEN {
            return Ok(MasterKey::from_bytes(
                contents.try_into().expect("32 bytes"),
            ));
        }
        let text: Zeroizing<Vec<u8>> = Zeroizing::new(
            contents
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect(),
        );
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        if text.len() == 2 * KEY_LEN && hex::decode_to_slice(&*text, &mut *key).is_ok() {
            return Ok(MasterKey(key));
        }
        Err(EngineError::Input(format!(
            "a key file holds a 256-bit key: {KEY_LEN} raw bytes or {} hexadecimal digits",
            2 * KEY_LEN
        )))
    }

    /// A second copy of the key (both are wiped when dropped).
    pub(crate) fn duplicate(&self) -> MasterKey {
        MasterKey::from_bytes(*self.0)
    }

    /// The key as 64 lowercase hexadecimal digits, for writing a key file.
    pub fn to_hex(&self) -> Zeroizing<String> {
        Zeroizing::new(hex::encode(*self.0))
    }

    /// Argon2id of `passphrase` with `salt` and the cost in `kdf`.
    pub fn from_passphrase(
        passphrase: &Passphrase,
        salt: &[u8; SALT_LEN],
        kdf: Kdf,
    ) -> Result<MasterKey, EngineError> {
        let Kdf::Argon2id {
            memory_kib,
            iterations,
            parallel,
        } = kdf
        else {
            return Err(EngineError::Input(
                "this file was encrypted with a key file, not a passphrase".into(),
            ));
        };
        let params = argon2::Params::new(memory_kib, iterations, parallel, Some(KEY_LEN))
            .map_err(|e| EngineError::Input(format!("Argon2 parameters: {e}")))?;
        let ctx = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        ctx.hash_password_into(&passphrase.0, salt, &mut *key)
            .map_err(|e| EngineError::Input(format!("Argon2: {e}")))?;
        Ok(MasterKey(key))
    }
}

/// The keys of one file.
pub struct FileKeys {
    /// HMAC-SHA256 key of the header.
    pub header: Zeroizing<[u8; 32]>,
    /// Data key: 32 bytes (AEAD) or cipher key ‖ MAC key (64 bytes).
    pub data: Zeroizing<Vec<u8>>,
}

impl FileKeys {
    /// Derives the keys of the file whose header is `header`.
    pub fn derive(master: &MasterKey, header: &Header) -> FileKeys {
        let hk = Hkdf::<Sha256>::new(Some(&header.salt), &*master.0);
        let mut header_key = Zeroizing::new([0u8; 32]);
        hk.expand(b"clustercrypt/v1 header", &mut *header_key)
            .expect("32 bytes is a valid HKDF output length");
        let len = match header.suite {
            Suite::Aes256Gcm | Suite::ChaCha20Poly1305 => 32,
            _ => 64,
        };
        let mut data = Zeroizing::new(vec![0u8; len]);
        hk.expand(b"clustercrypt/v1 data", &mut data)
            .expect("64 bytes is a valid HKDF output length");
        FileKeys {
            header: header_key,
            data,
        }
    }
}

/// Resolves a key source for an existing header (decryption).
pub fn master_for_header(source: &KeySource, header: &Header) -> Result<MasterKey, EngineError> {
    match (source, header.kdf) {
        (KeySource::Key(k), Kdf::KeyFile) => Ok(k.duplicate()),
        (KeySource::Passphrase(p), kdf @ Kdf::Argon2id { .. }) => {
            MasterKey::from_passphrase(p, &header.salt, kdf)
        }
        (KeySource::Key(_), _) => Err(EngineError::Input(
            "this file was encrypted with a passphrase; give the passphrase, not a key file".into(),
        )),
        (KeySource::Passphrase(_), _) => Err(EngineError::Input(
            "this file was encrypted with a key file; give --key-file, not a passphrase".into(),
        )),
    }
}

impl Drop for FileKeys {
    fn drop(&mut self) {
        self.header.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5869 Appendix A.1 (HKDF-SHA256 test case 1).
    #[test]
    fn hkdf_known_answer() {
        let ikm = [0x0bu8; 22];
        let salt = hex_literal::hex!("000102030405060708090a0b0c");
        let info = hex_literal::hex!("f0f1f2f3f4f5f6f7f8f9");
        let mut okm = [0u8; 42];
        Hkdf::<Sha256>::new(Some(&salt), &ikm)
            .expand(&info, &mut okm)
            .unwrap();
        assert_eq!(
            okm,
            hex_literal::hex!(
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
            )
        );
    }

    #[test]
    fn key_files() {
        let raw = [5u8; 32];
        assert_eq!(*MasterKey::from_key_file(&raw).unwrap().0, raw);
        let hex = format!("{}\n", hex::encode([0xabu8; 32]));
        assert_eq!(
            *MasterKey::from_key_file(hex.as_bytes()).unwrap().0,
            [0xab; 32]
        );
        assert!(MasterKey::from_key_file(b"too short").is_err());
        assert!(MasterKey::from_key_file(&[b'z'; 64]).is_err());
        let k = MasterKey::generate().unwrap();
        assert_eq!(
            *MasterKey::from_key_file(k.to_hex().as_bytes()).unwrap().0,
            *k.0
        );
        assert_eq!(format!("{k:?}"), "MasterKey(..)");
    }

    #[test]
    fn passphrases_stretch_with_the_salt() {
        let kdf = Kdf::Argon2id {
            memory_kib: 64,
            iterations: 1,
            parallel: 1,
        };
        let p = Passphrase::new(b"correct horse".to_vec()).unwrap();
        let a = MasterKey::from_passphrase(&p, &[1; 32], kdf).unwrap();
        let b = MasterKey::from_passphrase(&p, &[2; 32], kdf).unwrap();
        let c = MasterKey::from_passphrase(&p, &[1; 32], kdf).unwrap();
        assert_ne!(*a.0, *b.0);
        assert_eq!(*a.0, *c.0);
        assert!(Passphrase::new(Vec::new()).is_err());
    }
}
