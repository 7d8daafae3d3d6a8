//! Fuzzing the header parser on stable Rust, with proptest: random bytes,
//! random but well-formed-looking headers, and mutations (byte changes,
//! truncations, extensions) of valid headers and files are fed to
//! `Header::parse`, `stream::open_header` and `decrypt`. None may panic, and
//! no change to a valid header or file may be accepted.
//!
//! The coverage-guided version of the first two is `fuzz/fuzz_targets/header.rs`
//! (cargo-fuzz, nightly only).

use clustercrypt_engine::format::{HEADER_LEN, HEADER_MAC_OFFSET, Header, Kdf, MAGIC, Suite};
use clustercrypt_engine::stream::open_header;
use clustercrypt_engine::{
    EncryptOptions, KeySource, MasterKey, Passphrase, Randomness, decrypt, encrypt_with,
};
use proptest::prelude::*;

const KEY: [u8; 32] = [42; 32];
const PASSPHRASE: &[u8] = b"fuzzing passphrase";
/// Argon2 cost of the passphrase files: tiny, so that cases stay fast.
const CHEAP_ARGON2: Kdf = Kdf::Argon2id {
    memory_kib: 64,
    iterations: 1,
    parallel: 1,
};
/// Above this memory cost a mutated passphrase header is not opened (it would
/// only make the test slow: the header bounds allow 4 GiB).
const MAX_TEST_MEMORY_KIB: u32 = 1 << 14;

fn key() -> KeySource {
    KeySource::Key(MasterKey::from_bytes(KEY))
}

fn passphrase() -> KeySource {
    KeySource::Passphrase(Passphrase::new(PASSPHRASE.to_vec()).unwrap())
}

fn suite_strategy() -> impl Strategy<Value = Suite> {
    prop::sample::select(Suite::ALL.to_vec())
}

/// A valid file: `len` bytes of plaintext in 64-byte chunks, sealed under the
/// fixed key (or the passphrase) with fixed randomness.
fn sealed(suite: Suite, source: &KeySource, len: usize, seed: u8) -> Vec<u8> {
    let plain: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    let options = EncryptOptions {
        suite,
        chunk_size: 64,
        threads: 2,
        argon2: CHEAP_ARGON2,
    };
    let mut out = Vec::new();
    encrypt_with(
        &mut &plain[..],
        &mut out,
        source,
        &options,
        Randomness::insecure_fixed_for_tests([seed; 32], [seed ^ 0x55; 7]),
        &|_| {},
    )
    .unwrap();
    out
}

/// Parses, and checks that a header that parses is canonical: it writes
/// back exactly the bytes it was read from.
fn parse_checked(bytes: &[u8]) -> bool {
    match Header::parse(bytes) {
        Ok((header, mac)) => {
            assert!(bytes.len() >= HEADER_LEN);
            assert_eq!(&header.body()[..], &bytes[..HEADER_MAC_OFFSET]);
            assert_eq!(&mac[..], &bytes[HEADER_MAC_OFFSET..HEADER_LEN]);
            assert!((64..=64 << 20).contains(&header.chunk_size));
            true
        }
        Err(_) => false,
    }
}

fn open(bytes: &[u8], source: &KeySource) -> bool {
    open_header(&mut &bytes[..], source).is_ok()
}

fn decrypts(bytes: &[u8], source: &KeySource, threads: usize) -> bool {
    let mut out = Vec::new();
    decrypt(&mut &bytes[..], &mut out, source, threads, &|_| {}).is_ok()
}

/// Whether a passphrase header asks for more Argon2 memory than the tests allow.
fn too_expensive(bytes: &[u8]) -> bool {
    matches!(
        Header::parse(bytes),
        Ok((Header { kdf: Kdf::Argon2id { memory_kib, .. }, .. }, _)) if memory_kib > MAX_TEST_MEMORY_KIB
    )
}

/// One way of changing a byte string.
#[derive(Debug, Clone)]
enum Mutation {
    /// XOR the byte at `at % len` with `x` (never 0).
    Xor { at: usize, x: u8 },
    /// Set the byte at `at % len` to `v` (skipped if it is already `v`).
    Set { at: usize, v: u8 },
    /// Keep the first `keep % len` bytes.
    Truncate { keep: usize },
    /// Append bytes.
    Extend { tail: Vec<u8> },
    /// Insert a byte at `at % (len + 1)`.
    Insert { at: usize, v: u8 },
    /// Remove the byte at `at % len`.
    Remove { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1..=255u8).prop_map(|(at, x)| Mutation::Xor { at, x }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Set { at, v }),
        1 => any::<usize>().prop_map(|keep| Mutation::Truncate { keep }),
        1 => prop::collection::vec(any::<u8>(), 1..80).prop_map(|tail| Mutation::Extend { tail }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Insert { at, v }),
        1 => any::<usize>().prop_map(|at| Mutation::Remove { at }),
    ]
}

