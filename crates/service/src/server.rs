//! Binding, accepting connections (HTTP or HTTPS, HTTP/1.1 and HTTP/2), and
//! graceful shutdown: stop accepting, let requests in flight finish within
//! the grace period, then return.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::ServiceError;
use crate::api::{self, AppState};
use crate::benchmark::Bench;
use crate::config::{Auth, ServeConfig};

/// Longest TLS handshake before the connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    tls: Option<TlsAcceptor>,
    state: Arc<AppState>,
    bench: Arc<Bench>,
    header_timeout: Duration,
    grace: Duration,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Checks the configuration, loads the TLS files and the benchmark report
    /// (or starts measuring), and binds the address.
    pub async fn bind(config: ServeConfig) -> Result<Server, ServiceError> {
        config.validate()?;
        let tls = config.tls.as_ref().map(crate::tls::acceptor).transpose()?;
        let bench = Bench::start(&config.bench)?;
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServiceError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let local_addr = listener.local_addr()?;
        let header_timeout = config.limits.idle_timeout;
        let grace = config.limits.shutdown_grace;
        Ok(Server {
            listener,
            local_addr,
            tls,
            state: Arc::new(AppState::new(config, Arc::clone(&bench))),
            bench,
            header_timeout,
            grace,
        })
    }

    /// The bound address (the real port when the configuration said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://ADDR` or `https://ADDR`.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.local_addr)
    }

    /// Serves until `shutdown` completes, then waits for requests in flight
    /// (up to the grace period).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ServiceError> {
        let Server {
            listener,
            tls,
            state,
            bench,
            header_timeout,
            grace,
            ..
        } = self;
        let router = api::router(state);
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let watcher = graceful.watcher();
                        let tls = tls.clone();
                        let router = router.clone();
                        tokio::spawn(connection(stream, tls, router, watcher, header_timeout));
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: wait rather than spin.
                        eprintln!("clustercrypt: cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        bench.cancel();
        let open = graceful.count();
        if open > 0 {
            eprintln!(
                "clustercrypt: shutting down: waiting up to {} s for {open} open connection(s)",
                grace.as_secs()
            );
        }
        if tokio::time::timeout(grace, graceful.shutdown())
            .await
            .is_err()
        {
            eprintln!(
                "clustercrypt: shutting down: requests still running after the grace period were dropped"
            );
        }
        Ok(())
    }
}

async fn connection(
    stream: TcpStream,
    tls: Option<TlsAcceptor>,
    router: axum::Router,
    watcher: Watcher,
    header_timeout: Duration,
) {
    let _ = stream.set_nodelay(true);
    let service = TowerToHyperService::new(router);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder.http2().timer(TokioTimer::new());
    // Connection errors (resets, bad requests) end that connection only.
    match tls {
        None => {
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let _ = watcher.watch(conn).await;
        }
        Some(acceptor) => {
            let Ok(Ok(stream)) =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
            else {
                return;
            };
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let _ = watcher.watch(conn).await;
        }
    }
}

/// Binds, prints `clustercrypt: listening on URL` on stderr, and serves until
/// `shutdown` completes.
pub async fn serve(
    config: ServeConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServiceError> {
    let no_auth = matches!(config.auth, Auth::None);
    let server = Server::bind(config).await?;
    if no_auth {
        eprintln!(
            "clustercrypt: WARNING: --no-auth: anyone who can connect to {} may use this service",
            server.local_addr()
        );
    }
    eprintln!("clustercrypt: listening on {}", server.url());
    server.run(shutdown).await?;
    eprintln!("clustercrypt: stopped");
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}

/// Builds a multi-threaded tokio runtime and serves until SIGINT or SIGTERM.
pub fn run_blocking(config: ServeConfig) -> Result<(), ServiceError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("clustercrypt-serve")
        .build()?;
    let result = runtime.block_on(serve(config, shutdown_signal()));
    // Engines still running after the grace period must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}
