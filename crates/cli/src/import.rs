//! `clustercrypt import-cryptsetup`: a `cryptsetup benchmark` listing (or our own
//! `bench --format text` output) into the result format, for comparing and plotting.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use clustercrypt_bench::export::Format;
use clustercrypt_bench::import::{self, parse_cryptsetup};
use clustercrypt_bench::report::Report;

use crate::error::CliError;
use crate::output::{Sink, open_input};

/// Listings are a few kilobytes; anything far larger is not one.
const MAX_LISTING_BYTES: u64 = 16 << 20;

/// `clustercrypt import-cryptsetup`.
#[derive(Debug, Args)]
#[command(
    after_help = "Reads every version's output of `cryptsetup benchmark` (N/A rows, KDF \
lines, MB/s or MiB/s, CRLF) and `clustercrypt bench --format text`. Rows of ciphers the \
catalogue does not know are kept under \"unavailable\" with their figures. Examples:\n  \
clustercrypt import-cryptsetup pi4.txt --machine-name pi4 -o pi4.json\n  \
cryptsetup benchmark | clustercrypt import-cryptsetup - --format markdown"
)]
pub struct ImportArgs {
    /// The listing: a file, or '-' for standard input.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,

    /// Host name to record (a listing names no machine).
    #[arg(long, value_name = "NAME")]
    pub machine_name: Option<String>,

    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "json",
          value_parser = ["json", "text", "csv", "markdown"])]
    pub format: String,

    /// Write to FILE instead of standard output ('-' for standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Reads a listing from `path` (`-` for standard input) as UTF-8 text.
pub(crate) fn read_text(path: &Path) -> Result<String, CliError> {
    let (reader, _) = open_input(path)?;
    let mut bytes = Vec::new();
    reader
        .take(MAX_LISTING_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_LISTING_BYTES {
        return Err(CliError::Usage(format!(
            "{} is larger than {} MiB: not a benchmark listing",
            path.display(),
            MAX_LISTING_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        CliError::Usage(format!(
            "{} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Imports the listing `text` read from `path`, naming the machine and the source.
pub(crate) fn import_text(
    text: &str,
    path: &Path,
    machine_name: Option<&str>,
) -> Result<Report, CliError> {
    let mut report = parse_cryptsetup(text)
        .map_err(|e| CliError::Failed(anyhow::anyhow!("{}: {e}", display_name(path))))?;
    if let Some(name) = machine_name {
        report.machine.hostname = name.to_string();
    }
    report.source = Some(format!("{} {}", import::SOURCE, display_name(path)));
    Ok(report)
}

fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "(standard input)".into()
    } else {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// Writes `text` to `out` (standard output when `None` or `-`) through a [`Sink`]:
/// never a partial file, never over `input`, never over an existing file without `force`.
pub(crate) fn write(
    out: Option<&Path>,
    input: &Path,
    force: bool,
    text: &str,
) -> Result<(), CliError> {
    let mut sink = Sink::open(out.unwrap_or(Path::new("-")), input, force)?.public();
    sink.writer()
        .write_all(text.as_bytes())
        .map_err(|e| CliError::Failed(e.into()))?;
    sink.commit()?;
    Ok(())
}

/// Runs `clustercrypt import-cryptsetup`.
pub fn run(args: &ImportArgs) -> Result<(), CliError> {
    let format = Format::from_name(&args.format).expect("clap checked the format");
    if let Some(name) = &args.machine_name
        && name.trim().is_empty()
    {
        return Err(CliError::Usage("--machine-name must not be empty".into()));
    }
    let text = read_text(&args.input)?;
    let report = import_text(&text, &args.input, args.machine_name.as_deref())?;
    write(
        args.output.as_deref(),
        &args.input,
        args.force,
        &format.render(&report),
    )
}
