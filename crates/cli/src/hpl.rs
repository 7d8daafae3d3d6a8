//! `clustercrypt hpl`: the real HPL benchmark (Debian's `hpcc`, or an `xhpl`)
//! under `mpirun`, on this machine or on the nodes of a cluster, with the input
//! chosen the way the Raspberry Pi cluster study tuned it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use clustercrypt_bench::export::Format;
use clustercrypt_bench::hpl::{self, Hosts, HplError, Launch, Overrides, Program};
use clustercrypt_bench::machine::Machine;
use clustercrypt_bench::report::{PowerReading, Report, Settings};

use crate::error::CliError;
use crate::power::PowerArgs;
use crate::sizes::{parse_size, parse_threads};

/// Options of `clustercrypt hpl`.
#[derive(Debug, Args)]
#[command(
    after_help = "By default: P x Q over all cores of all nodes, as near square as \
possible with Q >= P; N the largest multiple of NB whose matrix fills 80% of the nodes' \
memory (a long run: hpcc runs its whole suite around HPL). Examples:\n  \
clustercrypt hpl --dry-run\n  clustercrypt hpl --n 10000 --format json -o hpl.json\n  \
clustercrypt hpl --hosts node1,node2,node3 --cores 4 --memory 1G --watts 37.6 --cost 320"
)]
pub struct HplArgs {
    /// Problem size N (default: 80% of memory, see --memory-fraction).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub n: Option<u64>,

    /// Block size NB.
    #[arg(long, value_name = "NB", default_value_t = hpl::DEFAULT_NB,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub nb: u64,

    /// Process grid rows P (with --q).
    #[arg(long, value_name = "P", requires = "q", value_parser = clap::value_parser!(u64).range(1..))]
    pub p: Option<u64>,

    /// Process grid columns Q (with --p).
    #[arg(long, value_name = "Q", requires = "p", value_parser = clap::value_parser!(u64).range(1..))]
    pub q: Option<u64>,

    /// MPI processes in all (default: every core of every node).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub processes: Option<usize>,

    /// Share of the nodes' memory the matrix fills when N is not given.
    #[arg(long, value_name = "F", default_value_t = hpl::DEFAULT_MEMORY_FRACTION,
          value_parser = parse_fraction)]
    pub memory_fraction: f64,

    /// Cores per node (default: this machine's).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub cores: Option<usize>,

    /// Memory per node (default: this machine's), e.g. 1G.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<usize>,

    /// Run on these nodes (comma-separated; identical nodes assumed).
    #[arg(
        long,
        value_name = "H1,H2,..",
        value_delimiter = ',',
        conflicts_with = "hostfile"
    )]
    pub hosts: Vec<String>,

    /// Run on the nodes of an Open MPI hostfile (one node per line).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,

    /// The mpirun to use (default: mpirun.openmpi, which Debian's hpcc is built
    /// against, else mpirun).
    #[arg(long, value_name = "PATH")]
    pub mpirun: Option<PathBuf>,

    /// The HPL program: hpcc (default) or an xhpl.
    #[arg(long, value_name = "PATH", default_value = "hpcc")]
    pub program: PathBuf,

    /// An extra argument for mpirun (e.g. --mpi-arg=--mca --mpi-arg=btl
    /// --mpi-arg=tcp,self); may be repeated.
    #[arg(long = "mpi-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub mpi_args: Vec<String>,

    /// Print the input file and the mpirun command, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = ["text", "json", "csv", "markdown"])]
    pub format: String,

    /// Write the results to FILE ('-' for standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub power: PowerArgs,
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!("'{text}' is not a fraction above 0 and at most 1")),
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn not_installed(what: &Path) -> CliError {
    CliError::Usage(HplError::NotInstalled(what.display().to_string()).to_string())
}

