//! Which cipher to use on a machine, from its benchmark results: the fastest
//! secure choice for disk encryption (a LUKS cipher spec) and for file encryption
//! (a `clustercrypt encrypt --suite`), with the reason.
//!
//! The rules follow the seed studies. The Raspberry Pi 4 blog (seed 003) finds
//! that without AES instructions every cipher is slow on a small board (aes-xts
//! 512b at 68.6 MiB/s, far below its USB drive) while a laptop with AES-NI runs
//! AES-XTS at 4774.2 MiB/s, several times Serpent and Twofish; the Pi cluster study
//! (seed 000) finds Twofish faster than AES at larger keys on the Raspberry Pi 3B+,
//! which lacks AES instructions, and asks for AES instructions on single-board
//! computers. So:
//!
//! - disk: the fastest secure XTS row (compared at 512-bit keys, cryptsetup's LUKS2
//!   default, else the largest key measured); when the CPU has no AES
//!   instructions, Adiantum (`xchacha12,aes-adiantum-plain64`), which was
//!   designed for such CPUs, when its measured row is faster than that XTS row
//!   (or, not measured, when that row is below [`FAST_DISK_MIB_S`]); the measured
//!   wide-block rows (Adiantum, HCTR2) are listed as alternatives either way;
//! - files: the faster of AES-256-GCM and ChaCha20-Poly1305;
//! - rows marked insecure, and ciphers with 64-bit blocks, are never recommended.
//!
//! A row's speed is the mean of its encryption and decryption figures: a volume
//! or a file is written once and read back.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use clustercrypt_catalogue::{Algorithm, Mode};

use crate::report::{CipherRow, Report};

/// Below this (MiB/s) the cipher, not the storage, limits an encrypted volume: about
/// what a SATA SSD or a fast USB 3 drive delivers (seed 003's drive is rated 400 MB/s).
pub const FAST_DISK_MIB_S: f64 = 500.0;

/// When the machine's CPU features are unknown (an imported listing), AES
/// instructions are taken as present when AES runs at least this many times as
/// fast as the fastest of Serpent, Twofish and Camellia in the same mode. With
/// them the factor is 5 or more (seed 003's laptop: 6.6 in XTS; seed 000's NUC: 5.4
/// in CBC encryption); without them it is about 1 (the Raspberry Pi 4: 1.1).
pub const AES_INFERENCE_RATIO: f64 = 2.5;

/// The LUKS spec of Adiantum recommended when AES is slow (XChaCha12, as the
/// Adiantum paper and the Linux kernel define it).
pub const ADIANTUM_SPEC: &str = "xchacha12,aes-adiantum-plain64";

/// Whether the CPU has AES instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AesInstructions {
    /// `cpu_features` lists `aes`.
    Present,
    /// `cpu_features` is known and has no `aes`.
    Absent,
    /// Unknown machine; AES is several times faster than the other ciphers.
    LikelyPresent,
    /// Unknown machine; AES is not much faster than the other ciphers.
    LikelyAbsent,
    /// Unknown machine and no rows to compare.
    Unknown,
}

impl AesInstructions {
    /// Present or likely present.
    pub fn present(self) -> bool {
        matches!(
            self,
            AesInstructions::Present | AesInstructions::LikelyPresent
        )
    }

    /// Absent or likely absent.
    pub fn absent(self) -> bool {
        matches!(
            self,
            AesInstructions::Absent | AesInstructions::LikelyAbsent
        )
    }

    fn describe(self) -> &'static str {
        match self {
            AesInstructions::Present => "present",
            AesInstructions::Absent => "absent",
            AesInstructions::LikelyPresent => "likely present",
            AesInstructions::LikelyAbsent => "likely absent",
            AesInstructions::Unknown => "unknown",
        }
    }
}

/// What was found about AES instructions, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AesSupport {
    /// The finding.
    pub instructions: AesInstructions,
    /// How it was found.
    pub basis: String,
}

