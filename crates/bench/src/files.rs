//! The file-size study (seed 002): real files of 1 MB to 128 MB encrypted and
//! decrypted end to end with the legacy modes the study measured (ECB, CBC and
//! the stream ciphers RC4 and ChaCha20), with wall seconds, CPU use and peak
//! memory per cipher and size, as the study's Tables III-VIII report them.
//!
//! Each size gets one file of random data in a temporary directory, shared by
//! all ciphers. For each cipher, with a fresh random key and IV, every file is
//! encrypted to a file and decrypted back to another with the engine's raw mode
//! (what `clustercrypt encrypt --raw` runs), timed from opening the input to
//! the last write (through the page cache, no fsync, as a program that writes a
//! file and exits). The round trip is then checked byte for byte; a mismatch
//! is an error, never a figure.
//!
//! CPU use is the process's CPU time (user + system, all threads, from
//! `CLOCK_PROCESS_CPUTIME_ID`, the sum `getrusage(RUSAGE_SELF)` reports) over
//! the wall time of the encryption, in percent of one core. Peak memory is the
//! process's resident high-water mark (`VmHWM` in `/proc/self/status`), which
//! Linux >= 4.0 resets to the current size when "5" is written to
//! `/proc/self/clear_refs`; it is reset before each encryption. Where the reset
//! is refused, the growth of the lifetime high-water mark is reported instead
//! and `peak_memory_reset` is false.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clustercrypt_catalogue::{Algorithm, CipherSpec, Mode};
use clustercrypt_engine::pipeline;
use clustercrypt_engine::raw::{self, RawParams};
use zeroize::Zeroizing;

use crate::power::{PowerError, Source};
use crate::report::{FileRow, PowerReading};
use crate::runner::Observer;

/// The study's file sizes: 1 MiB to 128 MiB, doubling.
pub fn study_sizes() -> Vec<u64> {
    (0..8).map(|i| (1u64 << 20) << i).collect()
}

/// The study's ciphers with its key sizes (Table II): AES-256, DES, 3DES (168
/// effective bits, 192 as keyed), Blowfish-128, Twofish-256 and RC2-128 in ECB,
/// then in CBC, then the stream ciphers RC4-256 and ChaCha20.
pub fn study_ciphers() -> Vec<CipherSpec> {
    let block = [
        ("aes", 256),
        ("des", 64),
        ("des3_ede", 192),
        ("blowfish", 128),
        ("twofish", 256),
        ("rc2", 128),
    ];
    let mut out = Vec::new();
    for mode in ["ecb", "cbc"] {
        for (alg, bits) in block {
            out.push(CipherSpec::parse(&format!("{alg}-{mode}"), Some(bits)).expect("catalogue"));
        }
    }
    out.push(CipherSpec::parse("rc4", Some(256)).expect("catalogue"));
    out.push(CipherSpec::parse("chacha20", Some(256)).expect("catalogue"));
    out
}