/// Runs `clustercrypt hpl`.
pub fn run(args: &HplArgs) -> Result<(), CliError> {
    let machine = Machine::detect();
    let (hosts, nodes) = if !args.hosts.is_empty() {
        if args.hosts.iter().any(|h| h.trim().is_empty()) {
            return Err(CliError::Usage("--hosts has an empty host name".into()));
        }
        (
            Hosts::List {
                hosts: args.hosts.clone(),
                slots: args.cores.unwrap_or(machine.cores),
            },
            args.hosts.len(),
        )
    } else if let Some(f) = &args.hostfile {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", f.display())))?;
        let n = Hosts::count_in_hostfile(&text);
        if n == 0 {
            return Err(CliError::Usage(format!("{} names no host", f.display())));
        }
        (Hosts::File(f.clone()), n)
    } else {
        (Hosts::Local, 1)
    };
    let cores = args.cores.unwrap_or(machine.cores);
    let memory = args.memory.map_or(machine.memory_bytes, |m| m as u64);
    let overrides = Overrides {
        n: args.n,
        nb: Some(args.nb),
        p: args.p,
        q: args.q,
        processes: args.processes,
        memory_fraction: Some(args.memory_fraction),
    };
    let input =
        hpl::plan(cores, memory, nodes, &overrides).map_err(|e| CliError::Usage(e.to_string()))?;
    let mpirun = args.mpirun.clone().unwrap_or_else(|| {
        if hpl::which("mpirun.openmpi".as_ref()).is_some() {
            PathBuf::from("mpirun.openmpi")
        } else {
            PathBuf::from("mpirun")
        }
    });
    let launch = Launch {
        mpirun,
        program: args.program.clone(),
        kind: Program::from_path(&args.program),
        hosts,
        slots: cores * nodes,
        extra_args: args.mpi_args.clone(),
    };
    let gib = input.matrix_bytes() as f64 / (1u64 << 30) as f64;
    if args.dry_run {
        let text = format!(
            "# {} for N={} NB={} P={} Q={}: a {gib:.2} GiB matrix over {} node(s)\n{}# run in the directory of that file:\n{}\n",
            launch.kind.input_file(),
            input.n,
            input.nb,
            input.p,
            input.q,
            nodes,
            hpl::render_input(&input, launch.kind),
            launch.command_line(&input)
        );
        crate::bench::write_output(args.output.as_deref(), &text)?;
        return Ok(());
    }
    for program in [&launch.mpirun, &launch.program] {
        if hpl::which(program).is_none() {
            return Err(not_installed(program));
        }
    }
    let format = Format::from_name(&args.format).expect("clap checked the format");
    let source = args.power.source(true)?;
    // Ctrl-C reaches mpirun too; wait for it to stop so the working directory
    // is cleaned up, then report the interruption.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    eprintln!(
        "clustercrypt: HPL with N={} NB={} P={} Q={} ({} processes, {gib:.2} GiB matrix){}",
        input.n,
        input.nb,
        input.p,
        input.q,
        input.processes,
        if launch.kind == Program::Hpcc {
            "; hpcc runs its whole suite around HPL, which takes longer than HPL alone"
        } else {
            ""
        }
    );
    let session = source
        .as_ref()
        .map(|s| s.start())
        .transpose()
        .map_err(|e| CliError::Failed(e.into()))?;
    let result = hpl::run(&input, &launch);
    let watts = session.map(|s| s.finish()).transpose();
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(CliError::Interrupted);
    }
    let result = result.map_err(|e| match e {
        HplError::NotInstalled(_) => CliError::Usage(e.to_string()),
        other => CliError::Failed(other.into()),
    })?;
    let watts = watts.map_err(|e| CliError::Failed(e.into()))?;
    let mut report = Report::empty(
        machine,
        Settings {
            min_time_s: 0.0,
            buffer_size: 0,
            request_size: 0,
            runs: 1,
            threads: input.processes,
        },
    );
    if let (Some(w), Some(s)) = (watts, &source) {
        report.power.push(PowerReading {
            workload: format!("hpl N={} on {} node(s)", result.n, result.nodes),
            watts: w,
            source: s.kind(),
            mib_s: None,
            gflops: Some(result.gflops),
            cost_usd: args.power.cost,
        });
    }
    let passed = result.passed;
    report.hpl.push(result);
    crate::bench::write_output(args.output.as_deref(), &format.render(&report))?;
    if !passed {
        return Err(CliError::Failed(anyhow::anyhow!(
            "HPL's residual check failed: the result is not valid"
        )));
    }
    Ok(())
}
