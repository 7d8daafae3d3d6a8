//! The clustercrypt file format and the chunk-processing engine.
//!
//! [`pipeline::run`] reads, transforms on all cores, and writes in order with
//! bounded memory; [`stream`] uses it to encrypt and decrypt files in the
//! authenticated chunked format of [`format`] (docs/FORMAT.md), with keys from
//! [`keys`]; [`raw`] uses it for the unauthenticated legacy modes the studies
//! measured. The CLI, the cluster runner and the service all call these.
//! [`output`] writes files that appear only once they are complete.

#![forbid(unsafe_code)]

pub mod error;
pub mod format;
pub mod keys;
pub mod output;
pub mod pipeline;
pub mod raw;
pub mod stream;
pub mod suite;

pub use error::EngineError;
pub use format::{Header, Kdf, Suite};
pub use keys::{KeySource, MasterKey, Passphrase};
pub use pipeline::{ChunkTransform, Job, Totals};
pub use stream::{EncryptOptions, Randomness, decrypt, encrypt, encrypt_with};
