//! The result of a benchmark run: one `Serialize` type that every output format
//! is made from.
//!
//! # JSON schema (`"schema": "clustercrypt-bench/1"`)
//!
//! ```text
//! {
//!   "schema": "clustercrypt-bench/1",
//!   "tool": { "name": "clustercrypt", "version": "0.1.0" },
//!   "machine": { "hostname", "cpu_model", "cores", "memory_bytes", "kernel",
//!                "arch", "cpu_features": ["aes", "vaes", ...],
//!                "clock": { "mhz", "source", "measured_mhz", "scaling_cur_mhz", "max_mhz", "note" },
//!                "idle": { "load_average", "busiest": [ { "pid", "name", "cpu_percent" } ],
//!                          "others_cpu_percent", "idle" },
//!                "throttling": { "temperature_start_c", "temperature_max_c",
//!                   "time_in_state": [ { "mhz", "seconds" } ], "vcgencmd_throttled",
//!                   "clock_min_mhz", "clock_max_mhz", "throttled_rows" },
//!                "core_types": [ { "name", "implementer", "part", "capacity", "cpus" } ] },
//!   "settings": { "min_time_s", "buffer_size", "request_size", "runs", "threads" },
//!   "ciphers": [ {
//!       "cipher": "aes-xts",            // cryptsetup's row label
//!       "spec": "aes-xts-plain64",      // full name with IV mode
//!       "algorithm": "aes", "mode": "xts",
//!       "key_bits": 512,                // as cryptsetup counts them
//!       "threads": 1,
//!       "encrypt_mib_s": 5387.1,        // mean over runs of the aggregate
//!       "decrypt_mib_s": 5382.1,
//!       "encrypt": { "mean", "median", "min", "max", "stddev", "n" },
//!       "decrypt": { ... },
//!       "per_thread": [ { "thread": 0, "encrypt_mib_s", "decrypt_mib_s" } ],
//!       "implementation": "vaes512",    // which backend ran
//!       "insecure": false,
//!       "insecure_reason": null,
//!       "cpu_mhz": 3693.2,              // clock the c/B are computed at
//!       "encrypt_cycles_per_byte": 0.65, "decrypt_cycles_per_byte": 0.65,
//!       "throttled": false, "clock_min_mhz", "clock_max_mhz", "temperature_c",
//!       "per_core_type": [ { "core_type": "cortex-a55", "cpu", "encrypt_mib_s",
//!           "decrypt_mib_s", "cpu_mhz", "encrypt_cycles_per_byte", ... } ]
//!   } ],
//!   "kdfs": [ { "kdf": "pbkdf2", "hash": "sha256", "iterations_per_second", "key_bits" },
//!             { "kdf": "argon2", "variant": "argon2id", "iterations", "memory_kib",
//!               "parallel", "key_bits", "requested_ms", "measured_ms" } ],
//!   "interrupted": false,               // true when Ctrl-C cut the run short
//!   "cluster": {                        // only with bench --cluster
//!     "ranks": 3,
//!     "rows": [ { "cipher", "key_bits", "nodes", "encrypt_mib_s", "decrypt_mib_s",
//!                 "start_skew_ms", "per_node": [ { "rank", "hostname", "cpu_model",
//!                 "threads", "encrypt_mib_s", "decrypt_mib_s", "implementation" } ] } ],
//!     "sweep": [ ...the same, for 1, 2, ... N nodes (--sweep) ]
//!   },
//!   "source": "cryptsetup benchmark listing pi4.txt",   // only when imported
//!   "unavailable": [ { "cipher", "key_bits", "reason" } ], // N/A rows of a listing
//!   "files": [ { "cipher", "algorithm", "mode", "key_bits", "file_bytes", "threads",
//!                "encrypt_s", "decrypt_s", "cpu_percent", "peak_memory_bytes",
//!                "peak_rss_bytes", "peak_memory_reset", "insecure" } ], // bench --files
//!   "hpl": [ { "gflops", "n", "nb", "p", "q", "processes", "nodes", "seconds",
//!              "passed", "program" } ],                 // clustercrypt hpl
//!   "power": [ { "workload", "watts", "source": "rapl|meter|command|published",
//!                "mib_s", "gflops", "cost_usd" } ],
//!   "speedup": [ { "cipher": "tea-ecb", "rounds", "file_bytes", "nodes", "threads",
//!                  "seconds", "baseline_seconds" } ]     // the TEA study (seed 001)
//! }
//! ```
//! MiB is 2^20 bytes. Fields are only ever added within schema version 1.

use serde::{Deserialize, Serialize};

