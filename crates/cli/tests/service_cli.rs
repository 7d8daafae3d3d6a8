//! `clustercrypt serve` and `clustercrypt remote`, end to end: the real binary
//! as the server on a loopback port, the real binary as the client, and a
//! hand-driven HTTP/1.1 connection where a test needs control over the bytes on
//! the wire (missing headers, a client that hangs up mid-upload, an upload that
//! is still going when the server is told to stop).
//!
//! Every server gets a bench report file (`--bench-results`) so that no
//! start-up benchmark competes for the CPU, and the tests use key files or a
//! cheap Argon2 so that the suite stays fast.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use tempfile::TempDir;

/// The binary under test, started through Cargo's target runner when one is set
/// (QEMU for the ARM cross builds), as assert_cmd's `cargo_bin` does.
fn bin() -> Command {
    Command::cargo_bin("clustercrypt").unwrap()
}
/// Passed to every passphrase run in an environment variable; never printed.
const PASSPHRASE: &str = "Service-Horse-Battery-Staple-91ac";
const PASS_ENV: &str = "CLUSTERCRYPT_TEST_PASSPHRASE";
const FAST_KDF: [&str; 6] = [
    "--kdf-memory",
    "64",
    "--kdf-iterations",
    "1",
    "--kdf-parallel",
    "1",
];
const MAGIC: &[u8] = b"CLCRYPT\x1a";

/// Deterministic test data that differs per seed.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Runs the binary in `dir` and returns its output.
fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .env(PASS_ENV, PASSPHRASE)
        .stdin(Stdio::null())
        .output()
        .expect("run clustercrypt")
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the binary and checks that it succeeded.
fn ok(dir: &Path, args: &[&str]) -> Output {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?} failed:\n{}", text(&out));
    out
}

/// Nothing left behind: neither `name` nor a temporary `.clustercrypt-*` file.
fn assert_no_output(dir: &Path, name: &str) {
    assert!(!dir.join(name).exists(), "{name} was written");
    for e in fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !n.starts_with(".clustercrypt-"),
            "temporary file {n} left behind"
        );
    }
}

/// A running `clustercrypt serve`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    /// `http://127.0.0.1:PORT` or `https://...`, as the server announced it.
    url: String,
    /// The token of the `alice` entry.
    token: String,
    /// Every line the server wrote to stderr so far.
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts a server in `dir` with a fresh token file and `extra` options.
    fn start(dir: &Path, extra: &[&str]) -> Server {
        // A small real report, so that GET /v1/bench answers at once.
        ok(
            dir,
            &[
                "bench",
                "--cipher",
                "aes-cbc",
                "--key-size",
                "256",
                "--no-kdf",
                "--time",
                "0.02",
                "--format",
                "json",
                "-o",
                "bench.json",
            ],
        );
        let created = ok(
            dir,
            &[
                "token",
                "create",
                "--tokens",
                "tokens.txt",
                "--name",
                "alice",
            ],
        );
        let token = String::from_utf8(created.stdout).unwrap().trim().to_owned();
        assert!(token.starts_with("cct_"), "token {token:?}");
        fs::write(dir.join("alice.token"), format!("{token}\n")).unwrap();
        // The token file holds the hash only.
        let stored = fs::read_to_string(dir.join("tokens.txt")).unwrap();
        assert!(stored.starts_with("sha256:") && !stored.contains(&token));

        let mut child = bin()
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--tokens",
                "tokens.txt",
                "--bench-results",
                "bench.json",
            ])
            .args(extra)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let prefix = "clustercrypt: listening on ";
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(prefix) {
                    let url = url.trim().trim_end_matches('/').to_owned();
                    let port = url.rsplit(':').next().unwrap().parse::<u16>();
                    let _ = tx.send(port.map(|p| (p, url)));
                }
                sink.lock().unwrap().push(line);
            }
        });
        let (port, url) = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Ok(p)) => p,
            other => {
                let _ = child.kill();
                panic!(
                    "the server did not say where it listens ({other:?}); it wrote:\n{}",
                    log.lock().unwrap().join("\n")
                );
            }
        };
        Server {
            child,
            port,
            url,
            token,
            log,
        }
    }

    fn url(&self) -> String {
        self.url.clone()
    }

    /// The server's stderr so far.
    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Runs `clustercrypt remote OP` against this server with alice's token.
    fn remote(&self, dir: &Path, op: &str, args: &[&str]) -> Output {
        let url = self.url();
        let mut all = vec![
            "remote",
            op,
            "--server",
            &url,
            "--token-file",
            "alice.token",
        ];
        all.extend_from_slice(args);
        let out = run(dir, &all);
        let shown = text(&out);
        assert!(!shown.contains(&self.token), "the token was printed");
        assert!(!shown.contains(PASSPHRASE), "the passphrase was printed");
        out
    }

    /// Sends SIGTERM.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits up to `limit` for the server to exit.
    fn wait(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                start.elapsed() < limit,
                "the server did not exit within {limit:?}; it wrote:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let log = self.log();
        assert!(
            std::thread::panicking() || !log.contains(&self.token),
            "the server logged the token"
        );
        assert!(
            std::thread::panicking() || !log.contains(PASSPHRASE),
            "the server logged the passphrase"
        );
    }
}

