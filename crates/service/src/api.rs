//! The HTTP API (docs/openapi.yaml): routes, authentication, admission
//! (concurrency slots and a bounded queue), and per-request logs and metrics.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::benchmark::{Bench, BenchState};
use crate::bridge::{self, BytesIn, RunLimits};
use crate::config::{Auth, ServeConfig};
use crate::error::{Aborted, ApiError, ErrorCode};
use crate::metrics::{self, Metrics};
use crate::params::{self, Op, ParamLimits};

/// The web page.
pub const INDEX_HTML: &str = include_str!("../web/index.html");
/// The OpenAPI description of this API.
pub const OPENAPI_YAML: &str = include_str!("../../../docs/openapi.yaml");

/// Status recorded for a request whose client left before the response (nginx's convention).
const CLIENT_CLOSED: u16 = 499;
/// Largest body read and thrown away to answer an early rejection cleanly.
const EARLY_DRAIN_LIMIT: u64 = 32 << 20;

/// Processing slots and the queue in front of them.
#[derive(Debug)]
pub struct Slots {
    semaphore: Arc<Semaphore>,
    waiting: AtomicUsize,
    queue: usize,
}

/// Decrements the waiting count however the wait ends (including a client leaving).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Slots {
    /// `concurrent` slots with a queue of `queue`.
    pub fn new(concurrent: usize, queue: usize) -> Slots {
        Slots {
            semaphore: Arc::new(Semaphore::new(concurrent)),
            waiting: AtomicUsize::new(0),
            queue,
        }
    }

    /// A slot now, or after waiting in the queue; 503 if the queue is full.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        if let Ok(p) = Arc::clone(&self.semaphore).try_acquire_owned() {
            return Ok(p);
        }
        let before = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        if before >= self.queue {
            return Err(ApiError::busy());
        }
        Arc::clone(&self.semaphore)
            .acquire_owned()
            .await
            .map_err(|_| ApiError::busy())
    }
}

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    config: ServeConfig,
    tokens: Option<crate::tokens::LiveTokens>,
    metrics: Metrics,
    slots: Slots,
    bench: Arc<Bench>,
}

impl AppState {
    /// State for `config`, with the benchmark report `bench`.
    pub fn new(config: ServeConfig, bench: Arc<Bench>) -> AppState {
        let slots = Slots::new(config.limits.max_concurrent, config.limits.queue);
        let tokens = match &config.auth {
            Auth::Tokens(store) => Some(crate::tokens::LiveTokens::new(store.clone())),
            Auth::None => None,
        };
        AppState {
            config,
            tokens,
            metrics: Metrics::new(),
            slots,
            bench,
        }
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(tokens) = &self.tokens else {
            return Ok(());
        };
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
            .ok_or_else(ApiError::unauthorized)?;
        if tokens.verify(presented.trim_ascii()) {
            Ok(())
        } else {
            Err(ApiError::unauthorized())
        }
    }
}

/// The routes, with logging and metrics around every request.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route("/openapi.yaml", get(openapi))
        .route("/v1/bench", get(bench))
        .route("/v1/encrypt", post(encrypt))
        .route("/v1/decrypt", post(decrypt))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Bodies stream through the engine; the service enforces its own limit.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(Arc::clone(&state), observe))
        .with_state(state)
}

async fn index() -> Response {
    let mut r = Html(INDEX_HTML).into_response();
    // Everything is inline; the page talks to this server only.
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'; \
             base-uri 'none'",
        ),
    );
    r
}

async fn healthz() -> Response {
    axum::Json(serde_json::json!({ "status": "ok" })).into_response()
}

async fn metrics_text(State(app): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        app.metrics.render(),
    )
        .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml")], OPENAPI_YAML).into_response()
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}

async fn bench(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Err(e) = app.authorize(&headers) {
        return e.into_response();
    }
    match app.bench.state() {
        BenchState::Ready(json) => (
            [(header::CONTENT_TYPE, "application/json")],
            json.as_str().to_owned(),
        )
            .into_response(),
        BenchState::Pending => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "the benchmark of this node is still running",
        )
        .into_response(),
        BenchState::Failed(m) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "bench_failed",
            format!("the benchmark of this node failed: {m}"),
        )
        .into_response(),
    }
}

async fn encrypt(State(app): State<Arc<AppState>>, req: Request) -> Response {
    process(app, Op::Encrypt, req).await
}