use clustercrypt_catalogue::{Algorithm, CipherSpec, Mode};

use crate::kdf::KdfResult;
use crate::machine::Machine;
use crate::measure::Method;
use crate::stats::Stats;

/// Schema identifier of the JSON output.
pub const SCHEMA: &str = "clustercrypt-bench/1";

/// The tool that produced a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `clustercrypt`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// How the run was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Minimum seconds per direction.
    pub min_time_s: f64,
    /// Bytes per pass.
    pub buffer_size: usize,
    /// Bytes per request.
    pub request_size: usize,
    /// Repetitions per row.
    pub runs: usize,
    /// Workers per row.
    pub threads: usize,
}

impl Settings {
    /// The settings of a run measured with `method`, `runs` times on `threads` workers.
    pub fn of(method: &Method, runs: usize, threads: usize) -> Settings {
        Settings {
            min_time_s: method.min_time.as_secs_f64(),
            buffer_size: method.buffer_size,
            request_size: method.request_size,
            runs,
            threads,
        }
    }
}

/// One worker's figures (mean over runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadFigures {
    /// Worker index.
    pub thread: usize,
    /// Encryption MiB/s.
    pub encrypt_mib_s: f64,
    /// Decryption MiB/s.
    pub decrypt_mib_s: f64,
    /// The CPU the worker was pinned to (`--pin`, `--per-core-type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// That CPU's core type (`cortex-a76`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_type: Option<String>,
}

/// A row measured on one worker pinned to one core type (`--per-core-type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreTypeFigures {
    /// Core type (`cortex-a55`).
    pub core_type: String,
    /// The CPU the worker ran on.
    pub cpu: usize,
    /// Encryption MiB/s (mean over runs).
    pub encrypt_mib_s: f64,
    /// Decryption MiB/s.
    pub decrypt_mib_s: f64,
    /// That core's measured clock, MHz.
    #[serde(default)]
    pub cpu_mhz: Option<f64>,
    /// Encryption cycles per byte at that clock.
    #[serde(default)]
    pub encrypt_cycles_per_byte: Option<f64>,
    /// Decryption cycles per byte.
    #[serde(default)]
    pub decrypt_cycles_per_byte: Option<f64>,
    /// Whether the clock dropped while it ran.
    #[serde(default)]
    pub throttled: bool,
}

/// The figures of one run of a row, in MiB/s.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// Aggregate (encryption, decryption).
    pub aggregate: (f64, f64),
    /// Each worker's (encryption, decryption).
    pub workers: Vec<(f64, f64)>,
}

/// One measured row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CipherRow {
    /// Row label as cryptsetup prints it (`aes-xts`).
    pub cipher: String,
    /// Full specification (`aes-xts-plain64`).
    pub spec: String,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Mode.
    pub mode: Mode,
    /// Key bits as cryptsetup counts them.
    pub key_bits: usize,
    /// Workers that ran at once.
    pub threads: usize,
    /// Aggregate encryption MiB/s, mean over runs.
    pub encrypt_mib_s: f64,
    /// Aggregate decryption MiB/s, mean over runs.
    pub decrypt_mib_s: f64,
    /// Encryption statistics over runs.
    pub encrypt: Stats,
    /// Decryption statistics over runs.
    pub decrypt: Stats,
    /// Each worker's figures.
    pub per_thread: Vec<ThreadFigures>,
    /// The implementation that ran.
    pub implementation: String,
    /// Broken cipher or ECB.
    pub insecure: bool,
    /// Why, when insecure.
    pub insecure_reason: Option<String>,
    /// The core clock the cycles per byte are computed at, MHz (measured
    /// around the row, or `--cpu-mhz`); absent in old results and imports.
    #[serde(default)]
    pub cpu_mhz: Option<f64>,
    /// Encryption cycles per byte per core: clock x workers / throughput.
    #[serde(default)]
    pub encrypt_cycles_per_byte: Option<f64>,
    /// Decryption cycles per byte per core.
    #[serde(default)]
    pub decrypt_cycles_per_byte: Option<f64>,
    /// Whether the clock dropped while the row ran (cpufreq time_in_state,
    /// the timed clock before and after, or `vcgencmd get_throttled`).
    #[serde(default)]
    pub throttled: bool,
    /// Lowest clock seen during the row, MHz.
    #[serde(default)]
    pub clock_min_mhz: Option<f64>,
    /// Highest clock seen during the row, MHz.
    #[serde(default)]
    pub clock_max_mhz: Option<f64>,
    /// Hottest thermal zone after the row, °C.
    #[serde(default)]
    pub temperature_c: Option<f64>,
    /// One worker on each core type in turn (`--per-core-type`); the row's own
    /// figures are then the all-core aggregate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_core_type: Vec<CoreTypeFigures>,
}

