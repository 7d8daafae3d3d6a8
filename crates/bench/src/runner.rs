//! Runs a benchmark plan: every cipher row, then every KDF, into a [`Report`].

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clustercrypt_catalogue::CipherSpec;

use crate::clock::Clock;
use crate::kdf::{Argon2Limits, KdfSpec, run_kdf};
use crate::machine::Machine;
use crate::machine::{FreqTime, Throttling};
use crate::measure::{MeasureError, Method, RunTally, measure_row_pinned};
use crate::platform::{
    self, CoreType, CycleSource, DependentAdds, FreqSnapshot, SysRoot, cycles_per_byte,
};
use crate::report::{CipherRow, CoreTypeFigures, Report, RunFigures, Settings};

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
    /// Clock, pinning and where `/proc` and `/sys` are.
    pub probe: Probe,
}

/// How the clock and the cores are handled.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// `--cpu-mhz`: the clock for cycles per byte, instead of measuring it.
    pub cpu_mhz: Option<f64>,
    /// `--pin`: worker `i` pinned to the `i`-th allowed CPU.
    pub pin: bool,
    /// `--per-core-type`: each row also on one worker per core type.
    pub per_core_type: bool,
    /// The root of `/proc` and `/sys` (fake trees in tests).
    pub root: SysRoot,
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
        let per_row = if self.probe.per_core_type {
            1 + platform::core_types(&self.probe.root).len()
        } else {
            1
        };
        self.ciphers.len() * self.runs.max(1) * per_row + self.kdfs.len()
    }
}

/// The clock of the core `cpu` (or this thread's), timed with `clock`.
fn mhz_on(cpu: Option<usize>, clock: &dyn Clock, cycles: &dyn CycleSource) -> Option<f64> {
    match cpu {
        None => platform::measure_mhz(clock, cycles),
        Some(c) => std::thread::scope(|s| {
            s.spawn(|| {
                platform::pin_current_thread(c).ok()?;
                platform::measure_mhz(clock, cycles)
            })
            .join()
            .ok()
            .flatten()
        }),
    }
}

/// What was seen around one row.
struct Seen {
    mhz: Option<f64>,
    throttled: bool,
    min: Option<f64>,
    max: Option<f64>,
    temperature: Option<f64>,
}

/// Tracks clock and temperature around rows and over the run.
struct Watch<'a> {
    probe: &'a Probe,
    /// Exact passes (`--passes`): no timed probes.
    counted: bool,
    clock: &'a dyn Clock,
    cycles: &'a dyn CycleSource,
    start: FreqSnapshot,
    record: Throttling,
}

fn fmin(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.into_iter().chain(b).reduce(f64::min)
}

fn fmax(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.into_iter().chain(b).reduce(f64::max)
}

