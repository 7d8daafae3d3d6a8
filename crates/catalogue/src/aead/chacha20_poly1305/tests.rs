//! Every ChaCha backend this CPU runs: the RFC 8439 vectors, AWS-LC as the
//! oracle on random lengths (across chunk boundaries), and tampering.

use super::*;
use crate::chacha::tests::{Rng, backends};
use aws_lc_rs::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
use hex_literal::hex;

/// The ChaCha kernels that have stitched code.
const STITCHED: [ChaChaImpl; 2] = [ChaChaImpl::Avx2, ChaChaImpl::Ssse3];

/// The stitched AEADs keyed with `key` that this CPU runs.
fn every_stitched(key: &[u8; 32]) -> Vec<ChaCha20Poly1305> {
    let mut out = Vec::new();
    for imp in STITCHED {
        if stitched_runnable(imp) {
            out.push(ChaCha20Poly1305::new_stitched(imp, key));
        } else {
            println!("note: stitched ChaCha20-Poly1305 on {imp:?} not tested: not on this CPU");
        }
    }
    out
}

/// The AEAD keyed with `key` on every backend this CPU runs: each ChaCha
/// kernel with Poly1305 after it, the stitched AVX2 and SSSE3 code, and
/// AVX-512 with Poly1305 on IFMA.
fn every_aead(key: &[u8; 32]) -> Vec<ChaCha20Poly1305> {
    let mut out: Vec<_> = backends()
        .into_iter()
        .map(|imp| ChaCha20Poly1305::new(imp, key))
        .collect();
    out.extend(every_stitched(key));
    if ifma_runnable() {
        out.push(ChaCha20Poly1305::new_ifma(key));
    } else {
        println!("note: ChaCha20-Poly1305 on AVX-512 IFMA not tested: not on this CPU");
    }
    out
}

#[test]
fn ifma_is_named_and_runs_the_avx512_kernel() {
    if !ifma_runnable() {
        println!("note: ChaCha20-Poly1305 on AVX-512 IFMA not tested: not on this CPU");
        return;
    }
    let aead = ChaCha20Poly1305::new_ifma(&[3; 32]);
    assert_eq!(aead.implementation(), ChaChaPolyImpl::Avx512Ifma);
    assert_eq!(aead.imp(), ChaChaImpl::Avx512);
    assert_eq!(aead.implementation().name(), "avx512+poly1305-ifma");
}

/// An IFMA key runs IFMA from [`IFMA_SEAL_FROM`] bytes sealing and
/// [`IFMA_OPEN_FROM`] opening, and the stitched AVX2 pass below; every other
/// key runs its own mode at every length.
#[test]
fn an_ifma_key_runs_short_data_stitched() {
    const { assert!(IFMA_SEAL_FROM <= IFMA_OPEN_FROM && IFMA_SEAL_FROM > 512) };
    if ifma_runnable() {
        let aead = ChaCha20Poly1305::new_ifma(&[3; 32]);
        if stitched_runnable(ChaChaImpl::Avx2) {
            for (len, seal, want) in [
                (0, true, (ChaChaImpl::Avx2, Poly::Stitched)),
                (IFMA_SEAL_FROM - 1, true, (ChaChaImpl::Avx2, Poly::Stitched)),
                (IFMA_SEAL_FROM, true, (ChaChaImpl::Avx512, Poly::Ifma)),
                (IFMA_SEAL_FROM, false, (ChaChaImpl::Avx2, Poly::Stitched)),
                (
                    IFMA_OPEN_FROM - 1,
                    false,
                    (ChaChaImpl::Avx2, Poly::Stitched),
                ),
                (IFMA_OPEN_FROM, false, (ChaChaImpl::Avx512, Poly::Ifma)),
                (1 << 20, false, (ChaChaImpl::Avx512, Poly::Ifma)),
            ] {
                assert!(aead.plan(len, seal) == want, "{len} bytes, seal {seal}");
            }
            // Rows name what ran, sealing/opening where they differ.
            for (len, name) in [
                (512, "avx2+poly1305-stitched"),
                (
                    IFMA_SEAL_FROM,
                    "avx512+poly1305-ifma/avx2+poly1305-stitched",
                ),
                (IFMA_OPEN_FROM, "avx512+poly1305-ifma"),
            ] {
                assert_eq!(aead.name_for(len), name, "{len} bytes");
            }
        }
    } else {
        eprintln!("note: no AVX-512 IFMA on this CPU; the IFMA key's plan is not tested");
    }
    for aead in every_aead(&[3; 32]) {
        if aead.poly != Poly::Ifma {
            for len in [0, 512, IFMA_SEAL_FROM, IFMA_OPEN_FROM, 1 << 20] {
                assert!(aead.plan(len, true) == (aead.imp, aead.poly));
                assert!(aead.plan(len, false) == (aead.imp, aead.poly));
                assert_eq!(aead.name_for(len), aead.implementation().name());
            }
        }
    }
}

