//! General compute with the real HPL benchmark (High-Performance LINPACK), as the
//! Raspberry Pi cluster study (seed 000, section III-B) ran it.
//!
//! [`plan`] chooses the input the way the study tuned it: a P x Q process grid
//! over all cores, as near square as possible with Q >= P, and the largest N (a
//! multiple of NB) whose matrix fills about 80% of the memory of all nodes;
//! every knob can be overridden. [`render_input`] writes HPL's input file (the
//! `hpccinf.txt` of HPC Challenge, which Debian's `hpcc` package runs; a
//! standalone `xhpl` reads the same lines as `HPL.dat`), [`parse_hpcc_output`]
//! and [`parse_hpl_table`] read the results back, and [`run`] does it all under
//! `mpirun` in a temporary directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::report::HplResult;

/// Default block size: OpenBLAS and ATLAS on current cores do best around 128-256
/// (the study does not print its NB).
pub const DEFAULT_NB: u64 = 192;
/// The study's share of total memory for the matrix.
pub const DEFAULT_MEMORY_FRACTION: f64 = 0.8;

/// What the user fixed instead of letting [`plan`] choose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Problem size N.
    pub n: Option<u64>,
    /// Block size NB.
    pub nb: Option<u64>,
    /// Process grid rows P.
    pub p: Option<u64>,
    /// Process grid columns Q.
    pub q: Option<u64>,
    /// MPI processes in all (default: every core of every node).
    pub processes: Option<usize>,
    /// Share of total memory N may fill (default 0.8).
    pub memory_fraction: Option<f64>,
}

/// The HPL parameters of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct HplInput {
    /// Problem size (order of the matrix).
    pub n: u64,
    /// Block size.
    pub nb: u64,
    /// Process grid rows.
    pub p: u64,
    /// Process grid columns.
    pub q: u64,
    /// MPI processes (P x Q).
    pub processes: usize,
    /// Nodes the processes run on.
    pub nodes: usize,
    /// Memory of all nodes together, bytes.
    pub total_memory_bytes: u64,
    /// Share of that memory N was chosen to fill.
    pub memory_fraction: f64,
}

impl HplInput {
    /// Bytes of the N x N matrix of doubles.
    pub fn matrix_bytes(&self) -> u64 {
        8 * self.n * self.n
    }
}

/// Why a plan is impossible.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// An option is out of range or contradicts another.
    #[error("{0}")]
    Invalid(String),
}

fn invalid(msg: impl Into<String>) -> PlanError {
    PlanError::Invalid(msg.into())
}

/// The process grid for `processes`: P x Q = processes, P <= Q, as near square
/// as possible (P is the largest divisor not above the square root).
pub fn grid(processes: u64) -> (u64, u64) {
    let mut p = (processes as f64).sqrt() as u64;
    // Correct the float square root at the edges.
    while p * p > processes {
        p -= 1;
    }
    while (p + 1) * (p + 1) <= processes {
        p += 1;
    }
    let p = (1..=p.max(1))
        .rev()
        .find(|d| processes.is_multiple_of(*d))
        .unwrap_or(1);
    (p, processes / p)
}

/// The largest multiple of `nb` with `8 * N^2 <= fraction * memory`.
pub fn problem_size(memory_bytes: u64, fraction: f64, nb: u64) -> u64 {
    let doubles = memory_bytes as f64 * fraction / 8.0;
    let mut n = doubles.sqrt() as u64 / nb * nb;
    // Float rounding must never give an N whose matrix overshoots the budget.
    while n > 0 && (8 * n * n) as f64 > memory_bytes as f64 * fraction {
        n -= nb;
    }
    n
}

