//! `bench --cluster` with in-process ranks.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clustercrypt_bench::clock::MonotonicClock;
use clustercrypt_bench::measure::Method;
use clustercrypt_catalogue::CipherSpec;
use clustercrypt_cluster::bench::{ClusterBench, NodeInfo, run};
use clustercrypt_cluster::transport::{Transport, local};

#[test]
fn every_rank_measures_and_rank_0_gathers_with_a_sweep() {
    let specs = [
        CipherSpec::parse("aes-xts-plain64", Some(256)).unwrap(),
        CipherSpec::parse("chacha20", None).unwrap(),
    ];
    let ranks = local::cluster(3);
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = ranks
            .iter()
            .map(|t| {
                let specs = &specs;
                s.spawn(move || {
                    let b = ClusterBench {
                        specs,
                        threads: 1,
                        method: Method {
                            min_time: Duration::from_millis(10),
                            buffer_size: 1 << 16,
                            request_size: 1 << 12,
                            passes: None,
                        },
                        sweep: true,
                        me: NodeInfo {
                            hostname: format!("node{}", t.rank()),
                            cpu_model: "test cpu".into(),
                        },
                    };
                    run(t, &b, &MonotonicClock::default(), &AtomicBool::new(false)).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(results[1].is_none() && results[2].is_none());
    let summary = results[0].clone().unwrap();
    assert_eq!(summary.ranks, 3);
    assert_eq!(summary.rows.len(), 2);
    assert_eq!(summary.sweep.len(), 6, "2 rows on 1, 2 and 3 nodes");
    for (i, r) in summary.sweep.iter().enumerate() {
        assert_eq!(r.nodes, i / 2 + 1);
        assert_eq!(r.per_node.len(), r.nodes);
        let sum: f64 = r.per_node.iter().map(|n| n.encrypt_mib_s).sum();
        assert!((r.encrypt_mib_s - sum).abs() < 1e-9);
        assert!(
            r.per_node
                .iter()
                .all(|n| n.encrypt_mib_s > 0.0 && n.decrypt_mib_s > 0.0)
        );
        assert!(r.start_skew_ms >= 0.0 && r.start_skew_ms < 1000.0);
    }
    let hosts: Vec<&str> = summary.rows[0]
        .per_node
        .iter()
        .map(|n| n.hostname.as_str())
        .collect();
    assert_eq!(hosts, ["node0", "node1", "node2"]);
    assert_eq!(summary.rows[1].cipher, "chacha20");
}
