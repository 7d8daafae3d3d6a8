//! Output formats, all made from one [`Report`].
//!
//! `text` is `cryptsetup benchmark`'s format line for line (cryptsetup
//! src/cryptsetup.c: `"%15s  %9zub  %10.1f MiB/s  %10.1f MiB/s"` and the KDF
//! lines), so existing parsers keep working; what cryptsetup has no place for
//! (threads, runs, insecure rows) goes on `#` comment lines or after the row.

use std::fmt::Write as _;

use crate::kdf::KdfResult;
use crate::report::{CipherRow, FileRow, PowerReading, Report};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// cryptsetup's text table.
    Text,
    /// The full report as JSON (schema in [`crate::report`]).
    Json,
    /// One line per row, with a header.
    Csv,
    /// GitHub-flavoured Markdown tables.
    Markdown,
}

impl Format {
    /// Parses a format name.
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "text" | "txt" => Format::Text,
            "json" => Format::Json,
            "csv" => Format::Csv,
            "markdown" | "md" => Format::Markdown,
            _ => return None,
        })
    }

    /// Renders a report.
    pub fn render(self, report: &Report) -> String {
        self.render_with(report, &RenderOptions::default())
    }

    /// Renders a report with options.
    pub fn render_with(self, report: &Report, opts: &RenderOptions) -> String {
        match self {
            Format::Text => text(report, opts),
            Format::Json => serde_json::to_string_pretty(report).expect("report serialises") + "\n",
            Format::Csv => csv(report),
            Format::Markdown => markdown(report),
        }
    }
}

/// Choices of the text output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// A cycles-per-byte column and the clock line (`bench --cycles`).
    pub cycles: bool,
}

/// The cycles-per-byte columns of the text table header.
pub const TEXT_CYCLES_HEADER: &str = " |  Enc cycles/B |  Dec cycles/B";

fn cpb(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.2}"))
}

