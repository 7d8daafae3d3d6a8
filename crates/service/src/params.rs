//! From a request's query string and key headers to an engine job, checked
//! completely before any body byte is read.
//!
//! Secrets come in headers only (`X-Clustercrypt-Passphrase`,
//! `X-Clustercrypt-Key`), never in the query string, which proxies and logs
//! keep; they are copied into memory that is wiped when dropped.

use axum::http::HeaderMap;
use base64::Engine as _;
use clustercrypt_catalogue::CipherSpec;
use clustercrypt_engine::format::{DEFAULT_CHUNK_SIZE, Kdf, Suite};
use clustercrypt_engine::keys::{DEFAULT_ARGON2, KEY_LEN};
use clustercrypt_engine::raw::{self, Padding, RawParams};
use clustercrypt_engine::stream::{self, EncryptOptions};
use clustercrypt_engine::{KeySource, MasterKey, Passphrase};
use zeroize::Zeroizing;

use crate::error::ApiError;

/// The passphrase header: base64 (standard, padded) of the UTF-8 passphrase.
pub const PASSPHRASE_HEADER: &str = "x-clustercrypt-passphrase";
/// The key header: 64 hex digits (a key file's key), or any even number of
/// hex digits in raw mode.
pub const KEY_HEADER: &str = "x-clustercrypt-key";
/// The response header that warns about raw mode.
pub const WARNING_HEADER: &str = "x-clustercrypt-warning";

/// Which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `POST /v1/encrypt`.
    Encrypt,
    /// `POST /v1/decrypt`.
    Decrypt,
}

/// The work one request asks for.
pub enum Job {
    /// Into the authenticated format.
    Encrypt {
        /// Key or passphrase.
        key: KeySource,
        /// Suite, chunk size, threads, Argon2 cost.
        options: EncryptOptions,
    },
    /// Out of the authenticated format.
    Decrypt {
        /// Key or passphrase.
        key: KeySource,
        /// Worker threads.
        threads: usize,
    },
    /// A raw legacy mode (unauthenticated).
    Raw {
        /// Cipher, key, IV, padding.
        params: RawParams,
        /// Encrypt (else decrypt).
        encrypt: bool,
    },
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key: only what the job does.
        write!(f, "Job({})", self.describe())
    }
}

impl Job {
    /// The warning to send with a raw-mode response.
    pub fn warning(&self) -> Option<String> {
        let Job::Raw { params, .. } = self else {
            return None;
        };
        Some(format!(
            "raw mode is unauthenticated: changes to the data go undetected{}",
            params
                .spec
                .insecurity()
                .map(|r| format!("; {r}"))
                .unwrap_or_default()
        ))
    }

    /// A description for logs (no secrets).
    pub fn describe(&self) -> String {
        match self {
            Job::Encrypt { options, .. } => format!("encrypt {}", options.suite.name()),
            Job::Decrypt { .. } => "decrypt".into(),
            Job::Raw { params, encrypt } => format!(
                "raw {} {}",
                if *encrypt { "encrypt" } else { "decrypt" },
                params.spec.label()
            ),
        }
    }
}

/// Limits that parameters must respect.
#[derive(Debug, Clone, Copy)]
pub struct ParamLimits {
    /// Worker threads per job.
    pub threads: usize,
    /// Largest Argon2 memory, KiB.
    pub max_kdf_memory_kib: u32,
}

/// Parses a size: digits with an optional K, M or G (binary) suffix.
fn parse_size(name: &str, text: &str) -> Result<usize, ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "{name}: '{text}' is not a size (e.g. 65536, 64K, 1M)"
        ))
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    let n: usize = digits.parse().map_err(|_| bad())?;
    let mult: usize = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).filter(|&v| v > 0).ok_or_else(bad)
}

fn parse_u32(
    name: &str,
    text: &str,
    range: std::ops::RangeInclusive<u32>,
) -> Result<u32, ApiError> {
    text.parse::<u32>()
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "{name}: '{text}' is not a number from {} to {}",
                range.start(),
                range.end()
            ))
        })
}

fn parse_bool(name: &str, text: &str) -> Result<bool, ApiError> {
    match text {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "{name}: '{text}' is not true or false"
        ))),
    }
}

