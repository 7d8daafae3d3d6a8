//! Round trips and tampering for every suite of the file format.

use clustercrypt_engine::format::{HEADER_LEN, Kdf, Suite};
use clustercrypt_engine::{
    EncryptOptions, EngineError, KeySource, MasterKey, Passphrase, Randomness, decrypt, encrypt,
    encrypt_with,
};

const CHUNK: usize = 256;

fn key() -> KeySource {
    KeySource::Key(MasterKey::from_bytes([42; 32]))
}

fn options(suite: Suite, threads: usize) -> EncryptOptions {
    EncryptOptions {
        suite,
        chunk_size: CHUNK,
        threads,
        argon2: Kdf::Argon2id {
            memory_kib: 64,
            iterations: 1,
            parallel: 1,
        },
    }
}

fn data(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

fn enc(plain: &[u8], k: &KeySource, o: &EncryptOptions) -> Vec<u8> {
    let mut out = Vec::new();
    encrypt(&mut &plain[..], &mut out, k, o, &|_| {}).unwrap();
    out
}

fn dec(sealed: &[u8], k: &KeySource, threads: usize) -> Result<Vec<u8>, EngineError> {
    let mut out = Vec::new();
    decrypt(&mut &sealed[..], &mut out, k, threads, &|_| {}).map(|_| out)
}

#[test]
fn every_suite_and_boundary_size_round_trips() {
    for suite in Suite::ALL {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 17 * CHUNK + 5] {
            let plain = data(len);
            let o = options(suite, 3);
            let sealed = enc(&plain, &key(), &o);
            let chunks = len.div_ceil(CHUNK).max(1);
            assert_eq!(
                sealed.len(),
                HEADER_LEN + len + chunks * suite.tag_len(),
                "{suite:?} {len}"
            );
            assert_eq!(dec(&sealed, &key(), 2).unwrap(), plain, "{suite:?} {len}");
            // Two encryptions of one file differ (random salt and nonce prefix).
            assert_ne!(enc(&plain, &key(), &o), sealed, "{suite:?} {len}");
        }
    }
}

#[test]
fn same_randomness_gives_the_same_bytes_whatever_the_threads() {
    let plain = data(50 * CHUNK + 77);
    for suite in Suite::ALL {
        let mut outputs = Vec::new();
        for threads in [1, 2, 3, 8] {
            let mut out = Vec::new();
            let r = Randomness::insecure_fixed_for_tests([1; 32], [2; 7]);
            encrypt_with(
                &mut &plain[..],
                &mut out,
                &key(),
                &options(suite, threads),
                r,
                &|_| {},
            )
            .unwrap();
            outputs.push(out);
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{suite:?}");
    }
}

#[test]
fn every_truncation_fails() {
    for suite in [Suite::Aes256Gcm, Suite::Twofish256CtrHmac] {
        let plain = data(3 * CHUNK + 10);
        let sealed = enc(&plain, &key(), &options(suite, 2));
        for cut in 0..sealed.len() {
            let r = dec(&sealed[..cut], &key(), 2);
            assert!(
                r.is_err(),
                "{suite:?}: cut at {cut} of {} decrypted",
                sealed.len()
            );
        }
        // Cutting exactly at a chunk boundary says so.
        let boundary = HEADER_LEN + 2 * (CHUNK + suite.tag_len());
        let err = dec(&sealed[..boundary], &key(), 2).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("file ends before its last chunk"),
            "{err}"
        );
        let err = dec(&sealed[..HEADER_LEN], &key(), 2).unwrap_err();
        assert!(matches!(err, EngineError::Truncated(_)), "{err}");
    }
}

#[test]
fn bit_flips_anywhere_fail() {
    for suite in Suite::ALL {
        let plain = data(2 * CHUNK + 40);
        let sealed = enc(&plain, &key(), &options(suite, 2));
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut positions: Vec<usize> = (0..HEADER_LEN).collect();
        for _ in 0..200 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            positions.push((seed % sealed.len() as u64) as usize);
        }
        for at in positions {
            let mut bad = sealed.clone();
            bad[at] ^= 1 << (at % 8);
            assert!(
                dec(&bad, &key(), 2).is_err(),
                "{suite:?}: flip at {at} decrypted"
            );
        }
    }
}

