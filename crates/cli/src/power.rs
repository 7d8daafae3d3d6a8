//! Power options shared by `bench` and `hpl`: which source, checked before any
//! work starts, and power readings for the rows of a cipher benchmark.

use std::sync::Mutex;
use std::time::Duration;

use clap::Args;
use clustercrypt_bench::power::{self, POWERCAP_ROOT, Rapl, Session, Source};
use clustercrypt_bench::report::{PowerReading, Report};
use clustercrypt_bench::runner::Observer;

use crate::error::CliError;
use crate::sizes::parse_seconds;

/// Where power figures come from. Without `--watts` or `--watts-command`, the
/// RAPL energy counters are read where Linux exposes them (`bench --files` and
/// `hpl` do so by themselves; plain `bench` with `--rapl`, so that its default
/// output stays cryptsetup's table); with none of them there is no power section.
#[derive(Debug, Clone, Args)]
pub struct PowerArgs {
    /// Watts an external meter at the wall showed during the run (the study's
    /// Kill A Watt): reported with MiB/s (or GFLOPS) per watt.
    #[arg(long, value_name = "W", value_parser = parse_watts_arg,
          conflicts_with = "watts_command", help_heading = "Power")]
    pub watts: Option<f64>,

    /// A shell command that prints the current watts (a smart plug's or PDU's
    /// client, `ipmitool dcmi power reading`), run with `sh -c` during each workload.
    #[arg(long, value_name = "CMD", help_heading = "Power")]
    pub watts_command: Option<String>,

    /// Seconds between runs of --watts-command.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds,
          help_heading = "Power")]
    pub watts_interval: f64,

    /// Hardware cost in US dollars, for dollars per MiB/s (or per GFLOPS).
    #[arg(long, value_name = "USD", value_parser = parse_cost, help_heading = "Power")]
    pub cost: Option<f64>,

    /// Read the RAPL energy counters (/sys/class/powercap; CPU packages only, not
    /// the wall); `bench --files` and `hpl` read them by default where readable.
    #[arg(long, conflicts_with_all = ["watts", "watts_command", "no_rapl"], help_heading = "Power")]
    pub rapl: bool,

    /// Do not read the RAPL energy counters.
    #[arg(long, conflicts_with_all = ["watts", "watts_command"], help_heading = "Power")]
    pub no_rapl: bool,
}

fn parse_watts_arg(text: &str) -> Result<f64, String> {
    match text.trim_end_matches(['W', 'w']).parse::<f64>() {
        Ok(w) if w.is_finite() && w > 0.0 => Ok(w),
        _ => Err(format!("'{text}' is not a number of watts above 0")),
    }
}

fn parse_cost(text: &str) -> Result<f64, String> {
    match text.trim_start_matches('$').parse::<f64>() {
        Ok(c) if c.is_finite() && c > 0.0 => Ok(c),
        _ => Err(format!("'{text}' is not a cost in US dollars above 0")),
    }
}

impl PowerArgs {
    /// The source to use, checked now: a `--watts-command` that fails or prints no
    /// number is a usage error before any work, and so is `--rapl` without
    /// readable counters. With `auto_rapl`, RAPL is tried unless `--no-rapl`;
    /// unreadable counters (only root may read them on current kernels) then
    /// give a note and no power figures.
    pub fn source(&self, auto_rapl: bool) -> Result<Option<Source>, CliError> {
        let source = if let Some(w) = self.watts {
            Some(Source::Meter(w))
        } else if let Some(cmd) = &self.watts_command {
            power::run_watts_command(cmd).map_err(|e| CliError::Usage(e.to_string()))?;
            Some(Source::Command {
                command: cmd.clone(),
                interval: Duration::from_secs_f64(self.watts_interval),
            })
        } else if self.rapl {
            match Rapl::open(POWERCAP_ROOT.as_ref()) {
                Ok(Some(r)) => Some(Source::Rapl(r)),
                Ok(None) => {
                    return Err(CliError::Usage(format!(
                        "--rapl: this machine has no RAPL counters under {POWERCAP_ROOT}"
                    )));
                }
                Err(e) => return Err(CliError::Usage(format!("--rapl: {e}"))),
            }
        } else if self.no_rapl || !auto_rapl {
            None
        } else {
            match Rapl::open(POWERCAP_ROOT.as_ref()) {
                Ok(r) => r.map(Source::Rapl),
                Err(e) => {
                    eprintln!("clustercrypt: note: no power figures: {e}");
                    None
                }
            }
        };
        if source.is_none() && self.cost.is_some() {
            return Err(CliError::Usage(
                "--cost goes with power figures: give --watts W, --watts-command CMD or --rapl"
                    .into(),
            ));
        }
        Ok(source)
    }

