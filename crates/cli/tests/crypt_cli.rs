//! `clustercrypt encrypt`, `decrypt` and `keygen`, run as the real binary.
//!
//! Every test works in its own temporary directory (the binary runs with that
//! directory as its working directory), and every failure path checks the
//! exit code, the message, and that neither the output nor a
//! `.clustercrypt-*` temporary file was left behind. Every run goes through
//! [`run`], which also checks that no passphrase ever reaches stdout or stderr.
//!
//! Argon2 runs with `--kdf-memory 64 --kdf-iterations 1 --kdf-parallel 1` to
//! keep the suite fast; the raw-mode tests compare bytes with
//! `/usr/bin/openssl enc` (OpenSSL 3, with the legacy provider for DES,
//! Blowfish, RC2 and RC4).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use assert_cmd::cargo::CommandCargoExt;
use predicates::prelude::*;
use tempfile::TempDir;

/// The binary under test, started through Cargo's target runner when one is set
/// (QEMU for the ARM cross builds), as assert_cmd's `cargo_bin` does.
fn bin() -> std::process::Command {
    std::process::Command::cargo_bin("clustercrypt").unwrap()
}
const OPENSSL: &str = "/usr/bin/openssl";

/// The passphrase of every passphrase test; it must never be printed.
const PASSPHRASE: &str = "Correct-Horse-Battery-Staple-4f1b9c";
/// A wrong passphrase; it must never be printed either.
const WRONG_PASSPHRASE: &str = "Incorrect-Donkey-Battery-Staple-77e2";
/// The environment variable every command gets the passphrase in.
const PASS_ENV: &str = "CLUSTERCRYPT_TEST_PASSPHRASE";
/// The environment variable every command gets the wrong passphrase in.
const WRONG_ENV: &str = "CLUSTERCRYPT_TEST_WRONG_PASSPHRASE";

/// Cheap Argon2 for tests; the construction is the same.
const FAST_KDF: [&str; 6] = [
    "--kdf-memory",
    "64",
    "--kdf-iterations",
    "1",
    "--kdf-parallel",
    "1",
];

const SUITES: [&str; 5] = [
    "aes-256-gcm",
    "chacha20-poly1305",
    "aes-256-ctr-hmac-sha256",
    "twofish-256-ctr-hmac-sha256",
    "serpent-256-ctr-hmac-sha256",
];

const HEADER: usize = 100;
const CHUNK: usize = 4096;
const MIB: usize = 1 << 20;
/// A size of about 20 chunks of 4 KiB that does not end on a chunk boundary:
/// 21 chunks, indices 0 to 20, the last one 1000 bytes.
const TWENTY_CHUNKS: usize = 20 * CHUNK + 1000;

fn tag_len(suite: &str) -> usize {
    if suite.contains("hmac") { 32 } else { 16 }
}

/// Bytes of one full sealed chunk.
fn stride(suite: &str) -> usize {
    CHUNK + tag_len(suite)
}

/// The size of a sealed file: header, plaintext, one tag per chunk; an empty
/// plaintext still has one (empty) chunk.
fn sealed_len(suite: &str, plain: usize) -> usize {
    HEADER + plain + plain.div_ceil(CHUNK).max(1) * tag_len(suite)
}

