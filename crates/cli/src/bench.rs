//! `clustercrypt bench` and `clustercrypt ciphers`: turn the options into a plan,
//! run it with a progress bar and Ctrl-C handling, write the report.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clustercrypt_bench::clock::MonotonicClock;
use clustercrypt_bench::export::{Format, RenderOptions};
use clustercrypt_bench::files::{self, FilePlan};
use clustercrypt_bench::kdf::{Argon2Limits, KdfSpec};
use clustercrypt_bench::machine::Machine;
use clustercrypt_bench::measure::{MeasureError, Method};
use clustercrypt_bench::platform::{self, IdleRecord, SysRoot};
use clustercrypt_bench::report::{Report, Settings};
use clustercrypt_bench::runner::{self, Observer, Plan, Probe};
use clustercrypt_catalogue::{CipherSpec, catalogue, cryptsetup_defaults};
use clustercrypt_engine::format::DEFAULT_CHUNK_SIZE;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{BenchArgs, CiphersArgs};
use crate::error::CliError;
use crate::output::Sink;
use crate::power::PowerObserver;
use crate::sizes::parse_size;

static CANCEL: AtomicBool = AtomicBool::new(false);

/// Builds the plan, checking every option before any work starts.
pub(crate) fn plan(args: &BenchArgs) -> Result<Plan, CliError> {
    let mut ciphers = Vec::new();
    for text in &args.cipher {
        let spec =
            CipherSpec::parse(text, args.key_size).map_err(|e| CliError::Usage(e.to_string()))?;
        ciphers.push(spec);
    }
    let mut kdfs = Vec::new();
    if let Some(name) = &args.pbkdf {
        kdfs.push(KdfSpec::parse(name, args.hash.as_deref()).map_err(CliError::Usage)?);
    }
    let explicit = !ciphers.is_empty() || !kdfs.is_empty();
    if args.all {
        ciphers = catalogue();
    } else if !explicit {
        ciphers = cryptsetup_defaults();
    }
    if (args.all || !explicit) && !args.no_kdf {
        kdfs = KdfSpec::cryptsetup_defaults();
    }
    if args.no_kdf {
        kdfs.clear();
    }
    let method = Method {
        min_time: Duration::from_secs_f64(args.time),
        buffer_size: args.buffer_size,
        request_size: args.request_size,
        passes: args.passes,
    };
    for spec in &ciphers {
        method
            .validate(spec)
            .map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let machine = Machine::detect();
    let mut argon2 = Argon2Limits::for_machine(machine.memory_bytes, machine.cores);
    argon2.target_ms = args.iter_time;
    if let Some(m) = args.pbkdf_memory {
        argon2.max_memory_kib = m;
    }
    if let Some(p) = args.pbkdf_parallel {
        argon2.parallel = p;
    }
    let threads = if args.per_core_type && args.threads == 1 {
        platform::allowed_cpus().len().max(1)
    } else {
        args.threads
    };
    Ok(Plan {
        ciphers,
        kdfs,
        method,
        threads,
        runs: args.runs as usize,
        // A quarter of the per-row time gives stable PBKDF2 figures quickly.
        pbkdf2_time: Duration::from_secs_f64((args.time / 4.0).max(0.05)),
        argon2,
        probe: Probe {
            cpu_mhz: args.cpu_mhz,
            pin: args.pin,
            per_core_type: args.per_core_type,
            root: SysRoot::default(),
        },
    })
}

/// Checks that the machine is idle: a warning on stderr, or with `--strict` a refusal.
fn idle_check(strict: bool) -> Result<IdleRecord, CliError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rec = platform::check_idle(&SysRoot::default(), cores, Duration::from_millis(300));
    if !rec.idle {
        if strict {
            return Err(CliError::Failed(anyhow::anyhow!(
                "the machine is not idle ({}); figures would be low. Stop the other work or run without --strict",
                rec.describe()
            )));
        }
        eprintln!(
            "clustercrypt: warning: the machine is not idle ({}); figures may be low",
            rec.describe()
        );
    }
    Ok(rec)
}

/// A progress bar on stderr, only when stderr is a terminal.
struct Progress(Option<ProgressBar>);

impl Progress {
    fn new(steps: usize) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::new(steps as u64);
        let style =
            ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                .expect("valid template")
                .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(Some(bar))
    }

    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn step(&self, name: &str) {
        if let Some(b) = &self.0 {
            b.set_message(name.to_string());
        }
    }
    fn step_done(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }
}

/// Writes `text` to `path` (or stdout for `-`/none) without leaving a partial file;
/// an existing file is replaced.
pub fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    let path = path.unwrap_or(Path::new("-"));
    let mut sink = Sink::open(path, Path::new("-"), true)
        .map_err(|e| match e {
            CliError::Usage(m) => anyhow::anyhow!(m),
            CliError::Failed(e) => e,
            CliError::Interrupted => anyhow::anyhow!("interrupted"),
        })?
        .public();
    sink.writer().write_all(text.as_bytes())?;
    sink.commit()
}

/// File sizes of `bench --files`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSizes(pub Vec<u64>);

/// Parses `--files`: comma-separated sizes (`1M,8M,32M`) or `study` (1M to 128M).
pub fn parse_file_sizes(text: &str) -> Result<FileSizes, String> {
    if text.trim().eq_ignore_ascii_case("study") {
        return Ok(FileSizes(files::study_sizes()));
    }
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let size = parse_size(part)? as u64;
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    if sizes.is_empty() {
        return Err(format!("'{text}' names no file size (example: 1M,8M,32M)"));
    }
    Ok(FileSizes(sizes))
}

