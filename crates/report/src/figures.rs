//! Figure data: results and published figures turned into named series of
//! (x, y) points with units. Pure (no drawing), so that what a figure shows can
//! be tested without looking at pixels; [`crate::plot`] draws it and
//! [`Figure::table`] prints the same numbers.

use clustercrypt_bench::report::{ClusterRow, Report};
use clustercrypt_catalogue::Algorithm;

use crate::reference::{Direction, ReferenceData, Source};

/// A results file with the name it goes by in legends and tables.
#[derive(Debug, Clone)]
pub struct Results {
    /// Legend name (host name, or the file's name when host names repeat).
    pub label: String,
    /// The results.
    pub report: Report,
}

/// Bytes in an MB as the studies print file sizes (240 kB = 240 000 bytes in the TEA study).
const MB: f64 = 1_000_000.0;

/// The figures a report can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FigureKind {
    /// Throughput per cipher and mode, encryption against decryption.
    Throughput,
    /// Aggregate encryption against nodes (the cluster study's Figure 3).
    ClusterEncrypt,
    /// Aggregate decryption against nodes (Figure 4).
    ClusterDecrypt,
    /// Speedup against file size (the TEA study).
    SpeedupSize,
    /// Speedup against rounds (the TEA study).
    SpeedupRounds,
    /// Seconds to encrypt against file size (seed 002).
    FileTimes,
    /// HPL GFLOPS against nodes (Figure 2).
    Hpl,
    /// Watts per system and workload (Table II, Figure 5).
    Power,
    /// MiB/s per watt.
    Efficiency,
    /// Cycles per byte per cipher at each machine's measured clock: boards
    /// compared at equal clock.
    CyclesPerByte,
}

impl FigureKind {
    /// Every figure, in report order.
    pub const ALL: [FigureKind; 10] = [
        FigureKind::Throughput,
        FigureKind::ClusterEncrypt,
        FigureKind::ClusterDecrypt,
        FigureKind::SpeedupSize,
        FigureKind::SpeedupRounds,
        FigureKind::FileTimes,
        FigureKind::Hpl,
        FigureKind::Power,
        FigureKind::Efficiency,
        FigureKind::CyclesPerByte,
    ];

    /// Name on the command line and in file names (`cluster-encrypt`).
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::Throughput => "throughput",
            FigureKind::ClusterEncrypt => "cluster-encrypt",
            FigureKind::ClusterDecrypt => "cluster-decrypt",
            FigureKind::SpeedupSize => "speedup-size",
            FigureKind::SpeedupRounds => "speedup-rounds",
            FigureKind::FileTimes => "file-times",
            FigureKind::Hpl => "hpl",
            FigureKind::Power => "power",
            FigureKind::Efficiency => "efficiency",
            FigureKind::CyclesPerByte => "cycles-per-byte",
        }
    }

    /// The figure called `name`.
    pub fn from_name(name: &str) -> Option<FigureKind> {
        FigureKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What data the figure needs, for the message when it has none.
    pub fn needs(self) -> &'static str {
        match self {
            FigureKind::Throughput => "cipher rows (clustercrypt bench) or a throughput reference",
            FigureKind::ClusterEncrypt | FigureKind::ClusterDecrypt => {
                "cluster rows (bench --cluster --sweep) or --ref pi3b-cluster"
            }
            FigureKind::SpeedupSize | FigureKind::SpeedupRounds => {
                "speedup rows (scripts/tea_study.py --json) or --ref tea-cluster"
            }
            FigureKind::FileTimes => "file rows (bench --files) or --ref iot-pi3/iot-bbb",
            FigureKind::Hpl => "HPL results (clustercrypt hpl) or --ref hpl",
            FigureKind::Power => "power readings or --ref power",
            FigureKind::Efficiency => "power readings with MiB/s, or --ref power with throughput",
            FigureKind::CyclesPerByte => {
                "cipher rows with a clock (clustercrypt bench, or --cpu-mhz)"
            }
        }
    }
}

/// How an axis maps values.
#[derive(Debug, Clone, PartialEq)]
pub enum Scale {
    /// Linear from zero (y) or around the data (x).
    Linear,
    /// Logarithmic (file sizes, rounds).
    Log,
    /// Named categories; a point's x is the category's index.
    Categories(Vec<String>),
}

/// One axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What it shows (`nodes`).
    pub label: String,
    /// Unit (`MiB/s`), empty for counts.
    pub unit: String,
    /// Mapping.
    pub scale: Scale,
}

impl Axis {
    fn new(label: &str, unit: &str, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            unit: unit.into(),
            scale,
        }
    }

    /// `label (unit)`.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.label.clone()
        } else {
            format!("{} ({})", self.label, self.unit)
        }
    }
}

/// Measured here, or printed in a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// From a results file.
    Measured,
    /// From the reference data.
    Published,
}

/// A named set of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Where the points come from.
    pub origin: Origin,
    /// (x, y) points, sorted by x.
    pub points: Vec<(f64, f64)>,
    /// Series and lines of one group share a colour (one cipher row in the
    /// cluster figures, as the study coloured them); usually the name.
    pub group: String,
}

/// A reference drawn as a horizontal line across the figure (the NUC and the
/// MRD in the cluster study's figures).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Legend name.
    pub name: String,
    /// The y value.
    pub value: f64,
    /// Colour group, as [`Series::group`].
    pub group: String,
    /// Which system it is, for the dash pattern (the study: solid MRD, dashed NUC).
    pub system: String,
}

