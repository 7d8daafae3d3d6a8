//! Reading `cryptsetup benchmark` listings back into a [`Report`], so that old
//! measurements and other people's figures can be compared and plotted.
//!
//! Accepted (one listing, any mix, CRLF or LF):
//!
//! - cryptsetup 2.x: the `# Tests are approximate ...` line, PBKDF2 lines
//!   `PBKDF2-sha256  1234 iterations per second for 256-bit key`, Argon2 lines
//!   `argon2id  4 iterations, 1048576 memory, 4 parallel threads (CPUs) for 256-bit
//!   key (requested 2000 ms time)`, the `#     Algorithm |       Key | ...` header,
//!   rows `aes-xts  512b  1234.5 MiB/s  1234.5 MiB/s` and `N/A` rows, `N/A` KDF lines;
//! - cryptsetup 1.x: `# Algorithm | Key | ...` headers, PBKDF2 lines without the key
//!   size (taken as 256 bits), `MB/s` (cryptsetup always divided by 2^20, so `MB/s`
//!   figures are MiB/s);
//! - single-cipher runs (`cryptsetup benchmark -c ...`), including ciphers the
//!   catalogue does not know (`cast5-cbc`): those land in
//!   [`Report::unavailable`] with their figures in the reason (Adiantum and HCTR2,
//!   `xchacha12,aes-adiantum 256b ...`, are catalogue rows);
//! - `clustercrypt bench --format text`: `(insecure)` markers and the `#` lines for
//!   threads, runs, the cluster section and interruption are read back.
//!
//! cryptsetup's own failures (`Required kernel crypto interface not available.`,
//! `No known cipher specification pattern detected.`) are errors; anything else
//! that is not one of the lines above is an [`ImportError`] naming the line.

use clustercrypt_catalogue::CipherSpec;

use crate::kdf::{Argon2Variant, Hash, KEY_BITS, KdfResult};
use crate::machine::Machine;
use crate::measure::Method;
use crate::report::{
    CipherRow, ClusterRow, ClusterSummary, NodeFigures, Report, RunFigures, Settings,
    ThreadFigures, UnavailableRow,
};
use crate::stats::Stats;

/// [`Report::source`] of an imported listing (the CLI appends the file name).
pub const SOURCE: &str = "cryptsetup benchmark listing";

/// Reason given for rows whose cipher the catalogue cannot build.
pub const NOT_IN_CATALOGUE: &str = "not in clustercrypt's catalogue";

/// `implementation` of imported rows: a listing does not say which code ran.
pub const UNKNOWN_IMPLEMENTATION: &str = "unknown";

/// Why a listing could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// A line that is none of the lines a listing has.
    #[error("line {line}: expected {expected}, found '{found}'")]
    Unexpected {
        /// 1-based line number.
        line: usize,
        /// What would have been accepted there.
        expected: String,
        /// The line (shortened).
        found: String,
    },
    /// cryptsetup said it could not run the benchmark.
    #[error("line {line}: cryptsetup could not run the benchmark: {message}")]
    Cryptsetup {
        /// 1-based line number.
        line: usize,
        /// cryptsetup's message.
        message: String,
    },
    /// The text has no benchmark line at all.
    #[error(
        "no benchmark lines found: expected the output of `cryptsetup benchmark` or `clustercrypt bench --format text`{hint}"
    )]
    Empty {
        /// A hint when the input looks like something else.
        hint: String,
    },
}

impl ImportError {
    /// The line the error is about, when there is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::Unexpected { line, .. } | ImportError::Cryptsetup { line, .. } => {
                Some(*line)
            }
            ImportError::Empty { .. } => None,
        }
    }
}

/// The machine of an imported listing: a listing names none, so everything but
/// the host name is unknown (`arch` `unknown` and no CPU features tell readers,
/// such as [`crate::advice`], to infer what they need from the figures).
pub fn unknown_machine(hostname: &str) -> Machine {
    Machine {
        hostname: hostname.to_string(),
        cpu_model: "unknown".into(),
        cores: 0,
        memory_bytes: 0,
        kernel: "unknown".into(),
        arch: "unknown".into(),
        cpu_features: Vec::new(),
        cpu_features_detected: Vec::new(),
        cpu_features_disabled: Vec::new(),
        cpu_tier: String::new(),
        ..Default::default()
    }
}

