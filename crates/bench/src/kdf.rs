//! Key-derivation benchmarks as `cryptsetup benchmark` reports them.
//!
//! PBKDF2 (RFC 8018) is reported as iterations per second for a 256-bit key.
//! Argon2 (RFC 9106) is reported as the cost that takes the requested time:
//! cryptsetup keeps at least 4 iterations, uses memory up to 1 GiB (and at most
//! half of physical memory), and `min(4, CPUs)` lanes on as many threads; it
//! raises iterations once memory is at its cap, and lowers memory once
//! iterations are at their floor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::measure::MeasureError;

/// Key length cryptsetup derives in its benchmark.
pub const KEY_BITS: usize = 256;
/// cryptsetup's default requested time for Argon2.
pub const DEFAULT_TARGET_MS: u64 = 2000;
/// cryptsetup's minimum Argon2 iterations.
pub const ARGON2_MIN_ITERATIONS: u32 = 4;
/// cryptsetup's maximum Argon2 memory, KiB (1 GiB).
pub const ARGON2_MAX_MEMORY_KIB: u32 = 1 << 20;
/// Smallest memory the search goes down to, KiB.
pub const ARGON2_MIN_MEMORY_KIB: u32 = 32;
/// cryptsetup's maximum Argon2 parallelism.
pub const ARGON2_MAX_PARALLEL: u32 = 4;

/// A hash for PBKDF2-HMAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hash {
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
    /// RIPEMD-160.
    Ripemd160,
    /// Whirlpool.
    Whirlpool,
}

impl Hash {
    /// In cryptsetup's order.
    pub const ALL: [Hash; 5] = [
        Hash::Sha1,
        Hash::Sha256,
        Hash::Sha512,
        Hash::Ripemd160,
        Hash::Whirlpool,
    ];

    /// The name cryptsetup prints.
    pub fn name(self) -> &'static str {
        match self {
            Hash::Sha1 => "sha1",
            Hash::Sha256 => "sha256",
            Hash::Sha512 => "sha512",
            Hash::Ripemd160 => "ripemd160",
            Hash::Whirlpool => "whirlpool",
        }
    }

    /// Looks a hash up by name.
    pub fn from_name(name: &str) -> Option<Hash> {
        Hash::ALL
            .into_iter()
            .find(|h| h.name().eq_ignore_ascii_case(name))
    }
}

/// Which Argon2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Argon2Variant {
    /// Argon2i (data-independent addressing).
    Argon2i,
    /// Argon2id (hybrid).
    Argon2id,
}

impl Argon2Variant {
    /// The name cryptsetup prints.
    pub fn name(self) -> &'static str {
        match self {
            Argon2Variant::Argon2i => "argon2i",
            Argon2Variant::Argon2id => "argon2id",
        }
    }
}

/// A KDF to benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KdfSpec {
    /// PBKDF2-HMAC with a hash.
    Pbkdf2(Hash),
    /// Argon2.
    Argon2(Argon2Variant),
}

impl KdfSpec {
    /// cryptsetup's default KDF lines, in its order.
    pub fn cryptsetup_defaults() -> Vec<KdfSpec> {
        let mut v: Vec<KdfSpec> = Hash::ALL.into_iter().map(KdfSpec::Pbkdf2).collect();
        v.push(KdfSpec::Argon2(Argon2Variant::Argon2i));
        v.push(KdfSpec::Argon2(Argon2Variant::Argon2id));
        v
    }