/// An HTTP/1.1 response as it came off the wire.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The body ended as HTTP says it should (length reached, or the last chunk seen).
    complete: bool,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON error body: `{"error": ..., "code": ...}`.
    fn json_error(&self) -> (String, String) {
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        });
        let error = v["error"].as_str().expect("an error message").to_owned();
        let code = v["code"].as_str().expect("an error code").to_owned();
        assert!(!error.is_empty());
        (error, code)
    }
}

/// Reads one response (head, then a chunked or sized body) from `conn`.
fn read_response(conn: &mut impl BufRead) -> Response {
    let mut line = String::new();
    conn.read_line(&mut line).expect("status line");
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line).expect("header line");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').expect("header");
        headers.push((n.trim().to_owned(), v.trim().to_owned()));
    }
    let mut r = Response {
        status,
        headers,
        body: Vec::new(),
        complete: false,
    };
    if r.header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            line.clear();
            match conn.read_line(&mut line) {
                Ok(n) if n > 0 => {}
                _ => return r,
            }
            let Ok(size) = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16) else {
                return r;
            };
            if size == 0 {
                line.clear();
                let _ = conn.read_line(&mut line);
                r.complete = true;
                return r;
            }
            let start = r.body.len();
            r.body.resize(start + size, 0);
            if conn.read_exact(&mut r.body[start..]).is_err() {
                r.body.truncate(start);
                return r;
            }
            let mut crlf = [0u8; 2];
            if conn.read_exact(&mut crlf).is_err() {
                return r;
            }
        }
    }
    match r
        .header("content-length")
        .map(|v| v.parse::<usize>().unwrap())
    {
        Some(n) => {
            r.body.resize(n, 0);
            r.complete = conn.read_exact(&mut r.body).is_ok();
        }
        None => {
            let _ = conn.read_to_end(&mut r.body);
        }
    }
    r
}

