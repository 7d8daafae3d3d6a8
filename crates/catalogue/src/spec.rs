//! Cipher specifications as cryptsetup spells them: `aes-xts-plain64`,
//! `twofish-cbc-essiv:sha256`, `serpent-cbc-plain`, plus the stream ciphers and
//! AEADs of the catalogue (`chacha20`, `rc4`, `aes-gcm`, `chacha20-poly1305`).
//!
//! The grammar is cryptsetup's `cipher[:keycount]-chainmode-ivmode[:ivopts]`
//! (cryptsetup(8), "--cipher"); rows are labelled `cipher-chainmode` as
//! `cryptsetup benchmark` labels them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Kind};

/// How blocks are chained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Mode {
    /// Electronic codebook: every block alone. Insecure for real data.
    Ecb,
    /// Cipher block chaining (NIST SP 800-38A).
    Cbc,
    /// Counter mode, big-endian counter over the whole block (NIST SP 800-38A).
    Ctr,
    /// XEX with ciphertext stealing (IEEE 1619, NIST SP 800-38E).
    Xts,
    /// Galois/counter mode AEAD (NIST SP 800-38D).
    Gcm,
    /// ChaCha20 with Poly1305 AEAD (RFC 8439).
    Poly1305,
    /// A stream cipher used on its own.
    Stream,
    /// Adiantum with XChaCha12 and AES-256 (Crowley and Biggers, ToSC 2018):
    /// cryptsetup's `xchacha12,aes-adiantum`.
    #[serde(rename = "adiantum-xchacha12")]
    AdiantumXChaCha12,
    /// Adiantum with XChaCha20 and AES-256: `xchacha20,aes-adiantum`.
    #[serde(rename = "adiantum-xchacha20")]
    AdiantumXChaCha20,
    /// HCTR2 (Crowley, Huckleberry and Biggers 2021): AES-256 in XCTR with POLYVAL.
    Hctr2,
}

impl Mode {
    /// The chain-mode name (`cbc`, `xts`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ecb => "ecb",
            Mode::Cbc => "cbc",
            Mode::Ctr => "ctr",
            Mode::Xts => "xts",
            Mode::Gcm => "gcm",
            Mode::Poly1305 => "poly1305",
            Mode::Stream => "stream",
            Mode::AdiantumXChaCha12 | Mode::AdiantumXChaCha20 => "adiantum",
            Mode::Hctr2 => "hctr2",
        }
    }

    fn from_name(name: &str) -> Option<Mode> {
        Some(match name {
            "ecb" => Mode::Ecb,
            "cbc" => Mode::Cbc,
            "ctr" => Mode::Ctr,
            "xts" => Mode::Xts,
            "gcm" => Mode::Gcm,
            "poly1305" => Mode::Poly1305,
            "hctr2" => Mode::Hctr2,
            _ => return None,
        })
    }

    /// Whether the mode is an authenticated encryption mode.
    pub fn is_aead(self) -> bool {
        matches!(self, Mode::Gcm | Mode::Poly1305)
    }

    /// Whether the mode is a wide-block disk cipher (Adiantum, HCTR2): a
    /// whole sector is one block.
    pub fn is_wide(self) -> bool {
        matches!(
            self,
            Mode::AdiantumXChaCha12 | Mode::AdiantumXChaCha20 | Mode::Hctr2
        )
    }

    /// Whether the mode itself is unsafe for real data (ECB leaks equal blocks).
    pub fn is_broken(self) -> bool {
        self == Mode::Ecb
    }
}

/// How the per-sector IV is generated, as dm-crypt does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IvGen {
    /// No IV (ECB, stream ciphers without nonce).
    None,
    /// Sector number, 32-bit little-endian, zero padded.
    Plain,
    /// Sector number, 64-bit little-endian, zero padded.
    Plain64,
    /// Sector number, 64-bit big-endian, zero padded.
    Plain64Be,
    /// Encrypted salt-sector IV: E_{SHA-256(key)}(plain64).
    EssivSha256,
    /// A fresh random nonce per request (AEAD modes).
    Random,
}

