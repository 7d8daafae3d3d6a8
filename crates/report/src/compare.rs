//! This machine next to a published one: the rows both have (same cipher row and
//! key size, same file and mode, HPL, power), with a ratio that reads the same
//! way for every quantity: above 1, this machine does better.

use serde::Serialize;

use crate::figures::{Results, boards, configuration, format_short, format_value};
use crate::reference::{Direction, ReferenceData};
use clustercrypt_catalogue::Algorithm;

/// One quantity both sides have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    /// What is compared (`aes-cbc 128b encrypt`).
    pub quantity: String,
    /// Unit of both values.
    pub unit: String,
    /// This side (results label, and nodes for a cluster).
    pub this: String,
    /// Its value.
    pub this_value: f64,
    /// The published system.
    pub reference: String,
    /// Its value.
    pub reference_value: f64,
    /// Above 1: this side is faster (or draws less power). Throughput and GFLOPS:
    /// this / reference; seconds and watts: reference / this.
    pub ratio: f64,
    /// Where the published value comes from.
    pub source: String,
}

fn row(
    quantity: String,
    unit: &str,
    (this, this_value): (String, f64),
    (reference, reference_value): (String, f64),
    higher_is_better: bool,
    source: String,
) -> CompareRow {
    let ratio = if higher_is_better {
        this_value / reference_value
    } else {
        reference_value / this_value
    };
    CompareRow {
        quantity,
        unit: unit.into(),
        this,
        this_value,
        reference,
        reference_value,
        ratio,
        source,
    }
}

fn with_nodes(name: &str, nodes: usize) -> String {
    if nodes > 1 {
        format!("{name} ({nodes} nodes)")
    } else {
        name.to_string()
    }
}

