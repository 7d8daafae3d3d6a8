//! `clustercrypt report` and `clustercrypt compare`, run as the real binary on
//! results that `clustercrypt bench` wrote.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

fn cc() -> Command {
    Command::cargo_bin("clustercrypt").unwrap()
}

/// Quick real results: two CBC rows, as `bench --format json` writes them.
fn bench_results(dir: &Path) -> PathBuf {
    let path = dir.join("results.json");
    cc().args([
        "bench",
        "--cipher",
        "aes-cbc",
        "--cipher",
        "twofish-cbc",
        "--no-kdf",
        "--time",
        "0.02",
        "--buffer-size",
        "64K",
        "--request-size",
        "16K",
        "--format",
        "json",
        "-o",
    ])
    .arg(&path)
    .assert()
    .success();
    path
}

/// The same results with a cluster sweep on 1-3 nodes, as `bench --cluster --sweep` adds.
fn cluster_results(dir: &Path) -> PathBuf {
    let mut report: Value =
        serde_json::from_slice(&std::fs::read(bench_results(dir)).unwrap()).unwrap();
    let row = |nodes: usize| {
        json!({"cipher": "aes-cbc", "key_bits": 256, "nodes": nodes,
               "encrypt_mib_s": 40.0 * nodes as f64, "decrypt_mib_s": 50.0 * nodes as f64,
               "start_skew_ms": 0.1, "per_node": []})
    };
    report["cluster"] = json!({"ranks": 3, "rows": [row(3)], "sweep": [row(1), row(2), row(3)]});
    report["machine"]["hostname"] = json!("pi-cluster");
    let path = dir.join("cluster.json");
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    path
}

#[test]
fn html_report_holds_figures_tables_and_sources_offline() {
    let dir = tempfile::tempdir().unwrap();
    let results = cluster_results(dir.path());
    let out = dir.path().join("report.html");
    cc().arg("report")
        .arg(&results)
        .args([
            "--ref",
            "pi3b-cluster",
            "--ref",
            "nuc",
            "--ref",
            "mrd",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for figure in ["throughput", "cluster-encrypt", "cluster-decrypt"] {
        assert!(html.contains(&format!("id=\"{figure}\"")), "{figure}");
        assert!(html.contains(&format!("id=\"table-{figure}\"")), "{figure}");
    }
    // The measured series and the published ones, in the figure and its table.
    assert!(html.contains("pi-cluster encrypt"));
    assert!(html.contains("aes-cbc 256b"));
    assert!(html.contains("Raspberry Pi 3 B+ cluster aes-cbc 256b (published)"));
    assert!(html.contains("000_9a184237f0807cfc.txt, section IV-A"));
    assert!(!html.contains("http://") && !html.contains("https://"));
    // A report is meant to be shared, unlike keys and plaintext (0600).
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&out).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
}

#[test]
fn svg_and_png_files_per_figure() {
    let dir = tempfile::tempdir().unwrap();
    let results = bench_results(dir.path());
    let svg = dir.path().join("svg");
    cc().arg("report")
        .arg(&results)
        .args([
            "--ref",
            "laptop-cryptsetup",
            "--figure",
            "throughput",
            "--svg",
        ])
        .arg(&svg)
        .assert()
        .success();
    let names: Vec<_> = std::fs::read_dir(&svg)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["throughput.svg"]);
    let text = std::fs::read_to_string(svg.join("throughput.svg")).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("laptop encrypt (published)"));

    let png = dir.path().join("png");
    cc().arg("report")
        .arg(&results)
        .args(["--ref", "hpl", "--png"])
        .arg(&png)
        .assert()
        .success();
    for name in ["throughput.png", "hpl.png"] {
        let bytes = std::fs::read(png.join(name)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert!(width >= 800 && height >= 300, "{name}: {width}x{height}");
    }
}

#[test]
fn published_figures_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study.html");
    cc().args([
        "report",
        "--ref",
        "cluster-study",
        "--ref",
        "hpl",
        "--ref",
        "power",
        "-o",
    ])
    .arg(&out)
    .assert()
    .success();
    let html = std::fs::read_to_string(&out).unwrap();
    for figure in ["cluster-encrypt", "hpl", "power", "efficiency"] {
        assert!(html.contains(&format!("id=\"{figure}\"")), "{figure}");
    }
    assert!(html.contains("44.1"));
}