/// The machine's clock, idleness and throttling as `#` lines.
pub fn conditions_text(m: &crate::machine::Machine) -> String {
    let mut out = String::new();
    if let Some(c) = &m.clock {
        let mut line = format!("# clock: {:.0} MHz ({})", c.mhz, c.source);
        if let Some(x) = c.measured_mhz {
            line.push_str(&format!(", timed dependent adds {x:.0} MHz"));
        }
        if let Some(x) = c.scaling_cur_mhz {
            line.push_str(&format!(", cpufreq {x:.0} MHz"));
        }
        if let Some(x) = c.max_mhz {
            line.push_str(&format!(" (max {x:.0})"));
        }
        if let Some(n) = &c.note {
            line.push_str(&format!("; {n}"));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(i) = &m.idle {
        let _ = writeln!(
            out,
            "# {}: {}",
            if i.idle { "idle" } else { "NOT idle" },
            i.describe()
        );
    }
    if let Some(t) = &m.throttling {
        let _ = writeln!(out, "# throttling: {}", throttling_summary(t));
    }
    if m.core_types.len() > 1 {
        let types: Vec<String> = m
            .core_types
            .iter()
            .map(|t| {
                format!(
                    "{} (cpus {})",
                    t.name,
                    crate::platform::cpu_list_text(&t.cpus)
                )
            })
            .collect();
        let _ = writeln!(out, "# core types: {}", types.join(", "));
    }
    out
}

/// One line: temperatures, clock range, throttled rows.
pub fn throttling_summary(t: &crate::machine::Throttling) -> String {
    let mut parts = Vec::new();
    match (t.temperature_start_c, t.temperature_max_c) {
        (Some(a), Some(b)) => parts.push(format!("{a:.1} °C at the start, {b:.1} °C at most")),
        (None, Some(b)) => parts.push(format!("{b:.1} °C at most")),
        _ => parts.push("no temperature sensor".into()),
    }
    if let (Some(lo), Some(hi)) = (t.clock_min_mhz, t.clock_max_mhz) {
        parts.push(format!("clock {lo:.0}-{hi:.0} MHz"));
    }
    if !t.time_in_state.is_empty() {
        let s: Vec<String> = t
            .time_in_state
            .iter()
            .map(|f| format!("{:.0} MHz {:.1} s", f.mhz, f.seconds))
            .collect();
        parts.push(format!("time in state {}", s.join(", ")));
    }
    if let Some(v) = &t.vcgencmd_throttled {
        parts.push(format!("vcgencmd get_throttled {v}"));
    }
    parts.push(format!("{} row(s) throttled", t.throttled_rows));
    parts.join("; ")
}

/// cryptsetup's first line.
pub const TEXT_PREAMBLE: &str = "# Tests are approximate using memory only (no storage IO).";
/// cryptsetup's table header.
pub const TEXT_HEADER: &str = "#     Algorithm |       Key |      Encryption |      Decryption";

/// One KDF line as cryptsetup prints it.
pub fn kdf_line(k: &KdfResult) -> String {
    match k {
        KdfResult::Pbkdf2 {
            hash,
            iterations_per_second,
            key_bits,
        } => format!(
            "PBKDF2-{:<9} {:>7} iterations per second for {}-bit key",
            hash.name(),
            iterations_per_second,
            key_bits
        ),
        KdfResult::Argon2 {
            variant,
            iterations,
            memory_kib,
            parallel,
            key_bits,
            requested_ms,
            ..
        } => format!(
            "{:<10} {:>4} iterations, {:>5} memory, {:>1} parallel threads (CPUs) for {}-bit key (requested {} ms time)",
            variant.name(),
            iterations,
            memory_kib,
            parallel,
            key_bits,
            requested_ms
        ),
    }
}

/// One table row as cryptsetup prints it.
pub fn row_line(label: &str, key_bits: usize, enc: f64, dec: f64) -> String {
    format!("{label:>15}  {key_bits:>9}b  {enc:>10.1} MiB/s  {dec:>10.1} MiB/s")
}

fn text(report: &Report, opts: &RenderOptions) -> String {
    let mut out = String::new();
    // cryptsetup's preamble belongs to its table; a report of the file-size
    // study or HPL alone starts with its own header.
    if !report.ciphers.is_empty() || !report.kdfs.is_empty() || !studies_only(report) {
        out.push_str(TEXT_PREAMBLE);
        out.push('\n');
    }
    for k in &report.kdfs {
        out.push_str(&kdf_line(k));
        out.push('\n');
    }
    if !report.ciphers.is_empty() {
        let s = &report.settings;
        if s.threads > 1 {
            let _ = writeln!(
                out,
                "# {} threads at once; rows are the aggregate, each thread below its row",
                s.threads
            );
        }
        if s.runs > 1 {
            let _ = writeln!(out, "# {} runs per row; rows are the mean", s.runs);
        }
        if opts.cycles {
            out.push_str(&conditions_text(&report.machine));
        }
        out.push_str(TEXT_HEADER);
        if opts.cycles {
            out.push_str(TEXT_CYCLES_HEADER);
        }
        out.push('\n');
    }
    for row in &report.ciphers {
        out.push_str(&row_line(
            &row.cipher,
            row.key_bits,
            row.encrypt_mib_s,
            row.decrypt_mib_s,
        ));
        if opts.cycles {
            let _ = write!(
                out,
                "  {:>10} c/B  {:>10} c/B",
                cpb(row.encrypt_cycles_per_byte),
                cpb(row.decrypt_cycles_per_byte)
            );
        }
        if row.insecure {
            out.push_str("  (insecure)");
        }
        out.push('\n');
        if row.throttled {
            let _ = writeln!(
                out,
                "#   throttled: clock {}-{} MHz during the row",
                opt(row.clock_min_mhz, 0),
                opt(row.clock_max_mhz, 0)
            );
        }
        for t in &row.per_core_type {
            let _ = writeln!(
                out,
                "#   core type {} (cpu {}): {:.1} MiB/s {:.1} MiB/s, {} c/B {} c/B at {} MHz{}",
                t.core_type,
                t.cpu,
                t.encrypt_mib_s,
                t.decrypt_mib_s,
                cpb(t.encrypt_cycles_per_byte),
                cpb(t.decrypt_cycles_per_byte),
                opt(t.cpu_mhz, 0),
                if t.throttled { " (throttled)" } else { "" }
            );
        }
        if report.settings.runs > 1 {
            let _ = writeln!(
                out,
                "#   runs {}: encryption median {:.1} min {:.1} max {:.1} sd {:.1}; decryption median {:.1} min {:.1} max {:.1} sd {:.1}",
                row.encrypt.n,
                row.encrypt.median,
                row.encrypt.min,
                row.encrypt.max,
                row.encrypt.stddev,
                row.decrypt.median,
                row.decrypt.min,
                row.decrypt.max,
                row.decrypt.stddev
            );
        }
        if row.threads > 1 {
            for t in &row.per_thread {
                let _ = write!(
                    out,
                    "#   thread {}: {:.1} MiB/s {:.1} MiB/s",
                    t.thread, t.encrypt_mib_s, t.decrypt_mib_s
                );
                if let Some(cpu) = t.cpu {
                    let _ = write!(
                        out,
                        "  [cpu {cpu} {}]",
                        t.core_type.as_deref().unwrap_or("?")
                    );
                }
                out.push('\n');
            }
        }
    }
    if let Some(c) = &report.cluster {
        out.push_str(&cluster_text(c));
    }
    out.push_str(&files_text(report));
    out.push_str(&hpl_text(report));
    out.push_str(&power_text(report));
    if report.interrupted {
        out.push_str("# interrupted: rows not reached are missing\n");
    }
    out
}

/// The cluster rows in cryptsetup's table format, each node below on `#` lines.
fn cluster_text(c: &crate::report::ClusterSummary) -> String {
    let mut out = format!(
        "# cluster: {} ranks, rows are the sum over the nodes\n",
        c.ranks
    );
    out.push_str(TEXT_HEADER);
    out.push('\n');
    for r in &c.rows {
        out.push_str(&row_line(
            &r.cipher,
            r.key_bits,
            r.encrypt_mib_s,
            r.decrypt_mib_s,
        ));
        out.push('\n');
        for n in &r.per_node {
            let _ = writeln!(
                out,
                "#   rank {} {} ({} threads): {:.1} MiB/s {:.1} MiB/s",
                n.rank, n.hostname, n.threads, n.encrypt_mib_s, n.decrypt_mib_s
            );
        }
        let _ = writeln!(out, "#   start skew {:.3} ms", r.start_skew_ms);
    }
    if !c.sweep.is_empty() {
        out.push_str("# sweep: aggregate against number of nodes\n");
        for r in &c.sweep {
            let _ = writeln!(
                out,
                "#   {} {}b on {} node(s): {:.1} MiB/s {:.1} MiB/s",
                r.cipher, r.key_bits, r.nodes, r.encrypt_mib_s, r.decrypt_mib_s
            );
        }
    }
    out
}

fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header of the CSV output.
pub const CSV_HEADER: &str = "kind,cipher,spec,key_bits,threads,encrypt_mib_s,decrypt_mib_s,encrypt_median,encrypt_min,encrypt_max,encrypt_stddev,decrypt_median,decrypt_min,decrypt_max,decrypt_stddev,runs,implementation,insecure,kdf_iterations_per_second,kdf_iterations,kdf_memory_kib,kdf_parallel,hostname,cpu_mhz,encrypt_cycles_per_byte,decrypt_cycles_per_byte,throttled,core_type";

fn csv(report: &Report) -> String {
    if studies_only(report) {
        if !report.files.is_empty() {
            return files_csv(report);
        }
        if !report.hpl.is_empty() {
            return hpl_csv(report);
        }
    }
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    let host = csv_escape(&report.machine.hostname);
    for r in &report.ciphers {
        let _ = writeln!(
            out,
            "cipher,{},{},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.2},{:.1},{:.1},{:.1},{:.2},{},{},{},,,,,{},{},{},{},{},",
            r.cipher,
            r.spec,
            r.key_bits,
            r.threads,
            r.encrypt_mib_s,
            r.decrypt_mib_s,
            r.encrypt.median,
            r.encrypt.min,
            r.encrypt.max,
            r.encrypt.stddev,
            r.decrypt.median,
            r.decrypt.min,
            r.decrypt.max,
            r.decrypt.stddev,
            r.encrypt.n,
            r.implementation,
            r.insecure,
            host,
            opt(r.cpu_mhz, 1),
            opt(r.encrypt_cycles_per_byte, 3),
            opt(r.decrypt_cycles_per_byte, 3),
            r.throttled,
        );
        for t in &r.per_core_type {
            let _ = writeln!(
                out,
                "core_type,{},{},{},1,{:.1},{:.1},,,,,,,,,{},{},{},,,,,{},{},{},{},{},{}",
                r.cipher,
                r.spec,
                r.key_bits,
                t.encrypt_mib_s,
                t.decrypt_mib_s,
                r.encrypt.n,
                r.implementation,
                r.insecure,
                host,
                opt(t.cpu_mhz, 1),
                opt(t.encrypt_cycles_per_byte, 3),
                opt(t.decrypt_cycles_per_byte, 3),
                t.throttled,
                csv_escape(&t.core_type)
            );
        }
    }
    if let Some(c) = &report.cluster {
        for (kind, rows) in [("cluster", &c.rows), ("sweep", &c.sweep)] {
            for r in rows {
                let _ = writeln!(
                    out,
                    "{kind},{},{},{},{},{:.1},{:.1},,,,,,,,,1,,false,,,,,{} nodes",
                    r.cipher,
                    r.cipher,
                    r.key_bits,
                    r.nodes,
                    r.encrypt_mib_s,
                    r.decrypt_mib_s,
                    r.nodes
                );
                if kind == "cluster" {
                    for n in &r.per_node {
                        let _ = writeln!(
                            out,
                            "node,{},{},{},{},{:.1},{:.1},,,,,,,,,1,{},false,,,,,{}",
                            r.cipher,
                            r.cipher,
                            r.key_bits,
                            n.threads,
                            n.encrypt_mib_s,
                            n.decrypt_mib_s,
                            n.implementation,
                            csv_escape(&n.hostname)
                        );
                    }
                }
            }
        }
    }
    for k in &report.kdfs {
        match k {
            KdfResult::Pbkdf2 {
                hash,
                iterations_per_second,
                key_bits,
            } => {
                let _ = writeln!(
                    out,
                    "kdf,pbkdf2-{},pbkdf2-{},{key_bits},1,,,,,,,,,,,,,false,{iterations_per_second},,,,{host}",
                    hash.name(),
                    hash.name()
                );
            }
            KdfResult::Argon2 {
                variant,
                iterations,
                memory_kib,
                parallel,
                key_bits,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "kdf,{v},{v},{key_bits},{parallel},,,,,,,,,,,,,false,,{iterations},{memory_kib},{parallel},{host}",
                    v = variant.name()
                );
            }
        }
    }
    out
}

fn markdown_row(r: &CipherRow) -> String {
    let mut note = r.insecure_reason.clone().unwrap_or_default();
    if r.throttled {
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&format!(
            "throttled ({}-{} MHz)",
            opt(r.clock_min_mhz, 0),
            opt(r.clock_max_mhz, 0)
        ));
    }
    let mut out = format!(
        "| {} | {} | {:.1} | {:.1} | {} / {} | {} | {} |",
        r.cipher,
        r.key_bits,
        r.encrypt_mib_s,
        r.decrypt_mib_s,
        cpb(r.encrypt_cycles_per_byte),
        cpb(r.decrypt_cycles_per_byte),
        r.implementation,
        note
    );
    for t in &r.per_core_type {
        out.push_str(&format!(
            "\n| {} on {} (cpu {}) | {} | {:.1} | {:.1} | {} / {} | {} | {} |",
            r.cipher,
            t.core_type,
            t.cpu,
            r.key_bits,
            t.encrypt_mib_s,
            t.decrypt_mib_s,
            cpb(t.encrypt_cycles_per_byte),
            cpb(t.decrypt_cycles_per_byte),
            r.implementation,
            if t.throttled { "throttled" } else { "" }
        ));
    }
    out
}

