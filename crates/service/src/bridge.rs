//! Streaming between async HTTP bodies and the synchronous engine, in bounded memory.
//!
//! The engine runs on a blocking thread ([`tokio::task::spawn_blocking`]). It
//! reads the request body through [`BodyReader`], a `Read` that waits for one
//! body frame at a time, and writes through [`ChannelWriter`], a `Write` into a
//! [`spool`](crate::spool) that the response body drains. A slow upload stalls
//! the engine's reads; a client that does not read while it uploads (most do
//! not) makes the spool spill to a temporary file rather than stall the engine,
//! which would deadlock with such a client. So a request holds at most the
//! engine's pipeline buffers, the spool's memory and one body frame, whatever
//! the size of the data.
//!
//! The response status is decided by the first thing the engine produces: its
//! first output bytes mean 200 and the body streams from there; an error
//! before any output (a bad header, a wrong key, a first chunk that does not
//! verify) is answered with its status and a JSON error. An error after the
//! response started ends the body stream with an error, so hyper aborts the
//! response: the client sees an incomplete body, never a clean end.

use std::io::{Read, Write};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::{Buf, Bytes};
use clustercrypt_engine::format::{HEADER_LEN, Header, Kdf};
use clustercrypt_engine::{EngineError, Randomness, Totals, pipeline, raw, stream};
use futures_util::StreamExt;
use http_body_util::BodyExt;
use tokio::runtime::Handle;
use tokio::sync::OwnedSemaphorePermit;

use crate::error::{Aborted, ApiError};
use crate::executor::Executor;
use crate::params::{Job, WARNING_HEADER};
use crate::spool::{SpoolError, SpoolReader, SpoolWriter, spool};
/// After an error before the response, read and discard up to this much of
/// the rest of the body, so that the client gets to read the error instead of
/// a connection reset while it is still sending.
const DRAIN_LIMIT: u64 = 32 << 20;
/// ... for at most this long.
const DRAIN_TIME: Duration = Duration::from_secs(2);
/// Pause before aborting a response, for what was written to reach the client.
const ABORT_FLUSH: Duration = Duration::from_millis(20);

/// Why the request body stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputFailure {
    /// More than the body limit.
    TooLarge,
    /// Nothing arrived for the idle timeout.
    Idle,
    /// The client went away before the end of the body.
    Disconnected,
}

/// Why the response could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputFailure {
    /// The response body was dropped: the client went away.
    Gone,
    /// The spool's temporary file could not be written (disk full).
    Disk,
}

/// Counts the request body bytes the engine read (the `bytes_in` metric):
/// bytes read only to be dropped after a rejection are not counted.
#[derive(Debug, Clone, Default)]
pub struct BytesIn(pub Arc<AtomicU64>);

/// A `Read` over an HTTP request body, for the engine's blocking threads.
pub struct BodyReader {
    body: Body,
    handle: Handle,
    pending: Bytes,
    received: u64,
    counter: Option<BytesIn>,
    /// From Content-Length, to tell a complete body from a dropped connection.
    expected: Option<u64>,
    max: u64,
    idle: Duration,
    failure: Option<InputFailure>,
    ended: bool,
}

fn failure_error(f: InputFailure) -> std::io::Error {
    use std::io::ErrorKind;
    match f {
        InputFailure::TooLarge => std::io::Error::new(ErrorKind::InvalidData, "body too large"),
        InputFailure::Idle => std::io::Error::new(ErrorKind::TimedOut, "body idle timeout"),
        InputFailure::Disconnected => {
            std::io::Error::new(ErrorKind::ConnectionAborted, "client disconnected")
        }
    }
}

impl BodyReader {
    /// Reads `body` of at most `max` bytes, waiting at most `idle` for each
    /// frame; `expected` is its Content-Length, `counter` counts what is read.
    pub fn new(
        body: Body,
        handle: Handle,
        expected: Option<u64>,
        max: u64,
        idle: Duration,
        counter: Option<BytesIn>,
    ) -> BodyReader {
        BodyReader {
            body,
            handle,
            pending: Bytes::new(),
            received: 0,
            counter,
            expected,
            max,
            idle,
            failure: None,
            ended: false,
        }
    }

    fn fail(&mut self, f: InputFailure) -> std::io::Error {
        self.failure = Some(f);
        failure_error(f)
    }