impl IvGen {
    /// The dm-crypt name of the IV mode.
    pub fn name(self) -> &'static str {
        match self {
            IvGen::None => "null",
            IvGen::Plain => "plain",
            IvGen::Plain64 => "plain64",
            IvGen::Plain64Be => "plain64be",
            IvGen::EssivSha256 => "essiv:sha256",
            IvGen::Random => "random",
        }
    }

    fn from_name(name: &str) -> Result<IvGen, SpecError> {
        Ok(match name {
            "null" => IvGen::None,
            "plain" => IvGen::Plain,
            "plain64" => IvGen::Plain64,
            "plain64be" => IvGen::Plain64Be,
            "essiv:sha256" => IvGen::EssivSha256,
            "random" => IvGen::Random,
            other if other.starts_with("essiv:") => {
                return Err(SpecError::UnsupportedIv(format!(
                    "{other} (only essiv:sha256 is supported)"
                )));
            }
            other => return Err(SpecError::UnsupportedIv(other.to_string())),
        })
    }
}

/// A parsed and validated cipher specification with its key size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CipherSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The chaining mode.
    pub mode: Mode,
    /// The IV generator.
    pub iv: IvGen,
    /// Total key bits as cryptsetup counts them (both XTS keys together).
    pub key_bits: usize,
}

/// Why a cipher specification was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The cipher name is not in the catalogue.
    #[error("unknown cipher '{0}' (known: {known})", known = known_names())]
    UnknownCipher(String),
    /// The chain mode is not known.
    #[error(
        "unknown mode '{0}' (known: ecb, cbc, ctr, xts, gcm, hctr2, and chacha20-poly1305, xchacha12,aes-adiantum, xchacha20,aes-adiantum)"
    )]
    UnknownMode(String),
    /// The IV generator is not supported.
    #[error("unsupported IV mode '{0}' (supported: plain, plain64, plain64be, essiv:sha256, null)")]
    UnsupportedIv(String),
    /// The algorithm cannot be used in that mode.
    #[error("{algorithm} cannot be used in {mode} mode{hint}", algorithm = .0.name(), mode = .1.name(), hint = mode_hint(*.0, *.1))]
    ModeNotSupported(Algorithm, Mode),
    /// The IV generator does not fit the mode.
    #[error("IV mode '{iv}' does not fit {mode} mode", iv = .1.name(), mode = .0.name())]
    IvNotSupported(Mode, IvGen),
    /// A key count other than one (`aes:64-cbc-lmk`, loop-AES) was given.
    #[error("multi-key specifications ('{0}') are not supported")]
    KeyCount(String),
    /// The key size is not one the cipher takes.
    #[error("{label} does not take a {bits}-bit key (it takes {accepted})")]
    KeySize {
        /// The row label, e.g. `aes-xts`.
        label: String,
        /// The key size asked for.
        bits: usize,
        /// The sizes it takes.
        accepted: String,
    },
}

fn known_names() -> String {
    let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
    names.join(", ")
}

fn mode_hint(algorithm: Algorithm, mode: Mode) -> String {
    match (algorithm.kind(), mode) {
        (Kind::Block(bs), Mode::Xts) => format!(
            ": XTS needs a 128-bit block cipher and {} has {}-bit blocks",
            algorithm.name(),
            bs * 8
        ),
        (Kind::Stream, _) => format!(
            ": {} is a stream cipher, give it without a mode",
            algorithm.name()
        ),
        (_, Mode::Gcm) => ": GCM is offered with AES only".to_string(),
        (_, Mode::Poly1305) => ": Poly1305 is offered as chacha20-poly1305 only".to_string(),
        (_, Mode::AdiantumXChaCha12 | Mode::AdiantumXChaCha20) => {
            ": Adiantum is xchacha12,aes-adiantum or xchacha20,aes-adiantum".to_string()
        }
        (_, Mode::Hctr2) => ": HCTR2 is offered with AES only (aes-hctr2)".to_string(),
        _ => String::new(),
    }
}