    /// Parses `pbkdf2` (with `hash`), `pbkdf2-sha512`, `argon2i` or `argon2id`.
    pub fn parse(name: &str, hash: Option<&str>) -> Result<KdfSpec, String> {
        let lower = name.to_ascii_lowercase();
        let bad_hash = |h: &str| {
            format!("unknown PBKDF2 hash '{h}' (known: sha1, sha256, sha512, ripemd160, whirlpool)")
        };
        match lower.as_str() {
            "argon2i" => Ok(KdfSpec::Argon2(Argon2Variant::Argon2i)),
            "argon2id" => Ok(KdfSpec::Argon2(Argon2Variant::Argon2id)),
            "pbkdf2" => {
                let h = hash.unwrap_or("sha256");
                Hash::from_name(h)
                    .map(KdfSpec::Pbkdf2)
                    .ok_or_else(|| bad_hash(h))
            }
            other => match other.strip_prefix("pbkdf2-") {
                Some(h) => Hash::from_name(h)
                    .map(KdfSpec::Pbkdf2)
                    .ok_or_else(|| bad_hash(h)),
                None => Err(format!(
                    "unknown PBKDF '{name}' (known: pbkdf2, argon2i, argon2id)"
                )),
            },
        }
    }
}

/// One KDF line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kdf", rename_all = "lowercase")]
pub enum KdfResult {
    /// PBKDF2 speed.
    Pbkdf2 {
        /// The hash.
        hash: Hash,
        /// Iterations per second for a 256-bit key.
        iterations_per_second: u64,
        /// Derived key bits.
        key_bits: usize,
    },
    /// Argon2 cost for the requested time.
    Argon2 {
        /// The variant.
        variant: Argon2Variant,
        /// Time cost (passes).
        iterations: u32,
        /// Memory cost in KiB.
        memory_kib: u32,
        /// Lanes and threads.
        parallel: u32,
        /// Derived key bits.
        key_bits: usize,
        /// The time asked for.
        requested_ms: u64,
        /// The time the reported cost took when measured.
        measured_ms: u64,
    },
}

const PASSWORD: &[u8] = b"foobarfo";
const SALT: &[u8] = &[0x5a; 32];

/// PBKDF2 with `hash` into `out`. SHA-1, SHA-256 and SHA-512 run in AWS-LC,
/// which follows `CLUSTERCRYPT_DISABLE_HWF` (it is told the mask, see
/// `clustercrypt_catalogue::cpu`); the `sha1`/`sha2` crates pick SHA-NI by
/// themselves and cannot be told, so they are only the test oracle here.
/// RIPEMD-160 and Whirlpool have no instructions to hide.
fn pbkdf2_derive(hash: Hash, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
    use aws_lc_rs::pbkdf2::{PBKDF2_HMAC_SHA1, PBKDF2_HMAC_SHA256, PBKDF2_HMAC_SHA512, derive};
    let mut aws = |alg| {
        let n = std::num::NonZeroU32::new(iterations.max(1)).expect("at least one iteration");
        derive(alg, n, salt, password, out);
    };
    match hash {
        Hash::Sha1 => aws(PBKDF2_HMAC_SHA1),
        Hash::Sha256 => aws(PBKDF2_HMAC_SHA256),
        Hash::Sha512 => aws(PBKDF2_HMAC_SHA512),
        Hash::Ripemd160 => {
            pbkdf2::pbkdf2_hmac::<ripemd::Ripemd160>(password, salt, iterations, out)
        }
        Hash::Whirlpool => {
            pbkdf2::pbkdf2_hmac::<whirlpool::Whirlpool>(password, salt, iterations, out)
        }
    }
}

fn pbkdf2_once(hash: Hash, iterations: u32) {
    let mut out = [0u8; KEY_BITS / 8];
    pbkdf2_derive(hash, PASSWORD, SALT, iterations, &mut out);
    std::hint::black_box(out);
}

/// Doubles the iteration count until one derivation takes at least `min_time`,
/// then reports iterations per second of that derivation.
pub fn pbkdf2_speed(
    hash: Hash,
    min_time: Duration,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<KdfResult, MeasureError> {
    let mut iterations: u32 = 1000;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(MeasureError::Interrupted);
        }
        let start = clock.now();
        pbkdf2_once(hash, iterations);
        let elapsed = clock.now().saturating_sub(start);
        if elapsed >= min_time || iterations >= u32::MAX / 2 {
            let ips = iterations as f64 / elapsed.as_secs_f64().max(1e-9);
            return Ok(KdfResult::Pbkdf2 {
                hash,
                iterations_per_second: ips.round() as u64,
                key_bits: KEY_BITS,
            });
        }
        iterations *= 2;
    }
}