    /// Waits for the next data frame; `Ok(false)` at the end of the body.
    fn next_frame(&mut self, wait: Duration) -> std::io::Result<bool> {
        loop {
            // The timer is made inside `block_on`, where the runtime is entered
            // (the pipeline's reader thread is not a runtime thread).
            let body = &mut self.body;
            let next = self
                .handle
                .block_on(async { tokio::time::timeout(wait, body.frame()).await });
            match next {
                Err(_) => return Err(self.fail(InputFailure::Idle)),
                Ok(None) => {
                    if self.expected.is_some_and(|n| self.received < n) {
                        return Err(self.fail(InputFailure::Disconnected));
                    }
                    self.ended = true;
                    return Ok(false);
                }
                Ok(Some(Err(_))) => return Err(self.fail(InputFailure::Disconnected)),
                Ok(Some(Ok(frame))) => {
                    // Trailers carry no data; skip them.
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    self.received += data.len() as u64;
                    if self.received > self.max {
                        return Err(self.fail(InputFailure::TooLarge));
                    }
                    self.pending = data;
                    return Ok(true);
                }
            }
        }
    }

    /// Reads and discards what is left of the body, up to `limit` bytes and `time`.
    fn drain(&mut self, limit: u64, time: Duration) {
        let deadline = Instant::now() + time;
        let stop = self.received.saturating_add(limit);
        while self.failure.is_none() && !self.ended && self.received <= stop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.next_frame(left).is_err() {
                return;
            }
        }
    }
}

impl Read for BodyReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if let Some(f) = self.failure {
            return Err(failure_error(f));
        }
        while self.pending.is_empty() {
            if self.ended || !self.next_frame(self.idle)? {
                return Ok(0);
            }
        }
        let n = out.len().min(self.pending.len());
        out[..n].copy_from_slice(&self.pending[..n]);
        self.pending.advance(n);
        if let Some(c) = &self.counter {
            c.0.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// A `Write` into the response body, for the engine's blocking threads.
pub struct ChannelWriter {
    spool: SpoolWriter,
    sent: u64,
    failure: Option<OutputFailure>,
}

impl ChannelWriter {
    fn new(spool: SpoolWriter) -> ChannelWriter {
        ChannelWriter {
            spool,
            sent: 0,
            failure: None,
        }
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::io::ErrorKind;
        if buf.is_empty() {
            return Ok(0);
        }
        if self.failure.is_none()
            && let Err(e) = self.spool.push(buf)
        {
            self.failure = Some(match e {
                SpoolError::Gone => OutputFailure::Gone,
                SpoolError::Disk(_) => OutputFailure::Disk,
            });
        }
        match self.failure {
            None => {
                self.sent += buf.len() as u64;
                Ok(buf.len())
            }
            Some(OutputFailure::Gone) => Err(std::io::Error::new(
                ErrorKind::BrokenPipe,
                "the client went away",
            )),
            Some(OutputFailure::Disk) => Err(std::io::Error::new(
                ErrorKind::StorageFull,
                "cannot spool the output",
            )),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a job needs besides its parameters.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// Largest body, bytes.
    pub max_body: u64,
    /// Idle timeout of body reads and response writes.
    pub idle: Duration,
    /// Largest Argon2 memory a header being decrypted may ask for, KiB.
    pub max_kdf_memory_kib: u32,
}

/// A job's failure: from the engine, or found by the service.
enum Failure {
    Engine(EngineError),
    Api(ApiError),
}

fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> Result<usize, EngineError> {
    pipeline::read_full(input, buf).map_err(EngineError::io("cannot read the input"))
}

fn execute(
    job: &Job,
    input: &mut BodyReader,
    output: &mut ChannelWriter,
    limits: RunLimits,
    executor: &dyn Executor,
) -> Result<Totals, Failure> {
    let size = input.expected;
    match job {
        Job::Encrypt { key, options } => {
            // Wait for the first body byte before answering: a client that sent
            // `Expect: 100-continue` gets its 100 before the 200 (else curl waits
            // a second), and an empty or stalled upload is found before the response.
            let mut first = [0u8; 1];
            let n = read_full(input, &mut first).map_err(Failure::Engine)?;
            let mut whole = Read::chain(&first[..n], input);
            let randomness = Randomness::generate().map_err(Failure::Engine)?;
            let (head, sealer) =
                stream::prepare_encrypt(key, options, randomness).map_err(Failure::Engine)?;
            output
                .write_all(&head)
                .map_err(|e| Failure::Engine(EngineError::io("cannot write the output")(e)))?;
            executor
                .run(
                    &mut whole,
                    output,
                    &sealer,
                    &|| sealer.describe(),
                    size,
                    options.threads,
                )
                .map_err(Failure::Engine)
        }
        Job::Decrypt { key, threads } => {
            // Look at the header's Argon2 cost before paying it: a file may ask for 4 GiB.
            let mut head = [0u8; HEADER_LEN];
            let n = read_full(input, &mut head).map_err(Failure::Engine)?;
            let (header, _) = Header::parse(&head[..n]).map_err(Failure::Engine)?;
            if let Kdf::Argon2id { memory_kib, .. } = header.kdf
                && memory_kib > limits.max_kdf_memory_kib
            {
                return Err(Failure::Api(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "kdf_too_costly",
                    format!(
                        "the file's Argon2 cost ({memory_kib} KiB) is above this server's limit \
                         ({} KiB)",
                        limits.max_kdf_memory_kib
                    ),
                )));
            }
            let mut whole = Read::chain(&head[..n], input);
            let (_, opener) = stream::open_header(&mut whole, key).map_err(Failure::Engine)?;
            executor
                .run(
                    &mut whole,
                    output,
                    &opener,
                    &|| opener.describe(),
                    size,
                    *threads,
                )
                .map_err(Failure::Engine)
        }
        Job::Raw { params, encrypt } => {
            let transform = raw::transform_for(params, *encrypt).map_err(Failure::Engine)?;
            executor
                .run(
                    input,
                    output,
                    &*transform,
                    &|| raw::describe(params, *encrypt),
                    size,
                    params.threads,
                )
                .map_err(Failure::Engine)
        }
    }
}

/// The client-facing error of a failed job.
fn classify(
    failure: Failure,
    input: &BodyReader,
    output: &ChannelWriter,
    limits: RunLimits,
) -> ApiError {
    let e = match failure {
        Failure::Api(a) => return a,
        Failure::Engine(e) => e,
    };
    if let EngineError::Io { .. } = e {
        match (input.failure, output.failure) {
            (Some(InputFailure::TooLarge), _) => return ApiError::too_large(limits.max_body),
            (Some(InputFailure::Idle), _) => {
                return ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    format!("no body data arrived for {} s", limits.idle.as_secs_f64()),
                );
            }
            (Some(InputFailure::Disconnected), _) | (_, Some(OutputFailure::Gone)) => {
                return ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "client_disconnected",
                    "the client went away",
                );
            }
            (_, Some(OutputFailure::Disk)) => {
                return ApiError::internal("the server cannot store the output (disk full?)");
            }
            (None, None) => {}
        }
    }
    ApiError::from_engine(&e)
}