/// One recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The cipher: a LUKS spec (`aes-xts-plain64`) or a file suite (`aes-256-gcm`).
    pub choice: String,
    /// Key bits as cryptsetup counts them (`--key-size`).
    pub key_bits: usize,
    /// The figure it was chosen on (mean of encryption and decryption, MiB/s);
    /// `None` when it was not measured.
    pub mib_s: Option<f64>,
    /// The command that applies it.
    pub command: String,
    /// Why.
    pub reason: String,
    /// Other good choices, best first.
    pub alternatives: Vec<String>,
}

/// Advice for one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// Host name of the results.
    pub hostname: String,
    /// Where the results came from when imported.
    pub source: Option<String>,
    /// AES instructions.
    pub aes: AesSupport,
    /// Disk encryption (LUKS), when the results allow advice.
    pub disk: Option<Advice>,
    /// File encryption (`clustercrypt encrypt`), when the results allow advice.
    pub file: Option<Advice>,
    /// Rows that were missing and how to measure them.
    pub missing: Vec<String>,
    /// The studies' conclusions that apply to this machine.
    pub notes: Vec<String>,
}

/// Mean of encryption and decryption, MiB/s.
fn speed(r: &CipherRow) -> f64 {
    (r.encrypt_mib_s + r.decrypt_mib_s) / 2.0
}

/// Rows that may be recommended: not insecure, no 64-bit block, measured.
fn usable(r: &CipherRow) -> bool {
    !r.insecure && r.algorithm.weakness().is_none() && speed(r) > 0.0
}

fn describe(r: &CipherRow) -> String {
    format!("{} {}b ({:.1} MiB/s)", r.cipher, r.key_bits, speed(r))
}

/// For each algorithm, its row in `mode` at `preferred_bits`, else its largest key.
fn per_algorithm(report: &Report, mode: Mode, preferred_bits: usize) -> Vec<&CipherRow> {
    let mut best: Vec<&CipherRow> = Vec::new();
    for r in report
        .ciphers
        .iter()
        .filter(|r| r.mode == mode && usable(r))
    {
        match best.iter_mut().find(|b| b.algorithm == r.algorithm) {
            None => best.push(r),
            Some(b) => {
                let rank = |x: &CipherRow| (x.key_bits == preferred_bits, x.key_bits);
                if rank(r) > rank(b) {
                    *b = r;
                }
            }
        }
    }
    best.sort_by(|a, b| speed(b).total_cmp(&speed(a)));
    best
}

/// AES instructions from the machine facts, or inferred from the figures.
pub fn aes_support(report: &Report) -> AesSupport {
    let m = &report.machine;
    if !m.cpu_features.is_empty() || m.arch != "unknown" {
        return if m.cpu_features.iter().any(|f| f == "aes") {
            AesSupport {
                instructions: AesInstructions::Present,
                basis: format!(
                    "the CPU features of {} ({}) include aes",
                    m.hostname, m.arch
                ),
            }
        } else {
            AesSupport {
                instructions: AesInstructions::Absent,
                basis: format!(
                    "the CPU features of {} ({}: {}) do not include aes",
                    m.hostname,
                    m.arch,
                    if m.cpu_features.is_empty() {
                        "none".to_string()
                    } else {
                        m.cpu_features.join(" ")
                    }
                ),
            }
        };
    }
    for mode in [Mode::Xts, Mode::Cbc] {
        let bits = if mode == Mode::Xts { 512 } else { 256 };
        let rows = per_algorithm(report, mode, bits);
        let aes = rows.iter().find(|r| r.algorithm == Algorithm::Aes);
        let other = rows.iter().find(|r| r.algorithm != Algorithm::Aes);
        if let (Some(aes), Some(other)) = (aes, other) {
            let ratio = speed(aes) / speed(other);
            let instructions = if ratio >= AES_INFERENCE_RATIO {
                AesInstructions::LikelyPresent
            } else {
                AesInstructions::LikelyAbsent
            };
            return AesSupport {
                instructions,
                basis: format!(
                    "the machine is not described, so inferred from the figures: {} is {ratio:.1} times {} (with AES instructions it is {AES_INFERENCE_RATIO} times or more)",
                    describe(aes),
                    describe(other)
                ),
            };
        }
    }
    AesSupport {
        instructions: AesInstructions::Unknown,
        basis: "the machine is not described and there are no AES and Serpent/Twofish rows of the same mode to compare".into(),
    }
}