/// Deterministic pseudo-random bytes (xorshift64).
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 29) as u8
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Runs `cmd` and checks that no passphrase appears in its stdout or stderr.
fn run(cmd: &mut Command) -> Assert {
    let assert = cmd.assert();
    let out = assert.get_output();
    for secret in [PASSPHRASE, WRONG_PASSPHRASE] {
        assert!(
            !contains(&out.stdout, secret.as_bytes()),
            "a passphrase was printed on stdout"
        );
        assert!(
            !contains(&out.stderr, secret.as_bytes()),
            "a passphrase was printed on stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert
}

fn stderr_of(a: &Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// A scratch directory the binary runs in.
struct Dir(TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::Builder::new()
            .prefix("crypt-cli-")
            .tempdir()
            .expect("temporary directory"))
    }

    fn root(&self) -> &Path {
        self.0.path()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        fs::write(self.path(name), bytes).unwrap();
    }

    fn read(&self, name: &str) -> Vec<u8> {
        fs::read(self.path(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"))
    }

    fn exists(&self, name: &str) -> bool {
        self.path(name).symlink_metadata().is_ok()
    }

    fn remove(&self, name: &str) {
        fs::remove_file(self.path(name)).unwrap();
    }

    /// The binary, running in this directory, with both passphrases in the
    /// environment (and nothing on the command line).
    fn cc(&self) -> Command {
        let mut c = Command::from_std(bin());
        c.current_dir(self.0.path())
            .env(PASS_ENV, PASSPHRASE)
            .env(WRONG_ENV, WRONG_PASSPHRASE)
            .timeout(Duration::from_secs(300));
        c
    }

    fn entries(&self) -> BTreeSet<String> {
        fs::read_dir(self.0.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    fn leftovers(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter(|n| n.starts_with(".clustercrypt-"))
            .collect()
    }

    /// Neither `out` nor any temporary file exists.
    fn assert_nothing_written(&self, out: &str) {
        assert!(!self.exists(out), "{out} must not exist after a failure");
        assert_eq!(
            self.leftovers(),
            Vec::<String>::new(),
            "temporary files left"
        );
    }

    /// A fixed key file `key` (64 hex digits) and a different one `other.key`.
    fn keys(&self) {
        self.write("key", format!("{}\n", hex(&data(32, 1))).as_bytes());
        self.write("other.key", format!("{}\n", hex(&data(32, 2))).as_bytes());
    }

    /// Passphrase files `pass` (right) and `wrong-pass` (wrong).
    fn passphrases(&self) {
        self.write("pass", format!("{PASSPHRASE}\n").as_bytes());
        self.write("wrong-pass", format!("{WRONG_PASSPHRASE}\n").as_bytes());
    }

    fn encrypt(&self, key: &[&str], extra: &[&str], input: &str, output: &str) -> Assert {
        run(self
            .cc()
            .arg("encrypt")
            .args(key)
            .args(FAST_KDF)
            .args(extra)
            .args(["-q", "-o", output, input]))
    }

    fn decrypt(&self, key: &[&str], extra: &[&str], input: &str, output: &str) -> Assert {
        run(self
            .cc()
            .arg("decrypt")
            .args(key)
            .args(extra)
            .args(["-q", "-o", output, input]))
    }

    /// Writes `plain` (`len` bytes) and `sealed` (it, encrypted with `key`,
    /// 4 KiB chunks, `suite`); returns the plaintext.
    fn sealed(&self, suite: &str, len: usize) -> Vec<u8> {
        self.keys();
        let plain = data(len, 7);
        self.write("plain", &plain);
        self.encrypt(
            &["--key-file", "key"],
            &["--suite", suite, "--chunk-size", "4K"],
            "plain",
            "sealed",
        )
        .success();
        assert_eq!(self.read("sealed").len(), sealed_len(suite, len));
        plain
    }

    /// Decrypting `input` with `key` fails with `code` and `message`, prints
    /// nothing on stdout and leaves no output.
    fn decrypt_fails(&self, key: &[&str], input: &str, code: i32, message: &str) {
        self.decrypt(key, &["--threads", "3"], input, "out")
            .code(code)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("clustercrypt: error: "))
            .stderr(predicate::str::contains(message));
        self.assert_nothing_written("out");
    }
}

const KEY_FILE: [&str; 2] = ["--key-file", "key"];
const PASS_FILE: [&str; 2] = ["--passphrase-file", "pass"];
const PASS_ENV_ARGS: [&str; 2] = ["--passphrase-env", PASS_ENV];

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

#[test]
fn every_suite_round_trips_every_size_with_a_key_file() {
    for (s, suite) in SUITES.into_iter().enumerate() {
        let dir = Dir::new();
        dir.keys();
        for (i, len) in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, TWENTY_CHUNKS]
            .into_iter()
            .enumerate()
        {
            let plain = data(len, (s * 10 + i) as u64);
            dir.write("plain", &plain);
            // Encrypt on 3 threads, decrypt on 1, and the other way round.
            let (enc_threads, dec_threads) = if i % 2 == 0 { ("3", "1") } else { ("1", "3") };
            dir.encrypt(
                &KEY_FILE,
                &[
                    "--suite",
                    suite,
                    "--chunk-size",
                    "4K",
                    "--threads",
                    enc_threads,
                ],
                "plain",
                "sealed",
            )
            .success()
            .stdout(predicate::str::is_empty());
            let sealed = dir.read("sealed");
            assert_eq!(sealed.len(), sealed_len(suite, len), "{suite} {len}");
            assert_eq!(&sealed[..8], b"CLCRYPT\x1a");
            assert!(
                len < 64 || !contains(&sealed, &plain[..64]),
                "{suite} {len}: plaintext visible in the output"
            );
            dir.decrypt(&KEY_FILE, &["--threads", dec_threads], "sealed", "back")
                .success()
                .stdout(predicate::str::is_empty());
            assert_eq!(dir.read("back"), plain, "{suite} {len}");
            assert_eq!(dir.leftovers(), Vec::<String>::new());
            dir.remove("sealed");
            dir.remove("back");
        }
    }
}

#[test]
fn every_suite_round_trips_with_passphrases_from_a_file_and_the_environment() {
    for (s, suite) in SUITES.into_iter().enumerate() {
        let dir = Dir::new();
        dir.passphrases();
        for len in [0, CHUNK + 1, TWENTY_CHUNKS] {
            let plain = data(len, 100 + s as u64);
            dir.write("plain", &plain);
            for (enc_key, dec_key, threads) in [
                (PASS_FILE, PASS_ENV_ARGS, ["1", "3"]),
                (PASS_ENV_ARGS, PASS_FILE, ["3", "1"]),
            ] {
                dir.encrypt(
                    &enc_key,
                    &[
                        "--suite",
                        suite,
                        "--chunk-size",
                        "4K",
                        "--threads",
                        threads[0],
                    ],
                    "plain",
                    "sealed",
                )
                .success();
                assert_eq!(dir.read("sealed").len(), sealed_len(suite, len));
                dir.decrypt(&dec_key, &["--threads", threads[1]], "sealed", "back")
                    .success();
                assert_eq!(dir.read("back"), plain, "{suite} {len}");
                dir.remove("sealed");
                dir.remove("back");
            }
        }
    }
}

#[test]
fn a_passphrase_file_holds_its_first_line() {
    let dir = Dir::new();
    dir.passphrases();
    // CRLF and trailing lines are not part of the passphrase.
    dir.write(
        "pass-crlf",
        format!("{PASSPHRASE}\r\nsecond line\n").as_bytes(),
    );
    dir.write("plain", &data(5000, 3));
    dir.encrypt(&["--passphrase-file", "pass-crlf"], &[], "plain", "sealed")
        .success();
    dir.decrypt(&PASS_ENV_ARGS, &[], "sealed", "back").success();
    assert_eq!(dir.read("back"), dir.read("plain"));
}

#[test]
fn thread_counts_of_encryption_and_decryption_are_independent() {
    let dir = Dir::new();
    dir.keys();
    let plain = data(3 * MIB + 12345, 11);
    dir.write("plain", &plain);
    for (enc, dec) in [("1", "3"), ("3", "1"), ("all", "2"), ("7", "all")] {
        dir.encrypt(&KEY_FILE, &["--threads", enc], "plain", "sealed")
            .success();
        dir.decrypt(&KEY_FILE, &["--threads", dec], "sealed", "back")
            .success();
        assert_eq!(
            dir.read("back"),
            plain,
            "encrypt {enc} threads, decrypt {dec}"
        );
        dir.remove("sealed");
        dir.remove("back");
    }
}

#[test]
fn stdin_and_stdout_work_as_dash() {
    let dir = Dir::new();
    dir.keys();
    for (i, suite) in SUITES.into_iter().enumerate() {
        for len in [0, 1, TWENTY_CHUNKS] {
            let plain = data(len, 200 + i as u64);
            let sealed = run(dir
                .cc()
                .args(["encrypt", "--key-file", "key", "--suite", suite])
                .args(["--chunk-size", "4K", "--threads", "3", "-o", "-", "-"])
                .write_stdin(plain.clone()))
            .success()
            .get_output()
            .stdout
            .clone();
            assert_eq!(sealed.len(), sealed_len(suite, len), "{suite} {len}");
            assert_eq!(&sealed[..8], b"CLCRYPT\x1a");
            let back = run(dir
                .cc()
                .args([
                    "decrypt",
                    "--key-file",
                    "key",
                    "--threads",
                    "2",
                    "-o",
                    "-",
                    "-",
                ])
                .write_stdin(sealed.clone()))
            .success()
            .get_output()
            .stdout
            .clone();
            assert_eq!(back, plain, "{suite} {len}");
            // Mixed: file in, stdout out; stdin in, file out.
            dir.write("sealed", &sealed);
            run(dir
                .cc()
                .args(["decrypt", "--key-file", "key", "-o", "-", "sealed"]))
            .success()
            .stdout(plain.clone());
            run(dir
                .cc()
                .args(["decrypt", "--key-file", "key", "-o", "back", "-"])
                .write_stdin(sealed))
            .success()
            .stdout(predicate::str::is_empty());
            assert_eq!(dir.read("back"), plain);
            dir.remove("sealed");
            dir.remove("back");
        }
    }
}

#[test]
fn a_real_pipe_between_two_processes_round_trips() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    let plain = data(2 * MIB + 777, 17);
    dir.write("plain", &plain);
    let mut enc = bin()
        .current_dir(dir.root())
        .env(PASS_ENV, PASSPHRASE)
        .args(["encrypt", "--passphrase-env", PASS_ENV])
        .args(FAST_KDF)
        .args(["--chunk-size", "64K", "-o", "-", "plain"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dec = bin()
        .current_dir(dir.root())
        .args(["decrypt", "--passphrase-file", "pass", "-o", "-", "-"])
        .stdin(Stdio::from(enc.stdout.take().unwrap()))
        .output()
        .unwrap();
    let enc_out = enc.wait_with_output().unwrap();
    assert!(enc_out.status.success());
    assert!(
        dec.status.success(),
        "{}",
        String::from_utf8_lossy(&dec.stderr)
    );
    assert!(dec.stdout == plain, "the pipe round trip changed the data");
    for out in [&enc_out.stderr, &dec.stderr] {
        assert!(!contains(out, PASSPHRASE.as_bytes()));
    }
}

#[test]
fn the_header_is_laid_out_as_documented() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    dir.write("plain", &data(1000, 5));
    for (i, suite) in SUITES.into_iter().enumerate() {
        dir.encrypt(&KEY_FILE, &["--suite", suite], "plain", "k.sealed")
            .success();
        let h = dir.read("k.sealed");
        assert_eq!(&h[0..8], b"CLCRYPT\x1a");
        assert_eq!(&h[8..10], &[1, 0], "version 1, little-endian");
        assert_eq!(h[10], i as u8 + 1, "suite id of {suite}");
        assert_eq!(h[11], 0, "key file");
        assert_eq!(&h[12..24], &[0; 12], "no KDF parameters with a key file");
        assert_eq!(
            &h[24..28],
            &(MIB as u32).to_le_bytes(),
            "default chunk size"
        );
        assert_eq!(h[67], 0, "reserved");
        assert_eq!(h.len(), HEADER + 1000 + tag_len(suite));
        dir.remove("k.sealed");

        dir.encrypt(
            &PASS_FILE,
            &["--suite", suite, "--chunk-size", "4K"],
            "plain",
            "p.sealed",
        )
        .success();
        let h = dir.read("p.sealed");
        assert_eq!(h[11], 1, "Argon2id");
        assert_eq!(&h[12..16], &64u32.to_le_bytes());
        assert_eq!(&h[16..20], &1u32.to_le_bytes());
        assert_eq!(&h[20..24], &1u32.to_le_bytes());
        assert_eq!(&h[24..28], &4096u32.to_le_bytes());
        dir.remove("p.sealed");
    }
    // The default Argon2 cost is written into the header too.
    run(dir.cc().args([
        "encrypt",
        "--passphrase-file",
        "pass",
        "-o",
        "d.sealed",
        "plain",
    ]))
    .success();
    let h = dir.read("d.sealed");
    assert_eq!(&h[12..16], &65536u32.to_le_bytes());
    assert_eq!(&h[16..20], &3u32.to_le_bytes());
    assert_eq!(&h[20..24], &4u32.to_le_bytes());
    dir.decrypt(&PASS_FILE, &[], "d.sealed", "back").success();
    assert_eq!(dir.read("back"), dir.read("plain"));
}

#[test]
fn two_encryptions_of_one_file_with_one_key_differ() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    let plain = data(10_000, 9);
    dir.write("plain", &plain);
    for key in [&KEY_FILE[..], &PASS_FILE[..]] {
        dir.encrypt(key, &[], "plain", "a").success();
        dir.encrypt(key, &[], "plain", "b").success();
        let (a, b) = (dir.read("a"), dir.read("b"));
        assert_eq!(a.len(), b.len());
        assert_ne!(a[28..60], b[28..60], "fresh salt");
        assert_ne!(a[60..67], b[60..67], "fresh nonce prefix");
        assert_ne!(a[HEADER..], b[HEADER..], "different ciphertext");
        for name in ["a", "b"] {
            dir.decrypt(key, &[], name, "back").success();
            assert_eq!(dir.read("back"), plain);
            dir.remove("back");
        }
        dir.remove("a");
        dir.remove("b");
    }
}

#[test]
fn chunk_size_limits() {
    let dir = Dir::new();
    dir.keys();
    let plain = data(1000, 4);
    dir.write("plain", &plain);
    // 64 bytes is the smallest chunk, and works.
    dir.encrypt(&KEY_FILE, &["--chunk-size", "64"], "plain", "sealed")
        .success();
    assert_eq!(dir.read("sealed").len(), HEADER + 1000 + 16 * 16);
    dir.decrypt(&KEY_FILE, &[], "sealed", "back").success();
    assert_eq!(dir.read("back"), plain);
    for bad in ["10", "63", "65M", "1G"] {
        dir.encrypt(&KEY_FILE, &["--chunk-size", bad], "plain", "out")
            .code(2)
            .stderr(predicate::str::contains("out of range"));
        dir.assert_nothing_written("out");
    }
    dir.encrypt(&KEY_FILE, &["--chunk-size", "10"], "plain", "out")
        .code(2)
        .stderr(predicate::str::contains(
            "chunk size 10 is out of range (64 bytes to 64 MiB)",
        ));
    for bad in ["0", "4X", "-1"] {
        dir.encrypt(&KEY_FILE, &["--chunk-size", bad], "plain", "out")
            .code(2);
        dir.assert_nothing_written("out");
    }
}

// ---------------------------------------------------------------------------
// Failure paths
// ---------------------------------------------------------------------------

#[test]
fn a_wrong_passphrase_or_key_fails_with_exit_1() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    dir.write("plain", &data(TWENTY_CHUNKS, 1));
    dir.encrypt(&PASS_FILE, &["--chunk-size", "4K"], "plain", "p.sealed")
        .success();
    dir.encrypt(&KEY_FILE, &["--chunk-size", "4K"], "plain", "k.sealed")
        .success();
    let msg = "wrong passphrase or key, or the header was modified";
    dir.decrypt_fails(&["--passphrase-file", "wrong-pass"], "p.sealed", 1, msg);
    dir.decrypt_fails(&["--passphrase-env", WRONG_ENV], "p.sealed", 1, msg);
    dir.decrypt_fails(&["--key-file", "other.key"], "k.sealed", 1, msg);
    // To stdout too: nothing is printed.
    run(dir
        .cc()
        .args(["decrypt", "--key-file", "other.key", "-o", "-", "k.sealed"]))
    .code(1)
    .stdout(predicate::str::is_empty());
}

#[test]
fn a_key_file_file_needs_a_key_file_and_a_passphrase_file_a_passphrase() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    dir.write("plain", &data(5000, 1));
    dir.encrypt(&PASS_FILE, &[], "plain", "p.sealed").success();
    dir.encrypt(&KEY_FILE, &[], "plain", "k.sealed").success();
    for (key, input, message) in [
        (
            &PASS_FILE,
            "k.sealed",
            "this file was encrypted with a key file; give --key-file, not a passphrase",
        ),
        (
            &PASS_ENV_ARGS,
            "k.sealed",
            "this file was encrypted with a key file; give --key-file, not a passphrase",
        ),
        (
            &KEY_FILE,
            "p.sealed",
            "this file was encrypted with a passphrase; give the passphrase, not a key file",
        ),
    ] {
        // The exit code is not pinned here: the engine reports the mismatch
        // as an input error (2), although it is found while reading the file.
        dir.decrypt(key, &[], input, "out")
            .failure()
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
        dir.assert_nothing_written("out");
    }
}