/// Limits of the Argon2 cost search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Argon2Limits {
    /// The time one derivation should take.
    pub target_ms: u64,
    /// Largest memory cost, KiB.
    pub max_memory_kib: u32,
    /// Lanes and threads.
    pub parallel: u32,
}

impl Argon2Limits {
    /// cryptsetup's defaults on this machine: 2000 ms, memory capped at 1 GiB and
    /// at half the physical memory, `min(4, CPUs)` threads.
    pub fn for_machine(physical_memory_bytes: u64, cpus: usize) -> Argon2Limits {
        let half_kib = (physical_memory_bytes / 2 / 1024).min(u32::MAX as u64) as u32;
        Argon2Limits {
            target_ms: DEFAULT_TARGET_MS,
            max_memory_kib: ARGON2_MAX_MEMORY_KIB.min(half_kib.max(ARGON2_MIN_MEMORY_KIB)),
            parallel: (cpus as u32).clamp(1, ARGON2_MAX_PARALLEL),
        }
    }
}

/// Runs one Argon2 derivation with the given cost on `parallel` threads.
fn argon2_once(
    variant: Argon2Variant,
    iterations: u32,
    memory_kib: u32,
    parallel: u32,
    pool: &rayon::ThreadPool,
) -> Result<(), MeasureError> {
    let params = argon2::Params::new(memory_kib, iterations, parallel, Some(KEY_BITS / 8))
        .map_err(|e| MeasureError::Method(format!("argon2 parameters: {e}")))?;
    let alg = match variant {
        Argon2Variant::Argon2i => argon2::Algorithm::Argon2i,
        Argon2Variant::Argon2id => argon2::Algorithm::Argon2id,
    };
    let ctx = argon2::Argon2::new(alg, argon2::Version::V0x13, params);
    let mut out = [0u8; KEY_BITS / 8];
    pool.install(|| ctx.hash_password_into(PASSWORD, SALT, &mut out))
        .map_err(|e| MeasureError::Method(format!("argon2: {e}")))?;
    std::hint::black_box(out);
    Ok(())
}

/// The next cost to try after measuring `ms` for `(t, m)`, or `None` when `ms`
/// is within 10% of the target or no step is possible.
pub fn next_argon2_cost(t: u32, m: u32, ms: f64, limits: &Argon2Limits) -> Option<(u32, u32)> {
    let target = limits.target_ms as f64;
    let ratio = target / ms.max(0.001);
    if (0.9..=1.1).contains(&(1.0 / ratio)) {
        return None;
    }
    let min_m = ARGON2_MIN_MEMORY_KIB.max(8 * limits.parallel);
    let next = if ratio > 1.0 {
        if m < limits.max_memory_kib {
            (t, ((m as f64 * ratio) as u32).min(limits.max_memory_kib))
        } else {
            (((t as f64 * ratio).round() as u32).max(t + 1), m)
        }
    } else if t > ARGON2_MIN_ITERATIONS {
        (
            ((t as f64 * ratio).floor() as u32).max(ARGON2_MIN_ITERATIONS),
            m,
        )
    } else {
        (t, ((m as f64 * ratio) as u32).max(min_m))
    };
    (next != (t, m)).then_some(next)
}

/// Finds the Argon2 cost that takes about `limits.target_ms` on this machine.
pub fn argon2_cost(
    variant: Argon2Variant,
    limits: &Argon2Limits,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<KdfResult, MeasureError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(limits.parallel as usize)
        .build()
        .map_err(|e| MeasureError::Method(format!("thread pool: {e}")))?;
    let (mut t, mut m) = (ARGON2_MIN_ITERATIONS, limits.max_memory_kib);
    let mut measured_ms;
    let mut steps = 0;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(MeasureError::Interrupted);
        }
        let start = clock.now();
        argon2_once(variant, t, m, limits.parallel, &pool)?;
        measured_ms = clock.now().saturating_sub(start).as_secs_f64() * 1000.0;
        steps += 1;
        match next_argon2_cost(t, m, measured_ms, limits) {
            Some(next) if steps < 6 => (t, m) = next,
            _ => break,
        }
    }
    Ok(KdfResult::Argon2 {
        variant,
        iterations: t,
        memory_kib: m,
        parallel: limits.parallel,
        key_bits: KEY_BITS,
        requested_ms: limits.target_ms,
        measured_ms: measured_ms.round() as u64,
    })
}

