//! The published figures of the seed studies, shipped with the tool so that a
//! report or `clustercrypt compare` can set this machine next to them.
//!
//! The files in `data/` are copies of the project's reference tables (CSV as
//! printed in the studies, the two raw `cryptsetup benchmark` listings of seed 003)
//! and are compiled in. Each CSV parses into a row type that mirrors its columns
//! exactly (so it round-trips), and then into typed records that carry their
//! [`Source`]: the seed document, the table or section, and any note such as an
//! OCR-garbled cell. Named [`ReferenceSet`]s select the records a comparison needs.

use std::sync::OnceLock;

use clustercrypt_bench::import::parse_cryptsetup;
use clustercrypt_bench::report::Report;
use serde::{Deserialize, Serialize};

/// Seed document of the Raspberry Pi cluster study (Hawthorne et al.).
pub const DOC_CLUSTER: &str = "000_9a184237f0807cfc.txt";
/// Seed document of the TEA cluster study.
pub const DOC_TEA: &str = "001_45ca9799ab52d4ef.txt";
/// Seed document of the IoT file-size study (Raspberry Pi 3, BeagleBone Black).
pub const DOC_IOT: &str = "002_fde9d7f18c7ee294.txt";
/// Seed document with the two `cryptsetup benchmark` listings.
pub const DOC_LISTINGS: &str = "003_562dd0b3f53c5db2.txt";

/// The embedded data files, by name: used for the tables and for the round-trip tests.
pub mod files {
    /// NUC, MRD and Pi-cluster CBC throughput (000, section IV-A).
    pub const CLUSTER_CBC: &str = include_str!("../data/cluster_cbc.csv");
    /// Single-board computers, AES and Twofish CBC (000, Table III).
    pub const SBC_TABLE3: &str = include_str!("../data/sbc_table3.csv");
    /// HPL GFLOPS (000, section IV).
    pub const HPL: &str = include_str!("../data/hpl.csv");
    /// Power in watts (000, Table II and section IV-B).
    pub const POWER: &str = include_str!("../data/power.csv");
    /// The reference machines (000, Table I).
    pub const SYSTEMS: &str = include_str!("../data/systems.csv");
    /// Seconds to encrypt files of 1-128 MB (002, Tables III-VIII).
    pub const IOT_FILE_TIMES: &str = include_str!("../data/iot_file_times.csv");
    /// Headline speedups of the TEA study (001), taken from `tea_cluster.md`.
    pub const TEA_CLUSTER: &str = include_str!("../data/tea_cluster.csv");
    /// The TEA study's setup, in words.
    pub const TEA_CLUSTER_NOTES: &str = include_str!("../data/tea_cluster.md");
    /// `cryptsetup benchmark` on a Raspberry Pi 4 (003).
    pub const CRYPTSETUP_PI4: &str = include_str!("../data/cryptsetup_pi4.txt");
    /// `cryptsetup benchmark` on a laptop (003).
    pub const CRYPTSETUP_LAPTOP: &str = include_str!("../data/cryptsetup_laptop.txt");
}

/// Errors reading reference data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// An embedded CSV file did not parse (a bug in the shipped data).
    #[error("reference data {file}: {source}")]
    Csv {
        /// Which file.
        file: &'static str,
        /// The parser's error.
        #[source]
        source: csv::Error,
    },
    /// A `cryptsetup benchmark` listing did not parse.
    #[error("reference listing {file}: {message}")]
    Listing {
        /// Which file.
        file: &'static str,
        /// What was wrong.
        message: String,
    },
    /// No reference set has this name.
    #[error("no reference set named '{0}' (see `clustercrypt compare --list-refs`)")]
    UnknownSet(String),
}

