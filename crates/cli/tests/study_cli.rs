//! The studies' reports from the real binary: `bench --files` (seed 002),
//! `hpl` and the power options (seed 000).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn cc() -> Command {
    Command::cargo_bin("clustercrypt").unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = cc()
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[test]
fn files_default_set_is_the_studys() {
    let v = json(&["bench", "--files", "64K", "--no-rapl"]);
    let rows = v["files"].as_array().unwrap();
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{}-{}", r["cipher"].as_str().unwrap(), r["key_bits"]))
        .collect();
    assert_eq!(
        labels,
        [
            "aes-ecb-256",
            "des-ecb-64",
            "des3_ede-ecb-192",
            "blowfish-ecb-128",
            "twofish-ecb-256",
            "rc2-ecb-128",
            "aes-cbc-256",
            "des-cbc-64",
            "des3_ede-cbc-192",
            "blowfish-cbc-128",
            "twofish-cbc-256",
            "rc2-cbc-128",
            "rc4-256",
            "chacha20-256"
        ]
    );
    for r in rows {
        assert_eq!(r["file_bytes"], 65536);
        assert_eq!(r["threads"], 1);
        assert!(r["encrypt_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["decrypt_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpu_percent"].as_f64().unwrap() >= 0.0);
        assert!(r["peak_rss_bytes"].as_u64().unwrap() > 0);
    }
    assert!(v.get("power").is_none());
    assert!(v["ciphers"].as_array().unwrap().is_empty());
}

#[test]
fn files_table_and_meter_power() {
    let out = cc()
        .args([
            "bench",
            "--files",
            "64K,128K",
            "--cipher",
            "aes-cbc",
            "--cipher",
            "chacha20",
            "--runs",
            "2",
            "--threads",
            "2",
            "--watts",
            "37.6",
            "--cost",
            "320",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# File-size study"), "{text}");
    assert!(lines[0].contains("2 thread(s), 2 run(s)"), "{text}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["#", "Cipher", "Key", "64K", "128K"]
    );
    let aes: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(aes[..2], ["aes-cbc", "256b"]);
    assert!(aes[2].parse::<f64>().unwrap() > 0.0);
    assert!(
        text.contains("# Power, source: external meter (--watts)"),
        "{text}"
    );
    assert!(text.contains("files chacha20 256b"), "{text}");
    assert!(!text.contains("Tests are approximate"), "{text}");

    let v = json(&[
        "bench", "--files", "64K", "--cipher", "rc4", "--watts", "37.6", "--cost", "320",
    ]);
    let p = &v["power"][0];
    assert_eq!(p["source"], "meter");
    assert_eq!(p["watts"], 37.6);
    assert_eq!(p["cost_usd"], 320.0);
    assert!(p["mib_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn files_csv_and_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("files.csv");
    cc().args([
        "bench", "--files", "64K", "--cipher", "des-ecb", "--format", "csv", "-o",
    ])
    .arg(&out)
    .args(["--files-dir"])
    .arg(dir.path())
    .assert()
    .success();
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("kind,cipher,algorithm,mode,key_bits,file_bytes")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("file,des-ecb,des,ecb,64,65536,1,")
    );
    // Only the output is left behind in --files-dir.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn files_usage_errors() {
    for args in [
        &["bench", "--files", "0"][..],
        &["bench", "--files", "12X"],
        &["bench", "--files", ","],
        &["bench", "--files", "64K", "--cipher", "aes-xts-plain64"],
        &["bench", "--files", "64K", "--cipher", "aes-gcm"],
        &["bench", "--files", "64K", "--all"],
        &["bench", "--files", "64K", "--files-dir", "/nonexistent/dir"],
        &["bench", "--files", "64K", "--no-rapl", "--cost", "100"],
        &["bench", "--files", "64K", "--watts", "0"],
        &[
            "bench",
            "--files",
            "64K",
            "--watts",
            "5",
            "--watts-command",
            "echo 5",
        ],
        &[
            "bench",
            "--files",
            "64K",
            "--watts-command",
            "echo no number",
        ],
        &["bench", "--files", "64K", "--watts-command", "exit 1"],
    ] {
        cc().args(args).assert().code(2);
    }
}

#[test]
fn rapl_on_request_only_where_it_exists() {
    if std::path::Path::new("/sys/class/powercap").exists() {
        eprintln!("NOTICE: this machine has powercap; the no-RAPL case is not checked");
        return;
    }
    cc().args(["bench", "--cipher", "aes-xts-plain64", "--rapl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no RAPL counters"));
    cc().args(["bench", "--files", "64K", "--rapl", "--no-rapl"])
        .assert()
        .code(2);
}

#[test]
fn bench_rows_get_power_from_a_command() {
    let v = json(&[
        "bench",
        "--cipher",
        "aes-xts-plain64",
        "--cipher",
        "twofish-cbc-essiv:sha256",
        "--time",
        "0.02",
        "--buffer-size",
        "64K",
        "--request-size",
        "16K",
        "--watts-command",
        "echo 'power: 42.5 W'",
        "--watts-interval",
        "0.01",
    ]);
    let power = v["power"].as_array().unwrap();
    assert_eq!(power.len(), 2);
    assert_eq!(power[0]["workload"], "bench aes-xts 512b");
    assert_eq!(power[0]["source"], "command");
    assert_eq!(power[0]["watts"], 42.5);
    let row = &v["ciphers"][0];
    let mean =
        (row["encrypt_mib_s"].as_f64().unwrap() + row["decrypt_mib_s"].as_f64().unwrap()) / 2.0;
    assert!((power[0]["mib_s"].as_f64().unwrap() - mean).abs() < 1e-6);
}

#[test]
fn hpl_dry_run_plans_the_pi_cluster() {
    let hosts: Vec<String> = (1..=20).map(|i| format!("pi{i}")).collect();
    let out = cc()
        .args([
            "hpl",
            "--dry-run",
            "--cores",
            "4",
            "--memory",
            "1G",
            "--hosts",
        ])
        .arg(hosts.join(","))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // The value of the input line labelled `label` (HPL reads "value  label").
    let value = |label: &str| {
        text.lines()
            .find_map(|l| {
                let (v, rest) = l.split_once(' ')?;
                (rest.trim() == label).then(|| v.to_string())
            })
            .unwrap_or_default()
    };
    assert_eq!(value("Ns"), "46272", "{text}");
    assert_eq!(value("NBs"), "192");
    assert_eq!(value("Ps"), "8");
    assert_eq!(value("Qs"), "10");
    assert!(text.contains("-np 80 --host pi1:4,pi2:4,"), "{text}");
    assert!(text.trim_end().ends_with(" hpcc"), "{text}");
}

#[test]
fn hpl_usage_errors() {
    cc().args(["hpl", "--dry-run", "--p", "2"]).assert().code(2);
    cc().args([
        "hpl",
        "--dry-run",
        "--p",
        "2",
        "--q",
        "2",
        "--processes",
        "3",
    ])
    .assert()
    .code(2);
    cc().args(["hpl", "--dry-run", "--memory-fraction", "1.5"])
        .assert()
        .code(2);
    cc().args(["hpl", "--dry-run", "--n", "1000000", "--memory", "1G"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("more than the"));
    cc().args(["hpl", "--n", "500", "--program", "no-such-hpcc-here"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("apt-get install hpcc openmpi-bin"));
    cc().args(["hpl", "--n", "500", "--mpirun", "/no/such/mpirun"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("libopenblas0-serial"));
}

/// A real HPL run through the binary; skipped with a notice only when hpcc or
/// mpirun is not installed (CI installs them).
#[test]
fn hpl_real_run_with_meter_power() {
    if !installed("hpcc") || !installed("mpirun") {
        eprintln!("NOTICE: hpcc or mpirun not installed; skipping the real HPL run");
        return;
    }
    let v = json(&[
        "hpl", "--n", "600", "--nb", "64", "--watts", "61.3", "--cost", "700",
    ]);
    let h = &v["hpl"][0];
    assert!(h["gflops"].as_f64().unwrap() > 0.0, "{h}");
    assert_eq!(h["n"], 600);
    assert_eq!(h["nb"], 64);
    assert_eq!(h["passed"], true);
    let p = &v["power"][0];
    assert_eq!(p["source"], "meter");
    assert_eq!(p["gflops"], h["gflops"]);
    assert_eq!(p["cost_usd"], 700.0);
}