/// Chooses N, NB, P and Q for `nodes` identical nodes of `cores` cores and
/// `memory_bytes` of memory each, as the study did, then applies `overrides`.
pub fn plan(
    cores: usize,
    memory_bytes: u64,
    nodes: usize,
    overrides: &Overrides,
) -> Result<HplInput, PlanError> {
    if cores == 0 || nodes == 0 {
        return Err(invalid("cores and nodes must be at least 1"));
    }
    let fraction = overrides.memory_fraction.unwrap_or(DEFAULT_MEMORY_FRACTION);
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(invalid(format!(
            "the memory fraction must be above 0 and at most 1, not {fraction}"
        )));
    }
    let nb = overrides.nb.unwrap_or(DEFAULT_NB);
    if nb == 0 {
        return Err(invalid("NB must be at least 1"));
    }
    let (p, q) = match (overrides.p, overrides.q) {
        (Some(p), Some(q)) if p >= 1 && q >= 1 => {
            if let Some(n) = overrides.processes
                && n as u64 != p * q
            {
                return Err(invalid(format!(
                    "P x Q = {p} x {q} = {} processes, but --processes is {n}",
                    p * q
                )));
            }
            (p, q)
        }
        (None, None) => {
            let processes = overrides.processes.unwrap_or(cores * nodes);
            if processes == 0 {
                return Err(invalid("at least one process is needed"));
            }
            grid(processes as u64)
        }
        (Some(_), Some(_)) => return Err(invalid("P and Q must be at least 1")),
        _ => return Err(invalid("give both P and Q, or neither")),
    };
    let total = memory_bytes.saturating_mul(nodes as u64);
    let n = match overrides.n {
        Some(0) => return Err(invalid("N must be at least 1")),
        Some(n) => {
            let need = 8u128 * u128::from(n) * u128::from(n);
            if need > u128::from(total) {
                return Err(invalid(format!(
                    "N = {n} needs {:.1} GiB for the matrix, more than the {:.1} GiB of memory",
                    need as f64 / GIB,
                    total as f64 / GIB
                )));
            }
            n
        }
        None => {
            let n = problem_size(total, fraction, nb);
            if n == 0 {
                return Err(invalid(format!(
                    "{:.0}% of {} bytes holds less than one {nb} x {nb} block; lower NB",
                    fraction * 100.0,
                    total
                )));
            }
            n
        }
    };
    Ok(HplInput {
        n,
        nb,
        p,
        q,
        processes: (p * q) as usize,
        nodes,
        total_memory_bytes: total,
        memory_fraction: fraction,
    })
}

const GIB: f64 = (1u64 << 30) as f64;

/// Which HPL program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// HPC Challenge (Debian's `hpcc`): reads `hpccinf.txt`, writes `hpccoutf.txt`,
    /// and runs its whole suite around HPL.
    Hpcc,
    /// A standalone HPL `xhpl`: reads `HPL.dat`, prints to standard output.
    Xhpl,
}

impl Program {
    /// Guesses the program from its file name (`xhpl*` is HPL, anything else hpcc).
    pub fn from_path(path: &Path) -> Program {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.contains("xhpl") {
            Program::Xhpl
        } else {
            Program::Hpcc
        }
    }

    /// The input file it reads from its working directory.
    pub fn input_file(self) -> &'static str {
        match self {
            Program::Hpcc => "hpccinf.txt",
            Program::Xhpl => "HPL.dat",
        }
    }
}

/// The input file for `input`: hpcc's example `_hpccinf.txt` (Debian
/// `/usr/share/doc/hpcc/examples/`) with N, NB, P and Q set. HPL reads the first
/// 31 lines; hpcc also the PTRANS lines after the separator. For `xhpl` the
/// output goes to standard output (device 6), for hpcc to `hpccoutf.txt`.
pub fn render_input(input: &HplInput, program: Program) -> String {
    let device = match program {
        Program::Hpcc => 8,
        Program::Xhpl => 6,
    };
    // The first two lines are free text; the output file name is unused.
    let mut s = String::from(
        "HPLinpack benchmark input file\nWritten by clustercrypt hpl (from hpcc's _hpccinf.txt)\nHPL.out      output file name (if any)\n",
    );
    let mut line = |value: String, what: &str| {
        let _ = writeln!(s, "{value:<12} {what}");
    };
    line(device.to_string(), "device out (6=stdout,7=stderr,file)");
    line("1".into(), "# of problems sizes (N)");
    line(input.n.to_string(), "Ns");
    line("1".into(), "# of NBs");
    line(input.nb.to_string(), "NBs");
    line("0".into(), "PMAP process mapping (0=Row-,1=Column-major)");
    line("1".into(), "# of process grids (P x Q)");
    line(input.p.to_string(), "Ps");
    line(input.q.to_string(), "Qs");
    line("16.0".into(), "threshold");
    line("1".into(), "# of panel fact");
    line("2".into(), "PFACTs (0=left, 1=Crout, 2=Right)");
    line("1".into(), "# of recursive stopping criterium");
    line("4".into(), "NBMINs (>= 1)");
    line("1".into(), "# of panels in recursion");
    line("2".into(), "NDIVs");
    line("1".into(), "# of recursive panel fact.");
    line("1".into(), "RFACTs (0=left, 1=Crout, 2=Right)");
    line("1".into(), "# of broadcast");
    line("1".into(), "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)");
    line("1".into(), "# of lookahead depth");
    line("1".into(), "DEPTHs (>=0)");
    line("2".into(), "SWAP (0=bin-exch,1=long,2=mix)");
    line("64".into(), "swapping threshold");
    line("0".into(), "L1 in (0=transposed,1=no-transposed) form");
    line("0".into(), "U  in (0=transposed,1=no-transposed) form");
    line("1".into(), "Equilibration (0=no,1=yes)");
    line("8".into(), "memory alignment in double (> 0)");
    s.push_str("##### This line (no. 32) is ignored (it serves as a separator). ######\n");
    s.push_str("0                      \t\tNumber of additional problem sizes for PTRANS\n");
    s.push_str("1200 10000 30000        \tvalues of N\n");
    s.push_str("0                       \tnumber of additional blocking sizes for PTRANS\n");
    s.push_str("40 9 8 13 13 20 16 32 64       \tvalues of NB\n");
    s
}

