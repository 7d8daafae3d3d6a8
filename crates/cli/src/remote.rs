//! `clustercrypt remote encrypt|decrypt`: the same work done by a clustercrypt
//! server (`clustercrypt serve`, API in docs/SERVICE.md).
//!
//! The input is uploaded while the answer is downloaded: the server encrypts
//! and decrypts as a stream, so a client that sent the whole body before
//! reading would stall both sides once the socket buffers fill. The answer goes
//! to a temporary file that becomes OUT only when the server's response
//! arrived complete with status 200.

use std::io::{IsTerminal, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use clap::{Args, Subcommand};
use clustercrypt_engine::format::{
    DEFAULT_CHUNK_SIZE, HEADER_LEN, MAGIC, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE, Suite,
};
use clustercrypt_engine::pipeline;
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};
use zeroize::Zeroizing;

use crate::crypt::{PaddingArg, RawArgs};
use crate::error::CliError;
use crate::output::{Sink, open_input};
use crate::secrets::{KeyArgs, KeyMaterial, key_material};
use crate::sizes::parse_size;

/// Bytes per upload piece: large enough to keep syscalls rare, small enough
/// that the pieces in flight (see [`PIECES_IN_FLIGHT`]) stay a few MiB.
const PIECE: usize = 256 << 10;
/// Upload pieces read ahead of the network.
const PIECES_IN_FLIGHT: usize = 4;
/// The most of an error body that is read (the server's JSON is a line).
const MAX_ERROR_BODY: usize = 64 << 10;

/// `clustercrypt remote`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
clustercrypt token create --tokens tokens.txt > my.token   # on the server\n  \
clustercrypt remote encrypt --server https://node1:8443 --token-file my.token \\\n      \
--passphrase-file pass.txt --ca-cert server.pem report.pdf -o report.pdf.ccrypt\n  \
clustercrypt remote decrypt --server http://127.0.0.1:8080 --token-file my.token \\\n      \
--key-file key.hex report.pdf.ccrypt -o report.pdf")]
pub struct RemoteArgs {
    /// Encrypt or decrypt.
    #[command(subcommand)]
    pub op: RemoteOp,
}

/// What the server should do.
#[derive(Debug, Subcommand)]
pub enum RemoteOp {
    /// Encrypt IN on the server into the authenticated chunked format (or --raw legacy modes).
    Encrypt(RemoteEncryptArgs),
    /// Decrypt IN on the server; OUT is written only when the whole answer arrived intact.
    Decrypt(RemoteCryptArgs),
}

/// Options of `remote encrypt` and `remote decrypt`.
#[derive(Debug, Args)]
pub struct RemoteCryptArgs {
    /// The input file ('-' for standard input).
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The output file ('-' for standard output, which gets the data as it arrives).
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,

    /// The server: http(s)://HOST:PORT, optionally with a path prefix.
    #[arg(long, value_name = "URL")]
    pub server: String,

    /// Read the access token (from `clustercrypt token create`) from the first line of FILE.
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,

    #[command(flatten)]
    pub key: KeyArgs,

    /// Trust only this CA certificate (PEM) for an https:// server, e.g. its self-signed one.
    #[arg(long, value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,

    /// Allow http:// to a host that is not this machine: the token, the key and the
    /// data then cross the network in clear.
    #[arg(long)]
    pub insecure: bool,

    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,

    /// Do not draw a progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    #[command(flatten)]
    pub raw: RawArgs,
}

/// Options of `remote encrypt` only; unset ones take the server's defaults.
#[derive(Debug, Args)]
pub struct RemoteEncryptArgs {
    #[command(flatten)]
    pub common: RemoteCryptArgs,

    /// Cipher suite: aes-256-gcm, chacha20-poly1305, aes-256-ctr-hmac-sha256,
    /// twofish-256-ctr-hmac-sha256, serpent-256-ctr-hmac-sha256 (default: the server's).
    #[arg(long, value_name = "NAME", value_parser = parse_suite)]
    pub suite: Option<Suite>,

