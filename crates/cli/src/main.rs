//! `clustercrypt`: measure and use the cryptographic speed of small clusters.

mod bench;
mod cli;
mod cluster;
mod crypt;
mod error;
mod hpl;
mod import;
mod output;
mod power;
mod recommend;
mod remote;
mod report;
mod secrets;
mod serve;
mod shell;
mod sizes;
mod version;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The CPU mask is checked before anything reads it (`--version` does).
    if let Err(e) = clustercrypt_catalogue::cpu::mask_from_env() {
        return error::finish(Err(error::CliError::Usage(e.to_string())));
    }
    version::tell_libraries_the_mask();
    let cli = cli::parse();
    let result = match cli.command {
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Encrypt(args) => crypt::encrypt(&args),
        cli::Command::Decrypt(args) => crypt::decrypt(&args),
        cli::Command::Keygen(args) => crypt::keygen(&args),
        cli::Command::Ciphers(args) => bench::list_ciphers(&args),
        cli::Command::ImportCryptsetup(args) => import::run(&args),
        cli::Command::Recommend(args) => recommend::run(&args),
        cli::Command::Remote(args) => remote::run(&args),
        cli::Command::Serve(args) => serve::serve(&args),
        cli::Command::Token(args) => serve::token(&args),
        cli::Command::Report(args) => report::run(&args),
        cli::Command::Compare(args) => report::compare(&args),
        cli::Command::Hpl(args) => hpl::run(&args),
        cli::Command::Completions(args) => shell::completions(&args),
        cli::Command::Man => shell::man(),
    };
    error::finish(result)
}
