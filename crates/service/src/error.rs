//! Errors: of the service as a whole ([`ServiceError`]) and of one request
//! ([`ApiError`], answered as `{"error": "...", "code": "..."}`).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use clustercrypt_engine::EngineError;

/// Why the service cannot start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The configuration asks for something unsafe or impossible (a usage error).
    #[error("{0}")]
    Config(String),
    /// The token file.
    #[error(transparent)]
    Tokens(#[from] crate::tokens::TokenError),
    /// The TLS certificate or key.
    #[error("TLS: {0}")]
    Tls(String),
    /// The benchmark report file, or starting the benchmark.
    #[error("benchmark: {0}")]
    Bench(String),
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Other I/O (the runtime, accepting connections).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl ServiceError {
    /// Whether this is the user's mistake in the configuration (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ServiceError::Config(_)
                | ServiceError::Tokens(_)
                | ServiceError::Tls(_)
                | ServiceError::Bench(_)
        )
    }
}

/// The error code of a response, kept as a response extension for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub &'static str);

/// A request that failed before its response started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable snake_case code for programs.
    pub code: &'static str,
    /// What went wrong, for people; never holds a secret.
    pub message: String,
    /// The request body was not read to its end: the connection cannot carry
    /// another request, so the response says `Connection: close`.
    pub close: bool,
}

impl ApiError {
    /// A new error.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            close: false,
        }
    }

    /// 400 `bad_request`: malformed parameters or key headers.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid token is required: Authorization: Bearer <token>",
        )
    }

    /// 413 `payload_too_large`.
    pub fn too_large(limit: u64) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than this server's limit of {limit} bytes"),
        )
    }

    /// 503 `busy`.
    pub fn busy() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "the server is busy; try again shortly",
        )
    }

    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// What an engine error means for the client.
    pub fn from_engine(e: &EngineError) -> ApiError {
        let (status, code) = match e {
            EngineError::NotOurs => (StatusCode::BAD_REQUEST, "not_clustercrypt"),
            EngineError::Header(_) => (StatusCode::BAD_REQUEST, "bad_header"),
            EngineError::WrongKey => (StatusCode::UNPROCESSABLE_ENTITY, "wrong_key"),
            EngineError::Chunk(_) => (StatusCode::UNPROCESSABLE_ENTITY, "unauthentic"),
            EngineError::Truncated(_) => (StatusCode::UNPROCESSABLE_ENTITY, "truncated"),
            EngineError::Padding => (StatusCode::UNPROCESSABLE_ENTITY, "bad_padding"),
            EngineError::Input(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "code": self.code });
        let mut r = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"clustercrypt\""),
            );
        }
        if self.close {
            // HTTP/1.1 only; hyper leaves connection headers out of HTTP/2.
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        r.extensions_mut().insert(ErrorCode(self.code));
        r
    }
}

/// The error a streamed response body ends with when processing fails after
/// the response started; hyper then aborts the response, so the client sees
/// an incomplete body, never a clean end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aborted(pub ApiError);

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "response aborted: {}", self.0)
    }
}

impl std::error::Error for Aborted {}