/// Where a published figure comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Source {
    /// The seed document (a file of the project's `shared/seeds/`).
    pub document: String,
    /// Table or section within it.
    pub location: String,
    /// A remark on the figure (OCR-garbled cell, read off a plot, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Source {
    fn new(document: &str, location: &str, note: &Option<String>) -> Source {
        Source {
            document: document.to_string(),
            location: location.to_string(),
            note: note.clone().filter(|n| !n.trim().is_empty()),
        }
    }

    /// `document, location` (without the note).
    pub fn citation(&self) -> String {
        format!("{}, {}", self.document, self.location)
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.citation())?;
        if let Some(note) = &self.note {
            write!(f, " ({note})")?;
        }
        Ok(())
    }
}

/// Encryption or decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Encryption.
    Encrypt,
    /// Decryption.
    Decrypt,
}

impl Direction {
    /// `encrypt` or `decrypt`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Encrypt => "encrypt",
            Direction::Decrypt => "decrypt",
        }
    }
}

// ---- Rows: one type per CSV file, field for field as in its header. ----

/// A row of `cluster_cbc.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterCbcRow {
    /// System as the file names it.
    pub system: String,
    /// Nodes of the system that ran.
    pub nodes: usize,
    /// cryptsetup's row label (`aes-cbc`).
    pub cipher: String,
    /// Key bits.
    pub key_bits: usize,
    /// Which direction.
    pub direction: Direction,
    /// MiB/s.
    pub mib_per_s: f64,
    /// Remark.
    pub note: Option<String>,
}

/// A row of `sbc_table3.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbcRow {
    /// The board.
    pub board: String,
    /// Key bits.
    pub key_bits: usize,
    /// AES-CBC encryption MiB/s.
    pub aes_encrypt_mib_s: Option<f64>,
    /// AES-CBC decryption MiB/s.
    pub aes_decrypt_mib_s: Option<f64>,
    /// Twofish-CBC encryption MiB/s (none where the kernel had no module).
    pub twofish_encrypt_mib_s: Option<f64>,
    /// Twofish-CBC decryption MiB/s.
    pub twofish_decrypt_mib_s: Option<f64>,
    /// Core clock, GHz.
    pub core_ghz: Option<f64>,
    /// Remark.
    pub note: Option<String>,
}

/// A row of `hpl.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HplRow {
    /// System.
    pub system: String,
    /// Nodes.
    pub nodes: usize,
    /// GFLOPS, when a number was printed.
    pub gflops: Option<f64>,
    /// Remark.
    pub note: Option<String>,
}

/// A row of `power.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerRow {
    /// System.
    pub system: String,
    /// Nodes.
    pub nodes: usize,
    /// Idle watts.
    pub idle_w: Option<f64>,
    /// Peak watts during the cryptsetup benchmarks.
    pub cryptsetup_w: Option<f64>,
    /// Peak watts during HPL.
    pub hpl_w: Option<f64>,
    /// Remark.
    pub note: Option<String>,
}

/// A row of `systems.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemRow {
    /// System.
    pub system: String,
    /// Processor.
    pub cpu: String,
    /// Memory, GB.
    pub memory_gb: f64,
    /// Whether the CPU has AES instructions.
    pub aes_instructions: bool,
    /// Cores as printed (`8 (16 HT)`).
    pub cores: String,
    /// Cost, US dollars.
    pub cost_usd: f64,
}

/// A row of `iot_file_times.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileTimeRow {
    /// Board.
    pub device: String,
    /// `ECB`, `CBC` or `stream`.
    pub mode: String,
    /// File size in MB as printed.
    pub file_mb: f64,
    /// Cipher as printed (`3DES`).
    pub cipher: String,
    /// Seconds to encrypt.
    pub seconds: f64,
    /// Remark.
    pub note: Option<String>,
}

/// A row of `tea_cluster.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeaRow {
    /// `openmp` (4 threads on one board) or `hybrid` (MPI + OpenMP on three).
    pub build: String,
    /// MPI ranks (boards).
    pub ranks: usize,
    /// Threads per rank.
    pub threads_per_rank: usize,
    /// Rounds, when the study says.
    pub rounds: Option<u32>,
    /// File size in bytes, when the study says.
    pub file_bytes: Option<u64>,
    /// The build the speedup is relative to (`serial`, `openmp`).
    pub baseline: String,
    /// Speedup (baseline seconds over this build's).
    pub speedup: f64,
    /// Remark.
    pub note: Option<String>,
}

