//! Nothing left behind, even when killed: the real binary is killed with
//! SIGKILL (as by the OOM killer, or a node dying in a cluster job) at chosen
//! points of a run, and the directory must then hold exactly what it held
//! before: no output, no hidden partial file.
//!
//! The kill points are found by watching the child in `/proc`: its resident
//! memory (Argon2 at work, nothing written yet), and its `wchar` count of
//! bytes written (half of the output, nearly all of it, all of it while the
//! data is synced). At every kill the test checks that the child had the
//! output open, so that the kill did come while a run was writing.
//!
//! Directories: `CLUSTERCRYPT_KILL_TEST_DIRS` (colon-separated) names the
//! directories to work in, one run of every test in each (the CI gives a
//! tmpfs and a loop-mounted ext4); by default `/dev/shm` (tmpfs, when
//! present) and Cargo's target temporary directory (the work tree's file
//! system). The named fallback is forced with `CLUSTERCRYPT_TEST_NO_TMPFILE=1`
//! (see `clustercrypt_engine::output`).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_clustercrypt");
const PASS_ENV: &str = "CLUSTERCRYPT_TEST_PASSPHRASE";
const PASSPHRASE: &str = "Kill-Horse-Battery-Staple-7d20";
const NO_TMPFILE: &str = "CLUSTERCRYPT_TEST_NO_TMPFILE";
const STOP_AFTER: &str = "CLUSTERCRYPT_TEST_STOP_AFTER_BYTES";
/// Big enough that a decryption takes a few hundred milliseconds here, and
/// that the window between two kill points is many polls wide.
const DATA: usize = 64 << 20;
/// An Argon2 that takes a while and shows in the resident memory.
const SLOW_KDF: [&str; 6] = [
    "--kdf-memory",
    "131072",
    "--kdf-iterations",
    "1",
    "--kdf-parallel",
    "1",
];
/// Resident memory that only Argon2 reaches before anything is written.
const KDF_RSS: u64 = 64 << 20;

/// The directories to test in.
fn base_dirs() -> Vec<PathBuf> {
    if let Some(v) = std::env::var_os("CLUSTERCRYPT_KILL_TEST_DIRS")
        && !v.is_empty()
    {
        return std::env::split_paths(&v).collect();
    }
    let mut dirs = Vec::new();
    if Path::new("/dev/shm").is_dir() {
        dirs.push(PathBuf::from("/dev/shm"));
    }
    dirs.push(PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    dirs
}

/// Deterministic test data.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Every entry of a directory: name -> (size, modification time, mode).
type Snapshot = BTreeMap<String, (u64, i64, i64, u32)>;

fn snapshot(dir: &Path) -> Snapshot {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (m.len(), m.mtime(), m.mtime_nsec(), m.mode()),
            )
        })
        .collect()
}

/// A number from `/proc/PID/FILE`, on the line that starts with `key`.
fn proc_number(pid: u32, file: &str, key: &str) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Bytes the process wrote so far (files and sockets).
fn written(pid: u32) -> Option<u64> {
    proc_number(pid, "io", "wchar:")
}

/// Whether the process is stopped by a signal (state `T` in `/proc/PID/stat`,
/// after the parenthesised command name).
fn stopped(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s[s.rfind(')')? + 1..].trim_start().starts_with('T')))
        .unwrap_or(false)
}

/// Resident memory in bytes.
fn resident(pid: u32) -> Option<u64> {
    proc_number(pid, "status", "VmRSS:").map(|kib| kib << 10)
}

/// Whether the process has a file open for output in `dir`: the unnamed
/// `O_TMPFILE` file (`dir/#INODE (deleted)`) or a `.clustercrypt-` partial.
fn has_output_open(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let dir = fs::canonicalize(dir).unwrap();
    fds.filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .any(|target| {
            let name = target
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            target.parent() == Some(dir.as_path())
                && (name.starts_with('#') || name.starts_with(".clustercrypt-"))
        })
}