/// Everything needed to draw one figure and print its table.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Which figure.
    pub kind: FigureKind,
    /// Title.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The series.
    pub series: Vec<Series>,
    /// Reference lines.
    pub levels: Vec<Level>,
    /// Sources of the published figures used, and remarks.
    pub notes: Vec<String>,
}

/// A figure's numbers as rows and columns of text.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<String>>,
}

/// A figure value as text: four significant digits or one decimal, whichever is shorter to read.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.4}")
    }
}

/// [`format_value`] without trailing zeros (`24`, `0.24`, `37.6`), for names.
pub fn format_short(v: f64) -> String {
    let s = format_value(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

impl Figure {
    fn new(kind: FigureKind, title: &str, x: Axis, y: Axis) -> Figure {
        Figure {
            kind,
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            levels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The series called `name`.
    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty()) && self.levels.is_empty()
    }

    /// One row per x value (or category), one column per series; reference
    /// lines follow as rows of their own.
    pub fn table(&self) -> Table {
        let mut columns = vec![self.x.title()];
        columns.extend(self.series.iter().map(|s| s.name.clone()));
        let with_levels = !self.levels.is_empty();
        if with_levels {
            columns.push(format!("reference line ({})", self.y.title()));
        }
        let xs: Vec<f64> = match &self.x.scale {
            Scale::Categories(c) => (0..c.len()).map(|i| i as f64).collect(),
            _ => {
                let mut xs: Vec<f64> = self
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .collect();
                xs.sort_by(f64::total_cmp);
                xs.dedup();
                xs
            }
        };
        let mut rows = Vec::new();
        for x in xs {
            let head = match &self.x.scale {
                Scale::Categories(c) => c[x as usize].clone(),
                _ => format_value(x),
            };
            let mut row = vec![head];
            for s in &self.series {
                let cell = s
                    .points
                    .iter()
                    .find(|p| p.0 == x)
                    .map_or_else(String::new, |p| format_value(p.1));
                row.push(cell);
            }
            if with_levels {
                row.push(String::new());
            }
            rows.push(row);
        }
        for level in &self.levels {
            let mut row = vec![level.name.clone()];
            row.extend(self.series.iter().map(|_| String::new()));
            row.push(format_value(level.value));
            rows.push(row);
        }
        Table { columns, rows }
    }
}

/// Collects series by name, keeping first-seen order.
#[derive(Default)]
struct SeriesSet {
    series: Vec<Series>,
}

impl SeriesSet {
    fn push(&mut self, name: String, origin: Origin, point: (f64, f64)) {
        let group = name.clone();
        self.push_in(name, &group, origin, point);
    }

    fn push_in(&mut self, name: String, group: &str, origin: Origin, point: (f64, f64)) {
        if !point.0.is_finite() || !point.1.is_finite() {
            return;
        }
        match self.series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => self.series.push(Series {
                name,
                origin,
                points: vec![point],
                group: group.to_string(),
            }),
        }
    }

    fn finish(mut self) -> Vec<Series> {
        for s in &mut self.series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        self.series
    }
}

fn add_note(notes: &mut Vec<String>, source: &Source) {
    let line = format!("Published figures: {source}");
    if !notes.contains(&line) {
        notes.push(line);
    }
}

fn row_name(cipher: &str, key_bits: usize) -> String {
    format!("{cipher} {key_bits}b")
}

/// Builds every figure that has data, in report order.
pub fn build_all(results: &[Results], refs: &ReferenceData) -> Vec<Figure> {
    FigureKind::ALL
        .into_iter()
        .filter_map(|k| build(k, results, refs))
        .collect()
}

/// Builds one figure; `None` when neither the results nor the references have data for it.
pub fn build(kind: FigureKind, results: &[Results], refs: &ReferenceData) -> Option<Figure> {
    let fig = match kind {
        FigureKind::Throughput => throughput(results, refs),
        FigureKind::ClusterEncrypt => cluster(Direction::Encrypt, results, refs),
        FigureKind::ClusterDecrypt => cluster(Direction::Decrypt, results, refs),
        FigureKind::SpeedupSize => speedup(true, results, refs),
        FigureKind::SpeedupRounds => speedup(false, results, refs),
        FigureKind::FileTimes => file_times(results, refs),
        FigureKind::Hpl => hpl(results, refs),
        FigureKind::Power => power(results, refs),
        FigureKind::Efficiency => efficiency(results, refs),
        FigureKind::CyclesPerByte => cycles_per_byte(results),
    };
    Some(fig).filter(|f| !f.is_empty())
}

fn throughput(results: &[Results], refs: &ReferenceData) -> Figure {
    let mut categories: Vec<String> = Vec::new();
    let add_category = |name: String, categories: &mut Vec<String>| {
        if !categories.contains(&name) {
            categories.push(name);
        }
    };
    for r in results {
        for row in &r.report.ciphers {
            add_category(row_name(&row.cipher, row.key_bits), &mut categories);
        }
    }
    // With no measured rows the references choose the rows; otherwise they only
    // fill in the rows measured here, so that a --all run stays readable.
    let measured = !categories.is_empty();
    let single: Vec<_> = refs.throughput.iter().filter(|t| t.nodes == 1).collect();
    if !measured {
        for t in &single {
            add_category(row_name(&t.cipher, t.key_bits), &mut categories);
        }
    }
    let index = |name: &str, categories: &[String]| categories.iter().position(|c| c == name);
    let mut set = SeriesSet::default();
    let mut notes = Vec::new();
    for r in results {
        for row in &r.report.ciphers {
            let Some(i) = index(&row_name(&row.cipher, row.key_bits), &categories) else {
                continue;
            };
            let x = i as f64;
            set.push(
                format!("{} encrypt", r.label),
                Origin::Measured,
                (x, row.encrypt_mib_s),
            );
            set.push(
                format!("{} decrypt", r.label),
                Origin::Measured,
                (x, row.decrypt_mib_s),
            );
        }
    }
    for t in single {
        let Some(i) = index(&row_name(&t.cipher, t.key_bits), &categories) else {
            continue;
        };
        set.push(
            format!("{} {} (published)", t.system, t.direction.name()),
            Origin::Published,
            (i as f64, t.mib_s),
        );
        add_note(&mut notes, &t.source);
    }
    let mut fig = Figure::new(
        FigureKind::Throughput,
        "Throughput per cipher and mode: encryption and decryption",
        Axis::new("cipher", "", Scale::Categories(categories)),
        Axis::new("throughput", "MiB/s", Scale::Linear),
    );
    fig.series = set.finish();
    fig.notes = notes;
    fig
}

/// Encryption and decryption cycles per byte of every row that has a clock, one
/// series per machine (and per core type with `--per-core-type`); rows measured
/// while throttled are named in the notes.
fn cycles_per_byte(results: &[Results]) -> Figure {
    let mut categories: Vec<String> = Vec::new();
    for r in results {
        for row in &r.report.ciphers {
            let name = row_name(&row.cipher, row.key_bits);
            if row.encrypt_cycles_per_byte.is_some() && !categories.contains(&name) {
                categories.push(name);
            }
        }
    }
    let mut set = SeriesSet::default();
    let mut notes = Vec::new();
    for r in results {
        let clock = r.report.machine.clock.as_ref();
        let mut any = false;
        for row in &r.report.ciphers {
            let Some(i) = categories
                .iter()
                .position(|c| *c == row_name(&row.cipher, row.key_bits))
            else {
                continue;
            };
            let x = i as f64;
            for (dir, v) in [
                ("encrypt", row.encrypt_cycles_per_byte),
                ("decrypt", row.decrypt_cycles_per_byte),
            ] {
                if let Some(v) = v {
                    any = true;
                    set.push(format!("{} {dir}", r.label), Origin::Measured, (x, v));
                }
            }
            for t in &row.per_core_type {
                if let Some(v) = t.encrypt_cycles_per_byte {
                    set.push(
                        format!("{} {} encrypt", r.label, t.core_type),
                        Origin::Measured,
                        (x, v),
                    );
                }
            }
            if row.throttled {
                notes.push(format!(
                    "{}: {} {}b was measured while the clock dropped ({}-{} MHz)",
                    r.label,
                    row.cipher,
                    row.key_bits,
                    row.clock_min_mhz.map_or("?".into(), |v| format!("{v:.0}")),
                    row.clock_max_mhz.map_or("?".into(), |v| format!("{v:.0}"))
                ));
            }
        }
        if any && let Some(c) = clock {
            notes.push(format!(
                "{}: cycles per byte at {:.0} MHz ({})",
                r.label, c.mhz, c.source
            ));
        }
    }
    let mut fig = Figure::new(
        FigureKind::CyclesPerByte,
        "Cycles per byte at each machine's measured clock (lower is better)",
        Axis::new("cipher", "", Scale::Categories(categories)),
        Axis::new("cycles per byte", "c/B", Scale::Linear),
    );
    fig.series = set.finish();
    fig.notes = notes;
    fig
}

fn cluster_rows(report: &Report) -> &[ClusterRow] {
    match &report.cluster {
        Some(c) if !c.sweep.is_empty() => &c.sweep,
        Some(c) => &c.rows,
        None => &[],
    }
}

fn cluster(direction: Direction, results: &[Results], refs: &ReferenceData) -> Figure {
    let with_cluster: Vec<&Results> = results
        .iter()
        .filter(|r| !cluster_rows(&r.report).is_empty())
        .collect();
    let prefix = |r: &Results| {
        if with_cluster.len() > 1 {
            format!("{} ", r.label)
        } else {
            String::new()
        }
    };
    let mut set = SeriesSet::default();
    let mut rows_here: Vec<(String, usize)> = Vec::new();
    for r in &with_cluster {
        for row in cluster_rows(&r.report) {
            let value = match direction {
                Direction::Encrypt => row.encrypt_mib_s,
                Direction::Decrypt => row.decrypt_mib_s,
            };
            let key = (row.cipher.clone(), row.key_bits);
            if !rows_here.contains(&key) {
                rows_here.push(key);
            }
            set.push_in(
                format!("{}{}", prefix(r), row_name(&row.cipher, row.key_bits)),
                &row_name(&row.cipher, row.key_bits),
                Origin::Measured,
                (row.nodes as f64, value),
            );
        }
    }
    // The rows to show: those measured here; without any, those of the
    // published clusters (the study's Figures 3 and 4 on their own).
    if rows_here.is_empty() {
        for t in refs.throughput.iter().filter(|t| t.nodes > 1) {
            let key = (t.cipher.clone(), t.key_bits);
            if !rows_here.contains(&key) {
                rows_here.push(key);
            }
        }
    }
    let shared =
        |cipher: &str, bits: usize| rows_here.iter().any(|(c, b)| c == cipher && *b == bits);
    let mut notes = Vec::new();
    let mut levels = Vec::new();
    for t in refs
        .throughput
        .iter()
        .filter(|t| t.direction == direction && shared(&t.cipher, t.key_bits))
    {
        let group = row_name(&t.cipher, t.key_bits);
        if t.nodes > 1 {
            set.push_in(
                format!("{} {group} (published)", t.system),
                &group,
                Origin::Published,
                (t.nodes as f64, t.mib_s),
            );
        } else {
            // Single machines are lines to beat, as the study drew the NUC and MRD.
            levels.push(Level {
                name: format!("{} {group}", t.system),
                value: t.mib_s,
                group,
                system: t.system.clone(),
            });
        }
        add_note(&mut notes, &t.source);
    }
    let (kind, title) = match direction {
        Direction::Encrypt => (
            FigureKind::ClusterEncrypt,
            "Aggregate encryption against nodes (cluster study, Figure 3)",
        ),
        Direction::Decrypt => (
            FigureKind::ClusterDecrypt,
            "Aggregate decryption against nodes (cluster study, Figure 4)",
        ),
    };
    let mut fig = Figure::new(
        kind,
        title,
        Axis::new("nodes", "", Scale::Linear),
        Axis::new("aggregate throughput", "MiB/s", Scale::Linear),
    );
    fig.series = set.finish();
    if fig.series.iter().all(|s| s.points.is_empty()) {
        // Lines alone, with nothing measured against them, are no figure.
        levels.clear();
    }
    fig.levels = levels;
    fig.notes = notes;
    fig
}

/// `serial`, `4 threads`, `3 nodes x 4 threads`.
pub fn configuration(nodes: usize, threads: usize) -> String {
    match (nodes, threads) {
        (1, 1) => "serial".into(),
        (1, t) => format!("{t} threads"),
        (n, t) => format!("{n} nodes x {t} threads"),
    }
}

/// `1 board x 4 threads`, `3 boards x 4 threads`.
pub fn boards(ranks: usize, threads: usize) -> String {
    let s = if ranks == 1 { "" } else { "s" };
    format!("{ranks} board{s} x {threads} threads")
}

fn size_name(bytes: f64) -> String {
    format!("{} MB", format_short(bytes / MB))
}

fn speedup(by_size: bool, results: &[Results], refs: &ReferenceData) -> Figure {
    let mut set = SeriesSet::default();
    let several = results
        .iter()
        .filter(|r| !r.report.speedup.is_empty())
        .count()
        > 1;
    for r in results {
        for row in &r.report.speedup {
            if row.nodes == 1 && row.threads == 1 {
                continue; // the baseline itself: speedup 1 by definition
            }
            let config = configuration(row.nodes, row.threads);
            let who = if several {
                format!("{} ", r.label)
            } else {
                String::new()
            };
            let (name, x) = if by_size {
                (
                    format!("{who}{config}, {} rounds", row.rounds),
                    row.file_bytes as f64 / MB,
                )
            } else {
                (
                    format!("{who}{config}, {}", size_name(row.file_bytes as f64)),
                    f64::from(row.rounds),
                )
            };
            set.push(name, Origin::Measured, (x, row.speedup()));
        }
    }
    let mut levels = Vec::new();
    let mut notes = Vec::new();
    for t in refs.tea.iter().filter(|t| t.baseline == "serial") {
        let config = format!("{} ({})", t.build, boards(t.ranks, t.threads_per_rank));
        match (t.rounds, t.file_bytes) {
            (Some(rounds), Some(bytes)) => {
                let (name, x) = if by_size {
                    (
                        format!("{config}, {rounds} rounds (published)"),
                        bytes as f64 / MB,
                    )
                } else {
                    (
                        format!("{config}, {} (published)", size_name(bytes as f64)),
                        f64::from(rounds),
                    )
                };
                set.push(name, Origin::Published, (x, t.speedup));
            }
            _ => levels.push(Level {
                name: format!("{config} (published)"),
                value: t.speedup,
                group: t.build.clone(),
                system: t.build.clone(),
            }),
        }
        add_note(&mut notes, &t.source);
    }
    for t in refs.tea.iter().filter(|t| t.baseline != "serial") {
        notes.push(format!(
            "Published: {} build about {}x the {} build ({})",
            t.build,
            format_value(t.speedup),
            t.baseline,
            t.source
        ));
    }
    let (kind, title, x) = if by_size {
        (
            FigureKind::SpeedupSize,
            "Speedup over the serial run against file size (TEA study)",
            Axis::new("file size", "MB", Scale::Log),
        )
    } else {
        (
            FigureKind::SpeedupRounds,
            "Speedup over the serial run against rounds (TEA study)",
            Axis::new("rounds", "", Scale::Log),
        )
    };
    let mut fig = Figure::new(kind, title, x, Axis::new("speedup", "x", Scale::Linear));
    fig.series = set.finish();
    fig.levels = levels;
    fig.notes = notes;
    fig
}

/// The algorithm a seed-002 cipher name means (`3DES`, `ChaCha20`).
fn algorithm_of(name: &str) -> Option<Algorithm> {
    Algorithm::from_name(name)
}

fn file_times(results: &[Results], refs: &ReferenceData) -> Figure {
    let mut set = SeriesSet::default();
    let mut algorithms: Vec<Algorithm> = Vec::new();
    let several = results
        .iter()
        .filter(|r| !r.report.files.is_empty())
        .count()
        > 1;
    for r in results {
        for row in &r.report.files {
            if !algorithms.contains(&row.algorithm) {
                algorithms.push(row.algorithm);
            }
            let who = if several {
                format!("{} ", r.label)
            } else {
                String::new()
            };
            let threads = if row.threads > 1 {
                format!(", {} threads", row.threads)
            } else {
                String::new()
            };
            set.push(
                format!("{who}{}{threads}", row_name(&row.cipher, row.key_bits)),
                Origin::Measured,
                (row.file_bytes as f64 / MB, row.encrypt_s),
            );
        }
    }
    let mut notes = Vec::new();
    for f in &refs.files {
        // Only the algorithms measured here, when there are any.
        let same = algorithm_of(&f.cipher).is_some_and(|a| algorithms.contains(&a));
        if !algorithms.is_empty() && !same {
            continue;
        }
        set.push(
            format!("{} {} {} (published)", f.device, f.mode, f.cipher),
            Origin::Published,
            (f.file_mb, f.seconds),
        );
        add_note(&mut notes, &f.source);
    }
    let mut fig = Figure::new(
        FigureKind::FileTimes,
        "Seconds to encrypt a file against its size (IoT study)",
        Axis::new("file size", "MB", Scale::Log),
        Axis::new("time to encrypt", "s", Scale::Log),
    );
    fig.series = set.finish();
    fig.notes = notes;
    fig
}

fn hpl(results: &[Results], refs: &ReferenceData) -> Figure {
    let mut set = SeriesSet::default();
    let mut notes = Vec::new();
    for r in results {
        for h in &r.report.hpl {
            let name = if h.passed {
                r.label.clone()
            } else {
                format!("{} (residual check failed)", r.label)
            };
            set.push(name, Origin::Measured, (h.nodes as f64, h.gflops));
        }
    }
    // A family is a machine and its clusters ("Raspberry Pi 3 B+" and its cluster):
    // several node counts make a curve, a single machine a line to beat.
    let family = |s: &str| s.trim_end_matches(" cluster").to_string();
    let mut levels = Vec::new();
    for g in &refs.hpl {
        let Some(gflops) = g.gflops else {
            notes.push(format!(
                "{} on {} nodes: no number printed ({})",
                g.system, g.nodes, g.source
            ));
            continue;
        };
        let fam = family(&g.system);
        let curve = refs
            .hpl
            .iter()
            .filter(|o| family(&o.system) == fam && o.gflops.is_some())
            .count()
            > 1;
        if curve {
            set.push(
                format!("{fam} (published)"),
                Origin::Published,
                (g.nodes as f64, gflops),
            );
        } else {
            levels.push(Level {
                name: g.system.clone(),
                value: gflops,
                group: g.system.clone(),
                system: g.system.clone(),
            });
        }
        add_note(&mut notes, &g.source);
    }
    let mut fig = Figure::new(
        FigureKind::Hpl,
        "HPL GFLOPS against nodes (cluster study, Figure 2)",
        Axis::new("nodes", "", Scale::Linear),
        Axis::new("HPL", "GFLOPS", Scale::Linear),
    );
    fig.series = set.finish();
    fig.levels = levels;
    fig.notes = notes;
    fig
}

fn system_name(system: &str, nodes: usize) -> String {
    if nodes > 1 {
        format!("{system} ({nodes} nodes)")
    } else {
        system.to_string()
    }
}

/// Bars in categories: (category, series name, origin, value).
fn bars(
    kind: FigureKind,
    title: &str,
    y: Axis,
    items: Vec<(String, String, Origin, f64)>,
) -> Figure {
    let mut categories: Vec<String> = Vec::new();
    for (c, ..) in &items {
        if !categories.contains(c) {
            categories.push(c.clone());
        }
    }
    let mut set = SeriesSet::default();
    for (c, name, origin, v) in items {
        let i = categories
            .iter()
            .position(|x| *x == c)
            .expect("added above");
        set.push(name, origin, (i as f64, v));
    }
    let mut fig = Figure::new(
        kind,
        title,
        Axis::new("system: workload", "", Scale::Categories(categories)),
        y,
    );
    fig.series = set.finish();
    fig
}

fn power(results: &[Results], refs: &ReferenceData) -> Figure {
    let mut items = Vec::new();
    for r in results {
        for p in &r.report.power {
            let source = serde_json::to_value(p.source)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            items.push((
                format!("{}: {}", r.label, p.workload),
                format!("measured ({source})"),
                Origin::Measured,
                p.watts,
            ));
        }
    }
    let mut notes = Vec::new();
    for p in &refs.power {
        items.push((
            format!("{}: {}", system_name(&p.system, p.nodes), p.workload),
            "published".into(),
            Origin::Published,
            p.watts,
        ));
        add_note(&mut notes, &p.source);
    }
    let mut fig = bars(
        FigureKind::Power,
        "Power drawn per system and workload",
        Axis::new("power", "W", Scale::Linear),
        items,
    );
    fig.notes = notes;
    fig
}

fn efficiency(results: &[Results], refs: &ReferenceData) -> Figure {
    let mut items = Vec::new();
    for r in results {
        for p in &r.report.power {
            if let Some(mib_s) = p.mib_s.filter(|_| p.watts > 0.0) {
                items.push((
                    format!("{}: {}", r.label, p.workload),
                    "measured".into(),
                    Origin::Measured,
                    mib_s / p.watts,
                ));
            }
        }
    }
    // The study's systems: each throughput figure over the peak watts of the
    // same system with the same nodes during the cryptsetup benchmarks.
    let mut notes = Vec::new();
    for p in refs
        .power
        .iter()
        .filter(|p| p.workload == "cryptsetup" && p.watts > 0.0)
    {
        let base = p.system.split(" (").next().unwrap_or(&p.system);
        for t in refs
            .throughput
            .iter()
            .filter(|t| t.system == base && t.nodes == p.nodes)
        {
            items.push((
                format!(
                    "{} {}: {} {}",
                    system_name(&p.system, p.nodes),
                    format_short(p.watts) + " W",
                    row_name(&t.cipher, t.key_bits),
                    t.direction.name()
                ),
                "published".into(),
                Origin::Published,
                t.mib_s / p.watts,
            ));
            add_note(&mut notes, &t.source);
            add_note(&mut notes, &p.source);
        }
    }
    let mut fig = bars(
        FigureKind::Efficiency,
        "Throughput per watt",
        Axis::new("efficiency", "MiB/s per W", Scale::Linear),
        items,
    );
    fig.notes = notes;
    fig
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::reference::{find, load};
    use clustercrypt_bench::machine::Machine;
    use clustercrypt_bench::report::{
        CipherRow, ClusterSummary, FileRow, HplResult, PowerReading, PowerSource, RunFigures,
        Settings, SpeedupRow,
    };
    use clustercrypt_catalogue::{CipherSpec, Mode};

    pub(crate) fn machine(name: &str) -> Machine {
        Machine {
            hostname: name.into(),
            cpu_model: "Test CPU".into(),
            cores: 4,
            memory_bytes: 1 << 30,
            kernel: "6.1".into(),
            arch: "aarch64".into(),
            cpu_features: vec!["neon".into()],
            cpu_features_detected: Vec::new(),
            cpu_features_disabled: Vec::new(),
            cpu_tier: String::new(),
            ..Default::default()
        }
    }

    pub(crate) fn empty(name: &str) -> Report {
        Report::empty(
            machine(name),
            Settings {
                min_time_s: 1.0,
                buffer_size: 1 << 20,
                request_size: 1 << 16,
                runs: 1,
                threads: 1,
            },
        )
    }

    pub(crate) fn cipher_row(spec: &str, bits: usize, enc: f64, dec: f64) -> CipherRow {
        let spec = CipherSpec::parse(spec, Some(bits)).unwrap();
        let mut row = CipherRow::from_runs(
            &spec,
            1,
            "soft",
            &[RunFigures {
                aggregate: (enc, dec),
                workers: vec![(enc, dec)],
            }],
        )
        .unwrap();
        // A 1500 MHz core.
        row.cpu_mhz = Some(1500.0);
        row.encrypt_cycles_per_byte = Some(1500e6 / (enc * 1_048_576.0));
        row.decrypt_cycles_per_byte = Some(1500e6 / (dec * 1_048_576.0));
        row
    }

    #[test]
    fn cycles_per_byte_per_machine_and_throttled_rows_noted() {
        let mut pi = full("pi");
        pi.ciphers[1].throttled = true;
        pi.ciphers[1].clock_min_mhz = Some(1200.0);
        pi.ciphers[1].clock_max_mhz = Some(1400.0);
        pi.machine.clock = Some(clustercrypt_bench::platform::ClockRecord {
            mhz: 1500.0,
            source: "measured".into(),
            measured_mhz: Some(1500.0),
            scaling_cur_mhz: None,
            max_mhz: None,
            note: None,
        });
        let mut old = full("old");
        for row in &mut old.ciphers {
            row.encrypt_cycles_per_byte = None;
            row.decrypt_cycles_per_byte = None;
        }
        let res = vec![
            Results {
                label: "pi".into(),
                report: pi,
            },
            Results {
                label: "old".into(),
                report: old,
            },
        ];
        let f = build(FigureKind::CyclesPerByte, &res, &ReferenceData::default()).unwrap();
        let enc = f.series.iter().find(|s| s.name == "pi encrypt").unwrap();
        // aes-cbc at 50 MiB/s on 1500 MHz: 28.6 c/B.
        assert!((enc.points[0].1 - 1500e6 / (50.0 * 1_048_576.0)).abs() < 1e-9);
        assert!(f.series.iter().all(|s| !s.name.starts_with("old")));
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains("twofish-cbc 256b") && n.contains("1200-1400"))
        );
        assert!(
            f.notes
                .iter()
                .any(|n| n == "pi: cycles per byte at 1500 MHz (measured)")
        );
        // Results from before the clock was measured have no such figure.
        let old_only = vec![res[1].clone()];
        assert!(
            build(
                FigureKind::CyclesPerByte,
                &old_only,
                &ReferenceData::default()
            )
            .is_none()
        );
    }

    fn cluster_row(cipher: &str, bits: usize, nodes: usize, enc: f64) -> ClusterRow {
        ClusterRow {
            cipher: cipher.into(),
            key_bits: bits,
            nodes,
            encrypt_mib_s: enc,
            decrypt_mib_s: enc * 2.0,
            start_skew_ms: 0.1,
            per_node: Vec::new(),
        }
    }

    /// A report with something in every section.
    pub(crate) fn full(name: &str) -> Report {
        let mut r = empty(name);
        r.ciphers = vec![
            cipher_row("aes-cbc", 128, 50.0, 60.0),
            cipher_row("twofish-cbc", 256, 40.0, 45.0),
        ];
        r.cluster = Some(ClusterSummary {
            ranks: 3,
            rows: vec![cluster_row("aes-cbc", 128, 3, 150.0)],
            sweep: (1..=3)
                .flat_map(|n| {
                    [
                        cluster_row("aes-cbc", 128, n, 50.0 * n as f64),
                        cluster_row("twofish-cbc", 256, n, 40.0 * n as f64),
                    ]
                })
                .collect(),
        });
        r.files = [1_000_000u64, 128_000_000]
            .into_iter()
            .map(|bytes| FileRow {
                cipher: "aes-cbc".into(),
                algorithm: Algorithm::Aes,
                mode: Mode::Cbc,
                key_bits: 128,
                file_bytes: bytes,
                threads: 1,
                encrypt_s: bytes as f64 / 50e6,
                decrypt_s: bytes as f64 / 60e6,
                cpu_percent: 99.0,
                peak_memory_bytes: 1 << 20,
                peak_rss_bytes: 1 << 22,
                peak_memory_reset: true,
                insecure: false,
            })
            .collect();
        r.hpl = vec![HplResult {
            gflops: 5.0,
            n: 10_000,
            nb: 128,
            p: 2,
            q: 2,
            processes: 4,
            nodes: 1,
            seconds: 60.0,
            passed: true,
            program: "xhpl".into(),
        }];
        r.power = vec![PowerReading {
            workload: "bench aes-cbc 128b".into(),
            watts: 5.0,
            source: PowerSource::Meter,
            mib_s: Some(50.0),
            gflops: None,
            cost_usd: Some(80.0),
        }];
        for rounds in [1, 32] {
            for bytes in [240_000u64, 24_000_000] {
                for (nodes, threads, seconds) in [(1, 1, 8.0), (1, 4, 2.0), (3, 4, 1.0)] {
                    r.speedup.push(SpeedupRow {
                        cipher: "tea-ecb".into(),
                        rounds,
                        file_bytes: bytes,
                        nodes,
                        threads,
                        seconds,
                        baseline_seconds: 8.0,
                    });
                }
            }
        }
        r
    }

    pub(crate) fn results(name: &str) -> Vec<Results> {
        vec![Results {
            label: name.into(),
            report: full(name),
        }]
    }

    #[test]
    fn sweep_gives_one_point_per_node_count_and_reference_lines() {
        let refs = load(&["pi3b-cluster".into(), "nuc".into(), "mrd".into()]).unwrap();
        let fig = build(FigureKind::ClusterEncrypt, &results("pis"), &refs).unwrap();
        let aes = fig.series("aes-cbc 128b").unwrap();
        assert_eq!(aes.points, vec![(1.0, 50.0), (2.0, 100.0), (3.0, 150.0)]);
        assert_eq!(aes.origin, Origin::Measured);
        // Only the rows measured here are compared: aes-cbc 128b and twofish-cbc 256b.
        let published = fig
            .series("Raspberry Pi 3 B+ cluster aes-cbc 128b (published)")
            .unwrap();
        assert_eq!(published.points, vec![(20.0, 1007.0)]);
        assert!(fig.series.iter().all(|s| !s.name.contains("serpent")));
        let names: Vec<&str> = fig.levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "NUC twofish-cbc 256b",
                "NUC aes-cbc 128b",
                "MRD twofish-cbc 256b",
                "MRD aes-cbc 128b"
            ]
        );
        assert!(fig.notes.iter().any(|n| n.contains("section IV-A")));
        // Decryption is its own figure, from the decryption figures.
        let dec = build(FigureKind::ClusterDecrypt, &results("pis"), &refs).unwrap();
        assert_eq!(dec.series("aes-cbc 128b").unwrap().points[2], (3.0, 300.0));
        assert!(dec.levels.iter().all(|l| l.name.contains("twofish")));
    }

    #[test]
    fn rows_without_sweep_and_published_only() {
        let mut r = full("x");
        r.cluster.as_mut().unwrap().sweep.clear();
        let res = vec![Results {
            label: "x".into(),
            report: r,
        }];
        let fig = build(FigureKind::ClusterEncrypt, &res, &ReferenceData::default()).unwrap();
        assert_eq!(
            fig.series("aes-cbc 128b").unwrap().points,
            vec![(3.0, 150.0)]
        );
        // No results: the published cluster alone still makes Figure 3.
        let refs = find("cluster-study").unwrap().data().unwrap();
        let fig = build(FigureKind::ClusterEncrypt, &[], &refs).unwrap();
        assert_eq!(fig.series.len(), 6);
        assert_eq!(fig.levels.len(), 12);
        // Colours follow the cipher row: the Pi cluster's AES point and the NUC's AES line.
        let pi = fig
            .series("Raspberry Pi 3 B+ cluster aes-cbc 128b (published)")
            .unwrap();
        let nuc = fig
            .levels
            .iter()
            .find(|l| l.name == "NUC aes-cbc 128b")
            .unwrap();
        assert_eq!(pi.group, nuc.group);
        // Listings add lines only for the rows the cluster figures have.
        let mut more = refs.clone();
        more.merge(&find("laptop-cryptsetup").unwrap().data().unwrap());
        let fig = build(FigureKind::ClusterEncrypt, &[], &more).unwrap();
        assert_eq!(fig.levels.len(), 18);
        assert!(fig.levels.iter().all(|l| !l.name.contains("xts")));
        let table = fig.table();
        let last = table.rows.last().unwrap();
        assert_eq!(last[0], "laptop twofish-cbc 256b");
        assert_eq!(last.last().unwrap(), "281.3");
        assert!(last[1..last.len() - 1].iter().all(String::is_empty));
        // Nothing at all: no figure.
        assert!(build(FigureKind::ClusterEncrypt, &[], &ReferenceData::default()).is_none());
    }

    #[test]
    fn throughput_bars_follow_measured_rows() {
        let refs = find("pi4-cryptsetup").unwrap().data().unwrap();
        let fig = build(FigureKind::Throughput, &results("me"), &refs).unwrap();
        assert_eq!(
            fig.x.scale,
            Scale::Categories(vec!["aes-cbc 128b".into(), "twofish-cbc 256b".into()])
        );
        assert_eq!(
            fig.series("me encrypt").unwrap().points,
            vec![(0.0, 50.0), (1.0, 40.0)]
        );
        assert_eq!(
            fig.series("Raspberry Pi 4 decrypt (published)")
                .unwrap()
                .points,
            vec![(0.0, 80.9), (1.0, 57.8)]
        );
        let table = fig.table();
        assert_eq!(table.columns.len(), 1 + fig.series.len());
        assert_eq!(table.rows[0][0], "aes-cbc 128b");
        assert_eq!(table.rows[0][1], "50.00");
        // References alone choose their own rows.
        let fig = build(FigureKind::Throughput, &[], &refs).unwrap();
        match &fig.x.scale {
            Scale::Categories(c) => assert_eq!(c.len(), 12),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn speedup_against_size_and_rounds() {
        let refs = find("tea-cluster").unwrap().data().unwrap();
        let res = results("pis");
        let size = build(FigureKind::SpeedupSize, &res, &refs).unwrap();
        let hybrid = size.series("3 nodes x 4 threads, 32 rounds").unwrap();
        assert_eq!(hybrid.points, vec![(0.24, 8.0), (24.0, 8.0)]);
        assert_eq!(
            size.series("hybrid (3 boards x 4 threads), 32 rounds (published)")
                .unwrap()
                .points,
            vec![(240.0, 6.0)]
        );
        assert_eq!(size.levels.len(), 1);
        assert_eq!(size.levels[0].value, 4.0);
        assert!(size.series.iter().all(|s| !s.name.starts_with("serial")));
        let rounds = build(FigureKind::SpeedupRounds, &res, &refs).unwrap();
        let threads = rounds.series("4 threads, 24 MB").unwrap();
        assert_eq!(threads.points, vec![(1.0, 4.0), (32.0, 4.0)]);
        assert!(rounds.notes.iter().any(|n| n.contains("openmp build")));
    }

    #[test]
    fn file_times_hpl_power() {
        let refs = load(&[
            "iot-pi3".into(),
            "iot-bbb".into(),
            "hpl".into(),
            "power".into(),
            "cluster-study".into(),
        ])
        .unwrap();
        let res = results("me");
        let files = build(FigureKind::FileTimes, &res, &refs).unwrap();
        assert_eq!(
            files.series("aes-cbc 128b").unwrap().points,
            vec![(1.0, 0.02), (128.0, 2.56)]
        );
        // AES was measured here, so only the studies' AES rows join it.
        let published: Vec<&str> = files
            .series
            .iter()
            .filter(|s| s.origin == Origin::Published)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            published,
            [
                "Raspberry Pi 3 CBC AES (published)",
                "BeagleBone Black ECB AES (published)"
            ]
        );

        let hpl = build(FigureKind::Hpl, &res, &refs).unwrap();
        assert_eq!(hpl.series("me").unwrap().points, vec![(1.0, 5.0)]);
        let pi = hpl.series("Raspberry Pi 3 B+ (published)").unwrap();
        assert_eq!(pi.points, vec![(1.0, 3.4), (6.0, 15.72), (20.0, 44.1)]);
        let levels: Vec<_> = hpl
            .levels
            .iter()
            .map(|l| (l.name.as_str(), l.value))
            .collect();
        assert_eq!(levels, [("MRD", 20.48), ("NUC", 16.51)]);
        assert!(hpl.notes.iter().any(|n| n.contains("no number printed")));

        let power = build(FigureKind::Power, &res, &refs).unwrap();
        assert_eq!(
            power.series("measured (meter)").unwrap().points,
            vec![(0.0, 5.0)]
        );
        let eff = build(FigureKind::Efficiency, &res, &refs).unwrap();
        assert_eq!(eff.series("measured").unwrap().points, vec![(0.0, 10.0)]);
        let Scale::Categories(c) = &eff.x.scale else {
            panic!()
        };
        let i = c
            .iter()
            .position(|c| c == "NUC 42 W: aes-cbc 128b encrypt")
            .unwrap();
        let nuc = eff.series("published").unwrap();
        let (_, v) = nuc.points.iter().find(|p| p.0 == i as f64).unwrap();
        assert!((v - 977.0 / 42.0).abs() < 1e-9);
        // The 6-node cluster on its own supplies: Twofish over 37.6 W.
        assert!(c.iter().any(|c| {
            c.starts_with("Raspberry Pi 3 B+ cluster (6 nodes) 37.6 W: twofish-cbc 128b encrypt")
        }));
    }

    #[test]
    fn every_kind_has_a_name_and_empty_inputs_give_nothing() {
        for k in FigureKind::ALL {
            assert_eq!(FigureKind::from_name(k.name()), Some(k));
            assert!(!k.needs().is_empty());
        }
        let none = vec![Results {
            label: "x".into(),
            report: empty("x"),
        }];
        assert!(build_all(&none, &ReferenceData::default()).is_empty());
        assert_eq!(
            build_all(&results("x"), &ReferenceData::default()).len(),
            10
        );
    }

    #[test]
    fn values_format_for_reading() {
        assert_eq!(format_value(1167.2), "1167.2");
        assert_eq!(format_value(3.4), "3.40");
        assert_eq!(format_value(0.235922), "0.2359");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_short(24.0), "24");
        assert_eq!(format_short(0.24), "0.24");
        assert_eq!(format_short(1167.2), "1167.2");
    }
}
