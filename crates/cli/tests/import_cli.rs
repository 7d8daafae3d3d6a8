//! `clustercrypt import-cryptsetup` and `clustercrypt recommend`, run as the real binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn cc() -> Command {
    Command::cargo_bin("clustercrypt").unwrap()
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/tests/data")
        .join(name)
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

fn row<'a>(report: &'a Value, cipher: &str, bits: u64) -> &'a Value {
    report["ciphers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cipher"] == cipher && r["key_bits"] == bits)
        .unwrap_or_else(|| panic!("no {cipher} {bits}b row"))
}

#[test]
fn imports_both_reference_listings() {
    let dir = tempfile::tempdir().unwrap();
    for (name, host, cipher, bits, enc, dec) in [
        ("cryptsetup_pi4.txt", "pi4", "aes-xts", 512, 68.6, 69.4),
        (
            "cryptsetup_laptop.txt",
            "laptop",
            "serpent-xts",
            256,
            737.5,
            700.7,
        ),
    ] {
        let out = dir.path().join(format!("{host}.json"));
        cc().arg("import-cryptsetup")
            .arg(data(name))
            .args(["--machine-name", host, "-o"])
            .arg(&out)
            .assert()
            .success()
            .stdout("");
        let r = json(&std::fs::read(&out).unwrap());
        assert_eq!(r["schema"], "clustercrypt-bench/1");
        assert_eq!(r["machine"]["hostname"], host);
        assert_eq!(
            r["source"],
            format!("cryptsetup benchmark listing {name}").as_str()
        );
        assert_eq!(r["ciphers"].as_array().unwrap().len(), 12);
        assert_eq!(r["kdfs"].as_array().unwrap().len(), 7);
        let row = row(&r, cipher, bits);
        assert_eq!(row["encrypt_mib_s"], enc);
        assert_eq!(row["decrypt_mib_s"], dec);
        assert_eq!(row["encrypt"]["n"], 1);
        // An existing output is kept unless --force.
        cc().arg("import-cryptsetup")
            .arg(data(name))
            .arg("-o")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--force"));
    }
}

#[test]
fn stdin_crlf_and_text_output() {
    let listing = std::fs::read_to_string(data("cryptsetup_laptop.txt")).unwrap();
    let crlf = listing.replace('\n', "\r\n");
    let out = cc()
        .args(["import-cryptsetup", "-", "--format", "text"])
        .write_stdin(crlf)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // Printed back in cryptsetup's format, the listing is unchanged (less the prompt).
    let expected: String = listing
        .lines()
        .filter(|l| !l.starts_with('$'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(String::from_utf8(out).unwrap(), expected);

    let csv = cc()
        .args(["import-cryptsetup", "-", "--format", "csv"])
        .write_stdin(listing)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.contains("cipher,aes-xts,aes-xts-plain64,512,1,4774.2,4733.9"),
        "{csv}"
    );
}

#[test]
fn imports_its_own_bench_text_output() {
    let text = cc()
        .args([
            "bench",
            "-c",
            "aes-xts-plain64",
            "-c",
            "des-cbc",
            "--time",
            "0.02",
            "--buffer-size",
            "64K",
            "--request-size",
            "16K",
            "--threads",
            "2",
            "--runs",
            "2",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    let printed: Vec<(String, f64, f64)> = text
        .lines()
        .filter(|l| l.contains("MiB/s") && !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[0].to_string(),
                w[2].parse().unwrap(),
                w[4].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(printed.len(), 2, "{text}");
    let out = cc()
        .args(["import-cryptsetup", "-", "--machine-name", "here"])
        .write_stdin(text.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r = json(&out);
    assert_eq!(r["settings"]["threads"], 2);
    assert_eq!(r["settings"]["runs"], 2);
    let rows = r["ciphers"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, (cipher, enc, dec)) in rows.iter().zip(&printed) {
        assert_eq!(row["cipher"], cipher.as_str());
        assert_eq!(row["encrypt_mib_s"], *enc);
        assert_eq!(row["decrypt_mib_s"], *dec);
        assert_eq!(row["per_thread"].as_array().unwrap().len(), 2);
        assert_eq!(row["encrypt"]["n"], 2);
    }
    assert_eq!(rows[1]["insecure"], true);
}

#[test]
fn malformed_input_names_the_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "# Tests are approximate using memory only (no storage IO).\n\
         #     Algorithm |       Key |      Encryption |      Decryption\n\
                 aes-cbc        128b        78.0 MiB/s\n",
    )
    .unwrap();
    let out = dir.path().join("out.json");
    cc().arg("import-cryptsetup")
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.txt: line 3: expected a cipher row",
        ));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left"
    );

    cc().args(["import-cryptsetup", "-"])
        .write_stdin("Required kernel crypto interface not available.\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "line 1: cryptsetup could not run the benchmark",
        ));

    // The output is never the input, not even with --force.
    let good = dir.path().join("pi4.txt");
    std::fs::copy(data("cryptsetup_pi4.txt"), &good).unwrap();
    cc().arg("import-cryptsetup")
        .arg(&good)
        .arg("-o")
        .arg(&good)
        .arg("--force")
        .assert()
        .code(2);
    assert_eq!(
        std::fs::read(&good).unwrap(),
        std::fs::read(data("cryptsetup_pi4.txt")).unwrap()
    );
    cc().args(["import-cryptsetup", "/nonexistent/listing.txt"])
        .assert()
        .code(2);
}

