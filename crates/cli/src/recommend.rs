//! `clustercrypt recommend`: the fastest secure cipher for disk and for file
//! encryption on a machine, from its results or from a quick benchmark here.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use clustercrypt_bench::advice::recommend;
use clustercrypt_bench::clock::MonotonicClock;
use clustercrypt_bench::kdf::Argon2Limits;
use clustercrypt_bench::measure::{MeasureError, Method};
use clustercrypt_bench::report::Report;
use clustercrypt_bench::runner::{self, Plan, Silent};
use clustercrypt_catalogue::CipherSpec;

use crate::error::CliError;
use crate::sizes::parse_seconds;

static CANCEL: AtomicBool = AtomicBool::new(false);

/// `clustercrypt recommend`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without RESULTS, measures the rows the advice needs here (the XTS \
ciphers, ChaCha20, AES-GCM and ChaCha20-Poly1305; about 5 s). Examples:\n  \
clustercrypt recommend\n  clustercrypt recommend results.json --format json\n  \
clustercrypt recommend pi4.txt          # a cryptsetup benchmark listing"
)]
pub struct RecommendArgs {
    /// Results to advise on: a `clustercrypt bench --format json` report or a
    /// `cryptsetup benchmark` listing ('-' for standard input).
    #[arg(value_name = "RESULTS")]
    pub results: Option<PathBuf>,

    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub format: String,

    /// Seconds of encryption, and of decryption, per row of the quick benchmark.
    #[arg(long, value_name = "SECONDS", default_value = "0.3", value_parser = parse_seconds,
          conflicts_with = "results")]
    pub time: f64,

    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The rows the advice compares.
fn quick_rows() -> Vec<CipherSpec> {
    [
        ("aes-xts-plain64", 256),
        ("aes-xts-plain64", 512),
        ("serpent-xts-plain64", 512),
        ("twofish-xts-plain64", 512),
        ("camellia-xts-plain64", 512),
        ("xchacha12,aes-adiantum-plain64", 256),
        ("aes-hctr2-plain64", 256),
        ("chacha20", 256),
        ("aes-gcm", 256),
        ("chacha20-poly1305", 256),
    ]
    .into_iter()
    .map(|(name, bits)| CipherSpec::parse(name, Some(bits)).expect("catalogue row"))
    .collect()
}

fn measure(seconds: f64) -> Result<Report, CliError> {
    let plan = Plan {
        ciphers: quick_rows(),
        kdfs: Vec::new(),
        method: Method {
            min_time: Duration::from_secs_f64(seconds),
            ..Method::default()
        },
        threads: 1,
        runs: 1,
        pbkdf2_time: Duration::from_millis(50),
        argon2: Argon2Limits::for_machine(0, 1),
        probe: Default::default(),
    };
    ctrlc::set_handler(|| CANCEL.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    if std::io::stderr().is_terminal() {
        eprintln!(
            "Measuring {} rows, about {:.0} s...",
            plan.ciphers.len(),
            plan.ciphers.len() as f64 * seconds * 2.0
        );
    }
    let report = runner::run(
        &plan,
        env!("CARGO_PKG_VERSION"),
        &MonotonicClock::default(),
        &CANCEL,
        &Silent,
    )
    .map_err(|e| match e {
        MeasureError::Method(m) => CliError::Usage(m),
        e => CliError::Failed(e.into()),
    })?;
    if report.interrupted {
        return Err(CliError::Interrupted);
    }
    Ok(report)
}

/// Reads a JSON report, or imports a cryptsetup listing.
fn load(path: &Path) -> Result<Report, CliError> {
    let text = crate::import::read_text(path)?;
    if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "{} is not a clustercrypt bench report: {e}",
                path.display()
            ))
        })
    } else {
        crate::import::import_text(&text, path, None)
    }
}

/// Runs `clustercrypt recommend`.
pub fn run(args: &RecommendArgs) -> Result<(), CliError> {
    let report = match &args.results {
        Some(path) => load(path)?,
        None => measure(args.time)?,
    };
    let advice = recommend(&report);
    let text = if args.format == "json" {
        serde_json::to_string_pretty(&advice).expect("advice serialises") + "\n"
    } else {
        advice.to_text()
    };
    let input = args.results.as_deref().unwrap_or(Path::new("-"));
    crate::import::write(args.output.as_deref(), input, args.force, &text)
}