#[test]
fn every_changed_header_byte_is_rejected() {
    let dir = Dir::new();
    let plain = dir.sealed("aes-256-gcm", TWENTY_CHUNKS);
    let sealed = dir.read("sealed");
    for at in 0..HEADER {
        for bit in [0, 7] {
            let mut bad = sealed.clone();
            bad[at] ^= 1 << bit;
            dir.write("bad", &bad);
            let a = dir
                .decrypt(&KEY_FILE, &[], "bad", "out")
                .code(1)
                .stdout(predicate::str::is_empty());
            let err = stderr_of(&a);
            assert!(
                [
                    "not a clustercrypt file",
                    "the header is invalid",
                    "wrong passphrase or key, or the header was modified",
                ]
                .iter()
                .any(|m| err.contains(m)),
                "byte {at} bit {bit}: {err}"
            );
            dir.assert_nothing_written("out");
        }
    }
    // Specific messages for specific fields.
    let flip = |at: usize, bit: u8, message: &str| {
        let mut bad = sealed.clone();
        bad[at] ^= 1 << bit;
        dir.write("bad", &bad);
        dir.decrypt_fails(&KEY_FILE, "bad", 1, message);
    };
    flip(0, 0, "not a clustercrypt file");
    flip(8, 1, "format version 3 is not supported");
    flip(10, 3, "unknown cipher suite 9");
    flip(11, 2, "unknown key derivation 4");
    flip(13, 0, "key-file header with KDF parameters");
    flip(27, 7, "chunk size");
    flip(40, 4, "wrong passphrase or key, or the header was modified"); // salt
    flip(62, 4, "wrong passphrase or key, or the header was modified"); // nonce prefix
    flip(67, 0, "reserved byte is not zero");
    flip(90, 4, "wrong passphrase or key, or the header was modified"); // MAC
    // The untouched file still decrypts.
    dir.decrypt(&KEY_FILE, &[], "sealed", "out").success();
    assert_eq!(dir.read("out"), plain);
}

#[test]
fn changed_passphrase_header_fields_are_rejected() {
    let dir = Dir::new();
    dir.passphrases();
    dir.write("plain", &data(TWENTY_CHUNKS, 3));
    dir.encrypt(&PASS_FILE, &["--chunk-size", "4K"], "plain", "sealed")
        .success();
    let sealed = dir.read("sealed");
    for (at, bit, message) in [
        (11, 0, "key-file header with KDF parameters"), // kdf 1 -> 0
        (12, 7, "wrong passphrase or key"),             // memory 64 -> 192 KiB
        (16, 1, "wrong passphrase or key"),             // iterations 1 -> 3
        (15, 7, "Argon2 parameters out of range"),      // memory 2 TiB
        (16, 0, "Argon2 parameters out of range"),      // 0 iterations
        (20, 0, "Argon2 parameters out of range"),      // 0 lanes
        (21, 0, "Argon2 parameters out of range"),      // 257 lanes
    ] {
        let mut bad = sealed.clone();
        bad[at] ^= 1 << bit;
        dir.write("bad", &bad);
        dir.decrypt_fails(&PASS_FILE, "bad", 1, message);
    }
}

#[test]
fn a_changed_chunk_is_named_and_nothing_is_written() {
    for suite in SUITES {
        let dir = Dir::new();
        dir.sealed(suite, TWENTY_CHUNKS);
        let sealed = dir.read("sealed");
        // A bit in the middle of chunk 3's ciphertext, in chunk 3's tag, in chunk 0.
        for (at, chunk) in [
            (HEADER + 3 * stride(suite) + 1234, 3),
            (HEADER + 4 * stride(suite) - 1, 3),
            (HEADER, 0),
            (HEADER + 11 * stride(suite) + 5, 11),
        ] {
            let mut bad = sealed.clone();
            bad[at] ^= 0x10;
            dir.write("bad", &bad);
            dir.decrypt_fails(
                &KEY_FILE,
                "bad",
                1,
                &format!("chunk {chunk} failed authentication"),
            );
        }
        // The last tag (the last byte of the file) and the last chunk's data.
        let n = sealed.len();
        for at in [n - 1, n - tag_len(suite) - 1, HEADER + 20 * stride(suite)] {
            let mut bad = sealed.clone();
            bad[at] ^= 0x01;
            dir.write("bad", &bad);
            dir.decrypt_fails(&KEY_FILE, "bad", 1, "chunk 20 failed authentication");
        }
    }
}