/// Runs `job` over `body` on a blocking thread, holding `permit` until the
/// engine is done, and answers with the streamed result or the error.
pub async fn run(
    job: Job,
    body: Body,
    content_length: Option<u64>,
    limits: RunLimits,
    permit: OwnedSemaphorePermit,
    counter: Option<BytesIn>,
    executor: Arc<dyn Executor>,
) -> Response {
    let (writer, mut reader) = spool();
    let warning = job.warning();
    let handle = Handle::current();
    // Detached: the task ends when the engine does, whether or not anyone
    // still waits for the response (a client that left makes reads and writes fail).
    drop(tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut input = BodyReader::new(
            body,
            handle.clone(),
            content_length,
            limits.max_body,
            limits.idle,
            counter,
        );
        let mut output = ChannelWriter::new(writer);
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            execute(&job, &mut input, &mut output, limits, &*executor)
        }));
        drop(job); // wipes the key now rather than after the drain
        let mut error = match result {
            Ok(Ok(_)) => return output.spool.finish(None),
            Ok(Err(f)) => classify(f, &input, &output, limits),
            Err(_) => ApiError::internal("the engine failed unexpectedly"),
        };
        if output.sent == 0 {
            input.drain(DRAIN_LIMIT, DRAIN_TIME);
        }
        error.close = !input.ended;
        // Before the response this becomes its status; after, it aborts the body.
        output.spool.finish(Some(error));
    }));

    let first = match reader.next().await {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return e.into_response(),
        // Finished without output: an empty input in a raw mode.
        None => Bytes::new(),
    };
    let rest = futures_util::stream::unfold(reader, |mut r: SpoolReader| async move {
        r.next().await.map(|piece| (piece, r))
    });
    let body = futures_util::stream::once(std::future::ready(Ok(first)))
        .chain(rest)
        .then(|piece| async move {
            if piece.is_err() {
                // hyper drops the connection on a body error, possibly with the
                // status line still in its write buffer; while this stream is
                // pending it flushes, so the client sees "200, then cut off"
                // rather than a connection that closed without an answer.
                tokio::time::sleep(ABORT_FLUSH).await;
            }
            piece.map_err(Aborted)
        });
    let mut response = Body::from_stream(body).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Some(w) = warning.and_then(|w| HeaderValue::from_str(&w).ok()) {
        h.insert(WARNING_HEADER, w);
    }
    response
}