/// The query parameters, each at most once.
#[derive(Default)]
struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    fn parse(query: Option<&str>) -> Result<Query, ApiError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("malformed query string: {e}")))?;
        for (i, (k, _)) in pairs.iter().enumerate() {
            if pairs[..i].iter().any(|(p, _)| p == k) {
                return Err(ApiError::bad_request(format!(
                    "parameter '{k}' is given twice"
                )));
            }
        }
        Ok(Query { pairs })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Rejects any parameter not in `allowed`.
    fn only(&self, allowed: &[&str], context: &str) -> Result<(), ApiError> {
        match self
            .pairs
            .iter()
            .find(|(k, _)| !allowed.contains(&k.as_str()))
        {
            Some((k, _)) => Err(ApiError::bad_request(format!(
                "unknown or misplaced parameter '{k}' for {context} (allowed: {})",
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }
}

/// The key headers, decoded: exactly one of passphrase and key.
enum KeyHeader {
    Passphrase(Zeroizing<Vec<u8>>),
    Hex(Zeroizing<Vec<u8>>),
}

fn key_header(headers: &HeaderMap) -> Result<KeyHeader, ApiError> {
    let one = |name: &str| -> Result<Option<&[u8]>, ApiError> {
        let mut values = headers.get_all(name).iter();
        let first = values.next();
        if values.next().is_some() {
            return Err(ApiError::bad_request(format!("{name} is given twice")));
        }
        Ok(first.map(|v| v.as_bytes()))
    };
    match (one(PASSPHRASE_HEADER)?, one(KEY_HEADER)?) {
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "give X-Clustercrypt-Passphrase or X-Clustercrypt-Key, not both",
        )),
        (None, None) => Err(ApiError::bad_request(
            "no key: give X-Clustercrypt-Passphrase (base64 of the passphrase) or \
             X-Clustercrypt-Key (hex)",
        )),
        (Some(b64), None) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map(Zeroizing::new)
                .map_err(|_| {
                    ApiError::bad_request(
                        "X-Clustercrypt-Passphrase must be base64 (standard alphabet, padded) \
                         of the passphrase",
                    )
                })?;
            if bytes.is_empty() {
                return Err(ApiError::bad_request("the passphrase is empty"));
            }
            Ok(KeyHeader::Passphrase(bytes))
        }
        (None, Some(hex_digits)) => {
            let mut out = Zeroizing::new(vec![0u8; hex_digits.len() / 2]);
            if hex_digits.is_empty()
                || !hex_digits.len().is_multiple_of(2)
                || hex::decode_to_slice(hex_digits, &mut out).is_err()
            {
                return Err(ApiError::bad_request(
                    "X-Clustercrypt-Key must be hexadecimal digits",
                ));
            }
            Ok(KeyHeader::Hex(out))
        }
    }
}

fn key_source(headers: &HeaderMap) -> Result<KeySource, ApiError> {
    match key_header(headers)? {
        KeyHeader::Passphrase(bytes) => Passphrase::new(bytes.to_vec())
            .map(KeySource::Passphrase)
            .map_err(|e| ApiError::bad_request(e.to_string())),
        KeyHeader::Hex(bytes) => {
            let key: [u8; KEY_LEN] = bytes.as_slice().try_into().map_err(|_| {
                ApiError::bad_request(format!(
                    "X-Clustercrypt-Key holds a {}-bit key: {} hex digits",
                    KEY_LEN * 8,
                    KEY_LEN * 2
                ))
            })?;
            let k = MasterKey::from_bytes(key);
            let mut key = key;
            zeroize::Zeroize::zeroize(&mut key);
            Ok(KeySource::Key(k))
        }
    }
}

fn suite(text: &str) -> Result<Suite, ApiError> {
    Suite::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Suite::ALL.iter().map(|s| s.name()).collect();
        ApiError::bad_request(format!(
            "unknown suite '{text}' (known: {})",
            names.join(", ")
        ))
    })
}

const ENCRYPT_PARAMS: &[&str] = &[
    "raw",
    "suite",
    "chunk_size",
    "kdf_memory",
    "kdf_iterations",
    "kdf_parallel",
];
const RAW_PARAMS: &[&str] = &["raw", "cipher", "iv", "padding", "rounds", "chunk_size"];