fn luks_command(spec: &str, key_bits: usize) -> String {
    format!("cryptsetup luksFormat --type luks2 --cipher {spec} --key-size {key_bits} DEVICE")
}

/// The fastest usable measured row of a wide-block mode.
fn wide_row(report: &Report, mode: Mode) -> Option<&CipherRow> {
    per_algorithm(report, mode, 256).into_iter().next()
}

/// What the measured wide-block rows offer besides the chosen XTS row.
fn wide_alternatives(report: &Report, best: &CipherRow) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(h) = wide_row(report, Mode::Hctr2) {
        out.push(format!(
            "aes-hctr2-plain64 with --key-size 256 (Linux 6.0 and later): {:.1} MiB/s, {:.2} times {}; a wide-block cipher (a changed bit changes the whole sector, not one 16-byte block)",
            speed(h),
            speed(h) / speed(best),
            xts_spec(best)
        ));
    }
    if let Some(a) = wide_row(report, Mode::AdiantumXChaCha12) {
        out.push(format!(
            "{ADIANTUM_SPEC} with --key-size 256: {:.1} MiB/s, {:.2} times {}; wide-block, and needs no AES instructions",
            speed(a),
            speed(a) / speed(best),
            xts_spec(best)
        ));
    }
    out
}

fn adiantum(report: &Report, why: String, fallback: Option<&CipherRow>) -> Advice {
    let mut reason = why;
    reason.push_str(
        " Adiantum (Linux 5.0 and later) was designed for CPUs without AES instructions: \
         it encrypts with XChaCha12, which needs only additions, rotations and XORs, and \
         uses AES on a single block per sector.",
    );
    let measured = wide_row(report, Mode::AdiantumXChaCha12);
    match (measured, fallback) {
        (Some(a), Some(f)) => {
            let _ = write!(
                reason,
                " Measured here: {}, {:.1} times {}.",
                describe(a),
                speed(a) / speed(f),
                describe(f)
            );
        }
        (Some(a), None) => {
            let _ = write!(reason, " Measured here: {}.", describe(a));
        }
        (None, _) => reason.push_str(
            " It was not measured in these results; measure it with \
             `clustercrypt bench -c xchacha12,aes-adiantum-plain64` (or `cryptsetup benchmark \
             -c xchacha12,aes-adiantum-plain64 -s 256`).",
        ),
    }
    if let Some(c) = report
        .ciphers
        .iter()
        .find(|r| r.algorithm == Algorithm::ChaCha20 && r.mode == Mode::Stream)
    {
        let _ = write!(
            reason,
            " ChaCha20 runs at {:.1} MiB/s here; XChaCha12 does 12 rounds instead of 20.",
            speed(c)
        );
    }
    let mut alternatives = vec![format!(
        "{} with --key-size 256 (XChaCha20: more margin, somewhat slower)",
        ADIANTUM_SPEC.replace("xchacha12", "xchacha20")
    )];
    if let Some(f) = fallback {
        alternatives.push(format!(
            "{} with --key-size {}: the fastest XTS cipher here, {:.1} MiB/s, where Adiantum is not available",
            xts_spec(f),
            f.key_bits,
            speed(f)
        ));
    }
    Advice {
        choice: ADIANTUM_SPEC.into(),
        key_bits: 256,
        mib_s: measured.map(speed),
        command: luks_command(ADIANTUM_SPEC, 256),
        reason,
        alternatives,
    }
}

fn xts_spec(r: &CipherRow) -> String {
    format!("{}-xts-plain64", r.algorithm.name())
}

