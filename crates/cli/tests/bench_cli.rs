//! `clustercrypt bench` and friends, run as the real binary.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn cc() -> Command {
    Command::cargo_bin("clustercrypt").unwrap()
}

/// `cc()` with `CLUSTERCRYPT_DISABLE_HWF=mask`. Under QEMU (the ARM cross tests:
/// not x86-64, with a Cargo target runner set) the binary cannot run itself again
/// to hand AWS-LC the mask, since exec finds no binfmt handler; the test sets
/// AWS-LC's variable as that second run would.
fn cc_masked(mask: &str) -> Command {
    let mut c = cc();
    c.env("CLUSTERCRYPT_DISABLE_HWF", mask);
    let runner =
        std::env::vars().any(|(k, _)| k.starts_with("CARGO_TARGET_") && k.ends_with("_RUNNER"));
    if cfg!(not(target_arch = "x86_64")) && runner {
        use clustercrypt_catalogue::cpu;
        if let Some((k, v)) = cpu::parse_mask(mask).ok().and_then(cpu::library_mask_env) {
            c.env(k, v);
        }
    }
    c
}

/// Fast settings so that the suite stays quick; the method is the same.
const FAST: &[&str] = &[
    "--time",
    "0.02",
    "--buffer-size",
    "64K",
    "--request-size",
    "16K",
];

fn json_of(args: &[&str]) -> Value {
    json_of_env(args, "")
}

/// Like [`json_of`], with `CLUSTERCRYPT_DISABLE_HWF` set to `mask`.
fn json_of_env(args: &[&str], mask: &str) -> Value {
    // Later options win over FAST where a test sets its own.
    let fast: Vec<&str> = FAST
        .chunks(2)
        .filter(|kv| !args.contains(&kv[0]))
        .flatten()
        .copied()
        .collect();
    let out = cc_masked(mask)
        .arg("bench")
        .args(fast)
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("bench prints valid JSON")
}

fn usage_error(args: &[&str], message: &str) {
    cc().args(args)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(message));
}

#[test]
fn error_paths_exit_2_with_a_clear_message() {
    usage_error(&["bench", "--cipher", "idea-cbc"], "unknown cipher 'idea'");
    usage_error(
        &["bench", "--cipher", "aes-cbc", "--key-size", "100"],
        "aes-cbc does not take a 100-bit key (it takes 128, 192 or 256 bits)",
    );
    usage_error(
        &[
            "bench",
            "--cipher",
            "aes-xts-plain64",
            "--key-size",
            "256",
            "--key-size",
            "128",
        ],
        "cannot be used multiple times",
    );
    usage_error(
        &["bench", "--cipher", "des-xts-plain64"],
        "XTS needs a 128-bit block cipher and des has 64-bit blocks",
    );
    usage_error(
        &["bench", "--cipher", "blowfish-xts"],
        "XTS needs a 128-bit block cipher and blowfish has 64-bit blocks",
    );
    usage_error(&["bench", "--cipher", "aes-ofb"], "unknown mode 'ofb'");
    usage_error(&["bench", "--cipher", "aes-cbc-essiv:md5"], "essiv:md5");
    usage_error(&["bench", "--threads", "0"], "not a thread count");
    usage_error(&["bench", "--threads", "many"], "not a thread count");
    usage_error(&["bench", "--time", "abc"], "not a time in seconds");
    usage_error(&["bench", "--time", "-1"], "");
    usage_error(&["bench", "--buffer-size", "12X"], "unknown unit");
    usage_error(&["bench", "--runs", "0"], "0 is not in 1..=1000");
    usage_error(&["bench", "--key-size", "256"], "--cipher");
    usage_error(&["bench", "--pbkdf", "scrypt"], "unknown PBKDF 'scrypt'");
    usage_error(
        &["bench", "--pbkdf", "pbkdf2", "--hash", "md5"],
        "unknown PBKDF2 hash 'md5'",
    );
    usage_error(&["bench", "--format", "xml"], "invalid value 'xml'");
    usage_error(
        &[
            "bench",
            "--cipher",
            "aes-cbc",
            "--buffer-size",
            "4K",
            "--request-size",
            "8K",
        ],
        "request size 8192 is larger than the buffer size 4096",
    );
    usage_error(
        &[
            "bench",
            "--cipher",
            "des-cbc",
            "--buffer-size",
            "4100",
            "--request-size",
            "100",
        ],
        "multiples of its 8-byte block",
    );
    usage_error(
        &["bench", "--all", "--cipher", "aes-cbc"],
        "cannot be used with",
    );
    usage_error(&["frobnicate"], "unrecognized subcommand");
    usage_error(&["bench", "--sweep"], "--cluster");
    if !cfg!(feature = "mpi") {
        usage_error(&["bench", "--cluster"], "built without MPI support");
    }
}