#[test]
fn messages_say_what_failed() {
    let suite = Suite::ChaCha20Poly1305;
    let t = suite.tag_len();
    let plain = data(20 * CHUNK);
    let sealed = enc(&plain, &key(), &options(suite, 2));
    let chunk_at = |i: usize| HEADER_LEN + i * (CHUNK + t);

    let mut bad = sealed.clone();
    bad[chunk_at(17) + 3] ^= 0x80;
    assert_eq!(
        dec(&bad, &key(), 2).unwrap_err().to_string(),
        "chunk 17 failed authentication (the file was modified or chunks were reordered)"
    );

    // Swapping two chunks.
    let mut swapped = sealed[..chunk_at(3)].to_vec();
    swapped.extend_from_slice(&sealed[chunk_at(4)..chunk_at(5)]);
    swapped.extend_from_slice(&sealed[chunk_at(3)..chunk_at(4)]);
    swapped.extend_from_slice(&sealed[chunk_at(5)..]);
    assert!(matches!(
        dec(&swapped, &key(), 2),
        Err(EngineError::Chunk(3))
    ));

    // Duplicating a chunk.
    let mut dup = sealed[..chunk_at(6)].to_vec();
    dup.extend_from_slice(&sealed[chunk_at(5)..]);
    assert!(matches!(dec(&dup, &key(), 2), Err(EngineError::Chunk(6))));

    // Dropping a chunk in the middle.
    let mut dropped = sealed[..chunk_at(8)].to_vec();
    dropped.extend_from_slice(&sealed[chunk_at(9)..]);
    assert!(matches!(
        dec(&dropped, &key(), 2),
        Err(EngineError::Chunk(8))
    ));

    // Appending data after the last chunk, whether the last chunk was full or not.
    for len in [CHUNK + 9, 2 * CHUNK] {
        let mut appended = enc(&data(len), &key(), &options(suite, 2));
        appended.extend_from_slice(b"more");
        assert!(dec(&appended, &key(), 2).is_err(), "{len}");
        appended.extend_from_slice(&[0; CHUNK]);
        assert!(dec(&appended, &key(), 2).is_err(), "{len}");
    }

    // An edited header.
    let mut edited = sealed.clone();
    edited[24] ^= 1; // chunk size
    assert!(dec(&edited, &key(), 2).is_err());
    let mut edited = sealed.clone();
    edited[40] ^= 1; // salt
    assert!(matches!(
        dec(&edited, &key(), 2),
        Err(EngineError::WrongKey)
    ));

    // A file that is not ours.
    assert!(matches!(dec(b"just some text that is long enough to be a header, or is it? no, it is not ours at all, sorry", &key(), 2), Err(EngineError::NotOurs)));
    assert!(matches!(dec(b"", &key(), 2), Err(EngineError::NotOurs)));

    // The wrong key.
    let other = KeySource::Key(MasterKey::from_bytes([43; 32]));
    assert!(matches!(
        dec(&sealed, &other, 2),
        Err(EngineError::WrongKey)
    ));
}

#[test]
fn passphrases() {
    let pass = || KeySource::Passphrase(Passphrase::new(b"hunter2 but longer".to_vec()).unwrap());
    let plain = data(1000);
    let o = options(Suite::Serpent256CtrHmac, 2);
    let sealed = enc(&plain, &pass(), &o);
    assert_eq!(dec(&sealed, &pass(), 1).unwrap(), plain);
    let wrong = KeySource::Passphrase(Passphrase::new(b"hunter3 but longer".to_vec()).unwrap());
    assert!(matches!(
        dec(&sealed, &wrong, 1),
        Err(EngineError::WrongKey)
    ));
    let e = dec(&sealed, &key(), 1).unwrap_err();
    assert!(e.to_string().contains("encrypted with a passphrase"), "{e}");
}
