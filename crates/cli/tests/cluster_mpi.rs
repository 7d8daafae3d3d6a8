//! `--cluster` under a real `mpirun`, three ranks on this machine.
//! Built only with `--features mpi`; CI runs it on Open MPI and on MPICH (a build
//! with `MPICC=mpicc.mpich` and `CLUSTERCRYPT_TEST_MPI=mpich`).
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::Command;

/// The launcher of the MPI the binary was built against, for `ranks` ranks on
/// this machine: Open MPI's unless `CLUSTERCRYPT_TEST_MPI=mpich`.
fn launcher(ranks: usize) -> Command {
    let n = ranks.to_string();
    if std::env::var("CLUSTERCRYPT_TEST_MPI").as_deref() == Ok("mpich") {
        // Hydra: oversubscribes and leaves ranks unbound by default.
        let mut cmd = Command::new("mpirun.mpich");
        cmd.args(["-launcher", "fork", "-n", &n]);
        cmd
    } else {
        let mut cmd = Command::new("mpirun.openmpi");
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["-n", &n, "--oversubscribe", "--bind-to", "none"]);
        cmd
    }
}

fn mpirun(ranks: usize, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("clustercrypt");
    let mut cmd = launcher(ranks);
    cmd.current_dir(dir).arg(bin).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .expect("mpirun runs (install openmpi-bin, or mpich)")
}

fn local(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("clustercrypt"));
    cmd.current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..3_500_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    std::fs::write(dir.path().join("data"), data).unwrap();
    assert!(
        local(&["keygen", "-o", "k.key"], dir.path(), &[])
            .status
            .success()
    );
    dir
}