/// Parses CSV text into rows of `T`.
pub fn parse_csv<T: for<'de> Deserialize<'de>>(
    file: &'static str,
    text: &str,
) -> Result<Vec<T>, ReferenceError> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|source| ReferenceError::Csv { file, source })
}

/// Writes rows back as CSV text (header first).
pub fn write_csv<T: Serialize>(rows: &[T]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("csv writes UTF-8"))
}

/// Reads a `cryptsetup benchmark` listing with the bench crate's importer. The
/// listings were copied from a blog post with the shell prompt line
/// (`$ cryptsetup benchmark`), which is not part of cryptsetup's output: dropped.
pub fn parse_listing(file: &'static str, text: &str) -> Result<Report, ReferenceError> {
    let output: String = text
        .lines()
        .filter(|l| !l.starts_with("$ "))
        .map(|l| format!("{l}\n"))
        .collect();
    parse_cryptsetup(&output).map_err(|e| ReferenceError::Listing {
        file,
        message: e.to_string(),
    })
}

// ---- Typed records, each with its source. ----

/// A published throughput figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// System (`NUC`, `Raspberry Pi 3 B+ cluster`, `Raspberry Pi 4 B`).
    pub system: String,
    /// Nodes that ran (1 for a single machine).
    pub nodes: usize,
    /// cryptsetup's row label (`aes-cbc`).
    pub cipher: String,
    /// Key bits as cryptsetup counts them.
    pub key_bits: usize,
    /// Direction.
    pub direction: Direction,
    /// MiB/s.
    pub mib_s: f64,
    /// Where it was printed.
    pub source: Source,
}

/// A published time to encrypt one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileTime {
    /// Board.
    pub device: String,
    /// `ECB`, `CBC` or `stream`.
    pub mode: String,
    /// Cipher as printed.
    pub cipher: String,
    /// File size, MB as printed.
    pub file_mb: f64,
    /// Seconds.
    pub seconds: f64,
    /// Where it was printed.
    pub source: Source,
}

/// A published HPL figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gflops {
    /// System.
    pub system: String,
    /// Nodes.
    pub nodes: usize,
    /// GFLOPS; `None` where the study gave words, not a number.
    pub gflops: Option<f64>,
    /// Where it was printed.
    pub source: Source,
}

/// A published power reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Power {
    /// System.
    pub system: String,
    /// Nodes.
    pub nodes: usize,
    /// `idle`, `cryptsetup` or `hpl`.
    pub workload: String,
    /// Watts.
    pub watts: f64,
    /// Where it was printed.
    pub source: Source,
}

/// A reference machine (Table I).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemInfo {
    /// System.
    pub system: String,
    /// Processor.
    pub cpu: String,
    /// Memory, GB.
    pub memory_gb: f64,
    /// AES instructions.
    pub aes_instructions: bool,
    /// Cores as printed.
    pub cores: String,
    /// Cost, US dollars.
    pub cost_usd: f64,
    /// Where it was printed.
    pub source: Source,
}

/// A published speedup of the TEA study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeaSpeedup {
    /// `openmp` or `hybrid`.
    pub build: String,
    /// Ranks (boards).
    pub ranks: usize,
    /// Threads per rank.
    pub threads_per_rank: usize,
    /// Rounds, when given.
    pub rounds: Option<u32>,
    /// File size in bytes, when given.
    pub file_bytes: Option<u64>,
    /// `serial` or `openmp`.
    pub baseline: String,
    /// Speedup over the baseline.
    pub speedup: f64,
    /// Where it was printed.
    pub source: Source,
}