    /// Sets the cost on every reading.
    pub fn apply_cost(&self, readings: &mut [PowerReading]) {
        for r in readings {
            r.cost_usd = self.cost;
        }
    }
}

/// An observer that measures power over each step of a cipher benchmark
/// (each run of each row) and passes the steps on to `inner`.
pub struct PowerObserver<'a> {
    inner: &'a dyn Observer,
    source: &'a Source,
    current: Mutex<Option<Session>>,
    /// Mean watts of each finished step, in order (`None`: the source failed).
    steps: Mutex<Vec<Option<f64>>>,
    error: Mutex<Option<String>>,
}

impl<'a> PowerObserver<'a> {
    /// Measures with `source`, passing steps on to `inner`.
    pub fn new(inner: &'a dyn Observer, source: &'a Source) -> PowerObserver<'a> {
        PowerObserver {
            inner,
            source,
            current: Mutex::new(None),
            steps: Mutex::new(Vec::new()),
            error: Mutex::new(None),
        }
    }

    /// One reading per cipher row of `report` (the mean over its runs), with the
    /// row's mean of encryption and decryption MiB/s (the window covers both).
    /// KDF steps, which come after the rows, are not power workloads.
    pub fn readings(self, report: &Report) -> Result<Vec<PowerReading>, CliError> {
        if let Some(e) = self.error.into_inner().expect("lock") {
            return Err(CliError::Failed(anyhow::anyhow!("power measurement: {e}")));
        }
        let steps = self.steps.into_inner().expect("lock");
        let runs = report.settings.runs.max(1);
        let mut out = Vec::new();
        for (i, row) in report.ciphers.iter().enumerate() {
            let Some(chunk) = steps.get(i * runs..(i + 1) * runs) else {
                break;
            };
            let watts: Vec<f64> = chunk.iter().flatten().copied().collect();
            if watts.is_empty() {
                continue;
            }
            out.push(PowerReading {
                workload: format!("bench {} {}b", row.cipher, row.key_bits),
                watts: watts.iter().sum::<f64>() / watts.len() as f64,
                source: self.source.kind(),
                mib_s: Some((row.encrypt_mib_s + row.decrypt_mib_s) / 2.0),
                gflops: None,
                cost_usd: None,
            });
        }
        Ok(out)
    }
}

impl Observer for PowerObserver<'_> {
    fn step(&self, name: &str) {
        match self.source.start() {
            Ok(s) => *self.current.lock().expect("lock") = Some(s),
            Err(e) => {
                self.error
                    .lock()
                    .expect("lock")
                    .get_or_insert(e.to_string());
            }
        }
        self.inner.step(name);
    }

    fn step_done(&self) {
        let session = self.current.lock().expect("lock").take();
        let watts = session.and_then(|s| match s.finish() {
            Ok(w) => Some(w),
            Err(e) => {
                self.error
                    .lock()
                    .expect("lock")
                    .get_or_insert(e.to_string());
                None
            }
        });
        self.steps.lock().expect("lock").push(watts);
        self.inner.step_done();
    }
}

/// `bench --cluster --watts W`: the whole cluster's meter reading against each
/// cluster row (sum over the nodes), as the study compares a 6-node cluster's
/// 37.6 W with a desktop. Only a meter fits: RAPL and commands see one node.
#[cfg(feature = "mpi")]
pub fn add_cluster_readings(args: &PowerArgs, report: &mut Report) {
    let (Some(watts), Some(cluster)) = (args.watts, &report.cluster) else {
        return;
    };
    let readings: Vec<PowerReading> = cluster
        .rows
        .iter()
        // Not the sweep: the meter read the whole cluster, not 1, 2, ... nodes.
        .map(|r| PowerReading {
            workload: format!(
                "cluster {} {}b on {} node(s)",
                r.cipher, r.key_bits, r.nodes
            ),
            watts,
            source: clustercrypt_bench::report::PowerSource::Meter,
            mib_s: Some((r.encrypt_mib_s + r.decrypt_mib_s) / 2.0),
            gflops: None,
            cost_usd: args.cost,
        })
        .collect();
    report.power = readings;
}