impl Watch<'_> {
    /// Runs `f` (one row's runs) on `cpus` (empty: unpinned) and says what the clock did.
    fn around<T>(&mut self, cpus: &[usize], threads: usize, f: impl FnOnce() -> T) -> (T, Seen) {
        let root = &self.probe.root;
        let cpu = cpus.first().copied();
        let before = FreqSnapshot::read(root);
        // Exact passes are for counting instructions (under QEMU): the timed
        // clock probe runs for a wall-time interval, so it would add a number
        // of instructions that changes from run to run.
        let timed = |w: &Self| {
            (!w.counted)
                .then(|| mhz_on(cpu, w.clock, w.cycles))
                .flatten()
        };
        let m0 = timed(self);
        let out = f();
        let m1 = timed(self);
        let after = FreqSnapshot::read(root);
        let temperature = platform::temperature_c(root);
        // One unpinned worker runs where the scheduler put this thread.
        let watched: Vec<usize> = if !cpus.is_empty() {
            cpus.to_vec()
        } else if threads == 1 {
            vec![platform::current_cpu()]
        } else {
            Vec::new()
        };
        let window = platform::freq_window(&before, &after, &watched);
        let measured = match (m0, m1) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (a, b) => a.or(b),
        };
        // A timed clock that fell by more than noise on a shared machine.
        let fell = matches!((m0, m1), (Some(a), Some(b)) if b < 0.85 * a);
        // Not for counted runs: spawning a process under QEMU forks the emulator.
        let vc = if self.counted {
            None
        } else {
            platform::vcgencmd_throttled()
        };
        let throttled =
            window.is_some_and(|w| w.dropped()) || fell || vc.is_some_and(platform::throttled_now);
        let min = fmin(fmin(m0, m1), window.map(|w| w.min_mhz));
        let max = fmax(fmax(m0, m1), window.map(|w| w.max_mhz));
        let mhz =
            self.probe.cpu_mhz.or(measured).or_else(|| {
                platform::cpufreq_mhz(root, cpu.unwrap_or_else(platform::current_cpu)).0
            });
        let r = &mut self.record;
        r.temperature_max_c = fmax(r.temperature_max_c, temperature);
        r.clock_min_mhz = fmin(r.clock_min_mhz, min);
        r.clock_max_mhz = fmax(r.clock_max_mhz, max);
        if let Some(v) = vc {
            r.vcgencmd_throttled = Some(format!("{v:#x}"));
        }
        r.throttled_rows += usize::from(throttled);
        (
            out,
            Seen {
                mhz,
                throttled,
                min,
                max,
                temperature,
            },
        )
    }

    fn finish(mut self) -> Throttling {
        let end = FreqSnapshot::read(&self.probe.root);
        let mut spent: std::collections::BTreeMap<u64, u64> = Default::default();
        for (i, p) in end.0.iter().enumerate() {
            for (&khz, &t) in &p.time_in_state {
                let t0 = self
                    .start
                    .0
                    .get(i)
                    .and_then(|b| b.time_in_state.get(&khz))
                    .copied()
                    .unwrap_or(0);
                *spent.entry(khz).or_default() += t.saturating_sub(t0);
            }
        }
        self.record.time_in_state = spent
            .into_iter()
            .filter(|(_, t)| *t > 0)
            .map(|(khz, t)| FreqTime {
                mhz: khz as f64 / 1000.0,
                seconds: t as f64 / 100.0,
            })
            .collect();
        self.record
    }
}

/// Runs one row `runs` times on `threads` workers pinned to `pins`.
#[allow(clippy::too_many_arguments)] // a private helper of run_with: its locals, passed on
fn row_runs(
    spec: &CipherSpec,
    threads: usize,
    runs: usize,
    plan: &Plan,
    clock: &dyn Clock,
    cancel: &AtomicBool,
    pins: &[usize],
    observer: &dyn Observer,
    label: &str,
) -> Result<(Vec<RunFigures>, &'static str), MeasureError> {
    let mut figures = Vec::with_capacity(runs);
    let mut implementation = "";
    for run in 0..runs {
        let name = if runs > 1 {
            format!("{label} (run {}/{runs})", run + 1)
        } else {
            label.to_string()
        };
        observer.step(&name);
        let t: RunTally = measure_row_pinned(spec, threads, &plan.method, clock, cancel, pins)?;
        implementation = t.implementation;
        figures.push(RunFigures {
            aggregate: t.aggregate(),
            workers: t
                .workers
                .iter()
                .map(|w| (w.encrypt.mib_per_s(), w.decrypt.mib_per_s()))
                .collect(),
        });
        observer.step_done();
    }
    Ok((figures, implementation))
}

fn mean(v: &[RunFigures]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    (
        v.iter().map(|r| r.aggregate.0).sum::<f64>() / n,
        v.iter().map(|r| r.aggregate.1).sum::<f64>() / n,
    )
}

/// The CPUs worker `i` is pinned to, and one CPU of each core type we may use.
fn pins_and_types(
    plan: &Plan,
    types: &[CoreType],
    allowed: &[usize],
) -> (Vec<usize>, Vec<(String, usize)>) {
    let pins = if plan.probe.pin || plan.probe.per_core_type {
        allowed.to_vec()
    } else {
        Vec::new()
    };
    let per_type = if plan.probe.per_core_type {
        types
            .iter()
            .filter_map(|t| {
                let cpu = t.cpus.iter().copied().find(|c| allowed.contains(c))?;
                Some((t.name.clone(), cpu))
            })
            .collect()
    } else {
        Vec::new()
    };
    (pins, per_type)
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
    run_with(plan, tool_version, clock, &DependentAdds, cancel, observer)
}

