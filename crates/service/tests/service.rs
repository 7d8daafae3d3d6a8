//! The service end to end, in process: a server on 127.0.0.1:0 and HTTP clients.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use clustercrypt_bench::machine::Machine;
use clustercrypt_bench::report::{Report, Settings};
use clustercrypt_engine::format::Suite;
use clustercrypt_engine::keys::KEY_LEN;
use clustercrypt_engine::stream::{self, EncryptOptions};
use clustercrypt_engine::{Kdf, KeySource, MasterKey, Passphrase};
use clustercrypt_service::tokens::{self, TokenStore};
use clustercrypt_service::{Auth, BenchSource, ServeConfig, Server, TlsFiles};
use tokio::sync::oneshot;

const KEY: [u8; KEY_LEN] = [7; KEY_LEN];
/// A cheap Argon2 cost for tests (the default takes 64 MiB and three passes).
const CHEAP_KDF: &str = "kdf_memory=64&kdf_iterations=1&kdf_parallel=1";

struct Running {
    url: String,
    addr: SocketAddr,
    token: String,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), clustercrypt_service::ServiceError>>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
    }

    async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// POSTs `plain` to the encrypt `path` with the test key; the answer must be 200.
    async fn encrypt_with_key(&self, path: &str, plain: &[u8]) -> Vec<u8> {
        let r = self
            .post(path)
            .header("x-clustercrypt-key", key_hex())
            .body(plain.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap().to_vec()
    }

    /// Stops the server and waits until it returned.
    async fn shutdown(mut self) {
        self.stop.take().unwrap().send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(20), self.task)
            .await
            .expect("server stops")
            .unwrap()
            .unwrap();
    }
}

fn bench_file(dir: &Path) -> std::path::PathBuf {
    let report = Report::empty(
        Machine::detect(),
        Settings {
            min_time_s: 0.25,
            buffer_size: 1 << 20,
            request_size: 65536,
            runs: 1,
            threads: 1,
        },
    );
    let path = dir.join("bench.json");
    std::fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
    path
}

/// A configuration with one token and a bench report file, in `dir`.
fn config(dir: &Path) -> (ServeConfig, String) {
    let file = dir.join("tokens");
    let token = tokens::create(&file, "test").unwrap();
    let store = TokenStore::load(&file).unwrap();
    let mut c = ServeConfig::new("127.0.0.1:0".parse().unwrap(), Auth::Tokens(store));
    c.threads = 2;
    c.bench = BenchSource::File(bench_file(dir));
    (c, token.secret.to_string())
}

async fn start_with(
    dir: tempfile::TempDir,
    config: ServeConfig,
    token: String,
    client: reqwest::Client,
) -> Running {
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr();
    let url = server.url();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    Running {
        url,
        addr,
        token,
        client,
        stop: Some(stop),
        task,
        _dir: dir,
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

async fn start(adjust: impl FnOnce(&mut ServeConfig)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, token) = config(dir.path());
    adjust(&mut c);
    start_with(dir, c, token, client()).await
}

fn data(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn local_decrypt(ciphertext: &[u8], key: &KeySource) -> Vec<u8> {
    let mut out = Vec::new();
    stream::decrypt(&mut &ciphertext[..], &mut out, key, 2, &|_| {}).unwrap();
    out
}

fn local_encrypt(plain: &[u8], key: &KeySource, chunk_size: usize) -> Vec<u8> {
    let options = EncryptOptions {
        suite: Suite::Aes256Gcm,
        chunk_size,
        threads: 2,
        argon2: Kdf::Argon2id {
            memory_kib: 64,
            iterations: 1,
            parallel: 1,
        },
    };
    let mut out = Vec::new();
    stream::encrypt(&mut &plain[..], &mut out, key, &options, &|_| {}).unwrap();
    out
}

fn key_source() -> KeySource {
    KeySource::Key(MasterKey::from_bytes(KEY))
}

fn key_hex() -> String {
    hex::encode(KEY)
}

async fn json(r: reqwest::Response) -> (u16, serde_json::Value) {
    let status = r.status().as_u16();
    let bytes = r.bytes().await.expect("a body");
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&bytes)));
    (status, value)
}