#[test]
fn version_names_cpu_features() {
    let out = cc()
        .arg("--version")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("clustercrypt "), "{text}");
    assert!(text.contains("cpu features:"), "{text}");
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let aes = std::arch::is_x86_feature_detected!("aes");
    #[cfg(target_arch = "aarch64")]
    let aes = std::arch::is_aarch64_feature_detected!("aes");
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
    let aes = false;
    if aes {
        assert!(text.contains(" aes"), "{text}");
    }
}

#[test]
fn cpu_mask_is_checked_and_reported() {
    let out = cc()
        .env("CLUSTERCRYPT_DISABLE_HWF", "aes,avx1024")
        .arg("--version")
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(err.contains("unknown CPU feature 'avx1024'"), "{err}");
    // Hiding everything leaves the portable tier, whatever this CPU has.
    let out = cc_masked("all")
        .arg("--version")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("cpu features: none\n"), "{text}");
    assert!(text.contains("tier: portable\n"), "{text}");
    // SSSE3 has no mask name (OpenSSL and libgcrypt use it at this tier too):
    // x86-64 CPUs with it run the SSSE3 bitsliced AES, others the portable one.
    assert!(
        text.contains("aes=soft") || text.contains("aes=ssse3"),
        "{text}"
    );
    // The machine record carries the same, and the rows say what ran.
    let j = json_of_env(&["--cipher", "aes-gcm", "--key-size", "256"], "all");
    assert_eq!(j["machine"]["cpu_tier"], "portable");
    assert_eq!(j["machine"]["cpu_features"], serde_json::json!([]));
    assert_eq!(
        j["machine"]["cpu_features_detected"],
        j["machine"]["cpu_features_disabled"]
    );
    // AES-GCM without AES-NI: ours (bitsliced AES, PSHUFB GHASH) where the
    // CPU has SSSE3 (no mask name), AWS-LC's portable code otherwise.
    let gcm = if text.contains("aes=ssse3") {
        "ssse3+pshufb"
    } else {
        "aws-lc:soft"
    };
    assert_eq!(j["ciphers"][0]["implementation"], gcm);
}

