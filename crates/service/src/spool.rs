//! The response side of a job: a queue from the engine to the response body
//! that never makes the engine wait for the client.
//!
//! Many HTTP clients (browsers' `fetch`, Python's `http.client` and
//! `requests`, most upload libraries) send the whole request body before they
//! read any of the response. If the engine's output waited for the client, such
//! a client and the server would wait for each other as soon as the socket
//! buffers filled: a deadlock for any file larger than a few MiB. So output
//! goes to memory up to [`MEMORY_LIMIT`], and beyond that to an anonymous
//! temporary file (unlinked at creation, gone when the request ends); the
//! response drains memory first, then the file, in order. Memory stays bounded
//! whatever the file size; a client that reads as it sends never touches the
//! disk.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tokio::sync::Notify;

use crate::error::ApiError;

/// Output held in memory before spilling to the temporary file.
pub const MEMORY_LIMIT: usize = 8 << 20;
/// Largest piece read back from the file at once.
const FILE_READ: u64 = 1 << 20;

/// Where output that is not in memory lives.
#[derive(Debug, Default)]
struct Disk {
    file: Option<Arc<File>>,
    /// Whether output currently goes to the file (it must, while the file
    /// holds unread data, to keep the order).
    spilling: bool,
    /// File offsets: written by the engine, read by the response.
    written: u64,
    read: u64,
    /// The engine is writing to the file outside the lock.
    writing: bool,
}

#[derive(Debug, Default)]
struct State {
    memory: VecDeque<Bytes>,
    memory_bytes: usize,
    disk: Disk,
    /// Set once by the engine side: `Some(None)` for a clean end.
    end: Option<Option<ApiError>>,
    /// The response was dropped: the client went away.
    gone: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; carry on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The engine's end.
#[derive(Debug)]
pub struct SpoolWriter {
    shared: Arc<Shared>,
}

/// The response's end.
#[derive(Debug)]
pub struct SpoolReader {
    shared: Arc<Shared>,
}

/// A new spool.
pub fn spool() -> (SpoolWriter, SpoolReader) {
    let shared = Arc::new(Shared::default());
    (
        SpoolWriter {
            shared: shared.clone(),
        },
        SpoolReader { shared },
    )
}

/// Why the engine's output could not be queued.
#[derive(Debug)]
pub enum SpoolError {
    /// The response was dropped.
    Gone,
    /// The temporary file could not be written.
    Disk(std::io::Error),
}

impl SpoolWriter {
    /// Queues `bytes` for the response; never waits for the client.
    pub fn push(&self, bytes: &[u8]) -> Result<(), SpoolError> {
        let (file, offset) = {
            let mut s = self.shared.lock();
            if s.gone {
                return Err(SpoolError::Gone);
            }
            if !s.disk.spilling && s.memory_bytes + bytes.len() <= MEMORY_LIMIT {
                s.memory_bytes += bytes.len();
                s.memory.push_back(Bytes::copy_from_slice(bytes));
                drop(s);
                self.shared.ready.notify_one();
                return Ok(());
            }
            if s.disk.file.is_none() {
                // Never named (O_TMPFILE, or created and unlinked at once): a
                // killed server leaves nothing (docs/FORMAT.md, "Writing the output").
                s.disk.file = Some(Arc::new(tempfile::tempfile().map_err(SpoolError::Disk)?));
            }
            s.disk.spilling = true;
            s.disk.writing = true;
            (s.disk.file.clone().expect("created above"), s.disk.written)
        };
        // Outside the lock: the response keeps draining memory meanwhile.
        let result = file.write_all_at(bytes, offset);
        let mut s = self.shared.lock();
        s.disk.writing = false;
        result.map_err(SpoolError::Disk)?;
        s.disk.written += bytes.len() as u64;
        drop(s);
        self.shared.ready.notify_one();
        Ok(())
    }