    /// Plaintext bytes per chunk (default 1M).
    #[arg(long, value_name = "SIZE", value_parser = parse_chunk_size)]
    pub chunk_size: Option<usize>,

    /// Argon2id memory cost for passphrases, in KiB.
    #[arg(long, value_name = "KIB", value_parser = clap::value_parser!(u32).range(64..=4_194_304))]
    pub kdf_memory: Option<u32>,

    /// Argon2id passes for passphrases.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub kdf_iterations: Option<u32>,

    /// Argon2id lanes for passphrases.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub kdf_parallel: Option<u32>,
}

fn parse_suite(name: &str) -> Result<Suite, String> {
    Suite::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Suite::ALL.iter().map(|s| s.name()).collect();
        format!("unknown suite '{name}' (known: {})", names.join(", "))
    })
}

fn parse_chunk_size(text: &str) -> Result<usize, String> {
    let n = parse_size(text)?;
    if !(MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&n) {
        return Err(format!(
            "the chunk size must be between {MIN_CHUNK_SIZE} bytes and {} MiB",
            MAX_CHUNK_SIZE >> 20
        ));
    }
    Ok(n)
}

/// Runs `remote encrypt` or `remote decrypt`.
pub fn run(args: &RemoteArgs) -> Result<(), CliError> {
    match &args.op {
        RemoteOp::Encrypt(a) => {
            let mut query = Vec::new();
            if !a.common.raw.raw {
                push_opt(&mut query, "suite", a.suite.map(Suite::name));
                push_opt(&mut query, "chunk_size", a.chunk_size);
                push_opt(&mut query, "kdf_memory", a.kdf_memory);
                push_opt(&mut query, "kdf_iterations", a.kdf_iterations);
                push_opt(&mut query, "kdf_parallel", a.kdf_parallel);
            } else if a.suite.is_some() || a.kdf_memory.is_some() {
                return Err(CliError::Usage(
                    "--suite and --kdf-* are for the authenticated format, not --raw".into(),
                ));
            }
            transfer(&a.common, Direction::Encrypt, query)
        }
        RemoteOp::Decrypt(a) => transfer(a, Direction::Decrypt, Vec::new()),
    }
}

