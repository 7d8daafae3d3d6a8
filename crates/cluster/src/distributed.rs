//! Spreading the engine's chunks over the ranks of a cluster.
//!
//! Rank 0 runs the ordinary [`pipeline::run`](clustercrypt_engine::pipeline::run)
//! (reader, workers, in-order writer, bounded memory) with a
//! [`DistributedTransform`] in place of the local one. Each pipeline worker
//! thread takes a free *slot*: a slot is either local (rank 0's own cores) or
//! belongs to another rank, which then gets the chunk, transforms it with the
//! same engine code on all its threads, and sends it back. A faster rank frees
//! its slots sooner and so pulls more chunks: dynamic scheduling, with several
//! chunks in flight per rank so that sending overlaps computing. The output is
//! byte for byte the output of a local run.

use std::sync::{Condvar, Mutex};

use clustercrypt_engine::{ChunkTransform, EngineError, Job};

use crate::error::ClusterError;
use crate::transport::{CONTROL_TAG, ROOT, Transport};

/// Tag of the greeting exchange.
pub const HELLO_TAG: u32 = CONTROL_TAG;
/// Tag of the transform description.
pub const SPEC_TAG: u32 = CONTROL_TAG + 1;
/// Tag of jobs (and the stop message) sent to a worker rank.
pub const JOB_TAG: u32 = CONTROL_TAG + 2;

/// What each rank says at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// clustercrypt version.
    pub version: String,
    /// Host name.
    pub host: String,
    /// Worker threads the rank will use.
    pub threads: usize,
    /// The MPI library the rank's binary runs on (the first line of
    /// `MPI_Get_library_version`, e.g. `Open MPI v4.1.4, ...` or
    /// `MPICH Version: 4.0.2`).
    pub mpi: String,
}

impl Hello {
    fn encode(&self) -> Vec<u8> {
        let mpi = self.mpi.lines().next().unwrap_or("").trim();
        format!("{}\n{}\n{}\n{mpi}", self.version, self.host, self.threads).into_bytes()
    }

    fn decode(bytes: &[u8]) -> Result<Hello, ClusterError> {
        let text = String::from_utf8_lossy(bytes);
        let mut it = text.splitn(4, '\n');
        let (Some(v), Some(h), Some(t), Some(m)) = (it.next(), it.next(), it.next(), it.next())
        else {
            return Err(ClusterError::Protocol("bad hello".into()));
        };
        Ok(Hello {
            version: v.to_string(),
            host: h.to_string(),
            threads: t
                .parse()
                .map_err(|_| ClusterError::Protocol("bad hello".into()))?,
            mpi: m.to_string(),
        })
    }
}

/// Exchanges greetings: every rank reports to rank 0, which refuses the job if
/// any rank runs another clustercrypt version or another MPI library (Open MPI
/// and MPICH do not interoperate, nor do different releases reliably). Returns every rank's greeting (on rank 0; on
/// other ranks only their own).
pub fn hello(t: &dyn Transport, me: &Hello) -> Result<Vec<Hello>, ClusterError> {
    if t.rank() != ROOT {
        t.send(ROOT, HELLO_TAG, &me.encode())?;
        let answer = t.recv(ROOT, HELLO_TAG)?;
        return match answer.strip_prefix(b"ok") {
            Some(_) => Ok(vec![me.clone()]),
            None => Err(ClusterError::Transport(
                String::from_utf8_lossy(&answer).into_owned(),
            )),
        };
    }
    let mut all = vec![me.clone()];
    for rank in 1..t.size() {
        all.push(Hello::decode(&t.recv(rank, HELLO_TAG)?)?);
    }
    let first_line = |s: &str| s.lines().next().unwrap_or("").trim().to_string();
    let bad = all.iter().enumerate().find_map(|(rank, h)| {
        if h.version != me.version {
            Some(ClusterError::Version {
                rank,
                host: h.host.clone(),
                theirs: h.version.clone(),
                ours: me.version.clone(),
            })
        } else if first_line(&h.mpi) != first_line(&me.mpi) {
            Some(ClusterError::MpiLibrary {
                rank,
                host: h.host.clone(),
                theirs: first_line(&h.mpi),
                ours: first_line(&me.mpi),
            })
        } else {
            None
        }
    });
    let answer = match &bad {
        Some(e) => format!("refused: {e}").into_bytes(),
        None => b"ok".to_vec(),
    };
    for rank in 1..t.size() {
        t.send(rank, HELLO_TAG, &answer)?;
    }
    match bad {
        Some(e) => Err(e),
        None => Ok(all),
    }
}