#[test]
fn one_row_in_json() {
    let j = json_of(&["--cipher", "aes-xts-plain64", "--key-size", "512"]);
    assert_eq!(j["schema"], "clustercrypt-bench/1");
    let rows = j["ciphers"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["cipher"], "aes-xts");
    assert_eq!(r["spec"], "aes-xts-plain64");
    assert_eq!(r["key_bits"], 512);
    assert_eq!(r["threads"], 1);
    assert!(r["encrypt_mib_s"].as_f64().unwrap() > 0.0);
    assert!(r["decrypt_mib_s"].as_f64().unwrap() > 0.0);
    assert_eq!(r["insecure"], false);
    assert!(!r["implementation"].as_str().unwrap().is_empty());
    assert!(
        j["kdfs"].as_array().unwrap().is_empty(),
        "--cipher alone measures no KDF"
    );
    assert!(j["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(j["tool"]["version"].is_string());
}

#[test]
fn threads_and_runs_are_reported() {
    let j = json_of(&["--cipher", "twofish-cbc", "--threads", "2", "--runs", "3"]);
    let r = &j["ciphers"][0];
    assert_eq!(r["threads"], 2);
    assert_eq!(r["per_thread"].as_array().unwrap().len(), 2);
    assert_eq!(r["encrypt"]["n"], 3);
    let s = &r["decrypt"];
    let (min, med, max) = (
        s["min"].as_f64().unwrap(),
        s["median"].as_f64().unwrap(),
        s["max"].as_f64().unwrap(),
    );
    assert!(min <= med && med <= max);
    assert_eq!(j["settings"]["threads"], 2);
    assert_eq!(j["settings"]["runs"], 3);
}

#[test]
fn all_covers_the_whole_catalogue() {
    let catalogue: Value = serde_json::from_slice(
        &cc()
            .args(["ciphers", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    let j = json_of(&["--all", "--no-kdf", "--time", "0.005"]);
    let rows = j["ciphers"].as_array().unwrap();
    let listed = catalogue.as_array().unwrap();
    assert_eq!(rows.len(), listed.len());
    for (row, entry) in rows.iter().zip(listed) {
        assert_eq!(row["spec"], entry["spec"]);
        assert_eq!(row["key_bits"], entry["key_bits"]);
    }
    let labels: Vec<&str> = rows.iter().map(|r| r["cipher"].as_str().unwrap()).collect();
    for want in [
        "aes-xts",
        "serpent-cbc",
        "twofish-ctr",
        "camellia-xts",
        "blowfish-cbc",
        "des-ecb",
        "des3_ede-cbc",
        "rc2-cbc",
        "tea-ecb",
        "xtea-ctr",
        "rc4",
        "chacha20",
        "aes-gcm",
        "xchacha12,aes-adiantum",
        "xchacha20,aes-adiantum",
        "aes-hctr2",
        "chacha20-poly1305",
    ] {
        assert!(labels.contains(&want), "missing {want}");
    }
    let insecure = |label: &str| {
        rows.iter()
            .filter(|r| r["cipher"] == label)
            .all(|r| r["insecure"] == true)
    };
    assert!(insecure("des-cbc") && insecure("rc4") && insecure("tea-ctr") && insecure("aes-ecb"));
    assert!(insecure("rc2-cbc"));
    assert!(
        rows.iter()
            .filter(|r| r["cipher"] == "aes-xts")
            .all(|r| r["insecure"] == false)
    );
}

#[test]
fn default_run_is_cryptsetups_table() {
    let out = cc()
        .arg("bench")
        .args(FAST)
        .args(["--iter-time", "30", "--pbkdf-memory", "8192"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // A row whose clock dropped gets a `#   throttled: ...` line below it
    // (cryptsetup would not print it); which rows depends on the machine.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("#   throttled: "))
        .collect();
    assert_eq!(lines.len(), 1 + 7 + 1 + 12, "{text}");
    assert_eq!(
        lines[0],
        "# Tests are approximate using memory only (no storage IO)."
    );
    for (line, hash) in
        lines[1..6]
            .iter()
            .zip(["sha1", "sha256", "sha512", "ripemd160", "whirlpool"])
    {
        let re = format!("PBKDF2-{hash:<9} ");
        assert!(line.starts_with(&re), "{line}");
        assert!(
            line.ends_with(" iterations per second for 256-bit key"),
            "{line}"
        );
    }
    assert!(lines[6].starts_with("argon2i   "), "{}", lines[6]);
    assert!(lines[7].starts_with("argon2id  "), "{}", lines[7]);
    assert!(
        lines[7].ends_with("for 256-bit key (requested 30 ms time)"),
        "{}",
        lines[7]
    );
    assert_eq!(
        lines[8],
        "#     Algorithm |       Key |      Encryption |      Decryption"
    );
    let expected = [
        ("aes-cbc", 128),
        ("serpent-cbc", 128),
        ("twofish-cbc", 128),
        ("aes-cbc", 256),
        ("serpent-cbc", 256),
        ("twofish-cbc", 256),
        ("aes-xts", 256),
        ("serpent-xts", 256),
        ("twofish-xts", 256),
        ("aes-xts", 512),
        ("serpent-xts", 512),
        ("twofish-xts", 512),
    ];
    for (line, (label, bits)) in lines[9..].iter().zip(expected) {
        // cryptsetup: "%15s  %9zub  %10.1f MiB/s  %10.1f MiB/s"
        assert_eq!(&line[..15], format!("{label:>15}"), "{line}");
        assert_eq!(&line[15..27], format!("  {bits:>9}b"), "{line}");
        let f: Vec<&str> = line[27..].split_whitespace().collect();
        assert_eq!(f.len(), 4, "{line}");
        assert!(f[0].parse::<f64>().unwrap() > 0.0 && f[1] == "MiB/s" && f[3] == "MiB/s");
        assert_eq!(line.len(), 15 + 12 + 2 * (2 + 10 + 6), "{line}");
    }
}

#[test]
fn kdf_only() {
    let out = cc()
        .args([
            "bench", "--pbkdf", "pbkdf2", "--hash", "sha512", "--time", "0.1",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[1].starts_with("PBKDF2-sha512 "));
    let j = json_of(&[
        "--pbkdf",
        "argon2i",
        "--iter-time",
        "20",
        "--pbkdf-memory",
        "4096",
        "--pbkdf-parallel",
        "2",
    ]);
    let k = &j["kdfs"][0];
    assert_eq!(k["kdf"], "argon2");
    assert_eq!(k["variant"], "argon2i");
    assert!(k["memory_kib"].as_u64().unwrap() <= 4096);
    assert!(k["iterations"].as_u64().unwrap() >= 4);
    assert_eq!(k["parallel"], 2);
    assert!(j["ciphers"].as_array().unwrap().is_empty());
}

#[test]
fn formats_and_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    cc().arg("bench")
        .args(FAST)
        .args([
            "--cipher", "chacha20", "--cipher", "rc4", "--format", "csv", "-o",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let csv = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("kind,cipher,spec,key_bits,threads,encrypt_mib_s,decrypt_mib_s"));
    assert_eq!(lines.len(), 3);
    assert!(lines[1].starts_with("cipher,chacha20,chacha20,256,1,"));
    assert!(lines[2].starts_with("cipher,rc4,rc4,128,1,"));
    let md = cc()
        .arg("bench")
        .args(FAST)
        .args(["--cipher", "des-cbc", "--format", "markdown"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("| des-cbc | 64 |"), "{md}");
    assert!(md.contains("des is broken"), "{md}");
    let missing = dir.path().join("no/such/dir/r.json");
    cc().arg("bench")
        .args(FAST)
        .args(["--cipher", "aes-cbc", "-o"])
        .arg(&missing)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot create a file in"));
    assert!(!missing.exists());
}

#[test]
fn ciphers_lists_and_marks_insecure() {
    cc().arg("ciphers")
        .assert()
        .success()
        .stdout(predicate::str::contains("aes-xts-plain64"))
        .stdout(predicate::str::contains(
            "des-cbc-plain64  (insecure: des is broken",
        ));
}

#[cfg(unix)]
#[test]
fn ctrl_c_prints_what_was_measured() {
    use assert_cmd::cargo::CommandCargoExt;
    use std::process::{Command as Std, Stdio};
    let child = Std::cargo_bin("clustercrypt")
        .unwrap()
        .args([
            "bench", "--all", "--no-kdf", "--time", "0.3", "--format", "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill(2) on our own child's pid with SIGINT has no memory effects.
    let rc = unsafe { libc_kill(child.id() as i32, 2) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("partial report is valid JSON");
    assert_eq!(j["interrupted"], true);
    let n = j["ciphers"].as_array().unwrap().len();
    assert!(n >= 1, "some rows were measured");
    assert!(n < 60, "the run was cut short");
}

#[cfg(unix)]
unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn clock_cycles_idleness_and_throttling_in_json() {
    let j = json_of(&["--cipher", "aes-cbc-essiv:sha256"]);
    let m = &j["machine"];
    let mhz = m["clock"]["mhz"].as_f64().expect("a clock");
    assert!(mhz > 100.0, "{mhz}");
    assert!(m["idle"]["load_average"].as_array().unwrap().len() == 3);
    assert!(m["idle"]["idle"].is_boolean());
    assert!(m["throttling"]["throttled_rows"].is_u64());
    let r = &j["ciphers"][0];
    let cpb = r["encrypt_cycles_per_byte"].as_f64().unwrap();
    let mib = r["encrypt_mib_s"].as_f64().unwrap();
    let row_mhz = r["cpu_mhz"].as_f64().unwrap();
    assert!((cpb - row_mhz * 1e6 / (mib * 1_048_576.0)).abs() < 1e-6 * cpb);
    assert!(r["throttled"].is_boolean());

    let j = json_of(&["--cipher", "aes-cbc-essiv:sha256", "--cpu-mhz", "1000"]);
    assert_eq!(j["machine"]["clock"]["source"], "override");
    assert_eq!(j["ciphers"][0]["cpu_mhz"], 1000.0);
    usage_error(&["bench", "--cpu-mhz", "0"], "not a clock in MHz");
}

#[test]
fn cycles_column_only_when_asked() {
    let run = |extra: &[&str]| {
        let out = cc()
            .arg("bench")
            .args(FAST)
            .args(["--cipher", "aes-xts-plain64"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let plain = run(&[]);
    assert!(
        !plain.contains("c/B") && !plain.contains("clock"),
        "{plain}"
    );
    let cycles = run(&["--cycles"]);
    assert!(cycles.contains("# clock: "), "{cycles}");
    let header = cycles
        .lines()
        .find(|l| l.starts_with("#     Algorithm"))
        .unwrap();
    assert!(
        header.ends_with("|  Enc cycles/B |  Dec cycles/B"),
        "{header}"
    );
    let row = cycles.lines().find(|l| l.contains("aes-xts")).unwrap();
    assert_eq!(row.matches(" c/B").count(), 2, "{row}");
    // The table part still parses as cryptsetup's: same width up to the column.
    assert_eq!(
        row.find("MiB/s"),
        plain
            .lines()
            .find(|l| l.contains("aes-xts"))
            .unwrap()
            .find("MiB/s")
    );
}

#[test]
fn strict_refuses_a_busy_machine() {
    let out = cc()
        .arg("bench")
        .args(FAST)
        .args(["--cipher", "aes-xts-plain64", "--strict"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => assert!(!err.contains("not idle"), "{err}"),
        Some(1) => {
            assert!(
                err.contains("the machine is not idle (load average"),
                "{err}"
            );
            assert!(out.stdout.is_empty(), "nothing measured, nothing printed");
        }
        c => panic!("exit {c:?}: {err}"),
    }
}

#[test]
fn per_core_type_rows_and_pinned_threads() {
    let j = json_of(&["--cipher", "aes-xts-plain64", "--per-core-type"]);
    let types = j["machine"]["core_types"].as_array().unwrap();
    assert!(!types.is_empty());
    let r = &j["ciphers"][0];
    let per = r["per_core_type"].as_array().unwrap();
    assert_eq!(per.len(), types.len());
    assert_eq!(per[0]["core_type"], types[0]["name"]);
    assert!(per[0]["encrypt_cycles_per_byte"].as_f64().unwrap() > 0.0);
    // The aggregate runs on every CPU, each worker pinned and named.
    let threads = r["threads"].as_u64().unwrap() as usize;
    let pt = r["per_thread"].as_array().unwrap();
    assert_eq!(pt.len(), threads);
    for (i, t) in pt.iter().enumerate() {
        assert!(t["cpu"].is_u64(), "thread {i}");
        assert!(t["core_type"].as_str().is_some(), "thread {i}");
    }
}

#[test]
fn disk_ciphers_by_cryptsetup_name() {
    let j = json_of(&[
        "--cipher",
        "xchacha12,aes-adiantum-plain64",
        "--cipher",
        "xchacha20,aes-adiantum",
        "--cipher",
        "aes-hctr2-plain64",
        "--no-kdf",
        "--time",
        "0.01",
    ]);
    let rows = j["ciphers"].as_array().unwrap();
    let got: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["cipher"].as_str().unwrap(),
                r["key_bits"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("xchacha12,aes-adiantum", 256),
            ("xchacha20,aes-adiantum", 256),
            ("aes-hctr2", 256)
        ]
    );
    for r in rows {
        assert!(r["encrypt_mib_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["decrypt_mib_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    cc().args(["bench", "--cipher", "aes-adiantum-plain64"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("xchacha12,aes-adiantum"));
    cc().args([
        "bench",
        "--cipher",
        "xchacha12,aes-adiantum-plain64",
        "-s",
        "512",
    ])
    .assert()
    .code(2)
    .stderr(predicates::str::contains("takes 256"));
}
