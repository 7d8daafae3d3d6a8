//! `bench --cluster`: every rank starts each measurement at the same moment (a
//! barrier), measures the same row over the same window on all its threads, and
//! rank 0 gathers one row per node and the aggregate, with the start skew
//! between nodes. With `sweep`, each row is measured on 1, 2, ... N nodes in
//! one launch: the cluster study's throughput-against-nodes figures.

use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use clustercrypt_bench::clock::Clock;
use clustercrypt_bench::measure::{Method, measure_row};
use clustercrypt_bench::report::{ClusterRow, ClusterSummary, NodeFigures};
use clustercrypt_catalogue::CipherSpec;

use crate::error::ClusterError;
use crate::transport::{CONTROL_TAG, ROOT, Transport};

const READY_TAG: u32 = CONTROL_TAG + 3;
const GO_TAG: u32 = CONTROL_TAG + 4;
const RESULT_TAG: u32 = CONTROL_TAG + 5;

/// What a node says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model.
    pub cpu_model: String,
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Returns once every rank has reached it; the value is this rank's wall clock
/// at release, in nanoseconds since the Unix epoch.
pub fn barrier(t: &dyn Transport) -> Result<u128, ClusterError> {
    if t.rank() == ROOT {
        for r in 1..t.size() {
            t.recv(r, READY_TAG)?;
        }
        for r in 1..t.size() {
            t.send(r, GO_TAG, &[])?;
        }
    } else {
        t.send(ROOT, READY_TAG, &[])?;
        t.recv(ROOT, GO_TAG)?;
    }
    Ok(now_ns())
}

struct Measured {
    start: u128,
    figures: Option<NodeFigures>,
}

fn encode(m: &Measured) -> Vec<u8> {
    match &m.figures {
        None => format!("{}\nidle", m.start).into_bytes(),
        Some(f) => format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{}",
            m.start,
            f.encrypt_mib_s,
            f.decrypt_mib_s,
            f.threads,
            f.implementation,
            f.hostname,
            f.cpu_model
        )
        .into_bytes(),
    }
}

fn decode(rank: usize, bytes: &[u8]) -> Result<Measured, ClusterError> {
    let text = String::from_utf8_lossy(bytes);
    let bad = || ClusterError::Protocol(format!("bad measurement from rank {rank}"));
    let f: Vec<&str> = text.splitn(7, '\n').collect();
    let start = f.first().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    if f.get(1) == Some(&"idle") {
        return Ok(Measured {
            start,
            figures: None,
        });
    }
    if f.len() != 7 {
        return Err(bad());
    }
    Ok(Measured {
        start,
        figures: Some(NodeFigures {
            rank,
            encrypt_mib_s: f[1].parse().map_err(|_| bad())?,
            decrypt_mib_s: f[2].parse().map_err(|_| bad())?,
            threads: f[3].parse().map_err(|_| bad())?,
            implementation: f[4].to_string(),
            hostname: f[5].to_string(),
            cpu_model: f[6].to_string(),
        }),
    })
}

/// Settings of a cluster benchmark.
pub struct ClusterBench<'a> {
    /// Rows.
    pub specs: &'a [CipherSpec],
    /// Threads per node.
    pub threads: usize,
    /// Buffer, request and time per direction.
    pub method: Method,
    /// Also measure on 1, 2, ... N-1 nodes.
    pub sweep: bool,
    /// This node.
    pub me: NodeInfo,
}

/// Runs the cluster benchmark on every rank; rank 0 gets the summary.
pub fn run(
    t: &dyn Transport,
    b: &ClusterBench<'_>,
    clock: &dyn Clock,
    cancel: &AtomicBool,
) -> Result<Option<ClusterSummary>, ClusterError> {
    let n = t.size();
    let counts: Vec<usize> = if b.sweep { (1..=n).collect() } else { vec![n] };
    let mut rows = Vec::new();
    let mut sweep = Vec::new();
    for &k in &counts {
        for spec in b.specs {
            let start = barrier(t)?;
            let figures = if t.rank() < k {
                let run = measure_row(spec, b.threads, &b.method, clock, cancel)
                    .map_err(|e| ClusterError::Measure(e.to_string()))?;
                let (enc, dec) = run.aggregate();
                Some(NodeFigures {
                    rank: t.rank(),
                    hostname: b.me.hostname.clone(),
                    cpu_model: b.me.cpu_model.clone(),
                    threads: run.workers.len(),
                    encrypt_mib_s: enc,
                    decrypt_mib_s: dec,
                    implementation: run.implementation.to_string(),
                })
            } else {
                None
            };
            let mine = Measured { start, figures };
            if t.rank() != ROOT {
                t.send(ROOT, RESULT_TAG, &encode(&mine))?;
                continue;
            }
            let mut all = vec![mine];
            for r in 1..n {
                all.push(decode(r, &t.recv(r, RESULT_TAG)?)?);
            }
            let active: Vec<&Measured> = all.iter().filter(|m| m.figures.is_some()).collect();
            let first = active.iter().map(|m| m.start).min().unwrap_or(0);
            let last = active.iter().map(|m| m.start).max().unwrap_or(0);
            let per_node: Vec<NodeFigures> =
                active.iter().filter_map(|m| m.figures.clone()).collect();
            let row = ClusterRow {
                cipher: spec.label(),
                key_bits: spec.key_bits,
                nodes: k,
                encrypt_mib_s: per_node.iter().map(|f| f.encrypt_mib_s).sum(),
                decrypt_mib_s: per_node.iter().map(|f| f.decrypt_mib_s).sum(),
                start_skew_ms: (last - first) as f64 / 1e6,
                per_node,
            };
            if b.sweep {
                sweep.push(row.clone());
            }
            if k == n {
                rows.push(row);
            }
        }
    }
    Ok((t.rank() == ROOT).then_some(ClusterSummary {
        ranks: n,
        rows,
        sweep,
    }))
}