/// A selection of published figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReferenceData {
    /// Throughput figures.
    pub throughput: Vec<Throughput>,
    /// File times (seed 002).
    pub files: Vec<FileTime>,
    /// HPL figures.
    pub hpl: Vec<Gflops>,
    /// Power readings.
    pub power: Vec<Power>,
    /// Reference machines.
    pub systems: Vec<SystemInfo>,
    /// TEA speedups.
    pub tea: Vec<TeaSpeedup>,
}

fn push_unique<T: PartialEq + Clone>(into: &mut Vec<T>, from: &[T]) {
    for item in from {
        if !into.contains(item) {
            into.push(item.clone());
        }
    }
}

impl ReferenceData {
    /// Adds the records of `other` that are not here yet (sets overlap: `nuc` and `hpl`).
    pub fn merge(&mut self, other: &ReferenceData) {
        push_unique(&mut self.throughput, &other.throughput);
        push_unique(&mut self.files, &other.files);
        push_unique(&mut self.hpl, &other.hpl);
        push_unique(&mut self.power, &other.power);
        push_unique(&mut self.systems, &other.systems);
        push_unique(&mut self.tea, &other.tea);
    }

    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        self.throughput.is_empty()
            && self.files.is_empty()
            && self.hpl.is_empty()
            && self.power.is_empty()
            && self.systems.is_empty()
            && self.tea.is_empty()
    }

    /// Every distinct source of the records, in order of first use.
    pub fn sources(&self) -> Vec<Source> {
        let mut all: Vec<Source> = Vec::new();
        let sources = self
            .throughput
            .iter()
            .map(|r| &r.source)
            .chain(self.files.iter().map(|r| &r.source))
            .chain(self.hpl.iter().map(|r| &r.source))
            .chain(self.power.iter().map(|r| &r.source))
            .chain(self.systems.iter().map(|r| &r.source))
            .chain(self.tea.iter().map(|r| &r.source));
        for s in sources {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        all
    }

    fn filter(&self, keep: impl Fn(&str) -> bool) -> ReferenceData {
        ReferenceData {
            throughput: self
                .throughput
                .iter()
                .filter(|r| keep(&r.system))
                .cloned()
                .collect(),
            files: self
                .files
                .iter()
                .filter(|r| keep(&r.device))
                .cloned()
                .collect(),
            hpl: self
                .hpl
                .iter()
                .filter(|r| keep(&r.system))
                .cloned()
                .collect(),
            power: self
                .power
                .iter()
                .filter(|r| keep(&r.system))
                .cloned()
                .collect(),
            systems: self
                .systems
                .iter()
                .filter(|r| keep(&r.system))
                .cloned()
                .collect(),
            tea: Vec::new(),
        }
    }
}

/// The name the cluster study's files use for the Pi cluster in different tables,
/// made one, so that throughput and power of the same system can be joined.
const PI_CLUSTER: &str = "Raspberry Pi 3 B+ cluster";

fn canonical_system(name: &str) -> String {
    if name == "Pi 3 B+ cluster" {
        PI_CLUSTER.to_string()
    } else {
        name.to_string()
    }
}

fn listing_records(
    system: &str,
    file: &'static str,
    text: &str,
) -> Result<Vec<Throughput>, ReferenceError> {
    let source = Source::new(
        DOC_LISTINGS,
        &format!("`cryptsetup benchmark` listing of the {system}"),
        &None,
    );
    let mut out = Vec::new();
    for row in parse_listing(file, text)?.ciphers {
        for (direction, mib_s) in [
            (Direction::Encrypt, row.encrypt_mib_s),
            (Direction::Decrypt, row.decrypt_mib_s),
        ] {
            out.push(Throughput {
                system: system.to_string(),
                nodes: 1,
                cipher: row.cipher.clone(),
                key_bits: row.key_bits,
                direction,
                mib_s,
                source: source.clone(),
            });
        }
    }
    Ok(out)
}