impl CipherRow {
    /// Summarises the runs of `spec`.
    pub fn from_runs(
        spec: &CipherSpec,
        threads: usize,
        implementation: &str,
        runs: &[RunFigures],
    ) -> Option<CipherRow> {
        let enc: Vec<f64> = runs.iter().map(|r| r.aggregate.0).collect();
        let dec: Vec<f64> = runs.iter().map(|r| r.aggregate.1).collect();
        let encrypt = Stats::of(&enc)?;
        let decrypt = Stats::of(&dec)?;
        let per_thread = (0..threads)
            .map(|t| {
                let mean = |f: fn(&(f64, f64)) -> f64| {
                    runs.iter().map(|r| f(&r.workers[t])).sum::<f64>() / runs.len() as f64
                };
                ThreadFigures {
                    thread: t,
                    encrypt_mib_s: mean(|p| p.0),
                    decrypt_mib_s: mean(|p| p.1),
                    cpu: None,
                    core_type: None,
                }
            })
            .collect();
        Some(CipherRow {
            cipher: spec.label(),
            spec: spec.full_name(),
            algorithm: spec.algorithm,
            mode: spec.mode,
            key_bits: spec.key_bits,
            threads,
            encrypt_mib_s: encrypt.mean,
            decrypt_mib_s: decrypt.mean,
            encrypt,
            decrypt,
            per_thread,
            implementation: implementation.to_string(),
            insecure: spec.is_broken(),
            insecure_reason: spec.insecurity(),
            cpu_mhz: None,
            encrypt_cycles_per_byte: None,
            decrypt_cycles_per_byte: None,
            throttled: false,
            clock_min_mhz: None,
            clock_max_mhz: None,
            temperature_c: None,
            per_core_type: Vec::new(),
        })
    }
}

/// One node's figures for one row of a cluster run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFigures {
    /// MPI rank.
    pub rank: usize,
    /// Host name.
    pub hostname: String,
    /// CPU model.
    pub cpu_model: String,
    /// Worker threads on the node.
    pub threads: usize,
    /// Encryption MiB/s on the node (all its threads).
    pub encrypt_mib_s: f64,
    /// Decryption MiB/s on the node.
    pub decrypt_mib_s: f64,
    /// The implementation that ran there.
    pub implementation: String,
}

/// One row measured on every node at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRow {
    /// Row label (`aes-xts`).
    pub cipher: String,
    /// Key bits.
    pub key_bits: usize,
    /// Nodes that measured.
    pub nodes: usize,
    /// Sum of the nodes' encryption MiB/s (all measured over the same window).
    pub encrypt_mib_s: f64,
    /// Sum of the nodes' decryption MiB/s.
    pub decrypt_mib_s: f64,
    /// Largest difference between the nodes' start times, milliseconds
    /// (wall clocks: meaningful when they are synchronised, e.g. by NTP).
    pub start_skew_ms: f64,
    /// Each node.
    pub per_node: Vec<NodeFigures>,
}

/// The cluster part of a report (`bench --cluster`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSummary {
    /// Ranks in the job.
    pub ranks: usize,
    /// Every row on all nodes.
    pub rows: Vec<ClusterRow>,
    /// With `--sweep`: every row on 1, 2, ... N nodes (the study's Figures 3 and 4).
    pub sweep: Vec<ClusterRow>,
}

/// A whole benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Schema identifier, [`SCHEMA`].
    pub schema: String,
    /// The tool.
    pub tool: Tool,
    /// The machine.
    pub machine: Machine,
    /// How it was measured.
    pub settings: Settings,
    /// Cipher rows, in the order measured.
    pub ciphers: Vec<CipherRow>,
    /// KDF lines, in the order measured.
    pub kdfs: Vec<KdfResult>,
    /// Whether the run was interrupted (rows not reached are missing).
    pub interrupted: bool,
    /// Cluster figures (`bench --cluster`), when run under MPI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterSummary>,
    /// Where the figures came from when not measured by this tool (an imported
    /// `cryptsetup benchmark` listing, a published reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Rows the source lists without a figure (cryptsetup's `N/A`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<UnavailableRow>,
    /// The file-size study (`bench --files`, seed 002).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileRow>,
    /// HPL results (`clustercrypt hpl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hpl: Vec<HplResult>,
    /// Power readings taken during the run, with their source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power: Vec<PowerReading>,
    /// Timed runs against a one-thread baseline (the TEA study: rounds and file size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speedup: Vec<SpeedupRow>,
}

