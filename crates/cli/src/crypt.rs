//! `clustercrypt encrypt`, `decrypt` and `keygen`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};
use clustercrypt_catalogue::CipherSpec;
use clustercrypt_engine::format::{DEFAULT_CHUNK_SIZE, Kdf, Suite};
use clustercrypt_engine::raw::{self, Padding, RawParams};
use clustercrypt_engine::stream::{self, EncryptOptions};
use clustercrypt_engine::{EngineError, MasterKey};
use indicatif::{ProgressBar, ProgressStyle};
use zeroize::Zeroizing;

use crate::error::CliError;
use crate::output::{Sink, open_input};
use crate::secrets::{KeyArgs, hex_from, key_source};
use crate::sizes::{parse_size, parse_threads};

/// Options of `encrypt` and `decrypt`.
#[derive(Debug, Args)]
pub struct CryptArgs {
    /// The input file ('-' for standard input).
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The output file ('-' for standard output). Written only when everything verified.
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,

    #[command(flatten)]
    pub key: KeyArgs,

    /// Worker threads: a number or 'all' (default).
    #[arg(long, value_name = "N|all", default_value = "all", value_parser = parse_threads)]
    pub threads: usize,

    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,

    /// Do not draw a progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Spread the chunks over the ranks of an MPI job (run under `mpirun`, one
    /// rank per node; rank 0 reads and writes). Needs a build with `--features mpi`.
    #[arg(long)]
    pub cluster: bool,

    /// With --cluster: print the measured node and link speeds, the predicted times
    /// of a local and a distributed run, and which nodes are used and why (the
    /// measured time against the prediction is printed after every cluster run).
    #[arg(long, requires = "cluster")]
    pub explain: bool,

    #[command(flatten)]
    pub raw: RawArgs,
}

/// Options of `encrypt` only.
#[derive(Debug, Args)]
pub struct EncryptArgs {
    #[command(flatten)]
    pub common: CryptArgs,

    /// Cipher suite: aes-256-gcm, chacha20-poly1305, aes-256-ctr-hmac-sha256,
    /// twofish-256-ctr-hmac-sha256, serpent-256-ctr-hmac-sha256 (default: AES-256-GCM
    /// when the CPU has AES instructions, ChaCha20-Poly1305 when it has not).
    #[arg(long, value_name = "NAME", value_parser = parse_suite)]
    pub suite: Option<Suite>,

    /// Plaintext bytes per chunk.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub chunk_size: usize,

    /// Argon2id memory cost for passphrases, in KiB.
    #[arg(long, value_name = "KIB", default_value_t = 65536,
          value_parser = clap::value_parser!(u32).range(64..=4_194_304))]
    pub kdf_memory: u32,

    /// Argon2id passes for passphrases.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub kdf_iterations: u32,

    /// Argon2id lanes for passphrases.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub kdf_parallel: u32,
}

/// Legacy raw mode options.
#[derive(Debug, Args)]
pub struct RawArgs {
    /// Legacy raw mode: the bare cipher with an explicit key and IV, as `openssl enc
    /// -K .. -iv .. -nosalt` produces it. UNAUTHENTICATED: changes go undetected.
    #[arg(long, requires = "cipher")]
    pub raw: bool,

    /// Raw mode cipher as the catalogue names it: aes-cbc, des3_ede-ecb, tea-ctr,
    /// chacha20, rc4, ... The key length sets the key size.
    #[arg(long, value_name = "SPEC", requires = "raw")]
    pub cipher: Option<String>,

