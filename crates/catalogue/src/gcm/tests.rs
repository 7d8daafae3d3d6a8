//! Our AES-GCM against SP 800-38D's GHASH algorithm written out bit by bit,
//! against AWS-LC, and on the McGrew-Viega vectors: every AES backend and
//! every GHASH backend this CPU has (the mask aside).

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use hex_literal::hex;

use super::*;
use crate::aes::AesModes;
use crate::aes::tests_common::Rng;

/// SP 800-38D §6.3 Algorithm 1: X · Y in GCM's bit order, bit by bit.
fn gf_mul_ref(x: u128, y: u128) -> u128 {
    let r = 0xe1u128 << 120;
    let (mut z, mut v) = (0u128, y);
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = if v & 1 == 1 { (v >> 1) ^ r } else { v >> 1 };
    }
    z
}

/// SP 800-38D §6.4 GHASH over whole blocks.
fn ghash_ref(h: &[u8; 16], data: &[u8]) -> [u8; 16] {
    let h = u128::from_be_bytes(*h);
    let mut y = 0u128;
    for b in data.chunks_exact(16) {
        y = gf_mul_ref(y ^ u128::from_be_bytes(b.try_into().unwrap()), h);
    }
    y.to_be_bytes()
}

/// The GHASH backends this CPU runs; a note for each it lacks.
fn runnable_ghash() -> Vec<GhashImpl> {
    use std::io::Write;
    let all: Vec<_> = GhashImpl::ALL
        .iter()
        .copied()
        .filter(|g| g.runnable())
        .collect();
    for g in GhashImpl::ALL.iter().filter(|g| !g.runnable()) {
        let _ = writeln!(
            std::io::stderr(),
            "note: GHASH backend {} not tested: this CPU lacks it",
            g.name()
        );
    }
    all
}

#[test]
fn ghash_matches_the_spec_algorithm_across_batches() {
    let mut rng = Rng::new(0x6a5);
    for imp in runnable_ghash() {
        for blocks in (0..=40).chain([47, 48, 49, 64]) {
            let mut h = [0u8; 16];
            rng.fill(&mut h);
            let mut data = vec![0u8; 16 * blocks];
            rng.fill(&mut data);
            let key = GhashKey::new(imp, &h);
            let mut g = key.start();
            g.blocks(&data);
            assert_eq!(
                g.value(),
                ghash_ref(&h, &data),
                "{} {blocks} blocks",
                imp.name()
            );
            // In two calls, split anywhere on a block boundary.
            let cut = 16 * rng.below(blocks + 1);
            let key = GhashKey::new(imp, &h);
            let mut g = key.start();
            g.blocks(&data[..cut]);
            g.blocks(&data[cut..]);
            assert_eq!(
                g.value(),
                ghash_ref(&h, &data),
                "{} split {cut}",
                imp.name()
            );
        }
        // H with the top and bottom bits set (the reductions' edge cases).
        for h in [[0xff; 16], hex!("80000000000000000000000000000001")] {
            let data = [0xffu8; 16 * 17];
            let key = GhashKey::new(imp, &h);
            let mut g = key.start();
            g.blocks(&data);
            assert_eq!(g.value(), ghash_ref(&h, &data), "{}", imp.name());
        }
    }
}

fn aws_seal(key: &[u8], nonce: &[u8; 12], aad: &[u8], data: &mut [u8]) -> [u8; 16] {
    let alg = match key.len() {
        16 => &aead::AES_128_GCM,
        24 => &aead::AES_192_GCM,
        _ => &aead::AES_256_GCM,
    };
    let k = LessSafeKey::new(UnboundKey::new(alg, key).unwrap());
    let tag = k
        .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*nonce), Aad::from(aad), data)
        .unwrap();
    tag.as_ref().try_into().unwrap()
}

/// AES-GCM keyed with `key` and GHASH `imp` on every AES this CPU runs: our
/// AES-instruction kernels and, on x86-64 with SSSE3, the portable tier's
/// bitsliced AES.
fn gcm_on_every_aes(key: &[u8], imp: GhashImpl) -> Vec<AesGcm> {
    let all = crate::aes::tests::backends()
        .into_iter()
        .map(|b| AesGcm::with_aes(AesModes::with_backend(key, b).unwrap(), imp).unwrap());
    #[cfg(target_arch = "x86_64")]
    let all = all.chain(
        crate::aes::x86_ssse3::available()
            .then(|| AesGcm::with_modes(crate::op::ssse3_aes_modes(key).unwrap(), imp).unwrap()),
    );
    all.collect()
}

