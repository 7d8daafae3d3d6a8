//! `clustercrypt serve` (encryption as a network service, docs/SERVICE.md) and
//! `clustercrypt token create` (access tokens for it).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use clustercrypt_service::tokens::{self, TokenStore};
use clustercrypt_service::{Auth, BenchSource, Limits, ServeConfig, ServiceError, TlsFiles};

use crate::error::CliError;
use crate::sizes::{parse_seconds, parse_size, parse_threads};

/// `clustercrypt serve`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
clustercrypt token create --tokens tokens.txt --name alice\n  \
clustercrypt serve --listen 127.0.0.1:8080 --tokens tokens.txt\n  \
clustercrypt serve --listen 0.0.0.0:8443 --tokens tokens.txt --tls-cert cert.pem --tls-key key.pem\n\
See docs/SERVICE.md for the API, the security model and curl examples.")]
pub struct ServeArgs {
    /// Address and port to listen on (port 0: any free port; the address is printed).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Token file (see `clustercrypt token create`); required unless --no-auth.
    #[arg(long, value_name = "FILE", required_unless_present = "no_auth")]
    pub tokens: Option<PathBuf>,

    /// Serve without tokens: anyone who can connect may use the service. Loopback only.
    #[arg(long, conflicts_with = "tokens")]
    pub no_auth: bool,

    /// HTTPS certificate chain (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// HTTPS private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Allow plain HTTP on an address other than loopback (passphrases and data in clear text).
    #[arg(long)]
    pub insecure: bool,

    /// Largest request body.
    #[arg(long, value_name = "SIZE", default_value = "16G", value_parser = parse_size)]
    pub max_body: usize,

    /// Requests processed at once (default: 2 x cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_concurrent: Option<u32>,

    /// Requests waiting for a slot; beyond that the server answers 503 busy.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub queue: u32,

    /// Drop a request whose body sends nothing this long.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    pub idle_timeout: f64,

    /// Largest Argon2 memory, KiB, that encryption parameters or a file being
    /// decrypted may make the server spend.
    #[arg(long, value_name = "KIB", default_value_t = 1 << 20,
          value_parser = clap::value_parser!(u32).range(64..=4_194_304))]
    pub max_kdf_memory: u32,

    /// Serve this report (`clustercrypt bench --format json`) at GET /v1/bench instead
    /// of measuring a short benchmark at start-up.
    #[arg(long, value_name = "FILE.json")]
    pub bench_results: Option<PathBuf>,

    /// Worker threads of each request: a number or 'all' (default).
    #[arg(long, value_name = "N|all", default_value = "all", value_parser = parse_threads)]
    pub threads: usize,

    /// Spread requests over the ranks of an MPI job (under `mpirun`; needs a build
    /// with `--features mpi`).
    #[arg(long)]
    pub cluster: bool,
}

/// `clustercrypt token`.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: TokenCommand,
}

/// `clustercrypt token` subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a new access token: printed once on stdout; only its hash goes into the file.
    Create(TokenCreateArgs),
    /// List the tokens of a file by name and creation time (the tokens themselves are not kept).
    List(TokenFileArgs),
    /// Revoke every token with this name; a running server refuses it from the next request.
    Revoke(TokenRevokeArgs),
}

/// `clustercrypt token revoke`.
#[derive(Debug, Args)]
pub struct TokenRevokeArgs {
    /// The token file.
    #[arg(long, value_name = "FILE")]
    pub tokens: PathBuf,

    /// The name of the token(s) to revoke.
    #[arg(long, value_name = "NAME")]
    pub name: String,
}

/// `clustercrypt token list`.
#[derive(Debug, Args)]
pub struct TokenFileArgs {
    /// The token file.
    #[arg(long, value_name = "FILE")]
    pub tokens: PathBuf,
}

/// `clustercrypt token create`.
#[derive(Debug, Args)]
pub struct TokenCreateArgs {
    /// The token file to append to (created with mode 0600).
    #[arg(long, value_name = "FILE")]
    pub tokens: PathBuf,

    /// A name for the token (letters, digits, '-', '_', '.', '@').
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub name: String,
}

fn service_error(e: ServiceError) -> CliError {
    if e.is_usage() {
        CliError::Usage(e.to_string())
    } else {
        CliError::Failed(anyhow::Error::new(e))
    }
}

/// The service configuration from the command line.
fn config(args: &ServeArgs) -> Result<ServeConfig, CliError> {
    let auth = match &args.tokens {
        Some(path) => {
            let store = TokenStore::load(path).map_err(|e| CliError::Usage(e.to_string()))?;
            if store.entries().is_empty() {
                return Err(CliError::Usage(format!(
                    "{} holds no token; add one with `clustercrypt token create --tokens {}`",
                    path.display(),
                    path.display()
                )));
            }
            Auth::Tokens(store)
        }
        None => Auth::None,
    };
    let mut limits = Limits {
        max_body: args.max_body as u64,
        queue: args.queue as usize,
        idle_timeout: Duration::from_secs_f64(args.idle_timeout),
        max_kdf_memory_kib: args.max_kdf_memory,
        ..Limits::default()
    };
    if let Some(n) = args.max_concurrent {
        limits.max_concurrent = n as usize;
    }
    let mut c = ServeConfig::new(args.listen, auth);
    c.tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        }),
        _ => None,
    };
    c.insecure = args.insecure;
    c.limits = limits;
    c.threads = args.threads;
    c.bench = match &args.bench_results {
        Some(path) => BenchSource::File(path.clone()),
        None => BenchSource::Measure,
    };
    c.validate().map_err(service_error)?;
    Ok(c)
}

/// Runs `serve` until SIGINT or SIGTERM.
pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let config = config(args)?;
    if args.cluster {
        return crate::cluster::serve(config);
    }
    clustercrypt_service::run_blocking(config).map_err(service_error)
}

/// Runs `token ...`.
pub fn token(args: &TokenArgs) -> Result<(), CliError> {
    match &args.command {
        TokenCommand::Create(a) => {
            let new = tokens::create(&a.tokens, &a.name).map_err(|e| match e {
                tokens::TokenError::Random(_) => CliError::Failed(anyhow::Error::new(e)),
                other => CliError::Usage(other.to_string()),
            })?;
            // The only time the token is shown; the file keeps its hash.
            println!("{}", new.secret.as_str());
            eprintln!(
                "clustercrypt: added token '{}' to {} (only its SHA-256 is stored; keep the \
                 token above, it is not shown again)",
                new.name,
                a.tokens.display()
            );
            Ok(())
        }
        TokenCommand::List(a) => {
            let store = TokenStore::load(&a.tokens).map_err(|e| CliError::Usage(e.to_string()))?;
            for e in store.entries() {
                println!("{}\t{}", e.name, e.created);
            }
            Ok(())
        }
        TokenCommand::Revoke(a) => {
            let n =
                tokens::revoke(&a.tokens, &a.name).map_err(|e| CliError::Usage(e.to_string()))?;
            if n == 0 {
                return Err(CliError::Usage(format!(
                    "{} holds no token named '{}'",
                    a.tokens.display(),
                    a.name
                )));
            }
            eprintln!(
                "clustercrypt: revoked {n} token(s) named '{}' in {}; a running server \
                 refuses them from its next request",
                a.name,
                a.tokens.display()
            );
            Ok(())
        }
    }
}