/// When to kill.
#[derive(Debug, Clone, Copy)]
enum When {
    /// While Argon2 runs: memory in use, nothing written.
    Kdf,
    /// Once the process wrote this many bytes (files and sockets), as seen
    /// by polling: for points with a wide window around them.
    Wrote(u64),
    /// Exactly once this many bytes went into the output: the process stops
    /// itself there (`CLUSTERCRYPT_TEST_STOP_AFTER_BYTES`), however fast it
    /// runs, and is killed while stopped.
    Output(u64),
}

/// How a kill went.
#[derive(Debug)]
enum Outcome {
    /// Killed; `open`: while the output was open in the directory.
    Killed { open: bool },
    /// The run ended before the kill point came.
    Finished(ExitStatus),
}

/// Starts `args` in `dir` and kills it with SIGKILL at `when`.
fn kill_at(dir: &Path, args: &[&str], env: &[(&str, &str)], when: When) -> (Outcome, u32) {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env(PASS_ENV, PASSPHRASE)
        .env_remove(NO_TMPFILE)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let When::Output(n) = when {
        cmd.env(STOP_AFTER, n.to_string());
    }
    let mut child = cmd.spawn().expect("start clustercrypt");
    let pid = child.id();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (Outcome::Finished(status), pid);
        }
        let due = match when {
            When::Kdf => {
                resident(pid).unwrap_or(0) >= KDF_RSS && written(pid).unwrap_or(u64::MAX) == 0
            }
            When::Wrote(n) => written(pid).unwrap_or(0) >= n,
            When::Output(_) => stopped(pid),
        };
        if due {
            let open = has_output_open(pid, dir);
            child.kill().unwrap();
            let status = child.wait().unwrap();
            if status.code().is_some() {
                return (Outcome::Finished(status), pid);
            }
            return (Outcome::Killed { open }, pid);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{args:?}: {when:?} never came"
        );
        std::thread::sleep(Duration::from_micros(300));
    }
}

/// Runs the binary in `dir` to the end.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env(PASS_ENV, PASSPHRASE)
        .env_remove(NO_TMPFILE)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run clustercrypt")
}