/// Applies the mutations to `bytes` (restricted to `bytes[..limit]` for
/// in-place changes); returns whether anything changed.
fn apply(bytes: &mut Vec<u8>, mutations: &[Mutation], limit: usize) -> bool {
    let original = bytes.clone();
    for m in mutations {
        let len = bytes.len().min(limit);
        match *m {
            Mutation::Xor { at, x } if len > 0 => bytes[at % len] ^= x,
            Mutation::Set { at, v } if len > 0 => bytes[at % len] = v,
            Mutation::Truncate { keep } if !bytes.is_empty() => {
                bytes.truncate(keep % bytes.len());
            }
            Mutation::Extend { ref tail } => bytes.extend_from_slice(tail),
            Mutation::Insert { at, v } => bytes.insert(at % (len + 1), v),
            Mutation::Remove { at } if len > 0 => {
                bytes.remove(at % len);
            }
            _ => {}
        }
    }
    *bytes != original
}

/// Header-shaped bytes: our magic and version, then random fields from
/// ranges that reach every branch of the parser.
fn header_like() -> impl Strategy<Value = Vec<u8>> {
    let small_u32 = prop_oneof![
        Just(0u32),
        Just(1),
        Just(8),
        Just(64),
        Just(65),
        Just(4 << 20),
        Just((4 << 20) + 1),
        Just(64 << 20),
        Just((64 << 20) + 1),
        Just(u32::MAX),
        any::<u32>(),
        0..200u32,
    ];
    (
        prop_oneof![Just(1u16), any::<u16>()],
        prop_oneof![0..8u8, any::<u8>()],
        prop_oneof![0..3u8, any::<u8>()],
        prop::array::uniform4(small_u32),
        prop::collection::vec(any::<u8>(), 39),
        prop_oneof![3 => Just(0u8), 1 => any::<u8>()],
        prop::collection::vec(any::<u8>(), 32),
        0..HEADER_LEN + 20,
    )
        .prop_map(
            |(version, suite, kdf, [m, t, p, chunk], salt_nonce, reserved, mac, len)| {
                let mut b = MAGIC.to_vec();
                b.extend_from_slice(&version.to_le_bytes());
                b.push(suite);
                b.push(kdf);
                for v in [m, t, p, chunk] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                b.extend_from_slice(&salt_nonce);
                b.push(reserved);
                b.extend_from_slice(&mac);
                assert_eq!(b.len(), HEADER_LEN);
                b.resize(len, 0xee);
                b
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        parse_checked(&bytes);
        prop_assert!(!open(&bytes, &key()));
        prop_assert!(!open(&bytes, &passphrase()));
        prop_assert!(!decrypts(&bytes, &key(), 2));
    }

    #[test]
    fn random_bytes_after_the_magic_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&tail);
        parse_checked(&bytes);
        prop_assert!(!open(&bytes, &key()));
        prop_assert!(!decrypts(&bytes, &key(), 3));
    }

    #[test]
    fn header_like_bytes_never_panic(bytes in header_like()) {
        let parsed = parse_checked(&bytes);
        if bytes.len() < HEADER_LEN {
            prop_assert!(!parsed);
        }
        // The MAC is random: nothing opens. (A key source only: a passphrase
        // would run Argon2 with whatever cost the random header asks for.)
        prop_assert!(!open(&bytes, &key()));
        prop_assert!(!decrypts(&bytes, &key(), 2));
    }

    #[test]
    fn mutated_key_file_headers_are_rejected(
        suite in suite_strategy(),
        seed in any::<u8>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let file = sealed(suite, &key(), 100, seed);
        let mut header = file[..HEADER_LEN].to_vec();
        prop_assert!(open(&header, &key()));
        apply(&mut header, &mutations, HEADER_LEN);
        parse_checked(&header);
        // Only the first 100 bytes are the header: any change there must be
        // caught, and bytes after it are not open_header's business.
        let changed = header.len() < HEADER_LEN || header[..HEADER_LEN] != file[..HEADER_LEN];
        prop_assert_eq!(open(&header, &key()), !changed);
    }

    #[test]
    fn mutated_passphrase_headers_are_rejected(
        suite in suite_strategy(),
        seed in any::<u8>(),
        mutations in prop::collection::vec(mutation(), 1..3),
    ) {
        let file = sealed(suite, &passphrase(), 10, seed);
        let mut header = file[..HEADER_LEN].to_vec();
        apply(&mut header, &mutations, HEADER_LEN);
        parse_checked(&header);
        let changed = header.len() < HEADER_LEN || header[..HEADER_LEN] != file[..HEADER_LEN];
        if changed && !too_expensive(&header) {
            prop_assert!(!open(&header, &passphrase()), "a changed header was accepted");
        }
        // The right header is never accepted with the wrong kind of key.
        prop_assert!(!open(&file, &key()));
    }

    #[test]
    fn mutated_files_never_decrypt(
        suite in suite_strategy(),
        len in 0..400usize,
        seed in any::<u8>(),
        threads in 1..5usize,
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let file = sealed(suite, &key(), len, seed);
        prop_assert!(decrypts(&file, &key(), threads));
        let mut bad = file.clone();
        if apply(&mut bad, &mutations, usize::MAX) {
            prop_assert!(!decrypts(&bad, &key(), threads), "a changed file decrypted");
        }
    }
}