    /// Raw mode: read the key (hexadecimal) from FILE.
    #[arg(
        long,
        value_name = "FILE",
        requires = "raw",
        conflicts_with = "key_env"
    )]
    pub key_hex_file: Option<PathBuf>,

    /// Raw mode: read the key (hexadecimal) from the environment variable VAR.
    #[arg(long, value_name = "VAR", requires = "raw")]
    pub key_env: Option<String>,

    /// Raw mode: the IV in hexadecimal (not secret).
    #[arg(long, value_name = "HEX", requires = "raw", conflicts_with_all = ["iv_file", "iv_env"])]
    pub iv: Option<String>,

    /// Raw mode: read the IV (hexadecimal) from FILE.
    #[arg(long, value_name = "FILE", requires = "raw", conflicts_with = "iv_env")]
    pub iv_file: Option<PathBuf>,

    /// Raw mode: read the IV (hexadecimal) from the environment variable VAR.
    #[arg(long, value_name = "VAR", requires = "raw")]
    pub iv_env: Option<String>,

    /// Raw mode: padding of the last block (ECB and CBC; default pkcs7 there, none otherwise).
    #[arg(long, value_enum, requires = "raw")]
    pub padding: Option<PaddingArg>,

    /// Raw mode: apply the block cipher R times to each block (TEA and XTEA; the TEA
    /// study's knob to make the work heavier).
    #[arg(long, value_name = "R", default_value_t = 1, requires = "raw",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rounds: u32,
}

/// Padding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PaddingArg {
    /// PKCS#7.
    Pkcs7,
    /// None: the input must be whole blocks.
    None,
}

fn parse_suite(name: &str) -> Result<Suite, String> {
    Suite::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Suite::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown suite '{name}' (known: {}; 64-bit-block ciphers are not offered: \
             after a few GiB per key their blocks repeat, the Sweet32 birthday bound)",
            names.join(", ")
        )
    })
}

/// `keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where to write the key (created with mode 0600).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
}

struct Bar(Option<ProgressBar>);