/// Checks that raw mode can run `spec` (ECB, CBC, CTR or a stream cipher).
pub fn check_cipher(spec: &CipherSpec) -> Result<(), String> {
    if matches!(spec.mode, Mode::Ecb | Mode::Cbc | Mode::Ctr | Mode::Stream) {
        Ok(())
    } else {
        Err(format!(
            "the file-size study runs ECB, CBC, CTR and the stream ciphers (raw mode), not {}",
            spec.full_name()
        ))
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct FilePlan {
    /// File sizes in bytes.
    pub sizes: Vec<u64>,
    /// Ciphers, in order.
    pub ciphers: Vec<CipherSpec>,
    /// Worker threads of the engine (the study was single-threaded).
    pub threads: usize,
    /// Repetitions; the rows are the mean.
    pub runs: usize,
    /// Where the temporary directory goes (default: the system's).
    pub dir: Option<PathBuf>,
    /// Engine chunk size in bytes.
    pub chunk_size: usize,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct FileOutcome {
    /// One row per cipher and size.
    pub rows: Vec<FileRow>,
    /// One reading per cipher, when a power source was given.
    pub power: Vec<PowerReading>,
    /// Whether it was interrupted (rows not reached are missing).
    pub interrupted: bool,
}

/// Why the study failed.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The engine refused or failed.
    #[error("{0}: {1}")]
    Engine(String, clustercrypt_engine::EngineError),
    /// The decrypted file differs from the input.
    #[error("{0}")]
    Mismatch(String),
    /// The power source failed.
    #[error(transparent)]
    Power(#[from] PowerError),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> FilesError {
    let context = context.into();
    move |source| FilesError::Io { context, source }
}

/// A size for labels: `64K`, `1M`, `128M`, or bytes.
pub fn size_label(bytes: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Fills `path` with `size` random bytes.
fn write_random(path: &Path, size: u64) -> Result<(), FilesError> {
    let mut f = File::create(path).map_err(io_err(format!("cannot create {}", path.display())))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        getrandom::fill(&mut buf[..n]).map_err(|e| FilesError::Io {
            context: "cannot get random data".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        f.write_all(&buf[..n])
            .map_err(io_err(format!("cannot write {}", path.display())))?;
        left -= n as u64;
    }
    Ok(())
}

/// Whether two files hold the same bytes.
fn same_contents(a: &Path, b: &Path) -> Result<bool, FilesError> {
    let open = |p: &Path| {
        File::open(p)
            .map(|f| BufReader::with_capacity(1 << 20, f))
            .map_err(io_err(format!("cannot open {}", p.display())))
    };
    let (mut x, mut y) = (open(a)?, open(b)?);
    let (mut bx, mut by) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = pipeline::read_full(&mut x, &mut bx)
            .map_err(io_err(format!("cannot read {}", a.display())))?;
        let m = pipeline::read_full(&mut y, &mut by)
            .map_err(io_err(format!("cannot read {}", b.display())))?;
        if n != m || bx[..n] != by[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// A `/proc/self/status` value in bytes (`VmHWM`, `VmRSS`).
fn status_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_status_kib(&text, key).map(|k| k * 1024)
}

/// A `kB` value of `/proc/<pid>/status` text.
pub fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        l.strip_prefix(key)?
            .strip_prefix(':')?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// Resets the resident high-water mark (Linux >= 4.0).
fn reset_peak() -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/clear_refs")
        .and_then(|mut f| f.write_all(b"5"))
        .is_ok()
}

fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// One timed operation.
struct Timed {
    seconds: f64,
    cpu_percent: f64,
    peak_growth: u64,
    peak_rss: u64,
    reset: bool,
}

fn timed(f: impl FnOnce() -> Result<(), FilesError>) -> Result<Timed, FilesError> {
    let reset = reset_peak();
    let rss_before = status_bytes("VmRSS").unwrap_or(0);
    let hwm_before = status_bytes("VmHWM").unwrap_or(0);
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    f()?;
    let seconds = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let hwm = status_bytes("VmHWM").unwrap_or(0);
    let base = if reset { rss_before } else { hwm_before };
    Ok(Timed {
        seconds,
        cpu_percent: if seconds > 0.0 {
            100.0 * cpu / seconds
        } else {
            0.0
        },
        peak_growth: hwm.saturating_sub(base),
        peak_rss: hwm,
        reset,
    })
}

fn transform_file(
    input: &Path,
    output: &Path,
    params: &RawParams,
    encrypt: bool,
) -> Result<(), FilesError> {
    let mut i = File::open(input).map_err(io_err(format!("cannot open {}", input.display())))?;
    let mut o =
        File::create(output).map_err(io_err(format!("cannot create {}", output.display())))?;
    let what = if encrypt { "encryption" } else { "decryption" };
    let result = if encrypt {
        raw::raw_encrypt(&mut i, &mut o, params, &|_| {})
    } else {
        raw::raw_decrypt(&mut i, &mut o, params, &|_| {})
    };
    result.map_err(|e| FilesError::Engine(format!("{} {what}", params.spec.label()), e))?;
    o.flush()
        .map_err(io_err(format!("cannot write {}", output.display())))
}

fn params_for(spec: &CipherSpec, plan: &FilePlan) -> Result<RawParams, FilesError> {
    let mut key = Zeroizing::new(vec![0u8; spec.key_len()]);
    let mut iv = vec![0u8; raw::iv_len(spec)];
    for buf in [&mut key[..], &mut iv[..]] {
        getrandom::fill(buf).map_err(|e| FilesError::Io {
            context: "cannot get random data".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    if spec.algorithm == Algorithm::ChaCha20 {
        // OpenSSL's ChaCha20 IV starts with the 32-bit block counter: start at 0
        // so that no file can run the counter over.
        iv[..8].fill(0);
    }
    let params = RawParams {
        spec: *spec,
        key,
        iv,
        padding: raw::default_padding(spec.mode),
        repeats: 1,
        chunk_size: plan.chunk_size,
        threads: plan.threads.max(1),
    };
    raw::check(&params).map_err(|e| FilesError::Engine(spec.label(), e))?;
    Ok(params)
}

/// Runs the study. `power`, when given, is measured over each cipher's whole
/// set of files (encryptions and decryptions, not the checks after).
pub fn run(
    plan: &FilePlan,
    power: Option<&Source>,
    observer: &dyn Observer,
    cancel: &AtomicBool,
) -> Result<FileOutcome, FilesError> {
    for spec in &plan.ciphers {
        check_cipher(spec).map_err(|m| {
            FilesError::Engine(spec.label(), clustercrypt_engine::EngineError::Input(m))
        })?;
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix("clustercrypt-files-");
    let dir = match &plan.dir {
        Some(d) => builder.tempdir_in(d),
        None => builder.tempdir(),
    }
    .map_err(io_err("cannot create a temporary directory"))?;
    let runs = plan.runs.max(1);
    let mut outcome = FileOutcome::default();
    let mut inputs = Vec::new();
    for &size in &plan.sizes {
        let path = dir.path().join(format!("plain-{}", size_label(size)));
        write_random(&path, size)?;
        inputs.push((size, path));
    }
    for spec in &plan.ciphers {
        let params = params_for(spec, plan)?;
        let session = power.map(Source::start).transpose()?;
        let mut work_bytes = 0u64;
        let mut work_seconds = 0.0;
        let mut rows = Vec::new();
        let mut checks = Vec::new();
        for (size, input) in &inputs {
            let mut enc = Vec::with_capacity(runs);
            let mut dec = Vec::with_capacity(runs);
            for run in 0..runs {
                if cancel.load(Ordering::Relaxed) {
                    outcome.interrupted = true;
                    return Ok(outcome);
                }
                let label = size_label(*size);
                observer.step(&format!(
                    "{} {label} (run {}/{runs})",
                    spec.label(),
                    run + 1
                ));
                let ct = dir
                    .path()
                    .join(format!("{}-{label}-{run}.enc", spec.label()));
                let pt = dir
                    .path()
                    .join(format!("{}-{label}-{run}.dec", spec.label()));
                enc.push(timed(|| transform_file(input, &ct, &params, true))?);
                dec.push(timed(|| transform_file(&ct, &pt, &params, false))?);
                checks.push((input.clone(), ct, pt, run));
                observer.step_done();
            }
            let mean =
                |v: &[Timed], f: fn(&Timed) -> f64| v.iter().map(f).sum::<f64>() / v.len() as f64;
            work_bytes += 2 * size * runs as u64;
            work_seconds += enc.iter().chain(&dec).map(|t| t.seconds).sum::<f64>();
            rows.push(FileRow {
                cipher: spec.label(),
                algorithm: spec.algorithm,
                mode: spec.mode,
                key_bits: spec.key_bits,
                file_bytes: *size,
                threads: plan.threads.max(1),
                encrypt_s: mean(&enc, |t| t.seconds),
                decrypt_s: mean(&dec, |t| t.seconds),
                cpu_percent: mean(&enc, |t| t.cpu_percent),
                peak_memory_bytes: enc.iter().map(|t| t.peak_growth).max().unwrap_or(0),
                peak_rss_bytes: enc.iter().map(|t| t.peak_rss).max().unwrap_or(0),
                peak_memory_reset: enc.iter().all(|t| t.reset),
                insecure: spec.is_broken(),
            });
        }
        let watts = session.map(|s| s.finish()).transpose()?;
        for (input, ct, pt, run) in checks {
            if !same_contents(&input, &pt)? {
                return Err(FilesError::Mismatch(format!(
                    "{} run {}: decrypting {} did not give back {} (engine bug?)",
                    spec.label(),
                    run + 1,
                    ct.display(),
                    input.display()
                )));
            }
            for p in [ct, pt] {
                std::fs::remove_file(&p)
                    .map_err(io_err(format!("cannot remove {}", p.display())))?;
            }
        }
        if let (Some(watts), Some(source)) = (watts, power) {
            outcome.power.push(PowerReading {
                workload: format!("files {} {}b", spec.label(), spec.key_bits),
                watts,
                source: source.kind(),
                mib_s: (work_seconds > 0.0)
                    .then(|| work_bytes as f64 / (1u64 << 20) as f64 / work_seconds),
                gflops: None,
                cost_usd: None,
            });
        }
        outcome.rows.extend(rows);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Silent;

    #[test]
    fn study_set_and_sizes() {
        let c = study_ciphers();
        assert_eq!(c.len(), 14);
        assert_eq!(c.iter().filter(|s| s.mode == Mode::Ecb).count(), 6);
        assert_eq!(c.iter().filter(|s| s.mode == Mode::Cbc).count(), 6);
        assert!(c.iter().all(|s| check_cipher(s).is_ok()));
        assert_eq!(study_sizes().first(), Some(&(1 << 20)));
        assert_eq!(study_sizes().last(), Some(&(128 << 20)));
        assert_eq!(size_label(64 << 10), "64K");
        assert_eq!(size_label(128 << 20), "128M");
        assert_eq!(size_label(1000), "1000");
        let xts = CipherSpec::parse("aes-xts-plain64", None).unwrap();
        assert!(check_cipher(&xts).is_err());
    }

    #[test]
    fn status_values() {
        let s = "Name:\tx\nVmHWM:\t    1752 kB\nVmRSS:\t    1700 kB\n";
        assert_eq!(parse_status_kib(s, "VmHWM"), Some(1752));
        assert_eq!(parse_status_kib(s, "VmRSS"), Some(1700));
        assert_eq!(parse_status_kib(s, "VmSwap"), None);
    }

    #[test]
    fn small_files_round_trip_with_figures() {
        let plan = FilePlan {
            sizes: vec![1000, 64 << 10],
            ciphers: ["aes-cbc", "des3_ede-ecb", "rc4", "chacha20"]
                .iter()
                .map(|n| CipherSpec::parse(n, None).unwrap())
                .collect(),
            threads: 2,
            runs: 2,
            dir: None,
            chunk_size: 4096,
        };
        let out = run(
            &plan,
            Some(&Source::Meter(10.0)),
            &Silent,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(out.rows.len(), 8);
        assert!(!out.interrupted);
        for r in &out.rows {
            assert!(r.encrypt_s > 0.0 && r.decrypt_s > 0.0, "{r:?}");
            assert!(r.cpu_percent >= 0.0);
            assert!(r.peak_rss_bytes > 0);
        }
        assert_eq!(out.power.len(), 4);
        assert!(
            out.power
                .iter()
                .all(|p| p.watts == 10.0 && p.mib_s.unwrap() > 0.0)
        );
    }

    #[test]
    fn round_trip_check_sees_any_difference() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        std::fs::write(&a, &data).unwrap();
        std::fs::write(&b, &data).unwrap();
        assert!(same_contents(&a, &b).unwrap());
        let mut flipped = data.clone();
        flipped[150_000] ^= 1;
        std::fs::write(&b, &flipped).unwrap();
        assert!(!same_contents(&a, &b).unwrap());
        std::fs::write(&b, &data[..data.len() - 1]).unwrap();
        assert!(!same_contents(&a, &b).unwrap());
    }

    #[test]
    fn cancel_stops_before_work() {
        let plan = FilePlan {
            sizes: vec![4096],
            ciphers: vec![CipherSpec::parse("aes-ecb", None).unwrap()],
            threads: 1,
            runs: 1,
            dir: None,
            chunk_size: 4096,
        };
        let out = run(&plan, None, &Silent, &AtomicBool::new(true)).unwrap();
        assert!(out.interrupted && out.rows.is_empty());
    }
}
