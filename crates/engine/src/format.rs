//! The clustercrypt file format, version 1 (documented in docs/FORMAT.md).
//!
//! A fixed 100-byte header, authenticated by HMAC-SHA256 under a key derived
//! from the file key, then the data cut into fixed-size chunks, each sealed on
//! its own with a nonce made of the header's nonce prefix, the chunk index and
//! a last-chunk flag: the STREAM construction (Hoang, Reyhanitabar, Rogaway,
//! Vizár, "Online Authenticated-Encryption and its Nonce-Reuse
//! Misuse-Resistance", CRYPTO 2015, §7), laid out as Tink's streaming AEAD
//! lays it out (7-byte prefix, 32-bit big-endian counter, 1-byte flag).
//! Every chunk can be sealed and opened on its own, so in parallel, and
//! reordering, dropping, duplicating or truncating chunks is detected.

use crate::error::EngineError;

/// The first eight bytes of every file.
pub const MAGIC: [u8; 8] = *b"CLCRYPT\x1a";
/// The format version this code writes.
pub const VERSION: u16 = 1;
/// Total header length in bytes.
pub const HEADER_LEN: usize = 100;
/// Bytes of the header covered by its MAC.
pub const HEADER_MAC_OFFSET: usize = 68;
/// Length of the header MAC (HMAC-SHA256).
pub const HEADER_MAC_LEN: usize = 32;
/// Salt length (Argon2 salt and HKDF salt).
pub const SALT_LEN: usize = 32;
/// Nonce prefix length (STREAM).
pub const NONCE_PREFIX_LEN: usize = 7;
/// Default chunk size: 1 MiB.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;
/// Smallest chunk size accepted.
pub const MIN_CHUNK_SIZE: usize = 64;
/// Largest chunk size accepted (bounds memory when reading a hostile header).
pub const MAX_CHUNK_SIZE: usize = 64 << 20;
/// Largest Argon2 memory cost a header may ask for, KiB (4 GiB).
pub const MAX_ARGON2_MEMORY_KIB: u32 = 4 << 20;
/// Largest Argon2 time cost a header may ask for.
pub const MAX_ARGON2_ITERATIONS: u32 = 64;
/// Largest Argon2 parallelism a header may ask for.
pub const MAX_ARGON2_PARALLEL: u32 = 64;

/// The cipher suite of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Suite {
    /// AES-256-GCM (NIST SP 800-38D).
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 8439).
    ChaCha20Poly1305,
    /// AES-256-CTR then HMAC-SHA256 (encrypt-then-MAC).
    Aes256CtrHmac,
    /// Twofish-256-CTR then HMAC-SHA256.
    Twofish256CtrHmac,
    /// Serpent-256-CTR then HMAC-SHA256.
    Serpent256CtrHmac,
}

impl Suite {
    /// Every suite, in the order help texts list them.
    pub const ALL: [Suite; 5] = [
        Suite::Aes256Gcm,
        Suite::ChaCha20Poly1305,
        Suite::Aes256CtrHmac,
        Suite::Twofish256CtrHmac,
        Suite::Serpent256CtrHmac,
    ];

    /// The identifier stored in the header.
    pub fn id(self) -> u8 {
        match self {
            Suite::Aes256Gcm => 1,
            Suite::ChaCha20Poly1305 => 2,
            Suite::Aes256CtrHmac => 3,
            Suite::Twofish256CtrHmac => 4,
            Suite::Serpent256CtrHmac => 5,
        }
    }

