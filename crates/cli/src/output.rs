//! Writing results safely, for every command that writes a file: the data goes
//! into an [`OutputFile`] (an unnamed `O_TMPFILE` file on Linux, a named
//! `.clustercrypt-PID-HOST-RANDOM.partial` elsewhere) that gets its name only
//! when everything succeeded and verified; never over the input; never over an
//! existing file without `--force`. `-` is standard output. Before it writes into
//! a directory, a run removes the partial files that killed runs left there.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clustercrypt_engine::output::{Existing, OutputFile, sweep_stale};

use crate::error::CliError;

/// The named temporary file in progress (if any), removed if the process is
/// interrupted.
static IN_PROGRESS: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Removes the temporary output on Ctrl-C or SIGTERM, then exits with 130:
/// an interrupted run leaves nothing behind, not even verified plaintext.
pub fn install_interrupt_cleanup() {
    let _ = ctrlc::set_handler(|| {
        if let Ok(guard) = IN_PROGRESS.lock()
            && let Some(path) = guard.as_ref()
        {
            let _ = std::fs::remove_file(path);
        }
        std::process::exit(crate::error::EXIT_INTERRUPTED.into());
    });
}

/// Where the result goes.
pub enum Sink {
    /// Standard output.
    Stdout(BufWriter<std::io::Stdout>),
    /// A file that appears as `target` only on [`Sink::commit`].
    File {
        /// The data so far.
        tmp: BufWriter<OutputFile>,
        /// The final path.
        target: PathBuf,
        /// Give the committed file mode 0644 instead of 0600.
        public: bool,
    },
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

impl Sink {
    /// Opens the output `out` for a run reading `input` (`-` for stdin/stdout).
    pub fn open(out: &Path, input: &Path, force: bool) -> Result<Sink, CliError> {
        if out == Path::new("-") {
            return Ok(Sink::Stdout(BufWriter::with_capacity(
                1 << 20,
                std::io::stdout(),
            )));
        }
        if input != Path::new("-") && (out == input || same_file(out, input)) {
            return Err(CliError::Usage(format!(
                "the output {} is the input; choose another output path",
                out.display()
            )));
        }
        if out.exists() && !force {
            return Err(CliError::Usage(format!(
                "{} already exists; use --force to overwrite it",
                out.display()
            )));
        }
        if out.is_dir() {
            return Err(CliError::Usage(format!("{} is a directory", out.display())));
        }
        let existing = if force {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        let tmp = OutputFile::create(out, existing).map_err(|e| {
            CliError::Usage(format!(
                "cannot create a file in the directory of {}: {e}",
                out.display()
            ))
        })?;
        *IN_PROGRESS.lock().expect("lock") = tmp.partial_path();
        // Commands with a Ctrl-C handler of their own keep it (a second one
        // cannot be installed); they finish or drop the output themselves.
        install_interrupt_cleanup();
        sweep(out);
        Ok(Sink::File {
            tmp: BufWriter::with_capacity(1 << 20, tmp),
            target: out.to_path_buf(),
            public: false,
        })
    }

    /// Marks the output as not secret (reports, benchmark results): it is
    /// committed readable by everyone (0644) rather than by the owner only.
    pub fn public(mut self) -> Sink {
        if let Sink::File { public, .. } = &mut self {
            *public = true;
        }
        self
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Stdout(w) => w,
            Sink::File { tmp, .. } => tmp,
        }
    }

    /// Makes the output visible: flushes stdout, or renames the temporary file.
    pub fn commit(self) -> anyhow::Result<()> {
        match self {
            Sink::Stdout(mut w) => Ok(w.flush()?),
            Sink::File {
                tmp,
                target,
                public,
            } => {
                let mut tmp = tmp.into_inner().map_err(|e| e.into_error())?;
                if public {
                    tmp.set_mode(0o644);
                }
                let done = tmp
                    .commit()
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", target.display()));
                *IN_PROGRESS.lock().expect("lock") = None;
                done
            }
        }
    }
}

/// Removes what killed runs left in the directory of `out`, and says so: the
/// partial file may hold plaintext the user wants to know was there.
fn sweep(out: &Path) {
    match sweep_stale(out) {
        Ok(swept) => {
            for s in swept {
                eprintln!(
                    "clustercrypt: removed {}, a partial output left by an interrupted run \
                     (process {}, no longer running)",
                    s.path.display(),
                    s.pid
                );
            }
        }
        Err(e) => eprintln!(
            "clustercrypt: warning: cannot look for partial outputs of interrupted runs \
             beside {}: {e}",
            out.display()
        ),
    }
}

/// Opens the input (`-` for standard input) and returns its size when known.
pub fn open_input(path: &Path) -> Result<(Box<dyn std::io::Read + Send>, Option<u64>), CliError> {
    if path == Path::new("-") {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let f = File::open(path)
        .map_err(|e| CliError::Usage(format!("cannot open {}: {e}", path.display())))?;
    let meta = f
        .metadata()
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    if meta.is_dir() {
        return Err(CliError::Usage(format!(
            "{} is a directory",
            path.display()
        )));
    }
    Ok((Box::new(f), Some(meta.len())))
}
