//! A cost model for distributed runs: from each node's measured throughput and
//! the measured link, predict a local run and a distributed one before
//! starting, use only the nodes that help, and say why.
//!
//! Rank 0 reads and writes everything, so its own capacity is shared between
//! transforming chunks itself (1/R₀ seconds per byte) and shipping chunks out
//! and back (`cpu_per_byte` seconds per byte: network stack, copies). With x
//! bytes/s done locally and y bytes/s shipped, the best rate solves
//!
//! ```text
//! maximise x + y   subject to   x/R₀ + y·k ≤ 1,   y ≤ B (link),   y ≤ ΣRᵢ (other nodes)
//! ```
//!
//! a linear programme whose answer is at a corner: when shipping a byte costs
//! rank 0 more than transforming it (k ≥ 1/R₀, cheap work such as one round of
//! TEA), stay local; otherwise ship y = min(B, ΣRᵢ, 1/k) and keep
//! x = R₀·(1 − y·k) for rank 0. A fixed start-up cost (launch, handshake, the
//! first chunk's round trip) is added to distributed runs, which is why small
//! files stay local. This is the TEA study's lesson: over a 100 Mbit/s link one
//! round of TEA is faster on one node, 32 rounds are faster on the cluster.

/// A node and its measured throughput (bytes/s on all its threads).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Host name.
    pub host: String,
    /// Transform throughput, bytes per second.
    pub rate: f64,
}

/// The measured link between rank 0 and the others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Bytes per second each way (full duplex) through rank 0's network port.
    pub bandwidth: f64,
    /// One-way latency, seconds.
    pub latency: f64,
    /// Rank 0's CPU seconds per byte shipped out and back.
    pub cpu_per_byte: f64,
    /// Fixed start-up cost of a distributed run, seconds.
    pub startup: f64,
}

/// The decision and the numbers behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Indices (into the `others` given) of the nodes to use; empty: stay local.
    pub nodes: Vec<usize>,
    /// Predicted seconds of a local run.
    pub local_seconds: f64,
    /// Predicted seconds of the chosen run.
    pub seconds: f64,
    /// Bytes/s rank 0 transforms itself in the chosen run.
    pub local_rate: f64,
    /// Bytes/s shipped to other nodes in the chosen run.
    pub shipped_rate: f64,
    /// Which bound limits the distributed rate.
    pub bound: Bound,
    /// Why, in words.
    pub reason: String,
}

/// What limits a distributed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Staying local.
    Local,
    /// The link's bandwidth.
    Link,
    /// The other nodes' compute.
    Compute,
    /// Rank 0's CPU spent on shipping.
    Coordinator,
}

/// Best split for a set of remote rates: (local bytes/s, shipped bytes/s, bound).
fn split(root: f64, remote: f64, link: &Link) -> (f64, f64, Bound) {
    if root <= 0.0 || link.cpu_per_byte >= 1.0 / root || remote <= 0.0 {
        return (root, 0.0, Bound::Local);
    }
    let coordinator = if link.cpu_per_byte > 0.0 {
        1.0 / link.cpu_per_byte
    } else {
        f64::INFINITY
    };
    let (y, bound) = [
        (link.bandwidth, Bound::Link),
        (remote, Bound::Compute),
        (coordinator, Bound::Coordinator),
    ]
    .into_iter()
    .fold(
        (f64::INFINITY, Bound::Link),
        |a, b| if b.0 < a.0 { b } else { a },
    );
    (root * (1.0 - y * link.cpu_per_byte), y, bound)
}