fn recommend_json(path: &Path) -> Value {
    let out = cc()
        .arg("recommend")
        .arg(path)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    json(&out)
}

#[test]
fn recommends_from_listings() {
    let pi = recommend_json(&data("cryptsetup_pi4.txt"));
    assert_eq!(pi["aes"]["instructions"], "likely_absent");
    assert_eq!(pi["disk"]["choice"], "xchacha12,aes-adiantum-plain64");
    assert_eq!(pi["file"]["choice"], "chacha20-poly1305");
    let laptop = recommend_json(&data("cryptsetup_laptop.txt"));
    assert_eq!(laptop["aes"]["instructions"], "likely_present");
    assert_eq!(laptop["disk"]["choice"], "aes-xts-plain64");
    assert_eq!(laptop["disk"]["key_bits"], 512);
    assert_eq!(laptop["file"]["choice"], "aes-256-gcm");
    cc().arg("recommend")
        .arg(data("cryptsetup_laptop.txt"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "cryptsetup luksFormat --type luks2 --cipher aes-xts-plain64 --key-size 512 DEVICE",
        ));
}

/// One results file, and the same figures as a CPU without AES instructions
/// would produce them (AES in software): the advice changes.
#[test]
fn recommendation_changes_without_aes_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let out = cc()
        .args([
            "bench",
            "-c",
            "aes-xts-plain64",
            "-c",
            "serpent-xts-plain64",
            "-c",
            "aes-gcm",
            "-c",
            "chacha20-poly1305",
            "--time",
            "0.02",
            "--buffer-size",
            "64K",
            "--request-size",
            "16K",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut report = json(&out);
    report["machine"]["arch"] = "x86_64".into();
    report["machine"]["cpu_features"] = serde_json::json!(["aes", "pclmulqdq", "avx2"]);
    for row in report["ciphers"].as_array_mut().unwrap() {
        let (enc, dec) = match row["cipher"].as_str().unwrap() {
            "aes-xts" => (3000.0, 3000.0),
            "serpent-xts" => (700.0, 700.0),
            "aes-gcm" => (4000.0, 4000.0),
            _ => (1500.0, 1500.0),
        };
        row["encrypt_mib_s"] = enc.into();
        row["decrypt_mib_s"] = dec.into();
    }
    let with = dir.path().join("with-aes.json");
    std::fs::write(&with, serde_json::to_vec(&report).unwrap()).unwrap();
    let rec = recommend_json(&with);
    assert_eq!(rec["aes"]["instructions"], "present");
    assert_eq!(rec["disk"]["choice"], "aes-xts-plain64");
    assert_eq!(rec["file"]["choice"], "aes-256-gcm");

    report["machine"]["cpu_features"] = serde_json::json!(["avx2"]);
    for row in report["ciphers"].as_array_mut().unwrap() {
        if row["algorithm"] == "aes" {
            row["encrypt_mib_s"] = 150.0.into();
            row["decrypt_mib_s"] = 160.0.into();
        }
    }
    let without = dir.path().join("without-aes.json");
    std::fs::write(&without, serde_json::to_vec(&report).unwrap()).unwrap();
    let rec = recommend_json(&without);
    assert_eq!(rec["aes"]["instructions"], "absent");
    assert_eq!(rec["disk"]["choice"], "serpent-xts-plain64");
    assert!(
        rec["disk"]["reason"]
            .as_str()
            .unwrap()
            .contains("AES runs in software"),
        "{rec}"
    );
    assert_eq!(rec["file"]["choice"], "chacha20-poly1305");

    cc().arg("recommend")
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(2);
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": \"clustercrypt-bench/1\"").unwrap();
    cc().arg("recommend")
        .arg(&broken)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a clustercrypt bench report"));
}

#[test]
fn recommends_from_a_quick_run_here() {
    let out = cc()
        .args(["recommend", "--time", "0.01", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rec = json(&out);
    assert!(rec["disk"]["mib_s"].as_f64().unwrap() > 0.0, "{rec}");
    assert!(rec["file"]["mib_s"].as_f64().unwrap() > 0.0, "{rec}");
    assert_eq!(rec["missing"].as_array().unwrap().len(), 0, "{rec}");
    cc().args(["recommend", "x.json", "--time", "1"])
        .assert()
        .code(2);
}

#[test]
fn markdown_of_a_listing_says_the_machine_is_not_described() {
    let out = cc()
        .arg("import-cryptsetup")
        .arg(data("cryptsetup_pi4.txt"))
        .args(["--machine-name", "pi4", "--format", "markdown"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("**pi4**: machine not described (cryptsetup benchmark listing"),
        "{text}"
    );
    assert!(!text.contains("0 cores"));
    assert!(text.contains("| aes-xts | 512 | 68.6 | 69.4 |"), "{text}");
}
