//! Every backend this CPU can run against the `chacha20` crate, plus the
//! official vectors.

use super::*;
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use hex_literal::hex;

/// splitmix64: reproducible cases without a dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn fill(&mut self, b: &mut [u8]) {
        for x in b {
            *x = self.next() as u8;
        }
    }
}

/// The backends this CPU runs; a note for each it lacks (never skipped
/// silently). Fails if none but the portable one is exercised where the
/// architecture has SIMD and the CPU reports it.
pub(crate) fn backends() -> Vec<ChaChaImpl> {
    let mut out = Vec::new();
    for &imp in implementations() {
        if runnable(imp) {
            out.push(imp);
        } else {
            println!(
                "note: ChaCha backend {} not tested: this CPU lacks it",
                imp.name()
            );
        }
    }
    println!("ChaCha backends tested: {:?}", out);
    assert!(out.contains(&ChaChaImpl::Soft));
    assert!(
        out.contains(&dispatch::chacha()),
        "the dispatched backend is tested"
    );
    out
}

/// Runs the crate's cipher `C` (seeked to block `counter`) over `data`; `None`
/// when it refuses (counter overflow).
fn oracle<C: KeyIvInit + StreamCipher + StreamCipherSeek>(
    key: &[u8],
    nonce: &[u8],
    counter: u32,
    data: &[u8],
) -> Option<Vec<u8>> {
    let mut c = C::new_from_slices(key, nonce).unwrap();
    c.try_seek(u64::from(counter) * 64).ok()?;
    let mut out = data.to_vec();
    c.try_apply_keystream(&mut out).ok()?;
    Some(out)
}

/// Random lengths (across batch boundaries of every backend), offsets
/// (alignment), and counters (small, random, and close to the 32-bit end).
fn random_cases(
    seed: u64,
    cases: usize,
    mut check: impl FnMut(&[u8; 32], &[u8; 24], u32, &[u8], usize),
) {
    let mut rng = Rng(seed);
    let mut buf = vec![0u8; 70_000];
    for i in 0..cases {
        let mut key = [0u8; 32];
        let mut nonce = [0u8; 24];
        rng.fill(&mut key);
        rng.fill(&mut nonce);
        let len = match i % 4 {
            0 => rng.below(1100),
            1 => 64 * rng.below(40) + [0, 1, 63][rng.below(3)],
            2 => rng.below(5000),
            _ => rng.below(70_000 - 64),
        };
        let offset = rng.below(64);
        let counter = match i % 3 {
            0 => rng.below(100) as u32,
            1 => rng.next() as u32,
            _ => u32::MAX - rng.below(1200) as u32,
        };
        rng.fill(&mut buf[..offset + len]);
        check(&key, &nonce, counter, &buf[offset..offset + len], offset);
    }
}

fn ours<const R: usize>(
    imp: ChaChaImpl,
    key: &[u8; 32],
    nonce: &[u8; 12],
    counter: u32,
    data: &[u8],
    offset: usize,
) -> Option<Vec<u8>> {
    // Work at `offset` inside a larger buffer so unaligned pointers are used.
    let mut buf = vec![0xA5u8; offset + data.len() + 7];
    buf[offset..offset + data.len()].copy_from_slice(data);
    let r = xor_keystream_with::<R>(
        imp,
        key,
        nonce,
        counter,
        &mut buf[offset..offset + data.len()],
    );
    assert!(
        buf[..offset].iter().all(|&b| b == 0xA5),
        "wrote before the data"
    );
    assert!(
        buf[offset + data.len()..].iter().all(|&b| b == 0xA5),
        "wrote past the data"
    );
    match r {
        Ok(()) => Some(buf[offset..offset + data.len()].to_vec()),
        Err(CounterOverflow) => {
            assert_eq!(
                &buf[offset..offset + data.len()],
                data,
                "refused but changed"
            );
            None
        }
    }
}

fn against_crate<const R: usize, C: KeyIvInit + StreamCipher + StreamCipherSeek>(seed: u64) {
    for imp in backends() {
        let mut refused = 0;
        random_cases(seed, 300, |key, n24, counter, data, offset| {
            let nonce: &[u8; 12] = n24[..12].try_into().unwrap();
            let want = oracle::<C>(key, nonce, counter, data);
            let got = ours::<R>(imp, key, nonce, counter, data, offset);
            refused += usize::from(want.is_none());
            assert!(
                want == got,
                "ChaCha{R} {} len {} counter {counter:#x} offset {offset}",
                imp.name(),
                data.len()
            );
        });
        assert!(refused > 0, "some cases run past the counter's end");
    }
}

#[test]
fn chacha20_every_backend_matches_the_crate() {
    against_crate::<20, chacha20::ChaCha20>(1);
}

#[test]
fn chacha12_every_backend_matches_the_crate() {
    against_crate::<12, chacha20::ChaCha12>(2);
}

