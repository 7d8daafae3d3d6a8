//! Power drawn while a workload runs, as the Raspberry Pi cluster study's
//! section IV-B reports it (a Kill A Watt at the wall), from one of three sources:
//!
//! - [`Rapl`]: Linux powercap energy counters (Intel and AMD RAPL) under
//!   `/sys/class/powercap/intel-rapl:N/energy_uj`, summed over the CPU packages.
//!   They cover the CPU package (cores, caches, memory controller), not the
//!   wall: fans, disks, the supply's losses and the rest of the board are not in them.
//! - A meter reading the user types in (`--watts W`): the study's method.
//! - A command that prints watts (`--watts-command CMD`), sampled while the
//!   workload runs (a smart plug's or a PDU's command-line client, `ipmitool
//!   dcmi power reading`, ...).
//!
//! [`Source::start`] begins measuring a workload, [`Session::finish`] ends it with
//! the mean watts.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::report::{PowerReading, PowerSource};

/// Where Linux exposes powercap zones.
pub const POWERCAP_ROOT: &str = "/sys/class/powercap";

/// How a power source is named in text output: what the figure means.
pub fn describe(source: PowerSource) -> &'static str {
    match source {
        PowerSource::Rapl => "RAPL package counters (CPU only, not the wall)",
        PowerSource::Meter => "external meter (--watts)",
        PowerSource::Command => "command (--watts-command)",
        PowerSource::Published => "published figure",
    }
}

/// Why power could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    /// A counter file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A counter file does not hold a number.
    #[error("{0} does not hold a counter value")]
    Malformed(PathBuf),
    /// The watts command failed or printed no number.
    #[error("--watts-command: {0}")]
    Command(String),
}

/// One RAPL package zone.
#[derive(Debug, Clone)]
struct Zone {
    energy: PathBuf,
    max_range_uj: u64,
}

/// The RAPL package zones of a powercap tree.
#[derive(Debug, Clone)]
pub struct Rapl {
    zones: Vec<Zone>,
    /// Zone names (`package-0`, ...).
    pub names: Vec<String>,
}

fn read_u64(path: &Path) -> Result<u64, PowerError> {
    let text = std::fs::read_to_string(path).map_err(|source| PowerError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.trim()
        .parse()
        .map_err(|_| PowerError::Malformed(path.to_path_buf()))
}

/// Energy used between two readings of a counter that wraps to 0 after
/// `max_range_uj` (at most one wrap between readings; [`Session`] samples often
/// enough for that).
pub fn energy_delta(before: u64, after: u64, max_range_uj: u64) -> u64 {
    if after >= before {
        after - before
    } else {
        max_range_uj.saturating_sub(before) + after
    }
}

impl Rapl {
    /// The package zones under `root` (normally [`POWERCAP_ROOT`]): directories
    /// `intel-rapl:N` (sub-zones `intel-rapl:N:M` are parts of a package and would
    /// count twice). `Ok(None)` when there are none; an error when they exist but
    /// cannot be read (since 2020 kernels let only root read `energy_uj`).
    pub fn open(root: &Path) -> Result<Option<Rapl>, PowerError> {
        let Ok(entries) = std::fs::read_dir(root) else {
            return Ok(None);
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("intel-rapl:"))
                    .is_some_and(|rest| {
                        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
                    })
            })
            .collect();
        dirs.sort();
        if dirs.is_empty() {
            return Ok(None);
        }
        let mut zones = Vec::new();
        let mut names = Vec::new();
        for dir in dirs {
            let energy = dir.join("energy_uj");
            read_u64(&energy)?;
            zones.push(Zone {
                max_range_uj: read_u64(&dir.join("max_energy_range_uj"))?,
                energy,
            });
            names.push(
                std::fs::read_to_string(dir.join("name"))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| dir.display().to_string()),
            );
        }
        Ok(Some(Rapl { zones, names }))
    }

    /// The counters now, one per zone, microjoules.
    pub fn read(&self) -> Result<Vec<u64>, PowerError> {
        self.zones.iter().map(|z| read_u64(&z.energy)).collect()
    }

    /// Microjoules used from `before` to `after` over all zones.
    pub fn used_uj(&self, before: &[u64], after: &[u64]) -> u64 {
        self.zones
            .iter()
            .zip(before.iter().zip(after))
            .map(|(z, (&b, &a))| energy_delta(b, a, z.max_range_uj))
            .sum()
    }
}