/// Every quantity the results and the reference share.
pub fn compare(results: &[Results], refs: &ReferenceData) -> Vec<CompareRow> {
    let mut out = Vec::new();
    for r in results {
        // Single machine: its cipher rows against every published figure of the row.
        // A cluster: its aggregate on N nodes, against every figure of the row too
        // (a Pi cluster against a NUC is the study's question).
        let mut sides: Vec<(String, String, usize, f64, f64)> = r
            .report
            .ciphers
            .iter()
            .map(|c| {
                // Aggregates over several threads are not one core's figure, as cryptsetup's are.
                let who = if c.threads > 1 {
                    format!("{} ({} threads)", r.label, c.threads)
                } else {
                    r.label.clone()
                };
                (
                    who,
                    c.cipher.clone(),
                    c.key_bits,
                    c.encrypt_mib_s,
                    c.decrypt_mib_s,
                )
            })
            .collect();
        if let Some(cluster) = &r.report.cluster {
            for c in &cluster.rows {
                sides.push((
                    with_nodes(&r.label, c.nodes),
                    c.cipher.clone(),
                    c.key_bits,
                    c.encrypt_mib_s,
                    c.decrypt_mib_s,
                ));
            }
        }
        for (who, cipher, bits, enc, dec) in &sides {
            for t in refs
                .throughput
                .iter()
                .filter(|t| &t.cipher == cipher && t.key_bits == *bits)
            {
                let value = match t.direction {
                    Direction::Encrypt => *enc,
                    Direction::Decrypt => *dec,
                };
                out.push(row(
                    format!("{cipher} {bits}b {}", t.direction.name()),
                    "MiB/s",
                    (who.clone(), value),
                    (with_nodes(&t.system, t.nodes), t.mib_s),
                    true,
                    t.source.to_string(),
                ));
            }
        }
        for f in &r.report.files {
            for p in &refs.files {
                let same_algorithm = Algorithm::from_name(&p.cipher) == Some(f.algorithm);
                let same_mode = p.mode.eq_ignore_ascii_case(f.mode.name());
                // The study printed sizes in MB without saying which MB: accept both.
                let bytes = f.file_bytes as f64;
                let same_size = [1e6, 1_048_576.0]
                    .iter()
                    .any(|unit| (bytes - p.file_mb * unit).abs() <= 0.01 * bytes);
                if same_algorithm && same_mode && same_size {
                    out.push(row(
                        format!(
                            "{} {}b {} MB encrypt",
                            f.cipher,
                            f.key_bits,
                            format_short(p.file_mb)
                        ),
                        "s",
                        (r.label.clone(), f.encrypt_s),
                        (format!("{} {} {}", p.device, p.mode, p.cipher), p.seconds),
                        false,
                        p.source.to_string(),
                    ));
                }
            }
        }
        for h in &r.report.hpl {
            for g in &refs.hpl {
                let Some(gflops) = g.gflops else { continue };
                out.push(row(
                    "HPL".into(),
                    "GFLOPS",
                    (with_nodes(&r.label, h.nodes), h.gflops),
                    (with_nodes(&g.system, g.nodes), gflops),
                    true,
                    g.source.to_string(),
                ));
            }
        }
        for p in &r.report.power {
            let workload = if p.workload == "idle" {
                "idle"
            } else if p.workload.contains("hpl") {
                "hpl"
            } else {
                "cryptsetup"
            };
            for q in refs.power.iter().filter(|q| q.workload == workload) {
                out.push(row(
                    format!("power, {workload}"),
                    "W",
                    (format!("{} ({})", r.label, p.workload), p.watts),
                    (with_nodes(&q.system, q.nodes), q.watts),
                    false,
                    q.source.to_string(),
                ));
            }
        }
        for t in refs.tea.iter().filter(|t| t.baseline == "serial") {
            let cluster = t.ranks > 1;
            // The headline is for the heaviest work: the most rounds on the largest file.
            let candidates: Vec<_> = r
                .report
                .speedup
                .iter()
                .filter(|s| (s.nodes > 1) == cluster && s.threads > 1)
                .filter(|s| t.rounds.is_none_or(|x| x == s.rounds))
                .collect();
            if let Some(s) = candidates.iter().max_by_key(|s| (s.rounds, s.file_bytes)) {
                out.push(row(
                    format!(
                        "TEA speedup over serial, {} rounds, {} MB",
                        s.rounds,
                        format_short(s.file_bytes as f64 / 1e6)
                    ),
                    "x",
                    (
                        format!("{} {}", r.label, configuration(s.nodes, s.threads)),
                        s.speedup(),
                    ),
                    (
                        format!("{} ({})", t.build, boards(t.ranks, t.threads_per_rank)),
                        t.speedup,
                    ),
                    true,
                    t.source.to_string(),
                ));
            }
        }
    }
    out
}

const HEADINGS: [&str; 7] = [
    "quantity",
    "unit",
    "this",
    "value",
    "reference",
    "value",
    "ratio",
];

fn cells(r: &CompareRow) -> [String; 7] {
    [
        r.quantity.clone(),
        r.unit.clone(),
        r.this.clone(),
        format_value(r.this_value),
        r.reference.clone(),
        format_value(r.reference_value),
        format!("{:.2}", r.ratio),
    ]
}