#[test]
fn chacha8_every_backend_matches_the_crate() {
    against_crate::<8, chacha20::ChaCha8>(3);
}

/// Every length around the batch sizes of every backend (4, 8 and 16 blocks,
/// AVX-512's pair of two batches: 32, and the batches with a scalar block:
/// 9, and 72 where the plain batches take over), at a low counter and at one
/// that ends exactly at the counter's last usable block: the pair loop hands
/// over to the single batches at the right block and counter.
#[test]
fn every_batch_and_pair_boundary_matches_the_crate() {
    let key: [u8; 32] = core::array::from_fn(|i| (i * 7 + 1) as u8);
    let nonce: [u8; 12] = core::array::from_fn(|i| (i * 13 + 5) as u8);
    let data: Vec<u8> = (0..64 * 90).map(|i| (i * 31 + 3) as u8).collect();
    for imp in backends() {
        for blocks in [
            4usize, 5, 8, 9, 10, 16, 17, 18, 20, 21, 24, 32, 48, 64, 72, 80, 81, 88,
        ] {
            for len in [
                64 * blocks - 1,
                64 * blocks,
                64 * blocks + 1,
                64 * blocks + 63,
            ] {
                // The last block is `u32::MAX - 1` (see `counter_end`).
                let last = u32::MAX - len.div_ceil(64) as u32;
                for counter in [3, last] {
                    let want = oracle::<chacha20::ChaCha20>(&key, &nonce, counter, &data[..len]);
                    let got = ours::<20>(imp, &key, &nonce, counter, &data[..len], 5);
                    assert!(want.is_some(), "len {len} counter {counter:#x}");
                    assert!(want == got, "{} len {len} counter {counter:#x}", imp.name());
                }
            }
        }
    }
}

/// The counter ends where the crate's does: the last block usable is
/// `u32::MAX - 1`.
#[test]
fn counter_end() {
    let key = [7u8; 32];
    let nonce = [9u8; 12];
    for imp in backends() {
        let mut one = [0u8; 64];
        assert!(xor_keystream_with::<20>(imp, &key, &nonce, u32::MAX - 1, &mut one).is_ok());
        let mut two = [0u8; 65];
        assert_eq!(
            xor_keystream_with::<20>(imp, &key, &nonce, u32::MAX - 1, &mut two),
            Err(CounterOverflow)
        );
        assert!(xor_keystream_with::<20>(imp, &key, &nonce, u32::MAX, &mut []).is_ok());
        let want = oracle::<chacha20::ChaCha20>(&key, &nonce, u32::MAX - 1, &[0u8; 64]).unwrap();
        assert_eq!(one.to_vec(), want, "{}", imp.name());
    }
}

/// RFC 8439 section 2.4.2 (the sunscreen text) and appendix A.2 vectors 1-3.
#[test]
fn rfc8439_vectors_every_backend() {
    let sunscreen = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    let key_2_4_2: [u8; 32] = core::array::from_fn(|i| i as u8);
    let nonce_2_4_2 = hex!("000000000000004a00000000");
    let ct_2_4_2 = hex!(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d"
    );
    // A.2 #2: key 00..01, nonce 00..02, counter 1, the IETF submission text.
    let text_a2_2 = b"Any submission to the IETF intended by the Contributor for publication as all or part of an IETF Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and electronic communications made at any time or place, which are addressed to";
    let mut key_a2_2 = [0u8; 32];
    key_a2_2[31] = 1;
    let mut nonce_a2_2 = [0u8; 12];
    nonce_a2_2[11] = 2;
    let ct_a2_2 = hex!(
        "a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec"
        "2a97948bd3722915c8f3d337f7d370050e9e96d647b7c39f56e031ca5eb6250d"
        "4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e527950"
        "42bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85a"
        "d00f8449ed8f72d0d662ab052691ca66424bc86d2df80ea41f43abf937d3259d"
        "c4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b"
        "0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6c"
        "cc3aaf9f3979c92b3720fc88dc95ed84a1be059c6499b9fda236e7e818b04b0b"
        "c39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f"
        "5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e6"
        "98ced759c3ff9b6477338f3da4f9cd8514ea9982ccafb341b2384dd902f3d1ab"
        "7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221"
    );
    // A.2 #3: the Jabberwocky, counter 42.
    let key_a2_3 = hex!("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0");
    let text_a2_3 = b"'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe.";
    let ct_a2_3 = hex!(
        "62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf"
        "166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb"
        "f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77"
        "04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1"
    );
    for imp in backends() {
        let mut b = sunscreen.to_vec();
        xor_keystream_with::<20>(imp, &key_2_4_2, &nonce_2_4_2, 1, &mut b).unwrap();
        assert_eq!(
            hex::encode(&b),
            hex::encode(ct_2_4_2),
            "2.4.2 {}",
            imp.name()
        );
        // A.2 #1: all-zero key and nonce, counter 0, 64 zero bytes.
        let mut z = [0u8; 64];
        xor_keystream_with::<20>(imp, &[0; 32], &[0; 12], 0, &mut z).unwrap();
        assert_eq!(
            z,
            hex!(
                "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
            ),
            "A.2 #1 {}",
            imp.name()
        );
        let mut b = text_a2_2.to_vec();
        xor_keystream_with::<20>(imp, &key_a2_2, &nonce_a2_2, 1, &mut b).unwrap();
        assert_eq!(
            hex::encode(&b),
            hex::encode(ct_a2_2),
            "A.2 #2 {}",
            imp.name()
        );
        let mut b = text_a2_3.to_vec();
        xor_keystream_with::<20>(imp, &key_a2_3, &nonce_a2_2, 42, &mut b).unwrap();
        assert_eq!(
            hex::encode(&b),
            hex::encode(ct_a2_3),
            "A.2 #3 {}",
            imp.name()
        );
    }
}

