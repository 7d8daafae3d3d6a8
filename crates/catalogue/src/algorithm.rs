//! The algorithms of the catalogue and what each one accepts.
//!
//! Key sizes are counted as cryptsetup counts them: in bits, and for XTS the
//! sum of the data key and the tweak key (so `aes-xts` 512b is AES-256).

use serde::{Deserialize, Serialize};

/// A block or stream cipher in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Algorithm {
    /// AES (FIPS-197).
    Aes,
    /// Serpent (AES finalist).
    Serpent,
    /// Twofish (AES finalist).
    Twofish,
    /// Camellia (RFC 3713).
    Camellia,
    /// Blowfish (Schneier 1993), 64-bit block.
    Blowfish,
    /// Single DES (FIPS 46-3), 64-bit block.
    Des,
    /// Triple DES in EDE mode with three keys (NIST SP 800-67).
    TripleDes,
    /// RC2 (RFC 2268), 64-bit block.
    Rc2,
    /// TEA (Wheeler and Needham 1994), 64-bit block.
    Tea,
    /// XTEA (Needham and Wheeler 1997), 64-bit block.
    Xtea,
    /// RC4 stream cipher.
    Rc4,
    /// ChaCha20 stream cipher (RFC 8439).
    ChaCha20,
}

/// Whether an algorithm processes fixed blocks or a key stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A block cipher with the given block size in bytes.
    Block(usize),
    /// A stream cipher.
    Stream,
}

/// The key sizes an algorithm takes, in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySizes {
    /// Exactly one of these.
    List(&'static [usize]),
    /// Any multiple of `step` from `min` to `max`, inclusive.
    Range {
        /// Smallest key in bits.
        min: usize,
        /// Largest key in bits.
        max: usize,
        /// Granularity in bits.
        step: usize,
    },
}

impl KeySizes {
    /// Whether `bits` is one of the accepted sizes.
    pub fn accepts(&self, bits: usize) -> bool {
        match *self {
            KeySizes::List(list) => list.contains(&bits),
            KeySizes::Range { min, max, step } => {
                (min..=max).contains(&bits) && (bits - min).is_multiple_of(step)
            }
        }
    }

    /// A human-readable description, e.g. `128, 192 or 256` or `32-448 in steps of 8`.
    pub fn describe(&self) -> String {
        match *self {
            KeySizes::List(list) => describe_list(list),
            KeySizes::Range { min, max, step } => format!("{min}-{max} in steps of {step}"),
        }
    }
}

/// `[128, 192, 256]` as `128, 192 or 256`.
pub(crate) fn describe_list(list: &[usize]) -> String {
    let parts: Vec<String> = list.iter().map(|b| b.to_string()).collect();
    match parts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {}", rest.join(", "), last),
        None => String::new(),
    }
}