fn disk_advice(report: &Report, aes: &AesSupport, missing: &mut Vec<String>) -> Option<Advice> {
    let rows = per_algorithm(report, Mode::Xts, 512);
    let adiantum_row = wide_row(report, Mode::AdiantumXChaCha12);
    let Some(&best) = rows.first() else {
        missing.push(
            "no XTS rows, so disk advice rests on the AES instructions alone: run \
             `clustercrypt bench` (cryptsetup's default rows include aes-, serpent- and \
             twofish-xts) or `clustercrypt recommend` without a file on the machine"
                .into(),
        );
        return match aes.instructions {
            i if i.present() => Some(Advice {
                choice: "aes-xts-plain64".into(),
                key_bits: 512,
                mib_s: None,
                command: luks_command("aes-xts-plain64", 512),
                reason: format!(
                    "AES instructions {}: AES-XTS runs in hardware, several times faster than any other cipher.",
                    i.describe()
                ),
                alternatives: Vec::new(),
            }),
            i if i.absent() || adiantum_row.is_some() => Some(adiantum(
                report,
                format!(
                    "AES instructions {}, so AES runs in software.",
                    i.describe()
                ),
                None,
            )),
            _ => None,
        };
    };
    if !rows.iter().any(|r| r.algorithm == Algorithm::Aes) {
        missing.push("no aes-xts row: run `clustercrypt bench -c aes-xts-plain64 -s 512`".into());
    }
    let others: Vec<String> = rows.iter().skip(1).map(|r| describe(r)).collect();
    let compared = if others.is_empty() {
        String::new()
    } else {
        format!(" (others: {})", others.join(", "))
    };
    let adiantum_wins = match adiantum_row {
        Some(a) => speed(a) > speed(best),
        None => speed(best) < FAST_DISK_MIB_S,
    };
    if aes.instructions.absent() && adiantum_wins {
        let aes_row = rows.iter().find(|r| r.algorithm == Algorithm::Aes);
        let mut why = if adiantum_row.is_some() {
            format!(
                "No AES instructions ({}), and Adiantum is faster here than the fastest XTS cipher, {}.",
                aes.instructions.describe(),
                describe(best)
            )
        } else {
            format!(
                "No AES instructions ({}), and the fastest XTS cipher here, {}, is below the ~{FAST_DISK_MIB_S:.0} MiB/s of an SSD or a fast USB 3 drive, so the cipher, not the storage, would limit the volume (the Raspberry Pi 4 of seed 003: aes-xts 512b at 68.6 MiB/s on a drive rated 400 MB/s).",
                aes.instructions.describe(),
                describe(best)
            )
        };
        if best.algorithm != Algorithm::Aes
            && let Some(a) = aes_row
        {
            let _ = write!(
                why,
                " AES runs in software and is slower than {} here ({}), as the Pi cluster study (seed 000) found for Twofish on the Raspberry Pi 3B+.",
                best.algorithm.name(),
                describe(a)
            );
        }
        return Some(adiantum(report, why, Some(best)));
    }
    let mut reason = format!(
        "{} is the fastest secure XTS cipher here{compared}.",
        describe(best)
    );
    match (aes.instructions, best.algorithm == Algorithm::Aes) {
        (i, true) if i.present() => {
            if let Some(second) = rows.get(1) {
                let _ = write!(
                    reason,
                    " AES instructions {}: AES runs in hardware, {:.1} times {}.",
                    i.describe(),
                    speed(best) / speed(second),
                    second.algorithm.name()
                );
            } else {
                let _ = write!(
                    reason,
                    " AES instructions {}: AES runs in hardware.",
                    i.describe()
                );
            }
        }
        (i, false) if i.absent() => {
            let _ = write!(
                reason,
                " No AES instructions ({}): AES runs in software and loses to {} here, as the Pi cluster study (seed 000) found for Twofish on the Raspberry Pi 3B+.",
                i.describe(),
                best.algorithm.name()
            );
        }
        (i, true) if i.absent() => {
            let _ = write!(
                reason,
                " No AES instructions ({}), but AES is still the fastest here and above ~{FAST_DISK_MIB_S:.0} MiB/s.",
                i.describe()
            );
        }
        (i, false) if i.present() => {
            let _ = write!(
                reason,
                " AES instructions are {}, yet another cipher is faster in these figures; re-measure with `clustercrypt bench --runs 5` before relying on it.",
                i.describe()
            );
        }
        _ => {}
    }
    let mut alternatives = Vec::new();
    if let Some(smaller) = report
        .ciphers
        .iter()
        .filter(|r| r.mode == Mode::Xts && r.algorithm == best.algorithm && usable(r))
        .filter(|r| r.key_bits < best.key_bits && speed(r) > 1.1 * speed(best))
        .max_by(|a, b| speed(a).total_cmp(&speed(b)))
    {
        alternatives.push(format!(
            "{} with --key-size {} ({}-bit keys): {:.1} MiB/s, {:.0}% faster, still secure",
            xts_spec(smaller),
            smaller.key_bits,
            smaller.key_bits / 2,
            speed(smaller),
            (speed(smaller) / speed(best) - 1.0) * 100.0
        ));
    }
    if let Some(second) = rows.get(1) {
        alternatives.push(format!(
            "{} with --key-size {}: {:.1} MiB/s",
            xts_spec(second),
            second.key_bits,
            speed(second)
        ));
    }
    alternatives.extend(wide_alternatives(report, best));
    Some(Advice {
        choice: xts_spec(best),
        key_bits: best.key_bits,
        mib_s: Some(speed(best)),
        command: luks_command(&xts_spec(best), best.key_bits),
        reason,
        alternatives,
    })
}

