//! How ranks talk: a small message-passing interface that MPI implements in
//! production and in-process channels implement in tests.

use crate::error::ClusterError;

/// The coordinating rank.
pub const ROOT: usize = 0;

/// Tags at and above this are reserved for control messages.
pub const CONTROL_TAG: u32 = 1 << 20;

/// Point-to-point messaging between the ranks of one job. Implementations
/// must allow several threads to send and receive at once (MPI_THREAD_MULTIPLE).
pub trait Transport: Sync {
    /// This process's rank.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Sends `bytes` to rank `to` with `tag`.
    fn send(&self, to: usize, tag: u32, bytes: &[u8]) -> Result<(), ClusterError>;
    /// Receives the next message from rank `from` with `tag`.
    fn recv(&self, from: usize, tag: u32) -> Result<Vec<u8>, ClusterError>;
    /// Receives the next message with `tag` from any rank; returns the sender.
    fn recv_any(&self, tag: u32) -> Result<(usize, Vec<u8>), ClusterError>;
}

/// In-process transport: each "rank" is a thread, messages go through channels.
pub mod local {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use crossbeam_channel::{Receiver, Sender, unbounded};

    use super::Transport;
    use crate::error::ClusterError;

    type Packet = (usize, u32, Vec<u8>);
    /// Messages that arrived while a thread waited for another (source, tag).
    type Stash = HashMap<(usize, u32), Vec<Vec<u8>>>;

    /// One rank's end of an in-process cluster.
    pub struct LocalTransport {
        rank: usize,
        peers: Vec<Sender<Packet>>,
        inbox: Receiver<Packet>,
        /// Messages received while waiting for another (source, tag).
        stash: Mutex<Stash>,
        wait: Mutex<()>,
    }

    /// Makes `n` connected ranks.
    pub fn cluster(n: usize) -> Vec<LocalTransport> {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| unbounded()).unzip();
        rxs.into_iter()
            .enumerate()
            .map(|(rank, inbox)| LocalTransport {
                rank,
                peers: txs.clone(),
                inbox,
                stash: Mutex::new(HashMap::new()),
                wait: Mutex::new(()),
            })
            .collect()
    }

    impl LocalTransport {
        fn take(&self, pred: impl Fn(usize, u32) -> bool) -> Option<(usize, u32, Vec<u8>)> {
            let mut stash = self.stash.lock().expect("stash");
            let key = stash
                .iter()
                .find(|((s, t), v)| pred(*s, *t) && !v.is_empty())
                .map(|(k, _)| *k)?;
            let v = stash.get_mut(&key)?.remove(0);
            Some((key.0, key.1, v))
        }

        fn recv_matching(
            &self,
            pred: impl Fn(usize, u32) -> bool,
        ) -> Result<(usize, Vec<u8>), ClusterError> {
            loop {
                if let Some((s, _, v)) = self.take(&pred) {
                    return Ok((s, v));
                }
                // One thread at a time pulls from the inbox and sorts messages.
                let _guard = self.wait.lock().expect("wait");
                if let Some((s, _, v)) = self.take(&pred) {
                    return Ok((s, v));
                }
                let (s, t, v) = self
                    .inbox
                    .recv_timeout(std::time::Duration::from_secs(30))
                    .map_err(|_| ClusterError::Transport("no message within 30 s".into()))?;
                if pred(s, t) {
                    return Ok((s, v));
                }
                self.stash
                    .lock()
                    .expect("stash")
                    .entry((s, t))
                    .or_default()
                    .push(v);
            }
        }
    }

    impl Transport for LocalTransport {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.peers.len()
        }
        fn send(&self, to: usize, tag: u32, bytes: &[u8]) -> Result<(), ClusterError> {
            self.peers[to]
                .send((self.rank, tag, bytes.to_vec()))
                .map_err(|_| ClusterError::Transport(format!("rank {to} is gone")))
        }
        fn recv(&self, from: usize, tag: u32) -> Result<Vec<u8>, ClusterError> {
            self.recv_matching(|s, t| s == from && t == tag)
                .map(|(_, v)| v)
        }
        fn recv_any(&self, tag: u32) -> Result<(usize, Vec<u8>), ClusterError> {
            self.recv_matching(|_, t| t == tag)
        }
    }
}