/// Every published figure, parsed once.
#[derive(Debug, Clone, Default)]
pub struct AllData {
    /// Section IV-A figures and Table III boards.
    pub throughput: Vec<Throughput>,
    /// The Pi 4 listing.
    pub pi4: Vec<Throughput>,
    /// The laptop listing.
    pub laptop: Vec<Throughput>,
    /// Seed 002's file times.
    pub files: Vec<FileTime>,
    /// HPL.
    pub hpl: Vec<Gflops>,
    /// Power.
    pub power: Vec<Power>,
    /// Table I.
    pub systems: Vec<SystemInfo>,
    /// TEA speedups.
    pub tea: Vec<TeaSpeedup>,
}

impl AllData {
    /// Parses every embedded file.
    pub fn parse() -> Result<AllData, ReferenceError> {
        let mut all = AllData::default();
        for row in parse_csv::<ClusterCbcRow>("cluster_cbc.csv", files::CLUSTER_CBC)? {
            all.throughput.push(Throughput {
                system: canonical_system(&row.system),
                nodes: row.nodes,
                cipher: row.cipher,
                key_bits: row.key_bits,
                direction: row.direction,
                mib_s: row.mib_per_s,
                source: Source::new(DOC_CLUSTER, "section IV-A", &row.note),
            });
        }
        for row in parse_csv::<SbcRow>("sbc_table3.csv", files::SBC_TABLE3)? {
            let source = Source::new(DOC_CLUSTER, "Table III", &row.note);
            let cells = [
                ("aes-cbc", Direction::Encrypt, row.aes_encrypt_mib_s),
                ("aes-cbc", Direction::Decrypt, row.aes_decrypt_mib_s),
                ("twofish-cbc", Direction::Encrypt, row.twofish_encrypt_mib_s),
                ("twofish-cbc", Direction::Decrypt, row.twofish_decrypt_mib_s),
            ];
            for (cipher, direction, value) in cells {
                if let Some(mib_s) = value {
                    all.throughput.push(Throughput {
                        system: row.board.clone(),
                        nodes: 1,
                        cipher: cipher.into(),
                        key_bits: row.key_bits,
                        direction,
                        mib_s,
                        source: source.clone(),
                    });
                }
            }
        }
        all.pi4 = listing_records(
            "Raspberry Pi 4",
            "cryptsetup_pi4.txt",
            files::CRYPTSETUP_PI4,
        )?;
        all.laptop = listing_records("laptop", "cryptsetup_laptop.txt", files::CRYPTSETUP_LAPTOP)?;
        for row in parse_csv::<FileTimeRow>("iot_file_times.csv", files::IOT_FILE_TIMES)? {
            all.files.push(FileTime {
                device: row.device,
                mode: row.mode,
                cipher: row.cipher,
                file_mb: row.file_mb,
                seconds: row.seconds,
                source: Source::new(DOC_IOT, "Tables III-VIII", &row.note),
            });
        }
        for row in parse_csv::<HplRow>("hpl.csv", files::HPL)? {
            all.hpl.push(Gflops {
                system: canonical_system(&row.system),
                nodes: row.nodes,
                gflops: row.gflops,
                source: Source::new(DOC_CLUSTER, "section IV, Figure 2", &row.note),
            });
        }
        for row in parse_csv::<PowerRow>("power.csv", files::POWER)? {
            let source = Source::new(DOC_CLUSTER, "Table II and section IV-B", &row.note);
            for (workload, value) in [
                ("idle", row.idle_w),
                ("cryptsetup", row.cryptsetup_w),
                ("hpl", row.hpl_w),
            ] {
                if let Some(watts) = value {
                    all.power.push(Power {
                        system: canonical_system(&row.system),
                        nodes: row.nodes,
                        workload: workload.into(),
                        watts,
                        source: source.clone(),
                    });
                }
            }
        }
        for row in parse_csv::<SystemRow>("systems.csv", files::SYSTEMS)? {
            all.systems.push(SystemInfo {
                system: row.system,
                cpu: row.cpu,
                memory_gb: row.memory_gb,
                aes_instructions: row.aes_instructions,
                cores: row.cores,
                cost_usd: row.cost_usd,
                source: Source::new(DOC_CLUSTER, "Table I", &None),
            });
        }
        for row in parse_csv::<TeaRow>("tea_cluster.csv", files::TEA_CLUSTER)? {
            all.tea.push(TeaSpeedup {
                build: row.build,
                ranks: row.ranks,
                threads_per_rank: row.threads_per_rank,
                rounds: row.rounds,
                file_bytes: row.file_bytes,
                baseline: row.baseline,
                speedup: row.speedup,
                source: Source::new(DOC_TEA, "abstract and conclusion", &row.note),
            });
        }
        Ok(all)
    }

