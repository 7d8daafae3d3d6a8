//! HTTPS: a rustls server configuration from PEM certificate and key files.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use crate::ServiceError;
use crate::config::TlsFiles;

fn tls_error(path: &Path, what: &str, e: impl std::fmt::Display) -> ServiceError {
    ServiceError::Tls(format!("{}: {what}: {e}", path.display()))
}

/// Reads the certificate chain and private key and builds the acceptor
/// (TLS 1.2 and 1.3 with rustls' safe defaults, HTTP/2 and HTTP/1.1 by ALPN).
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServiceError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| tls_error(&files.cert, "cannot read certificates", e))?
        .collect::<Result<_, _>>()
        .map_err(|e| tls_error(&files.cert, "not a PEM certificate chain", e))?;
    if certs.is_empty() {
        return Err(tls_error(&files.cert, "no certificate", "empty PEM file"));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| tls_error(&files.key, "no PEM private key", e))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServiceError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            ServiceError::Tls(format!(
                "{} and {} do not make a usable certificate and key: {e}",
                files.cert.display(),
                files.key.display()
            ))
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