fn markdown(report: &Report) -> String {
    let m = &report.machine;
    // Imported listings describe no machine: say so rather than "0 cores".
    let mut out = if m.cores == 0 {
        format!(
            "**{}**: machine not described{}\n\n",
            m.hostname,
            report
                .source
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        )
    } else {
        format!(
            "**{}**: {}, {} cores, {:.1} GiB, kernel {}, features: {}\n\n",
            m.hostname,
            m.cpu_model,
            m.cores,
            m.memory_bytes as f64 / (1u64 << 30) as f64,
            m.kernel,
            m.cpu_features.join(" ")
        )
    };
    if !report.ciphers.is_empty() {
        let threads = report.settings.threads;
        let _ = writeln!(
            out,
            "| Algorithm | Key (bits) | Encryption (MiB/s) | Decryption (MiB/s) | Cycles/byte (enc / dec) | Implementation | Notes |"
        );
        out.push_str("|---|---:|---:|---:|---:|---|---|\n");
        for r in &report.ciphers {
            out.push_str(&markdown_row(r));
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "\n{} thread(s), {} run(s) per row, MiB = 2^20 bytes.",
            threads, report.settings.runs
        );
        let cond = conditions_text(m);
        if !cond.is_empty() {
            out.push('\n');
            for l in cond.lines() {
                let _ = writeln!(out, "- {}", l.trim_start_matches("# "));
            }
        }
    }
    if !report.kdfs.is_empty() {
        out.push_str("\n| KDF | Result |\n|---|---|\n");
        for k in &report.kdfs {
            let (name, result) = match k {
                KdfResult::Pbkdf2 {
                    hash,
                    iterations_per_second,
                    ..
                } => (
                    format!("PBKDF2-{}", hash.name()),
                    format!("{iterations_per_second} iterations/s"),
                ),
                KdfResult::Argon2 {
                    variant,
                    iterations,
                    memory_kib,
                    parallel,
                    requested_ms,
                    ..
                } => (
                    variant.name().to_string(),
                    format!(
                        "{iterations} iterations, {memory_kib} KiB, {parallel} threads for {requested_ms} ms"
                    ),
                ),
            };
            let _ = writeln!(out, "| {name} | {result} |");
        }
    }
    if let Some(c) = &report.cluster {
        let _ = writeln!(
            out,
            "\n**Cluster**, {} ranks (sum over the nodes)\n\n| Algorithm | Key (bits) | Nodes | Encryption (MiB/s) | Decryption (MiB/s) | Start skew (ms) |\n|---|---:|---:|---:|---:|---:|",
            c.ranks
        );
        for r in c.rows.iter().chain(&c.sweep) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {:.1} | {:.3} |",
                r.cipher, r.key_bits, r.nodes, r.encrypt_mib_s, r.decrypt_mib_s, r.start_skew_ms
            );
        }
    }
    out.push_str(&studies_markdown(report));
    if report.interrupted {
        out.push_str("\n*Interrupted: rows not reached are missing.*\n");
    }
    out
}

