//! The command line.

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::sizes::{parse_passes, parse_seconds, parse_size, parse_threads};
use crate::version;

/// Measure and use the cryptographic speed of your machines and clusters.
#[derive(Debug, Parser)]
#[command(name = "clustercrypt", max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark ciphers and KDFs in user space (a `cryptsetup benchmark` for every cipher).
    Bench(BenchArgs),
    /// List the cipher catalogue: algorithms, modes, key sizes, and which are insecure.
    Ciphers(CiphersArgs),
    /// The fastest secure cipher here for disk (LUKS) and file encryption, and why.
    Recommend(crate::recommend::RecommendArgs),
    /// Read a `cryptsetup benchmark` listing (any version) into the result format.
    ImportCryptsetup(crate::import::ImportArgs),
    /// Set this machine's results next to published figures, with ratios.
    Compare(crate::report::CompareArgs),
    /// Draw saved results (and the studies' published figures) as figures, tables and one HTML page.
    Report(crate::report::ReportArgs),
    /// Run the HPL benchmark (hpcc or xhpl under mpirun), with the input chosen as
    /// the Raspberry Pi cluster study did, and report GFLOPS.
    Hpl(crate::hpl::HplArgs),
    /// Encrypt a file in parallel into the authenticated chunked format (or --raw legacy modes).
    Encrypt(crate::crypt::EncryptArgs),
    /// Decrypt a file; nothing is written unless every chunk verifies.
    Decrypt(crate::crypt::CryptArgs),
    /// Write a new random 256-bit key file (mode 0600).
    Keygen(crate::crypt::KeygenArgs),
    /// Serve encryption over HTTP(S): API, web page, metrics (docs/SERVICE.md).
    Serve(crate::serve::ServeArgs),
    /// Access tokens for `clustercrypt serve`.
    Token(crate::serve::TokenArgs),
    /// Encrypt or decrypt a file on a clustercrypt server (`clustercrypt serve`).
    Remote(crate::remote::RemoteArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to stdout.
    #[command(
        after_help = "Example:\n  clustercrypt completions bash > /etc/bash_completion.d/clustercrypt"
    )]
    Completions(crate::shell::CompletionsArgs),
    /// Print the man page (roff) to stdout; the packages install it as clustercrypt(1).
    #[command(hide = true)]
    Man,
}

/// `clustercrypt bench`.
#[derive(Debug, Args)]
#[command(
    after_help = "With no options, prints exactly the table and KDF lines of \
`cryptsetup benchmark`. Examples:\n  clustercrypt bench\n  clustercrypt bench --all --threads all --format json -o results.json\n  clustercrypt bench --cipher aes-xts-plain64 --key-size 512 --runs 10\n  clustercrypt bench --pbkdf argon2id --iter-time 1000"
)]
pub struct BenchArgs {
    /// Measure every row of the catalogue (all ciphers, modes and key sizes) and the KDFs.
    #[arg(long, conflicts_with_all = ["cipher", "pbkdf"])]
    pub all: bool,

    /// Measure this cipher only, as cryptsetup spells it (aes-xts-plain64,
    /// twofish-cbc-essiv:sha256, chacha20, aes-gcm); may be repeated.
    #[arg(short = 'c', long, value_name = "SPEC")]
    pub cipher: Vec<String>,

    /// Key size in bits as cryptsetup counts it (XTS: both keys, e.g. 512 for AES-256).
    #[arg(short = 's', long, value_name = "BITS", requires = "cipher")]
    pub key_size: Option<usize>,

    /// Measure this KDF only: pbkdf2 (with --hash), argon2i, argon2id.
    #[arg(long, value_name = "NAME")]
    pub pbkdf: Option<String>,

    /// Hash for PBKDF2: sha1, sha256, sha512, ripemd160, whirlpool.
    #[arg(long, value_name = "HASH", requires = "pbkdf")]
    pub hash: Option<String>,

    /// Argon2 target time in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub iter_time: u64,

    /// Argon2 memory cap in KiB (default: 1 GiB, at most half of physical memory).
    #[arg(long, value_name = "KIB", value_parser = clap::value_parser!(u32).range(32..))]
    pub pbkdf_memory: Option<u32>,

    /// Argon2 threads (default: the number of CPUs, at most 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub pbkdf_parallel: Option<u32>,

    /// Skip the KDF lines.
    #[arg(long)]
    pub no_kdf: bool,

    /// Minimum seconds of encryption, and of decryption, per row.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds)]
    pub time: f64,

    /// Bytes per pass over the buffer.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub buffer_size: usize,

    /// Bytes per request; each request has its own IV.
    #[arg(long, value_name = "SIZE", default_value = "64K", value_parser = parse_size)]
    pub request_size: usize,

    /// Exactly N passes over the buffer per direction (or ENC,DEC passes)
    /// instead of --time: a fixed amount of work for counting instructions
    /// (scripts/arm_count.py); the MiB/s figures still come from the clock.
    #[arg(long, value_name = "N|ENC,DEC", value_parser = parse_passes)]
    pub passes: Option<[u32; 2]>,

    /// Repeat each row N times and report mean, median, min, max and standard deviation.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Workers per row, each on its own buffer at the same time: a number or 'all'.
    #[arg(long, value_name = "N|all", default_value = "1", value_parser = parse_threads)]
    pub threads: usize,

    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = ["text", "json", "csv", "markdown"])]
    pub format: String,

    /// Write the results to FILE ('-' for standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Measure on every rank of an MPI job at once (under `mpirun`, one rank per
    /// node): one row per node and the cluster aggregate. Needs `--features mpi`.
    #[arg(long)]
    pub cluster: bool,

    /// With --cluster: also the aggregate on 1, 2, ... N nodes (throughput against nodes).
    #[arg(long, requires = "cluster")]
    pub sweep: bool,

    /// The file-size study (seed 002): encrypt and decrypt real files of these
    /// sizes (e.g. 1M,8M,32M; 'study' for 1M,2M,...,128M) in ECB, CBC and the
    /// stream ciphers, with wall seconds, CPU use and peak memory.
    #[arg(long, value_name = "SIZES", value_parser = crate::bench::parse_file_sizes,
          conflicts_with_all = ["all", "pbkdf", "cluster"])]
    pub files: Option<crate::bench::FileSizes>,

    /// With --files: create the files under DIR (default: the system's temporary directory).
    #[arg(long, value_name = "DIR", requires = "files")]
    pub files_dir: Option<PathBuf>,

    #[command(flatten)]
    pub power: crate::power::PowerArgs,
}

/// `clustercrypt ciphers`.
#[derive(Debug, Args)]
pub struct CiphersArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The command line definition, with the version line naming the CPU features.
pub fn command() -> clap::Command {
    Cli::command()
        .version(version::short_version())
        .long_version(version::long_version())
}

/// Parses the command line.
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