#[test]
fn cluster_encrypt_and_decrypt_round_trip() {
    let dir = setup();
    let d = dir.path();
    let out = mpirun(
        3,
        &[
            "encrypt",
            "--cluster",
            "--key-file",
            "k.key",
            "--chunk-size",
            "256K",
            "-o",
            "c",
            "data",
        ],
        d,
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Decrypt locally and on the cluster.
    assert!(
        local(&["decrypt", "--key-file", "k.key", "-o", "p1", "c"], d, &[])
            .status
            .success()
    );
    let out = mpirun(
        3,
        &[
            "decrypt",
            "--cluster",
            "--key-file",
            "k.key",
            "-o",
            "p2",
            "c",
        ],
        d,
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read(d.join("data")).unwrap();
    assert_eq!(std::fs::read(d.join("p1")).unwrap(), data);
    assert_eq!(std::fs::read(d.join("p2")).unwrap(), data);
}

#[test]
fn cluster_raw_tea_equals_local() {
    let dir = setup();
    let d = dir.path();
    let env = [("TK", "00112233445566778899aabbccddeeff")];
    let args = |out: &'static str| {
        vec![
            "encrypt",
            "--raw",
            "--cipher",
            "tea-ecb",
            "--padding",
            "none",
            "--key-env",
            "TK",
            "--rounds",
            "4",
            "-o",
            out,
            "data",
        ]
    };
    let mut cluster_args = args("c");
    cluster_args.push("--cluster");
    let out = mpirun(3, &cluster_args, d, &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(local(&args("l"), d, &env).status.success());
    assert_eq!(
        std::fs::read(d.join("c")).unwrap(),
        std::fs::read(d.join("l")).unwrap()
    );
}

#[test]
fn cluster_decrypt_of_a_tampered_file_fails_and_leaves_nothing() {
    let dir = setup();
    let d = dir.path();
    assert!(
        local(
            &[
                "encrypt",
                "--key-file",
                "k.key",
                "--chunk-size",
                "64K",
                "-o",
                "c",
                "data"
            ],
            d,
            &[]
        )
        .status
        .success()
    );
    let mut c = std::fs::read(d.join("c")).unwrap();
    let at = 100 + 20 * (65536 + 16) + 9;
    c[at] ^= 4;
    std::fs::write(d.join("c"), c).unwrap();
    let out = mpirun(
        3,
        &[
            "decrypt",
            "--cluster",
            "--key-file",
            "k.key",
            "-o",
            "p",
            "c",
        ],
        d,
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chunk 20 failed authentication"), "{err}");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(!d.join("p").exists(), "{left:?}");
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with(".clustercrypt-")),
        "{left:?}"
    );
}

#[test]
fn a_usage_error_on_rank_0_stops_every_rank() {
    let dir = setup();
    let d = dir.path();
    std::fs::write(d.join("exists"), b"x").unwrap();
    let out = mpirun(
        3,
        &[
            "encrypt",
            "--cluster",
            "--key-file",
            "k.key",
            "-o",
            "exists",
            "data",
        ],
        d,
        &[],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(std::fs::read(d.join("exists")).unwrap(), b"x");
}

#[test]
fn bench_cluster_reports_every_node_and_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = mpirun(
        3,
        &[
            "bench",
            "--cluster",
            "--sweep",
            "--cipher",
            "aes-xts-plain64",
            "-s",
            "512",
            "--time",
            "0.05",
            "--format",
            "json",
        ],
        dir.path(),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON report, from rank 0");
    let c = &j["cluster"];
    assert_eq!(c["ranks"], 3);
    let row = &c["rows"][0];
    assert_eq!(row["cipher"], "aes-xts");
    assert_eq!(row["nodes"], 3);
    assert_eq!(row["per_node"].as_array().unwrap().len(), 3);
    let sum: f64 = row["per_node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["encrypt_mib_s"].as_f64().unwrap())
        .sum();
    assert!((row["encrypt_mib_s"].as_f64().unwrap() - sum).abs() < 1e-6);
    let sweep: Vec<u64> = c["sweep"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["nodes"].as_u64().unwrap())
        .collect();
    assert_eq!(sweep, [1, 2, 3]);
    assert!(row["start_skew_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn serve_cluster_spreads_requests_and_shuts_down_cleanly() {
    use std::io::{BufRead, BufReader};
    let dir = setup();
    let d = dir.path();
    let token = local(&["token", "create", "--tokens", "tokens"], d, &[]);
    assert!(token.status.success());
    std::fs::write(d.join("token"), &token.stdout).unwrap();
    let bench = local(
        &[
            "bench",
            "--cipher",
            "aes-cbc",
            "--time",
            "0.05",
            "--no-kdf",
            "--format",
            "json",
            "-o",
            "bench.json",
        ],
        d,
        &[],
    );
    assert!(bench.status.success());
    let mut server = launcher(3)
        .current_dir(d)
        .arg(assert_cmd::cargo::cargo_bin("clustercrypt"))
        .args([
            "serve",
            "--cluster",
            "--listen",
            "127.0.0.1:0",
            "--tokens",
            "tokens",
            "--threads",
            "1",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun runs");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server says where it listens")
            .unwrap();
        if let Some(rest) = line.strip_prefix("clustercrypt: listening on ") {
            break rest.trim().to_string();
        }
    };
    // The rest of the log, read in the background (it names the nodes used).
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let remote = |op: &str, input: &str, output: &str| {
        local(
            &[
                "remote",
                op,
                "--server",
                &url,
                "--token-file",
                "token",
                "--key-file",
                "k.key",
                "-q",
                "-o",
                output,
                input,
            ],
            d,
            &[],
        )
    };
    // GET /v1/bench: the cluster, every rank measured before serving began.
    let token_text = String::from_utf8(token.stdout.clone()).unwrap();
    let hostport = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut tcp = std::net::TcpStream::connect(&hostport).unwrap();
    use std::io::{Read, Write};
    write!(
        tcp,
        "GET /v1/bench HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        token_text.trim()
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"ranks\":3"), "{answer}");

    let enc = remote("encrypt", "data", "c");
    assert!(
        enc.status.success(),
        "{}",
        String::from_utf8_lossy(&enc.stderr)
    );
    let dec = remote("decrypt", "c", "p");
    assert!(
        dec.status.success(),
        "{}",
        String::from_utf8_lossy(&dec.stderr)
    );
    assert!(std::fs::read(d.join("p")).unwrap() == std::fs::read(d.join("data")).unwrap());
    // The server's file decrypts locally too.
    assert!(
        local(&["decrypt", "--key-file", "k.key", "-o", "p2", "c"], d, &[])
            .status
            .success()
    );
    // SIGTERM to mpirun reaches every rank: rank 0 finishes, then releases the workers.
    let pid = server.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = server.wait().unwrap();
    let log = log.join().unwrap().join("\n");
    // mpirun itself exits 1 whenever it was signalled, however the ranks
    // ended; that they ended cleanly shows in the log.
    assert!(
        status.code().is_some(),
        "mpirun was killed: {status}\n{log}"
    );
    assert!(log.contains("clustercrypt: stopped"), "{log}");
    assert!(
        !log.contains("error") && !log.contains("signal"),
        "a rank failed: {log}"
    );
    assert!(
        log.contains("on 3 nodes") || log.contains("on 2 nodes") || log.contains("on rank 0 alone"),
        "{log}"
    );
    assert!(log.contains("POST /v1/encrypt 200"), "{log}");
}