fn encode_job(slot: u32, job: &Job) -> Vec<u8> {
    let mut out = Vec::with_capacity(17 + job.prev_tail.len() + job.data.len());
    out.push(1);
    out.extend_from_slice(&slot.to_le_bytes());
    out.extend_from_slice(&job.index.to_le_bytes());
    out.push(u8::from(job.last));
    out.extend_from_slice(&(job.prev_tail.len() as u32).to_le_bytes());
    out.extend_from_slice(&job.prev_tail);
    out.extend_from_slice(&job.data);
    out
}

fn decode_job(bytes: &[u8]) -> Result<Option<(u32, Job)>, ClusterError> {
    let bad = || ClusterError::Protocol("bad job".into());
    match bytes.first() {
        Some(0) => return Ok(None),
        Some(1) if bytes.len() >= 18 => {}
        _ => return Err(bad()),
    }
    let slot = u32::from_le_bytes(bytes[1..5].try_into().map_err(|_| bad())?);
    let index = u64::from_le_bytes(bytes[5..13].try_into().map_err(|_| bad())?);
    let last = bytes[13] == 1;
    let tail = u32::from_le_bytes(bytes[14..18].try_into().map_err(|_| bad())?) as usize;
    let rest = &bytes[18..];
    if rest.len() < tail {
        return Err(bad());
    }
    Ok(Some((
        slot,
        Job {
            index,
            last,
            prev_tail: rest[..tail].to_vec(),
            data: rest[tail..].to_vec(),
        },
    )))
}

/// A slot: where a chunk in flight is transformed.
#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u32,
    rank: usize,
}

/// A [`ChunkTransform`] that sends chunks to other ranks (or runs them locally).
pub struct DistributedTransform<'a> {
    inner: &'a dyn ChunkTransform,
    transport: &'a dyn Transport,
    free: Mutex<Vec<Slot>>,
    ready: Condvar,
    slots: usize,
    hosts: Vec<String>,
}

impl<'a> DistributedTransform<'a> {
    /// Slots: `local` on rank 0, and `per_rank[r]` on each other rank `r` in use.
    pub fn new(
        inner: &'a dyn ChunkTransform,
        transport: &'a dyn Transport,
        local: usize,
        per_rank: &[(usize, usize)],
        hosts: Vec<String>,
    ) -> Self {
        let mut free = Vec::new();
        let mut id = 0u32;
        // Interleave ranks so that the first chunks spread over every node.
        let most = per_rank.iter().map(|p| p.1).max().unwrap_or(0).max(local);
        for round in 0..most {
            if round < local {
                free.push(Slot { id, rank: ROOT });
                id += 1;
            }
            for &(rank, n) in per_rank {
                if round < n {
                    free.push(Slot { id, rank });
                    id += 1;
                }
            }
        }
        free.reverse();
        let slots = free.len();
        DistributedTransform {
            inner,
            transport,
            free: Mutex::new(free),
            ready: Condvar::new(),
            slots,
            hosts,
        }
    }

