//! The text exporter must reproduce `cryptsetup benchmark` listings byte for byte:
//! both published listings (seed 003: a Raspberry Pi 4 and a laptop) are parsed
//! and re-rendered from our report type.

use clustercrypt_bench::export::{Format, TEXT_HEADER, TEXT_PREAMBLE};
use clustercrypt_bench::import::parse_cryptsetup;
use clustercrypt_bench::report::{CipherRow, Report, RunFigures, SCHEMA};
use clustercrypt_catalogue::CipherSpec;

/// The listing read by the importer (which accepts and skips the `$` prompt line).
fn parse_listing(text: &str) -> Report {
    parse_cryptsetup(text).expect("the listing imports")
}

fn check(listing: &str) {
    let expected: String = listing
        .lines()
        .filter(|l| !l.starts_with('$'))
        .map(|l| format!("{l}\n"))
        .collect();
    let report = parse_listing(&expected);
    assert_eq!(report.ciphers.len(), 12);
    assert_eq!(report.kdfs.len(), 7);
    assert_eq!(Format::Text.render(&report), expected);
}

#[test]
fn reproduces_the_raspberry_pi_4_listing() {
    check(include_str!("data/cryptsetup_pi4.txt"));
}

#[test]
fn reproduces_the_laptop_listing() {
    check(include_str!("data/cryptsetup_laptop.txt"));
}

#[test]
fn other_formats_carry_the_same_rows() {
    let report = parse_listing(include_str!("data/cryptsetup_laptop.txt"));
    let json: serde_json::Value =
        serde_json::from_str(&Format::Json.render(&report)).expect("valid JSON");
    assert_eq!(json["schema"], SCHEMA);
    let rows = json["ciphers"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[0]["cipher"], "aes-cbc");
    assert_eq!(rows[0]["key_bits"], 128);
    assert_eq!(rows[0]["encrypt_mib_s"], 1745.6);
    assert_eq!(rows[0]["decrypt_mib_s"], 6648.3);
    assert_eq!(json["kdfs"][0]["kdf"], "pbkdf2");
    assert_eq!(json["kdfs"][0]["iterations_per_second"], 3134756);
    assert_eq!(json["kdfs"][6]["memory_kib"], 1048576);
    for key in [
        "hostname",
        "cpu_model",
        "cores",
        "memory_bytes",
        "kernel",
        "cpu_features",
    ] {
        assert!(json["machine"].get(key).is_some(), "machine.{key}");
    }

    let csv = Format::Csv.render(&report);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), first.len());
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(first[col("cipher")], "aes-cbc");
    assert_eq!(first[col("encrypt_mib_s")], "1745.6");
    assert_eq!(csv.lines().count(), 1 + 12 + 7);

    let md = Format::Markdown.render(&report);
    assert!(md.contains("| aes-xts | 512 | 4774.2 | 4733.9 |"), "{md}");
    assert!(
        md.contains("| PBKDF2-sha512 | 1989707 iterations/s |"),
        "{md}"
    );
}

#[test]
fn text_marks_insecure_rows_and_threads() {
    let mut report = parse_listing(include_str!("data/cryptsetup_pi4.txt"));
    let des = CipherSpec::parse("des-cbc", None).unwrap();
    report.settings.threads = 2;
    report.ciphers = vec![
        CipherRow::from_runs(
            &des,
            2,
            "soft",
            &[RunFigures {
                aggregate: (100.0, 110.0),
                workers: vec![(50.0, 55.0), (50.0, 55.0)],
            }],
        )
        .unwrap(),
    ];
    report.kdfs.clear();
    let text = Format::Text.render(&report);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], TEXT_PREAMBLE);
    assert!(lines.contains(&TEXT_HEADER));
    assert!(
        lines.contains(
            &"        des-cbc         64b       100.0 MiB/s       110.0 MiB/s  (insecure)"
        ),
        "{text}"
    );
    assert!(
        lines.contains(&"#   thread 1: 50.0 MiB/s 55.0 MiB/s"),
        "{text}"
    );
}

#[test]
fn json_reads_back_into_the_same_report() {
    let mut report = parse_listing(include_str!("data/cryptsetup_pi4.txt"));
    report.files.push(clustercrypt_bench::report::FileRow {
        cipher: "aes-cbc".into(),
        algorithm: clustercrypt_catalogue::Algorithm::Aes,
        mode: clustercrypt_catalogue::Mode::Cbc,
        key_bits: 128,
        file_bytes: 1 << 20,
        threads: 1,
        encrypt_s: 0.5,
        decrypt_s: 0.25,
        cpu_percent: 99.0,
        peak_memory_bytes: 4096,
        peak_rss_bytes: 8 << 20,
        peak_memory_reset: true,
        insecure: false,
    });
    let json = Format::Json.render(&report);
    let back: Report = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, report);
}