#[test]
fn gcm_matches_aws_lc_every_backend() {
    let mut rng = Rng::new(0x6c3);
    let mut lens: Vec<usize> = (0..70).collect();
    lens.extend([
        255,
        256,
        257,
        511,
        4095,
        CHUNK - 1,
        CHUNK,
        CHUNK + 17,
        3 * CHUNK + 5,
    ]);
    for _ in 0..20 {
        lens.push(rng.below(3000));
    }
    for imp in runnable_ghash() {
        for (n, &len) in lens.iter().enumerate() {
            let key_len = [16, 24, 32][n % 3];
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let mut nonce = [0u8; 12];
            rng.fill(&mut nonce);
            let mut aad = vec![0u8; rng.below(70)];
            rng.fill(&mut aad);
            let mut pt = vec![0u8; len];
            rng.fill(&mut pt);
            for gcm in gcm_on_every_aes(&key, imp) {
                let what = format!("{} {key_len} {len} aad {}", gcm.name(), aad.len());

                let mut ours = pt.clone();
                let tag = gcm.seal(&nonce, &aad, &mut ours);
                let mut theirs = pt.clone();
                let want = aws_seal(&key, &nonce, &aad, &mut theirs);
                assert_eq!(ours, theirs, "{what}: ciphertext");
                assert_eq!(tag, want, "{what}: tag");

                let mut back = ours.clone();
                gcm.open(&nonce, &aad, &mut back, &tag)
                    .unwrap_or_else(|_| panic!("{what}: refused its own seal"));
                assert_eq!(back, pt, "{what}: open");

                // A changed tag, ciphertext or AAD is refused, the data untouched.
                let mut bad = tag;
                bad[rng.below(16)] ^= 1 << rng.below(8);
                let mut buf = ours.clone();
                assert!(gcm.open(&nonce, &aad, &mut buf, &bad).is_err(), "{what}");
                assert_eq!(buf, ours, "{what}: refused data changed");
                if len > 0 {
                    let mut buf = ours.clone();
                    buf[rng.below(len)] ^= 0x40;
                    let before = buf.clone();
                    assert!(gcm.open(&nonce, &aad, &mut buf, &tag).is_err(), "{what}");
                    assert_eq!(buf, before, "{what}: refused data changed");
                }
                let mut aad2 = aad.clone();
                aad2.push(0);
                let mut buf = ours.clone();
                assert!(gcm.open(&nonce, &aad2, &mut buf, &tag).is_err(), "{what}");
            }
        }
    }
}

/// McGrew and Viega (2005), Appendix B, test cases 4 (AES-128), 10 (AES-192)
/// and 16 (AES-256): 60 bytes of plaintext, 20 of AAD.
#[test]
fn gcm_mcgrew_viega_vectors_every_backend() {
    let p = hex!(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
    );
    let p = &p[..60];
    let a = hex!("feedfacedeadbeeffeedfacedeadbeefabaddad2");
    let iv = hex!("cafebabefacedbaddecaf888");
    let k = hex!("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
    let cases: [(&[u8], [u8; 60], [u8; 16]); 3] = [
        (
            &k[..16],
            hex!(
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
                "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
            ),
            hex!("5bc94fbc3221a5db94fae95ae7121a47"),
        ),
        (
            &k[..24],
            hex!(
                "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
                "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710"
            ),
            hex!("2519498e80f1478f37ba55bd6d27618c"),
        ),
        (
            &k[..],
            hex!(
                "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
            ),
            hex!("76fc6ece0f4e1768cddf8853bb2d551b"),
        ),
    ];
    for imp in runnable_ghash() {
        for (key, ct, tag) in &cases {
            for gcm in gcm_on_every_aes(key, imp) {
                let mut buf = p.to_vec();
                assert_eq!(gcm.seal(&iv, &a, &mut buf), *tag, "{}", gcm.name());
                assert_eq!(buf, ct, "{}", gcm.name());
                gcm.open(&iv, &a, &mut buf, tag).unwrap();
                assert_eq!(buf, p);
            }
        }
    }
}