/// What hpcc reported about its HPL part.
#[derive(Debug, Clone, PartialEq)]
pub struct HplOutput {
    /// GFLOPS (HPL_Tflops x 1000).
    pub gflops: f64,
    /// Problem size.
    pub n: u64,
    /// Block size.
    pub nb: u64,
    /// Process grid rows.
    pub p: u64,
    /// Process grid columns.
    pub q: u64,
    /// Seconds HPL took.
    pub seconds: f64,
    /// Whether the residual check passed (and, for hpcc, the suite succeeded).
    pub passed: bool,
    /// MPI processes, when the output says.
    pub processes: Option<usize>,
    /// The program and its version (`hpcc 1.5.0`, `HPL 2.3`).
    pub program: String,
}

/// Why an output could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// A needed value is missing or not a number.
    #[error("HPL output has no valid {0}; the run probably failed (see the output above)")]
    Missing(&'static str),
}

fn summary_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        l.trim()
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
            .map(str::trim)
    })
}

fn summary_num<T: std::str::FromStr>(text: &str, key: &'static str) -> Result<T, ParseError> {
    summary_value(text, key)
        .and_then(|v| v.parse().ok())
        .ok_or(ParseError::Missing(key))
}

/// Whether HPL's residual check passed: the `..... PASSED` line of the HPL
/// section, and no `FAILED` one.
fn residual_passed(hpl_section: &str) -> bool {
    let checks: Vec<&str> = hpl_section
        .lines()
        // The explanation above the table quotes the formula too; the checks
        // are the lines that end in a verdict.
        .filter(|l| l.contains("||Ax-b||") && (l.contains("PASSED") || l.contains("FAILED")))
        .collect();
    !checks.is_empty() && checks.iter().all(|l| l.trim_end().ends_with("PASSED"))
}

/// Reads hpcc's `hpccoutf.txt`: the summary keys `HPL_Tflops`, `HPL_N`,
/// `HPL_NB`, `HPL_nprow`, `HPL_npcol`, `HPL_time`, `Success`, `CommWorldProcs`
/// and the version, and the residual check of the HPL section.
pub fn parse_hpcc_output(text: &str) -> Result<HplOutput, ParseError> {
    let tflops: f64 = summary_num(text, "HPL_Tflops")?;
    if !tflops.is_finite() || tflops < 0.0 {
        return Err(ParseError::Missing("HPL_Tflops"));
    }
    let section = match (
        text.find("Begin of HPL section."),
        text.find("End of HPL section."),
    ) {
        (Some(a), Some(b)) if a < b => &text[a..b],
        _ => text,
    };
    let success = summary_value(text, "Success") == Some("1");
    let version = ["VersionMajor", "VersionMinor", "VersionMicro"]
        .iter()
        .map(|k| summary_value(text, k).unwrap_or("?"))
        .collect::<Vec<_>>()
        .join(".");
    Ok(HplOutput {
        gflops: tflops * 1000.0,
        n: summary_num(text, "HPL_N")?,
        nb: summary_num(text, "HPL_NB")?,
        p: summary_num(text, "HPL_nprow")?,
        q: summary_num(text, "HPL_npcol")?,
        seconds: summary_num(text, "HPL_time")?,
        passed: success && residual_passed(section),
        processes: summary_num(text, "CommWorldProcs").ok(),
        program: format!("hpcc {version}"),
    })
}

