//! What can go wrong while encrypting or decrypting.

/// An engine error. The messages say what failed in words a user can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The input is not a clustercrypt file.
    #[error("not a clustercrypt file (no clustercrypt header)")]
    NotOurs,
    /// The header is malformed.
    #[error("the header is invalid: {0}")]
    Header(String),
    /// The header MAC did not verify.
    #[error("wrong passphrase or key, or the header was modified")]
    WrongKey,
    /// A chunk did not verify.
    #[error("chunk {0} failed authentication (the file was modified or chunks were reordered)")]
    Chunk(u64),
    /// The file stops before its last chunk.
    #[error("file ends before its last chunk ({0})")]
    Truncated(String),
    /// Bad input to the engine (sizes, parameters).
    #[error("{0}")]
    Input(String),
    /// A legacy raw-mode padding error.
    #[error("bad padding in the last block (wrong key or IV, or not PKCS#7 padded)")]
    Padding,
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> EngineError {
        move |source| EngineError::Io { context, source }
    }
}