async fn decrypt(State(app): State<Arc<AppState>>, req: Request) -> Response {
    process(app, Op::Decrypt, req).await
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Checks everything that needs no body (token, parameters, size, a free
/// slot), then streams the body through the engine.
async fn process(app: Arc<AppState>, op: Op, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let length = content_length(&parts.headers);
    let admitted = async {
        app.authorize(&parts.headers)?;
        let job = params::parse(
            op,
            parts.uri.query(),
            &parts.headers,
            ParamLimits {
                threads: app.config.threads,
                max_kdf_memory_kib: app.config.limits.max_kdf_memory_kib,
            },
        )?;
        if let Some(n) = length
            && n > app.config.limits.max_body
        {
            return Err(ApiError::too_large(app.config.limits.max_body));
        }
        let permit = app.slots.acquire().await?;
        Ok((job, permit))
    }
    .await;
    match admitted {
        Ok((job, permit)) => {
            let limits = RunLimits {
                max_body: app.config.limits.max_body,
                idle: app.config.limits.idle_timeout,
                max_kdf_memory_kib: app.config.limits.max_kdf_memory_kib,
            };
            let counter = parts.extensions.get::<BytesIn>().cloned();
            let executor = app.config.executor.clone();
            bridge::run(job, body, length, limits, permit, counter, executor).await
        }
        Err(mut e) => {
            // A small body still on its way is read and dropped (never
            // processed), so that the client reads this answer rather than a
            // reset. A client that asked to wait (100-continue) sends nothing.
            let expects = parts.headers.contains_key(header::EXPECT);
            let read_all = if !expects && length.is_none_or(|n| n <= EARLY_DRAIN_LIMIT) {
                drain(body, EARLY_DRAIN_LIMIT).await
            } else {
                length == Some(0)
            };
            e.close = !read_all;
            e.into_response()
        }
    }
}

/// Reads and drops up to `limit` body bytes for at most 2 s; whether the body ended.
async fn drain(mut body: Body, limit: u64) -> bool {
    let mut seen = 0u64;
    let until = tokio::time::Instant::now() + Duration::from_secs(2);
    while seen <= limit {
        match tokio::time::timeout_at(until, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                seen += frame.data_ref().map_or(0, |d| d.len() as u64);
            }
            Ok(None) => return true,
            _ => return false,
        }
    }
    false
}

/// The [`Aborted`] error in the chain of a response body error, if any.
fn aborted_code(e: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(a) = c.downcast_ref::<Aborted>() {
            return Some(a.0.code);
        }
        cur = c.source();
    }
    None
}

/// Label for the endpoint, from a fixed set (no unbounded label values).
fn endpoint(path: &str) -> &'static str {
    match path {
        "/v1/encrypt" => "encrypt",
        "/v1/decrypt" => "decrypt",
        "/v1/bench" => "bench",
        "/healthz" => "healthz",
        "/metrics" => "metrics",
        "/openapi.yaml" => "openapi",
        "/" => "index",
        _ => "other",
    }
}

/// One request's bookkeeping; dropped when its response body is finished (or
/// dropped, when the client leaves): then it logs the request and updates the metrics.
struct Finish {
    app: Arc<AppState>,
    method: Method,
    path: String,
    endpoint: &'static str,
    work: bool,
    start: Instant,
    bytes_in: Arc<AtomicU64>,
    bytes_out: u64,
    status: Option<u16>,
    error: Option<&'static str>,
    complete: std::cell::Cell<bool>,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let m = &self.app.metrics;
        let seconds = self.start.elapsed().as_secs_f64();
        let status = self.status.unwrap_or(CLIENT_CLOSED);
        let bytes_in = self.bytes_in.load(Ordering::Relaxed);
        let error = self.error.or(match (self.status, self.complete.get()) {
            (None, _) | (Some(_), false) => Some("client_disconnected"),
            _ => None,
        });
        m.request(self.endpoint, status, seconds);
        m.bytes_in(self.endpoint, bytes_in);
        m.bytes_out(self.endpoint, self.bytes_out);
        if let Some(code) = error {
            m.error(self.endpoint, code);
        }
        if self.work {
            m.in_flight().dec();
        }
        // Method, path, status, sizes, time: never headers or the query string.
        eprintln!(
            "clustercrypt: {} {} {status} in={bytes_in} out={} {:.1}ms{}",
            self.method,
            self.path,
            self.bytes_out,
            seconds * 1000.0,
            error.map(|c| format!(" error={c}")).unwrap_or_default()
        );
    }
}

/// Counts response body bytes, notes an abort, and finishes the request when dropped.
struct CountOut {
    inner: Body,
    finish: Finish,
}

impl http_body::Body for CountOut {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        match &r {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    self.finish.bytes_out += d.len() as u64;
                }
            }
            Poll::Ready(Some(Err(e))) => {
                self.finish.error = Some(aborted_code(e).unwrap_or("internal"));
            }
            Poll::Ready(None) => self.finish.complete.set(true),
            Poll::Pending => {}
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        // hyper asks this instead of polling to the end when a body knows its length.
        let end = self.inner.is_end_stream();
        if end {
            self.finish.complete.set(true);
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

async fn observe(State(app): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let endpoint = endpoint(req.uri().path());
    let work = matches!(endpoint, "encrypt" | "decrypt");
    if work {
        app.metrics.in_flight().inc();
    }
    let bytes_in = BytesIn::default();
    let mut finish = Finish {
        app: Arc::clone(&app),
        method: req.method().clone(),
        path: req.uri().path().chars().take(200).collect(),
        endpoint,
        work,
        start: Instant::now(),
        bytes_in: Arc::clone(&bytes_in.0),
        bytes_out: 0,
        status: None,
        error: None,
        complete: std::cell::Cell::new(false),
    };
    let mut req = req;
    req.extensions_mut().insert(bytes_in);
    let mut response = next.run(req).await;
    finish.status = Some(response.status().as_u16());
    finish.error = response.extensions().get::<ErrorCode>().map(|c| c.0);
    let h = response.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response.map(|inner| Body::new(CountOut { inner, finish }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_queue_is_bounded() {
        let slots = Arc::new(Slots::new(1, 1));
        let held = slots.acquire().await.unwrap();
        let s = Arc::clone(&slots);
        let queued = tokio::spawn(async move { s.acquire().await.map(|_| ()) });
        while slots.waiting.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(slots.acquire().await.unwrap_err().code, "busy");
        drop(held);
        queued.await.unwrap().unwrap();
        assert_eq!(slots.waiting.load(Ordering::SeqCst), 0);
    }
}
