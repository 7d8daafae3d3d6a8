//! `import::parse_cryptsetup`: the published listings of seed 003, the variants
//! other cryptsetup versions print, and this tool's own text output read back.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clustercrypt_bench::clock::MonotonicClock;
use clustercrypt_bench::export::Format;
use clustercrypt_bench::import::{ImportError, NOT_IN_CATALOGUE, SOURCE, parse_cryptsetup};
use clustercrypt_bench::kdf::{Argon2Limits, Argon2Variant, Hash, KdfResult};
use clustercrypt_bench::measure::Method;
use clustercrypt_bench::report::{ClusterRow, ClusterSummary, NodeFigures, Report};
use clustercrypt_bench::runner::{self, Plan, Silent};
use clustercrypt_catalogue::{Algorithm, CipherSpec, Mode};

const PI4: &str = include_str!("data/cryptsetup_pi4.txt");
const LAPTOP: &str = include_str!("data/cryptsetup_laptop.txt");

fn row<'a>(r: &'a Report, cipher: &str, bits: usize) -> &'a clustercrypt_bench::report::CipherRow {
    r.ciphers
        .iter()
        .find(|c| c.cipher == cipher && c.key_bits == bits)
        .unwrap_or_else(|| panic!("no {cipher} {bits}b row"))
}

#[test]
fn reads_the_raspberry_pi_4_listing() {
    let r = parse_cryptsetup(PI4).unwrap();
    assert_eq!(r.ciphers.len(), 12);
    assert_eq!(r.source.as_deref(), Some(SOURCE));
    assert_eq!(r.machine.cpu_model, "unknown");
    let aes = row(&r, "aes-cbc", 128);
    assert_eq!((aes.encrypt_mib_s, aes.decrypt_mib_s), (78.0, 80.9));
    assert_eq!((aes.algorithm, aes.mode), (Algorithm::Aes, Mode::Cbc));
    assert_eq!(aes.encrypt.n, 1);
    assert_eq!(aes.encrypt.mean, 78.0);
    let tf = row(&r, "twofish-xts", 512);
    assert_eq!((tf.encrypt_mib_s, tf.decrypt_mib_s), (63.5, 62.1));
    assert_eq!(tf.spec, "twofish-xts-plain64");
    assert!(!tf.insecure);
    assert_eq!(
        r.kdfs[0],
        KdfResult::Pbkdf2 {
            hash: Hash::Sha1,
            iterations_per_second: 403298,
            key_bits: 256
        }
    );
    assert_eq!(
        r.kdfs[6],
        KdfResult::Argon2 {
            variant: Argon2Variant::Argon2id,
            iterations: 4,
            memory_kib: 320139,
            parallel: 4,
            key_bits: 256,
            requested_ms: 2000,
            measured_ms: 2000,
        }
    );
}

#[test]
fn reads_the_laptop_listing() {
    let r = parse_cryptsetup(LAPTOP).unwrap();
    assert_eq!((r.ciphers.len(), r.kdfs.len()), (12, 7));
    let aes = row(&r, "aes-xts", 256);
    assert_eq!((aes.encrypt_mib_s, aes.decrypt_mib_s), (5387.1, 5382.1));
    let serpent = row(&r, "serpent-cbc", 256);
    assert_eq!(
        (serpent.encrypt_mib_s, serpent.decrypt_mib_s),
        (117.6, 773.2)
    );
    assert!(matches!(
        r.kdfs[4],
        KdfResult::Pbkdf2 {
            hash: Hash::Whirlpool,
            iterations_per_second: 810336,
            ..
        }
    ));
    assert!(matches!(
        r.kdfs[5],
        KdfResult::Argon2 {
            variant: Argon2Variant::Argon2i,
            iterations: 9,
            memory_kib: 1048576,
            ..
        }
    ));
}