/// Whether the report holds only the file-size study, HPL or power figures (no
/// cipher table, KDF or cluster rows), which get their own layouts.
fn studies_only(report: &Report) -> bool {
    report.ciphers.is_empty()
        && report.kdfs.is_empty()
        && report.cluster.is_none()
        && (!report.files.is_empty() || !report.hpl.is_empty())
}

/// The file rows as tables like the study's: one row per cipher, one column per size.
struct FileTable<'a> {
    sizes: Vec<u64>,
    ciphers: Vec<(&'a str, usize)>,
}

impl<'a> FileTable<'a> {
    fn of(rows: &'a [FileRow]) -> FileTable<'a> {
        let mut sizes: Vec<u64> = Vec::new();
        let mut ciphers: Vec<(&str, usize)> = Vec::new();
        for r in rows {
            if !sizes.contains(&r.file_bytes) {
                sizes.push(r.file_bytes);
            }
            if !ciphers.contains(&(r.cipher.as_str(), r.key_bits)) {
                ciphers.push((r.cipher.as_str(), r.key_bits));
            }
        }
        FileTable { sizes, ciphers }
    }

    fn cell(
        rows: &[FileRow],
        (cipher, bits): (&str, usize),
        size: u64,
        f: &dyn Fn(&FileRow) -> f64,
    ) -> Option<f64> {
        rows.iter()
            .find(|r| r.cipher == cipher && r.key_bits == bits && r.file_bytes == size)
            .map(f)
    }
}

fn files_text(report: &Report) -> String {
    let rows = &report.files;
    if rows.is_empty() {
        return String::new();
    }
    let t = FileTable::of(rows);
    let mut out = format!(
        "# File-size study (seed 002): files encrypted and decrypted end to end, {} thread(s), {} run(s) (mean)\n",
        rows[0].threads, report.settings.runs
    );
    type Metric = (&'static str, fn(&FileRow) -> f64, usize);
    let metrics: [Metric; 4] = [
        ("Encryption, wall seconds", |r| r.encrypt_s, 4),
        ("Decryption, wall seconds", |r| r.decrypt_s, 4),
        ("CPU while encrypting, % of one core", |r| r.cpu_percent, 1),
        (
            "Peak resident memory while encrypting, MiB",
            |r| r.peak_rss_bytes as f64 / MIB,
            1,
        ),
    ];
    for (title, f, decimals) in metrics {
        let _ = write!(out, "# {title}\n#{:>14}  {:>10}", "Cipher", "Key");
        for s in &t.sizes {
            let _ = write!(out, "  {:>10}", size_label(*s));
        }
        out.push('\n');
        for &c in &t.ciphers {
            let _ = write!(out, "{:>15}  {:>9}b", c.0, c.1);
            for &s in &t.sizes {
                match FileTable::cell(rows, c, s, &f) {
                    Some(v) => {
                        let _ = write!(out, "  {v:>10.decimals$}");
                    }
                    None => out.push_str("           -"),
                }
            }
            if rows.iter().any(|r| r.cipher == c.0 && r.insecure) {
                out.push_str("  (insecure)");
            }
            out.push('\n');
        }
    }
    if rows.iter().any(|r| !r.peak_memory_reset) {
        out.push_str("# note: the peak could not be reset (/proc/self/clear_refs); memory is the process's lifetime peak\n");
    }
    out
}

const MIB: f64 = (1u64 << 20) as f64;

/// `64K`, `1M`, `128M`, or bytes.
fn size_label(bytes: u64) -> String {
    crate::files::size_label(bytes)
}

fn hpl_text(report: &Report) -> String {
    let mut out = String::new();
    for h in &report.hpl {
        let _ = writeln!(
            out,
            "# HPL ({}): N={} NB={} P={} Q={}, {} process(es) on {} node(s)",
            h.program, h.n, h.nb, h.p, h.q, h.processes, h.nodes
        );
        let _ = writeln!(
            out,
            "HPL  {:>10.2} GFLOPS  {:>10.2} s  residual check {}",
            h.gflops,
            h.seconds,
            if h.passed { "PASSED" } else { "FAILED" }
        );
    }
    out
}

/// Work per watt and dollars per unit of work of a reading, with the unit.
fn power_figures(r: &PowerReading) -> (&'static str, Option<f64>, Option<f64>, Option<f64>) {
    let e = crate::power::efficiency(r);
    match (r.mib_s, r.gflops) {
        (Some(m), _) => ("MiB/s", Some(m), e.per_watt, e.usd_per_unit),
        (None, Some(g)) => ("GFLOPS", Some(g), e.per_watt, e.usd_per_unit),
        _ => ("", None, None, None),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

fn power_text(report: &Report) -> String {
    let mut out = String::new();
    let mut group = None;
    for r in &report.power {
        let (unit, work, per_watt, usd) = power_figures(r);
        if group != Some((r.source, unit)) {
            group = Some((r.source, unit));
            let unit = if unit.is_empty() { "work" } else { unit };
            let _ = writeln!(
                out,
                "# Power, source: {}\n#   {:<32} {:>8} {:>10} {:>14} {:>14}",
                crate::power::describe(r.source),
                "workload",
                "watts",
                unit,
                format!("{unit} per W"),
                format!("USD per {unit}")
            );
        }
        let _ = writeln!(
            out,
            "#   {:<32} {:>8.1} {:>10} {:>14} {:>14}",
            r.workload,
            r.watts,
            opt(work, 2),
            opt(per_watt, 3),
            opt(usd, 4)
        );
    }
    out
}

/// Header of the CSV output of the file-size study.
pub const FILES_CSV_HEADER: &str = "kind,cipher,algorithm,mode,key_bits,file_bytes,threads,encrypt_s,decrypt_s,cpu_percent,peak_memory_bytes,peak_rss_bytes,peak_memory_reset,insecure,hostname";

fn files_csv(report: &Report) -> String {
    let mut out = String::from(FILES_CSV_HEADER);
    out.push('\n');
    let host = csv_escape(&report.machine.hostname);
    for r in &report.files {
        let _ = writeln!(
            out,
            "file,{},{},{},{},{},{},{:.6},{:.6},{:.1},{},{},{},{},{host}",
            r.cipher,
            r.algorithm.name(),
            r.mode.name(),
            r.key_bits,
            r.file_bytes,
            r.threads,
            r.encrypt_s,
            r.decrypt_s,
            r.cpu_percent,
            r.peak_memory_bytes,
            r.peak_rss_bytes,
            r.peak_memory_reset,
            r.insecure
        );
    }
    out
}

/// Header of the CSV output of `clustercrypt hpl`.
pub const HPL_CSV_HEADER: &str =
    "kind,gflops,n,nb,p,q,processes,nodes,seconds,passed,program,hostname";

fn hpl_csv(report: &Report) -> String {
    let mut out = String::from(HPL_CSV_HEADER);
    out.push('\n');
    let host = csv_escape(&report.machine.hostname);
    for h in &report.hpl {
        let _ = writeln!(
            out,
            "hpl,{:.3},{},{},{},{},{},{},{:.3},{},{},{host}",
            h.gflops,
            h.n,
            h.nb,
            h.p,
            h.q,
            h.processes,
            h.nodes,
            h.seconds,
            h.passed,
            csv_escape(&h.program)
        );
    }
    out
}

fn studies_markdown(report: &Report) -> String {
    let mut out = String::new();
    let rows = &report.files;
    if !rows.is_empty() {
        let t = FileTable::of(rows);
        let _ = write!(
            out,
            "\n**File-size study** (seed 002): wall seconds to encrypt / decrypt a file, {} thread(s)\n\n| Cipher | Key (bits) |",
            rows[0].threads
        );
        for s in &t.sizes {
            let _ = write!(out, " {} |", size_label(*s));
        }
        out.push_str("\n|---|---:|");
        out.push_str(&"---:|".repeat(t.sizes.len()));
        out.push('\n');
        for &c in &t.ciphers {
            let _ = write!(out, "| {} | {} |", c.0, c.1);
            for &s in &t.sizes {
                let enc = FileTable::cell(rows, c, s, &|r| r.encrypt_s);
                let dec = FileTable::cell(rows, c, s, &|r| r.decrypt_s);
                let _ = write!(out, " {} / {} |", opt(enc, 4), opt(dec, 4));
            }
            out.push('\n');
        }
    }
    if !report.hpl.is_empty() {
        out.push_str("\n**HPL**\n\n| GFLOPS | N | NB | P x Q | Processes | Nodes | Seconds | Residual | Program |\n|---:|---:|---:|---|---:|---:|---:|---|---|\n");
        for h in &report.hpl {
            let _ = writeln!(
                out,
                "| {:.2} | {} | {} | {} x {} | {} | {} | {:.2} | {} | {} |",
                h.gflops,
                h.n,
                h.nb,
                h.p,
                h.q,
                h.processes,
                h.nodes,
                h.seconds,
                if h.passed { "passed" } else { "FAILED" },
                h.program
            );
        }
    }
    if !report.power.is_empty() {
        out.push_str("\n**Power**\n\n| Workload | Watts | Source | Work | Work per W | USD per work |\n|---|---:|---|---:|---:|---:|\n");
        for r in &report.power {
            let (unit, work, per_watt, usd) = power_figures(r);
            let _ = writeln!(
                out,
                "| {} | {:.1} | {} | {} {unit} | {} | {} |",
                r.workload,
                r.watts,
                crate::power::describe(r.source),
                opt(work, 1),
                opt(per_watt, 3),
                opt(usd, 4)
            );
        }
    }
    out
}