#[test]
fn reordered_duplicated_and_appended_chunks_are_detected() {
    let suite = "chacha20-poly1305";
    let dir = Dir::new();
    dir.sealed(suite, TWENTY_CHUNKS);
    let sealed = dir.read("sealed");
    let s = stride(suite);
    let chunk = |i: usize| &sealed[HEADER + i * s..HEADER + (i + 1) * s];
    // Swap chunks 2 and 3.
    let mut swapped = sealed[..HEADER + 2 * s].to_vec();
    swapped.extend_from_slice(chunk(3));
    swapped.extend_from_slice(chunk(2));
    swapped.extend_from_slice(&sealed[HEADER + 4 * s..]);
    assert_eq!(swapped.len(), sealed.len());
    dir.write("bad", &swapped);
    dir.decrypt_fails(&KEY_FILE, "bad", 1, "chunk 2 failed authentication");
    // Chunk 5 twice.
    let mut dup = sealed[..HEADER + 6 * s].to_vec();
    dup.extend_from_slice(chunk(5));
    dup.extend_from_slice(&sealed[HEADER + 6 * s..]);
    dir.write("bad", &dup);
    dir.decrypt_fails(&KEY_FILE, "bad", 1, "chunk 6 failed authentication");
    // Bytes appended after the last chunk.
    let mut longer = sealed.clone();
    longer.extend_from_slice(b"trailing garbage");
    dir.write("bad", &longer);
    dir.decrypt_fails(&KEY_FILE, "bad", 1, "chunk 20 failed authentication");
    // A whole extra chunk (a copy of chunk 0) appended: chunk 20 is then not the last.
    let mut extra = sealed.clone();
    extra.extend_from_slice(chunk(0));
    dir.write("bad", &extra);
    dir.decrypt_fails(&KEY_FILE, "bad", 1, "failed authentication");
    // The last chunk of another file with the same key.
    let dir2 = Dir::new();
    dir2.sealed(suite, TWENTY_CHUNKS);
    let other = dir2.read("sealed");
    let mut spliced = sealed[..HEADER + 20 * s].to_vec();
    spliced.extend_from_slice(&other[HEADER + 20 * s..]);
    dir.write("bad", &spliced);
    dir.decrypt_fails(&KEY_FILE, "bad", 1, "chunk 20 failed authentication");
}

#[test]
fn truncated_files_are_detected() {
    for suite in SUITES {
        let dir = Dir::new();
        dir.sealed(suite, TWENTY_CHUNKS);
        let sealed = dir.read("sealed");
        let s = stride(suite);
        for (len, message) in [
            // Inside the header.
            (5, "the file ends inside its header"),
            (50, "the file ends inside its header"),
            (99, "the file ends inside its header"),
            // Right after the header.
            (
                HEADER,
                "file ends before its last chunk (there are no chunks after the header)",
            ),
            // At chunk boundaries.
            (
                HEADER + s,
                "file ends before its last chunk (chunk 0 is not marked as the last one)",
            ),
            (
                HEADER + 5 * s,
                "file ends before its last chunk (chunk 4 is not marked as the last one)",
            ),
            (
                HEADER + 20 * s,
                "file ends before its last chunk (chunk 19 is not marked as the last one)",
            ),
            // Inside a chunk: shorter than a tag, and longer.
            (HEADER + 5 * s + 7, "chunk 5 is shorter than its tag"),
            (HEADER + 5 * s + 2000, "chunk 5 failed authentication"),
            (sealed.len() - 1, "chunk 20 failed authentication"),
        ] {
            dir.write("bad", &sealed[..len]);
            dir.decrypt_fails(&KEY_FILE, "bad", 1, message);
        }
    }
}

#[test]
fn files_that_are_not_ours_are_rejected() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    for (name, contents) in [
        (
            "text",
            b"hello, this is not an encrypted file at all\n".repeat(10),
        ),
        ("empty", Vec::new()),
        ("short", b"hello".to_vec()),
        ("zeros", vec![0; 5000]),
    ] {
        dir.write(name, &contents);
        dir.decrypt_fails(&KEY_FILE, name, 1, "not a clustercrypt file");
        dir.decrypt_fails(&PASS_FILE, name, 1, "not a clustercrypt file");
    }
}

#[test]
fn a_tampered_file_to_stdout_prints_only_verified_chunks() {
    for suite in ["aes-256-gcm", "serpent-256-ctr-hmac-sha256"] {
        let dir = Dir::new();
        let plain = dir.sealed(suite, TWENTY_CHUNKS);
        let mut bad = dir.read("sealed");
        bad[HEADER + 10 * stride(suite) + 100] ^= 0x80;
        dir.write("bad", &bad);
        for threads in ["1", "3", "8"] {
            let a = run(dir
                .cc()
                .args(["decrypt", "--key-file", "key", "--threads", threads])
                .args(["-o", "-", "bad"]))
            .code(1)
            .stderr(predicate::str::contains("chunk 10 failed authentication"));
            let out = &a.get_output().stdout;
            assert!(
                out.len() <= 10 * CHUNK,
                "{suite}, {threads} threads: {} bytes printed, only 10 chunks verified",
                out.len()
            );
            assert_eq!(&out[..], &plain[..out.len()], "only verified plaintext");
            // The same from stdin.
            let a = run(dir
                .cc()
                .args(["decrypt", "--key-file", "key", "--threads", threads])
                .args(["-o", "-", "-"])
                .write_stdin(bad.clone()))
            .code(1);
            assert!(a.get_output().stdout.len() <= 10 * CHUNK);
        }
        // A file truncated at a chunk boundary, to stdout.
        let sealed = dir.read("sealed");
        let a = run(dir
            .cc()
            .args(["decrypt", "--key-file", "key", "-o", "-", "-"])
            .write_stdin(sealed[..HEADER + 7 * stride(suite)].to_vec()))
        .code(1)
        .stderr(predicate::str::contains(
            "chunk 6 is not marked as the last one",
        ));
        assert!(a.get_output().stdout.len() <= 6 * CHUNK);
    }
}

#[test]
fn an_existing_output_needs_force() {
    let dir = Dir::new();
    dir.keys();
    let plain = data(5000, 8);
    dir.write("plain", &plain);
    dir.write("out", b"precious");
    dir.encrypt(&KEY_FILE, &[], "plain", "out")
        .code(2)
        .stderr(predicate::str::contains(
            "out already exists; use --force to overwrite it",
        ));
    assert_eq!(dir.read("out"), b"precious");
    assert_eq!(dir.leftovers(), Vec::<String>::new());
    dir.encrypt(&KEY_FILE, &[], "plain", "sealed").success();
    dir.decrypt(&KEY_FILE, &[], "sealed", "out")
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(dir.read("out"), b"precious");
    // With --force the file is replaced.
    dir.decrypt(&KEY_FILE, &["--force"], "sealed", "out")
        .success();
    assert_eq!(dir.read("out"), plain);
    dir.encrypt(&KEY_FILE, &["--force"], "plain", "out")
        .success();
    assert_eq!(
        dir.read("out").len(),
        HEADER + 5000 + 16,
        "default suite, one chunk"
    );
    dir.decrypt(&KEY_FILE, &[], "out", "back").success();
    assert_eq!(dir.read("back"), plain);
    // A failed decryption with --force leaves the existing file alone.
    dir.write("existing", b"keep me");
    dir.write("garbage", b"not ours");
    dir.decrypt(&KEY_FILE, &["--force"], "garbage", "existing")
        .code(1);
    assert_eq!(dir.read("existing"), b"keep me");
    assert_eq!(dir.leftovers(), Vec::<String>::new());
}

#[test]
fn the_output_cannot_be_the_input() {
    let dir = Dir::new();
    dir.keys();
    let plain = data(5000, 8);
    dir.write("x", &plain);
    let abs = dir.path("x").to_string_lossy().into_owned();
    for out in ["x", "./x", abs.as_str(), "../{dir}/x"] {
        let out = out.replace("{dir}", &dir.root().file_name().unwrap().to_string_lossy());
        for force in [&[][..], &["--force"][..]] {
            dir.encrypt(&KEY_FILE, force, "x", &out)
                .code(2)
                .stderr(predicate::str::contains("is the input"));
            assert_eq!(dir.read("x"), plain, "input untouched ({out})");
            dir.encrypt(&KEY_FILE, force, "./x", &out).code(2);
            dir.decrypt(&KEY_FILE, force, "x", &out)
                .code(2)
                .stderr(predicate::str::contains("is the input"));
            assert_eq!(dir.read("x"), plain, "input untouched ({out})");
            assert_eq!(dir.leftovers(), Vec::<String>::new());
        }
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("x", dir.path("link")).unwrap();
        dir.encrypt(&KEY_FILE, &["--force"], "x", "link")
            .code(2)
            .stderr(predicate::str::contains("is the input"));
        assert_eq!(dir.read("x"), plain);
    }
}

