//! The MPI transport (Open MPI or MPICH through the `mpi` crate).
//!
//! The pipeline's worker threads send and receive at the same time, so MPI is
//! initialised with `MPI_THREAD_MULTIPLE`; each chunk in flight has its own tag,
//! so concurrent receives never take each other's messages, and receives use
//! matched probes (`MPI_Mprobe`), which are safe under concurrency.
#![allow(
    unsafe_code,
    reason = "MPI communicators are used from several threads"
)]

use mpi::Threading;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::error::ClusterError;
use crate::transport::Transport;

/// An MPI job's world communicator.
pub struct MpiTransport {
    // Field order matters: the communicator must go before MPI is finalised.
    world: SimpleCommunicator,
    _universe: Universe,
}

// SAFETY: MPI was initialised with MPI_THREAD_MULTIPLE (checked in `init`), under
// which the MPI standard allows concurrent calls on one communicator from any
// thread; the communicator handle itself is never mutated after creation.
unsafe impl Sync for MpiTransport {}
// SAFETY: as above; the handle may be used from whichever thread holds it.
unsafe impl Send for MpiTransport {}

impl MpiTransport {
    /// Initialises MPI with full thread support. Started without `mpirun`, this is
    /// a job of one rank.
    pub fn init() -> Result<MpiTransport, ClusterError> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| ClusterError::Transport("MPI was already initialised".into()))?;
        if level != Threading::Multiple {
            return Err(ClusterError::Transport(format!(
                "this MPI library gives thread level {level:?}; clustercrypt needs MPI_THREAD_MULTIPLE"
            )));
        }
        let t = MpiTransport {
            world: universe.world(),
            _universe: universe,
        };
        if let Some((var, ranks)) = launcher_size().filter(|&(_, n)| n > 1 && t.size() == 1) {
            return Err(ClusterError::Transport(format!(
                "started by an MPI launcher for {ranks} ranks ({var}={ranks}), but this \
                 binary's MPI library ({}) sees a job of one rank: it was built against another \
                 MPI than the mpirun that started it. Start it with its own MPI's mpirun \
                 (Debian: mpirun.openmpi or mpirun.mpich) and use the same MPI on every node",
                t.library_version()
            )));
        }
        Ok(t)
    }

    /// The first line of `MPI_Get_library_version`: `Open MPI v4.1.4, ...` or
    /// `MPICH Version: 4.0.2` (tabs turned into spaces).
    pub fn library_version(&self) -> String {
        let full = mpi::environment::library_version().unwrap_or_default();
        let line = full.lines().next().unwrap_or("unknown MPI").trim();
        line.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// The job size the launcher announced in the environment, if any: Open MPI's
/// mpirun sets `OMPI_COMM_WORLD_SIZE`, MPICH's Hydra (and Slurm) `PMI_SIZE`.
/// A library that does not understand the launcher starts as a job of one rank.
fn launcher_size() -> Option<(&'static str, usize)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .into_iter()
        .find_map(|var| {
            let n = std::env::var(var).ok()?.trim().parse().ok()?;
            Some((var, n))
        })
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn send(&self, to: usize, tag: u32, bytes: &[u8]) -> Result<(), ClusterError> {
        self.world
            .process_at_rank(to as i32)
            .send_with_tag(bytes, tag as i32);
        Ok(())
    }
    fn recv(&self, from: usize, tag: u32) -> Result<Vec<u8>, ClusterError> {
        let (v, _) = self
            .world
            .process_at_rank(from as i32)
            .receive_vec_with_tag::<u8>(tag as i32);
        Ok(v)
    }
    fn recv_any(&self, tag: u32) -> Result<(usize, Vec<u8>), ClusterError> {
        let (v, status) = self
            .world
            .any_process()
            .receive_vec_with_tag::<u8>(tag as i32);
        Ok((status.source_rank() as usize, v))
    }
}