/// Which table the rows belong to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Rows,
    Cluster,
    Sweep,
}

struct Parser {
    report: Report,
    section: Section,
    /// Reason for the next `N/A` row (cryptsetup prints it on the line before).
    pending_reason: Option<String>,
    line: usize,
}

const ROW_EXPECTED: &str = "a cipher row such as `aes-xts  512b  1234.5 MiB/s  1234.5 MiB/s`";
const ANY_EXPECTED: &str = "a cipher row (`aes-xts  512b  1234.5 MiB/s  1234.5 MiB/s`), a KDF line (`PBKDF2-sha256 ...`, `argon2id ...`) or a `#` comment";

/// Reads a `cryptsetup benchmark` listing (or `clustercrypt bench --format text`
/// output) into a report with an unknown machine (host name `unknown`; set
/// `report.machine.hostname` afterwards), cryptsetup's default settings, and
/// [`SOURCE`] as its source.
pub fn parse_cryptsetup(text: &str) -> Result<Report, ImportError> {
    let settings = Settings::of(&Method::default(), 1, 1);
    let mut report = Report::empty(unknown_machine("unknown"), settings);
    report.source = Some(SOURCE.to_string());
    // Other outputs of this tool, named rather than failing on their first line.
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let hint = if start.starts_with('{') {
        " (this looks like JSON: clustercrypt's JSON reports are read as they are)"
    } else if start.starts_with("kind,cipher,") {
        " (this looks like clustercrypt's CSV; import its JSON or text output instead)"
    } else {
        ""
    };
    if !hint.is_empty() {
        return Err(ImportError::Empty { hint: hint.into() });
    }
    let mut p = Parser {
        report,
        section: Section::Rows,
        pending_reason: None,
        line: 0,
    };
    for (i, raw) in text.split('\n').enumerate() {
        p.line = i + 1;
        // CRLF listings, and a byte-order mark some editors put in front.
        let line = raw
            .trim_end_matches('\r')
            .trim_start_matches('\u{feff}')
            .trim();
        p.parse_line(line)?;
    }
    let r = &p.report;
    if r.ciphers.is_empty() && r.kdfs.is_empty() && r.unavailable.is_empty() && r.cluster.is_none()
    {
        return Err(ImportError::Empty {
            hint: String::new(),
        });
    }
    Ok(p.report)
}