/// Aligned plain text, with the sources listed after the table.
pub fn to_text(rows: &[CompareRow]) -> String {
    let all: Vec<[String; 7]> = rows.iter().map(cells).collect();
    let mut width = HEADINGS.map(|h| h.chars().count());
    for r in &all {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(width).enumerate() {
            // Text left, numbers right.
            if matches!(i, 3 | 5 | 6) {
                s.push_str(&format!("{c:>w$}  "));
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&HEADINGS.map(String::from));
    for r in &all {
        out.push_str(&line(r));
    }
    out.push_str("\nratio > 1: this machine is faster (or draws less power).\n");
    for s in sources(rows) {
        out.push_str(&format!("source: {s}\n"));
    }
    out
}

/// A Markdown table, with the sources after it.
pub fn to_markdown(rows: &[CompareRow]) -> String {
    let mut out = format!("| {} |\n", HEADINGS.join(" | "));
    out.push_str("|---|---|---|---:|---|---:|---:|\n");
    for r in rows {
        let c = cells(r).map(|c| c.replace('|', "\\|"));
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    out.push_str("\nRatio above 1: this machine is faster (or draws less power).\n\n");
    for s in sources(rows) {
        out.push_str(&format!("- Source: {s}\n"));
    }
    out
}

fn sources(rows: &[CompareRow]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.source.as_str()) {
            out.push(&r.source);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::tests::{cipher_row, empty, results};
    use crate::reference::{find, load};

    #[test]
    fn shared_rows_with_ratios() {
        let refs = find("nuc").unwrap().data().unwrap();
        let rows = compare(&results("pi"), &refs);
        // aes-cbc 128b: NUC has encryption and decryption (decryption only
        // for Twofish and Serpent in the study), twofish-cbc 256b: both.
        let aes: Vec<_> = rows
            .iter()
            .filter(|r| r.quantity.starts_with("aes-cbc 128b"))
            .collect();
        assert_eq!(aes.len(), 2, "{aes:?}"); // the machine row and the 3-node cluster row
        assert_eq!(aes[0].this, "pi");
        assert_eq!(aes[0].reference_value, 977.0);
        assert!((aes[0].ratio - 50.0 / 977.0).abs() < 1e-12);
        assert_eq!(aes[1].this, "pi (3 nodes)");
        let two: Vec<_> = rows
            .iter()
            .filter(|r| r.quantity.starts_with("twofish-cbc 256b"))
            .collect();
        assert_eq!(two.len(), 2);
        // HPL and power too; watts: lower is better, so reference / this.
        let hpl = rows.iter().find(|r| r.quantity == "HPL").unwrap();
        assert!((hpl.ratio - 5.0 / 16.51).abs() < 1e-12);
        let watts = rows
            .iter()
            .find(|r| r.quantity == "power, cryptsetup")
            .unwrap();
        assert!((watts.ratio - 42.0 / 5.0).abs() < 1e-12);
        assert!(
            rows.iter()
                .all(|r| r.source.contains("000_9a184237f0807cfc.txt"))
        );
    }

    #[test]
    fn listings_files_and_tea() {
        let mut r = empty("lap");
        r.ciphers = vec![cipher_row("aes-xts", 512, 4000.0, 4100.0)];
        let res = vec![Results {
            label: "lap".into(),
            report: r,
        }];
        let rows = compare(&res, &find("laptop-cryptsetup").unwrap().data().unwrap());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].quantity, "aes-xts 512b decrypt");
        assert_eq!(rows[1].reference_value, 4733.9);
        // Nothing shared: nothing printed.
        assert!(compare(&res, &find("hpl").unwrap().data().unwrap()).is_empty());

        let refs = load(&["iot-pi3".into(), "tea-cluster".into()]).unwrap();
        let rows = compare(&results("pi"), &refs);
        let file = rows.iter().find(|r| r.unit == "s").unwrap();
        assert_eq!(file.reference, "Raspberry Pi 3 CBC AES");
        assert_eq!(file.reference_value, 0.309952);
        assert!((file.ratio - 0.309952 / 0.02).abs() < 1e-9);
        let tea: Vec<_> = rows.iter().filter(|r| r.unit == "x").collect();
        assert_eq!(tea.len(), 2);
        assert_eq!(tea[0].this, "pi 4 threads");
        assert_eq!(tea[1].this, "pi 3 nodes x 4 threads");
        assert_eq!(tea[1].reference_value, 6.0);
    }

    #[test]
    fn text_and_markdown() {
        let rows = compare(&results("pi"), &find("mrd").unwrap().data().unwrap());
        let text = to_text(&rows);
        assert!(text.starts_with("quantity"));
        assert!(text.contains("1167.2"));
        assert!(text.contains("source: 000_9a184237f0807cfc.txt, section IV-A"));
        let md = to_markdown(&rows);
        assert_eq!(md.lines().nth(1), Some("|---|---|---|---:|---|---:|---:|"));
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            rows.len() + 1
        );
    }
}