#[test]
fn stitched_implementations_are_named_and_listed() {
    let key = [1u8; 32];
    let listed = stitched_implementations();
    for aead in every_stitched(&key) {
        let imp = aead.implementation();
        assert_eq!(imp, ChaChaPolyImpl::stitched(aead.imp()));
        assert_eq!(
            imp.name(),
            format!("{}+poly1305-stitched", aead.imp().name())
        );
        assert!(listed.contains(&imp), "{imp:?}");
    }
    assert_eq!(listed.len(), every_stitched(&key).len());
    for imp in [ChaChaImpl::Soft, ChaChaImpl::Sse2, ChaChaImpl::Avx512] {
        assert!(!stitched_runnable(imp), "{imp:?}");
    }
}

/// A vector of `n` bytes from `rng`.
fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill(&mut v);
    v
}

/// AWS-LC's seal: (ciphertext, tag).
fn aws_lc_seal(key: &[u8; 32], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let k = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).unwrap());
    let mut ct = pt.to_vec();
    let tag = k
        .seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(aad),
            &mut ct,
        )
        .unwrap();
    (ct, tag.as_ref().try_into().unwrap())
}

/// Seals `pt`, expects `ct` and `tag`, opens it back, on every backend.
#[track_caller]
fn kat(key: &[u8; 32], nonce: &[u8; 12], aad: &[u8], pt: &[u8], ct: &[u8], tag: &[u8; 16]) {
    for aead in every_aead(key) {
        let imp = aead.implementation();
        let mut buf = pt.to_vec();
        assert_eq!(aead.seal(nonce, aad, &mut buf), *tag, "{imp:?} tag");
        assert_eq!(buf, ct, "{imp:?} ciphertext");
        aead.open(nonce, aad, &mut buf, tag).expect("opens");
        assert_eq!(buf, pt, "{imp:?} plaintext");
    }
}

/// RFC 8439 section 2.6.2: the one-time Poly1305 key from block 0.
#[test]
fn rfc8439_2_6_2_one_time_key() {
    let key: [u8; 32] = core::array::from_fn(|i| 0x80 + i as u8);
    let nonce = hex!("000000000001020304050607");
    let want = hex!("8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646");
    for imp in backends() {
        let aead = ChaCha20Poly1305::new(imp, &key);
        let mut block0 = [0u8; 64];
        aead.xor(&nonce, 0, &mut block0);
        assert_eq!(block0[..32], want, "{imp:?}");
        // mac_start keys r with the first half and returns s as the second.
        let (mac, s) = aead.mac_start(Poly::After, &nonce, &[]);
        assert_eq!(s[..], want[16..], "{imp:?} s");
        let mut r_only = Poly1305Hash::new(want[..16].try_into().unwrap());
        r_only.update_blocks(&[7; 16]);
        let mut m = mac.clone();
        m.update_blocks(&[7; 16]);
        assert_eq!(m.finish(), r_only.finish(), "{imp:?} r");
    }
}

/// RFC 8439 section 2.8.2, "Example and Test Vector for AEAD_CHACHA20_POLY1305".
#[test]
fn rfc8439_2_8_2() {
    let key: [u8; 32] = core::array::from_fn(|i| 0x80 + i as u8);
    kat(
        &key,
        &hex!("070000004041424344454647"),
        &hex!("50515253c0c1c2c3c4c5c6c7"),
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip \
          for the future, sunscreen would be it.",
        &hex!(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
            "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
            "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
            "3ff4def08e4b7a9de576d26586cec64b6116"
        ),
        &hex!("1ae10b594f09e26a7e902ecbd0600691"),
    );
}