fn shorten(line: &str) -> String {
    const MAX: usize = 100;
    if line.chars().count() <= MAX {
        line.to_string()
    } else {
        let cut: String = line.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

/// Parses `1234.5` as a non-negative, finite figure.
fn figure(token: &str) -> Option<f64> {
    token
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// `512b` as 512.
fn key_bits_token(token: &str) -> Option<usize> {
    let digits = token.strip_suffix('b')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn is_unit(token: &str) -> bool {
    matches!(token, "MiB/s" | "MB/s")
}

impl Parser {
    fn err(&self, expected: &str, found: &str) -> ImportError {
        ImportError::Unexpected {
            line: self.line,
            expected: expected.to_string(),
            found: shorten(found),
        }
    }

    fn parse_line(&mut self, line: &str) -> Result<(), ImportError> {
        if line.is_empty() {
            return Ok(());
        }
        if let Some(comment) = line.strip_prefix('#') {
            return self.comment(line, comment);
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens[0].starts_with("PBKDF2-") {
            return self.pbkdf2(line, &tokens);
        }
        if tokens[0].starts_with("argon2") {
            return self.argon2(line, &tokens);
        }
        if tokens.len() >= 2 && key_bits_token(tokens[1]).is_some() {
            return self.row(line, &tokens);
        }
        self.message(line)
    }

    /// cryptsetup's messages, shell prompts and warnings around a listing.
    fn message(&mut self, line: &str) -> Result<(), ImportError> {
        const FATAL: [&str; 3] = [
            "Required kernel crypto interface not available.",
            "Ensure you have algif_skcipher kernel module loaded.",
            "No known cipher specification pattern detected.",
        ];
        if FATAL.iter().any(|m| line.starts_with(m)) {
            return Err(ImportError::Cryptsetup {
                line: self.line,
                message: line.to_string(),
            });
        }
        if line.starts_with("Result of benchmark is not reliable") {
            self.pending_reason = Some("cryptsetup: result of benchmark is not reliable".into());
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("Cipher ")
            && let Some((name, tail)) = rest.split_once(" (with ")
            && let Some(bits) = tail.strip_suffix(" bits key) is not available.")
            && let Ok(bits) = bits.trim().parse::<usize>()
        {
            let cipher = CipherSpec::parse(name, Some(bits))
                .map(|s| s.label())
                .unwrap_or_else(|_| name.to_string());
            self.report.unavailable.push(UnavailableRow {
                cipher,
                key_bits: bits,
                reason: "not available (cryptsetup: cipher not available in the kernel)".into(),
            });
            return Ok(());
        }
        // cryptsetup warns on stderr about its locking directory and the like.
        if line.starts_with("WARNING:") {
            return Ok(());
        }
        if line == "clustercrypt: interrupted" {
            self.report.interrupted = true;
            return Ok(());
        }
        if is_command(line) {
            return Ok(());
        }
        Err(self.err(ANY_EXPECTED, line))
    }

    fn comment(&mut self, line: &str, comment: &str) -> Result<(), ImportError> {
        let c = comment.trim();
        let words: Vec<&str> = c.split_whitespace().collect();
        // `# 4 threads at once; rows are the aggregate, ...`
        if c.contains("threads at once")
            && let Some(n) = words.first().and_then(|w| w.parse::<usize>().ok())
        {
            self.report.settings.threads = n.max(1);
            return Ok(());
        }
        // `# 5 runs per row; rows are the mean`
        if c.contains("runs per row")
            && let Some(n) = words.first().and_then(|w| w.parse::<usize>().ok())
        {
            self.report.settings.runs = n.max(1);
            return Ok(());
        }
        if let Some(rest) = c.strip_prefix("runs ") {
            return self.runs_line(line, rest);
        }
        if let Some(rest) = c.strip_prefix("thread ") {
            return self.thread_line(line, rest);
        }
        if let Some(rest) = c.strip_prefix("throttled: clock ") {
            return self.throttled_line(line, rest);
        }
        if let Some(rest) = c.strip_prefix("cluster:") {
            let ranks = rest
                .split_whitespace()
                .next()
                .and_then(|w| w.parse::<usize>().ok())
                .ok_or_else(|| self.err("`# cluster: N ranks, ...`", line))?;
            self.report.cluster = Some(ClusterSummary {
                ranks,
                rows: Vec::new(),
                sweep: Vec::new(),
            });
            self.section = Section::Cluster;
            return Ok(());
        }
        if c.starts_with("sweep:") && self.report.cluster.is_some() {
            self.section = Section::Sweep;
            return Ok(());
        }
        if let Some(rest) = c.strip_prefix("rank ") {
            return self.rank_line(line, rest);
        }
        if let Some(rest) = c.strip_prefix("start skew ") {
            let skew = rest
                .strip_suffix(" ms")
                .and_then(figure)
                .ok_or_else(|| self.err("`#   start skew 0.123 ms`", line))?;
            let missing = self.err("a cluster row before its start skew", line);
            let row = self
                .cluster_rows()
                .and_then(|rows| rows.last_mut())
                .ok_or(missing)?;
            row.start_skew_ms = skew;
            return Ok(());
        }
        if self.section == Section::Sweep && c.contains(" node(s): ") {
            return self.sweep_line(line, c);
        }
        if c.starts_with("interrupted") {
            self.report.interrupted = true;
        }
        // Headers (`#     Algorithm | Key | ...`), cryptsetup's preamble and any other remark.
        Ok(())
    }

    fn cluster_rows(&mut self) -> Option<&mut Vec<ClusterRow>> {
        self.report.cluster.as_mut().map(|c| &mut c.rows)
    }

    /// `#   runs 5: encryption median a min b max c sd d; decryption median ...`
    fn runs_line(&mut self, line: &str, rest: &str) -> Result<(), ImportError> {
        const EXPECTED: &str = "`#   runs N: encryption median M min A max B sd S; decryption median M min A max B sd S`";
        let bad = || self.err(EXPECTED, line);
        let (n, figures) = rest.split_once(':').ok_or_else(bad)?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        let (enc, dec) = figures.split_once(';').ok_or_else(bad)?;
        let stats = |part: &str, direction: &str, mean: f64| -> Option<Stats> {
            let w: Vec<&str> = part.split_whitespace().collect();
            if w.len() != 9
                || w[0] != direction
                || w[1] != "median"
                || w[3] != "min"
                || w[5] != "max"
                || w[7] != "sd"
            {
                return None;
            }
            Some(Stats {
                mean,
                median: figure(w[2])?,
                min: figure(w[4])?,
                max: figure(w[6])?,
                stddev: figure(w[8])?,
                n,
            })
        };
        let row = self
            .report
            .ciphers
            .last()
            .ok_or_else(|| self.err("a cipher row before its runs line", line))?;
        let e = stats(enc, "encryption", row.encrypt_mib_s).ok_or_else(bad)?;
        let d = stats(dec, "decryption", row.decrypt_mib_s).ok_or_else(bad)?;
        let row = self.report.ciphers.last_mut().expect("checked above");
        row.encrypt = e;
        row.decrypt = d;
        Ok(())
    }

    /// `#   throttled: clock 600-1500 MHz during the row` (`-` for a bound
    /// that was not read).
    fn throttled_line(&mut self, line: &str, rest: &str) -> Result<(), ImportError> {
        let bad = || self.err("`#   throttled: clock MIN-MAX MHz during the row`", line);
        let range = rest.strip_suffix(" MHz during the row").ok_or_else(bad)?;
        // An unread bound prints as `-`: `---`, `--1500`, `600--`.
        let (lo, hi) = match range.strip_prefix("--") {
            Some(hi) => ("-", hi),
            None => range.split_once('-').ok_or_else(bad)?,
        };
        let clock = |s: &str| -> Result<Option<f64>, ImportError> {
            match s.trim() {
                "-" => Ok(None),
                s => figure(s).map(Some).ok_or_else(bad),
            }
        };
        let (lo, hi) = (clock(lo)?, clock(hi)?);
        if self.section != Section::Rows {
            return Err(self.err("a throttled line only below a row of this machine", line));
        }
        let missing = self.err("a cipher row before its throttled line", line);
        let row = self.report.ciphers.last_mut().ok_or(missing)?;
        row.throttled = true;
        row.clock_min_mhz = lo;
        row.clock_max_mhz = hi;
        Ok(())
    }

    /// `#   thread 1: 50.0 MiB/s 55.0 MiB/s`
    fn thread_line(&mut self, line: &str, rest: &str) -> Result<(), ImportError> {
        let bad = || self.err("`#   thread N: 12.3 MiB/s 45.6 MiB/s`", line);
        let (t, figures) = rest.split_once(':').ok_or_else(bad)?;
        let thread: usize = t.trim().parse().map_err(|_| bad())?;
        // A pinned worker's `[cpu 4 cortex-a76]` follows its figures.
        let figures = figures.split('[').next().unwrap_or(figures);
        let (enc, dec) = two_figures(figures).ok_or_else(bad)?;
        if self.section != Section::Rows {
            return Err(self.err("thread lines only below the rows of this machine", line));
        }
        let missing = self.err("a cipher row before its thread lines", line);
        let row = self.report.ciphers.last_mut().ok_or(missing)?;
        row.per_thread.push(ThreadFigures {
            thread,
            encrypt_mib_s: enc,
            decrypt_mib_s: dec,
            cpu: None,
            core_type: None,
        });
        Ok(())
    }

    /// `#   rank 0 node1 (4 threads): 120.0 MiB/s 130.0 MiB/s`
    fn rank_line(&mut self, line: &str, rest: &str) -> Result<(), ImportError> {
        let bad = || self.err("`#   rank N HOST (T threads): 12.3 MiB/s 45.6 MiB/s`", line);
        let (head, figures) = rest.split_once("):").ok_or_else(bad)?;
        let (head, threads) = head.rsplit_once(" (").ok_or_else(bad)?;
        let threads: usize = threads
            .strip_suffix(" threads")
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(bad)?;
        let (rank, hostname) = head.trim().split_once(' ').ok_or_else(bad)?;
        let rank: usize = rank.parse().map_err(|_| bad())?;
        let (enc, dec) = two_figures(figures).ok_or_else(bad)?;
        let hostname = hostname.trim().to_string();
        let missing = self.err("a cluster row before its rank lines", line);
        let row = self
            .cluster_rows()
            .and_then(|rows| rows.last_mut())
            .ok_or(missing)?;
        row.per_node.push(NodeFigures {
            rank,
            hostname,
            cpu_model: "unknown".into(),
            threads,
            encrypt_mib_s: enc,
            decrypt_mib_s: dec,
            implementation: UNKNOWN_IMPLEMENTATION.into(),
        });
        row.nodes = row.per_node.len();
        Ok(())
    }

    /// `#   aes-xts 512b on 2 node(s): 240.0 MiB/s 250.0 MiB/s`
    fn sweep_line(&mut self, line: &str, c: &str) -> Result<(), ImportError> {
        let bad = || {
            self.err(
                "`#   CIPHER BITSb on N node(s): 12.3 MiB/s 45.6 MiB/s`",
                line,
            )
        };
        let (head, figures) = c.split_once(" node(s): ").ok_or_else(bad)?;
        let w: Vec<&str> = head.split_whitespace().collect();
        if w.len() != 4 || w[2] != "on" {
            return Err(bad());
        }
        let key_bits = key_bits_token(w[1]).ok_or_else(bad)?;
        let nodes: usize = w[3].parse().map_err(|_| bad())?;
        let (enc, dec) = two_figures(figures).ok_or_else(bad)?;
        let summary = self.report.cluster.as_mut().expect("sweep follows cluster");
        summary.sweep.push(ClusterRow {
            cipher: w[0].to_string(),
            key_bits,
            nodes,
            encrypt_mib_s: enc,
            decrypt_mib_s: dec,
            start_skew_ms: 0.0,
            per_node: Vec::new(),
        });
        Ok(())
    }

    /// A KDF line `NAME  N/A`, kept as unavailable.
    fn kdf_not_available(&mut self, t: &[&str]) -> bool {
        let na = t.len() == 2 && t[1] == "N/A";
        if na {
            self.report.unavailable.push(UnavailableRow {
                cipher: t[0].to_string(),
                key_bits: KEY_BITS,
                reason: "N/A in the listing".into(),
            });
        }
        na
    }

    fn pbkdf2(&mut self, line: &str, t: &[&str]) -> Result<(), ImportError> {
        const EXPECTED: &str =
            "`PBKDF2-HASH  N iterations per second for 256-bit key` or `PBKDF2-HASH  N/A`";
        let name = t[0].strip_prefix("PBKDF2-").unwrap_or_default();
        if self.kdf_not_available(t) {
            return Ok(());
        }
        // cryptsetup 1.x stops after "second"; 2.x adds "for 256-bit key".
        let ok_words = t.len() >= 5 && t[2] == "iterations" && t[3] == "per" && t[4] == "second";
        let key_bits = match t.len() {
            5 => Some(KEY_BITS),
            8 if t[5] == "for" && t[7] == "key" => t[6]
                .strip_suffix("-bit")
                .and_then(|b| b.parse::<usize>().ok()),
            _ => None,
        };
        let iterations = t.get(1).and_then(|n| n.parse::<u64>().ok());
        let (Some(key_bits), Some(iterations), true) = (key_bits, iterations, ok_words) else {
            return Err(self.err(EXPECTED, line));
        };
        match Hash::from_name(name) {
            Some(hash) => self.report.kdfs.push(KdfResult::Pbkdf2 {
                hash,
                iterations_per_second: iterations,
                key_bits,
            }),
            None => self.report.unavailable.push(UnavailableRow {
                cipher: t[0].to_string(),
                key_bits,
                reason: format!("{NOT_IN_CATALOGUE} (listing: {iterations} iterations per second)"),
            }),
        }
        Ok(())
    }

    fn argon2(&mut self, line: &str, t: &[&str]) -> Result<(), ImportError> {
        const EXPECTED: &str = "`argon2id  4 iterations, 1048576 memory, 4 parallel threads (CPUs) for 256-bit key (requested 2000 ms time)` or `argon2id  N/A`";
        let variant = match t[0] {
            "argon2i" => Some(Argon2Variant::Argon2i),
            "argon2id" => Some(Argon2Variant::Argon2id),
            _ => None,
        };
        if self.kdf_not_available(t) {
            return Ok(());
        }
        let shape = [
            None,
            None,
            Some("iterations,"),
            None,
            Some("memory,"),
            None,
            Some("parallel"),
            Some("threads"),
            Some("(CPUs)"),
            Some("for"),
            None,
            Some("key"),
            Some("(requested"),
            None,
            Some("ms"),
            Some("time)"),
        ];
        let fits = t.len() == shape.len()
            && shape
                .iter()
                .zip(t)
                .all(|(want, got)| want.is_none_or(|w| w == *got));
        let parsed = fits
            .then(|| {
                Some((
                    t[1].parse::<u32>().ok()?,
                    t[3].parse::<u32>().ok()?,
                    t[5].parse::<u32>().ok()?,
                    t[10].strip_suffix("-bit")?.parse::<usize>().ok()?,
                    t[13].parse::<u64>().ok()?,
                ))
            })
            .flatten();
        let Some((iterations, memory_kib, parallel, key_bits, requested_ms)) = parsed else {
            return Err(self.err(EXPECTED, line));
        };
        match variant {
            Some(variant) => self.report.kdfs.push(KdfResult::Argon2 {
                variant,
                iterations,
                memory_kib,
                parallel,
                key_bits,
                requested_ms,
                // A listing has no measured time; cryptsetup's search aims at the request.
                measured_ms: requested_ms,
            }),
            None => self.report.unavailable.push(UnavailableRow {
                cipher: t[0].to_string(),
                key_bits,
                reason: format!(
                    "{NOT_IN_CATALOGUE} (listing: {iterations} iterations, {memory_kib} KiB, {parallel} threads)"
                ),
            }),
        }
        Ok(())
    }

    fn row(&mut self, line: &str, t: &[&str]) -> Result<(), ImportError> {
        let label = t[0];
        let key_bits = key_bits_token(t[1]).expect("checked by the caller");
        if t.len() == 4 && t[2] == "N/A" && t[3] == "N/A" {
            let reason = self
                .pending_reason
                .take()
                .unwrap_or_else(|| "N/A in the listing".into());
            self.report.unavailable.push(UnavailableRow {
                cipher: label.to_string(),
                key_bits,
                reason,
            });
            return Ok(());
        }
        let shape_ok = (t.len() == 6 || (t.len() == 7 && t[6] == "(insecure)"))
            && is_unit(t[3])
            && is_unit(t[5]);
        let figures = shape_ok
            .then(|| Some((figure(t[2])?, figure(t[4])?)))
            .flatten();
        let Some((enc, dec)) = figures else {
            return Err(self.err(ROW_EXPECTED, line));
        };
        self.pending_reason = None;
        match self.section {
            Section::Rows => {
                let spec = match CipherSpec::parse(label, Some(key_bits)) {
                    Ok(spec) => spec,
                    Err(e) => {
                        self.report.unavailable.push(UnavailableRow {
                            cipher: label.to_string(),
                            key_bits,
                            reason: format!(
                                "{NOT_IN_CATALOGUE} ({e}; listing: {enc:.1} MiB/s encryption, {dec:.1} MiB/s decryption)"
                            ),
                        });
                        return Ok(());
                    }
                };
                let threads = self.report.settings.threads;
                let run = RunFigures {
                    aggregate: (enc, dec),
                    workers: vec![(enc / threads as f64, dec / threads as f64); threads],
                };
                let mut row = CipherRow::from_runs(&spec, threads, UNKNOWN_IMPLEMENTATION, &[run])
                    .expect("one run");
                if threads > 1 {
                    // The `#   thread` lines below the row fill these in.
                    row.per_thread.clear();
                }
                // The listing's label wins over the catalogue's spelling (`3des-cbc`).
                row.cipher = label.to_string();
                self.report.ciphers.push(row);
            }
            Section::Cluster => {
                let ranks = self.report.cluster.as_ref().map_or(0, |c| c.ranks);
                let rows = self.cluster_rows().expect("in the cluster section");
                rows.push(ClusterRow {
                    cipher: label.to_string(),
                    key_bits,
                    nodes: ranks,
                    encrypt_mib_s: enc,
                    decrypt_mib_s: dec,
                    start_skew_ms: 0.0,
                    per_node: Vec::new(),
                });
            }
            Section::Sweep => {
                return Err(self.err("`#   CIPHER BITSb on N node(s): ...` sweep lines", line));
            }
        }
        Ok(())
    }
}

/// The command pasted with its prompt: `$ cryptsetup benchmark`,
/// `pi@host:~ $ sudo cryptsetup benchmark -c aes-xts-plain64`, `$`.
fn is_command(line: &str) -> bool {
    if line == "$" {
        return true;
    }
    let cmd = line.split_once("$ ").map_or(line, |(_, c)| c).trim_start();
    let cmd = cmd.strip_prefix("sudo ").unwrap_or(cmd).trim_start();
    let program = cmd.split_whitespace().next().unwrap_or("");
    // `clustercrypt: error: ...` is a message, not a command.
    program
        .rsplit('/')
        .next()
        .is_some_and(|p| p == "cryptsetup" || p == "clustercrypt")
}

/// `12.3 MiB/s 45.6 MiB/s`
fn two_figures(text: &str) -> Option<(f64, f64)> {
    let w: Vec<&str> = text.split_whitespace().collect();
    if w.len() != 4 || !is_unit(w[1]) || !is_unit(w[3]) {
        return None;
    }
    Some((figure(w[0])?, figure(w[2])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PI4: &str = include_str!("../tests/data/cryptsetup_pi4.txt");

    #[test]
    fn reads_the_pi4_listing() {
        let r = parse_cryptsetup(PI4).unwrap();
        assert_eq!(r.ciphers.len(), 12);
        assert_eq!(r.kdfs.len(), 7);
        assert!(r.unavailable.is_empty());
        assert_eq!(r.source.as_deref(), Some(SOURCE));
        let row = &r.ciphers[9];
        assert_eq!((row.cipher.as_str(), row.key_bits), ("aes-xts", 512));
        assert_eq!((row.encrypt_mib_s, row.decrypt_mib_s), (68.6, 69.4));
        assert_eq!(row.spec, "aes-xts-plain64");
        assert_eq!(row.encrypt.n, 1);
        assert_eq!(row.per_thread.len(), 1);
    }

    #[test]
    fn crlf_blank_lines_and_old_headers() {
        let text = "# Tests are approximate using memory only (no storage IO).\r\n\r\n\
PBKDF2-sha1       111077 iterations per second\r\n\
#  Algorithm | Key | Encryption | Decryption\r\n\
     aes-cbc   128b  212.0 MB/s  428.0 MB/s\r\n\r\n";
        let r = parse_cryptsetup(text).unwrap();
        assert_eq!(r.ciphers[0].encrypt_mib_s, 212.0);
        assert_eq!(r.ciphers[0].decrypt_mib_s, 428.0);
        assert_eq!(
            r.kdfs[0],
            KdfResult::Pbkdf2 {
                hash: Hash::Sha1,
                iterations_per_second: 111077,
                key_bits: 256
            }
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_cryptsetup("# x\n   aes-cbc  128b  12.0 MiB/s\n").unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert!(e.to_string().contains("cipher row"), "{e}");
        let e = parse_cryptsetup("hello world\n").unwrap_err();
        assert_eq!(e.line(), Some(1));
        let e = parse_cryptsetup("$ cryptsetup benchmark\nclustercrypt: error: x\n").unwrap_err();
        assert_eq!(e.line(), Some(2));
        let r = parse_cryptsetup("u@h:~$ sudo /sbin/cryptsetup benchmark -c aes-cbc\n  aes-cbc  128b  1.0 MiB/s  2.0 MiB/s\n").unwrap();
        assert_eq!(r.ciphers.len(), 1);
        let e = parse_cryptsetup("# only comments\n").unwrap_err();
        assert!(matches!(e, ImportError::Empty { .. }));
        let e = parse_cryptsetup("{\"schema\": 1}").unwrap_err();
        assert!(e.to_string().contains("JSON"), "{e}");
        let e = parse_cryptsetup("aes-cbc 128b -1.0 MiB/s 2.0 MiB/s").unwrap_err();
        assert_eq!(e.line(), Some(1));
    }
}
