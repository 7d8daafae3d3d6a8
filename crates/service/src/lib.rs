//! `clustercrypt serve`: encryption as a network service.
//!
//! An HTTP API (docs/openapi.yaml, docs/SERVICE.md) that streams request
//! bodies through the same engine as `clustercrypt encrypt` and `decrypt`, in
//! bounded memory whatever the size; bearer tokens ([`tokens`]); limits on
//! body size, concurrency and idle clients ([`config`]); Prometheus metrics
//! ([`metrics`]); HTTPS with rustls ([`tls`]); a self-contained web page; and
//! graceful shutdown ([`server`]).
//!
//! The flow of a request: [`api`] checks the token, the parameters
//! ([`params`]), the declared size and a free slot before reading any of the
//! body; [`bridge`] then runs the engine on a blocking thread between the
//! request body and the response body.

#![forbid(unsafe_code)]

pub mod api;
pub mod benchmark;
pub mod bridge;
pub mod config;
pub mod error;
pub mod executor;
pub mod metrics;
pub mod params;
pub mod server;
pub mod spool;
pub mod tls;
pub mod tokens;

pub use config::{Auth, BenchSource, Limits, ServeConfig, TlsFiles};
pub use error::{ApiError, ServiceError};
pub use server::{Server, run_blocking, serve, shutdown_signal};