const GCM_SUITE: &str = "aes-256-gcm";
const CHACHA_SUITE: &str = "chacha20-poly1305";

fn encrypt_command(suite: &str) -> String {
    format!("clustercrypt encrypt --suite {suite} --key-file KEY -o OUT IN")
}

fn file_advice(report: &Report, aes: &AesSupport, missing: &mut Vec<String>) -> Option<Advice> {
    let gcm = per_algorithm(report, Mode::Gcm, 256).into_iter().next();
    let chacha = per_algorithm(report, Mode::Poly1305, 256)
        .into_iter()
        .next();
    let advice = |suite: &str, row: Option<&CipherRow>, reason: String, other: &str| Advice {
        choice: suite.into(),
        key_bits: 256,
        mib_s: row.map(speed),
        command: encrypt_command(suite),
        reason,
        alternatives: vec![format!("{other} (--suite {other})")],
    };
    match (gcm, chacha) {
        (Some(g), Some(c)) => {
            let (win, lose, suite, other) = if speed(g) >= speed(c) {
                (g, c, GCM_SUITE, CHACHA_SUITE)
            } else {
                (c, g, CHACHA_SUITE, GCM_SUITE)
            };
            let mut reason = format!(
                "{} is {:.1} times {}; AES instructions {}.",
                describe(win),
                speed(win) / speed(lose),
                describe(lose),
                aes.instructions.describe()
            );
            reason.push_str(if suite == GCM_SUITE {
                " With AES and carry-less multiply in hardware, AES-GCM is the fastest authenticated cipher."
            } else {
                " ChaCha20-Poly1305 (RFC 8439) needs no special instructions, so it is the fast choice where AES runs in software."
            });
            Some(advice(suite, Some(win), reason, other))
        }
        (g, c) => {
            missing.push(format!(
                "no {} row: run `clustercrypt bench --all` or `clustercrypt recommend` without a file on the machine",
                match (g, c) {
                    (None, None) => "aes-gcm or chacha20-poly1305",
                    (None, Some(_)) => "aes-gcm",
                    _ => "chacha20-poly1305",
                }
            ));
            let (suite, row, other) = match aes.instructions {
                i if i.present() => (GCM_SUITE, g, CHACHA_SUITE),
                i if i.absent() => (CHACHA_SUITE, c, GCM_SUITE),
                // Unknown machine: the one measured row is all there is.
                _ => match (g, c) {
                    (Some(g), None) => (GCM_SUITE, Some(g), CHACHA_SUITE),
                    (None, Some(c)) => (CHACHA_SUITE, Some(c), GCM_SUITE),
                    _ => return None,
                },
            };
            let measured = match (g, c) {
                (None, None) => "Neither AEAD was measured".to_string(),
                (Some(r), _) | (_, Some(r)) => format!("Only {} was measured", describe(r)),
            };
            let reason = format!(
                "{measured}; chosen by the AES instructions ({}): {}",
                aes.instructions.describe(),
                if suite == GCM_SUITE {
                    "AES-GCM runs in hardware where AES instructions exist."
                } else {
                    "ChaCha20-Poly1305 is faster than AES-GCM where AES runs in software."
                }
            );
            Some(advice(suite, row, reason, other))
        }
    }
}

