//! What the server is told to do: address, authentication, TLS, limits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::ServiceError;
use crate::tokens::TokenStore;

/// Default largest request body: 16 GiB.
pub const DEFAULT_MAX_BODY: u64 = 16 << 30;
/// Default requests waiting for a processing slot.
pub const DEFAULT_QUEUE: usize = 64;
/// Default idle timeout on request bodies.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long shutdown waits for requests in flight.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default cap on the Argon2 memory a request may make the server spend (1 GiB).
pub const DEFAULT_MAX_KDF_MEMORY_KIB: u32 = 1 << 20;

/// Who may use the service.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Requests need `Authorization: Bearer <token>` with one of these tokens.
    Tokens(TokenStore),
    /// Anyone who can connect (allowed on loopback addresses only).
    None,
}

/// PEM files for HTTPS.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// Certificate chain, leaf first.
    pub cert: PathBuf,
    /// Private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// Where `GET /v1/bench` gets its report.
#[derive(Debug, Clone)]
pub enum BenchSource {
    /// A report file written by `clustercrypt bench --format json`.
    File(PathBuf),
    /// A short benchmark of this node, run in the background at start-up.
    Measure,
    /// A report measured by the caller (`serve --cluster` measures every node first).
    Given(Box<clustercrypt_bench::report::Report>),
}

/// Limits that protect the server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body, bytes.
    pub max_body: u64,
    /// Requests processed at once.
    pub max_concurrent: usize,
    /// Requests waiting for a slot; beyond that, 503.
    pub queue: usize,
    /// A body that sends nothing for this long is dropped.
    pub idle_timeout: Duration,
    /// How long shutdown waits for requests in flight.
    pub shutdown_grace: Duration,
    /// Largest Argon2 memory, KiB, for encryption parameters and for headers being decrypted.
    pub max_kdf_memory_kib: u32,
}

impl Default for Limits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Limits {
            max_body: DEFAULT_MAX_BODY,
            max_concurrent: 2 * cores,
            queue: DEFAULT_QUEUE,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_kdf_memory_kib: DEFAULT_MAX_KDF_MEMORY_KIB,
        }
    }
}

/// Everything `serve` needs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// Who may use it.
    pub auth: Auth,
    /// HTTPS certificate and key; plain HTTP without them.
    pub tls: Option<TlsFiles>,
    /// Allow plain HTTP on an address other than loopback.
    pub insecure: bool,
    /// Limits.
    pub limits: Limits,
    /// Worker threads of each encryption or decryption.
    pub threads: usize,
    /// Source of the `GET /v1/bench` report.
    pub bench: BenchSource,
    /// Where chunks are transformed: this machine, or a cluster.
    pub executor: std::sync::Arc<dyn crate::executor::Executor>,
}

impl ServeConfig {
    /// A configuration with the default limits, all cores per request and a
    /// background benchmark.
    pub fn new(listen: SocketAddr, auth: Auth) -> ServeConfig {
        ServeConfig {
            listen,
            auth,
            tls: None,
            insecure: false,
            limits: Limits::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            bench: BenchSource::Measure,
            executor: std::sync::Arc::new(crate::executor::Local),
        }
    }

    /// Checks the combination before anything is bound: no unauthenticated
    /// service beyond loopback, no plain HTTP beyond loopback without `insecure`.
    pub fn validate(&self) -> Result<(), ServiceError> {
        let loopback = self.listen.ip().is_loopback();
        if matches!(self.auth, Auth::None) && !loopback {
            return Err(ServiceError::Config(format!(
                "--no-auth is allowed on loopback addresses only, not {}",
                self.listen.ip()
            )));
        }
        if self.tls.is_none() && !loopback && !self.insecure {
            return Err(ServiceError::Config(format!(
                "{} is not a loopback address: give --tls-cert and --tls-key, or --insecure \
                 to send passphrases and data in clear text over the network",
                self.listen.ip()
            )));
        }
        let l = &self.limits;
        if l.max_body == 0 || l.max_concurrent == 0 || self.threads == 0 {
            return Err(ServiceError::Config(
                "--max-body, --max-concurrent and --threads must be positive".into(),
            ));
        }
        if l.idle_timeout.is_zero() {
            return Err(ServiceError::Config(
                "--idle-timeout must be positive".into(),
            ));
        }
        if l.max_kdf_memory_kib < 64 {
            return Err(ServiceError::Config(
                "the Argon2 memory cap must be at least 64 KiB".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposure_needs_tls_and_tokens() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let public: SocketAddr = "0.0.0.0:8443".parse().unwrap();
        assert!(ServeConfig::new(local, Auth::None).validate().is_ok());
        assert!(ServeConfig::new(public, Auth::None).validate().is_err());
        let tokens = Auth::Tokens(TokenStore::default());
        let mut c = ServeConfig::new(public, tokens);
        assert!(c.validate().is_err());
        c.insecure = true;
        assert!(c.validate().is_ok());
        c.insecure = false;
        c.tls = Some(TlsFiles {
            cert: "c.pem".into(),
            key: "k.pem".into(),
        });
        assert!(c.validate().is_ok());
        c.limits.max_concurrent = 0;
        assert!(c.validate().is_err());
    }
}