fn install_cancel_handler() -> Result<(), CliError> {
    ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            // A second Ctrl-C: the user wants out now.
            std::process::exit(crate::error::EXIT_INTERRUPTED.into());
        }
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(())
}

/// `bench --files`: the file-size study.
fn run_files(args: &BenchArgs, sizes: &[u64]) -> Result<(), CliError> {
    let ciphers = if args.cipher.is_empty() {
        files::study_ciphers()
    } else {
        let mut v = Vec::new();
        for text in &args.cipher {
            let spec = CipherSpec::parse(text, args.key_size)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            files::check_cipher(&spec).map_err(CliError::Usage)?;
            v.push(spec);
        }
        v
    };
    if let Some(d) = &args.files_dir
        && !d.is_dir()
    {
        return Err(CliError::Usage(format!(
            "--files-dir {} is not a directory",
            d.display()
        )));
    }
    let format = Format::from_name(&args.format).expect("clap checked the format");
    let source = args.power.source(true)?;
    install_cancel_handler()?;
    let plan = FilePlan {
        sizes: sizes.to_vec(),
        ciphers,
        threads: args.threads,
        runs: args.runs as usize,
        dir: args.files_dir.clone(),
        chunk_size: DEFAULT_CHUNK_SIZE,
    };
    let progress = Progress::new(plan.ciphers.len() * plan.sizes.len() * plan.runs);
    let result = files::run(&plan, source.as_ref(), &progress, &CANCEL);
    progress.finish();
    let outcome = result.map_err(|e| CliError::Failed(e.into()))?;
    let mut report = Report::empty(
        Machine::detect(),
        Settings {
            min_time_s: 0.0,
            buffer_size: plan.chunk_size,
            request_size: plan.chunk_size,
            runs: plan.runs,
            threads: plan.threads,
        },
    );
    report.files = outcome.rows;
    report.power = outcome.power;
    args.power.apply_cost(&mut report.power);
    report.interrupted = outcome.interrupted;
    write_output(args.output.as_deref(), &format.render(&report))?;
    if report.interrupted {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// Runs `clustercrypt bench`.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    if let Some(FileSizes(sizes)) = &args.files {
        return run_files(args, sizes);
    }
    let mut plan = plan(args)?;
    let format = Format::from_name(&args.format).expect("clap checked the format");
    if args.cluster {
        if args.power.watts_command.is_some() || args.power.rapl {
            return Err(CliError::Usage(
                "--watts-command and --rapl measure one machine; for a cluster give the \
                 whole cluster's meter reading with --watts W"
                    .into(),
            ));
        }
        if args.power.cost.is_some() && args.power.watts.is_none() {
            return Err(CliError::Usage(
                "--cost goes with power figures: give --watts W".into(),
            ));
        }
        // KDFs are per-node facts; the cluster run measures the cipher rows.
        plan.kdfs.clear();
        return crate::cluster::bench(args, &plan, format);
    }
    let source = args.power.source(false)?;
    // Exact passes count instructions: the idleness check samples wall time.
    let idle = if plan.ciphers.is_empty() || plan.method.passes.is_some() {
        None
    } else {
        Some(idle_check(args.strict)?)
    };
    install_cancel_handler()?;
    let progress = Progress::new(plan.steps());
    let power = source.as_ref().map(|s| PowerObserver::new(&progress, s));
    let observer: &dyn Observer = match &power {
        Some(p) => p,
        None => &progress,
    };
    let clock = MonotonicClock::default();
    let result = runner::run(&plan, env!("CARGO_PKG_VERSION"), &clock, &CANCEL, observer);
    progress.finish();
    let mut report = match result {
        Ok(r) => r,
        Err(MeasureError::Method(m)) => return Err(CliError::Usage(m)),
        Err(e) => return Err(CliError::Failed(e.into())),
    };
    report.machine.idle = idle;
    if let Some(p) = power {
        report.power = p.readings(&report)?;
        args.power.apply_cost(&mut report.power);
    }
    let opts = RenderOptions {
        cycles: args.cycles,
    };
    write_output(args.output.as_deref(), &format.render_with(&report, &opts))?;
    if report.interrupted {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// Runs `clustercrypt ciphers`.
pub fn list_ciphers(args: &CiphersArgs) -> Result<(), CliError> {
    let rows = catalogue();
    let text = if args.json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|s| {
                serde_json::json!({
                    "cipher": s.label(),
                    "spec": s.full_name(),
                    "algorithm": s.algorithm,
                    "mode": s.mode,
                    "key_bits": s.key_bits,
                    "block_bits": s.algorithm.block_size().map(|b| b * 8),
                    "insecure": s.is_broken(),
                    "insecure_reason": s.insecurity(),
                })
            })
            .collect();
        serde_json::to_string_pretty(&list).expect("serialises") + "\n"
    } else {
        let mut out = String::from("#        Cipher |       Key | Block | Full name\n");
        for s in &rows {
            let block = s
                .algorithm
                .block_size()
                .map_or("stream".to_string(), |b| format!("{}b", b * 8));
            out.push_str(&format!(
                "{:>17}  {:>7}b  {:>6}   {}{}\n",
                s.label(),
                s.key_bits,
                block,
                s.full_name(),
                s.insecurity()
                    .map(|r| format!("  (insecure: {r})"))
                    .unwrap_or_default()
            ));
        }
        out
    };
    write_output(None, &text)?;
    Ok(())
}