    /// The parsed data, shared.
    pub fn get() -> Result<&'static AllData, ReferenceError> {
        static ALL: OnceLock<AllData> = OnceLock::new();
        if let Some(all) = ALL.get() {
            return Ok(all);
        }
        let parsed = AllData::parse()?;
        Ok(ALL.get_or_init(|| parsed))
    }

    fn study(&self) -> ReferenceData {
        ReferenceData {
            throughput: self.throughput.clone(),
            files: self.files.clone(),
            hpl: self.hpl.clone(),
            power: self.power.clone(),
            systems: self.systems.clone(),
            tea: self.tea.clone(),
        }
    }
}

/// A named selection of published figures.
#[derive(Debug, Clone, Copy)]
pub struct ReferenceSet {
    /// Name used on the command line (`pi3b-cluster`).
    pub name: &'static str,
    /// One line on what it holds.
    pub title: &'static str,
    /// The seed document and where in it.
    pub source: &'static str,
    select: fn(&AllData) -> ReferenceData,
}

fn cluster_study_system(name: &str) -> bool {
    name == "NUC" || name == "MRD" || name.starts_with("Raspberry Pi 3 B+")
}

const SETS: &[ReferenceSet] = &[
    ReferenceSet {
        name: "nuc",
        title: "Intel NUC (Core i5-8500T): CBC throughput, HPL, power, cost",
        source: "000_9a184237f0807cfc.txt, Table I, Table II, section IV",
        select: |a| a.study().filter(|s| s == "NUC"),
    },
    ReferenceSet {
        name: "mrd",
        title: "mid-range desktop (Ryzen 7 2700): CBC throughput, HPL, power, cost",
        source: "000_9a184237f0807cfc.txt, Table I, Table II, section IV",
        select: |a| a.study().filter(|s| s == "MRD"),
    },
    ReferenceSet {
        name: "pi3b-cluster",
        title: "Raspberry Pi 3 B+ cluster subsets (4-20 nodes): CBC throughput, HPL, power",
        source: "000_9a184237f0807cfc.txt, Table I, Table II, section IV",
        select: |a| {
            let mut d = a.study().filter(|s| s.starts_with("Raspberry Pi 3 B+"));
            d.throughput.retain(|r| r.system == PI_CLUSTER);
            d
        },
    },
    ReferenceSet {
        name: "cluster-study",
        title: "all of the cluster study: NUC, MRD, Pi cluster (section IV, Tables I and II)",
        source: "000_9a184237f0807cfc.txt, Tables I and II, section IV",
        select: |a| {
            let mut d = a.study().filter(cluster_study_system);
            d.throughput
                .retain(|r| !r.source.location.starts_with("Table III"));
            d
        },
    },
    ReferenceSet {
        name: "sbc-table3",
        title: "single-board computers (Pi 3 B+, Pi 4 B, BeagleBone Black, TinkerBoard, ODROID C2/XU4): AES and Twofish CBC",
        source: "000_9a184237f0807cfc.txt, Table III",
        select: |a| ReferenceData {
            throughput: a
                .throughput
                .iter()
                .filter(|r| r.source.location == "Table III")
                .cloned()
                .collect(),
            ..ReferenceData::default()
        },
    },
    ReferenceSet {
        name: "pi4-cryptsetup",
        title: "Raspberry Pi 4: `cryptsetup benchmark` listing (CBC and XTS)",
        source: "003_562dd0b3f53c5db2.txt",
        select: |a| ReferenceData {
            throughput: a.pi4.clone(),
            ..ReferenceData::default()
        },
    },
    ReferenceSet {
        name: "laptop-cryptsetup",
        title: "laptop with AES instructions: `cryptsetup benchmark` listing (CBC and XTS)",
        source: "003_562dd0b3f53c5db2.txt",
        select: |a| ReferenceData {
            throughput: a.laptop.clone(),
            ..ReferenceData::default()
        },
    },
    ReferenceSet {
        name: "iot-pi3",
        title: "Raspberry Pi 3: seconds to encrypt 1 and 128 MB files (ECB, CBC, stream ciphers)",
        source: "002_fde9d7f18c7ee294.txt, Tables III-V",
        select: |a| a.study().filter(|s| s == "Raspberry Pi 3"),
    },
    ReferenceSet {
        name: "iot-bbb",
        title: "BeagleBone Black: seconds to encrypt 128 MB files (ECB, stream ciphers)",
        source: "002_fde9d7f18c7ee294.txt, Tables VI-VIII",
        select: |a| a.study().filter(|s| s == "BeagleBone Black"),
    },
    ReferenceSet {
        name: "hpl",
        title: "HPL GFLOPS of the NUC, the MRD, one Pi 3 B+ and the Pi cluster (Figure 2)",
        source: "000_9a184237f0807cfc.txt, section IV, Figure 2",
        select: |a| ReferenceData {
            hpl: a.hpl.clone(),
            ..ReferenceData::default()
        },
    },
    ReferenceSet {
        name: "power",
        title: "watts idle, under cryptsetup and under HPL of the NUC, the MRD and the Pi cluster",
        source: "000_9a184237f0807cfc.txt, Table II, section IV-B",
        select: |a| ReferenceData {
            power: a.power.clone(),
            systems: a.systems.clone(),
            ..ReferenceData::default()
        },
    },
    ReferenceSet {
        name: "tea-cluster",
        title: "TEA on three Raspberry Pis: OpenMP and hybrid MPI+OpenMP speedups",
        source: "001_45ca9799ab52d4ef.txt (see data/tea_cluster.md)",
        select: |a| ReferenceData {
            tea: a.tea.clone(),
            ..ReferenceData::default()
        },
    },
];

