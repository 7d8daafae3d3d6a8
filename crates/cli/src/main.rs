//! `clustercrypt`: measure and use the cryptographic speed of small clusters.

mod bench;
mod cli;
mod cluster;
mod crypt;
mod error;
mod output;
mod secrets;
mod sizes;
mod version;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::parse();
    let result = match cli.command {
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Encrypt(args) => crypt::encrypt(&args),
        cli::Command::Decrypt(args) => crypt::decrypt(&args),
        cli::Command::Keygen(args) => crypt::keygen(&args),
        cli::Command::Ciphers(args) => bench::list_ciphers(&args),
    };
    error::finish(result)
}