/// RFC 8439 Appendix A.5, "ChaCha20-Poly1305 AEAD Decryption" (265 bytes).
#[test]
fn rfc8439_a5() {
    kat(
        &hex!("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"),
        &hex!("000000000102030405060708"),
        &hex!("f33388860000000000004e91"),
        "Internet-Drafts are draft documents valid for a maximum of six months and may \
         be updated, replaced, or obsoleted by other documents at any time. It is \
         inappropriate to use Internet-Drafts as reference material or to cite them \
         other than as /\u{201c}work in progress./\u{201d}"
            .as_bytes(),
        &hex!(
            "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2"
            "4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf"
            "332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855"
            "9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4"
            "b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e"
            "af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a"
            "0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10"
            "49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29"
            "a6ad5cb4022b02709b"
        ),
        &hex!("eead9d67890cbb22392336fea1851f38"),
    );
}

/// Random data and aad lengths (0..2000, and around the chunk boundaries),
/// against AWS-LC, both ways.
#[test]
fn equals_aws_lc_on_random_lengths() {
    let mut rng = Rng(0xc4ac_4a20_1305);
    let mut lens: Vec<usize> = (0..200).map(|_| (rng.next() % 2000) as usize).collect();
    lens.extend([0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257]);
    for k in 1..=3 {
        lens.extend([
            k * CHUNK - 1,
            k * CHUNK,
            k * CHUNK + 1,
            k * CHUNK + 4 * 64 + 9,
        ]);
    }
    for (i, &len) in lens.iter().enumerate() {
        let key: [u8; 32] = bytes(&mut rng, 32).try_into().unwrap();
        let nonce: [u8; 12] = bytes(&mut rng, 12).try_into().unwrap();
        let aad_len = (rng.next() % 2000) as usize;
        let aad = bytes(&mut rng, aad_len);
        let pt = bytes(&mut rng, len);
        let (ct, tag) = aws_lc_seal(&key, &nonce, &aad, &pt);
        for aead in every_aead(&key) {
            let imp = aead.implementation();
            let what = format!("{imp:?} case {i}: data {len} aad {}", aad.len());
            let mut buf = pt.clone();
            assert_eq!(aead.seal(&nonce, &aad, &mut buf), tag, "{what}: tag");
            assert!(buf == ct, "{what}: ciphertext");
            aead.open(&nonce, &aad, &mut buf, &tag)
                .unwrap_or_else(|_| panic!("{what}: open"));
            assert!(buf == pt, "{what}: plaintext");
        }
    }
}

/// A flipped bit anywhere in the tag, the ciphertext or the aad, a changed
/// nonce, or a ciphertext one byte shorter is rejected, and the data is
/// left as it was: no plaintext is released.
#[test]
fn tampering_is_rejected_and_releases_nothing() {
    let mut rng = Rng(0x7a3b_e4ed);
    let key: [u8; 32] = bytes(&mut rng, 32).try_into().unwrap();
    for aead in every_aead(&key) {
        let imp = aead.implementation();
        for len in [0, 1, 16, 100, 511, 512, 513, 1024 + 17, CHUNK + 33] {
            let nonce: [u8; 12] = bytes(&mut rng, 12).try_into().unwrap();
            let aad = bytes(&mut rng, 21);
            let mut ct = bytes(&mut rng, len);
            let tag = aead.seal(&nonce, &aad, &mut ct);
            let rejected =
                |aad: &[u8], nonce: &[u8; 12], data: &[u8], tag: &[u8; 16], what: &str| {
                    let mut buf = data.to_vec();
                    assert_eq!(
                        aead.open(nonce, aad, &mut buf, tag),
                        Err(AuthError),
                        "{imp:?} {len}: {what}"
                    );
                    assert!(buf == data, "{imp:?} {len}: {what}: data changed");
                };
            for bit in 0..128 {
                let mut t = tag;
                t[bit / 8] ^= 1 << (bit % 8);
                rejected(&aad, &nonce, &ct, &t, "tag bit");
            }
            for _ in 0..16.min(8 * len) {
                let bit = (rng.next() as usize) % (8 * len);
                let mut c = ct.clone();
                c[bit / 8] ^= 1 << (bit % 8);
                rejected(&aad, &nonce, &c, &tag, "ciphertext bit");
            }
            if len > 0 {
                rejected(&aad, &nonce, &ct[..len - 1], &tag, "truncated");
            }
            for bit in 0..8 * aad.len() {
                let mut a = aad.clone();
                a[bit / 8] ^= 1 << (bit % 8);
                rejected(&a, &nonce, &ct, &tag, "aad bit");
            }
            let mut a = aad.clone();
            a.push(0);
            rejected(&a, &nonce, &ct, &tag, "aad longer");
            let mut n = nonce;
            n[11] ^= 0x80;
            rejected(&aad, &n, &ct, &tag, "nonce");
            // And the untouched message still opens.
            let mut buf = ct.clone();
            aead.open(&nonce, &aad, &mut buf, &tag).expect("opens");
        }
    }
}

