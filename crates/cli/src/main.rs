//! `clustercrypt`: measure and use the cryptographic speed of small clusters.

mod bench;
mod cli;
mod error;
mod sizes;
mod version;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::parse();
    let result = match cli.command {
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Ciphers(args) => bench::list_ciphers(&args),
    };
    error::finish(result)
}