/// Runs one KDF benchmark.
pub fn run_kdf(
    kdf: KdfSpec,
    pbkdf2_time: Duration,
    limits: &Argon2Limits,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<KdfResult, MeasureError> {
    match kdf {
        KdfSpec::Pbkdf2(h) => pbkdf2_speed(h, pbkdf2_time, clock, cancel),
        KdfSpec::Argon2(v) => argon2_cost(v, limits, clock, cancel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hex_literal::hex;

    /// What the benchmark derives equals the RustCrypto `pbkdf2` crate, for
    /// every hash and a few iteration counts.
    #[test]
    fn pbkdf2_matches_the_crate() {
        for hash in Hash::ALL.iter().copied() {
            for iterations in [1u32, 2, 1000] {
                let mut ours = [0u8; 40];
                pbkdf2_derive(hash, b"pass\0word", b"sa\0lt", iterations, &mut ours);
                let mut oracle = [0u8; 40];
                let (p, s, n, o) = (&b"pass\0word"[..], &b"sa\0lt"[..], iterations, &mut oracle);
                match hash {
                    Hash::Sha1 => pbkdf2::pbkdf2_hmac::<sha1::Sha1>(p, s, n, o),
                    Hash::Sha256 => pbkdf2::pbkdf2_hmac::<sha2::Sha256>(p, s, n, o),
                    Hash::Sha512 => pbkdf2::pbkdf2_hmac::<sha2::Sha512>(p, s, n, o),
                    Hash::Ripemd160 => pbkdf2::pbkdf2_hmac::<ripemd::Ripemd160>(p, s, n, o),
                    Hash::Whirlpool => pbkdf2::pbkdf2_hmac::<whirlpool::Whirlpool>(p, s, n, o),
                }
                assert_eq!(ours, oracle, "{} x{iterations}", hash.name());
            }
        }
    }

    /// RFC 6070 §2 (PBKDF2-HMAC-SHA1) and RFC 7914 §11 (PBKDF2-HMAC-SHA256).
    #[test]
    fn pbkdf2_known_answers() {
        let mut out = [0u8; 20];
        pbkdf2_derive(Hash::Sha1, b"password", b"salt", 4096, &mut out);
        assert_eq!(out, hex!("4b007901b765489abead49d926f721d065a429c1"));
        let mut out = [0u8; 20];
        pbkdf2::pbkdf2_hmac::<sha1::Sha1>(b"password", b"salt", 4096, &mut out);
        assert_eq!(out, hex!("4b007901b765489abead49d926f721d065a429c1"));
        let mut out = [0u8; 64];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"passwd", b"salt", 1, &mut out);
        assert_eq!(
            out,
            hex!(
                "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
                "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
            )
        );
    }

    /// RFC 9106 §5.2 (Argon2i) and §5.3 (Argon2id) test vectors.
    #[test]
    fn argon2_known_answers() {
        let password = [1u8; 32];
        let salt = [2u8; 16];
        let secret = [3u8; 8];
        let ad = [4u8; 12];
        let params = argon2::ParamsBuilder::new()
            .m_cost(32)
            .t_cost(3)
            .p_cost(4)
            .output_len(32)
            .data(argon2::AssociatedData::new(&ad).unwrap())
            .build()
            .unwrap();
        for (alg, expected) in [
            (
                argon2::Algorithm::Argon2i,
                hex!("c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
            ),
            (
                argon2::Algorithm::Argon2id,
                hex!("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
            ),
        ] {
            let ctx = argon2::Argon2::new_with_secret(
                &secret,
                alg,
                argon2::Version::V0x13,
                params.clone(),
            )
            .unwrap();
            let mut out = [0u8; 32];
            ctx.hash_password_into(&password, &salt, &mut out).unwrap();
            assert_eq!(out, expected, "{alg:?}");
        }
    }

    #[test]
    fn pbkdf2_reports_iterations_per_second_of_the_last_run() {
        // Each reading advances 0.3 s: every derivation "takes" 0.3 s, so the first
        // one (1000 iterations) already exceeds 0.25 s.
        let clock = crate::clock::StepClock::new(Duration::from_millis(300));
        let r = pbkdf2_speed(
            Hash::Sha256,
            Duration::from_millis(250),
            &clock,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(
            r,
            KdfResult::Pbkdf2 {
                hash: Hash::Sha256,
                iterations_per_second: 3333,
                key_bits: 256
            }
        );
    }

    #[test]
    fn argon2_search_follows_cryptsetup_rules() {
        let limits = Argon2Limits {
            target_ms: 2000,
            max_memory_kib: 1 << 20,
            parallel: 4,
        };
        // Fast machine at the memory cap: more iterations.
        assert_eq!(
            next_argon2_cost(4, 1 << 20, 1000.0, &limits),
            Some((8, 1 << 20))
        );
        // Slow machine at the iteration floor: less memory.
        assert_eq!(
            next_argon2_cost(4, 1 << 20, 4000.0, &limits),
            Some((4, 1 << 19))
        );
        // Too many iterations: back towards the floor first.
        assert_eq!(
            next_argon2_cost(9, 1 << 20, 4000.0, &limits),
            Some((4, 1 << 20))
        );
        // Memory below the cap and fast: more memory first.
        assert_eq!(
            next_argon2_cost(4, 1 << 18, 1000.0, &limits),
            Some((4, 1 << 19))
        );
        // Close enough.
        assert_eq!(next_argon2_cost(4, 1 << 20, 2100.0, &limits), None);
        // Physical memory caps the memory cost.
        let l = Argon2Limits::for_machine(1 << 30, 8);
        assert_eq!((l.max_memory_kib, l.parallel), (1 << 19, 4));
        assert_eq!(
            Argon2Limits::for_machine(24 << 30, 2).max_memory_kib,
            1 << 20
        );
    }

    #[test]
    fn argon2_search_reaches_a_small_target() {
        let limits = Argon2Limits {
            target_ms: 40,
            max_memory_kib: 64 * 1024,
            parallel: 2,
        };
        let clock = crate::clock::MonotonicClock::default();
        let r = argon2_cost(
            Argon2Variant::Argon2id,
            &limits,
            &clock,
            &AtomicBool::new(false),
        )
        .unwrap();
        let KdfResult::Argon2 {
            iterations,
            memory_kib,
            measured_ms,
            ..
        } = r
        else {
            panic!("not argon2")
        };
        assert!(iterations >= ARGON2_MIN_ITERATIONS);
        assert!(memory_kib <= 64 * 1024);
        assert!(measured_ms > 0);
    }

    #[test]
    fn kdf_names() {
        assert_eq!(
            KdfSpec::parse("pbkdf2", Some("sha512")),
            Ok(KdfSpec::Pbkdf2(Hash::Sha512))
        );
        assert_eq!(
            KdfSpec::parse("PBKDF2-whirlpool", None),
            Ok(KdfSpec::Pbkdf2(Hash::Whirlpool))
        );
        assert_eq!(
            KdfSpec::parse("pbkdf2", None),
            Ok(KdfSpec::Pbkdf2(Hash::Sha256))
        );
        assert!(KdfSpec::parse("scrypt", None).is_err());
        assert!(KdfSpec::parse("pbkdf2", Some("md5")).is_err());
        assert_eq!(KdfSpec::cryptsetup_defaults().len(), 7);
    }
}