impl Bar {
    fn new(total: Option<u64>, quiet: bool) -> Bar {
        if quiet || !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let bar = match total {
            Some(t) => ProgressBar::new(t),
            None => ProgressBar::no_length(),
        };
        let template = if total.is_some() {
            "[{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}"
        } else {
            "{spinner} {bytes} {binary_bytes_per_sec} {elapsed}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar(Some(bar))
    }

    fn set(&self, bytes: u64) {
        if let Some(b) = &self.0 {
            b.set_position(bytes.min(b.length().unwrap_or(u64::MAX)));
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

fn engine_error(e: EngineError) -> CliError {
    match e {
        EngineError::Input(m) => CliError::Usage(m),
        other => CliError::Failed(anyhow::Error::new(other)),
    }
}

pub(crate) fn raw_params(args: &CryptArgs, chunk_size: usize) -> Result<RawParams, CliError> {
    raw_params_from(&args.raw, chunk_size, args.threads)
}

/// The raw-mode parameters from the options, checked before any work starts.
pub(crate) fn raw_params_from(
    r: &RawArgs,
    chunk_size: usize,
    threads: usize,
) -> Result<RawParams, CliError> {
    let name = r
        .cipher
        .as_deref()
        .expect("clap requires --cipher with --raw");
    let key =
        hex_from(r.key_hex_file.as_deref(), r.key_env.as_deref(), "key")?.ok_or_else(|| {
            CliError::Usage("raw mode needs a key: --key-hex-file FILE or --key-env VAR".into())
        })?;
    let spec =
        CipherSpec::parse(name, Some(key.len() * 8)).map_err(|e| CliError::Usage(e.to_string()))?;
    let iv = match &r.iv {
        Some(text) => hex_from_text(text)?,
        None => hex_from(r.iv_file.as_deref(), r.iv_env.as_deref(), "IV")?
            .map(|v| v.to_vec())
            .unwrap_or_default(),
    };
    let padding = match r.padding {
        Some(PaddingArg::Pkcs7) => Padding::Pkcs7,
        Some(PaddingArg::None) => Padding::None,
        None => raw::default_padding(spec.mode),
    };
    let params = RawParams {
        spec,
        key,
        iv,
        padding,
        repeats: r.rounds,
        chunk_size,
        threads,
    };
    raw::check(&params).map_err(engine_error)?;
    Ok(params)
}

fn hex_from_text(text: &str) -> Result<Vec<u8>, CliError> {
    hex::decode(text.trim())
        .map_err(|_| CliError::Usage("the IV must be hexadecimal digits".into()))
}

pub(crate) fn warn_raw(params: &RawParams, encrypt: bool) {
    eprintln!(
        "clustercrypt: warning: raw mode is unauthenticated: changes to the data go undetected{}",
        params
            .spec
            .insecurity()
            .map(|r| format!("; {r}"))
            .unwrap_or_default()
    );
    if raw::is_sequential(&params.spec, encrypt) {
        eprintln!(
            "clustercrypt: note: {} {} is sequential by nature and runs on one thread",
            params.spec.label(),
            if encrypt { "encryption" } else { "decryption" }
        );
    }
}

/// Runs `encrypt`.
pub fn encrypt(args: &EncryptArgs) -> Result<(), CliError> {
    let c = &args.common;
    if c.raw.raw {
        if args.suite.is_some() {
            return Err(CliError::Usage(
                "--suite is for the authenticated format, not --raw".into(),
            ));
        }
        let params = raw_params(c, args.chunk_size)?;
        if c.cluster {
            return crate::cluster::raw(c, &params, true);
        }
        warn_raw(&params, true);
        return run(c, |input, out, progress| {
            raw::raw_encrypt(input, out, &params, progress)
        });
    }
    let options = EncryptOptions {
        suite: args.suite.unwrap_or_else(Suite::default_for_cpu),
        chunk_size: args.chunk_size,
        threads: c.threads,
        argon2: Kdf::Argon2id {
            memory_kib: args.kdf_memory,
            iterations: args.kdf_iterations,
            parallel: args.kdf_parallel,
        },
    };
    stream::check_options(&options).map_err(engine_error)?;
    if args.kdf_memory < 8 * args.kdf_parallel {
        return Err(CliError::Usage(
            "--kdf-memory must be at least 8 KiB per lane".into(),
        ));
    }
    if c.cluster {
        return crate::cluster::encrypt(c, &options);
    }
    let key = key_source(&c.key, true)?;
    run(c, |input, out, progress| {
        stream::encrypt(input, out, &key, &options, progress)
    })
}

/// Runs `decrypt`.
pub fn decrypt(args: &CryptArgs) -> Result<(), CliError> {
    if args.raw.raw {
        let params = raw_params(args, DEFAULT_CHUNK_SIZE)?;
        if args.cluster {
            return crate::cluster::raw(args, &params, false);
        }
        warn_raw(&params, false);
        return run(args, |input, out, progress| {
            raw::raw_decrypt(input, out, &params, progress)
        });
    }
    if args.cluster {
        return crate::cluster::decrypt(args);
    }
    let key = key_source(&args.key, false)?;
    run(args, |input, out, progress| {
        stream::decrypt(input, out, &key, args.threads, progress)
    })
}

/// Opens input and output, runs `job`, and commits the output only on success.
pub(crate) fn run(
    args: &CryptArgs,
    job: impl FnOnce(
        &mut (dyn std::io::Read + Send),
        &mut dyn Write,
        &(dyn Fn(u64) + Sync),
    ) -> Result<clustercrypt_engine::Totals, EngineError>,
) -> Result<(), CliError> {
    let (mut input, size) = open_input(&args.input)?;
    crate::output::install_interrupt_cleanup();
    let mut sink = Sink::open(&args.output, &args.input, args.force)?;
    let bar = Bar::new(size, args.quiet);
    let progress = |bytes: u64| bar.set(bytes);
    let result = job(&mut *input, sink.writer(), &progress);
    drop(bar);
    match result {
        // Found while working on the data: exit 1. Dropping `sink` removes the
        // temporary file.
        Err(e) => Err(CliError::Failed(anyhow::Error::new(e))),
        Ok(_) => sink.commit().map_err(CliError::Failed),
    }
}

/// Runs `keygen`.
pub fn keygen(args: &KeygenArgs) -> Result<(), CliError> {
    if args.output == Path::new("-") {
        return Err(CliError::Usage(
            "keygen writes keys to files only, never to the terminal: give -o FILE".into(),
        ));
    }
    let key = MasterKey::generate().map_err(engine_error)?;
    let mut text = Zeroizing::new(key.to_hex().to_string());
    text.push('\n');
    // The temporary file is created with mode 0600 and renamed into place.
    let mut sink = Sink::open(&args.output, Path::new("-"), args.force)?;
    sink.writer()
        .write_all(text.as_bytes())
        .map_err(|e| CliError::Failed(e.into()))?;
    sink.commit().map_err(CliError::Failed)?;
    eprintln!(
        "clustercrypt: wrote a new 256-bit key to {}",
        args.output.display()
    );
    Ok(())
}