/// Every single-bit change of a valid header is rejected, for every suite
/// and both kinds of key.
#[test]
fn every_bit_of_the_header_matters() {
    for suite in Suite::ALL {
        for (source, file) in [
            (key(), sealed(suite, &key(), 70, 1)),
            (passphrase(), sealed(suite, &passphrase(), 70, 2)),
        ] {
            assert!(open(&file[..HEADER_LEN], &source));
            for at in 0..HEADER_LEN {
                for bit in 0..8 {
                    let mut bad = file[..HEADER_LEN].to_vec();
                    bad[at] ^= 1 << bit;
                    parse_checked(&bad);
                    if too_expensive(&bad) {
                        continue;
                    }
                    assert!(
                        !open(&bad, &source),
                        "{suite:?}: byte {at} bit {bit} changed and the header opened"
                    );
                }
            }
            // Every strict prefix is rejected too, and so is the header with
            // the wrong kind of key.
            for keep in 0..HEADER_LEN {
                assert!(!open(&file[..keep], &source));
            }
            let other = match source {
                KeySource::Key(_) => passphrase(),
                _ => key(),
            };
            assert!(!open(&file, &other));
        }
    }
}

/// The boundaries of each header field, one at a time.
#[test]
fn header_field_boundaries() {
    let file = sealed(Suite::Aes256Gcm, &passphrase(), 10, 3);
    let h = &file[..HEADER_LEN];
    let with = |at: usize, v: &[u8]| {
        let mut b = h.to_vec();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    let u32le = |v: u32| v.to_le_bytes();
    // Accepted by the parser (and rejected by the MAC).
    for b in [
        with(12, &u32le(8)),
        with(12, &u32le(4 << 20)),
        with(16, &u32le(64)),
        with(20, &u32le(8)),
        with(24, &u32le(64)),
        with(24, &u32le(64 << 20)),
    ] {
        assert!(parse_checked(&b));
    }
    // Rejected by the parser.
    for b in [
        with(8, &[0, 0]),
        with(8, &[2, 0]),
        with(8, &[1, 1]),
        with(10, &[0]),
        with(10, &[6]),
        with(11, &[2]),
        with(12, &u32le(7)),
        with(12, &u32le((4 << 20) + 1)),
        with(16, &u32le(0)),
        with(16, &u32le(65)),
        with(20, &u32le(0)),
        with(20, &u32le(65)),
        with(20, &u32le(9)), // 64 KiB < 8 KiB x 9 lanes
        with(24, &u32le(63)),
        with(24, &u32le((64 << 20) + 1)),
        with(67, &[1]),
    ] {
        assert!(!parse_checked(&b));
    }
    // A key-file header must carry zero KDF parameters.
    let kf = sealed(Suite::Aes256Gcm, &key(), 10, 3);
    for at in 12..24 {
        let mut b = kf[..HEADER_LEN].to_vec();
        b[at] = 1;
        assert!(!parse_checked(&b));
    }
}
