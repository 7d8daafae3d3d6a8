//! Cipher throughput, measured the way `cryptsetup benchmark` measures it.
//!
//! cryptsetup (lib/utils_benchmark.c, lib/crypto_backend/cipher_check.c) fills
//! a 1 MiB buffer, processes it in 64 KiB requests, and repeats whole passes
//! until at least one second of encryption, then the same for decryption;
//! MiB/s is bytes / 2^20 / seconds. We do the same, in user space, with each
//! knob settable, on one thread or on several at once. Unlike cryptsetup we
//! count exactly the bytes processed (its loop counts one pass more than it ran).

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clustercrypt_catalogue::{CipherError, CipherOp, CipherSpec, build};

use crate::clock::Clock;

/// 2^20 bytes, the MiB of `cryptsetup benchmark`.
pub const MIB: f64 = 1_048_576.0;
/// cryptsetup's buffer size.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;
/// cryptsetup's request size (`CIPHER_BLOCK_BYTES`).
pub const DEFAULT_REQUEST_SIZE: usize = 64 << 10;
/// cryptsetup's minimum time per direction.
pub const DEFAULT_MIN_TIME: Duration = Duration::from_secs(1);

/// How a row is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// Keep repeating passes until at least this much time per direction.
    pub min_time: Duration,
    /// Bytes per pass.
    pub buffer_size: usize,
    /// Bytes per request (one IV or nonce each).
    pub request_size: usize,
    /// Exactly this many passes of encryption and of decryption instead of
    /// `min_time`: a deterministic amount of work, for counting instructions
    /// (scripts/arm_count.py), not for timing.
    pub passes: Option<[u32; 2]>,
}

impl Default for Method {
    fn default() -> Self {
        Method {
            min_time: DEFAULT_MIN_TIME,
            buffer_size: DEFAULT_BUFFER_SIZE,
            request_size: DEFAULT_REQUEST_SIZE,
            passes: None,
        }
    }
}

/// Bytes processed in one direction and the time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Bytes processed.
    pub bytes: u64,
    /// Time from the first request to the end of the last pass.
    pub elapsed: Duration,
}

impl Tally {
    /// Throughput in MiB/s (2^20 bytes per second).
    pub fn mib_per_s(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs == 0.0 {
            0.0
        } else {
            self.bytes as f64 / MIB / secs
        }
    }
}

/// Encryption and decryption tallies of one worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerTally {
    /// Encryption.
    pub encrypt: Tally,
    /// Decryption.
    pub decrypt: Tally,
}

/// What stopped a measurement early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeasureError {
    /// The cipher failed (a bug: the benchmark's own data always verifies).
    #[error(transparent)]
    Cipher(#[from] CipherError),
    /// The user interrupted the run.
    #[error("interrupted")]
    Interrupted,
    /// The method is unusable.
    #[error("{0}")]
    Method(String),
}

impl Method {
    /// Checks the sizes before any work starts.
    pub fn validate(&self, spec: &CipherSpec) -> Result<(), MeasureError> {
        if self.request_size == 0 || self.buffer_size == 0 {
            return Err(MeasureError::Method(
                "buffer and request sizes must be positive".into(),
            ));
        }
        if self.request_size > self.buffer_size {
            return Err(MeasureError::Method(format!(
                "request size {} is larger than the buffer size {}",
                self.request_size, self.buffer_size
            )));
        }
        let unit = spec.algorithm.block_size().unwrap_or(1);
        if !self.request_size.is_multiple_of(unit) || !self.buffer_size.is_multiple_of(unit) {
            return Err(MeasureError::Method(format!(
                "{} needs buffer and request sizes that are multiples of its {unit}-byte block",
                spec.label()
            )));
        }
        Ok(())
    }
}

fn pass(
    op: &mut dyn CipherOp,
    buf: &mut [u8],
    request: usize,
    encrypt: bool,
) -> Result<(), CipherError> {
    for (i, chunk) in buf.chunks_mut(request).enumerate() {
        if encrypt {
            op.encrypt(chunk, i as u64)?;
        } else {
            op.decrypt(chunk, i as u64)?;
        }
    }
    Ok(())
}