#[test]
fn token_files_keep_only_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    let a = tokens::create(&file, "alice").unwrap();
    let b = tokens::create(&file, "bob@laptop").unwrap();
    assert!(a.secret.starts_with("cct_") && a.secret.len() == 47);
    assert_ne!(*a.secret, *b.secret);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(&a.secret[4..]) && !text.contains(&b.secret[4..]));
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().all(|l| l.starts_with("sha256:")));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let store = TokenStore::load(&file).unwrap();
    assert_eq!(store.verify(a.secret.as_bytes()), Some("alice"));
    assert_eq!(store.verify(b.secret.as_bytes()), Some("bob@laptop"));
    let mut wrong = a.secret.to_string();
    let last = wrong.pop().unwrap();
    wrong.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(store.verify(wrong.as_bytes()), None);
    assert!(tokens::create(&file, "bad name").is_err());
    std::fs::write(&file, "not a token line\n").unwrap();
    assert!(TokenStore::load(&file).is_err());
    assert!(
        tokens::create(&file, "carol").is_err(),
        "never appends to a broken file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_valid_token_are_refused_before_any_work() {
    let s = start(|_| {}).await;
    let url = format!("{}/v1/encrypt", s.url);
    let none = s
        .client
        .post(&url)
        .header("x-clustercrypt-key", key_hex())
        .body(vec![1u8; 1000])
        .send()
        .await
        .unwrap();
    assert_eq!(
        none.headers()["www-authenticate"],
        "Bearer realm=\"clustercrypt\""
    );
    assert_eq!(json(none).await.1["code"], "unauthorized");
    let wrong = s
        .client
        .post(&url)
        .bearer_auth("cct_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        .header("x-clustercrypt-key", key_hex())
        .body(vec![1u8; 1000])
        .send()
        .await
        .unwrap();
    let (status, body) = json(wrong).await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], "unauthorized");
    assert!(!body.to_string().contains("cct_"), "never echoes the token");
    let bench = s
        .client
        .get(format!("{}/v1/bench", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(bench.status(), 401);
    let m = s.metrics().await;
    assert!(
        m.contains("clustercrypt_requests_total{endpoint=\"encrypt\",status=\"401\"} 2"),
        "{m}"
    );
    assert!(m.contains("clustercrypt_errors_total{endpoint=\"encrypt\",code=\"unauthorized\"} 2"));
    assert!(
        !m.contains("status=\"200\"} "),
        "nothing was processed:\n{m}"
    );
    assert!(
        m.contains("clustercrypt_bytes_in_total{endpoint=\"encrypt\"} 0"),
        "{m}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_parameters_get_400() {
    let s = start(|_| {}).await;
    for (path, key) in [
        ("/v1/encrypt?suite=rot13", Some(key_hex())),
        ("/v1/encrypt?colour=blue", Some(key_hex())),
        ("/v1/encrypt?chunk_size=12X", Some(key_hex())),
        ("/v1/encrypt", None),
        ("/v1/encrypt", Some("abcd".to_string())),
        ("/v1/decrypt?suite=aes-256-gcm", Some(key_hex())),
        (
            "/v1/encrypt?raw=true&cipher=aes-cbc",
            Some(hex::encode([1u8; 16])),
        ),
    ] {
        let mut r = s.post(path).body("hello");
        if let Some(k) = key {
            r = r.header("x-clustercrypt-key", k);
        }
        let (status, body) = json(r.send().await.unwrap()).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("bad_request")),
            "{path}: {body}"
        );
    }
    let missing = s
        .client
        .get(format!("{}/v2/nothing", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(json(missing).await.1["code"], "not_found");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_get_413() {
    let s = start(|c| c.limits.max_body = 10_000).await;
    // Declared up front.
    let r = s
        .post("/v1/encrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(vec![0u8; 10_001])
        .send()
        .await
        .unwrap();
    let (status, body) = json(r).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("payload_too_large"))
    );
    // Found while streaming (chunked, no Content-Length), before any output:
    // one 20 000-byte chunk does not fit under the limit.
    let sealed = local_encrypt(&data(20_000, 1), &key_source(), 65536);
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        sealed.chunks(1000).map(|c| Ok(c.to_vec())).collect();
    let r = s
        .post("/v1/decrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .unwrap();
    let (status, body) = json(r).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("payload_too_large"))
    );
    // At the limit exactly: fine.
    let plain = data(10_000, 1);
    let sealed = s
        .encrypt_with_key("/v1/encrypt?chunk_size=4K", &plain)
        .await;
    assert_eq!(local_decrypt(&sealed, &key_source()), plain);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_match_the_engine() {
    let s = start(|_| {}).await;
    let plain = data(300_000, 2);
    // Key: server encryption, local decryption.
    let r = s
        .post("/v1/encrypt?suite=chacha20-poly1305&chunk_size=64K")
        .header("x-clustercrypt-key", key_hex())
        .body(plain.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    let sealed = r.bytes().await.unwrap();
    assert_eq!(
        sealed[10],
        Suite::ChaCha20Poly1305.id(),
        "the suite asked for"
    );
    assert_eq!(local_decrypt(&sealed, &key_source()), plain);
    // Local encryption, server decryption.
    let local = local_encrypt(&plain, &key_source(), 50_000);
    let r = s
        .post("/v1/decrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(local)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap(), plain);
    // Passphrase (base64 header) both ways through the server, and locally.
    let pass = "correct horse battery staple ✓";
    let b64 = base64_standard(pass.as_bytes());
    let r = s
        .post(&format!("/v1/encrypt?{CHEAP_KDF}"))
        .header("x-clustercrypt-passphrase", &b64)
        .body(plain.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sealed = r.bytes().await.unwrap();
    let p = KeySource::Passphrase(Passphrase::new(pass.as_bytes().to_vec()).unwrap());
    assert_eq!(local_decrypt(&sealed, &p), plain);
    let r = s
        .post("/v1/decrypt")
        .header("x-clustercrypt-passphrase", &b64)
        .body(sealed.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.bytes().await.unwrap(), plain);
    // Empty input.
    let r = s
        .post("/v1/encrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(Vec::new())
        .send()
        .await
        .unwrap();
    assert_eq!(local_decrypt(&r.bytes().await.unwrap(), &key_source()), b"");
    // Raw legacy mode: the engine's bytes, with the warning header.
    let raw_key = hex::encode([3u8; 16]);
    let iv = hex::encode([9u8; 16]);
    let r = s
        .post(&format!("/v1/encrypt?raw=true&cipher=aes-cbc&iv={iv}"))
        .header("x-clustercrypt-key", &raw_key)
        .body(plain.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["x-clustercrypt-warning"]
            .to_str()
            .unwrap()
            .contains("unauthenticated")
    );
    let raw_sealed = r.bytes().await.unwrap();
    let params = clustercrypt_engine::raw::RawParams {
        spec: clustercrypt_catalogue::CipherSpec::parse("aes-cbc", Some(128)).unwrap(),
        key: zeroize::Zeroizing::new(vec![3u8; 16]),
        iv: vec![9u8; 16],
        padding: clustercrypt_engine::raw::Padding::Pkcs7,
        repeats: 1,
        chunk_size: 1 << 20,
        threads: 1,
    };
    let mut expected = Vec::new();
    clustercrypt_engine::raw::raw_encrypt(&mut &plain[..], &mut expected, &params, &|_| {})
        .unwrap();
    assert_eq!(raw_sealed, expected);
    let r = s
        .post(&format!("/v1/decrypt?raw=true&cipher=aes-cbc&iv={iv}"))
        .header("x-clustercrypt-key", &raw_key)
        .body(raw_sealed)
        .send()
        .await
        .unwrap();
    assert_eq!(r.bytes().await.unwrap(), plain);
    s.shutdown().await;
}

fn base64_standard(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A response that started with 200 and was then aborted. (Should the abort
/// overtake the status line, the client sees no response at all: a failure too.)
async fn assert_cut_off(r: reqwest::Result<reqwest::Response>) {
    let Ok(r) = r else { return };
    assert_eq!(r.status(), 200);
    assert!(
        r.bytes().await.is_err(),
        "an aborted body must not end cleanly"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ciphertext_never_looks_like_success() {
    let s = start(|_| {}).await;
    let plain = data(400_000, 3);
    let sealed = local_encrypt(&plain, &key_source(), 65536);
    let decrypt = |body: Vec<u8>, key: String| {
        s.post("/v1/decrypt")
            .header("x-clustercrypt-key", key)
            .body(body)
            .send()
    };
    // A chunk in the middle: the response started, then is aborted.
    let mut bad = sealed.clone();
    bad[100 + 3 * (65536 + 16) + 10] ^= 1;
    assert_cut_off(decrypt(bad, key_hex()).await).await;
    // The first chunk: nothing was sent yet, so a clean 422.
    let mut bad = sealed.clone();
    bad[100 + 10] ^= 1;
    let (status, body) = json(decrypt(bad, key_hex()).await.unwrap()).await;
    assert_eq!((status, body["code"].as_str()), (422, Some("unauthentic")));
    // Truncated after three chunks: two verify and are sent, then the end is missing.
    assert_cut_off(decrypt(sealed[..100 + 3 * (65536 + 16)].to_vec(), key_hex()).await).await;
    // Wrong key, and not our format.
    let (status, body) = json(
        decrypt(sealed.clone(), hex::encode([8u8; 32]))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (422, Some("wrong_key")));
    let (status, body) = json(decrypt(plain[..5000].to_vec(), key_hex()).await.unwrap()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("not_clustercrypt"))
    );
    let m = s.metrics().await;
    assert!(
        m.contains("clustercrypt_errors_total{endpoint=\"decrypt\",code=\"unauthentic\"} 2"),
        "{m}"
    );
    assert!(
        m.contains("clustercrypt_errors_total{endpoint=\"decrypt\",code=\"truncated\"} 1"),
        "{m}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_clients_each_get_their_own_data() {
    let s = std::sync::Arc::new(start(|c| c.limits.max_concurrent = 4).await);
    let mut tasks = Vec::new();
    for i in 0..16u32 {
        let s = std::sync::Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            let plain = data(50_000 + 20_000 * i as usize, 100 + i);
            let sealed = s
                .post("/v1/encrypt?chunk_size=16K")
                .header("x-clustercrypt-key", key_hex())
                .body(plain.clone())
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            let back = s
                .post("/v1/decrypt")
                .header("x-clustercrypt-key", key_hex())
                .body(sealed)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert!(back == plain, "client {i} got someone else's data");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let m = s.metrics().await;
    assert!(
        m.contains("clustercrypt_requests_total{endpoint=\"encrypt\",status=\"200\"} 16"),
        "{m}"
    );
    assert!(m.contains("clustercrypt_requests_total{endpoint=\"decrypt\",status=\"200\"} 16"));
    assert!(m.contains("clustercrypt_requests_in_flight 0"));
    std::sync::Arc::into_inner(s).unwrap().shutdown().await;
}

/// Sends a request head and `body_bytes` of a body that claims `declared` bytes.
fn partial_upload(
    addr: SocketAddr,
    token: &str,
    path: &str,
    declared: usize,
    body_bytes: usize,
) -> std::net::TcpStream {
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    write!(
        tcp,
        "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\
         X-Clustercrypt-Key: {}\r\nContent-Length: {declared}\r\n\r\n",
        key_hex()
    )
    .unwrap();
    tcp.write_all(&data(body_bytes, 5)).unwrap();
    tcp
}

async fn wait_for_metric(s: &Running, line: &str) {
    let start = Instant::now();
    loop {
        let m = s.metrics().await;
        if m.contains(line) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "never saw {line} in\n{m}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_mid_upload_ends_only_its_request() {
    let s = start(|c| c.limits.max_concurrent = 1).await;
    for path in ["/v1/encrypt?chunk_size=64K", "/v1/decrypt"] {
        let tcp = partial_upload(s.addr, &s.token, path, 10_000_000, 300_000);
        wait_for_metric(&s, "clustercrypt_requests_in_flight 1").await;
        drop(tcp);
        wait_for_metric(&s, "clustercrypt_requests_in_flight 0").await;
    }
    // The single slot is free again and the server still works.
    let plain = data(100_000, 6);
    let r = s
        .post("/v1/encrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(plain.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        local_decrypt(&r.bytes().await.unwrap(), &key_source()),
        plain
    );
    let m = s.metrics().await;
    assert!(m.contains("code=\"client_disconnected\""), "{m}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_bodies_time_out_and_a_full_queue_says_busy() {
    let s = start(|c| {
        c.limits.idle_timeout = Duration::from_millis(700);
        c.limits.max_concurrent = 1;
        c.limits.queue = 0;
    })
    .await;
    // Ten bytes of a header, then nothing: 408 before any output.
    let mut tcp = partial_upload(s.addr, &s.token, "/v1/decrypt", 1000, 10);
    // Meanwhile the only slot is taken and there is no queue: 503.
    wait_for_metric(&s, "clustercrypt_requests_in_flight 1").await;
    let r = s
        .post("/v1/encrypt")
        .header("x-clustercrypt-key", key_hex())
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["retry-after"], "1");
    let (status, body) = json(r).await;
    assert_eq!((status, body["code"].as_str()), (503, Some("busy")));
    let mut answer = String::new();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = tcp.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_requests_in_flight_finish() {
    let s = start(|_| {}).await;
    let plain = data(500_000, 7);
    // A slow upload: ten pieces, 100 ms apart.
    let pieces: Vec<Vec<u8>> = plain.chunks(50_000).map(<[u8]>::to_vec).collect();
    let slow = futures_util::StreamExt::then(futures_util::stream::iter(pieces), |p| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok::<_, std::io::Error>(p)
    });
    let request = s
        .post("/v1/encrypt?chunk_size=64K")
        .header("x-clustercrypt-key", key_hex())
        .body(reqwest::Body::wrap_stream(slow))
        .send();
    let in_flight = tokio::spawn(async move {
        let r = request.await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap()
    });
    wait_for_metric(&s, "clustercrypt_requests_in_flight 1").await;
    let addr = s.addr;
    let stopped = tokio::spawn(s.shutdown());
    tokio::time::sleep(Duration::from_millis(200)).await;
    // No new connections once shutdown started.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    let sealed = in_flight.await.unwrap();
    assert_eq!(local_decrypt(&sealed, &key_source()), plain);
    stopped.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_metrics_and_bench() {
    let s = start(|_| {}).await;
    let get = |path: &str| s.client.get(format!("{}{path}", s.url)).send();
    let health = get("/healthz").await.unwrap();
    assert_eq!(
        json(health).await,
        (200, serde_json::json!({"status": "ok"}))
    );
    let page = get("/").await.unwrap();
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    let page = page.text().await.unwrap();
    for id in [
        "token",
        "file",
        "passphrase",
        "suite",
        "encrypt",
        "decrypt",
        "status",
        "download",
        "bench",
    ] {
        assert!(
            page.contains(&format!("id=\"{id}\"")),
            "the page lacks #{id}"
        );
    }
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page loads nothing from elsewhere"
    );
    let api = get("/openapi.yaml").await.unwrap().text().await.unwrap();
    assert!(api.starts_with("openapi: 3.0") && api.contains("/v1/encrypt:"));
    let bench = s
        .client
        .get(format!("{}/v1/bench", s.url))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    let (status, report) = json(bench).await;
    assert_eq!(
        (status, report["schema"].as_str()),
        (200, Some("clustercrypt-bench/1"))
    );
    let r = s
        .post("/v1/encrypt")
        .header("x-clustercrypt-key", key_hex())
        .body(vec![5u8; 1000])
        .send()
        .await
        .unwrap();
    let out = r.bytes().await.unwrap().len();
    let m = s.metrics().await;
    for line in [
        "clustercrypt_requests_total{endpoint=\"encrypt\",status=\"200\"} 1".to_string(),
        "clustercrypt_bytes_in_total{endpoint=\"encrypt\"} 1000".into(),
        format!("clustercrypt_bytes_out_total{{endpoint=\"encrypt\"}} {out}"),
        "clustercrypt_requests_total{endpoint=\"healthz\",status=\"200\"} 1".into(),
        "clustercrypt_requests_in_flight 0".into(),
        "clustercrypt_request_duration_seconds_bucket{le=\"+Inf\"}".into(),
        "clustercrypt_request_duration_seconds_sum".into(),
    ] {
        assert!(m.contains(&line), "{line} missing from\n{m}");
    }
    assert!(!m.contains("clustercrypt_errors_total"), "no errors:\n{m}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_self_signed_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_pem = cert.cert.pem();
    std::fs::write(dir.path().join("cert.pem"), &cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
    let (mut c, token) = config(dir.path());
    c.tls = Some(TlsFiles {
        cert: dir.path().join("cert.pem"),
        key: dir.path().join("key.pem"),
    });
    let tls_client = reqwest::Client::builder()
        .no_proxy()
        .tls_certs_only([reqwest::Certificate::from_pem(cert_pem.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let s = start_with(dir, c, token, tls_client).await;
    assert!(s.url.starts_with("https://127.0.0.1:"));
    let plain = data(200_000, 8);
    let sealed = s.encrypt_with_key("/v1/encrypt", &plain).await;
    assert_eq!(local_decrypt(&sealed, &key_source()), plain);
    // Plain HTTP to the HTTPS port gets nowhere.
    let plain_http = client()
        .get(format!("http://{}/healthz", s.addr))
        .send()
        .await;
    assert!(plain_http.is_err() || !plain_http.unwrap().status().is_success());
    s.shutdown().await;
}

#[tokio::test]
async fn unsafe_configurations_are_refused() {
    let c = ServeConfig::new("0.0.0.0:0".parse().unwrap(), Auth::None);
    assert!(Server::bind(c).await.unwrap_err().is_usage());
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _) = config(dir.path());
    c.tls = Some(TlsFiles {
        cert: dir.path().join("missing.pem"),
        key: dir.path().join("missing.pem"),
    });
    let e = Server::bind(c).await.unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("missing.pem"), "{e}");
    let (mut c, _) = config(dir.path());
    std::fs::write(dir.path().join("bad.json"), "{}").unwrap();
    c.bench = BenchSource::File(dir.path().join("bad.json"));
    assert!(Server::bind(c).await.unwrap_err().is_usage());
}

/// Reads an HTTP/1.1 response with a chunked body from `tcp` to its end.
fn read_chunked_response(tcp: &mut std::net::TcpStream) -> (String, Vec<u8>) {
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = Vec::new();
    let mut rest = &raw[split..];
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("size line");
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16)
            .expect("hex chunk size");
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (head, body);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_send_everything_before_reading_do_not_deadlock() {
    // Browsers and Python's http.client upload the whole body before reading;
    // the output (here 48 MiB, far more than socket buffers) must not wait for them.
    let s = start(|_| {}).await;
    let plain = data(48 << 20, 9);
    let (addr, token, body) = (s.addr, s.token.clone(), plain.clone());
    let response = tokio::task::spawn_blocking(move || {
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            tcp,
            "POST /v1/encrypt HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\
             X-Clustercrypt-Key: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            key_hex(),
            body.len()
        )
        .unwrap();
        tcp.write_all(&body).unwrap();
        read_chunked_response(&mut tcp)
    });
    let (head, sealed) = tokio::time::timeout(Duration::from_secs(90), response)
        .await
        .expect("no deadlock")
        .unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(local_decrypt(&sealed, &key_source()) == plain);
    s.shutdown().await;
}