/// Every reference set, in the order `--list-refs` shows them.
pub fn sets() -> &'static [ReferenceSet] {
    SETS
}

/// The set called `name`.
pub fn find(name: &str) -> Result<&'static ReferenceSet, ReferenceError> {
    SETS.iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ReferenceError::UnknownSet(name.to_string()))
}

impl ReferenceSet {
    /// The records of this set.
    pub fn data(&self) -> Result<ReferenceData, ReferenceError> {
        Ok((self.select)(AllData::get()?))
    }
}

/// The records of every set named, merged.
pub fn load(names: &[String]) -> Result<ReferenceData, ReferenceError> {
    let mut data = ReferenceData::default();
    for name in names {
        data.merge(&find(name)?.data()?);
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<T>(file: &'static str, text: &str) -> usize
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
    {
        let rows: Vec<T> = parse_csv(file, text).unwrap();
        let again: Vec<T> = parse_csv(file, &write_csv(&rows).unwrap()).unwrap();
        assert_eq!(rows, again, "{file} does not round-trip");
        // Same header, same number of lines: nothing dropped or invented.
        let written = write_csv(&rows).unwrap();
        assert_eq!(
            written.lines().next(),
            text.lines().next(),
            "{file}: header"
        );
        assert_eq!(written.lines().count(), text.lines().count(), "{file}");
        rows.len()
    }

    #[test]
    fn every_csv_round_trips() {
        assert_eq!(
            roundtrip::<ClusterCbcRow>("cluster_cbc", files::CLUSTER_CBC),
            32
        );
        assert_eq!(roundtrip::<SbcRow>("sbc", files::SBC_TABLE3), 12);
        assert_eq!(roundtrip::<HplRow>("hpl", files::HPL), 6);
        assert_eq!(roundtrip::<PowerRow>("power", files::POWER), 5);
        assert_eq!(roundtrip::<SystemRow>("systems", files::SYSTEMS), 5);
        assert_eq!(roundtrip::<FileTimeRow>("iot", files::IOT_FILE_TIMES), 30);
        assert_eq!(roundtrip::<TeaRow>("tea", files::TEA_CLUSTER), 3);
    }

    #[test]
    fn listings_parse_fully() {
        let pi4 = parse_listing("pi4", files::CRYPTSETUP_PI4).unwrap();
        let laptop = parse_listing("laptop", files::CRYPTSETUP_LAPTOP).unwrap();
        assert_eq!(pi4.ciphers.len(), 12);
        assert_eq!(laptop.ciphers.len(), 12);
        assert_eq!(pi4.kdfs.len(), 7);
        assert!(pi4.unavailable.is_empty());
        let first = &pi4.ciphers[0];
        assert_eq!((first.cipher.as_str(), first.key_bits), ("aes-cbc", 128));
        assert_eq!((first.encrypt_mib_s, first.decrypt_mib_s), (78.0, 80.9));
        let last = &laptop.ciphers[11];
        assert_eq!((last.cipher.as_str(), last.key_bits), ("twofish-xts", 512));
        assert_eq!(last.decrypt_mib_s, 469.8);
        assert!(parse_listing("bad", "  aes-cbc 128b 1.0 MiB/s\n").is_err());
        assert!(parse_listing("empty", "").is_err());
    }

    #[test]
    fn every_record_has_a_source_and_every_set_has_data() {
        for set in sets() {
            let data = set.data().unwrap();
            assert!(!data.is_empty(), "{} is empty", set.name);
            let sources = data.sources();
            assert!(!sources.is_empty(), "{}", set.name);
            for s in sources {
                assert!(s.document.ends_with(".txt"), "{s}");
                assert!(!s.location.is_empty());
            }
        }
        let all = AllData::get().unwrap();
        assert_eq!(all.throughput.len(), 32 + 44);
        assert_eq!(all.pi4.len(), 24);
    }

    #[test]
    fn sets_select_what_their_names_say() {
        let nuc = find("nuc").unwrap().data().unwrap();
        assert!(nuc.throughput.iter().all(|r| r.system == "NUC"));
        assert_eq!(nuc.throughput.len(), 10); // no AES decryption figure printed
        assert_eq!(nuc.hpl[0].gflops, Some(16.51));
        assert_eq!(nuc.systems[0].cost_usd, 700.0);
        let cluster = find("pi3b-cluster").unwrap().data().unwrap();
        assert_eq!(cluster.throughput.len(), 12);
        assert!(cluster.throughput.iter().all(|r| r.nodes > 1));
        // The single Pi's HPL figure belongs to the cluster's curve at one node.
        assert!(cluster.hpl.iter().any(|r| r.nodes == 1));
        let garbled = find("sbc-table3").unwrap().data().unwrap();
        assert!(garbled.throughput.iter().any(|r| {
            r.system == "BeagleBone Black"
                && r.source.note.as_deref() == Some("board name OCR-garbled in source")
        }));
        let bbb = find("iot-bbb").unwrap().data().unwrap();
        assert!(bbb.files.iter().all(|r| r.device == "BeagleBone Black"));
        assert!(matches!(find("nope"), Err(ReferenceError::UnknownSet(_))));
    }

    #[test]
    fn merge_drops_duplicates() {
        let mut data = load(&["nuc".into(), "hpl".into()]).unwrap();
        let n = data.hpl.len();
        assert_eq!(n, 6);
        data.merge(&find("nuc").unwrap().data().unwrap());
        assert_eq!(data.hpl.len(), n);
    }
}
