//! Cluster mode: the engine's chunks spread over the ranks of an MPI job.
//!
//! Users of small clusters already have MPI; this crate runs on it instead of
//! inventing a transport. [`transport::Transport`] is the small interface the
//! cluster code needs; MPI implements it behind the `mpi` feature, in-process
//! channels implement it for tests. [`distributed`] reuses the engine's
//! pipeline unchanged: only where a chunk is transformed differs.

#![deny(unsafe_code)]

pub mod bench;
pub mod costmodel;
pub mod distributed;
pub mod error;
#[cfg(feature = "mpi")]
pub mod mpi_transport;
pub mod planning;
pub mod transport;

pub use error::ClusterError;