/// Finds the first number of watts in a command's output: a number followed by
/// `W`, `mW` or `kW` (attached or as the next word) wins; otherwise the first
/// bare number. Numbers with another unit (`5.1V`, `0.9A`) are skipped.
pub fn parse_watts(text: &str) -> Option<f64> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | ',' | ';' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    let scale = |unit: &str| match unit.to_ascii_lowercase().as_str() {
        "w" | "watt" | "watts" => Some(1.0),
        "mw" => Some(1e-3),
        "kw" => Some(1e3),
        _ => None,
    };
    let mut bare = None;
    for (i, w) in words.iter().enumerate() {
        let split = w
            .char_indices()
            .find(|&(j, c)| {
                !(c.is_ascii_digit() || c == '.' || ((c == '-' || c == '+') && j == 0))
                    && !(matches!(c, 'e' | 'E')
                        && w[j + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-'))
            })
            .map_or(w.len(), |(j, _)| j);
        let Ok(value) = w[..split].parse::<f64>() else {
            continue;
        };
        if !value.is_finite() {
            continue;
        }
        let unit = &w[split..];
        if unit.is_empty() {
            if let Some(s) = words.get(i + 1).and_then(|n| scale(n)) {
                return Some(value * s);
            }
            bare.get_or_insert(value);
        } else if let Some(s) = scale(unit) {
            return Some(value * s);
        }
    }
    bare
}

/// Runs `command` with `sh -c` and reads watts from its standard output.
pub fn run_watts_command(command: &str) -> Result<f64, PowerError> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| PowerError::Command(format!("cannot run sh: {e}")))?;
    if !out.status.success() {
        return Err(PowerError::Command(format!(
            "'{command}' exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match parse_watts(&text) {
        Some(w) if w >= 0.0 => Ok(w),
        _ => Err(PowerError::Command(format!(
            "'{command}' printed no number of watts (it printed '{}')",
            text.trim()
        ))),
    }
}

/// A power source chosen for a run.
#[derive(Debug, Clone)]
pub enum Source {
    /// RAPL counters.
    Rapl(Rapl),
    /// A fixed reading from an external meter, watts.
    Meter(f64),
    /// A command printing watts, and how often to run it.
    Command {
        /// The shell command.
        command: String,
        /// Time between samples.
        interval: Duration,
    },
}

/// How often RAPL counters are sampled during a workload: often enough that a
/// counter cannot wrap twice between samples (a 262 kJ range lasts over 40
/// minutes even at 100 W).
const RAPL_INTERVAL: Duration = Duration::from_secs(10);

impl Source {
    /// The report's name for this source.
    pub fn kind(&self) -> PowerSource {
        match self {
            Source::Rapl(_) => PowerSource::Rapl,
            Source::Meter(_) => PowerSource::Meter,
            Source::Command { .. } => PowerSource::Command,
        }
    }

    /// Starts measuring a workload.
    pub fn start(&self) -> Result<Session, PowerError> {
        let started = Instant::now();
        let inner = match self {
            Source::Meter(w) => SessionKind::Fixed(*w),
            Source::Rapl(rapl) => {
                let rapl = rapl.clone();
                let first = rapl.read()?;
                let (tx, rx) = mpsc::channel::<()>();
                let handle = std::thread::spawn(move || -> Result<u64, PowerError> {
                    let mut last = first;
                    let mut used = 0u64;
                    loop {
                        let stop = !matches!(
                            rx.recv_timeout(RAPL_INTERVAL),
                            Err(RecvTimeoutError::Timeout)
                        );
                        let now = rapl.read()?;
                        used += rapl.used_uj(&last, &now);
                        last = now;
                        if stop {
                            return Ok(used);
                        }
                    }
                });
                SessionKind::Rapl(tx, handle)
            }
            Source::Command { command, interval } => {
                let (command, interval) = (command.clone(), *interval);
                let (tx, rx) = mpsc::channel::<()>();
                let handle = std::thread::spawn(move || {
                    let mut samples = Vec::new();
                    let mut last_error = None;
                    loop {
                        match run_watts_command(&command) {
                            Ok(w) => samples.push(w),
                            Err(e) => last_error = Some(e),
                        }
                        if !matches!(rx.recv_timeout(interval), Err(RecvTimeoutError::Timeout)) {
                            break;
                        }
                    }
                    if samples.is_empty() {
                        Err(last_error.unwrap_or(PowerError::Command("no sample".into())))
                    } else {
                        Ok(samples)
                    }
                });
                SessionKind::Command(tx, handle)
            }
        };
        Ok(Session { inner, started })
    }
}

enum SessionKind {
    Fixed(f64),
    Rapl(mpsc::Sender<()>, JoinHandle<Result<u64, PowerError>>),
    Command(mpsc::Sender<()>, JoinHandle<Result<Vec<f64>, PowerError>>),
}

/// A workload being measured.
pub struct Session {
    inner: SessionKind,
    started: Instant,
}

impl Session {
    /// Ends the measurement: the mean watts over the workload.
    pub fn finish(self) -> Result<f64, PowerError> {
        let seconds = self.started.elapsed().as_secs_f64();
        match self.inner {
            SessionKind::Fixed(w) => Ok(w),
            SessionKind::Rapl(tx, handle) => {
                let _ = tx.send(());
                let uj = handle.join().expect("RAPL sampler does not panic")?;
                Ok(uj as f64 / 1e6 / seconds.max(1e-9))
            }
            SessionKind::Command(tx, handle) => {
                let _ = tx.send(());
                let samples = handle.join().expect("command sampler does not panic")?;
                Ok(samples.iter().sum::<f64>() / samples.len() as f64)
            }
        }
    }
}

/// Figures derived from a reading, as the study compares systems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Efficiency {
    /// Work per watt: MiB/s per W, or GFLOPS per W.
    pub per_watt: Option<f64>,
    /// Hardware dollars per unit of work: USD per MiB/s, or USD per GFLOPS.
    pub usd_per_unit: Option<f64>,
}

/// MiB/s (or GFLOPS) per watt and USD per MiB/s (or per GFLOPS) of a reading.
pub fn efficiency(r: &PowerReading) -> Efficiency {
    let work = r.mib_s.or(r.gflops).filter(|w| *w > 0.0);
    Efficiency {
        per_watt: work.filter(|_| r.watts > 0.0).map(|w| w / r.watts),
        usd_per_unit: work.and_then(|w| r.cost_usd.map(|c| c / w)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_around() {
        assert_eq!(energy_delta(100, 250, 1000), 150);
        assert_eq!(energy_delta(900, 50, 1000), 150);
        assert_eq!(energy_delta(5, 5, 1000), 0);
    }

    #[test]
    fn watts_from_command_output() {
        assert_eq!(parse_watts("12.5\n"), Some(12.5));
        assert_eq!(parse_watts("power: 37.6 W"), Some(37.6));
        assert_eq!(parse_watts("5.02V 0.91A 4.57W"), Some(4.57));
        assert_eq!(
            parse_watts("Instantaneous power reading: 160 Watts"),
            Some(160.0)
        );
        assert_eq!(parse_watts("1500 mW"), Some(1.5));
        assert_eq!(parse_watts("0.188kW"), Some(188.0));
        assert_eq!(parse_watts("1.2e2"), Some(120.0));
        assert_eq!(parse_watts("load 3 sensors"), Some(3.0));
        assert_eq!(parse_watts("no reading"), None);
        assert_eq!(parse_watts("5V 2A"), None);
    }

    #[test]
    fn efficiency_figures() {
        let r = PowerReading {
            workload: "bench".into(),
            watts: 40.0,
            source: PowerSource::Meter,
            mib_s: Some(200.0),
            gflops: None,
            cost_usd: Some(320.0),
        };
        let e = efficiency(&r);
        assert_eq!(e.per_watt, Some(5.0));
        assert_eq!(e.usd_per_unit, Some(1.6));
        let none = PowerReading {
            cost_usd: None,
            mib_s: None,
            ..r
        };
        assert_eq!(efficiency(&none).per_watt, None);
        assert_eq!(efficiency(&none).usd_per_unit, None);
    }

    #[test]
    fn meter_sessions_return_the_reading() {
        let s = Source::Meter(37.6).start().unwrap();
        assert_eq!(s.finish().unwrap(), 37.6);
    }
}
