//! The chunk pipeline: a reader, N workers and an in-order writer.
//!
//! The reader cuts the input into chunks of a fixed size, reading one chunk
//! ahead so that it knows which chunk is the last. Workers transform chunks in
//! place, in any order, on all cores. The writer (the calling thread) puts them
//! back in order and writes each one only once it has been transformed (for
//! decryption: verified). Buffers come from a fixed pool, so memory is bounded
//! by `(2 × threads + 2) × chunk size` whatever the input size.
//!
//! The file format, the raw legacy modes, the cluster runner and the service
//! all run through [`run`] with their own [`ChunkTransform`].

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{bounded, unbounded};

use crate::error::EngineError;

/// One chunk on its way through the pipeline.
#[derive(Debug, Default)]
pub struct Job {
    /// Position of the chunk in the stream, from 0.
    pub index: u64,
    /// Whether this is the last chunk of the input.
    pub last: bool,
    /// The chunk; transformed in place (it may grow or shrink).
    pub data: Vec<u8>,
    /// The last `tail_len()` bytes of the previous input chunk (empty for chunk 0).
    pub prev_tail: Vec<u8>,
}

/// What the pipeline does to each chunk.
pub trait ChunkTransform: Sync {
    /// Bytes of input per chunk.
    fn input_len(&self) -> usize;
    /// Extra capacity a chunk may need after transformation (a tag).
    fn growth(&self) -> usize {
        0
    }
    /// How many bytes of the previous input chunk's end each job needs (CBC
    /// decryption needs the previous ciphertext block).
    fn tail_len(&self) -> usize {
        0
    }
    /// Whether chunks must be transformed one after another, in order (CBC encryption).
    fn sequential(&self) -> bool {
        false
    }
    /// Transforms one chunk in place.
    fn transform(&self, job: &mut Job) -> Result<(), EngineError>;
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Bytes written.
    pub bytes_out: u64,
    /// Chunks processed.
    pub chunks: u64,
}