impl CipherSpec {
    /// Parses a cryptsetup-style name and validates it against `key_bits`
    /// (`None` takes the algorithm's default, doubled for XTS).
    pub fn parse(text: &str, key_bits: Option<usize>) -> Result<CipherSpec, SpecError> {
        let (algorithm, mode, iv) = parse_name(text)?;
        let key_bits = key_bits.unwrap_or_else(|| {
            if mode.is_wide() {
                return 256;
            }
            let one = algorithm.default_key_bits();
            if mode == Mode::Xts { 2 * one } else { one }
        });
        CipherSpec::new(algorithm, mode, iv, key_bits)
    }

    /// Builds a spec from its parts, checking that they fit together.
    pub fn new(
        algorithm: Algorithm,
        mode: Mode,
        iv: IvGen,
        key_bits: usize,
    ) -> Result<CipherSpec, SpecError> {
        let ok = match (algorithm.kind(), mode) {
            (Kind::Stream, Mode::Stream) => true,
            (Kind::Stream, Mode::Poly1305) => algorithm == Algorithm::ChaCha20,
            (Kind::Stream, _) => false,
            (Kind::Block(_), Mode::Ecb | Mode::Cbc | Mode::Ctr) => true,
            (Kind::Block(bs), Mode::Xts) => bs == 16,
            (Kind::Block(_), Mode::Gcm) => algorithm == Algorithm::Aes,
            (Kind::Block(_), m) if m.is_wide() => algorithm == Algorithm::Aes,
            (Kind::Block(_), _) => false,
        };
        if !ok {
            return Err(SpecError::ModeNotSupported(algorithm, mode));
        }
        let iv_ok = match mode {
            Mode::Ecb => iv == IvGen::None,
            Mode::Stream => matches!(iv, IvGen::None | IvGen::Plain64),
            Mode::Gcm | Mode::Poly1305 => matches!(iv, IvGen::Random | IvGen::Plain64),
            Mode::Cbc | Mode::Ctr | Mode::Xts => iv != IvGen::Random,
            // dm-crypt's counting IVs as the 32-byte tweak (no ESSIV: its
            // encrypted IV is one block, the tweak two).
            _ => matches!(
                iv,
                IvGen::Plain | IvGen::Plain64 | IvGen::Plain64Be | IvGen::None
            ),
        };
        if !iv_ok {
            return Err(SpecError::IvNotSupported(mode, iv));
        }
        let spec = CipherSpec {
            algorithm,
            mode,
            iv,
            key_bits,
        };
        let sizes = if mode.is_wide() {
            // One 256-bit key: XChaCha's (Adiantum) or AES-256's (HCTR2).
            crate::KeySizes::List(&[256])
        } else {
            algorithm.key_sizes()
        };
        let fits = if mode == Mode::Xts {
            key_bits.is_multiple_of(2) && sizes.accepts(key_bits / 2)
        } else {
            sizes.accepts(key_bits)
        };
        if !fits {
            let accepted = if mode == Mode::Xts {
                match sizes {
                    crate::KeySizes::List(list) => {
                        let doubled: Vec<usize> = list.iter().map(|b| 2 * b).collect();
                        crate::algorithm::describe_list(&doubled) + " bits, two keys"
                    }
                    other => other.describe(),
                }
            } else {
                sizes.describe() + " bits"
            };
            return Err(SpecError::KeySize {
                label: spec.label(),
                bits: key_bits,
                accepted,
            });
        }
        Ok(spec)
    }

    /// The row label as `cryptsetup benchmark` prints it: `aes-cbc`, `chacha20`.
    pub fn label(&self) -> String {
        match self.mode {
            Mode::Stream => self.algorithm.name().to_string(),
            Mode::Poly1305 => "chacha20-poly1305".to_string(),
            Mode::AdiantumXChaCha12 => "xchacha12,aes-adiantum".to_string(),
            Mode::AdiantumXChaCha20 => "xchacha20,aes-adiantum".to_string(),
            _ => format!("{}-{}", self.algorithm.name(), self.mode.name()),
        }
    }

