//! Measuring before a distributed run: each rank's throughput on the actual
//! transform, and the link between rank 0 and each rank; then the cost model
//! ([`crate::costmodel`]) decides which ranks to use.

use std::io::Cursor;
use std::time::Instant;

use clustercrypt_engine::{ChunkTransform, EngineError, Job, pipeline};

use crate::costmodel::{Link, Node, Plan, plan};
use crate::error::ClusterError;
use crate::transport::{CONTROL_TAG, ROOT, Transport};

const PROBE_TAG: u32 = CONTROL_TAG + 6;
const PING_TAG: u32 = CONTROL_TAG + 7;

/// Runs `inner` without ever marking a chunk as the last one, so that probing
/// needs no valid data (no final padding or tag to check on random bytes).
struct NeverLast<'a>(&'a dyn ChunkTransform);

impl ChunkTransform for NeverLast<'_> {
    fn input_len(&self) -> usize {
        self.0.input_len()
    }
    fn growth(&self) -> usize {
        self.0.growth()
    }
    fn tail_len(&self) -> usize {
        self.0.tail_len()
    }
    fn sequential(&self) -> bool {
        self.0.sequential()
    }
    fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
        let last = std::mem::replace(&mut job.last, false);
        let r = self.0.transform(job);
        // The pipeline needs the flag back to know where the input ends.
        job.last = last;
        match r {
            // Opening random bytes fails authentication; the work was done all the same.
            Ok(()) | Err(EngineError::Chunk(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// How much to probe before a run of `size` bytes: a sixteenth of the input,
/// at least 64 KiB and at most four chunks, so small files stay cheap.
pub fn probe_bytes(size: u64, chunk: usize) -> usize {
    let want = (size / 16).min(4 * chunk as u64) as usize;
    want.max(64 << 10).min(4 * chunk)
}

/// Bytes per second of `inner` on `threads` threads over `len` bytes of zeros.
pub fn probe_rate(
    inner: &dyn ChunkTransform,
    threads: usize,
    len: usize,
) -> Result<f64, EngineError> {
    // Whole blocks, so that block modes without padding accept the sample.
    let len = (len.max(64) / 64) * 64;
    let data = vec![0u8; len];
    let start = Instant::now();
    pipeline::run(
        &mut Cursor::new(&data[..]),
        &mut std::io::sink(),
        &NeverLast(inner),
        threads,
        &|_| {},
    )?;
    Ok(len as f64 / start.elapsed().as_secs_f64().max(1e-9))
}

/// Worker side of the measurements: probe as much as rank 0 asks, then echo
/// pings until told to stop.
pub fn answer(
    t: &dyn Transport,
    inner: &dyn ChunkTransform,
    threads: usize,
) -> Result<(), ClusterError> {
    let ask = t.recv(ROOT, PROBE_TAG)?;
    let len = ask
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| ClusterError::Protocol("bad probe request".into()))?;
    let rate = probe_rate(inner, threads, len as usize)?;
    t.send(ROOT, PROBE_TAG, rate.to_string().as_bytes())?;
    loop {
        let ping = t.recv(ROOT, PING_TAG)?;
        if ping.is_empty() {
            return Ok(());
        }
        t.send(ROOT, PING_TAG, &ping)?;
    }
}

fn round_trip(t: &dyn Transport, rank: usize, bytes: &[u8]) -> Result<f64, ClusterError> {
    let start = Instant::now();
    t.send(rank, PING_TAG, bytes)?;
    t.recv(rank, PING_TAG)?;
    Ok(start.elapsed().as_secs_f64())
}

/// What rank 0 measured, and the resulting plan.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Rank 0 itself.
    pub root: Node,
    /// Every other rank, in rank order.
    pub others: Vec<Node>,
    /// The link model.
    pub link: Link,
    /// The decision.
    pub plan: Plan,
}

/// Rank 0's side: probes every rank and the links, then plans a run of `size` bytes.
pub fn measure(
    t: &dyn Transport,
    inner: &dyn ChunkTransform,
    threads: usize,
    size: u64,
    hosts: &[String],
    startup: f64,
) -> Result<Measured, ClusterError> {
    let sample = probe_bytes(size, inner.input_len());
    for r in 1..t.size() {
        t.send(r, PROBE_TAG, &(sample as u64).to_le_bytes())?;
    }
    let root_rate = probe_rate(inner, threads, sample)?;
    let mut others = Vec::new();
    for r in 1..t.size() {
        let text = String::from_utf8_lossy(&t.recv(r, PROBE_TAG)?).into_owned();
        let rate: f64 = text
            .parse()
            .map_err(|_| ClusterError::Protocol(format!("bad probe from rank {r}")))?;
        others.push(Node {
            host: hosts.get(r).cloned().unwrap_or_default(),
            rate,
        });
    }
    // Latency: best of a few 1-byte round trips. Bandwidth: a chunk out and back.
    let chunk = vec![0u8; inner.input_len().max(1)];
    let (mut latency, mut bandwidth) = (f64::INFINITY, f64::INFINITY);
    for r in 1..t.size() {
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            best = best.min(round_trip(t, r, &[1])?);
        }
        let mut trip = f64::INFINITY;
        for _ in 0..3 {
            trip = trip.min(round_trip(t, r, &chunk)?);
        }
        latency = latency.min(best / 2.0);
        // Out and back: each direction carried the chunk once.
        bandwidth = bandwidth.min(chunk.len() as f64 / ((trip - best).max(1e-9) / 2.0));
    }
    for r in 1..t.size() {
        t.send(r, PING_TAG, &[])?;
    }
    let link = Link {
        bandwidth: if bandwidth.is_finite() {
            bandwidth
        } else {
            0.0
        },
        latency: if latency.is_finite() { latency } else { 0.0 },
        // Rank 0 copies each shipped byte out and back through its MPI stack;
        // the ping-pong time bounds that cost from above.
        cpu_per_byte: if bandwidth.is_finite() {
            1.0 / (4.0 * bandwidth)
        } else {
            0.0
        },
        startup,
    };
    let root = Node {
        host: hosts.first().cloned().unwrap_or_default(),
        rate: root_rate,
    };
    let plan = plan(size, &root, &others, &link);
    Ok(Measured {
        root,
        others,
        link,
        plan,
    })
}

impl Measured {
    /// The explanation `--explain` prints.
    pub fn explain(&self) -> String {
        let mib = |r: f64| r / 1_048_576.0;
        let mut out = format!(
            "clustercrypt: plan: rank 0 ({}) {:.1} MiB/s",
            self.root.host,
            mib(self.root.rate)
        );
        for (i, n) in self.others.iter().enumerate() {
            out.push_str(&format!(
                ", rank {} ({}) {:.1} MiB/s",
                i + 1,
                n.host,
                mib(n.rate)
            ));
        }
        out.push_str(&format!(
            "; link {:.1} MiB/s, latency {:.3} ms\nclustercrypt: predicted: local {:.2} s, chosen {:.2} s; {}",
            mib(self.link.bandwidth),
            self.link.latency * 1e3,
            self.plan.local_seconds,
            self.plan.seconds,
            self.plan.reason
        ));
        out
    }
}