/// Reads HPL's own result table (standalone `xhpl` output, also the HPL
/// section of hpcc's): the first `WR..` line after the `T/V` header
/// (`T/V N NB P Q Time Gflops`) and the residual check.
pub fn parse_hpl_table(text: &str) -> Result<HplOutput, ParseError> {
    // The table header, not the "T/V : Wall time" explanation above it.
    let mut lines = text.lines().skip_while(|l| {
        !l.split_whitespace()
            .take(3)
            .eq(["T/V", "N", "NB"].iter().copied())
    });
    let row = lines
        .find(|l| l.trim_start().starts_with('W'))
        .ok_or(ParseError::Missing(
            "result line (T/V N NB P Q Time Gflops)",
        ))?;
    let f: Vec<&str> = row.split_whitespace().collect();
    if f.len() < 7 {
        return Err(ParseError::Missing(
            "result line (T/V N NB P Q Time Gflops)",
        ));
    }
    let num =
        |i: usize, what: &'static str| f[i].parse::<f64>().map_err(|_| ParseError::Missing(what));
    let int =
        |i: usize, what: &'static str| f[i].parse::<u64>().map_err(|_| ParseError::Missing(what));
    let version = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("HPLinpack ")
                .and_then(|r| r.split_whitespace().next())
        })
        .unwrap_or("?");
    Ok(HplOutput {
        gflops: num(6, "Gflops")?,
        n: int(1, "N")?,
        nb: int(2, "NB")?,
        p: int(3, "P")?,
        q: int(4, "Q")?,
        seconds: num(5, "Time")?,
        passed: residual_passed(text),
        processes: None,
        program: format!("HPL {version}"),
    })
}

/// The BLAS library Debian's alternatives select (`openblas-serial`, `blas`
/// for the slow reference BLAS), which decides HPL's speed more than anything.
pub fn debian_blas() -> Option<String> {
    let dir = std::fs::read_dir("/etc/alternatives").ok()?;
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("libblas.so.3") {
            let target = std::fs::read_link(entry.path()).ok()?;
            return target
                .parent()
                .and_then(Path::file_name)
                .map(|d| d.to_string_lossy().into_owned());
        }
    }
    None
}

/// Where the processes run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    /// This machine only.
    Local,
    /// These hosts, each offering `slots` processes (`--host h1:4,h2:4`).
    List {
        /// Host names or addresses.
        hosts: Vec<String>,
        /// Processes per host.
        slots: usize,
    },
    /// An Open MPI hostfile (`--hostfile FILE`).
    File(PathBuf),
}

impl Hosts {
    /// Nodes in a hostfile's text: lines that are not blank or comments.
    pub fn count_in_hostfile(text: &str) -> usize {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .count()
    }
}

/// How to start HPL.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// `mpirun` (Open MPI's, which Debian's hpcc is built against).
    pub mpirun: PathBuf,
    /// The HPL program (`hpcc` or an `xhpl`).
    pub program: PathBuf,
    /// Which kind it is.
    pub kind: Program,
    /// Where the processes run.
    pub hosts: Hosts,
    /// Slots available in all (cores of all nodes): more processes need `--oversubscribe`.
    pub slots: usize,
    /// Extra arguments for mpirun (`--mca btl tcp,self`).
    pub extra_args: Vec<String>,
}

impl Launch {
    /// The mpirun arguments (after the mpirun program itself).
    pub fn args(&self, input: &HplInput) -> Vec<String> {
        let mut a = vec!["-np".to_string(), input.processes.to_string()];
        if input.processes > self.slots {
            a.push("--oversubscribe".into());
        }
        match &self.hosts {
            Hosts::Local => {}
            Hosts::List { hosts, slots } => {
                a.push("--host".into());
                a.push(
                    hosts
                        .iter()
                        .map(|h| format!("{h}:{slots}"))
                        .collect::<Vec<_>>()
                        .join(","),
                );
            }
            Hosts::File(f) => {
                a.push("--hostfile".into());
                a.push(f.display().to_string());
            }
        }
        a.extend(self.extra_args.iter().cloned());
        a.push(self.program.display().to_string());
        a
    }