    /// Pipeline threads to run: one per slot.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn take(&self) -> Slot {
        let mut free = self.free.lock().expect("slots");
        loop {
            if let Some(s) = free.pop() {
                return s;
            }
            free = self.ready.wait(free).expect("slots");
        }
    }

    fn give(&self, slot: Slot) {
        self.free.lock().expect("slots").push(slot);
        self.ready.notify_one();
    }

    fn node(&self, rank: usize, message: String) -> EngineError {
        let host = self
            .hosts
            .get(rank)
            .cloned()
            .unwrap_or_else(|| format!("rank {rank}"));
        EngineError::Input(
            ClusterError::Node {
                rank,
                host,
                message,
            }
            .to_string(),
        )
    }

    fn remote(&self, slot: Slot, job: &mut Job) -> Result<(), EngineError> {
        let t = self.transport;
        t.send(slot.rank, JOB_TAG, &encode_job(slot.id, job))
            .map_err(|e| self.node(slot.rank, e.to_string()))?;
        let reply = t
            .recv(slot.rank, slot.id)
            .map_err(|e| self.node(slot.rank, e.to_string()))?;
        match reply.split_first() {
            Some((0, data)) => {
                job.data.clear();
                job.data.extend_from_slice(data);
                Ok(())
            }
            Some((_, message)) => {
                let msg = String::from_utf8_lossy(message).into_owned();
                // Authentication failures keep their meaning (and message).
                if let Some(i) = msg.strip_prefix("chunk:").and_then(|n| n.parse().ok()) {
                    return Err(EngineError::Chunk(i));
                }
                Err(self.node(slot.rank, msg))
            }
            None => Err(self.node(slot.rank, "empty reply".into())),
        }
    }

    /// Tells every worker rank that the run is over.
    pub fn stop_workers(&self) {
        for rank in 1..self.transport.size() {
            let _ = self.transport.send(rank, JOB_TAG, &[0]);
        }
    }
}

impl ChunkTransform for DistributedTransform<'_> {
    fn input_len(&self) -> usize {
        self.inner.input_len()
    }
    fn growth(&self) -> usize {
        self.inner.growth()
    }
    fn tail_len(&self) -> usize {
        self.inner.tail_len()
    }
    fn sequential(&self) -> bool {
        self.inner.sequential()
    }
    fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
        let slot = self.take();
        let r = if slot.rank == ROOT {
            self.inner.transform(job)
        } else {
            self.remote(slot, job)
        };
        self.give(slot);
        r
    }
}

/// A worker rank: receives chunks from rank 0, transforms them on `threads`
/// threads with `inner`, sends each back on its slot's tag, until told to stop.
pub fn serve(
    t: &dyn Transport,
    inner: &dyn ChunkTransform,
    threads: usize,
) -> Result<(), ClusterError> {
    let (tx, rx) = crossbeam_channel::bounded::<(u32, Job)>(threads * 2);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            let rx = rx.clone();
            s.spawn(move || {
                for (slot, mut job) in rx.iter() {
                    let reply = match inner.transform(&mut job) {
                        Ok(()) => {
                            let mut r = Vec::with_capacity(job.data.len() + 1);
                            r.push(0);
                            r.extend_from_slice(&job.data);
                            r
                        }
                        Err(EngineError::Chunk(i)) => format!("\u{1}chunk:{i}").into_bytes(),
                        Err(e) => format!("\u{1}{e}").into_bytes(),
                    };
                    if t.send(ROOT, slot, &reply).is_err() {
                        return;
                    }
                }
            });
        }
        let result = loop {
            let bytes = match t.recv(ROOT, JOB_TAG) {
                Ok(b) => b,
                Err(e) => break Err(e),
            };
            match decode_job(&bytes) {
                Ok(Some(job)) => {
                    if tx.send(job).is_err() {
                        break Ok(());
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        drop(tx);
        result
    })
}

/// Sends the transform description to every worker rank.
pub fn send_spec(t: &dyn Transport, spec: &[u8]) -> Result<(), ClusterError> {
    for rank in 1..t.size() {
        t.send(rank, SPEC_TAG, spec)?;
    }
    Ok(())
}

/// Receives the transform description from rank 0.
pub fn recv_spec(t: &dyn Transport) -> Result<Vec<u8>, ClusterError> {
    t.recv(ROOT, SPEC_TAG)
}