#[test]
fn bad_results_are_usage_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let bad = dir.path().join("notes.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    cc().arg("report")
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "notes.json is not a clustercrypt results file",
        ));
    let text = dir.path().join("listing.txt");
    std::fs::write(&text, "aes-cbc 128b 1.0 MiB/s 2.0 MiB/s\n").unwrap();
    cc().args(["compare", "--ref", "nuc"])
        .arg(&text)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("listing.txt"));
    let mut other: Value =
        serde_json::from_slice(&std::fs::read(bench_results(dir.path())).unwrap()).unwrap();
    other["schema"] = json!("something-else/9");
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, other.to_string()).unwrap();
    cc().arg("report")
        .arg(&wrong)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("schema 'something-else/9'"));
    cc().arg("report")
        .arg(dir.path().join("missing.json"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.json"));
    assert!(!out.exists());
}

#[test]
fn usage_errors_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let results = bench_results(dir.path());
    let out = dir.path().join("r.html");
    let fails = |args: &[&str], message: &str| {
        cc().arg("report")
            .arg(&results)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
        assert!(!out.exists(), "{args:?}");
    };
    let o = out.to_str().unwrap();
    fails(&["--ref", "nope", "-o", o], "no reference set named 'nope'");
    fails(&["--figure", "nope", "-o", o], "no figure named 'nope'");
    fails(
        &["--figure", "hpl", "-o", o],
        "the figure 'hpl' has no data here",
    );
    fails(&[], "say where the report goes");
    // Never over the input, never over an existing file without --force.
    cc().arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the input"));
    std::fs::write(&out, "keep").unwrap();
    cc().arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    cc().arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
}

#[test]
fn compare_text_markdown_json() {
    let dir = tempfile::tempdir().unwrap();
    let results = cluster_results(dir.path());
    cc().arg("compare")
        .arg(&results)
        .args(["--ref", "nuc", "--ref", "pi3b-cluster"])
        .assert()
        .success()
        .stdout(predicate::str::contains("aes-cbc 256b encrypt"))
        .stdout(predicate::str::contains("pi-cluster (3 nodes)"))
        .stdout(predicate::str::contains(
            "Raspberry Pi 3 B+ cluster (20 nodes)",
        ))
        .stdout(predicate::str::contains("source: 000_9a184237f0807cfc.txt"));
    cc().arg("compare")
        .arg(&results)
        .args(["--ref", "sbc-table3", "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("| quantity | unit |"))
        .stdout(predicate::str::contains("ODROID XU4"));
    let out = cc()
        .arg("compare")
        .arg(&results)
        .args(["--ref", "mrd", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["references"], json!(["mrd"]));
    let rows = doc["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let ratio = row["this_value"].as_f64().unwrap() / row["reference_value"].as_f64().unwrap();
        assert!((row["ratio"].as_f64().unwrap() - ratio).abs() < 1e-9);
        assert!(row["source"].as_str().unwrap().contains("section IV-A"));
    }
    // Nothing in common: a failure that says so.
    cc().arg("compare")
        .arg(&results)
        .args(["--ref", "tea-cluster"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("share no quantity"));
}

#[test]
fn list_refs_names_every_set_with_its_source() {
    let out = cc()
        .args(["compare", "--list-refs", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let sets: Value = serde_json::from_slice(&out).unwrap();
    let names: Vec<&str> = sets
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for name in [
        "nuc",
        "mrd",
        "pi3b-cluster",
        "sbc-table3",
        "pi4-cryptsetup",
        "laptop-cryptsetup",
        "iot-pi3",
        "iot-bbb",
        "hpl",
        "power",
        "tea-cluster",
    ] {
        assert!(names.contains(&name), "{name}");
    }
    assert!(
        sets.as_array()
            .unwrap()
            .iter()
            .all(|s| s["source"].as_str().unwrap().contains(".txt"))
    );
    cc().args(["compare", "--list-refs"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pi4-cryptsetup"));
}