/// Repeats passes over `buf` until `method.min_time` has passed (at least one
/// pass, after an untimed warm-up pass), or exactly `method.passes` passes
/// when given (no warm-up: a fixed amount of work).
pub fn measure_direction(
    op: &mut dyn CipherOp,
    buf: &mut [u8],
    method: &Method,
    encrypt: bool,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<Tally, MeasureError> {
    let mut bytes = 0u64;
    if let Some(passes) = method.passes {
        let start = clock.now();
        for _ in 0..passes[usize::from(!encrypt)] {
            if cancel.load(Ordering::Relaxed) {
                return Err(MeasureError::Interrupted);
            }
            pass(op, buf, method.request_size, encrypt)?;
            bytes += buf.len() as u64;
        }
        let elapsed = clock.now().saturating_sub(start);
        return Ok(Tally { bytes, elapsed });
    }
    // One untimed pass first, as the OpenSSL and libgcrypt harnesses of
    // scripts/compare.py do: the first pass of a fresh process pays for cold
    // caches, branch predictors and a CPU clock still ramping up (measured up
    // to a third slower on a shared VM), which a comparison should not count.
    if cancel.load(Ordering::Relaxed) {
        return Err(MeasureError::Interrupted);
    }
    pass(op, buf, method.request_size, encrypt)?;
    let start = clock.now();
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(MeasureError::Interrupted);
        }
        pass(op, buf, method.request_size, encrypt)?;
        bytes += buf.len() as u64;
        let elapsed = clock.now().saturating_sub(start);
        if elapsed >= method.min_time {
            return Ok(Tally { bytes, elapsed });
        }
    }
}

/// Where each worker's buffer starts: on a cache line, as in libgcrypt's
/// harness (`posix_memalign(.., 64, ..)` in `scripts/gcrypt_bench.c`), so that
/// the comparison is like for like. A `Vec` of bytes from glibc starts 16 bytes
/// into a line, where every other 32-byte access of the AVX2 and VAES kernels
/// crosses one; on Zen 3 that measured no different (VAES AES-CTR and XTS,
/// AVX2 ChaCha20), other cores may differ.
pub const BUFFER_ALIGN: usize = 64;

/// One worker: its own buffer, encryption then decryption, each phase started
/// together with the other workers when `barrier` is given.
pub fn measure_worker(
    op: &mut dyn CipherOp,
    method: &Method,
    clock: &dyn Clock,
    cancel: &AtomicBool,
    barrier: Option<&Barrier>,
) -> Result<WorkerTally, MeasureError> {
    let mut storage = vec![0u8; method.buffer_size + BUFFER_ALIGN];
    let start = storage.as_ptr().align_offset(BUFFER_ALIGN);
    let buf = &mut storage[start..start + method.buffer_size];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i * 131 + 7) as u8;
    }
    if let Some(b) = barrier {
        b.wait();
    }
    let encrypt = measure_direction(op, buf, method, true, clock, cancel);
    // Every worker must reach the barriers even after a failure, or the others hang.
    let prepared = op.prepare_decrypt_bench(buf, method.request_size);
    if let Some(b) = barrier {
        b.wait();
    }
    let encrypt = encrypt?;
    prepared?;
    let decrypt = measure_direction(op, buf, method, false, clock, cancel)?;
    Ok(WorkerTally { encrypt, decrypt })
}

/// The figures of one run of a row on `threads` workers at once.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTally {
    /// One tally per worker.
    pub workers: Vec<WorkerTally>,
    /// The implementation that ran.
    pub implementation: &'static str,
}

impl RunTally {
    /// Aggregate throughput: all bytes over the longest worker's time, so
    /// workers that ran longer than the others are not credited twice.
    pub fn aggregate(&self) -> (f64, f64) {
        let agg = |pick: fn(&WorkerTally) -> Tally| {
            let bytes: u64 = self.workers.iter().map(|w| pick(w).bytes).sum();
            let elapsed = self
                .workers
                .iter()
                .map(|w| pick(w).elapsed)
                .max()
                .unwrap_or_default();
            Tally { bytes, elapsed }.mib_per_s()
        };
        (agg(|w| w.encrypt), agg(|w| w.decrypt))
    }
}

/// A deterministic, non-secret benchmark key of the spec's length.
pub fn bench_key(spec: &CipherSpec) -> Vec<u8> {
    (0..spec.key_len())
        .map(|i| (i as u8).wrapping_mul(37).wrapping_add(11))
        .collect()
}