    /// The suite with header identifier `id`.
    pub fn from_id(id: u8) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The name users type (`aes-256-gcm`, `twofish-256-ctr-hmac-sha256`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Suite::Aes256Gcm => "aes-256-gcm",
            Suite::ChaCha20Poly1305 => "chacha20-poly1305",
            Suite::Aes256CtrHmac => "aes-256-ctr-hmac-sha256",
            Suite::Twofish256CtrHmac => "twofish-256-ctr-hmac-sha256",
            Suite::Serpent256CtrHmac => "serpent-256-ctr-hmac-sha256",
        }
    }

    /// Looks a suite up by name; short forms (`aes-gcm`, `twofish`, `serpent`) too.
    pub fn from_name(name: &str) -> Option<Suite> {
        let n = name.to_ascii_lowercase();
        Some(match n.as_str() {
            "aes-256-gcm" | "aes-gcm" | "aes256gcm" => Suite::Aes256Gcm,
            "chacha20-poly1305" | "chacha20poly1305" | "chacha" => Suite::ChaCha20Poly1305,
            "aes-256-ctr-hmac-sha256" | "aes-ctr-hmac" | "aes-ctr" => Suite::Aes256CtrHmac,
            "twofish-256-ctr-hmac-sha256" | "twofish-ctr-hmac" | "twofish" => {
                Suite::Twofish256CtrHmac
            }
            "serpent-256-ctr-hmac-sha256" | "serpent-ctr-hmac" | "serpent" => {
                Suite::Serpent256CtrHmac
            }
            _ => return None,
        })
    }

    /// Bytes each sealed chunk adds (the tag).
    pub fn tag_len(self) -> usize {
        match self {
            Suite::Aes256Gcm | Suite::ChaCha20Poly1305 => 16,
            _ => 32,
        }
    }

    /// The suite for this CPU: AES-256-GCM with AES instructions, ChaCha20-Poly1305
    /// without (Raspberry Pi 3 and 4), where software AES is slow and not constant-time.
    pub fn default_for_cpu() -> Suite {
        if clustercrypt_catalogue::cpu::features().aes {
            Suite::Aes256Gcm
        } else {
            Suite::ChaCha20Poly1305
        }
    }
}

/// How the master key was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kdf {
    /// A raw 256-bit key from a key file.
    KeyFile,
    /// Argon2id (RFC 9106) of a passphrase with the header's salt.
    Argon2id {
        /// Memory cost in KiB.
        memory_kib: u32,
        /// Time cost (passes).
        iterations: u32,
        /// Lanes.
        parallel: u32,
    },
}

/// A parsed (not yet authenticated) header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Cipher suite.
    pub suite: Suite,
    /// Key derivation.
    pub kdf: Kdf,
    /// Plaintext bytes per chunk.
    pub chunk_size: usize,
    /// Salt for Argon2 and HKDF.
    pub salt: [u8; SALT_LEN],
    /// STREAM nonce prefix.
    pub nonce_prefix: [u8; NONCE_PREFIX_LEN],
}

impl Header {
    /// The 68 authenticated bytes, without the MAC.
    pub fn body(&self) -> [u8; HEADER_MAC_OFFSET] {
        let mut b = [0u8; HEADER_MAC_OFFSET];
        b[..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&VERSION.to_le_bytes());
        b[10] = self.suite.id();
        let (kdf, m, t, p) = match self.kdf {
            Kdf::KeyFile => (0u8, 0, 0, 0),
            Kdf::Argon2id {
                memory_kib,
                iterations,
                parallel,
            } => (1u8, memory_kib, iterations, parallel),
        };
        b[11] = kdf;
        b[12..16].copy_from_slice(&m.to_le_bytes());
        b[16..20].copy_from_slice(&t.to_le_bytes());
        b[20..24].copy_from_slice(&p.to_le_bytes());
        b[24..28].copy_from_slice(&(self.chunk_size as u32).to_le_bytes());
        b[28..60].copy_from_slice(&self.salt);
        b[60..67].copy_from_slice(&self.nonce_prefix);
        b
    }

