//! Shell completions and the man page, generated from the command line definition
//! so that they never drift from it. `scripts/package.sh` runs these once with the
//! host binary and puts the output in every architecture's package.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use clap_complete::Shell;

use crate::error::CliError;

/// `clustercrypt completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Prints the completion script for one shell.
pub fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut cmd = crate::cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "clustercrypt", &mut out);
    write_stdout(&out)
}

/// Prints the man page, clustercrypt(1), in roff.
pub fn man() -> Result<(), CliError> {
    // The plain version: the page is generated once, on the build host, whose CPU
    // features (in `--version`) say nothing about the node that reads it.
    let cmd =
        <crate::cli::Cli as clap::CommandFactory>::command().version(env!("CARGO_PKG_VERSION"));
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .context("rendering the man page")?;
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .context("writing to stdout")?;
    Ok(())
}