/// draft-irtf-cfrg-xchacha-03 section 2.2.1 (HChaCha20).
#[test]
fn hchacha20_draft_vector() {
    let key: [u8; 32] = core::array::from_fn(|i| i as u8);
    let input = hex!("000000090000004a0000000031415927");
    assert_eq!(
        *hchacha::<20>(&key, &input),
        hex!("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")
    );
}

/// draft-irtf-cfrg-xchacha-03 appendix A.3.2 (XChaCha20, block counter 1).
#[test]
fn xchacha20_draft_vector() {
    let key = hex!("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    let nonce = hex!("404142434445464748494a4b4c4d4e4f5051525354555658");
    let pt = b"The dhole (pronounced \"dole\") is also known as the Asiatic wild dog, red dog, and whistling dog. It is about the size of a German shepherd but looks more like a long-legged fox. This highly elusive and skilled jumper is classified with wolves, coyotes, jackals, and foxes in the taxonomic family Canidae.";
    let ct = hex!(
        "7d0a2e6b7f7c65a236542630294e063b7ab9b555a5d5149aa21e4ae1e4fbce87"
        "ecc8e08a8b5e350abe622b2ffa617b202cfad72032a3037e76ffdcdc4376ee05"
        "3a190d7e46ca1de04144850381b9cb29f051915386b8a710b8ac4d027b8b050f"
        "7cba5854e028d564e453b8a968824173fc16488b8970cac828f11ae53cabd201"
        "12f87107df24ee6183d2274fe4c8b1485534ef2c5fbc1ec24bfc3663efaa08bc"
        "047d29d25043532db8391a8a3d776bf4372a6955827ccb0cdd4af403a7ce4c63"
        "d595c75a43e045f0cce1f29c8b93bd65afc5974922f214a40b7c402cdb91ae73"
        "c0b63615cdad0480680f16515a7ace9d39236464328a37743ffc28f4ddb324f4"
        "d0f5bbdc270c65b1749a6efff1fbaa09536175ccd29fb9e6057b307320d31683"
        "8a9c71f70b5b5907a66f7ea49aadc409"
    );
    let mut b = pt.to_vec();
    xchacha_xor_keystream::<20>(&key, &nonce, 1, &mut b).unwrap();
    assert_eq!(hex::encode(&b), hex::encode(ct));
}

/// XChaCha20 and XChaCha12 (Adiantum's) against the crate.
#[test]
fn xchacha_matches_the_crate() {
    random_cases(4, 120, |key, nonce, counter, data, _| {
        let want = oracle::<chacha20::XChaCha20>(key, nonce, counter, data);
        let mut got = data.to_vec();
        let r = xchacha_xor_keystream::<20>(key, nonce, counter, &mut got);
        assert_eq!(want, r.ok().map(|()| got), "XChaCha20 len {}", data.len());
        let want = oracle::<chacha20::XChaCha12>(key, nonce, counter, data);
        let mut got = data.to_vec();
        let r = xchacha_xor_keystream::<12>(key, nonce, counter, &mut got);
        assert_eq!(want, r.ok().map(|()| got), "XChaCha12 len {}", data.len());
    });
    let key = [3u8; 32];
    let input = [5u8; 16];
    assert_eq!(
        hchacha::<12>(&key, &input).as_slice(),
        chacha20::hchacha::<chacha20::R12>(&key.into(), &input.into()).as_slice()
    );
}

#[test]
fn keystream_block_is_the_crates_block() {
    let mut rng = Rng(0x6b65_7973);
    for _ in 0..50 {
        let mut key = [0u8; 32];
        let mut nonce = [0u8; 12];
        rng.fill(&mut key);
        rng.fill(&mut nonce);
        for counter in [0, 1, rng.next() as u32, u32::MAX - 1] {
            let want = oracle::<chacha20::ChaCha20>(&key, &nonce, counter, &[0; 64]).unwrap();
            assert_eq!(
                keystream_block::<20>(&key, &nonce, counter)[..],
                want[..],
                "counter {counter}"
            );
        }
    }
}
