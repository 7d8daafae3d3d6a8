//! The distributed pipeline with in-process ranks: same bytes as a local run.

use clustercrypt_cluster::ClusterError;
use clustercrypt_cluster::distributed::{
    DistributedTransform, Hello, hello, recv_spec, send_spec, serve,
};
use clustercrypt_cluster::transport::{Transport, local};
use clustercrypt_engine::format::{Kdf, Suite};
use clustercrypt_engine::stream::{self, from_description, open_header, prepare_encrypt};
use clustercrypt_engine::{
    EncryptOptions, EngineError, KeySource, MasterKey, Randomness, pipeline,
};

fn key() -> KeySource {
    KeySource::Key(MasterKey::from_bytes([9; 32]))
}

fn me(version: &str, rank: usize) -> Hello {
    Hello {
        version: version.into(),
        host: format!("node{rank}"),
        threads: 2,
        mpi: "Test MPI 1.0".into(),
    }
}

fn options(suite: Suite) -> EncryptOptions {
    EncryptOptions {
        suite,
        chunk_size: 1000,
        threads: 2,
        argon2: Kdf::KeyFile,
    }
}

/// Runs rank 0's part with `root` and every other rank's `serve`.
fn cluster_run(
    n: usize,
    versions: &[&str],
    root: impl FnOnce(&dyn Transport, Vec<Hello>) -> Result<Vec<u8>, ClusterError> + Send,
) -> Result<Vec<u8>, ClusterError> {
    let ranks = local::cluster(n);
    std::thread::scope(|s| {
        let mut it = ranks.iter();
        let t0 = it.next().unwrap();
        for t in it {
            let v = versions[t.rank()];
            s.spawn(move || -> Result<(), ClusterError> {
                hello(t, &me(v, t.rank()))?;
                let spec = recv_spec(t)?;
                let inner = from_description(&spec)?;
                serve(t, &*inner, 2)
            });
        }
        let all = hello(t0, &me(versions[0], 0));
        match all {
            Ok(all) => root(t0, all),
            Err(e) => Err(e),
        }
    })
}

#[test]
fn cluster_encryption_equals_local_encryption() {
    let plain: Vec<u8> = (0..57_321u32).map(|i| (i * 31 % 251) as u8).collect();
    for suite in [Suite::Aes256Gcm, Suite::Serpent256CtrHmac] {
        let r = || Randomness::insecure_fixed_for_tests([3; 32], [4; 7]);
        let mut local_out = Vec::new();
        stream::encrypt_with(
            &mut &plain[..],
            &mut local_out,
            &key(),
            &options(suite),
            r(),
            &|_| {},
        )
        .unwrap();

        let out = cluster_run(3, &["1", "1", "1"], |t, all| {
            assert_eq!(all.len(), 3);
            let (head, sealer) = prepare_encrypt(&key(), &options(suite), r())?;
            send_spec(t, &sealer.describe())?;
            let hosts = all.iter().map(|h| h.host.clone()).collect();
            let d = DistributedTransform::new(&sealer, t, 1, &[(1, 3), (2, 3)], hosts);
            let mut out = head.to_vec();
            let run = pipeline::run(&mut &plain[..], &mut out, &d, d.slots(), &|_| {});
            d.stop_workers();
            run?;
            Ok(out)
        })
        .unwrap();
        assert_eq!(out, local_out, "{suite:?}");

        // And decrypting it on the cluster gives the plaintext back.
        let back = cluster_run(3, &["1", "1", "1"], |t, all| {
            let mut input = &out[..];
            let (_, opener) = open_header(&mut input, &key())?;
            send_spec(t, &opener.describe())?;
            let hosts = all.iter().map(|h| h.host.clone()).collect();
            let d = DistributedTransform::new(&opener, t, 0, &[(1, 2), (2, 2)], hosts);
            let mut back = Vec::new();
            let run = pipeline::run(&mut input, &mut back, &d, d.slots(), &|_| {});
            d.stop_workers();
            run?;
            Ok(back)
        })
        .unwrap();
        assert_eq!(back, plain);
    }
}