/// Builds the job of a request, or says what is wrong with it.
pub fn parse(
    op: Op,
    query: Option<&str>,
    headers: &HeaderMap,
    limits: ParamLimits,
) -> Result<Job, ApiError> {
    let q = Query::parse(query)?;
    let is_raw = q
        .get("raw")
        .map(|v| parse_bool("raw", v))
        .transpose()?
        .unwrap_or(false);
    if is_raw {
        q.only(RAW_PARAMS, "raw mode")?;
        return raw_job(op, &q, headers, limits);
    }
    match op {
        Op::Decrypt => {
            q.only(
                &["raw"],
                "decryption (the file's header holds the suite, chunk size and KDF cost)",
            )?;
            Ok(Job::Decrypt {
                key: key_source(headers)?,
                threads: limits.threads,
            })
        }
        Op::Encrypt => {
            q.only(ENCRYPT_PARAMS, "encryption")?;
            let Kdf::Argon2id {
                memory_kib,
                iterations,
                parallel,
            } = DEFAULT_ARGON2
            else {
                unreachable!("the default KDF is Argon2id")
            };
            let cap = limits.max_kdf_memory_kib;
            let memory_kib = match q.get("kdf_memory") {
                Some(v) => parse_u32("kdf_memory", v, 64..=cap)?,
                None => memory_kib.min(cap),
            };
            let iterations = match q.get("kdf_iterations") {
                Some(v) => parse_u32("kdf_iterations", v, 1..=64)?,
                None => iterations,
            };
            let parallel = match q.get("kdf_parallel") {
                Some(v) => parse_u32("kdf_parallel", v, 1..=64)?,
                None => parallel,
            };
            if memory_kib < 8 * parallel {
                return Err(ApiError::bad_request(
                    "kdf_memory must be at least 8 KiB per lane (kdf_parallel)",
                ));
            }
            let options = EncryptOptions {
                suite: q
                    .get("suite")
                    .map(suite)
                    .transpose()?
                    .unwrap_or_else(Suite::default_for_cpu),
                chunk_size: q
                    .get("chunk_size")
                    .map(|v| parse_size("chunk_size", v))
                    .transpose()?
                    .unwrap_or(DEFAULT_CHUNK_SIZE),
                threads: limits.threads,
                argon2: Kdf::Argon2id {
                    memory_kib,
                    iterations,
                    parallel,
                },
            };
            stream::check_options(&options).map_err(|e| ApiError::bad_request(e.to_string()))?;
            Ok(Job::Encrypt {
                key: key_source(headers)?,
                options,
            })
        }
    }
}