#[test]
fn usage_errors_exit_2_before_any_work() {
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    dir.write("plain", &data(1000, 1));
    let usage = |args: &[&str], message: &str| {
        run(dir.cc().args(args))
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
        dir.assert_nothing_written("out");
    };
    // No key source and no terminal to ask on.
    usage(&["encrypt", "-o", "out", "plain"], "no key given");
    usage(&["decrypt", "-o", "out", "plain"], "no key given");
    // A nonexistent input.
    usage(
        &["encrypt", "--key-file", "key", "-o", "out", "missing"],
        "cannot open missing",
    );
    usage(
        &["decrypt", "--key-file", "key", "-o", "out", "missing"],
        "cannot open missing",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "pass",
            "-o",
            "out",
            "missing",
        ],
        "cannot open missing",
    );
    // Missing or bad key material.
    usage(
        &["encrypt", "--key-file", "nokey", "-o", "out", "plain"],
        "cannot read the key file nokey",
    );
    usage(
        &["encrypt", "--key-file", "pass", "-o", "out", "plain"],
        "a key file holds a 256-bit key: 32 raw bytes or 64 hexadecimal digits",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "nopass",
            "-o",
            "out",
            "plain",
        ],
        "cannot read the passphrase file nopass",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-env",
            "CLUSTERCRYPT_TEST_UNSET",
            "-o",
            "out",
            "plain",
        ],
        "the environment variable CLUSTERCRYPT_TEST_UNSET is not set",
    );
    dir.write("empty-pass", b"\n");
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "empty-pass",
            "-o",
            "out",
            "plain",
        ],
        "the passphrase is empty",
    );
    // Two key sources at once.
    usage(
        &[
            "encrypt",
            "--key-file",
            "key",
            "--passphrase-file",
            "pass",
            "-o",
            "out",
            "plain",
        ],
        "cannot be used with",
    );
    // Unknown suites, 64-bit-block ones with the reason.
    for suite in ["des", "3des", "blowfish"] {
        usage(
            &[
                "encrypt",
                "--key-file",
                "key",
                "--suite",
                suite,
                "-o",
                "out",
                "plain",
            ],
            "64-bit-block ciphers are not offered",
        );
    }
    usage(
        &[
            "encrypt",
            "--key-file",
            "key",
            "--suite",
            "des",
            "-o",
            "out",
            "plain",
        ],
        "Sweet32",
    );
    // decrypt takes the suite from the header.
    usage(
        &[
            "decrypt",
            "--key-file",
            "key",
            "--suite",
            "aes-256-gcm",
            "-o",
            "out",
            "plain",
        ],
        "unexpected argument '--suite'",
    );
    // Thread counts and Argon2 bounds.
    usage(
        &[
            "encrypt",
            "--key-file",
            "key",
            "--threads",
            "0",
            "-o",
            "out",
            "plain",
        ],
        "not a thread count",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "pass",
            "--kdf-memory",
            "63",
            "-o",
            "out",
            "plain",
        ],
        "--kdf-memory",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "pass",
            "--kdf-iterations",
            "0",
            "-o",
            "out",
            "plain",
        ],
        "--kdf-iterations",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "pass",
            "--kdf-parallel",
            "65",
            "-o",
            "out",
            "plain",
        ],
        "--kdf-parallel",
    );
    usage(
        &[
            "encrypt",
            "--passphrase-file",
            "pass",
            "--kdf-memory",
            "64",
            "--kdf-parallel",
            "9",
            "-o",
            "out",
            "plain",
        ],
        "--kdf-memory must be at least 8 KiB per lane",
    );
    // A directory as input or output.
    fs::create_dir(dir.path("sub")).unwrap();
    usage(
        &["encrypt", "--key-file", "key", "-o", "out", "sub"],
        "sub is a directory",
    );
    let a = run(dir.cc().args([
        "encrypt",
        "--key-file",
        "key",
        "--force",
        "-o",
        "sub",
        "plain",
    ]))
    .code(2)
    .stderr(predicate::str::contains("sub is a directory"));
    let _ = a;
    assert_eq!(dir.leftovers(), Vec::<String>::new());
    assert!(fs::read_dir(dir.path("sub")).unwrap().next().is_none());
}

// ---------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------

#[test]
fn there_is_no_passphrase_flag() {
    let dir = Dir::new();
    dir.write("plain", b"data");
    for cmd in ["encrypt", "decrypt"] {
        for args in [
            vec![cmd, "--passphrase", PASSPHRASE, "-o", "out", "plain"],
            vec![cmd, "-o", "out", "--passphrase", PASSPHRASE, "plain"],
        ] {
            run(dir.cc().args(&args))
                .code(2)
                .stdout(predicate::str::is_empty())
                .stderr(predicate::str::contains(
                    "unexpected argument '--passphrase'",
                ));
            dir.assert_nothing_written("out");
        }
        // `--passphrase=SECRET` is rejected without echoing the value.
        let arg = format!("--passphrase={PASSPHRASE}");
        run(dir.cc().args([cmd, &arg, "-o", "out", "plain"])).code(2);
        dir.assert_nothing_written("out");
        // Help does not offer one either.
        let help = run(dir.cc().args([cmd, "--help"])).success();
        let text = String::from_utf8_lossy(&help.get_output().stdout).into_owned();
        assert!(text.contains("--passphrase-file") && text.contains("--passphrase-env"));
        assert!(!text.contains("--passphrase "), "{text}");
        assert!(!text.contains("--passphrase <"), "{text}");
    }
}

