//! `clustercrypt report` and `clustercrypt compare`: saved JSON results (and the
//! studies' published figures) into figures, an HTML page, or a side-by-side table.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use clustercrypt_bench::report::{Report, SCHEMA};
use clustercrypt_report::compare::{self, CompareRow};
use clustercrypt_report::figures::{self, Figure, FigureKind, Results};
use clustercrypt_report::reference::{self, ReferenceData, ReferenceSet};
use clustercrypt_report::{html, plot};
use serde::Serialize;

use crate::error::CliError;
use crate::output::Sink;

/// `clustercrypt report`.
#[derive(Debug, Args)]
#[command(
    after_help = "Figures: throughput, cluster-encrypt, cluster-decrypt, speedup-size, \
speedup-rounds, file-times, hpl, power, efficiency (each drawn when the results or references \
have data for it). Reference sets: `clustercrypt compare --list-refs`. Examples:\n  \
clustercrypt report results.json -o report.html\n  \
clustercrypt report cluster.json --ref pi3b-cluster --ref nuc --ref mrd -o fig3.html\n  \
clustercrypt report results.json --ref pi4-cryptsetup --png figures/ --figure throughput\n  \
clustercrypt report --ref cluster-study --ref hpl --ref power -o study.html"
)]
pub struct ReportArgs {
    /// Results files: JSON from `clustercrypt bench --format json`, `import-cryptsetup`, ...
    #[arg(value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// Write one self-contained HTML page to FILE ('-' for standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Draw these published figures too (a reference set name); may be repeated.
    #[arg(long = "ref", value_name = "NAME")]
    pub refs: Vec<String>,

    /// Write each figure as DIR/FIGURE.svg.
    #[arg(long, value_name = "DIR", conflicts_with = "png")]
    pub svg: Option<PathBuf>,

    /// Write each figure as DIR/FIGURE.png.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,

    /// Only this figure; may be repeated.
    #[arg(long, value_name = "NAME")]
    pub figure: Vec<String>,

    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
}

/// `clustercrypt compare`.
#[derive(Debug, Args)]
#[command(
    after_help = "Lines up every quantity the results share with the published \
figures (same cipher row and key size, file size, HPL, power, TEA speedup); ratio above 1 \
means this machine is faster. Examples:\n  \
clustercrypt compare --list-refs\n  \
clustercrypt compare results.json --ref nuc --ref mrd\n  \
clustercrypt compare cluster.json --ref pi3b-cluster --format markdown"
)]
pub struct CompareArgs {
    /// Results files (JSON).
    #[arg(value_name = "RESULTS", required_unless_present = "list_refs")]
    pub results: Vec<PathBuf>,

    /// The published figures to compare with; may be repeated.
    #[arg(
        long = "ref",
        value_name = "NAME",
        required_unless_present = "list_refs"
    )]
    pub refs: Vec<String>,

    /// List the reference sets built in, with their sources.
    #[arg(long, conflicts_with = "refs")]
    pub list_refs: bool,

    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = ["text", "markdown", "json"])]
    pub format: String,

    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Overwrite an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Reads one results file; anything but clustercrypt's JSON is a usage error naming the file.
fn read_results(path: &Path) -> Result<Report, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let not_ours = |why: String| {
        CliError::Usage(format!(
            "{} is not a clustercrypt results file ({why}); make one with \
             `clustercrypt bench --format json -o FILE` or `clustercrypt import-cryptsetup`",
            path.display()
        ))
    };
    let report: Report = serde_json::from_str(&text).map_err(|e| not_ours(e.to_string()))?;
    if report.schema != SCHEMA {
        return Err(not_ours(format!(
            "schema '{}', expected '{SCHEMA}'",
            report.schema
        )));
    }
    Ok(report)
}

/// Reads every results file and names each for legends: its host name, or its
/// file name when it was imported or when host names repeat.
fn load_results(paths: &[PathBuf]) -> Result<Vec<Results>, CliError> {
    let reports: Vec<Report> = paths
        .iter()
        .map(|p| read_results(p))
        .collect::<Result<_, _>>()?;
    let stem = |p: &Path| {
        p.file_stem()
            .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into())
    };
    let hosts: Vec<&str> = reports
        .iter()
        .map(|r| r.machine.hostname.as_str())
        .collect();
    Ok(reports
        .iter()
        .zip(paths)
        .map(|(r, p)| {
            let host = r.machine.hostname.as_str();
            let repeated = hosts.iter().filter(|h| **h == host).count() > 1;
            let label = if r.source.is_some() || repeated {
                stem(p)
            } else {
                host.to_string()
            };
            Results {
                label,
                report: r.clone(),
            }
        })
        .collect())
}

fn load_refs(names: &[String]) -> Result<(Vec<&'static ReferenceSet>, ReferenceData), CliError> {
    let mut sets = Vec::new();
    for name in names {
        let set = reference::find(name).map_err(|e| CliError::Usage(e.to_string()))?;
        if !sets.iter().any(|s: &&ReferenceSet| s.name == set.name) {
            sets.push(set);
        }
    }
    let data = reference::load(names).context("reading the built-in reference data")?;
    Ok((sets, data))
}

/// Refuses to write over an input or, without --force, over an existing file:
/// checked for every output before any is written.
fn check_output(out: &Path, inputs: &[PathBuf], force: bool) -> Result<(), CliError> {
    if out == Path::new("-") {
        return Ok(());
    }
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    if let Some(input) = inputs.iter().find(|i| same(out, i)) {
        return Err(CliError::Usage(format!(
            "the output {} is the input {}; choose another output path",
            out.display(),
            input.display()
        )));
    }
    if out.exists() && !force {
        return Err(CliError::Usage(format!(
            "{} already exists; use --force to overwrite it",
            out.display()
        )));
    }
    Ok(())
}