/// [`run`] with the cycle loop given (a fake core in tests).
pub fn run_with(
    plan: &Plan,
    tool_version: &str,
    clock: &dyn Clock,
    cycles: &dyn CycleSource,
    cancel: &AtomicBool,
    observer: &dyn Observer,
) -> Result<Report, MeasureError> {
    for spec in &plan.ciphers {
        plan.method.validate(spec)?;
    }
    let threads = plan.threads.max(1);
    let runs = plan.runs.max(1);
    let root = &plan.probe.root;
    let mut machine = Machine::detect();
    machine.core_types = platform::core_types(root);
    let (pins, per_type) = pins_and_types(plan, &machine.core_types, &platform::allowed_cpus());
    let first = pins.first().copied();
    let cur = platform::cpufreq_mhz(root, first.unwrap_or_else(platform::current_cpu));
    // Counted runs (exact passes) skip the timed probe, as `Watch` does.
    let measured = if plan.ciphers.is_empty() || plan.method.passes.is_some() {
        None
    } else {
        mhz_on(first, clock, cycles)
    };
    machine.clock = platform::clock_record(plan.probe.cpu_mhz, measured, cur);
    let mut watch = Watch {
        probe: &plan.probe,
        counted: plan.method.passes.is_some(),
        clock,
        cycles,
        start: FreqSnapshot::read(root),
        record: Throttling {
            temperature_start_c: platform::temperature_c(root),
            ..Throttling::default()
        },
    };
    let mut report = Report::empty(machine, Settings::of(&plan.method, runs, threads));
    report.tool.version = tool_version.to_string();
    let type_of = |cpu: usize| {
        platform::core_type_of(&report.machine.core_types, cpu).map(|t| t.name.clone())
    };
    let mut rows = Vec::new();
    let mut interrupted = false;
    // KDF lines come first in cryptsetup's output, but they are slow: measure the
    // ciphers first so that an interrupted run still has the table.
    'rows: for spec in &plan.ciphers {
        let label = format!("{} {}b", spec.label(), spec.key_bits);
        let mut by_type = Vec::new();
        for (name, cpu) in &per_type {
            let (r, seen) = watch.around(&[*cpu], 1, || {
                row_runs(
                    spec,
                    1,
                    runs,
                    plan,
                    clock,
                    cancel,
                    &[*cpu],
                    observer,
                    &format!("{label} on {name}"),
                )
            });
            let figures = match r {
                Ok((f, _)) => f,
                Err(MeasureError::Interrupted) => {
                    interrupted = true;
                    break 'rows;
                }
                Err(e) => return Err(e),
            };
            let (enc, dec) = mean(&figures);
            by_type.push(CoreTypeFigures {
                core_type: name.clone(),
                cpu: *cpu,
                encrypt_mib_s: enc,
                decrypt_mib_s: dec,
                cpu_mhz: seen.mhz,
                encrypt_cycles_per_byte: seen.mhz.and_then(|m| cycles_per_byte(m, enc, 1)),
                decrypt_cycles_per_byte: seen.mhz.and_then(|m| cycles_per_byte(m, dec, 1)),
                throttled: seen.throttled,
            });
        }
        let (r, seen) = watch.around(&pins, threads, || {
            row_runs(
                spec, threads, runs, plan, clock, cancel, &pins, observer, &label,
            )
        });
        let (figures, implementation) = match r {
            Ok(x) => x,
            Err(MeasureError::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        };
        if let Some(mut row) = CipherRow::from_runs(spec, threads, implementation, &figures) {
            if let Some(m) = seen.mhz {
                row.cpu_mhz = Some(m);
                row.encrypt_cycles_per_byte = cycles_per_byte(m, row.encrypt_mib_s, threads);
                row.decrypt_cycles_per_byte = cycles_per_byte(m, row.decrypt_mib_s, threads);
            }
            row.throttled = seen.throttled;
            row.clock_min_mhz = seen.min;
            row.clock_max_mhz = seen.max;
            row.temperature_c = seen.temperature;
            row.per_core_type = by_type;
            if !pins.is_empty() {
                for t in &mut row.per_thread {
                    let cpu = pins[t.thread % pins.len()];
                    t.cpu = Some(cpu);
                    t.core_type = type_of(cpu);
                }
            }
            rows.push(row);
        }
    }
    report.ciphers = rows;
    let record = watch.finish();
    report.machine.throttling = Some(record);
    if interrupted {
        report.interrupted = true;
        return Ok(report);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::StepClock;

    fn plan(probe: Probe) -> Plan {
        Plan {
            ciphers: vec![CipherSpec::parse("aes-xts-plain64", Some(256)).unwrap()],
            kdfs: Vec::new(),
            method: Method {
                min_time: Duration::from_secs(1),
                buffer_size: 1 << 16,
                request_size: 1 << 12,
                passes: None,
            },
            threads: 1,
            runs: 1,
            pbkdf2_time: Duration::from_millis(1),
            argon2: Argon2Limits::for_machine(1 << 30, 1),
            probe,
        }
    }

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn rk3588() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut info = String::new();
        for cpu in 0..8 {
            let part = if cpu < 4 { "0xd05" } else { "0xd0b" };
            info.push_str(&format!(
                "processor\t: {cpu}\nCPU implementer\t: 0x41\nCPU part\t: {part}\n\n"
            ));
            let cap = if cpu < 4 { "414" } else { "1024" };
            write(
                dir.path(),
                &format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity"),
                cap,
            );
        }
        write(dir.path(), "proc/cpuinfo", &info);
        dir
    }

    #[test]
    fn one_worker_per_core_type_on_an_rk3588() {
        let dir = rk3588();
        let probe = Probe {
            per_core_type: true,
            root: SysRoot::at(dir.path()),
            ..Probe::default()
        };
        let types = platform::core_types(&probe.root);
        let p = plan(probe);
        let all: Vec<usize> = (0..8).collect();
        let (pins, per_type) = pins_and_types(&p, &types, &all);
        assert_eq!(pins, all);
        assert_eq!(
            per_type,
            [("cortex-a55".to_string(), 0), ("cortex-a76".to_string(), 4)]
        );
        // A process limited to CPUs 5 and 6 (taskset) only reaches the A76s.
        let (pins, per_type) = pins_and_types(&p, &types, &[5, 6]);
        assert_eq!(pins, [5, 6]);
        assert_eq!(per_type, [("cortex-a76".to_string(), 5)]);
        assert_eq!(p.steps(), 3);
        // Without the flag: no pinning, no per-type rows.
        let p = plan(Probe::default());
        assert_eq!(pins_and_types(&p, &types, &all), (vec![], vec![]));
    }

    #[test]
    fn rows_carry_cycles_per_byte_at_the_given_clock() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "sys/class/thermal/thermal_zone0/temp",
            "55000\n",
        );
        let p = plan(Probe {
            cpu_mhz: Some(1800.0),
            root: SysRoot::at(dir.path()),
            ..Probe::default()
        });
        // 300 ms per clock reading: 4 passes of 64 KiB in 1.2 s per direction.
        let clock = StepClock::new(Duration::from_millis(300));
        let report = run(&p, "t", &clock, &AtomicBool::new(false), &Silent).unwrap();
        let c = report.machine.clock.as_ref().unwrap();
        assert_eq!((c.mhz, c.source.as_str()), (1800.0, "override"));
        let row = &report.ciphers[0];
        let mib_s = 0.25 / 1.2;
        assert!((row.encrypt_mib_s - mib_s).abs() < 1e-12);
        assert_eq!(row.cpu_mhz, Some(1800.0));
        let want = 1800e6 / (mib_s * 1_048_576.0);
        assert!((row.encrypt_cycles_per_byte.unwrap() - want).abs() < 1e-6 * want);
        assert_eq!(row.temperature_c, Some(55.0));
        assert!(!row.throttled);
        let t = report.machine.throttling.as_ref().unwrap();
        assert_eq!(
            (t.temperature_start_c, t.temperature_max_c),
            (Some(55.0), Some(55.0))
        );
        assert_eq!(t.throttled_rows, 0);
    }
}