/// Advice for the machine `report` was measured on.
pub fn recommend(report: &Report) -> Recommendation {
    let aes = aes_support(report);
    let mut missing = Vec::new();
    let disk = disk_advice(report, &aes, &mut missing);
    let file = file_advice(report, &aes, &mut missing);
    let mut notes = Vec::new();
    if report.interrupted {
        notes.push("The run was interrupted; rows it did not reach are missing.".into());
    }
    if aes.instructions.absent() {
        notes.push(
            "Both the Raspberry Pi 4 blog (seed 003) and the Pi cluster study (seed 000) conclude \
             that without AES instructions every cipher is slow on a single-board computer: for \
             fast encrypted storage or transfers choose hardware with AES instructions (x86 \
             AES-NI, ARMv8 Cryptography Extensions), or spread file encryption over several nodes \
             with `clustercrypt encrypt --cluster`."
                .into(),
        );
    } else if aes.instructions.present() {
        notes.push(
            "With AES instructions AES is the fast choice for disks and files alike (seed 003's \
             laptop: aes-xts 512b at 4774.2 MiB/s against 742.9 for serpent-xts); Serpent and \
             Twofish cost several times the CPU time for the same data."
                .into(),
        );
    }
    if report.ciphers.iter().any(|r| r.insecure) {
        notes.push("Rows marked insecure were not considered.".into());
    }
    Recommendation {
        hostname: report.machine.hostname.clone(),
        source: report.source.clone(),
        aes,
        disk,
        file,
        missing,
        notes,
    }
}