    /// The full name including the IV mode: `aes-xts-plain64`.
    pub fn full_name(&self) -> String {
        match (self.mode, self.iv) {
            (Mode::Ecb | Mode::Stream, IvGen::None) => self.label(),
            _ => format!("{}-{}", self.label(), self.iv.name()),
        }
    }

    /// Bits of one cipher key (half the total for XTS).
    pub fn cipher_key_bits(&self) -> usize {
        if self.mode == Mode::Xts {
            self.key_bits / 2
        } else {
            self.key_bits
        }
    }

    /// Total key length in bytes.
    pub fn key_len(&self) -> usize {
        self.key_bits.div_ceil(8)
    }

    /// Whether the row is insecure for real data (broken cipher or ECB).
    pub fn is_broken(&self) -> bool {
        self.algorithm.is_broken() || self.mode.is_broken()
    }

    /// The reason the row is insecure, if it is.
    pub fn insecurity(&self) -> Option<String> {
        match (self.algorithm.is_broken(), self.mode.is_broken()) {
            (true, _) => self
                .algorithm
                .weakness()
                .map(|w| format!("{} is broken: {w}", self.algorithm.name())),
            (false, true) => Some("ECB mode leaks equal plaintext blocks".to_string()),
            _ => None,
        }
    }
}

impl fmt::Display for CipherSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}b", self.full_name(), self.key_bits)
    }
}

