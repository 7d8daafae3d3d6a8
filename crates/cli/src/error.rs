//! Errors of the binary and the exit codes they map to.
//!
//! Exit codes: 0 success; 1 the work failed; 2 bad usage (checked before any
//! work starts); 130 interrupted by Ctrl-C (what was measured is still printed).
//! A broken pipe on stdout counts as success, as in ripgrep.

use std::process::ExitCode;

/// Exit code for bad usage.
pub const EXIT_USAGE: u8 = 2;
/// Exit code after Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// What went wrong, and so which exit code.
#[derive(Debug)]
pub enum CliError {
    /// The command line asks for something impossible.
    Usage(String),
    /// The work failed.
    Failed(anyhow::Error),
    /// Interrupted; partial output was already written.
    Interrupted,
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Failed(e)
    }
}

/// Prints the error and converts it into the process exit code.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => {
            eprintln!("clustercrypt: error: {msg}");
            eprintln!("Try 'clustercrypt --help' for usage.");
            ExitCode::from(EXIT_USAGE)
        }
        Err(CliError::Failed(e)) => {
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("clustercrypt: error: {e:#}");
            ExitCode::FAILURE
        }
        Err(CliError::Interrupted) => {
            eprintln!("clustercrypt: interrupted");
            ExitCode::from(EXIT_INTERRUPTED)
        }
    }
}