fn ok(dir: &Path, args: &[&str]) -> Output {
    let out = run(dir, args, &[]);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A work directory in `base` with a key, a large plaintext and its
/// encryption, and (`passphrase`) a small file encrypted with a slow KDF.
struct Work {
    dir: TempDir,
    plain: Vec<u8>,
}

impl Work {
    fn new(base: &Path, passphrase: bool) -> Work {
        let dir = tempfile::Builder::new()
            .prefix("cc-kill-")
            .tempdir_in(base)
            .unwrap();
        let plain = data(DATA, base.as_os_str().len() as u64);
        fs::write(dir.path().join("plain"), &plain).unwrap();
        let d = dir.path();
        ok(d, &["keygen", "-o", "k.key"]);
        ok(
            d,
            &[
                "encrypt",
                "-q",
                "--key-file",
                "k.key",
                "-o",
                "big.cc",
                "plain",
            ],
        );
        if passphrase {
            fs::write(d.join("small"), data(1 << 20, 7)).unwrap();
            let mut args = vec!["encrypt", "-q", "--passphrase-env", PASS_ENV];
            args.extend(SLOW_KDF);
            args.extend(["-o", "small.cc", "small"]);
            ok(d, &args);
        }
        Work { dir, plain }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Kills `args` at `when` and checks the directory. `strict`: the kill
    /// must come before the run ends (otherwise the run may have completed,
    /// and then the output must be whole and right).
    fn kill_and_check(&self, args: &[&str], when: When, strict: bool, expect: &[u8]) {
        let before = snapshot(self.path());
        let (outcome, _) = kill_at(self.path(), args, &[], when);
        let after = snapshot(self.path());
        if strict {
            assert!(
                matches!(outcome, Outcome::Killed { open: true }),
                "{args:?} at {when:?}: not killed while the output was open: {outcome:?}"
            );
        }
        // Unless strict, the kill may come after the output was named (then
        // it must be whole), or the run may end first.
        let unchanged = after == before;
        match outcome {
            Outcome::Killed { .. } if strict || unchanged => assert!(
                unchanged,
                "{args:?} killed at {when:?} in {}: the directory changed",
                self.path().display()
            ),
            _ => {
                if let Outcome::Finished(status) = outcome {
                    assert!(status.success(), "{args:?}: {status}");
                }
                let out = args[args.iter().position(|a| *a == "-o").unwrap() + 1];
                let mut grown = before.clone();
                grown.insert(out.to_owned(), after[out]);
                assert_eq!(after, grown, "{args:?}: more than the output appeared");
                assert!(fs::read(self.path().join(out)).unwrap() == expect);
                fs::remove_file(self.path().join(out)).unwrap();
            }
        }
    }
}

#[test]
fn a_killed_run_leaves_the_directory_as_it_was() {
    for base in base_dirs() {
        let w = Work::new(&base, true);
        let size = DATA as u64;
        let decrypt = [
            "decrypt",
            "-q",
            "--key-file",
            "k.key",
            "-o",
            "out",
            "big.cc",
        ];
        // During the key derivation, before a byte is written.
        let pass = [
            "decrypt",
            "-q",
            "--passphrase-env",
            PASS_ENV,
            "-o",
            "out",
            "small.cc",
        ];
        w.kill_and_check(&pass, When::Kdf, true, &[]);
        // In the middle, near the end, and once everything is written.
        w.kill_and_check(&decrypt, When::Output(size / 2), true, &[]);
        w.kill_and_check(&decrypt, When::Output(size - size / 32), true, &[]);
        w.kill_and_check(&decrypt, When::Output(size), true, &[]);
        // Polled, so that the kill may come while the data is synced and
        // named (the output may then be complete).
        w.kill_and_check(&decrypt, When::Wrote(size), false, &w.plain);
        // Encryption, and the same over an existing output with --force.
        let encrypt = ["encrypt", "-q", "--key-file", "k.key", "-o", "out", "plain"];
        w.kill_and_check(&encrypt, When::Output(size / 2), true, &[]);
        fs::write(w.path().join("old"), b"the old output").unwrap();
        let force = [
            "decrypt",
            "-q",
            "--force",
            "--key-file",
            "k.key",
            "-o",
            "old",
            "big.cc",
        ];
        w.kill_and_check(&force, When::Output(size / 2), true, &[]);
        assert_eq!(fs::read(w.path().join("old")).unwrap(), b"the old output");
        // The raw (unauthenticated) modes write through the same output.
        let key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        fs::write(w.path().join("raw.key"), key).unwrap();
        let raw = [
            "encrypt",
            "-q",
            "--raw",
            "--cipher",
            "aes-ctr",
            "--key-hex-file",
            "raw.key",
            "--iv",
            "000102030405060708090a0b0c0d0e0f",
            "-o",
            "out",
            "plain",
        ];
        w.kill_and_check(&raw, When::Output(size / 2), true, &[]);
    }
}

#[test]
fn the_fallback_leaves_a_named_partial_that_the_next_run_removes() {
    for base in base_dirs() {
        let w = Work::new(&base, false);
        let d = w.path();
        let before = snapshot(d);
        let decrypt = [
            "decrypt",
            "-q",
            "--key-file",
            "k.key",
            "-o",
            "out",
            "big.cc",
        ];
        let forced = [(NO_TMPFILE, "1")];
        let (outcome, pid) = kill_at(d, &decrypt, &forced, When::Output(DATA as u64 / 2));
        assert!(
            matches!(outcome, Outcome::Killed { open: true }),
            "{outcome:?}"
        );
        let after = snapshot(d);
        let new: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        assert_eq!(new.len(), 1, "{new:?}");
        let partial = new[0].clone();
        assert!(
            partial.starts_with(&format!(".clustercrypt-{pid}-")) && partial.ends_with(".partial"),
            "{partial}"
        );
        assert_eq!(after[&partial].3 & 0o777, 0o600, "the partial is private");
        assert!(after[&partial].0 > 0);

        // The next run that writes in this directory removes it and says so.
        let out = ok(d, &["keygen", "-o", "next.key"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("removed ./{partial}, a partial output"))
                && stderr.contains(&format!("process {pid}")),
            "{stderr}"
        );
        let mut expected = before.clone();
        expected.insert("next.key".into(), snapshot(d)["next.key"]);
        assert_eq!(snapshot(d), expected);
        fs::remove_file(d.join("next.key")).unwrap();

        // The forced fallback completes and fails cleanly too.
        let out = run(d, &decrypt, &forced);
        assert!(out.status.success(), "{out:?}");
        assert!(fs::read(d.join("out")).unwrap() == w.plain);
        fs::remove_file(d.join("out")).unwrap();
        let mut bad = fs::read(d.join("big.cc")).unwrap();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        fs::write(d.join("bad.cc"), bad).unwrap();
        let before = snapshot(d);
        let out = run(
            d,
            &[
                "decrypt",
                "-q",
                "--key-file",
                "k.key",
                "-o",
                "out",
                "bad.cc",
            ],
            &forced,
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(snapshot(d), before);
    }
}

/// A `clustercrypt serve` on a loopback port in its own directory, killed
/// when dropped.
struct Server {
    child: Child,
    url: String,
    /// Its working and temporary directory.
    home: TempDir,
}

impl Server {
    fn start(client_dir: &Path) -> Server {
        let home = tempfile::Builder::new()
            .prefix("cc-kill-serve-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let h = home.path();
        ok(
            h,
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
            h,
            &["token", "create", "--tokens", "tokens.txt", "--name", "k"],
        );
        let token = String::from_utf8(created.stdout).unwrap();
        fs::write(client_dir.join("k.token"), token.trim()).unwrap();
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--tokens",
                "tokens.txt",
                "--bench-results",
                "bench.json",
            ])
            .current_dir(h)
            .env("TMPDIR", h)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("clustercrypt: listening on ") {
                    let _ = tx.send(url.trim().trim_end_matches('/').to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server did not say where it listens");
        Server { child, url, home }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_killed_remote_client_leaves_nothing() {
    for base in base_dirs() {
        let w = Work::new(&base, false);
        let server = Server::start(w.path());
        let size = DATA as u64;
        let remote = |op: &'static str, input: &'static str| {
            vec![
                "remote",
                op,
                "-q",
                "--server",
                &server.url,
                "--token-file",
                "k.token",
                "--key-file",
                "k.key",
                "-o",
                "out",
                input,
            ]
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<String>>()
        };
        fn strs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        // The client writes the upload to the socket and the answer to the
        // output: `wchar` counts both.
        let decrypt = remote("decrypt", "big.cc");
        let encrypt = remote("encrypt", "plain");
        let server_files = snapshot(server.home.path());
        w.kill_and_check(&strs(&decrypt), When::Wrote(size / 4), true, &[]);
        w.kill_and_check(&strs(&decrypt), When::Wrote(size * 3 / 2), true, &[]);
        w.kill_and_check(&strs(&encrypt), When::Wrote(size), true, &[]);
        // The server keeps serving, and nothing of the killed requests stays in
        // its temporary directory (spool files are unnamed from the start).
        let out = run(w.path(), &strs(&decrypt), &[]);
        assert!(out.status.success(), "{out:?}");
        assert!(fs::read(w.path().join("out")).unwrap() == w.plain);
        let names = |s: &Snapshot| s.keys().cloned().collect::<Vec<_>>();
        assert_eq!(names(&snapshot(server.home.path())), names(&server_files));
    }
}