#[test]
fn na_rows_unknown_ciphers_and_old_versions() {
    // Pieces of cryptsetup 1.6, 2.x and single-cipher runs, with CRLF and blank lines.
    let text = "\u{feff}pi@pi:~ $ sudo cryptsetup benchmark\r\n\
# Tests are approximate using memory only (no storage IO).\r\n\
PBKDF2-sha1       111077 iterations per second\r\n\
PBKDF2-whirlpool     N/A\r\n\
argon2i    N/A\r\n\
\r\n\
#  Algorithm | Key | Encryption | Decryption\r\n\
     aes-cbc   128b  212.0 MB/s  428.0 MB/s\r\n\
#     Algorithm |       Key |      Encryption |      Decryption\r\n\
    serpent-cbc        128b               N/A               N/A\r\n\
Result of benchmark is not reliable.\r\n\
    twofish-xts        256b               N/A               N/A\r\n\
   des3_ede-cbc        192b        21.4 MiB/s        22.0 MiB/s\r\n\
    twofish-ecb        256b       120.0 MiB/s       121.5 MiB/s\r\n\
      cast5-cbc        128b        32.4 MiB/s        35.0 MiB/s\r\n\
xchacha12,aes-adiantum        256b       152.3 MiB/s       150.9 MiB/s\r\n\
Cipher aes-lrw-benbi (with 256 bits key) is not available.\r\n\
WARNING: Locking directory /run/cryptsetup is missing!\r\n";
    let r = parse_cryptsetup(text).unwrap();
    let labels: Vec<(&str, usize)> = r
        .ciphers
        .iter()
        .map(|c| (c.cipher.as_str(), c.key_bits))
        .collect();
    assert_eq!(
        labels,
        [
            ("aes-cbc", 128),
            ("des3_ede-cbc", 192),
            ("twofish-ecb", 256),
            ("xchacha12,aes-adiantum", 256)
        ]
    );
    // Adiantum is a catalogue row: weighed by `recommend` like any other.
    assert_eq!(r.ciphers[3].mode, Mode::AdiantumXChaCha12);
    assert_eq!(r.ciphers[3].encrypt_mib_s, 152.3);
    assert_eq!(r.ciphers[0].encrypt_mib_s, 212.0);
    assert_eq!(r.ciphers[1].algorithm, Algorithm::TripleDes);
    assert!(r.ciphers[2].insecure, "ECB");
    assert_eq!(r.ciphers[2].decrypt_mib_s, 121.5);
    assert_eq!(r.kdfs.len(), 1);
    let un: Vec<(&str, usize, &str)> = r
        .unavailable
        .iter()
        .map(|u| (u.cipher.as_str(), u.key_bits, u.reason.as_str()))
        .collect();
    assert_eq!(un[0], ("PBKDF2-whirlpool", 256, "N/A in the listing"));
    assert_eq!(un[1], ("argon2i", 256, "N/A in the listing"));
    assert_eq!(un[2], ("serpent-cbc", 128, "N/A in the listing"));
    assert_eq!(un[3].0, "twofish-xts");
    assert!(un[3].2.contains("not reliable"), "{}", un[3].2);
    assert_eq!((un[4].0, un[4].1), ("cast5-cbc", 128));
    assert!(un[4].2.starts_with(NOT_IN_CATALOGUE), "{}", un[4].2);
    assert!(un[4].2.contains("32.4 MiB/s encryption"), "{}", un[4].2);
    assert_eq!((un[5].0, un[5].1), ("aes-lrw-benbi", 256));
    assert_eq!(un.len(), 6);
}