fn push_opt(query: &mut Vec<(&'static str, String)>, name: &'static str, v: Option<impl ToString>) {
    if let Some(v) = v {
        query.push((name, v.to_string()));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Encrypt,
    Decrypt,
}

/// Checks the server address: http or https, no credentials in it, and clear
/// text only to this machine unless `insecure`. Returns the endpoint URL.
fn endpoint(server: &str, direction: Direction, insecure: bool) -> Result<Url, CliError> {
    let bad = |why: &str| CliError::Usage(format!("--server {server}: {why}"));
    let mut base = Url::parse(server).map_err(|e| bad(&e.to_string()))?;
    match base.scheme() {
        "https" => {}
        "http" if insecure || is_loopback(&base) => {}
        "http" => {
            return Err(bad(
                "http:// to another machine would send the token, the key and the data in \
                 clear; use https://, or --insecure if the network is trusted",
            ));
        }
        _ => return Err(bad("use an http:// or https:// address")),
    }
    if base.host().is_none() {
        return Err(bad("no host"));
    }
    if !base.username().is_empty() || base.password().is_some() {
        return Err(bad("give the token with --token-file, not in the address"));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(bad("the address must not have a query or fragment"));
    }
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    let name = match direction {
        Direction::Encrypt => "v1/encrypt",
        Direction::Decrypt => "v1/decrypt",
    };
    base.join(name).map_err(|e| bad(&e.to_string()))
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Reads the token: the first line of the file, surrounding blanks removed.
fn read_token(path: &Path) -> Result<HeaderValue, CliError> {
    let bytes = Zeroizing::new(std::fs::read(path).map_err(|e| {
        CliError::Usage(format!(
            "cannot read the token file {}: {e}",
            path.display()
        ))
    })?);
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let token = line.trim_ascii();
    if token.is_empty() || !token.iter().all(|b| b.is_ascii_graphic()) {
        return Err(CliError::Usage(format!(
            "{} does not hold a token on its first line (see `clustercrypt token create`)",
            path.display()
        )));
    }
    let mut header = Zeroizing::new(b"Bearer ".to_vec());
    header.extend_from_slice(token);
    sensitive(&header)
}

fn sensitive(bytes: &[u8]) -> Result<HeaderValue, CliError> {
    let mut v = HeaderValue::from_bytes(bytes)
        .map_err(|_| CliError::Usage("a secret is not valid in an HTTP header".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

/// The secret headers and query parameters of the request.
fn key_headers(
    args: &RemoteCryptArgs,
    direction: Direction,
    query: &mut Vec<(&'static str, String)>,
) -> Result<HeaderMap, CliError> {
    let mut headers = HeaderMap::new();
    let key = &args.key;
    let key_given =
        key.key_file.is_some() || key.passphrase_file.is_some() || key.passphrase_env.is_some();
    if args.raw.raw {
        if key_given {
            return Err(CliError::Usage(
                "--raw takes its key from --key-hex-file or --key-env".into(),
            ));
        }
        // Checked here, so that a typo is a usage error before anything is sent.
        let params = crate::crypt::raw_params_from(&args.raw, DEFAULT_CHUNK_SIZE, 1)?;
        query.push(("raw", "true".into()));
        query.push((
            "cipher",
            args.raw.cipher.clone().expect("clap: --raw needs --cipher"),
        ));
        if !params.iv.is_empty() {
            query.push(("iv", hex::encode(&params.iv)));
        }
        if let Some(p) = args.raw.padding {
            let name = match p {
                PaddingArg::Pkcs7 => "pkcs7",
                PaddingArg::None => "none",
            };
            query.push(("padding", name.into()));
        }
        if args.raw.rounds != 1 {
            query.push(("rounds", args.raw.rounds.to_string()));
        }
        let hex = Zeroizing::new(hex::encode(&*params.key));
        headers.insert("x-clustercrypt-key", sensitive(hex.as_bytes())?);
        return Ok(headers);
    }
    match key_material(key, direction == Direction::Encrypt)? {
        KeyMaterial::Key(k) => {
            headers.insert("x-clustercrypt-key", sensitive(k.to_hex().as_bytes())?);
        }
        KeyMaterial::Passphrase(p) => {
            let b64 = Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(&*p));
            headers.insert("x-clustercrypt-passphrase", sensitive(b64.as_bytes())?);
        }
    }
    Ok(headers)
}

fn client(args: &RemoteCryptArgs) -> Result<reqwest::Client, CliError> {
    // No proxy: a proxy from the environment would see the secret headers of
    // an http:// request.
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(30))
        // A queued request gets no bytes until the server takes it up.
        .read_timeout(Duration::from_secs(300));
    if let Some(path) = &args.ca_cert {
        let pem = std::fs::read(path).map_err(|e| {
            CliError::Usage(format!(
                "cannot read the CA certificate {}: {e}",
                path.display()
            ))
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                CliError::Usage(format!("{} holds no PEM certificate", path.display()))
            })?;
        builder = builder.tls_certs_only(certs);
    }
    builder
        .build()
        .map_err(|e| CliError::Failed(anyhow::Error::new(e).context("cannot set up TLS")))
}

fn progress_bar(total: Option<u64>, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let (bar, template) = match total {
        Some(t) => (
            ProgressBar::new(t),
            "[{bar:30}] {bytes}/{total_bytes} sent {binary_bytes_per_sec} eta {eta}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} {bytes} sent {binary_bytes_per_sec} {elapsed}",
        ),
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

type Piece = Result<Bytes, std::io::Error>;

/// Reads the input on its own thread into a short queue that the request body
/// drains: memory stays bounded and a slow disk does not block the download.
fn spawn_reader(
    mut input: Box<dyn Read + Send>,
    bar: Option<ProgressBar>,
) -> (
    tokio::sync::mpsc::Receiver<Piece>,
    std::thread::JoinHandle<std::io::Result<u64>>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<Piece>(PIECES_IN_FLIGHT);
    let handle = std::thread::spawn(move || {
        let mut sent = 0u64;
        loop {
            let mut buf = BytesMut::zeroed(PIECE);
            let n = match pipeline::read_full(&mut *input, &mut buf) {
                Ok(n) => n,
                Err(e) => {
                    // Makes the request fail instead of ending it early.
                    let _ = tx.blocking_send(Err(std::io::Error::new(e.kind(), e.to_string())));
                    return Err(e);
                }
            };
            if n == 0 {
                return Ok(sent);
            }
            buf.truncate(n);
            sent += n as u64;
            if let Some(b) = &bar {
                b.set_position(sent);
            }
            if tx.blocking_send(Ok(buf.freeze())).is_err() {
                // The request is over (the server answered or the connection broke).
                return Ok(sent);
            }
        }
    });
    (rx, handle)
}

/// Describes a failed exchange with the server as text. The error is not kept
/// as a source: an `io::Error` of kind `BrokenPipe` in the chain would read as
/// "standard output closed", which `error::finish` counts as success.
fn network_error(e: &(dyn std::error::Error + 'static), what: &str) -> anyhow::Error {
    let mut parts: Vec<String> = Vec::new();
    let mut hung_up = false;
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            hung_up |= matches!(
                io.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            );
        }
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    let hint = if hung_up {
        " (the server closed the connection before the upload ended; it may have refused \
         the request, e.g. a wrong key or a damaged header)"
    } else {
        ""
    };
    anyhow::anyhow!("{what}: {}{hint}", parts.join(": "))
}

/// Turns a refusal into the server's own message.
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> anyhow::Error {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        json.as_ref()
            .and_then(|j| j.get(name))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let message = field("error").unwrap_or_else(|| {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        if text.is_empty() {
            status
                .canonical_reason()
                .unwrap_or("no reason given")
                .to_owned()
        } else {
            text.chars().take(200).collect()
        }
    });
    let code = field("code").map(|c| format!(", {c}")).unwrap_or_default();
    anyhow::anyhow!(
        "the server refused: {message} (HTTP {}{code})",
        status.as_u16()
    )
}

/// What arrived from the server.
struct Received {
    bytes: u64,
    head: Vec<u8>,
}

fn transfer(
    args: &RemoteCryptArgs,
    direction: Direction,
    mut query: Vec<(&'static str, String)>,
) -> Result<(), CliError> {
    let mut url = endpoint(&args.server, direction, args.insecure)?;
    let mut headers = key_headers(args, direction, &mut query)?;
    headers.insert(
        reqwest::header::AUTHORIZATION,
        read_token(&args.token_file)?,
    );
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(&query);
    }
    let client = client(args)?;
    let (input, size) = open_input(&args.input)?;
    crate::output::install_interrupt_cleanup();
    let mut sink = Sink::open(&args.output, &args.input, args.force)?;

    let bar = progress_bar(size, args.quiet);
    let (rx, reader) = spawn_reader(input, bar.clone());
    let body = reqwest::Body::wrap_stream(futures_util::stream::unfold(rx, |mut rx| async {
        rx.recv().await.map(|piece| (piece, rx))
    }));
    let mut request = client.post(url.clone()).headers(headers).body(body);
    if let Some(n) = size {
        // Lets the server refuse an oversized body before it is sent.
        request = request.header(reqwest::header::CONTENT_LENGTH, n);
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.into()))?;
    let result = runtime.block_on(async {
        let mut response = request.send().await.map_err(|e| {
            let what = if e.is_connect() {
                format!("cannot reach the server at {}", args.server)
            } else {
                format!(
                    "the request to {} failed before an answer came",
                    args.server
                )
            };
            network_error(&e, &what)
        })?;
        let status = response.status();
        if status != reqwest::StatusCode::OK {
            let mut body = Vec::new();
            while body.len() < MAX_ERROR_BODY {
                match response.chunk().await {
                    Ok(Some(c)) => body.extend_from_slice(&c),
                    _ => break,
                }
            }
            return Err(refusal(status, &body));
        }
        if let Some(w) = response.headers().get("x-clustercrypt-warning") {
            eprintln!(
                "clustercrypt: warning from the server: {}",
                String::from_utf8_lossy(w.as_bytes())
            );
        }
        let mut got = Received {
            bytes: 0,
            head: Vec::with_capacity(HEADER_LEN),
        };
        let out = sink.writer();
        loop {
            let piece = response.chunk().await.map_err(|e| {
                let what = format!(
                    "the answer broke off after {} bytes (the server found a problem or \
                     the connection failed)",
                    got.bytes
                );
                network_error(&e, &what)
            })?;
            let Some(piece) = piece else { break };
            if got.head.len() < HEADER_LEN {
                let take = (HEADER_LEN - got.head.len()).min(piece.len());
                got.head.extend_from_slice(&piece[..take]);
            }
            got.bytes += piece.len() as u64;
            out.write_all(&piece)
                .map_err(|e| anyhow::Error::new(e).context("cannot write the output"))?;
        }
        Ok(got)
    });
    // Ends the request, and so the reader thread unless it waits on a
    // terminal: that one is left behind on an error, the process ends anyway.
    drop(runtime);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Dropping `sink` on an error path removes the temporary file.
    let got = result.map_err(CliError::Failed)?;
    let sent = reader
        .join()
        .map_err(|_| CliError::Failed(anyhow::anyhow!("the thread reading the input panicked")))?;
    let sent = sent.map_err(|e| {
        CliError::Failed(
            anyhow::Error::new(e).context(format!("cannot read {}", args.input.display())),
        )
    })?;
    if let Some(n) = size
        && sent != n
    {
        return Err(CliError::Failed(anyhow::anyhow!(
            "{} changed size while it was sent ({n} bytes expected, {sent} read)",
            args.input.display()
        )));
    }
    if direction == Direction::Encrypt && !args.raw.raw {
        check_encrypted(&got)?;
    }
    sink.commit().map_err(CliError::Failed)
}

/// A 200 answer to an encryption must be a clustercrypt file: anything else
/// (a proxy's page, a wrong endpoint) must not be saved as the ciphertext.
fn check_encrypted(got: &Received) -> Result<(), CliError> {
    if got.head.len() < HEADER_LEN || got.head[..MAGIC.len()] != MAGIC {
        return Err(CliError::Failed(anyhow::anyhow!(
            "the server's answer ({} bytes) is not a clustercrypt file; nothing was written",
            got.bytes
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(server: &str, insecure: bool) -> Result<String, String> {
        endpoint(server, Direction::Encrypt, insecure)
            .map(|u| u.to_string())
            .map_err(|e| match e {
                CliError::Usage(m) => m,
                other => panic!("not a usage error: {other:?}"),
            })
    }

    #[test]
    fn clear_text_only_to_this_machine() {
        assert_eq!(
            url("http://127.0.0.1:8080", false).unwrap(),
            "http://127.0.0.1:8080/v1/encrypt"
        );
        assert!(url("http://[::1]:8080/", false).is_ok());
        assert!(url("http://localhost:8080", false).is_ok());
        assert!(url("http://127.0.0.2:8080", false).is_ok());
        let e = url("http://10.0.0.5:8080", false).unwrap_err();
        assert!(e.contains("--insecure"), "{e}");
        assert!(url("http://node1:8080", false).is_err());
        assert!(url("http://node1:8080", true).is_ok());
        assert!(url("https://node1:8443", false).is_ok());
    }

    #[test]
    fn bad_addresses() {
        assert!(url("ftp://127.0.0.1/", false).is_err());
        assert!(url("127.0.0.1:8080", false).is_err());
        assert!(url("https://user:pw@node1/", false).is_err());
        assert!(url("https://node1/?a=b", false).is_err());
        assert!(url("not a url", false).is_err());
    }

    #[test]
    fn path_prefix_is_kept() {
        assert_eq!(
            url("https://gw.example/crypt", false).unwrap(),
            "https://gw.example/crypt/v1/encrypt"
        );
        assert_eq!(
            endpoint("https://gw.example/crypt/", Direction::Decrypt, false)
                .unwrap()
                .to_string(),
            "https://gw.example/crypt/v1/decrypt"
        );
    }

    #[test]
    fn token_is_the_first_line_and_is_sensitive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, "  cct_abc-DEF_123 \nsecond line\n").unwrap();
        let h = read_token(&path).unwrap();
        assert_eq!(h.as_bytes(), b"Bearer cct_abc-DEF_123");
        assert!(h.is_sensitive());
        assert!(!format!("{h:?}").contains("cct_"));
        for bad in ["", "\n", "two words\n", "tab\there"] {
            std::fs::write(&path, bad).unwrap();
            assert!(
                matches!(read_token(&path), Err(CliError::Usage(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            read_token(&dir.path().join("missing")),
            Err(CliError::Usage(_))
        ));
    }

    #[test]
    fn refusal_quotes_the_server() {
        let e = refusal(
            reqwest::StatusCode::UNAUTHORIZED,
            br#"{"error":"missing or unknown token","code":"unauthorized"}"#,
        );
        assert_eq!(
            e.to_string(),
            "the server refused: missing or unknown token (HTTP 401, unauthorized)"
        );
        let e = refusal(reqwest::StatusCode::BAD_GATEWAY, b"");
        assert_eq!(e.to_string(), "the server refused: Bad Gateway (HTTP 502)");
        let e = refusal(reqwest::StatusCode::NOT_FOUND, b"no such page\n");
        assert_eq!(e.to_string(), "the server refused: no such page (HTTP 404)");
    }

    #[test]
    fn a_hung_up_server_is_a_failure_not_a_closed_stdout() {
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("request body error")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Wrapper(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        let err = network_error(&e, "the request failed");
        assert!(
            err.chain()
                .all(|c| c.downcast_ref::<std::io::Error>().is_none()),
            "an io::Error would be taken for a closed standard output"
        );
        let text = err.to_string();
        assert!(
            text.starts_with("the request failed: request body error: "),
            "{text}"
        );
        assert!(text.contains("closed the connection"), "{text}");
    }

    #[test]
    fn encrypted_answer_needs_the_magic() {
        let mut head = MAGIC.to_vec();
        head.resize(HEADER_LEN, 0);
        assert!(
            check_encrypted(&Received {
                bytes: 200,
                head: head.clone()
            })
            .is_ok()
        );
        assert!(
            check_encrypted(&Received {
                bytes: 8,
                head: MAGIC.to_vec()
            })
            .is_err()
        );
        head[0] ^= 1;
        assert!(check_encrypted(&Received { bytes: 200, head }).is_err());
        assert!(
            check_encrypted(&Received {
                bytes: 0,
                head: Vec::new()
            })
            .is_err()
        );
    }

    #[test]
    fn reader_fills_pieces_and_counts() {
        // A reader that returns a few bytes at a time still yields full pieces.
        struct Trickle(std::io::Cursor<Vec<u8>>);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(1000);
                self.0.read(&mut buf[..n])
            }
        }
        let data: Vec<u8> = (0..PIECE * 2 + 17).map(|i| i as u8).collect();
        let (mut rx, handle) =
            spawn_reader(Box::new(Trickle(std::io::Cursor::new(data.clone()))), None);
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        while let Some(piece) = rx.blocking_recv() {
            let piece = piece.unwrap();
            sizes.push(piece.len());
            got.extend_from_slice(&piece);
        }
        assert_eq!(sizes, [PIECE, PIECE, 17]);
        assert_eq!(got, data);
        assert_eq!(handle.join().unwrap().unwrap(), data.len() as u64);
    }

    #[test]
    fn reader_passes_errors_on() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let (mut rx, handle) = spawn_reader(Box::new(Broken), None);
        assert!(rx.blocking_recv().unwrap().is_err());
        assert!(handle.join().unwrap().is_err());
    }
}