/// Every length from 0 to 1100 bytes (both 512-byte batch edges of the
/// stitched code, every 16-byte Poly1305 block edge), lengths around larger
/// batch multiples, and random ones to 5000, with aad of every length to 40
/// and random ones: ours on every backend against AWS-LC, both ways.
#[test]
fn equals_aws_lc_at_every_batch_and_block_edge() {
    let mut rng = Rng(0x5717_c4ed);
    let mut lens: Vec<usize> = (0..=1100).collect();
    for k in [3, 4, 7, 8, 9, 16] {
        lens.extend(k * 512 - 17..=k * 512 + 17);
    }
    lens.extend((0..300).map(|_| rng.below(5000)));
    let key: [u8; 32] = bytes(&mut rng, 32).try_into().unwrap();
    let aeads = every_aead(&key);
    for (i, &len) in lens.iter().enumerate() {
        let nonce: [u8; 12] = bytes(&mut rng, 12).try_into().unwrap();
        let aad_len = if i % 2 == 0 { i % 41 } else { rng.below(600) };
        let aad = bytes(&mut rng, aad_len);
        let pt = bytes(&mut rng, len);
        let (ct, tag) = aws_lc_seal(&key, &nonce, &aad, &pt);
        for aead in &aeads {
            let what = format!("{:?}: data {len} aad {aad_len}", aead.implementation());
            let mut buf = pt.clone();
            assert_eq!(aead.seal(&nonce, &aad, &mut buf), tag, "{what}: tag");
            assert!(buf == ct, "{what}: ciphertext");
            aead.open(&nonce, &aad, &mut buf, &tag)
                .unwrap_or_else(|_| panic!("{what}: open"));
            assert!(buf == pt, "{what}: plaintext");
        }
    }
}

/// The stitched code on a tag that fails after it has decrypted: a flipped
/// bit in the first, a middle and the last batch (256 bytes for SSSE3, 512
/// for AVX2) and in the tail, at lengths around the batch edges; the data
/// comes back exactly as it was.
#[test]
fn stitched_open_restores_the_data_on_a_bad_tag() {
    let mut rng = Rng(0xbad7_a9a9);
    let key: [u8; 32] = bytes(&mut rng, 32).try_into().unwrap();
    for aead in every_stitched(&key) {
        let imp = aead.implementation();
        for len in [
            1,
            255,
            256,
            257,
            511,
            512,
            513,
            1023,
            1024,
            1040,
            3 * 512 + 100,
            CHUNK + 500,
        ] {
            let nonce: [u8; 12] = bytes(&mut rng, 12).try_into().unwrap();
            let mut ct = bytes(&mut rng, len);
            let tag = aead.seal(&nonce, b"aad", &mut ct);
            let ats = [
                0,
                len / 2,
                len - 1,
                len / 256 * 256,
                len / 512 * 512,
                rng.below(len),
            ];
            for at in ats {
                let mut c = ct.clone();
                c[at.min(len - 1)] ^= 0x10;
                let tampered = c.clone();
                assert_eq!(aead.open(&nonce, b"aad", &mut c, &tag), Err(AuthError));
                assert!(c == tampered, "{imp:?} {len} at {at}: data changed");
            }
            let mut c = ct.clone();
            let mut t = tag;
            t[15] ^= 1;
            assert_eq!(aead.open(&nonce, b"aad", &mut c, &t), Err(AuthError));
            assert!(c == ct, "{imp:?} {len}: bad tag: data changed");
        }
    }
}

#[test]
fn the_length_limit_is_rfc_8439_less_the_unused_last_block() {
    assert_eq!(MAX_DATA_LEN, (1 << 38) - 128);
}