impl Report {
    /// An empty report for `machine`, measured with `settings`.
    pub fn empty(machine: Machine, settings: Settings) -> Report {
        Report {
            schema: SCHEMA.to_string(),
            tool: Tool {
                name: "clustercrypt".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            machine,
            settings,
            ciphers: Vec::new(),
            kdfs: Vec::new(),
            interrupted: false,
            cluster: None,
            source: None,
            unavailable: Vec::new(),
            files: Vec::new(),
            hpl: Vec::new(),
            power: Vec::new(),
            speedup: Vec::new(),
        }
    }
}

/// One timed run of the TEA study's experiment (seed 001): a file encrypted with
/// `--rounds R` by one configuration, against the serial (one thread, one node) run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedupRow {
    /// Row label (`tea-ecb`).
    pub cipher: String,
    /// Times the whole cipher was applied per block (`--rounds`).
    pub rounds: u32,
    /// File size in bytes.
    pub file_bytes: u64,
    /// Nodes (MPI ranks) that worked; 1 for a local run.
    pub nodes: usize,
    /// Worker threads per node.
    pub threads: usize,
    /// Wall seconds of this configuration.
    pub seconds: f64,
    /// Wall seconds of the serial run on the same file and rounds.
    pub baseline_seconds: f64,
}

impl SpeedupRow {
    /// Serial seconds over these seconds.
    pub fn speedup(&self) -> f64 {
        self.baseline_seconds / self.seconds
    }
}

/// A row that the source names but has no figure for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnavailableRow {
    /// Row label as the source prints it (`serpent-cbc`).
    pub cipher: String,
    /// Key bits as cryptsetup counts them.
    pub key_bits: usize,
    /// Why (`N/A` in the listing, not supported here, ...).
    pub reason: String,
}

/// One file of the file-size study: real files encrypted and decrypted end to end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRow {
    /// Row label (`aes-cbc`, `rc4`).
    pub cipher: String,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The mode.
    pub mode: Mode,
    /// Key bits.
    pub key_bits: usize,
    /// File size in bytes.
    pub file_bytes: u64,
    /// Worker threads.
    pub threads: usize,
    /// Wall seconds to encrypt the file (read, encrypt, write).
    pub encrypt_s: f64,
    /// Wall seconds to decrypt it.
    pub decrypt_s: f64,
    /// CPU time (user + system) over wall time while encrypting, in percent of one core.
    pub cpu_percent: f64,
    /// Peak resident memory growth of the process while encrypting, bytes: the
    /// high-water mark (reset just before) less the resident size at the start.
    pub peak_memory_bytes: u64,
    /// The process's peak resident size while encrypting, bytes (`VmHWM`), what
    /// a tool like `top` shows as its memory use.
    #[serde(default)]
    pub peak_rss_bytes: u64,
    /// Whether the high-water mark could be reset before encrypting
    /// (`/proc/self/clear_refs`); if not, the two memory figures are the growth
    /// of, and the value of, the process's lifetime high-water mark.
    #[serde(default)]
    pub peak_memory_reset: bool,
    /// Whether the cipher or mode is considered broken.
    pub insecure: bool,
}

/// One HPL run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HplResult {
    /// GFLOPS as HPL reports them.
    pub gflops: f64,
    /// Problem size.
    pub n: u64,
    /// Block size.
    pub nb: u64,
    /// Process grid rows.
    pub p: u64,
    /// Process grid columns.
    pub q: u64,
    /// MPI processes.
    pub processes: usize,
    /// Nodes the processes ran on.
    pub nodes: usize,
    /// Wall seconds of the HPL part.
    pub seconds: f64,
    /// Whether HPL's residual check passed.
    pub passed: bool,
    /// Which program ran (`hpcc 1.5.0`, `xhpl`).
    pub program: String,
}

/// Where a power figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerSource {
    /// Linux powercap (Intel/AMD RAPL) energy counters: the CPU package, not the wall.
    Rapl,
    /// A figure given by the user from an external meter (`--watts`).
    Meter,
    /// A command that prints watts (`--watts-command`).
    Command,
    /// A published figure.
    Published,
}

/// Power drawn during one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerReading {
    /// What ran (`idle`, `bench aes-xts 512b`, `hpl`).
    pub workload: String,
    /// Mean watts.
    pub watts: f64,
    /// Where the figure came from.
    pub source: PowerSource,
    /// Throughput during the workload, MiB/s (crypto workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_s: Option<f64>,
    /// GFLOPS during the workload (HPL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gflops: Option<f64>,
    /// Cost of the hardware in US dollars (`--cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}