    /// Parses the 100 header bytes. The MAC is returned for the caller to verify
    /// once it has the key.
    pub fn parse(bytes: &[u8]) -> Result<(Header, [u8; HEADER_MAC_LEN]), EngineError> {
        if bytes.len() < HEADER_LEN {
            if MAGIC.starts_with(&bytes[..bytes.len().min(8)]) && !bytes.is_empty() {
                return Err(EngineError::Truncated(
                    "the file ends inside its header".into(),
                ));
            }
            return Err(EngineError::NotOurs);
        }
        if bytes[..8] != MAGIC {
            return Err(EngineError::NotOurs);
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != VERSION {
            return Err(EngineError::Header(format!(
                "format version {version} is not supported (this build reads version {VERSION})"
            )));
        }
        let suite = Suite::from_id(bytes[10])
            .ok_or_else(|| EngineError::Header(format!("unknown cipher suite {}", bytes[10])))?;
        let (m, t, p) = (u32_at(12), u32_at(16), u32_at(20));
        let kdf = match bytes[11] {
            0 if (m, t, p) == (0, 0, 0) => Kdf::KeyFile,
            0 => {
                return Err(EngineError::Header(
                    "key-file header with KDF parameters".into(),
                ));
            }
            1 => {
                if !(8..=MAX_ARGON2_MEMORY_KIB).contains(&m)
                    || !(1..=MAX_ARGON2_ITERATIONS).contains(&t)
                    || !(1..=MAX_ARGON2_PARALLEL).contains(&p)
                    || m < 8 * p
                {
                    return Err(EngineError::Header(format!(
                        "Argon2 parameters out of range (memory {m} KiB, {t} iterations, {p} lanes)"
                    )));
                }
                Kdf::Argon2id {
                    memory_kib: m,
                    iterations: t,
                    parallel: p,
                }
            }
            other => {
                return Err(EngineError::Header(format!(
                    "unknown key derivation {other}"
                )));
            }
        };
        let chunk_size = u32_at(24) as usize;
        if !(MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&chunk_size) {
            return Err(EngineError::Header(format!(
                "chunk size {chunk_size} is out of range ({MIN_CHUNK_SIZE} to {MAX_CHUNK_SIZE})"
            )));
        }
        if bytes[67] != 0 {
            return Err(EngineError::Header("reserved byte is not zero".into()));
        }
        let header = Header {
            suite,
            kdf,
            chunk_size,
            salt: bytes[28..60].try_into().expect("32 bytes"),
            nonce_prefix: bytes[60..67].try_into().expect("7 bytes"),
        };
        let mac = bytes[HEADER_MAC_OFFSET..HEADER_LEN]
            .try_into()
            .expect("32 bytes");
        Ok((header, mac))
    }

    /// The STREAM nonce of chunk `index`: prefix ‖ index (32-bit big-endian) ‖ last flag.
    pub fn nonce(&self, index: u64, last: bool) -> Result<[u8; 12], EngineError> {
        let index = u32::try_from(index).map_err(|_| {
            EngineError::Input(
                "the file has more than 2^32 chunks; use a larger --chunk-size".into(),
            )
        })?;
        let mut n = [0u8; 12];
        n[..7].copy_from_slice(&self.nonce_prefix);
        n[7..11].copy_from_slice(&index.to_be_bytes());
        n[11] = u8::from(last);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            suite: Suite::Twofish256CtrHmac,
            kdf: Kdf::Argon2id {
                memory_kib: 65536,
                iterations: 3,
                parallel: 4,
            },
            chunk_size: 1 << 20,
            salt: [7; 32],
            nonce_prefix: [1, 2, 3, 4, 5, 6, 7],
        }
    }

    #[test]
    fn round_trips() {
        let h = sample();
        let mut bytes = h.body().to_vec();
        bytes.extend_from_slice(&[9; 32]);
        let (parsed, mac) = Header::parse(&bytes).unwrap();
        assert_eq!(parsed, h);
        assert_eq!(mac, [9; 32]);
        for s in Suite::ALL {
            assert_eq!(Suite::from_id(s.id()), Some(s));
            assert_eq!(Suite::from_name(s.name()), Some(s));
        }
    }

    #[test]
    fn rejects_bad_headers() {
        let mut good = sample().body().to_vec();
        good.extend_from_slice(&[0; 32]);
        assert!(matches!(
            Header::parse(b"hello world"),
            Err(EngineError::NotOurs)
        ));
        assert!(matches!(
            Header::parse(&good[..50]),
            Err(EngineError::Truncated(_))
        ));
        let bad = |at: usize, v: u8| {
            let mut b = good.clone();
            b[at] = v;
            Header::parse(&b)
        };
        assert!(matches!(bad(0, b'X'), Err(EngineError::NotOurs)));
        assert!(matches!(bad(8, 2), Err(EngineError::Header(_))));
        assert!(matches!(bad(10, 99), Err(EngineError::Header(_))));
        assert!(matches!(bad(11, 7), Err(EngineError::Header(_))));
        assert!(matches!(bad(16, 0), Err(EngineError::Header(_)))); // 0 iterations
        assert!(matches!(bad(27, 0xff), Err(EngineError::Header(_)))); // huge chunk
        assert!(matches!(bad(67, 1), Err(EngineError::Header(_))));
    }

    #[test]
    fn nonces_follow_stream() {
        let h = sample();
        assert_eq!(
            h.nonce(0, false).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            h.nonce(0x0102, true).unwrap(),
            [1, 2, 3, 4, 5, 6, 7, 0, 0, 1, 2, 1]
        );
        assert!(h.nonce(1 << 32, false).is_err());
    }
}