/// Measures `spec` once on `threads` workers, each with its own keyed cipher and buffer.
pub fn measure_row(
    spec: &CipherSpec,
    threads: usize,
    method: &Method,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<RunTally, MeasureError> {
    measure_row_pinned(spec, threads, method, clock, cancel, &[])
}

/// [`measure_row`] with worker `i` pinned to CPU `pins[i % pins.len()]`
/// (sched_setaffinity) when `pins` is not empty.
pub fn measure_row_pinned(
    spec: &CipherSpec,
    threads: usize,
    method: &Method,
    clock: &dyn Clock,
    cancel: &AtomicBool,
    pins: &[usize],
) -> Result<RunTally, MeasureError> {
    method.validate(spec)?;
    let key = bench_key(spec);
    let threads = threads.max(1);
    let mut ops = Vec::with_capacity(threads);
    for _ in 0..threads {
        ops.push(build(spec, &key)?);
    }
    let implementation = ops[0].backend_for(method.request_size);
    if threads == 1 && pins.is_empty() {
        let tally = measure_worker(ops[0].as_mut(), method, clock, cancel, None)?;
        return Ok(RunTally {
            workers: vec![tally],
            implementation,
        });
    }
    let barrier = Barrier::new(threads);
    let results: Vec<Result<WorkerTally, MeasureError>> = std::thread::scope(|s| {
        let handles: Vec<_> = ops
            .iter_mut()
            .enumerate()
            .map(|(i, op)| {
                let barrier = &barrier;
                let pin = (!pins.is_empty()).then(|| pins[i % pins.len()]);
                s.spawn(move || {
                    // A CPU we may not use is a usage error, but every worker must
                    // still reach the barriers: pin failures are reported after.
                    let pinned = pin.map(crate::platform::pin_current_thread).transpose();
                    let r = measure_worker(op.as_mut(), method, clock, cancel, Some(barrier));
                    match pinned {
                        Err(e) => Err(MeasureError::Method(format!(
                            "cannot pin a worker to CPU {}: {e}",
                            pin.unwrap_or_default()
                        ))),
                        Ok(_) => r,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark worker panicked"))
            .collect()
    });
    let workers = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(RunTally {
        workers,
        implementation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::StepClock;

    fn spec() -> CipherSpec {
        CipherSpec::parse("aes-xts-plain64", Some(256)).unwrap()
    }

    /// Every request a worker hands the cipher starts on a cache line (the
    /// buffer's start, and requests of whole lines after it).
    #[test]
    fn worker_requests_start_on_a_cache_line() {
        struct Check {
            spec: CipherSpec,
            requests: usize,
        }
        impl Check {
            fn see(&mut self, data: &[u8]) -> Result<(), CipherError> {
                assert_eq!(data.as_ptr() as usize % BUFFER_ALIGN, 0, "request start");
                self.requests += 1;
                Ok(())
            }
        }
        impl CipherOp for Check {
            fn spec(&self) -> &CipherSpec {
                &self.spec
            }
            fn backend(&self) -> &'static str {
                "check"
            }
            fn encrypt(&mut self, data: &mut [u8], _: u64) -> Result<(), CipherError> {
                self.see(data)
            }
            fn decrypt(&mut self, data: &mut [u8], _: u64) -> Result<(), CipherError> {
                self.see(data)
            }
        }
        let method = Method {
            buffer_size: 1 << 14,
            request_size: 1 << 10,
            ..Method::default()
        };
        let clock = StepClock::new(Duration::from_secs(2));
        let cancel = AtomicBool::new(false);
        for _ in 0..8 {
            let mut op = Check {
                spec: spec(),
                requests: 0,
            };
            let tally = measure_worker(&mut op, &method, &clock, &cancel, None).unwrap();
            // Per direction an untimed warm-up pass and one timed pass (the
            // clock moves 2 s per reading) of 16 requests; only the timed
            // pass counts.
            assert_eq!(op.requests, 2 * 2 * 16);
            assert_eq!(tally.encrypt.bytes, 1 << 14);
            assert_eq!(tally.decrypt.bytes, 1 << 14);
        }
    }

    #[test]
    fn counts_whole_passes_until_the_minimum_time() {
        // The clock moves 300 ms per reading: start=0, after pass 1 = 0.3 s,
        // pass 2 = 0.6 s, pass 3 = 0.9 s, pass 4 = 1.2 s >= 1 s.
        let clock = StepClock::new(Duration::from_millis(300));
        let method = Method {
            buffer_size: 1 << 16,
            request_size: 1 << 12,
            ..Method::default()
        };
        let mut op = build(&spec(), &bench_key(&spec())).unwrap();
        let mut buf = vec![0u8; method.buffer_size];
        let cancel = AtomicBool::new(false);
        let t = measure_direction(op.as_mut(), &mut buf, &method, true, &clock, &cancel).unwrap();
        assert_eq!(t.bytes, 4 << 16);
        assert_eq!(t.elapsed, Duration::from_millis(1200));
        // 256 KiB in 1.2 s.
        assert!((t.mib_per_s() - 0.25 / 1.2).abs() < 1e-12);
    }

    #[test]
    fn at_least_one_pass_and_exact_mib() {
        let clock = StepClock::new(Duration::from_secs(2));
        let method = Method::default();
        let mut op = build(&spec(), &bench_key(&spec())).unwrap();
        let mut buf = vec![0u8; method.buffer_size];
        let cancel = AtomicBool::new(false);
        let t = measure_direction(op.as_mut(), &mut buf, &method, false, &clock, &cancel).unwrap();
        assert_eq!(t.bytes, 1 << 20);
        assert_eq!(t.mib_per_s(), 0.5);
    }

    #[test]
    fn exact_passes_ignore_the_clock() {
        // The clock would stop after one pass; the method asks for 3 and 0.
        let clock = StepClock::new(Duration::from_secs(10));
        let method = Method {
            buffer_size: 1 << 14,
            request_size: 1 << 12,
            passes: Some([3, 0]),
            ..Method::default()
        };
        let cancel = AtomicBool::new(false);
        let run = measure_row(&spec(), 1, &method, &clock, &cancel).unwrap();
        assert_eq!(run.workers[0].encrypt.bytes, 3 << 14);
        assert_eq!(run.workers[0].decrypt.bytes, 0);
        let method = Method {
            passes: Some([1, 2]),
            ..method
        };
        let run = measure_row(&spec(), 1, &method, &clock, &cancel).unwrap();
        assert_eq!(run.workers[0].encrypt.bytes, 1 << 14);
        assert_eq!(run.workers[0].decrypt.bytes, 2 << 14);
    }

    #[test]
    fn aggregate_divides_by_the_longest_worker() {
        let w = |bytes, ms| Tally {
            bytes,
            elapsed: Duration::from_millis(ms),
        };
        let run = RunTally {
            workers: vec![
                WorkerTally {
                    encrypt: w(3 << 20, 1000),
                    decrypt: w(4 << 20, 1000),
                },
                WorkerTally {
                    encrypt: w(1 << 20, 2000),
                    decrypt: w(4 << 20, 500),
                },
            ],
            implementation: "soft",
        };
        assert_eq!(run.aggregate(), (2.0, 8.0));
    }

    #[test]
    fn cancel_stops_before_the_next_pass() {
        let clock = StepClock::new(Duration::from_millis(1));
        let cancel = AtomicBool::new(true);
        let err = measure_row(&spec(), 1, &Method::default(), &clock, &cancel).unwrap_err();
        assert!(matches!(err, MeasureError::Interrupted));
    }

    #[test]
    fn threads_each_get_a_worker_and_aead_decryption_verifies() {
        let clock = crate::clock::MonotonicClock::default();
        let method = Method {
            min_time: Duration::from_millis(20),
            buffer_size: 1 << 16,
            request_size: 1 << 12,
            passes: None,
        };
        let cancel = AtomicBool::new(false);
        for name in [
            "aes-gcm",
            "chacha20-poly1305",
            "twofish-cbc-essiv:sha256",
            "rc4",
        ] {
            let spec = CipherSpec::parse(name, None).unwrap();
            let run = measure_row(&spec, 2, &method, &clock, &cancel).unwrap();
            assert_eq!(run.workers.len(), 2);
            for w in &run.workers {
                assert!(w.encrypt.bytes >= method.buffer_size as u64);
                assert!(w.decrypt.bytes >= method.buffer_size as u64, "{name}");
            }
        }
    }

    #[test]
    fn rejects_unusable_sizes() {
        let des = CipherSpec::parse("des-cbc", None).unwrap();
        let m = Method {
            request_size: 1004,
            buffer_size: 4016,
            ..Method::default()
        };
        assert!(m.validate(&des).is_err());
        let m = Method {
            request_size: 8192,
            buffer_size: 4096,
            ..Method::default()
        };
        assert!(m.validate(&des).is_err());
    }
}