    /// Ends the output: cleanly, or with the error that aborts the response.
    pub fn finish(self, error: Option<ApiError>) {
        self.shared.lock().end = Some(error);
        self.shared.ready.notify_one();
    }
}

impl Drop for SpoolWriter {
    fn drop(&mut self) {
        // A writer dropped without `finish` (a panic) must not leave the
        // response waiting forever.
        let mut s = self.shared.lock();
        if s.end.is_none() {
            s.end = Some(Some(ApiError::internal("the engine stopped unexpectedly")));
        }
        drop(s);
        self.shared.ready.notify_one();
    }
}

/// What the reader does next.
enum Next {
    Piece(Bytes),
    ReadFile(Arc<File>, u64, u64),
    End(Option<ApiError>),
    Wait,
}

impl SpoolReader {
    /// The next piece of output: `Some(Ok)` bytes, `Some(Err)` once when the
    /// engine failed, `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Bytes, ApiError>> {
        loop {
            let ready = self.shared.ready.notified();
            tokio::pin!(ready);
            // Registered before looking, so a push in between is not missed.
            ready.as_mut().enable();
            match self.look() {
                Next::Piece(b) => return Some(Ok(b)),
                Next::End(None) => return None,
                Next::End(Some(e)) => return Some(Err(e)),
                Next::ReadFile(file, offset, len) => {
                    let read = tokio::task::spawn_blocking(move || {
                        let mut buf = vec![0u8; len as usize];
                        file.read_exact_at(&mut buf, offset).map(|()| buf)
                    })
                    .await;
                    match read {
                        Ok(Ok(buf)) => {
                            let mut s = self.shared.lock();
                            s.disk.read += len;
                            if s.disk.read == s.disk.written && !s.disk.writing {
                                // Caught up: back to memory, reusing the file from its start.
                                s.disk.spilling = false;
                                s.disk.read = 0;
                                s.disk.written = 0;
                            }
                            return Some(Ok(Bytes::from(buf)));
                        }
                        _ => {
                            return Some(Err(ApiError::internal(
                                "cannot read the server's temporary output file",
                            )));
                        }
                    }
                }
                Next::Wait => ready.await,
            }
        }
    }

    fn look(&self) -> Next {
        let mut s = self.shared.lock();
        if let Some(b) = s.memory.pop_front() {
            s.memory_bytes -= b.len();
            return Next::Piece(b);
        }
        if s.disk.read < s.disk.written {
            let len = (s.disk.written - s.disk.read).min(FILE_READ);
            let file = s.disk.file.clone().expect("data was written to it");
            return Next::ReadFile(file, s.disk.read, len);
        }
        if !s.disk.writing
            && let Some(end) = s.end.take()
        {
            // Later calls see a clean end: an error is reported once.
            s.end = Some(None);
            return Next::End(end);
        }
        Next::Wait
    }
}

impl Drop for SpoolReader {
    fn drop(&mut self) {
        self.shared.lock().gone = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(i: usize, len: usize) -> Vec<u8> {
        (0..len).map(|j| (i * 31 + j) as u8).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reader_that_waits_gets_everything_in_order_from_memory_and_disk() {
        let (w, mut r) = spool();
        // 40 MiB written before anything is read: 8 MiB in memory, the rest spilled.
        let pieces = 40;
        let writer = tokio::task::spawn_blocking(move || {
            for i in 0..pieces {
                w.push(&pattern(i, 1 << 20)).unwrap();
            }
            let spilled = w.shared.lock().disk.written;
            w.finish(None);
            spilled
        });
        let spilled = writer.await.unwrap();
        assert!(spilled >= 30 << 20, "spilled {spilled}");
        let mut got = Vec::new();
        while let Some(piece) = r.next().await {
            got.extend_from_slice(&piece.unwrap());
        }
        let want: Vec<u8> = (0..pieces).flat_map(|i| pattern(i, 1 << 20)).collect();
        assert!(got == want, "order or content differs");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reading_while_writing_keeps_the_order_across_spills() {
        let (w, mut r) = spool();
        let pieces = 300;
        let writer = tokio::task::spawn_blocking(move || {
            for i in 0..pieces {
                // Bursts larger than memory force spills and returns to memory.
                w.push(&pattern(i, 200_000 + i)).unwrap();
                if i % 50 == 49 {
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
            }
            w.finish(None);
        });
        let mut got = Vec::new();
        while let Some(piece) = r.next().await {
            got.extend_from_slice(&piece.unwrap());
        }
        writer.await.unwrap();
        let want: Vec<u8> = (0..pieces).flat_map(|i| pattern(i, 200_000 + i)).collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "order or content differs");
    }

    #[tokio::test]
    async fn an_error_comes_after_the_data_and_once() {
        let (w, mut r) = spool();
        w.push(b"abc").unwrap();
        w.finish(Some(ApiError::internal("boom")));
        assert_eq!(&r.next().await.unwrap().unwrap()[..], b"abc");
        assert!(r.next().await.unwrap().is_err());
        assert!(r.next().await.is_none());
    }

    #[tokio::test]
    async fn a_dropped_response_stops_the_writer() {
        let (w, r) = spool();
        drop(r);
        assert!(matches!(w.push(b"x"), Err(SpoolError::Gone)));
    }

    #[tokio::test]
    async fn a_writer_that_vanishes_ends_the_response_with_an_error() {
        let (w, mut r) = spool();
        drop(w);
        assert!(r.next().await.unwrap().is_err());
    }
}