#[test]
fn passphrases_are_never_printed_even_on_failure() {
    // Every run in this file goes through `run`, which checks stdout and
    // stderr for both passphrases; this test adds the runs most likely to
    // echo something: failures with each key source, to stdout and to files.
    let dir = Dir::new();
    dir.keys();
    dir.passphrases();
    dir.write("plain", &data(TWENTY_CHUNKS, 3));
    dir.encrypt(&PASS_FILE, &["--chunk-size", "4K"], "plain", "p.sealed")
        .success();
    dir.encrypt(&KEY_FILE, &["--chunk-size", "4K"], "plain", "k.sealed")
        .success();
    let mut bad = dir.read("p.sealed");
    bad[HEADER + 2 * stride("aes-256-gcm") + 3] ^= 1;
    dir.write("bad", &bad);
    for key in [
        &["--passphrase-file", "wrong-pass"][..],
        &["--passphrase-env", WRONG_ENV][..],
        &PASS_FILE[..],
        &PASS_ENV_ARGS[..],
    ] {
        for input in ["p.sealed", "k.sealed", "bad", "plain", "missing"] {
            for out in ["out", "-"] {
                let _ = run(dir.cc().arg("decrypt").args(key).args(["-o", out, input]));
                let _ = dir.exists("out").then(|| dir.remove("out"));
            }
        }
        let _ = run(dir.cc().arg("encrypt").args(key).args([
            "--chunk-size",
            "10",
            "-o",
            "out",
            "plain",
        ]));
        let _ = run(dir
            .cc()
            .arg("encrypt")
            .args(key)
            .args(["--suite", "des", "-o", "out", "plain"]));
        let _ = run(dir
            .cc()
            .arg("encrypt")
            .args(key)
            .args(FAST_KDF)
            .args(["-o", "plain", "plain"]));
    }
    assert_eq!(dir.leftovers(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------
// keygen
// ---------------------------------------------------------------------------

fn keygen(dir: &Dir, args: &[&str]) -> Assert {
    run(dir.cc().arg("keygen").args(args))
}

fn is_key_text(text: &[u8]) -> bool {
    text.len() == 65
        && text[64] == b'\n'
        && text[..64]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

#[test]
fn keygen_writes_a_private_hex_key() {
    let dir = Dir::new();
    let a = keygen(&dir, &["-o", "k1"])
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("wrote a new 256-bit key to k1"));
    let k1 = dir.read("k1");
    assert!(is_key_text(&k1), "{:?}", String::from_utf8_lossy(&k1));
    assert!(
        !contains(&a.get_output().stderr, &k1[..64]),
        "the key is not printed"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path("k1")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "key file mode {mode:o}");
    }
    keygen(&dir, &["--output", "k2"]).success();
    let k2 = dir.read("k2");
    assert!(is_key_text(&k2));
    assert_ne!(k1, k2, "two keys differ");
    assert_eq!(dir.leftovers(), Vec::<String>::new());
}

#[test]
fn keygen_refuses_to_overwrite_or_print() {
    let dir = Dir::new();
    keygen(&dir, &["-o", "k"]).success();
    let k = dir.read("k");
    keygen(&dir, &["-o", "k"])
        .code(2)
        .stderr(predicate::str::contains("k already exists; use --force"));
    assert_eq!(dir.read("k"), k, "untouched");
    dir.write("precious", b"not a key");
    keygen(&dir, &["-o", "precious"]).code(2);
    assert_eq!(dir.read("precious"), b"not a key");
    keygen(&dir, &["-o", "k", "--force"]).success();
    let k2 = dir.read("k");
    assert!(is_key_text(&k2));
    assert_ne!(k, k2, "replaced with --force");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        dir.write("loose", b"old");
        fs::set_permissions(dir.path("loose"), fs::Permissions::from_mode(0o644)).unwrap();
        keygen(&dir, &["-o", "loose", "--force"]).success();
        let mode = fs::metadata(dir.path("loose"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "a replaced key file is 0600 too");
    }
    for args in [&["-o", "-"][..], &["-o", "-", "--force"][..]] {
        keygen(&dir, args)
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("keygen writes keys to files only"));
    }
    assert!(!dir.exists("-"));
    keygen(&dir, &[]).code(2);
    assert_eq!(dir.leftovers(), Vec::<String>::new());
}

#[test]
fn key_files_from_keygen_and_raw_bytes_both_work() {
    let dir = Dir::new();
    keygen(&dir, &["-o", "gen.key"]).success();
    let plain = data(TWENTY_CHUNKS, 12);
    dir.write("plain", &plain);
    dir.encrypt(&["--key-file", "gen.key"], &[], "plain", "sealed")
        .success();
    dir.decrypt(&["--key-file", "gen.key"], &[], "sealed", "back")
        .success();
    assert_eq!(dir.read("back"), plain);
    dir.remove("back");
    // Another keygen key does not open it.
    keygen(&dir, &["-o", "other.key"]).success();
    dir.decrypt_fails(
        &["--key-file", "other.key"],
        "sealed",
        1,
        "wrong passphrase or key",
    );

    // 32 raw bytes are a key, the same key as its 64 hex digits (upper case
    // and whitespace allowed).
    let raw: Vec<u8> = data(32, 77);
    dir.write("raw.key", &raw);
    let spaced: String = hex(&raw)
        .to_uppercase()
        .as_bytes()
        .chunks(8)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    dir.write("hex.key", format!("{spaced}\r\n").as_bytes());
    dir.encrypt(&["--key-file", "raw.key"], &[], "plain", "raw.sealed")
        .success();
    dir.decrypt(&["--key-file", "hex.key"], &[], "raw.sealed", "back")
        .success();
    assert_eq!(dir.read("back"), plain);
    dir.remove("back");
    dir.decrypt(&["--key-file", "raw.key"], &[], "raw.sealed", "back")
        .success();
    assert_eq!(dir.read("back"), plain);
    // 31 or 33 raw bytes are not a key.
    for len in [31, 33, 0] {
        dir.write("bad.key", &data(len, 1));
        dir.encrypt(&["--key-file", "bad.key"], &[], "plain", "out")
            .code(2)
            .stderr(predicate::str::contains("a key file holds a 256-bit key"));
        dir.assert_nothing_written("out");
    }
}

// ---------------------------------------------------------------------------
// Raw legacy mode against `openssl enc`
// ---------------------------------------------------------------------------

/// One raw-mode cipher and its OpenSSL name.
#[derive(Clone, Copy, Debug)]
struct RawCase {
    /// Our `--cipher`.
    ours: &'static str,
    /// `openssl enc -<name>`.
    openssl: &'static str,
    key_len: usize,
    iv_len: usize,
    /// Block size; 0 for stream ciphers and CTR (no padding).
    pad_block: usize,
    /// Needs OpenSSL's legacy provider.
    legacy: bool,
    /// Encryption is sequential (CBC, RC4).
    sequential: bool,
}

const fn case(
    ours: &'static str,
    openssl: &'static str,
    key_len: usize,
    iv_len: usize,
    pad_block: usize,
    legacy: bool,
    sequential: bool,
) -> RawCase {
    RawCase {
        ours,
        openssl,
        key_len,
        iv_len,
        pad_block,
        legacy,
        sequential,
    }
}

const AES_CASES: [RawCase; 9] = [
    case("aes-ecb", "aes-128-ecb", 16, 0, 16, false, false),
    case("aes-ecb", "aes-192-ecb", 24, 0, 16, false, false),
    case("aes-ecb", "aes-256-ecb", 32, 0, 16, false, false),
    case("aes-cbc", "aes-128-cbc", 16, 16, 16, false, true),
    case("aes-cbc", "aes-192-cbc", 24, 16, 16, false, true),
    case("aes-cbc", "aes-256-cbc", 32, 16, 16, false, true),
    case("aes-ctr", "aes-128-ctr", 16, 16, 0, false, false),
    case("aes-ctr", "aes-192-ctr", 24, 16, 0, false, false),
    case("aes-ctr", "aes-256-ctr", 32, 16, 0, false, false),
];

const OTHER_CASES: [RawCase; 7] = [
    case("camellia-cbc", "camellia-128-cbc", 16, 16, 16, false, true),
    case("des-cbc", "des-cbc", 8, 8, 8, true, true),
    case("des3_ede-cbc", "des-ede3-cbc", 24, 8, 8, false, true),
    case("blowfish-cbc", "bf-cbc", 16, 8, 8, true, true),
    case("rc2-cbc", "rc2-cbc", 16, 8, 8, true, true),
    case("rc4", "rc4", 16, 0, 0, true, true),
    case("chacha20", "chacha20", 32, 16, 0, false, false),
];

/// Over 2 MiB, not a whole number of blocks: three 1 MiB chunks.
const BIG: usize = 2 * MIB + MIB / 2 + 7;
/// Over 2 MiB and a whole number of blocks, for `--padding none`.
const BIG_BLOCKS: usize = 2 * MIB + 1024;

fn openssl(args: &[String], input: &[u8]) -> Vec<u8> {
    assert!(
        Path::new(OPENSSL).exists(),
        "these tests compare with {OPENSSL} (OpenSSL 3); install openssl"
    );
    let out = Command::new(OPENSSL)
        .args(args)
        .write_stdin(input.to_vec())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `openssl enc` arguments for `case` with `key` and `iv`.
fn openssl_args(case: &RawCase, key: &[u8], iv: &[u8], encrypt: bool, nopad: bool) -> Vec<String> {
    let mut a: Vec<String> = vec!["enc".into()];
    if case.legacy {
        a.extend(["-provider", "legacy", "-provider", "default"].map(String::from));
    }
    a.push(if encrypt { "-e" } else { "-d" }.into());
    a.push(format!("-{}", case.openssl));
    a.extend(["-K".into(), hex(key), "-nosalt".into()]);
    if !iv.is_empty() {
        a.extend(["-iv".into(), hex(iv)]);
    }
    if nopad {
        a.push("-nopad".into());
    }
    a
}

/// Our raw-mode command for `case`. The key travels in a file or in the
/// environment, the IV as `--iv`, `--iv-file` or `--iv-env`, by `variant`.
fn raw_cmd(
    dir: &Dir,
    case: &RawCase,
    key: &[u8],
    iv: &[u8],
    encrypt: bool,
    padding: Option<&str>,
    variant: usize,
) -> Command {
    let mut c = dir.cc();
    c.arg(if encrypt { "encrypt" } else { "decrypt" })
        .args(["--raw", "--cipher", case.ours, "-q"]);
    if variant.is_multiple_of(2) {
        dir.write("raw.key", format!("{}\n", hex(key)).as_bytes());
        c.args(["--key-hex-file", "raw.key"]);
    } else {
        c.env("CLUSTERCRYPT_TEST_RAW_KEY", hex(key))
            .args(["--key-env", "CLUSTERCRYPT_TEST_RAW_KEY"]);
    }
    if !iv.is_empty() {
        match variant % 3 {
            0 => {
                c.args(["--iv", &hex(iv)]);
            }
            1 => {
                dir.write("raw.iv", hex(iv).as_bytes());
                c.args(["--iv-file", "raw.iv"]);
            }
            _ => {
                c.env("CLUSTERCRYPT_TEST_RAW_IV", hex(iv))
                    .args(["--iv-env", "CLUSTERCRYPT_TEST_RAW_IV"]);
            }
        }
    }
    if let Some(p) = padding {
        c.args(["--padding", p]);
    }
    c
}

/// Encrypts `plain` with ours on 1 and 3 threads (file to file, then stdin to
/// stdout), compares with openssl, and decrypts openssl's output with ours.
fn compare_with_openssl(case: &RawCase, iv: &[u8], nopad: bool, sizes: &[usize]) {
    let dir = Dir::new();
    let key = data(
        case.key_len,
        case.key_len as u64 * 31 + case.ours.len() as u64,
    );
    let padding = nopad.then_some("none");
    for (v, &len) in sizes.iter().enumerate() {
        let what = format!("{} ({}) {len} bytes nopad={nopad}", case.ours, case.openssl);
        let plain = data(len, len as u64 + 1);
        let theirs = openssl(&openssl_args(case, &key, iv, true, nopad), &plain);
        if case.pad_block > 0 && !nopad {
            assert_eq!(theirs.len(), (len / case.pad_block + 1) * case.pad_block);
        }

        dir.write("plain", &plain);
        let a = run(raw_cmd(&dir, case, &key, iv, true, padding, v).args([
            "--threads",
            "1",
            "-o",
            "one",
            "plain",
        ]))
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("raw mode is unauthenticated"));
        assert_eq!(
            stderr_of(&a).contains("is sequential by nature"),
            case.sequential,
            "{what}: {}",
            stderr_of(&a)
        );
        let one = dir.read("one");
        assert!(
            one == theirs,
            "{what}: ours (1 thread) differs from openssl"
        );

        let three = run(raw_cmd(&dir, case, &key, iv, true, padding, v + 1)
            .args(["--threads", "3", "-o", "-", "-"])
            .write_stdin(plain.clone()))
        .success()
        .get_output()
        .stdout
        .clone();
        assert!(three == one, "{what}: 3 threads differ from 1 thread");

        // Decrypt openssl's output with ours (in 1 MiB chunks, 3 threads).
        dir.write("theirs", &theirs);
        let a = run(raw_cmd(&dir, case, &key, iv, false, padding, v + 2).args([
            "--threads",
            "3",
            "-o",
            "back",
            "theirs",
        ]))
        .success()
        .stderr(predicate::str::contains("raw mode is unauthenticated"));
        let rc4 = case.ours == "rc4";
        assert_eq!(
            stderr_of(&a).contains("is sequential by nature"),
            rc4,
            "{what}: only RC4 decryption is sequential"
        );
        assert!(
            dir.read("back") == plain,
            "{what}: ours cannot decrypt openssl's output"
        );
        // And openssl decrypts ours.
        let back = openssl(&openssl_args(case, &key, iv, false, nopad), &one);
        assert!(back == plain, "{what}: openssl cannot decrypt ours");
        for f in ["one", "back", "theirs"] {
            dir.remove(f);
        }
    }
    assert_eq!(dir.leftovers(), Vec::<String>::new());
}

fn iv_for(case: &RawCase) -> Vec<u8> {
    match case.ours {
        // OpenSSL's ChaCha20 IV: 32-bit little-endian block counter, then the nonce.
        "chacha20" => {
            let mut iv = vec![1, 0, 0, 0];
            iv.extend_from_slice(&data(12, 5));
            iv
        }
        _ => data(case.iv_len, 99),
    }
}

const SIZES: [usize; 7] = [0, 1, 15, 16, 17, 1000, BIG];
const BLOCK_SIZES: [usize; 4] = [0, 16, 1024, BIG_BLOCKS];

#[test]
fn raw_aes_matches_openssl() {
    for case in AES_CASES {
        compare_with_openssl(&case, &iv_for(&case), false, &SIZES);
    }
}

#[test]
fn raw_aes_without_padding_matches_openssl() {
    for case in AES_CASES.iter().filter(|c| c.pad_block > 0) {
        compare_with_openssl(case, &iv_for(case), true, &BLOCK_SIZES);
    }
}

#[test]
fn raw_other_ciphers_match_openssl() {
    for case in OTHER_CASES {
        compare_with_openssl(&case, &iv_for(&case), false, &SIZES);
    }
}

#[test]
fn raw_other_ciphers_without_padding_match_openssl() {
    for case in OTHER_CASES.iter().filter(|c| c.pad_block > 0) {
        compare_with_openssl(case, &iv_for(case), true, &BLOCK_SIZES);
    }
}

#[test]
fn raw_ctr_counters_carry_like_openssl() {
    // The 128-bit big-endian counter carries from the low 64 bits into the
    // high ones (inside a chunk and across 1 MiB chunks) and wraps at 2^128.
    let case = AES_CASES[6];
    for iv in [
        "0000000000000000fffffffffffffff0",
        "00000000000000000000000000000000",
        "fffffffffffffffffffffffffffffff0",
        "0123456789abcdeffffffffffffeffff",
    ] {
        let iv: Vec<u8> = (0..16)
            .map(|i| u8::from_str_radix(&iv[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        compare_with_openssl(&case, &iv, false, &[17, BIG]);
    }
}

#[test]
fn raw_chacha20_takes_openssls_16_byte_iv() {
    let case = OTHER_CASES[6];
    for counter in [0u32, 7, 0x0001_0000] {
        let mut iv = counter.to_le_bytes().to_vec();
        iv.extend_from_slice(&data(12, 6));
        compare_with_openssl(&case, &iv, false, &[1, 64, 65, BIG]);
    }
}

/// OpenSSL carries ChaCha20's 32-bit block counter into the next IV word;
/// clustercrypt stops with "ChaCha20 block counter overflow" (exit 2).
#[test]
fn raw_chacha20_counter_wrap_matches_openssl() {
    let case = OTHER_CASES[6];
    let mut iv = 0xffff_fffe_u32.to_le_bytes().to_vec();
    iv.extend_from_slice(&data(12, 6));
    compare_with_openssl(&case, &iv, false, &[300]);
}

#[test]
fn raw_mode_warns_and_names_insecure_ciphers() {
    let dir = Dir::new();
    dir.write("plain", &data(100, 1));
    let des = OTHER_CASES[1];
    let a =
        run(raw_cmd(&dir, &des, &data(8, 1), &data(8, 2), true, None, 0)
            .args(["-o", "out", "plain"]))
        .success();
    let err = stderr_of(&a);
    assert!(
        err.contains("warning: raw mode is unauthenticated: changes to the data go undetected")
    );
    assert!(err.contains("des is broken"), "{err}");
    assert!(
        err.contains("des-cbc encryption is sequential by nature"),
        "{err}"
    );
    let ecb = AES_CASES[0];
    let a =
        run(raw_cmd(&dir, &ecb, &data(16, 1), &[], true, None, 0).args(["-o", "out2", "plain"]))
            .success();
    assert!(stderr_of(&a).contains("ECB mode leaks equal plaintext blocks"));
    // Decryption warns too.
    let cbc = AES_CASES[3];
    dir.write("ct", &[0u8; 32]);
    let a = run(raw_cmd(
        &dir,
        &cbc,
        &data(16, 1),
        &data(16, 2),
        false,
        Some("none"),
        0,
    )
    .args(["-o", "out3", "ct"]))
    .success();
    assert!(stderr_of(&a).contains("raw mode is unauthenticated"));
    assert!(!stderr_of(&a).contains("sequential"));
}

#[test]
fn raw_tea_rounds_repeat_the_cipher() {
    for cipher in ["tea-ecb", "xtea-ecb"] {
        let dir = Dir::new();
        let case = case(cipher, "", 16, 0, 8, false, false);
        let key = data(16, 3);
        for len in [64, BIG_BLOCKS] {
            let plain = data(len, 4);
            dir.write("p0", &plain);
            for i in 0..3 {
                run(raw_cmd(&dir, &case, &key, &[], true, Some("none"), i)
                    .args(["--rounds", "1", "--threads", "3"])
                    .args(["-o", &format!("p{}", i + 1), &format!("p{i}")]))
                .success();
            }
            run(
                raw_cmd(&dir, &case, &key, &[], true, Some("none"), 1).args([
                    "--rounds",
                    "3",
                    "--threads",
                    "3",
                    "-o",
                    "r3",
                    "p0",
                ]),
            )
            .success();
            let three = dir.read("r3");
            assert!(
                three == dir.read("p3"),
                "{cipher} {len}: --rounds 3 = 3 x --rounds 1"
            );
            assert!(three != dir.read("p1"));
            run(raw_cmd(&dir, &case, &key, &[], false, Some("none"), 0)
                .args(["--rounds", "3", "-o", "back", "r3"]))
            .success();
            assert!(dir.read("back") == plain, "{cipher} {len}: decrypts back");
            for f in ["p0", "p1", "p2", "p3", "r3", "back"] {
                dir.remove(f);
            }
        }
    }
}

#[test]
fn raw_usage_errors_exit_2() {
    let dir = Dir::new();
    dir.write("plain", &data(100, 1));
    let aes_cbc = AES_CASES[3];
    let aes_ctr = AES_CASES[6];
    let usage = |cmd: &mut Command, message: &str| {
        run(cmd.args(["-o", "out", "plain"]))
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
        dir.assert_nothing_written("out");
    };
    usage(
        raw_cmd(&dir, &aes_cbc, &data(16, 1), &data(16, 1), true, None, 0).args(["--rounds", "2"]),
        "--rounds repeats the cipher for TEA and XTEA only, not aes",
    );
    usage(
        &mut raw_cmd(&dir, &aes_cbc, &data(15, 1), &data(16, 1), true, None, 0),
        "aes-cbc does not take a 120-bit key",
    );
    usage(
        &mut raw_cmd(
            &dir,
            &OTHER_CASES[1],
            &data(16, 1),
            &data(8, 1),
            true,
            None,
            1,
        ),
        "des-cbc does not take a 128-bit key",
    );
    usage(
        &mut raw_cmd(&dir, &aes_cbc, &data(16, 1), &[], true, None, 0),
        "the IV is 0 bytes; aes-cbc needs 16",
    );
    usage(
        &mut raw_cmd(&dir, &aes_cbc, &data(16, 1), &data(8, 1), true, None, 0),
        "the IV is 8 bytes; aes-cbc needs 16",
    );
    usage(
        raw_cmd(&dir, &AES_CASES[0], &data(16, 1), &[], true, None, 0).args(["--iv", "00"]),
        "aes-ecb takes no IV",
    );
    usage(
        raw_cmd(&dir, &aes_ctr, &data(16, 1), &data(16, 1), true, None, 0)
            .args(["--padding", "pkcs7"]),
        "stream mode and takes no padding",
    );
    usage(
        raw_cmd(&dir, &aes_cbc, &data(16, 1), &[], true, None, 0).args(["--iv", "xyz"]),
        "the IV must be hexadecimal digits",
    );
    usage(
        raw_cmd(&dir, &aes_cbc, &data(16, 1), &data(16, 1), true, None, 0)
            .args(["--suite", "aes-256-gcm"]),
        "--suite is for the authenticated format, not --raw",
    );
    usage(
        dir.cc()
            .args(["encrypt", "--raw", "--cipher", "aes-cbc", "--iv"])
            .arg(hex(&data(16, 1))),
        "raw mode needs a key",
    );
    usage(
        dir.cc().args(["encrypt", "--raw", "--key-env", "X"]),
        "--cipher",
    );
    usage(
        dir.cc()
            .env("CLUSTERCRYPT_TEST_RAW_KEY", "not hex")
            .args(["encrypt", "--raw", "--cipher", "aes-ecb"])
            .args(["--key-env", "CLUSTERCRYPT_TEST_RAW_KEY"]),
        "the key must be hexadecimal digits",
    );
    usage(
        dir.cc()
            .env("CLUSTERCRYPT_TEST_RAW_KEY", hex(&data(32, 1)))
            .args(["encrypt", "--raw", "--cipher", "aes-xts"])
            .args(["--key-env", "CLUSTERCRYPT_TEST_RAW_KEY"]),
        "raw mode offers ECB, CBC, CTR",
    );
    // Raw-mode options without --raw.
    usage(
        dir.cc()
            .args(["encrypt", "--key-file", "k", "--cipher", "aes-cbc"]),
        "--raw",
    );
}

#[test]
fn raw_wrong_padding_fails_with_exit_1_and_no_output() {
    let dir = Dir::new();
    let case = AES_CASES[3];
    let (key, iv) = (data(16, 1), data(16, 2));
    // The last plaintext byte is 0, never valid PKCS#7 padding.
    let mut plain = data(64, 3);
    plain[63] = 0;
    dir.write("plain", &plain);
    run(raw_cmd(&dir, &case, &key, &iv, true, Some("none"), 0).args(["-o", "ct", "plain"]))
        .success();
    assert_eq!(dir.read("ct").len(), 64);
    for threads in ["1", "3"] {
        run(raw_cmd(&dir, &case, &key, &iv, false, None, 0).args([
            "--threads",
            threads,
            "-o",
            "out",
            "ct",
        ]))
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("bad padding in the last block"));
        dir.assert_nothing_written("out");
    }
    // A big file whose last chunk fails: nothing of it is kept either.
    let mut big = data(BIG_BLOCKS, 4);
    *big.last_mut().unwrap() = 0;
    dir.write("big", &big);
    run(raw_cmd(&dir, &case, &key, &iv, true, Some("none"), 1).args(["-o", "bigct", "big"]))
        .success();
    run(raw_cmd(&dir, &case, &key, &iv, false, None, 1).args(["-o", "out", "bigct"]))
        .code(1)
        .stderr(predicate::str::contains("bad padding"));
    dir.assert_nothing_written("out");
    // A ciphertext that is not whole blocks fails too, leaving nothing.
    dir.write("short", &dir.read("ct")[..63]);
    run(raw_cmd(&dir, &case, &key, &iv, false, None, 0).args(["-o", "out", "short"]))
        .failure()
        .stderr(predicate::str::contains(
            "not a whole number of 16-byte blocks",
        ));
    dir.assert_nothing_written("out");
    // --padding none refuses input that is not whole blocks.
    dir.write("odd", &data(17, 1));
    run(raw_cmd(&dir, &case, &key, &iv, true, Some("none"), 0).args(["-o", "out", "odd"]))
        .failure()
        .stderr(predicate::str::contains("use --padding pkcs7"));
    dir.assert_nothing_written("out");
}

#[test]
fn raw_small_chunks_in_parallel_match_openssl() {
    // Chunks far smaller than the input (rounded down to whole blocks, or to
    // 64-byte ChaCha20 blocks), so that the per-chunk IV and counter
    // arithmetic runs thousands of times.
    let dir = Dir::new();
    let plain = data(100_003, 21);
    dir.write("plain", &plain);
    for case in [
        AES_CASES[5],
        AES_CASES[8],
        AES_CASES[2],
        OTHER_CASES[5],
        OTHER_CASES[6],
        OTHER_CASES[2],
    ] {
        let key = data(case.key_len, 8);
        let iv = iv_for(&case);
        let theirs = openssl(&openssl_args(&case, &key, &iv, true, false), &plain);
        for chunk in ["100", "64", "1000", "8"] {
            let ours = run(raw_cmd(&dir, &case, &key, &iv, true, None, 0).args([
                "--chunk-size",
                chunk,
                "--threads",
                "3",
                "-o",
                "-",
                "plain",
            ]))
            .success()
            .get_output()
            .stdout
            .clone();
            assert!(ours == theirs, "{} with --chunk-size {chunk}", case.ours);
        }
    }
}

/// Whether process `pid` has an output open in `dir`: an unnamed `O_TMPFILE`
/// file (`/proc/PID/fd/N` -> `DIR/#INODE (deleted)`) or a named partial file.
#[cfg(target_os = "linux")]
fn has_output_open(pid: u32, dir: &Path) -> bool {
    let dir = fs::canonicalize(dir).unwrap();
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .any(|t| {
            let name = t.file_name().unwrap_or_default().to_string_lossy();
            t.parent() == Some(dir.as_path())
                && (name.starts_with('#') || name.starts_with(".clustercrypt-"))
        })
}

/// Sends `signal` to a decryption that is waiting for input, its output
/// already open, and checks that nothing is left afterwards. `named`: with
/// the named fallback forced, where the temporary file is visible meanwhile.
#[cfg(target_os = "linux")]
fn interrupt_leaves_nothing(signal: &str, named: bool) {
    use std::time::Instant;
    let dir = Dir::new();
    dir.keys();
    let mut cmd = bin();
    cmd.current_dir(dir.root())
        .args(["decrypt", "--key-file", "key", "-q", "-o", "out", "-"])
        .env_remove("CLUSTERCRYPT_TEST_NO_TMPFILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if named {
        cmd.env("CLUSTERCRYPT_TEST_NO_TMPFILE", "1");
    }
    let mut child = cmd.spawn().unwrap();
    // Keep stdin open: the process waits for its header with the output
    // already open.
    let stdin = child.stdin.take();
    let start = Instant::now();
    let open = || has_output_open(child.id(), dir.root());
    while !open() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(open(), "the output is open when the run starts");
    // Named only with the fallback: otherwise nothing is visible meanwhile.
    assert_eq!(dir.leftovers().len(), usize::from(named));
    let killed = std::process::Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The signal alone ends the run (the handler exits with 130); only then
    // close stdin, or the end of input could win the race and fail the run.
    let start = Instant::now();
    let mut status = None;
    while status.is_none() && start.elapsed() < Duration::from_secs(10) {
        status = child.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stdin);
    let status = status.unwrap_or_else(|| child.wait().unwrap());
    assert_eq!(status.code(), Some(130), "{signal}");
    dir.assert_nothing_written("out");
}

#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_run_leaves_no_temporary_file() {
    for named in [false, true] {
        interrupt_leaves_nothing("INT", named);
        interrupt_leaves_nothing("TERM", named);
    }
}