/// Reads until `buf` is full or the input ends; returns the bytes read
/// (fewer than `buf.len()` only at the end of the input).
pub fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Runs `transform` over `input` into `output` on `threads` workers.
/// `progress` is called with the input bytes written so far.
pub fn run(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    transform: &dyn ChunkTransform,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let chunk = transform.input_len();
    if chunk == 0 {
        return Err(EngineError::Input("chunk size must be positive".into()));
    }
    let threads = if transform.sequential() {
        1
    } else {
        threads.max(1)
    };
    let slots = 2 * threads + 2;
    let (pool_tx, pool_rx) = bounded::<Vec<u8>>(slots);
    for _ in 0..slots {
        pool_tx
            .send(Vec::with_capacity(chunk + transform.growth()))
            .expect("pool has room");
    }
    let (job_tx, job_rx) = bounded::<Job>(slots);
    // Workers send the chunk index with the result, so that the writer
    // reports the first failing chunk in file order, whatever the threads.
    let (done_tx, done_rx) = unbounded::<(u64, Result<Job, EngineError>)>();
    let abort = AtomicBool::new(false);
    let tail_len = transform.tail_len();

    std::thread::scope(|s| {
        // Reader.
        let reader_done = done_tx.clone();
        let abort_r = &abort;
        s.spawn(move || {
            let mut index = 0u64;
            let mut pending: Option<Job> = None;
            let mut tail: Vec<u8> = Vec::new();
            loop {
                if abort_r.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut buf) = pool_rx.recv() else { return };
                buf.resize(chunk, 0);
                let n = match read_full(&mut *input, &mut buf) {
                    Ok(n) => n,
                    Err(e) => {
                        let _ = reader_done
                            .send((u64::MAX, Err(EngineError::io("cannot read the input")(e))));
                        return;
                    }
                };
                buf.truncate(n);
                if n == 0 {
                    // End of input: the pending chunk (or an empty one) is the last.
                    let mut last = pending.take().unwrap_or(Job {
                        index,
                        data: buf,
                        ..Job::default()
                    });
                    last.last = true;
                    let _ = job_tx.send(last);
                    return;
                }
                let prev_tail = std::mem::take(&mut tail);
                if tail_len > 0 {
                    tail = buf[n.saturating_sub(tail_len)..].to_vec();
                }
                let job = Job {
                    index,
                    last: false,
                    data: buf,
                    prev_tail,
                };
                index += 1;
                if let Some(p) = pending.replace(job)
                    && job_tx.send(p).is_err()
                {
                    return;
                }
            }
        });

        // Workers.
        for _ in 0..threads {
            let rx = job_rx.clone();
            let tx = done_tx.clone();
            let abort_w = &abort;
            s.spawn(move || {
                while let Ok(mut job) = rx.recv() {
                    if abort_w.load(Ordering::Relaxed) {
                        return;
                    }
                    let index = job.index;
                    let r = transform.transform(&mut job).map(|()| job);
                    if tx.send((index, r)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(job_rx);
        drop(done_tx);

        // Writer: in order, each chunk only after it was transformed.
        let mut totals = Totals::default();
        let mut waiting: BTreeMap<u64, Result<Job, EngineError>> = BTreeMap::new();
        let result = (|| {
            for (index, r) in done_rx.iter() {
                if index == u64::MAX {
                    // A read error: nothing after it can arrive.
                    return r.map(|_| ());
                }
                waiting.insert(index, r);
                while let Some(r) = waiting.remove(&totals.chunks) {
                    let job = r?;
                    output
                        .write_all(&job.data)
                        .map_err(EngineError::io("cannot write the output"))?;
                    totals.bytes_out += job.data.len() as u64;
                    totals.chunks += 1;
                    progress(totals.chunks * chunk as u64);
                    let last = job.last;
                    let _ = pool_tx.send(job.data);
                    if last {
                        return Ok(());
                    }
                }
            }
            Err(EngineError::Input(
                "the pipeline stopped before the last chunk".into(),
            ))
        })();
        if result.is_err() {
            abort.store(true, Ordering::Relaxed);
        }
        // Dropping our ends lets the reader and workers finish.
        drop(pool_tx);
        drop(done_rx);
        result.map(|()| totals)
    })
    .and_then(|totals| {
        output
            .flush()
            .map_err(EngineError::io("cannot write the output"))?;
        Ok(totals)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Reverses each chunk and records the order chunks were seen in.
    struct Reverse {
        chunk: usize,
        seen_last: Mutex<Vec<u64>>,
    }

    impl ChunkTransform for Reverse {
        fn input_len(&self) -> usize {
            self.chunk
        }
        fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
            job.data.reverse();
            if job.last {
                self.seen_last.lock().unwrap().push(job.index);
            }
            Ok(())
        }
    }

    #[test]
    fn order_and_last_flag_for_every_size() {
        for len in [0usize, 1, 99, 100, 101, 1000, 12345] {
            for threads in [1, 2, 5] {
                let input: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
                let t = Reverse {
                    chunk: 100,
                    seen_last: Mutex::new(Vec::new()),
                };
                let mut out = Vec::new();
                let totals = run(&mut &input[..], &mut out, &t, threads, &|_| {}).unwrap();
                let expected: Vec<u8> = input
                    .chunks(100)
                    .flat_map(|c| c.iter().rev().copied())
                    .collect();
                assert_eq!(out, expected, "len {len} threads {threads}");
                let chunks = len.div_ceil(100).max(1) as u64;
                assert_eq!(totals.chunks, chunks);
                assert_eq!(
                    *t.seen_last.lock().unwrap(),
                    vec![chunks - 1],
                    "one last chunk"
                );
            }
        }
    }

    struct FailAt(u64);
    impl ChunkTransform for FailAt {
        fn input_len(&self) -> usize {
            10
        }
        fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
            if job.index == self.0 {
                return Err(EngineError::Chunk(job.index));
            }
            Ok(())
        }
    }

    #[test]
    fn a_failing_chunk_stops_before_it_is_written() {
        let input = vec![7u8; 1000];
        let mut out = Vec::new();
        let err = run(&mut &input[..], &mut out, &FailAt(17), 3, &|_| {}).unwrap_err();
        assert!(matches!(err, EngineError::Chunk(17)));
        assert!(out.len() <= 170, "nothing from chunk 17 on was written");
    }

    /// Chunk 5 fails slowly, every chunk from 9 on fails at once.
    struct SlowFirstFailure;
    impl ChunkTransform for SlowFirstFailure {
        fn input_len(&self) -> usize {
            10
        }
        fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
            if job.index == 5 {
                std::thread::sleep(std::time::Duration::from_millis(50));
                return Err(EngineError::Chunk(5));
            }
            if job.index >= 9 {
                return Err(EngineError::Chunk(job.index));
            }
            Ok(())
        }
    }

    #[test]
    fn the_first_failing_chunk_in_file_order_is_reported() {
        let input = vec![1u8; 1000];
        for threads in [2, 4, 8] {
            let mut out = Vec::new();
            let err = run(
                &mut &input[..],
                &mut out,
                &SlowFirstFailure,
                threads,
                &|_| {},
            )
            .unwrap_err();
            assert!(matches!(err, EngineError::Chunk(5)), "{threads}: {err}");
            assert_eq!(out.len(), 50, "chunks 0-4 were written, nothing after");
        }
    }

    struct Tails;
    impl ChunkTransform for Tails {
        fn input_len(&self) -> usize {
            4
        }
        fn tail_len(&self) -> usize {
            2
        }
        fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
            job.data = job.prev_tail.clone();
            Ok(())
        }
    }

    #[test]
    fn jobs_carry_the_previous_tail() {
        let input: Vec<u8> = (0..10).collect();
        let mut out = Vec::new();
        run(&mut &input[..], &mut out, &Tails, 2, &|_| {}).unwrap();
        assert_eq!(out, vec![2, 3, 6, 7]);
    }
}