#[test]
fn tampering_is_caught_on_a_remote_rank() {
    let plain = vec![1u8; 20_000];
    let mut sealed = Vec::new();
    stream::encrypt(
        &mut &plain[..],
        &mut sealed,
        &key(),
        &options(Suite::ChaCha20Poly1305),
        &|_| {},
    )
    .unwrap();
    let at = 100 + 7 * 1016 + 5;
    sealed[at] ^= 1;
    let err = cluster_run(2, &["1", "1"], |t, all| {
        let mut input = &sealed[..];
        let (_, opener) = open_header(&mut input, &key())?;
        send_spec(t, &opener.describe())?;
        let hosts = all.iter().map(|h| h.host.clone()).collect();
        // No local slots: every chunk goes to rank 1.
        let d = DistributedTransform::new(&opener, t, 0, &[(1, 2)], hosts);
        let mut out = Vec::new();
        let run = pipeline::run(&mut input, &mut out, &d, d.slots(), &|_| {});
        d.stop_workers();
        run?;
        Ok(out)
    })
    .unwrap_err();
    assert!(
        matches!(err, ClusterError::Engine(EngineError::Chunk(7))),
        "{err}"
    );
}

#[test]
fn a_different_version_is_refused_naming_the_node() {
    let ranks = local::cluster(3);
    let errs: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = ranks
            .iter()
            .map(|t| {
                let v = if t.rank() == 2 { "0.0.9" } else { "0.1.0" };
                s.spawn(move || {
                    hello(t, &me(v, t.rank()))
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        hs.into_iter()
            .filter_map(|h| h.join().unwrap().err())
            .collect()
    });
    assert_eq!(errs.len(), 3, "every rank stops: {errs:?}");
    assert!(
        errs.iter()
            .all(|e| e.contains("node2 (rank 2) runs clustercrypt 0.0.9")),
        "{errs:?}"
    );
}

#[test]
fn a_different_mpi_library_is_refused_naming_both() {
    let ranks = local::cluster(3);
    let errs: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = ranks
            .iter()
            .map(|t| {
                let mut hi = me("0.1.0", t.rank());
                if t.rank() == 1 {
                    // MPICH's library version is several lines; only the first counts.
                    hi.mpi = "MPICH Version:\t4.0.2\nMPICH Release date: ...".into();
                }
                s.spawn(move || hello(t, &hi).map(|_| ()).map_err(|e| e.to_string()))
            })
            .collect();
        hs.into_iter()
            .filter_map(|h| h.join().unwrap().err())
            .collect()
    });
    assert_eq!(errs.len(), 3, "every rank stops: {errs:?}");
    assert!(
        errs.iter().all(|e| e.contains(
            "node1 (rank 1) runs on MPI library \"MPICH Version:\t4.0.2\", this node on \"Test MPI 1.0\""
        )),
        "{errs:?}"
    );
}

#[test]
fn ranks_are_measured_before_a_run() {
    use clustercrypt_cluster::planning::{answer, measure};
    let ranks = local::cluster(3);
    let (_, sealer) = prepare_encrypt(
        &key(),
        &options(Suite::Aes256Gcm),
        Randomness::generate().unwrap(),
    )
    .unwrap();
    let m = std::thread::scope(|s| {
        for t in &ranks[1..] {
            let sealer = &sealer;
            s.spawn(move || answer(t, sealer, 1).unwrap());
        }
        let hosts: Vec<String> = (0..3).map(|r| format!("node{r}")).collect();
        measure(&ranks[0], &sealer, 1, 1 << 30, &hosts, 0.0).unwrap()
    });
    assert_eq!(m.others.len(), 2);
    assert!(m.root.rate > 0.0 && m.others.iter().all(|n| n.rate > 0.0));
    assert!(m.link.bandwidth > 0.0 && m.link.latency >= 0.0);
    assert!(m.plan.seconds <= m.plan.local_seconds);
    assert!(m.explain().contains("rank 2 (node2)"), "{}", m.explain());
    assert_eq!(
        clustercrypt_cluster::planning::probe_bytes(240_000, 1 << 20),
        64 << 10
    );
    assert_eq!(
        clustercrypt_cluster::planning::probe_bytes(1 << 40, 1 << 20),
        4 << 20
    );
}