impl Algorithm {
    /// Every algorithm, in the order tables list them.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Aes,
        Algorithm::Serpent,
        Algorithm::Twofish,
        Algorithm::Camellia,
        Algorithm::Blowfish,
        Algorithm::Des,
        Algorithm::TripleDes,
        Algorithm::Rc2,
        Algorithm::Tea,
        Algorithm::Xtea,
        Algorithm::Rc4,
        Algorithm::ChaCha20,
    ];

    /// The name cryptsetup and the Linux kernel use (`aes`, `des3_ede`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Aes => "aes",
            Algorithm::Serpent => "serpent",
            Algorithm::Twofish => "twofish",
            Algorithm::Camellia => "camellia",
            Algorithm::Blowfish => "blowfish",
            Algorithm::Des => "des",
            Algorithm::TripleDes => "des3_ede",
            Algorithm::Rc2 => "rc2",
            Algorithm::Tea => "tea",
            Algorithm::Xtea => "xtea",
            Algorithm::Rc4 => "rc4",
            Algorithm::ChaCha20 => "chacha20",
        }
    }

    /// Looks an algorithm up by its name or a common alias (`3des`, `bf`, `arc4`).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        let lower = name.to_ascii_lowercase();
        Some(match lower.as_str() {
            "aes" | "rijndael" => Algorithm::Aes,
            "serpent" => Algorithm::Serpent,
            "twofish" => Algorithm::Twofish,
            "camellia" => Algorithm::Camellia,
            "blowfish" | "bf" => Algorithm::Blowfish,
            "des" => Algorithm::Des,
            "des3_ede" | "3des" | "des3" | "tdes" | "des-ede3" | "des_ede3" => Algorithm::TripleDes,
            "rc2" => Algorithm::Rc2,
            "tea" => Algorithm::Tea,
            "xtea" => Algorithm::Xtea,
            "rc4" | "arc4" | "ecb(arc4)" => Algorithm::Rc4,
            "chacha20" => Algorithm::ChaCha20,
            _ => return None,
        })
    }

    /// Block or stream, and the block size.
    pub fn kind(self) -> Kind {
        match self {
            Algorithm::Aes | Algorithm::Serpent | Algorithm::Twofish | Algorithm::Camellia => {
                Kind::Block(16)
            }
            Algorithm::Blowfish
            | Algorithm::Des
            | Algorithm::TripleDes
            | Algorithm::Rc2
            | Algorithm::Tea
            | Algorithm::Xtea => Kind::Block(8),
            Algorithm::Rc4 | Algorithm::ChaCha20 => Kind::Stream,
        }
    }

    /// Block size in bytes, `None` for stream ciphers.
    pub fn block_size(self) -> Option<usize> {
        match self.kind() {
            Kind::Block(n) => Some(n),
            Kind::Stream => None,
        }
    }

    /// Key sizes of one key (not counting the second XTS key).
    pub fn key_sizes(self) -> KeySizes {
        match self {
            Algorithm::Aes | Algorithm::Serpent | Algorithm::Twofish | Algorithm::Camellia => {
                KeySizes::List(&[128, 192, 256])
            }
            Algorithm::Blowfish => KeySizes::Range {
                min: 32,
                max: 448,
                step: 8,
            },
            Algorithm::Des => KeySizes::List(&[64]),
            Algorithm::TripleDes => KeySizes::List(&[192]),
            Algorithm::Rc2 => KeySizes::Range {
                min: 8,
                max: 1024,
                step: 8,
            },
            Algorithm::Tea | Algorithm::Xtea => KeySizes::List(&[128]),
            Algorithm::Rc4 => KeySizes::Range {
                min: 40,
                max: 2048,
                step: 8,
            },
            Algorithm::ChaCha20 => KeySizes::List(&[256]),
        }
    }

    /// The key size used when none is given.
    pub fn default_key_bits(self) -> usize {
        match self {
            Algorithm::Aes | Algorithm::Serpent | Algorithm::Twofish | Algorithm::Camellia => 256,
            Algorithm::Blowfish | Algorithm::Rc2 | Algorithm::Tea | Algorithm::Xtea => 128,
            Algorithm::Rc4 => 128,
            Algorithm::Des => 64,
            Algorithm::TripleDes => 192,
            Algorithm::ChaCha20 => 256,
        }
    }

    /// Key sizes listed by `bench --all` (one key, not counting XTS's second key).
    pub fn catalogue_key_bits(self) -> &'static [usize] {
        match self {
            Algorithm::Aes | Algorithm::Serpent | Algorithm::Twofish | Algorithm::Camellia => {
                &[128, 192, 256]
            }
            Algorithm::Blowfish | Algorithm::Rc2 | Algorithm::Tea | Algorithm::Xtea => &[128],
            Algorithm::Des => &[64],
            Algorithm::TripleDes => &[192],
            Algorithm::Rc4 => &[128, 256],
            Algorithm::ChaCha20 => &[256],
        }
    }

    /// Why the algorithm must not protect real data, or `None` if it is considered secure.
    pub fn weakness(self) -> Option<&'static str> {
        match self {
            Algorithm::Des => Some("56-bit key, exhaustively searchable"),
            Algorithm::TripleDes => Some("64-bit block (Sweet32), withdrawn by NIST SP 800-131A"),
            Algorithm::Rc2 => Some("related-key attacks, 64-bit block"),
            Algorithm::Rc4 => Some("biased keystream (RFC 7465 prohibits it)"),
            Algorithm::Tea => Some("equivalent keys and related-key attacks"),
            Algorithm::Blowfish => Some("64-bit block (Sweet32): unsafe beyond a few GiB per key"),
            Algorithm::Xtea => Some("64-bit block (Sweet32): unsafe beyond a few GiB per key"),
            _ => None,
        }
    }

    /// Whether the algorithm is broken outright (DES, RC2, RC4, TEA), as opposed to merely
    /// limited (64-bit blocks).
    pub fn is_broken(self) -> bool {
        matches!(
            self,
            Algorithm::Des | Algorithm::Rc2 | Algorithm::Rc4 | Algorithm::Tea
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
        assert_eq!(Algorithm::from_name("3DES"), Some(Algorithm::TripleDes));
        assert_eq!(Algorithm::from_name("idea"), None);
    }

    #[test]
    fn key_sizes() {
        let bf = Algorithm::Blowfish.key_sizes();
        assert!(bf.accepts(32) && bf.accepts(448) && bf.accepts(128));
        assert!(!bf.accepts(24) && !bf.accepts(456) && !bf.accepts(129));
        assert!(Algorithm::Aes.key_sizes().accepts(192));
        assert!(!Algorithm::Aes.key_sizes().accepts(512));
        assert_eq!(Algorithm::Aes.key_sizes().describe(), "128, 192 or 256");
        for &a in Algorithm::ALL {
            assert!(a.key_sizes().accepts(a.default_key_bits()), "{a:?}");
            for &k in a.catalogue_key_bits() {
                assert!(a.key_sizes().accepts(k), "{a:?} {k}");
            }
        }
    }
}