#[test]
fn cryptsetup_failures_and_malformed_lines_are_errors() {
    let text = "# Tests are approximate using memory only (no storage IO).\n\
#     Algorithm |       Key |      Encryption |      Decryption\n\
Required kernel crypto interface not available.\n\
Ensure you have algif_skcipher kernel module loaded.\n";
    let e = parse_cryptsetup(text).unwrap_err();
    assert!(
        matches!(e, ImportError::Cryptsetup { line: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("kernel crypto interface"), "{e}");

    let cases: &[(&str, usize, &str)] = &[
        (
            "        aes-cbc        128b        78.0 MiB/s\n",
            1,
            "cipher row",
        ),
        (
            "# x\n\n        aes-cbc        128b        78.0 GB/s        80.9 GB/s\n",
            3,
            "cipher row",
        ),
        (
            "        aes-cbc        128b        7,8 MiB/s        80.9 MiB/s\n",
            1,
            "cipher row",
        ),
        (
            "        aes-cbc        128b        78.0 MiB/s        80.9 MiB/s  fast\n",
            1,
            "cipher row",
        ),
        (
            "        aes-cbc        128b        N/A        80.9 MiB/s\n",
            1,
            "cipher row",
        ),
        (
            "PBKDF2-sha1       many iterations per second for 256-bit key\n",
            1,
            "PBKDF2",
        ),
        (
            "argon2i       4 iterations, 1048576 memory\n",
            1,
            "argon2id",
        ),
        (
            "PBKDF2-sha1 1 iterations per second\nthe end\n",
            2,
            "a KDF line",
        ),
        (
            "#   thread 0: 1.0 MiB/s 2.0 MiB/s\n",
            1,
            "a cipher row before",
        ),
    ];
    for &(text, line, expected) in cases {
        let e = parse_cryptsetup(text).unwrap_err();
        assert_eq!(e.line(), Some(line), "{text:?}: {e}");
        assert!(e.to_string().contains(expected), "{text:?}: {e}");
    }
    assert!(matches!(
        parse_cryptsetup("\r\n\n# Tests are approximate using memory only (no storage IO).\n"),
        Err(ImportError::Empty { .. })
    ));
}

/// Rounds as the text format prints: one decimal.
fn printed(x: f64) -> f64 {
    format!("{x:.1}").parse().unwrap()
}

/// A real run (a few rows, two threads, two runs), printed and read back.
#[test]
fn own_text_output_round_trips() {
    let plan = Plan {
        ciphers: vec![
            CipherSpec::parse("aes-xts-plain64", Some(512)).unwrap(),
            CipherSpec::parse("des-cbc", None).unwrap(),
            CipherSpec::parse("chacha20-poly1305", None).unwrap(),
        ],
        kdfs: Vec::new(),
        method: Method {
            min_time: Duration::from_millis(5),
            buffer_size: 64 << 10,
            request_size: 4 << 10,
            passes: None,
        },
        threads: 2,
        runs: 2,
        pbkdf2_time: Duration::from_millis(5),
        argon2: Argon2Limits::for_machine(1 << 30, 2),
        probe: Default::default(),
    };
    let cancel = AtomicBool::new(false);
    let mut report = runner::run(&plan, "test", &MonotonicClock::default(), &cancel, &Silent)
        .expect("the run works");
    report.kdfs = vec![
        KdfResult::Pbkdf2 {
            hash: Hash::Sha512,
            iterations_per_second: 1_234_567,
            key_bits: 256,
        },
        KdfResult::Argon2 {
            variant: Argon2Variant::Argon2id,
            iterations: 4,
            memory_kib: 65536,
            parallel: 2,
            key_bits: 256,
            requested_ms: 500,
            measured_ms: 500,
        },
    ];
    let node = |rank: usize, host: &str| NodeFigures {
        rank,
        hostname: host.into(),
        cpu_model: "unknown".into(),
        threads: 4,
        encrypt_mib_s: 100.04 + rank as f64,
        decrypt_mib_s: 110.06,
        implementation: "unknown".into(),
    };
    report.cluster = Some(ClusterSummary {
        ranks: 2,
        rows: vec![ClusterRow {
            cipher: "aes-xts".into(),
            key_bits: 512,
            nodes: 2,
            encrypt_mib_s: 201.0,
            decrypt_mib_s: 220.1,
            start_skew_ms: 0.125,
            per_node: vec![node(0, "pi1"), node(1, "pi2")],
        }],
        sweep: vec![ClusterRow {
            cipher: "aes-xts".into(),
            key_bits: 512,
            nodes: 1,
            encrypt_mib_s: 100.0,
            decrypt_mib_s: 110.0,
            start_skew_ms: 0.0,
            per_node: Vec::new(),
        }],
    });
    // Throttling depends on the machine's clock during the run: fix it, with
    // both bounds, one unread bound and none.
    for (row, throttle) in report.ciphers.iter_mut().zip([
        None,
        Some((Some(2509.0), Some(2976.0))),
        Some((None, Some(1500.0))),
    ]) {
        row.throttled = throttle.is_some();
        (row.clock_min_mhz, row.clock_max_mhz) = throttle.unwrap_or((None, None));
    }
    let text = Format::Text.render(&report);
    assert!(text.contains("(insecure)"), "{text}");
    assert!(text.contains("throttled: clock 2509-2976 MHz"), "{text}");
    assert!(text.contains("throttled: clock --1500 MHz"), "{text}");
    let back = parse_cryptsetup(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));

    assert_eq!(back.settings.threads, 2);
    assert_eq!(back.settings.runs, 2);
    assert_eq!(back.ciphers.len(), report.ciphers.len());
    for (a, b) in report.ciphers.iter().zip(&back.ciphers) {
        assert_eq!(
            (&a.cipher, &a.spec, a.key_bits, a.threads, a.insecure),
            (&b.cipher, &b.spec, b.key_bits, b.threads, b.insecure)
        );
        assert_eq!(
            (a.algorithm, a.mode, &a.insecure_reason),
            (b.algorithm, b.mode, &b.insecure_reason)
        );
        assert_eq!(
            (a.throttled, a.clock_min_mhz, a.clock_max_mhz),
            (b.throttled, b.clock_min_mhz, b.clock_max_mhz)
        );
        assert_eq!(printed(a.encrypt_mib_s), b.encrypt_mib_s, "{}", a.cipher);
        assert_eq!(printed(a.decrypt_mib_s), b.decrypt_mib_s, "{}", a.cipher);
        for (s, t) in [(&a.encrypt, &b.encrypt), (&a.decrypt, &b.decrypt)] {
            assert_eq!(s.n, t.n);
            assert_eq!(
                (
                    printed(s.median),
                    printed(s.min),
                    printed(s.max),
                    printed(s.stddev)
                ),
                (t.median, t.min, t.max, t.stddev)
            );
        }
        assert_eq!(a.per_thread.len(), b.per_thread.len());
        for (s, t) in a.per_thread.iter().zip(&b.per_thread) {
            assert_eq!(s.thread, t.thread);
            assert_eq!(printed(s.encrypt_mib_s), t.encrypt_mib_s);
            assert_eq!(printed(s.decrypt_mib_s), t.decrypt_mib_s);
        }
    }
    assert_eq!(back.kdfs, report.kdfs);
    let (c, d) = (
        report.cluster.clone().unwrap(),
        back.cluster.clone().unwrap(),
    );
    assert_eq!(d.ranks, 2);
    assert_eq!(d.rows.len(), 1);
    let (r, s) = (&c.rows[0], &d.rows[0]);
    assert_eq!(
        (s.nodes, s.encrypt_mib_s, s.decrypt_mib_s),
        (2, 201.0, 220.1)
    );
    assert_eq!(s.start_skew_ms, 0.125);
    assert_eq!(s.per_node.len(), 2);
    assert_eq!(s.per_node[1].hostname, "pi2");
    assert_eq!(
        s.per_node[1].encrypt_mib_s,
        printed(r.per_node[1].encrypt_mib_s)
    );
    assert_eq!(s.per_node[1].threads, 4);
    assert_eq!(d.sweep, c.sweep);
    // Printing the imported report again gives the same text.
    assert_eq!(Format::Text.render(&back), text);
}