/// Opens a connection with a generous read timeout (a test fails rather than hangs).
fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// One request on its own connection: `head` is the request line and headers
/// (without Host, Content-Length and the blank line).
fn request(port: u16, head: &str, body: &[u8]) -> Response {
    let mut s = connect(port);
    let msg = format!(
        "{head}\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(msg.as_bytes()).unwrap();
    // The server may answer and close before reading the body (401, 413).
    let _ = s.write_all(body);
    read_response(&mut BufReader::new(s))
}

/// The sum of every sample of a Prometheus metric.
fn metric_sum(port: u16, name: &str) -> f64 {
    let r = request(port, "GET /metrics HTTP/1.1", b"");
    assert_eq!(r.status, 200);
    String::from_utf8(r.body)
        .unwrap()
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

fn keygen(dir: &Path, name: &str) -> String {
    ok(dir, &["keygen", "-o", name]);
    fs::read_to_string(dir.join(name))
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn requests_without_a_valid_token_are_refused_before_any_work() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &[]);
    let key = keygen(dir, "key.hex");
    let body = data(200_000, 1);

    for auth in [
        "",
        "Authorization: Bearer cct_not-a-real-token\r\n",
        "Authorization: Basic YWxpY2U6eA==\r\n",
    ] {
        for path in ["/v1/encrypt", "/v1/decrypt"] {
            let head = format!("POST {path} HTTP/1.1\r\n{auth}X-Clustercrypt-Key: {key}");
            let r = request(server.port, head.trim_end(), &body);
            assert_eq!(r.status, 401, "{path} with {auth:?}");
            let (error, code) = r.json_error();
            assert_eq!(code, "unauthorized");
            assert!(!error.contains(&key));
        }
    }
    let r = request(server.port, "GET /v1/bench HTTP/1.1", b"");
    assert_eq!(r.status, 401);
    // A token from another server's file is no token here.
    let other = TempDir::new().unwrap();
    let stranger = ok(other.path(), &["token", "create", "--tokens", "t.txt"]);
    let stranger = String::from_utf8(stranger.stdout).unwrap();
    let head = format!(
        "POST /v1/encrypt HTTP/1.1\r\nAuthorization: Bearer {}\r\nX-Clustercrypt-Key: {key}",
        stranger.trim()
    );
    assert_eq!(request(server.port, &head, &body).status, 401);

    // The client says why, and writes nothing.
    fs::write(dir.join("plain"), &body).unwrap();
    fs::write(dir.join("wrong.token"), "cct_wrong\n").unwrap();
    let url = server.url();
    let out = run(
        dir,
        &[
            "remote",
            "encrypt",
            "--server",
            &url,
            "--token-file",
            "wrong.token",
            "--key-file",
            "key.hex",
            "plain",
            "-o",
            "plain.ccrypt",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401") && err.contains("unauthorized"), "{err}");
    assert_no_output(dir, "plain.ccrypt");

    // Nothing was processed: of all those bodies the server counts only the
    // one sent with the token.
    let head = format!(
        "POST /v1/encrypt HTTP/1.1\r\nAuthorization: Bearer {}\r\nX-Clustercrypt-Key: {key}",
        server.token
    );
    assert_eq!(request(server.port, &head, &body).status, 200);
    assert_eq!(
        metric_sum(server.port, "clustercrypt_bytes_in_total"),
        body.len() as f64
    );
    // Health needs no token.
    let r = request(server.port, "GET /healthz HTTP/1.1", b"");
    assert_eq!(r.status, 200);
    assert!(String::from_utf8_lossy(&r.body).contains("ok"));
    // And with the token, the bench report is there.
    let head = format!(
        "GET /v1/bench HTTP/1.1\r\nAuthorization: Bearer {}",
        server.token
    );
    let r = request(server.port, &head, b"");
    assert_eq!(r.status, 200);
    let report: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert!(report.to_string().contains("clustercrypt-bench/1"));
}

#[test]
fn malformed_requests_are_400_json_before_any_work() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &[]);
    let key = keygen(dir, "key.hex");
    let auth = format!("Authorization: Bearer {}", server.token);
    let body = data(10_000, 2);
    let pass_b64 = "U2VydmljZS1Ib3JzZS1CYXR0ZXJ5LVN0YXBsZS05MWFj"; // PASSPHRASE

    let bad_queries = [
        "suite=rot13",
        "suite=",
        "chunk_size=lots",
        "chunk_size=0",
        "chunk_size=1G",
        "kdf_iterations=zero",
        "kdf_memory=-5",
        "no_such_parameter=1",
        "raw=true&cipher=no-such-cipher",
        "raw=maybe",
        "raw=true&cipher=aes-cbc&padding=sideways",
        "raw=true&cipher=aes-cbc&iv=xyz",
    ];
    for q in bad_queries {
        let head = format!("POST /v1/encrypt?{q} HTTP/1.1\r\n{auth}\r\nX-Clustercrypt-Key: {key}");
        let r = request(server.port, &head, &body);
        assert_eq!(
            r.status,
            400,
            "?{q}: {:?}",
            String::from_utf8_lossy(&r.body)
        );
        let (error, code) = r.json_error();
        assert_eq!(code, "bad_request", "?{q}");
        assert!(!error.contains(&key), "the key was echoed");
    }
    // Key headers: none, both, not hex, too short, not base64.
    let key_headers = [
        String::new(),
        format!("\r\nX-Clustercrypt-Key: {key}\r\nX-Clustercrypt-Passphrase: {pass_b64}"),
        "\r\nX-Clustercrypt-Key: not-hex-at-all".to_owned(),
        format!("\r\nX-Clustercrypt-Key: {}", &key[..32]),
        "\r\nX-Clustercrypt-Passphrase: %%%not base64%%%".to_owned(),
    ];
    for h in &key_headers {
        let head = format!("POST /v1/encrypt HTTP/1.1\r\n{auth}{h}");
        let r = request(server.port, &head, &body);
        assert_eq!(
            r.status,
            400,
            "{h:?}: {:?}",
            String::from_utf8_lossy(&r.body)
        );
        let (error, _) = r.json_error();
        assert!(!error.contains(&key) && !error.contains(pass_b64));
    }
    // The client checks what it can itself: usage errors, exit 2, nothing sent.
    fs::write(dir.join("plain"), &body).unwrap();
    for args in [
        vec!["--suite", "rot13"],
        vec!["--chunk-size", "lots"],
        vec![
            "--raw",
            "--cipher",
            "no-such-cipher",
            "--key-hex-file",
            "key.hex",
        ],
    ] {
        let out = server.remote(
            dir,
            "encrypt",
            &[&args[..], &["plain", "-o", "out"]].concat(),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_no_output(dir, "out");
    }
    // http:// to another machine is refused before connecting (secrets in clear).
    let out = run(
        dir,
        &[
            "remote",
            "encrypt",
            "--server",
            "http://192.0.2.1:8080",
            "--token-file",
            "alice.token",
            "--key-file",
            "key.hex",
            "plain",
            "-o",
            "out",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--insecure"));
    // None of those bodies was processed: only this one is counted.
    let head = format!("POST /v1/encrypt HTTP/1.1\r\n{auth}\r\nX-Clustercrypt-Key: {key}");
    assert_eq!(request(server.port, &head, &body).status, 200);
    assert_eq!(
        metric_sum(server.port, "clustercrypt_bytes_in_total"),
        body.len() as f64
    );
}

#[test]
fn oversized_bodies_are_413() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &["--max-body", "64K"]);
    let key = keygen(dir, "key.hex");
    let auth = format!("Authorization: Bearer {}", server.token);

    // Declared up front.
    let head = format!("POST /v1/encrypt HTTP/1.1\r\n{auth}\r\nX-Clustercrypt-Key: {key}");
    let r = request(server.port, &head, &data(200_000, 3));
    assert_eq!(r.status, 413);
    assert_eq!(r.json_error().1, "payload_too_large");
    // At the limit is fine.
    let r = request(server.port, &head, &data(64 << 10, 3));
    assert_eq!(r.status, 200);
    assert!(r.complete && r.body.starts_with(MAGIC));

    // Through the client: from a file (Content-Length) and from a pipe (no
    // length: the server finds out while streaming). Either way nothing is written.
    fs::write(dir.join("big"), data(300_000, 4)).unwrap();
    let out = server.remote(
        dir,
        "encrypt",
        &["--key-file", "key.hex", "big", "-o", "big.ccrypt"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("413"));
    assert_no_output(dir, "big.ccrypt");

    let url = server.url();
    let mut child = bin()
        .args([
            "remote",
            "encrypt",
            "--server",
            &url,
            "--token-file",
            "alice.token",
            "--key-file",
            "key.hex",
            "-",
            "-o",
            "big.ccrypt",
        ])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The server may stop reading early: a broken pipe here is expected.
    let _ = stdin.write_all(&data(300_000, 4));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_no_output(dir, "big.ccrypt");
}

#[test]
fn tampered_ciphertext_fails_and_writes_nothing() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &[]);
    keygen(dir, "key.hex");
    keygen(dir, "other.hex");
    // 48 chunks of 64 KiB: the server has streamed plaintext before it meets
    // the damage, so only an aborted body can tell the client.
    let plain = data(3 << 20, 5);
    fs::write(dir.join("plain"), &plain).unwrap();
    ok(
        dir,
        &[
            "encrypt",
            "--key-file",
            "key.hex",
            "--chunk-size",
            "64K",
            "plain",
            "-o",
            "good.ccrypt",
        ],
    );
    let good = fs::read(dir.join("good.ccrypt")).unwrap();

    // The untouched file round-trips through the server.
    let out = server.remote(
        dir,
        "decrypt",
        &["--key-file", "key.hex", "good.ccrypt", "-o", "back"],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(fs::read(dir.join("back")).unwrap() == plain);

    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut late = good.clone();
    let at = late.len() * 3 / 4;
    late[at] ^= 0x40;
    cases.push(("a flipped bit late in the file", late));
    let mut header = good.clone();
    header[40] ^= 1;
    cases.push(("a changed header", header));
    cases.push(("a cut-off file", good[..good.len() - 1000].to_vec()));
    cases.push((
        "a missing last chunk",
        good[..100 + 47 * (65536 + 16)].to_vec(),
    ));
    for (what, bytes) in cases {
        fs::write(dir.join("bad.ccrypt"), &bytes).unwrap();
        let out = server.remote(
            dir,
            "decrypt",
            &["--key-file", "key.hex", "bad.ccrypt", "-o", "bad.out"],
        );
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        assert_no_output(dir, "bad.out");
    }
    // A damaged header on a large file: the server answers 422 and closes
    // while the client is still uploading, so the client sees either the 422
    // or a broken pipe. Both are failures (a broken pipe once passed for a
    // closed standard output, exit 0).
    let big = data(16 << 20, 6);
    fs::write(dir.join("big"), &big).unwrap();
    ok(
        dir,
        &[
            "encrypt",
            "--key-file",
            "key.hex",
            "big",
            "-o",
            "big.ccrypt",
        ],
    );
    let mut damaged = fs::read(dir.join("big.ccrypt")).unwrap();
    damaged[40] ^= 1;
    fs::write(dir.join("big.bad"), &damaged).unwrap();
    for _ in 0..6 {
        let out = server.remote(
            dir,
            "decrypt",
            &["--key-file", "key.hex", "big.bad", "-o", "big.out"],
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("error"));
        assert_no_output(dir, "big.out");
    }
    // The wrong key is found before any plaintext: an HTTP error with a message.
    let out = server.remote(
        dir,
        "decrypt",
        &["--key-file", "other.hex", "good.ccrypt", "-o", "x"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // (Or, rarely, the server hung up on the upload first; see above.)
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wrong_key") || err.contains("closed the connection"),
        "{err}"
    );
    assert_no_output(dir, "x");
    // The server is still fine.
    let out = server.remote(
        dir,
        "decrypt",
        &["--key-file", "key.hex", "good.ccrypt", "-o", "again"],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn sixteen_clients_at_once_each_get_their_own_file() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().to_path_buf();
    let server = Arc::new(Server::start(&dir, &[]));
    keygen(&dir, "key.hex");

    let handles: Vec<_> = (0..16u64)
        .map(|i| {
            let dir = dir.clone();
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                let plain = data(300_000 + 77_777 * i as usize, 100 + i);
                let name = |s: &str| format!("c{i}.{s}");
                fs::write(dir.join(name("plain")), &plain).unwrap();
                let (plain_f, enc_f, back_f) = (name("plain"), name("ccrypt"), name("back"));
                let key: &[&str] = if i % 4 == 3 {
                    &["--passphrase-env", PASS_ENV]
                } else {
                    &["--key-file", "key.hex"]
                };
                if i % 2 == 0 {
                    // Encrypted by the server, decrypted here.
                    let mut args = key.to_vec();
                    args.extend(["--chunk-size", "64K", &plain_f, "-o", &enc_f]);
                    if i % 4 == 3 {
                        args.extend(FAST_KDF);
                    }
                    let out = server.remote(&dir, "encrypt", &args);
                    assert!(out.status.success(), "client {i}: {}", text(&out));
                    ok(
                        &dir,
                        &[&["decrypt"], key, &[&enc_f, "-o", &back_f]].concat(),
                    );
                } else {
                    // Encrypted here, decrypted by the server.
                    let mut args = vec!["encrypt"];
                    args.extend(key);
                    args.extend(FAST_KDF);
                    args.extend([plain_f.as_str(), "-o", &enc_f]);
                    ok(&dir, &args);
                    let out =
                        server.remote(&dir, "decrypt", &[key, &[&enc_f, "-o", &back_f]].concat());
                    assert!(out.status.success(), "client {i}: {}", text(&out));
                }
                let back = fs::read(dir.join(&back_f)).unwrap();
                assert!(back == plain, "client {i} got someone else's data");
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a client failed");
    }
    assert_eq!(
        metric_sum(server.port, "clustercrypt_requests_in_flight"),
        0.0
    );
}

#[test]
fn the_server_keeps_serving_after_a_client_hangs_up_mid_upload() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    // One slot and a short queue: a slot kept by a dead request would show.
    let server = Server::start(dir, &["--max-concurrent", "1", "--queue", "2"]);
    let key = keygen(dir, "key.hex");
    for round in 0..3 {
        let mut s = connect(server.port);
        let head = format!(
            "POST /v1/encrypt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             X-Clustercrypt-Key: {key}\r\nContent-Length: {}\r\n\r\n",
            server.token,
            1u64 << 30
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&data(3 << 20, round)).unwrap();
        drop(s);
    }
    // Still serving, with the one slot free again.
    let plain = data(1 << 20, 9);
    fs::write(dir.join("plain"), &plain).unwrap();
    let out = server.remote(
        dir,
        "encrypt",
        &["--key-file", "key.hex", "plain", "-o", "p.ccrypt"],
    );
    assert!(
        out.status.success(),
        "{}\nserver:\n{}",
        text(&out),
        server.log()
    );
    ok(
        dir,
        &[
            "decrypt",
            "--key-file",
            "key.hex",
            "p.ccrypt",
            "-o",
            "p.back",
        ],
    );
    assert!(fs::read(dir.join("p.back")).unwrap() == plain);
    let deadline = Instant::now() + Duration::from_secs(20);
    while metric_sum(server.port, "clustercrypt_requests_in_flight") != 0.0 {
        assert!(
            Instant::now() < deadline,
            "a dropped request is still in flight"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        request(server.port, "GET /healthz HTTP/1.1", b"").status,
        200
    );
}

#[test]
fn sigterm_lets_the_upload_in_flight_finish_then_exits_0() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let mut server = Server::start(dir, &[]);
    let key = keygen(dir, "key.hex");
    let plain = data(2 << 20, 11);
    let (first, second) = plain.split_at(1 << 20);

    let mut s = connect(server.port);
    let head = format!(
        "POST /v1/encrypt?chunk_size=64K HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         X-Clustercrypt-Key: {key}\r\nContent-Length: {}\r\n\r\n",
        server.token,
        plain.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(first).unwrap();
    let reader_conn = s.try_clone().unwrap();
    let reader = std::thread::spawn(move || read_response(&mut BufReader::new(reader_conn)));
    // Let the server take the request up, then tell it to stop.
    std::thread::sleep(Duration::from_millis(500));
    server.terminate();
    std::thread::sleep(Duration::from_millis(500));
    // Stopped accepting: a new connection is refused or closed unanswered.
    if let Ok(mut late) = TcpStream::connect(("127.0.0.1", server.port)) {
        late.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = late.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut buf = [0u8; 64];
        let n = late.read(&mut buf).unwrap_or(0);
        assert!(
            n == 0 || !String::from_utf8_lossy(&buf[..n]).contains(" 200 "),
            "a request was served after SIGTERM"
        );
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server exited with a request in flight"
    );
    // The slow upload goes on and completes.
    s.write_all(second).unwrap();
    let r = reader.join().unwrap();
    assert_eq!(r.status, 200);
    assert!(r.complete, "the answer was cut off");
    fs::write(dir.join("slow.ccrypt"), &r.body).unwrap();
    ok(
        dir,
        &[
            "decrypt",
            "--key-file",
            "key.hex",
            "slow.ccrypt",
            "-o",
            "slow.back",
        ],
    );
    assert!(fs::read(dir.join("slow.back")).unwrap() == plain);
    let status = server.wait(Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "server log:\n{}", server.log());
}

#[test]
fn raw_mode_through_the_server_matches_the_local_cli() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &[]);
    fs::write(dir.join("k.hex"), "000102030405060708090a0b0c0d0e0f\n").unwrap();
    let plain = data(100_003, 12);
    fs::write(dir.join("plain"), &plain).unwrap();
    let raw = [
        "--raw",
        "--cipher",
        "aes-cbc",
        "--key-hex-file",
        "k.hex",
        "--iv",
        "f0e0d0c0b0a090807060504030201000",
    ];
    ok(
        dir,
        &[&["encrypt"], &raw[..], &["plain", "-o", "local.bin"]].concat(),
    );
    let out = server.remote(
        dir,
        "encrypt",
        &[&raw[..], &["plain", "-o", "remote.bin"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    assert!(fs::read(dir.join("local.bin")).unwrap() == fs::read(dir.join("remote.bin")).unwrap());
    let out = server.remote(
        dir,
        "decrypt",
        &[&raw[..], &["remote.bin", "-o", "back"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(fs::read(dir.join("back")).unwrap() == plain);
    // Existing output is kept without --force.
    let out = server.remote(
        dir,
        "decrypt",
        &[&raw[..], &["remote.bin", "-o", "back"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn https_with_a_private_ca() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    // A self-signed certificate for 127.0.0.1, as a small site would make one.
    let made = Command::new("/usr/bin/openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
        ])
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", text(&made));
    let server = Server::start(dir, &["--tls-cert", "cert.pem", "--tls-key", "key.pem"]);
    assert!(server.url().starts_with("https://"), "{}", server.url());
    keygen(dir, "key.hex");
    let plain = data(500_000, 13);
    fs::write(dir.join("plain"), &plain).unwrap();
    // Without the certificate the client does not trust the server, and sends nothing.
    let out = server.remote(
        dir,
        "encrypt",
        &["--key-file", "key.hex", "plain", "-o", "p.ccrypt"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_no_output(dir, "p.ccrypt");
    let tls = ["--ca-cert", "cert.pem", "--key-file", "key.hex"];
    let out = server.remote(
        dir,
        "encrypt",
        &[&tls[..], &["plain", "-o", "p.ccrypt"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = server.remote(
        dir,
        "decrypt",
        &[&tls[..], &["p.ccrypt", "-o", "p.back"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(fs::read(dir.join("p.back")).unwrap() == plain);
    // Not a certificate: a usage error.
    let out = server.remote(
        dir,
        "encrypt",
        &[
            "--ca-cert",
            "key.hex",
            "--key-file",
            "key.hex",
            "plain",
            "-o",
            "q",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn tokens_created_and_revoked_while_running_take_effect_at_once() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let server = Server::start(dir, &[]);
    let bench = |token: &str| {
        request(
            server.port,
            &format!("GET /v1/bench HTTP/1.1\r\nAuthorization: Bearer {token}"),
            b"",
        )
        .status
    };
    assert_eq!(bench(&server.token), 200);
    let bob = ok(
        dir,
        &["token", "create", "--tokens", "tokens.txt", "--name", "bob"],
    );
    let bob = String::from_utf8(bob.stdout).unwrap().trim().to_string();
    assert_eq!(bench(&bob), 200, "a new token works without a restart");

    let listed = text(&ok(dir, &["token", "list", "--tokens", "tokens.txt"]));
    assert!(
        listed.contains("alice") && listed.contains("bob"),
        "{listed}"
    );
    assert!(!listed.contains(&bob) && !listed.contains(&server.token));

    ok(
        dir,
        &[
            "token",
            "revoke",
            "--tokens",
            "tokens.txt",
            "--name",
            "alice",
        ],
    );
    assert_eq!(
        bench(&server.token),
        401,
        "a revoked token is refused at once"
    );
    assert_eq!(bench(&bob), 200);
    let missing = run(
        dir,
        &[
            "token",
            "revoke",
            "--tokens",
            "tokens.txt",
            "--name",
            "alice",
        ],
    );
    assert_eq!(missing.status.code(), Some(2));
}