fn advice_text(out: &mut String, title: &str, a: &Advice) {
    let figure = a
        .mib_s
        .map(|m| format!(", {m:.1} MiB/s"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{title}: {} ({}-bit key{figure})",
        a.choice, a.key_bits
    );
    let _ = writeln!(out, "  {}", a.command);
    let _ = writeln!(out, "  Why: {}", a.reason);
    for alt in &a.alternatives {
        let _ = writeln!(out, "  Or: {alt}");
    }
}

impl Recommendation {
    /// The advice as plain text.
    pub fn to_text(&self) -> String {
        let mut out = format!("Machine: {}", self.hostname);
        if let Some(s) = &self.source {
            let _ = write!(out, " ({s})");
        }
        let _ = writeln!(
            out,
            "\nAES instructions: {} ({})\n",
            self.aes.instructions.describe(),
            self.aes.basis
        );
        match &self.disk {
            Some(a) => advice_text(&mut out, "Disk encryption (LUKS)", a),
            None => out.push_str("Disk encryption (LUKS): no advice, see Missing\n"),
        }
        out.push('\n');
        match &self.file {
            Some(a) => advice_text(&mut out, "File encryption", a),
            None => out.push_str("File encryption: no advice, see Missing\n"),
        }
        for m in &self.missing {
            let _ = writeln!(out, "\nMissing: {m}");
        }
        for n in &self.notes {
            let _ = writeln!(out, "\nNote: {n}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::parse_cryptsetup;
    use crate::machine::Machine;
    use crate::report::{RunFigures, Settings};
    use clustercrypt_catalogue::CipherSpec;

    fn machine(features: &[&str]) -> Machine {
        Machine {
            hostname: "node".into(),
            cpu_model: "test".into(),
            cores: 4,
            memory_bytes: 1 << 30,
            kernel: "6.1".into(),
            arch: "x86_64".into(),
            cpu_features: features.iter().map(|s| s.to_string()).collect(),
            cpu_features_detected: Vec::new(),
            cpu_features_disabled: Vec::new(),
            cpu_tier: String::new(),
            ..Default::default()
        }
    }

    fn report(features: &[&str], rows: &[(&str, usize, f64)]) -> Report {
        let mut r = Report::empty(
            machine(features),
            Settings {
                min_time_s: 1.0,
                buffer_size: 1 << 20,
                request_size: 1 << 16,
                runs: 1,
                threads: 1,
            },
        );
        for &(name, bits, mib) in rows {
            let spec = CipherSpec::parse(name, Some(bits)).unwrap();
            let run = RunFigures {
                aggregate: (mib, mib),
                workers: vec![(mib, mib)],
            };
            r.ciphers
                .push(CipherRow::from_runs(&spec, 1, "soft", &[run]).unwrap());
        }
        r
    }

    const ROWS: &[(&str, usize, f64)] = &[
        ("aes-xts", 256, 900.0),
        ("aes-xts", 512, 800.0),
        ("serpent-xts", 512, 600.0),
        ("twofish-xts", 512, 550.0),
        ("aes-gcm", 256, 1200.0),
        ("chacha20-poly1305", 256, 1000.0),
        ("des-cbc", 64, 9999.0),
    ];

    #[test]
    fn aes_instructions_choose_aes() {
        let rec = recommend(&report(&["aes", "avx2"], ROWS));
        assert_eq!(rec.aes.instructions, AesInstructions::Present);
        let disk = rec.disk.unwrap();
        assert_eq!(
            (disk.choice.as_str(), disk.key_bits),
            ("aes-xts-plain64", 512)
        );
        assert_eq!(disk.mib_s, Some(800.0));
        assert!(disk.alternatives[0].contains("--key-size 256"), "{disk:?}");
        let file = rec.file.unwrap();
        assert_eq!(file.choice, "aes-256-gcm");
        assert!(file.reason.contains("1.2 times"), "{}", file.reason);
        assert!(rec.missing.is_empty());
    }

    #[test]
    fn without_aes_a_faster_cipher_wins() {
        // Same figures, but AES made slow as software AES is, and no AES instructions.
        let mut rows = ROWS.to_vec();
        rows[0].2 = 300.0;
        rows[1].2 = 250.0;
        rows[4].2 = 200.0;
        let rec = recommend(&report(&["avx2"], &rows));
        assert_eq!(rec.aes.instructions, AesInstructions::Absent);
        let disk = rec.disk.unwrap();
        assert_eq!(disk.choice, "serpent-xts-plain64");
        assert!(disk.reason.contains("software"), "{}", disk.reason);
        assert_eq!(rec.file.unwrap().choice, "chacha20-poly1305");
        assert!(rec.notes.iter().any(|n| n.contains("seed 003")));
    }

    #[test]
    fn slow_and_without_aes_means_adiantum() {
        let rows = [
            ("aes-xts", 512, 68.0),
            ("twofish-xts", 512, 63.0),
            ("chacha20", 256, 200.0),
        ];
        let rec = recommend(&report(&["neon"], &rows));
        let disk = rec.disk.unwrap();
        assert_eq!(disk.choice, ADIANTUM_SPEC);
        assert!(
            disk.reason.contains("ChaCha20 runs at 200.0"),
            "{}",
            disk.reason
        );
        assert!(
            disk.alternatives[1].starts_with("aes-xts-plain64"),
            "{disk:?}"
        );
        // No AEAD rows: chosen by the missing AES instructions, and said so.
        assert_eq!(rec.file.unwrap().choice, "chacha20-poly1305");
        assert!(
            rec.missing
                .iter()
                .any(|m| m.contains("aes-gcm or chacha20-poly1305"))
        );
    }

    #[test]
    fn measured_adiantum_is_weighed_against_xts() {
        // A Pi 4: no AES instructions, Adiantum measured faster than any XTS row.
        let rows = [
            ("aes-xts", 512, 68.0),
            ("twofish-xts", 512, 63.0),
            ("xchacha12,aes-adiantum", 256, 160.0),
            ("xchacha20,aes-adiantum", 256, 120.0),
        ];
        let disk = recommend(&report(&["neon"], &rows)).disk.unwrap();
        assert_eq!(disk.choice, ADIANTUM_SPEC);
        assert_eq!(disk.mib_s, Some(160.0));
        assert!(disk.reason.contains("2.4 times"), "{}", disk.reason);
        assert!(!disk.reason.contains("not measured"), "{}", disk.reason);
        // Measured slower than an XTS row: the XTS row wins, even below 500 MiB/s.
        let rows = [
            ("aes-xts", 512, 68.0),
            ("twofish-xts", 512, 190.0),
            ("xchacha12,aes-adiantum", 256, 160.0),
        ];
        let disk = recommend(&report(&["neon"], &rows)).disk.unwrap();
        assert_eq!(disk.choice, "twofish-xts-plain64");
        assert!(
            disk.alternatives
                .iter()
                .any(|a| a.starts_with(ADIANTUM_SPEC) && a.contains("160.0 MiB/s")),
            "{disk:?}"
        );
    }

    #[test]
    fn with_aes_xts_stays_and_hctr2_is_listed() {
        let mut rows = ROWS.to_vec();
        rows.push(("aes-hctr2", 256, 400.0));
        rows.push(("xchacha12,aes-adiantum", 256, 600.0));
        let disk = recommend(&report(&["aes", "avx2"], &rows)).disk.unwrap();
        assert_eq!(disk.choice, "aes-xts-plain64");
        let hctr2 = disk
            .alternatives
            .iter()
            .find(|a| a.starts_with("aes-hctr2-plain64"))
            .expect("HCTR2 listed");
        assert!(hctr2.contains("400.0 MiB/s, 0.50 times"), "{hctr2}");
        assert!(
            disk.alternatives
                .iter()
                .any(|a| a.starts_with(ADIANTUM_SPEC))
        );
    }

    #[test]
    fn insecure_rows_are_never_chosen() {
        let rows = [("aes-ecb", 256, 9000.0), ("blowfish-cbc", 128, 9000.0)];
        let rec = recommend(&report(&["aes"], &rows));
        let disk = rec.disk.unwrap();
        assert_eq!(disk.choice, "aes-xts-plain64");
        assert_eq!(disk.mib_s, None);
        assert!(!rec.missing.is_empty());
    }

    #[test]
    fn imported_listings_infer_aes() {
        let pi = parse_cryptsetup(include_str!("../tests/data/cryptsetup_pi4.txt")).unwrap();
        let rec = recommend(&pi);
        assert_eq!(rec.aes.instructions, AesInstructions::LikelyAbsent);
        assert_eq!(rec.disk.unwrap().choice, ADIANTUM_SPEC);
        let laptop = parse_cryptsetup(include_str!("../tests/data/cryptsetup_laptop.txt")).unwrap();
        let rec = recommend(&laptop);
        assert_eq!(rec.aes.instructions, AesInstructions::LikelyPresent);
        let disk = rec.disk.unwrap();
        assert_eq!(
            (disk.choice.as_str(), disk.key_bits),
            ("aes-xts-plain64", 512)
        );
        assert_eq!(rec.file.unwrap().choice, "aes-256-gcm");
        let text = recommend(&laptop).to_text();
        assert!(
            text.contains(
                "cryptsetup luksFormat --type luks2 --cipher aes-xts-plain64 --key-size 512"
            ),
            "{text}"
        );
    }
}