fn raw_job(op: Op, q: &Query, headers: &HeaderMap, limits: ParamLimits) -> Result<Job, ApiError> {
    let name = q
        .get("cipher")
        .ok_or_else(|| ApiError::bad_request("raw mode needs cipher=<spec>, e.g. aes-cbc"))?;
    let key = match key_header(headers)? {
        KeyHeader::Hex(k) => k,
        KeyHeader::Passphrase(_) => {
            return Err(ApiError::bad_request(
                "raw mode takes a hex key in X-Clustercrypt-Key, not a passphrase",
            ));
        }
    };
    let spec = CipherSpec::parse(name, Some(key.len() * 8))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let iv = match q.get("iv") {
        Some(text) => {
            hex::decode(text).map_err(|_| ApiError::bad_request("iv must be hexadecimal digits"))?
        }
        None => Vec::new(),
    };
    let padding = match (q.get("padding"), spec.mode) {
        (Some("pkcs7"), _) => Padding::Pkcs7,
        (Some("none"), _) => Padding::None,
        (Some(other), _) => {
            return Err(ApiError::bad_request(format!(
                "padding: '{other}' is not pkcs7 or none"
            )));
        }
        (None, _) => raw::default_padding(spec.mode),
    };
    let params = RawParams {
        spec,
        key,
        iv,
        padding,
        repeats: q
            .get("rounds")
            .map(|v| parse_u32("rounds", v, 1..=1_000_000))
            .transpose()?
            .unwrap_or(1),
        chunk_size: q
            .get("chunk_size")
            .map(|v| parse_size("chunk_size", v))
            .transpose()?
            .unwrap_or(DEFAULT_CHUNK_SIZE)
            .min(clustercrypt_engine::format::MAX_CHUNK_SIZE),
        threads: limits.threads,
    };
    raw::check(&params).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Job::Raw {
        params,
        encrypt: op == Op::Encrypt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const LIMITS: ParamLimits = ParamLimits {
        threads: 2,
        max_kdf_memory_kib: 1 << 20,
    };

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn key() -> HeaderMap {
        headers(&[(KEY_HEADER, &"ab".repeat(32))])
    }

    fn err(r: Result<Job, ApiError>) -> String {
        let e = r.expect_err("should be rejected");
        assert_eq!(e.code, "bad_request");
        e.message
    }

    #[test]
    fn encryption_parameters() {
        let job = parse(
            Op::Encrypt,
            Some("suite=serpent-256-ctr-hmac-sha256&chunk_size=64K&kdf_memory=1024&kdf_iterations=1&kdf_parallel=2"),
            &headers(&[(PASSPHRASE_HEADER, "c2VjcmV0")]),
            LIMITS,
        )
        .unwrap();
        let Job::Encrypt {
            key: source,
            options,
        } = job
        else {
            panic!("not an encryption")
        };
        assert!(matches!(source, KeySource::Passphrase(_)));
        assert_eq!(options.suite, Suite::Serpent256CtrHmac);
        assert_eq!(options.chunk_size, 65536);
        assert_eq!(options.threads, 2);
        assert_eq!(
            options.argon2,
            Kdf::Argon2id {
                memory_kib: 1024,
                iterations: 1,
                parallel: 2
            }
        );
        assert!(matches!(
            parse(Op::Decrypt, None, &key(), LIMITS).unwrap(),
            Job::Decrypt {
                key: KeySource::Key(_),
                threads: 2
            }
        ));
    }

    #[test]
    fn malformed_parameters_are_rejected() {
        assert!(err(parse(Op::Encrypt, Some("suite=rot13"), &key(), LIMITS)).contains("rot13"));
        assert!(err(parse(Op::Encrypt, Some("colour=blue"), &key(), LIMITS)).contains("colour"));
        assert!(err(parse(Op::Encrypt, Some("chunk_size=1X"), &key(), LIMITS)).contains("size"));
        assert!(
            err(parse(Op::Encrypt, Some("chunk_size=8"), &key(), LIMITS)).contains("chunk size")
        );
        err(parse(
            Op::Encrypt,
            Some("suite=aes-256-gcm&suite=aes-256-gcm"),
            &key(),
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            Some("kdf_memory=2000000"),
            &key(),
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            Some("kdf_memory=64&kdf_parallel=16"),
            &key(),
            LIMITS,
        ));
        err(parse(
            Op::Decrypt,
            Some("suite=aes-256-gcm"),
            &key(),
            LIMITS,
        ));
        err(parse(Op::Encrypt, Some("raw=maybe"), &key(), LIMITS));
        // Key headers.
        err(parse(Op::Encrypt, None, &HeaderMap::new(), LIMITS));
        err(parse(
            Op::Encrypt,
            None,
            &headers(&[(KEY_HEADER, "abcd")]),
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            None,
            &headers(&[(KEY_HEADER, &"zz".repeat(32))]),
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            None,
            &headers(&[(PASSPHRASE_HEADER, "not base64!")]),
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            None,
            &headers(&[(PASSPHRASE_HEADER, "")]),
            LIMITS,
        ));
        let mut both = key();
        both.append(PASSPHRASE_HEADER, HeaderValue::from_static("c2VjcmV0"));
        err(parse(Op::Encrypt, None, &both, LIMITS));
        // A 32-character value is not taken as 32 raw key bytes.
        err(parse(
            Op::Encrypt,
            None,
            &headers(&[(KEY_HEADER, &"a".repeat(32))]),
            LIMITS,
        ));
    }

    #[test]
    fn raw_parameters() {
        let h = headers(&[(KEY_HEADER, "000102030405060708090a0b0c0d0e0f")]);
        let job = parse(
            Op::Decrypt,
            Some("raw=true&cipher=aes-cbc&iv=00000000000000000000000000000000"),
            &h,
            LIMITS,
        )
        .unwrap();
        assert!(job.warning().unwrap().contains("unauthenticated"));
        let Job::Raw { params, encrypt } = job else {
            panic!("not raw")
        };
        assert!(!encrypt);
        assert_eq!(params.padding, Padding::Pkcs7);
        assert_eq!(params.key.len(), 16);
        err(parse(Op::Encrypt, Some("raw=true"), &h, LIMITS));
        err(parse(
            Op::Encrypt,
            Some("raw=true&cipher=aes-cbc"),
            &h,
            LIMITS,
        )); // no IV
        err(parse(
            Op::Encrypt,
            Some("raw=true&cipher=aes-ecb&suite=aes-256-gcm"),
            &h,
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            Some("raw=true&cipher=aes-ctr&iv=00&padding=pkcs7"),
            &h,
            LIMITS,
        ));
        err(parse(
            Op::Encrypt,
            Some("raw=true&cipher=aes-ecb"),
            &headers(&[(PASSPHRASE_HEADER, "c2VjcmV0")]),
            LIMITS,
        ));
        assert!(
            parse(
                Op::Encrypt,
                Some("raw=1&cipher=aes-ecb&padding=none"),
                &h,
                LIMITS
            )
            .is_ok()
        );
    }
}