    /// Environment for mpirun: Open MPI refuses to run as root without these.
    pub fn env(&self) -> Vec<(&'static str, &'static str)> {
        if is_root() {
            vec![
                ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
                ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
            ]
        } else {
            Vec::new()
        }
    }

    /// The whole command line, shell-quoted, with its environment, for `--dry-run`.
    pub fn command_line(&self, input: &HplInput) -> String {
        let mut words: Vec<String> = self.env().iter().map(|(k, v)| format!("{k}={v}")).collect();
        words.push(self.mpirun.display().to_string());
        words.extend(self.args(input));
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum HplError {
    /// mpirun or the HPL program is not installed.
    #[error(
        "{0} not found; install HPL and Open MPI: apt-get install hpcc openmpi-bin (and libopenblas0-serial for a fast BLAS)"
    )]
    NotInstalled(String),
    /// The run could not start or failed.
    #[error("{0}")]
    Failed(String),
    /// The output could not be read.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Finds `name` on `PATH` (or checks it, when it contains a slash).
pub fn which(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Runs HPL as `launch` says with `input`, in a fresh temporary directory, and
/// reads the result. mpirun's output is passed through to standard error.
pub fn run(input: &HplInput, launch: &Launch) -> Result<HplResult, HplError> {
    let mpirun = which(&launch.mpirun)
        .ok_or_else(|| HplError::NotInstalled(launch.mpirun.display().to_string()))?;
    let program = which(&launch.program)
        .ok_or_else(|| HplError::NotInstalled(launch.program.display().to_string()))?;
    let io = |context: &str| {
        let context = context.to_string();
        move |source| HplError::Io { context, source }
    };
    let dir = tempfile::Builder::new()
        .prefix("clustercrypt-hpl-")
        .tempdir()
        .map_err(io("cannot create a working directory"))?;
    std::fs::write(
        dir.path().join(launch.kind.input_file()),
        render_input(input, launch.kind),
    )
    .map_err(io("cannot write the HPL input file"))?;
    let mut resolved = launch.clone();
    resolved.program = program;
    let out = Command::new(&mpirun)
        .args(resolved.args(input))
        .envs(resolved.env())
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(io(&format!("cannot start {}", mpirun.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
        let tail = tail[tail.len().saturating_sub(15)..].join("\n");
        return Err(HplError::Failed(format!(
            "{} exited with {}:\n{tail}",
            mpirun.display(),
            out.status
        )));
    }
    let parsed = match launch.kind {
        Program::Hpcc => {
            let path = dir.path().join("hpccoutf.txt");
            let text = std::fs::read_to_string(&path).map_err(io("hpcc wrote no hpccoutf.txt"))?;
            parse_hpcc_output(&text)?
        }
        Program::Xhpl => parse_hpl_table(&stdout)?,
    };
    let program = match debian_blas() {
        Some(blas) => format!("{} ({blas})", parsed.program),
        None => parsed.program,
    };
    Ok(HplResult {
        gflops: parsed.gflops,
        n: parsed.n,
        nb: parsed.nb,
        p: parsed.p,
        q: parsed.q,
        processes: parsed.processes.unwrap_or((parsed.p * parsed.q) as usize),
        nodes: input.nodes,
        seconds: parsed.seconds,
        passed: parsed.passed,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_near_square_with_q_at_least_p() {
        for (n, p, q) in [
            (1, 1, 1),
            (2, 1, 2),
            (4, 2, 2),
            (6, 2, 3),
            (7, 1, 7),
            (8, 2, 4),
            (12, 3, 4),
            (16, 4, 4),
            (24, 4, 6),
            (80, 8, 10),
        ] {
            assert_eq!(grid(n), (p, q), "{n} processes");
        }
    }

    #[test]
    fn problem_size_is_a_multiple_of_nb_within_the_budget() {
        for mem in [1u64 << 30, 3 << 30, 24 << 30, 64 << 30] {
            for nb in [64, 128, 192, 256] {
                let n = problem_size(mem, 0.8, nb);
                assert_eq!(n % nb, 0);
                assert!((8 * n * n) as f64 <= 0.8 * mem as f64);
                let next = n + nb;
                assert!((8 * next * next) as f64 > 0.8 * mem as f64);
            }
        }
    }
}
