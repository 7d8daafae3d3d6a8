//! Runs a benchmark plan: every cipher row, then every KDF, into a [`Report`].

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clustercrypt_catalogue::CipherSpec;

use crate::clock::Clock;
use crate::kdf::{Argon2Limits, KdfSpec, run_kdf};
use crate::machine::Machine;
use crate::measure::{MeasureError, Method, measure_row};
use crate::report::{CipherRow, Report, RunFigures, Settings};

/// What to measure and how.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Cipher rows.
    pub ciphers: Vec<CipherSpec>,
    /// KDFs.
    pub kdfs: Vec<KdfSpec>,
    /// Buffer, request and time per direction.
    pub method: Method,
    /// Workers per row.
    pub threads: usize,
    /// Repetitions per row.
    pub runs: usize,
    /// Minimum time of one PBKDF2 derivation when measuring its speed.
    pub pbkdf2_time: Duration,
    /// Argon2 search limits.
    pub argon2: Argon2Limits,
}

/// Receives progress; the CLI draws a bar from it.
pub trait Observer {
    /// A step (one run of a row, or one KDF) starts.
    fn step(&self, name: &str);
    /// A step finished.
    fn step_done(&self);
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {
    fn step(&self, _: &str) {}
    fn step_done(&self) {}
}

impl Plan {
    /// Number of steps reported to the observer.
    pub fn steps(&self) -> usize {
        self.ciphers.len() * self.runs.max(1) + self.kdfs.len()
    }
}

/// Runs `plan`. On interruption the report holds what was measured so far and
/// `interrupted` is set; other errors abort.
pub fn run(
    plan: &Plan,
    tool_version: &str,
    clock: &dyn Clock,
    cancel: &AtomicBool,
    observer: &dyn Observer,
) -> Result<Report, MeasureError> {
    for spec in &plan.ciphers {
        plan.method.validate(spec)?;
    }
    let threads = plan.threads.max(1);
    let runs = plan.runs.max(1);
    let mut report = Report::empty(Machine::detect(), Settings::of(&plan.method, runs, threads));
    report.tool.version = tool_version.to_string();
    // KDF lines come first in cryptsetup's output, but they are slow: measure the
    // ciphers first so that an interrupted run still has the table.
    for spec in &plan.ciphers {
        let mut figures = Vec::with_capacity(runs);
        let mut implementation = "";
        for run in 0..runs {
            let name = if runs > 1 {
                format!(
                    "{} {}b (run {}/{runs})",
                    spec.label(),
                    spec.key_bits,
                    run + 1
                )
            } else {
                format!("{} {}b", spec.label(), spec.key_bits)
            };
            observer.step(&name);
            match measure_row(spec, threads, &plan.method, clock, cancel) {
                Ok(t) => {
                    implementation = t.implementation;
                    figures.push(RunFigures {
                        aggregate: t.aggregate(),
                        workers: t
                            .workers
                            .iter()
                            .map(|w| (w.encrypt.mib_per_s(), w.decrypt.mib_per_s()))
                            .collect(),
                    });
                }
                Err(MeasureError::Interrupted) => {
                    report.interrupted = true;
                    return Ok(report);
                }
                Err(e) => return Err(e),
            }
            observer.step_done();
        }
        if let Some(row) = CipherRow::from_runs(spec, threads, implementation, &figures) {
            report.ciphers.push(row);
        }
    }
    for &kdf in &plan.kdfs {
        observer.step(&match kdf {
            KdfSpec::Pbkdf2(h) => format!("PBKDF2-{}", h.name()),
            KdfSpec::Argon2(v) => v.name().to_string(),
        });
        match run_kdf(kdf, plan.pbkdf2_time, &plan.argon2, clock, cancel) {
            Ok(r) => report.kdfs.push(r),
            Err(MeasureError::Interrupted) => {
                report.interrupted = true;
                return Ok(report);
            }
            Err(e) => return Err(e),
        }
        observer.step_done();
    }
    Ok(report)
}