fn write(out: &Path, bytes: &[u8], force: bool) -> Result<(), CliError> {
    let mut sink = Sink::open(out, Path::new("-"), force)?.public();
    sink.writer()
        .write_all(bytes)
        .with_context(|| format!("writing {}", out.display()))?;
    sink.commit()?;
    Ok(())
}

/// `clustercrypt report`.
pub fn run(args: &ReportArgs) -> Result<(), CliError> {
    if args.output.is_none() && args.svg.is_none() && args.png.is_none() {
        return Err(CliError::Usage(
            "say where the report goes: -o report.html, --svg DIR or --png DIR".into(),
        ));
    }
    if args.results.is_empty() && args.refs.is_empty() {
        return Err(CliError::Usage(
            "give results files, --ref NAME, or both (see `clustercrypt compare --list-refs`)"
                .into(),
        ));
    }
    let mut kinds = Vec::new();
    for name in &args.figure {
        let kind = FigureKind::from_name(name).ok_or_else(|| {
            CliError::Usage(format!(
                "no figure named '{name}'; figures: {}",
                FigureKind::ALL.map(FigureKind::name).join(", ")
            ))
        })?;
        kinds.push(kind);
    }
    let results = load_results(&args.results)?;
    let (sets, refs) = load_refs(&args.refs)?;
    let figures: Vec<Figure> = if kinds.is_empty() {
        figures::build_all(&results, &refs)
    } else {
        kinds
            .iter()
            .map(|&k| {
                figures::build(k, &results, &refs).ok_or_else(|| {
                    CliError::Usage(format!(
                        "the figure '{}' has no data here: it needs {}",
                        k.name(),
                        k.needs()
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    if figures.is_empty() {
        return Err(CliError::Usage(
            "nothing to draw: the results have no cipher, cluster, file, HPL, power or \
             speedup rows, and no --ref was given"
                .into(),
        ));
    }

    // Everything is drawn before anything is written.
    let mut outputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (dir, ext) in [(&args.svg, "svg"), (&args.png, "png")] {
        let Some(dir) = dir else { continue };
        if dir.exists() && !dir.is_dir() {
            return Err(CliError::Usage(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        for f in &figures {
            let bytes = match ext {
                "svg" => plot::svg(f).map(String::into_bytes),
                _ => plot::png(f),
            }
            .context("drawing the figures")?;
            outputs.push((dir.join(format!("{}.{ext}", f.kind.name())), bytes));
        }
    }
    if let Some(out) = &args.output {
        let page = html::page(&results, &sets, &refs, &figures).context("drawing the report")?;
        outputs.push((out.clone(), page.into_bytes()));
    }
    for (path, _) in &outputs {
        check_output(path, &args.results, args.force)?;
    }
    for dir in [&args.svg, &args.png].into_iter().flatten() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    for (path, bytes) in &outputs {
        write(path, bytes, args.force)?;
        if path != Path::new("-") {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// The JSON form of `compare`.
#[derive(Serialize)]
struct CompareJson<'a> {
    schema: &'static str,
    references: Vec<&'static str>,
    rows: &'a [CompareRow],
}

/// One reference set, for `--list-refs --format json`.
#[derive(Serialize)]
struct SetJson {
    name: &'static str,
    title: &'static str,
    source: &'static str,
}

fn list_refs(format: &str) -> String {
    let sets = reference::sets();
    match format {
        "json" => {
            let list: Vec<SetJson> = sets
                .iter()
                .map(|s| SetJson {
                    name: s.name,
                    title: s.title,
                    source: s.source,
                })
                .collect();
            serde_json::to_string_pretty(&list).expect("plain data serializes") + "\n"
        }
        "markdown" => {
            let mut out = String::from("| name | what | source |\n|---|---|---|\n");
            for s in sets {
                out.push_str(&format!("| {} | {} | {} |\n", s.name, s.title, s.source));
            }
            out
        }
        _ => {
            let width = sets.iter().map(|s| s.name.len()).max().unwrap_or(0);
            let mut out = String::new();
            for s in sets {
                out.push_str(&format!(
                    "{:<width$}  {}\n{:<width$}  source: {}\n",
                    s.name, s.title, "", s.source
                ));
            }
            out
        }
    }
}

/// `clustercrypt compare`.
pub fn compare(args: &CompareArgs) -> Result<(), CliError> {
    let out = args.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    if args.list_refs {
        check_output(&out, &[], args.force)?;
        return write(&out, list_refs(&args.format).as_bytes(), args.force);
    }
    let results = load_results(&args.results)?;
    let (sets, refs) = load_refs(&args.refs)?;
    check_output(&out, &args.results, args.force)?;
    let rows = compare::compare(&results, &refs);
    if rows.is_empty() {
        return Err(CliError::Failed(anyhow::anyhow!(
            "these results share no quantity with {} (same cipher row and key size, file \
             size and mode, HPL, power or TEA speedup); see `clustercrypt compare --list-refs`",
            args.refs.join(", ")
        )));
    }
    let text = match args.format.as_str() {
        "json" => {
            let doc = CompareJson {
                schema: "clustercrypt-compare/1",
                references: sets.iter().map(|s| s.name).collect(),
                rows: &rows,
            };
            serde_json::to_string_pretty(&doc).context("writing JSON")? + "\n"
        }
        "markdown" => compare::to_markdown(&rows),
        _ => compare::to_text(&rows),
    };
    write(&out, text.as_bytes(), args.force)
}
