//! Cluster errors.

use clustercrypt_engine::EngineError;

/// What went wrong in a cluster run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// A rank reported a failure, or could not be reached.
    #[error("node {host} (rank {rank}): {message}")]
    Node {
        /// The rank.
        rank: usize,
        /// Its host name.
        host: String,
        /// What it said.
        message: String,
    },
    /// The ranks run different versions of clustercrypt.
    #[error(
        "node {host} (rank {rank}) runs clustercrypt {theirs}, this node runs {ours}; install the same version everywhere"
    )]
    Version {
        /// The rank.
        rank: usize,
        /// Its host name.
        host: String,
        /// Its version.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// The ranks run on different MPI libraries.
    #[error(
        "node {host} (rank {rank}) runs on MPI library \"{theirs}\", this node on \"{ours}\"; build clustercrypt against the same MPI (Open MPI or MPICH, same release) on every node"
    )]
    MpiLibrary {
        /// The rank.
        rank: usize,
        /// Its host name.
        host: String,
        /// Its MPI library.
        theirs: String,
        /// Ours.
        ours: String,
    },
    /// The transport failed.
    #[error("cluster transport: {0}")]
    Transport(String),
    /// A malformed message arrived.
    #[error("malformed message: {0}")]
    Protocol(String),
    /// A measurement failed or was interrupted.
    #[error("measurement: {0}")]
    Measure(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}