fn parse_name(text: &str) -> Result<(Algorithm, Mode, IvGen), SpecError> {
    let lower = text.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(SpecError::UnknownCipher(String::new()));
    }
    if let Some(rest) = lower.strip_prefix("chacha20-poly1305") {
        let iv = match rest.strip_prefix('-') {
            None if rest.is_empty() => IvGen::Random,
            Some(iv) => IvGen::from_name(iv)?,
            None => return Err(SpecError::UnknownCipher(text.to_string())),
        };
        return Ok((Algorithm::ChaCha20, Mode::Poly1305, iv));
    }
    for (name, mode) in [
        ("xchacha12,aes-", Mode::AdiantumXChaCha12),
        ("xchacha20,aes-", Mode::AdiantumXChaCha20),
    ] {
        if let Some(rest) = lower.strip_prefix(name) {
            let iv = match rest.strip_prefix("adiantum") {
                Some("") => IvGen::Plain64,
                Some(iv) if iv.starts_with('-') => IvGen::from_name(&iv[1..])?,
                _ => return Err(SpecError::UnknownMode(rest.to_string())),
            };
            return Ok((Algorithm::Aes, mode, iv));
        }
    }
    let (alg_part, rest) = match lower.split_once('-') {
        Some((a, r)) => (a, Some(r)),
        None => (lower.as_str(), None),
    };
    let alg_name = match alg_part.split_once(':') {
        Some((name, "1")) => name,
        Some(_) => return Err(SpecError::KeyCount(text.to_string())),
        None => alg_part,
    };
    let algorithm =
        Algorithm::from_name(alg_name).ok_or_else(|| SpecError::UnknownCipher(alg_name.into()))?;
    if algorithm.kind() == Kind::Stream {
        return match rest {
            None => Ok((algorithm, Mode::Stream, IvGen::None)),
            Some(r) => match Mode::from_name(r.split('-').next().unwrap_or(r)) {
                Some(mode) => Err(SpecError::ModeNotSupported(algorithm, mode)),
                None => Err(SpecError::UnknownMode(r.to_string())),
            },
        };
    }
    // cryptsetup's default chain mode when only the cipher is named.
    let rest = rest.unwrap_or("cbc-plain64");
    let (mode_name, iv_name) = match rest.split_once('-') {
        Some((m, iv)) => (m, Some(iv)),
        None => (rest, None),
    };
    if mode_name == "adiantum" {
        return Err(SpecError::ModeNotSupported(
            algorithm,
            Mode::AdiantumXChaCha12,
        ));
    }
    let mode =
        Mode::from_name(mode_name).ok_or_else(|| SpecError::UnknownMode(mode_name.into()))?;
    let iv = match iv_name {
        Some(iv) => IvGen::from_name(iv)?,
        None => match mode {
            Mode::Ecb => IvGen::None,
            Mode::Gcm | Mode::Poly1305 => IvGen::Random,
            _ => IvGen::Plain64,
        },
    };
    Ok((algorithm, mode, iv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cryptsetup_names() {
        let s = CipherSpec::parse("aes-xts-plain64", Some(512)).unwrap();
        assert_eq!(
            (s.algorithm, s.mode, s.iv),
            (Algorithm::Aes, Mode::Xts, IvGen::Plain64)
        );
        assert_eq!(s.label(), "aes-xts");
        assert_eq!(s.cipher_key_bits(), 256);
        let s = CipherSpec::parse("twofish-cbc-essiv:sha256", Some(256)).unwrap();
        assert_eq!(s.iv, IvGen::EssivSha256);
        assert_eq!(s.full_name(), "twofish-cbc-essiv:sha256");
        let s = CipherSpec::parse("serpent-cbc-plain", Some(128)).unwrap();
        assert_eq!((s.mode, s.iv), (Mode::Cbc, IvGen::Plain));
        let s = CipherSpec::parse("AES", None).unwrap();
        assert_eq!((s.mode, s.key_bits), (Mode::Cbc, 256));
        assert_eq!(CipherSpec::parse("aes-xts", None).unwrap().key_bits, 512);
        let s = CipherSpec::parse("chacha20-poly1305", None).unwrap();
        assert_eq!((s.label().as_str(), s.key_bits), ("chacha20-poly1305", 256));
        let s = CipherSpec::parse("3des-cbc", None).unwrap();
        assert_eq!(s.label(), "des3_ede-cbc");
        assert_eq!(CipherSpec::parse("rc4", Some(256)).unwrap().label(), "rc4");
        assert_eq!(
            CipherSpec::parse("aes:1-ecb", Some(128)).unwrap().mode,
            Mode::Ecb
        );
    }

    #[test]
    fn rejects_bad_specs() {
        assert!(matches!(
            CipherSpec::parse("idea-cbc", None),
            Err(SpecError::UnknownCipher(_))
        ));
        assert!(matches!(
            CipherSpec::parse("aes-ofb", None),
            Err(SpecError::UnknownMode(_))
        ));
        let e = CipherSpec::parse("des-xts-plain64", None).unwrap_err();
        assert!(e.to_string().contains("128-bit block"), "{e}");
        let e = CipherSpec::parse("aes-cbc", Some(100)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "aes-cbc does not take a 100-bit key (it takes 128, 192 or 256 bits)"
        );
        let e = CipherSpec::parse("aes-xts", Some(128)).unwrap_err();
        assert!(e.to_string().contains("256, 384 or 512"), "{e}");
        assert!(CipherSpec::parse("aes-cbc-essiv:md5", None).is_err());
        assert!(CipherSpec::parse("aes:64-cbc-lmk", None).is_err());
        assert!(CipherSpec::parse("rc4-cbc", None).is_err());
        assert!(CipherSpec::parse("serpent-gcm", None).is_err());
        assert!(CipherSpec::parse("aes-ecb-plain64", None).is_err());
        assert!(CipherSpec::parse("", None).is_err());
    }

    #[test]
    fn broken_rows() {
        assert!(CipherSpec::parse("des-cbc", None).unwrap().is_broken());
        assert!(CipherSpec::parse("aes-ecb", None).unwrap().is_broken());
        assert!(!CipherSpec::parse("aes-cbc", None).unwrap().is_broken());
        assert!(!CipherSpec::parse("blowfish-cbc", None).unwrap().is_broken());
        assert!(
            CipherSpec::parse("tea-ctr", None)
                .unwrap()
                .insecurity()
                .is_some()
        );
    }
}