/// Plans a run over `size` bytes: rank 0 is `root`, the candidates `others`.
pub fn plan(size: u64, root: &Node, others: &[Node], link: &Link) -> Plan {
    let s = size as f64;
    let local_seconds = s / root.rate.max(f64::MIN_POSITIVE);
    let mut order: Vec<usize> = (0..others.len()).collect();
    order.sort_by(|&a, &b| others[b].rate.total_cmp(&others[a].rate));
    // Add the fastest nodes one by one while each makes the run at least 2% faster.
    let mut best = (Vec::new(), local_seconds, root.rate, 0.0, Bound::Local);
    let mut chosen = Vec::new();
    let mut remote = 0.0;
    for i in order {
        chosen.push(i);
        remote += others[i].rate;
        let (x, y, bound) = split(root.rate, remote, link);
        if y == 0.0 {
            break;
        }
        let t = s / (x + y) + link.startup + 2.0 * link.latency;
        if t < best.1 * 0.98 {
            best = (chosen.clone(), t, x, y, bound);
        } else {
            break;
        }
    }
    let (nodes, seconds, local_rate, shipped_rate, bound) = best;
    let mib = |r: f64| r / 1_048_576.0;
    let reason = if nodes.is_empty() {
        if link.cpu_per_byte >= 1.0 / root.rate {
            format!(
                "staying local: shipping a byte costs rank 0 more ({:.2} ns) than transforming it ({:.2} ns at {:.1} MiB/s)",
                link.cpu_per_byte * 1e9,
                1e9 / root.rate,
                mib(root.rate)
            )
        } else {
            format!(
                "staying local: the start-up cost ({:.2} s) outweighs what other nodes would save on {:.1} MiB",
                link.startup,
                s / 1_048_576.0
            )
        }
    } else {
        format!(
            "using {} more node(s): rank 0 {:.1} MiB/s + shipped {:.1} MiB/s, bound by {}",
            nodes.len(),
            mib(local_rate),
            mib(shipped_rate),
            match bound {
                Bound::Link => "the link",
                Bound::Compute => "the other nodes' compute",
                Bound::Coordinator => "rank 0's CPU",
                Bound::Local => "nothing",
            }
        )
    };
    Plan {
        nodes,
        local_seconds,
        seconds,
        local_rate,
        shipped_rate,
        bound,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    /// The TEA study's setting: three Raspberry Pi 3 boards on a 100 Mbit/s router.
    fn pis(rate: f64) -> (Node, Vec<Node>) {
        let n = |h: &str| Node {
            host: h.into(),
            rate,
        };
        (n("pi0"), vec![n("pi1"), n("pi2")])
    }

    fn router() -> Link {
        Link {
            bandwidth: 12.5 * MB, // 100 Mbit/s
            latency: 0.2e-3,
            // A Pi 3 moves about 50 MB/s through its USB Ethernet and TCP stack.
            cpu_per_byte: 1.0 / (50.0 * MB),
            startup: 0.3,
        }
    }

    #[test]
    fn one_round_of_tea_stays_local_and_32_rounds_use_the_cluster() {
        // One node (4 cores) runs one TEA round at ~100 MB/s; 32 rounds at 1/32 of that.
        let (root, others) = pis(100.0 * MB);
        let one = plan(240_000_000, &root, &others, &router());
        assert!(one.nodes.is_empty(), "{}", one.reason);
        assert!(one.reason.contains("costs rank 0 more"), "{}", one.reason);

        let (root, others) = pis(100.0 * MB / 32.0);
        let heavy = plan(240_000_000, &root, &others, &router());
        assert_eq!(heavy.nodes.len(), 2, "{}", heavy.reason);
        assert!(heavy.seconds < heavy.local_seconds / 2.0, "{heavy:?}");
        assert_eq!(heavy.bound, Bound::Compute);
    }

    #[test]
    fn small_files_stay_local() {
        let (root, others) = pis(100.0 * MB / 32.0);
        let p = plan(240_000, &root, &others, &router());
        assert!(p.nodes.is_empty());
        assert!(p.reason.contains("start-up"), "{}", p.reason);
    }

    #[test]
    fn the_link_bounds_fast_nodes_and_useless_nodes_are_left_out() {
        let root = Node {
            host: "a".into(),
            rate: 10.0 * MB,
        };
        let others = vec![
            Node {
                host: "fast".into(),
                rate: 200.0 * MB,
            },
            Node {
                host: "slow".into(),
                rate: 1.0 * MB,
            },
        ];
        let link = Link {
            bandwidth: 12.5 * MB,
            latency: 1e-4,
            cpu_per_byte: 0.0,
            startup: 0.0,
        };
        let p = plan(1_000_000_000, &root, &others, &link);
        // The fast node alone saturates the link: the slow one adds nothing.
        assert_eq!(p.nodes, vec![0]);
        assert_eq!(p.bound, Bound::Link);
        assert!((p.shipped_rate - 12.5 * MB).abs() < 1.0);
        assert!((p.seconds - 1e9 / 22.5e6 - 2e-4).abs() < 1e-6);
    }
}
