//! Every backend this CPU runs against the `aes` crate composed with the
//! portable modes of [`crate::modes`], on random keys, lengths and
//! alignments, across batch boundaries and counter wraps, plus the official
//! vectors per backend. A backend the CPU lacks is named on stderr.

use std::io::Write;

use cipher::KeyInit;
use hex_literal::hex;

use super::{AesModes, AesXts, Backend};
use crate::ciphers::test_support::XorShift;
use crate::modes::{BlockModes, Xts};

/// The backends this CPU runs; a note for each it lacks.
pub(crate) fn backends() -> Vec<Backend> {
    let mut out = Vec::new();
    for &b in Backend::ALL {
        if b.runnable() {
            out.push(b);
        } else {
            let _ = writeln!(
                std::io::stderr(),
                "note: AES backend {} not tested: this CPU lacks it",
                b.name()
            );
        }
    }
    out
}

/// The oracle's modes for a 16-, 24- or 32-byte key.
enum Oracle {
    A128(BlockModes<aes::Aes128>),
    A192(BlockModes<aes::Aes192>),
    A256(BlockModes<aes::Aes256>),
}

macro_rules! each {
    ($o:expr, $m:ident => $e:expr) => {
        match $o {
            Oracle::A128($m) => $e,
            Oracle::A192($m) => $e,
            Oracle::A256($m) => $e,
        }
    };
}

fn oracle(key: &[u8]) -> Oracle {
    match key.len() {
        16 => Oracle::A128(BlockModes::new(aes::Aes128::new_from_slice(key).unwrap())),
        24 => Oracle::A192(BlockModes::new(aes::Aes192::new_from_slice(key).unwrap())),
        _ => Oracle::A256(BlockModes::new(aes::Aes256::new_from_slice(key).unwrap())),
    }
}

fn oracle_xts(key: &[u8], iv: &[u8; 16], data: &mut [u8], enc: bool) {
    fn run<C>(key: &[u8], iv: &[u8; 16], data: &mut [u8], enc: bool)
    where
        C: KeyInit
            + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
            + cipher::BlockCipherDecrypt,
    {
        let (k1, k2) = key.split_at(key.len() / 2);
        let mut x = Xts::new(
            C::new_from_slice(k1).unwrap(),
            C::new_from_slice(k2).unwrap(),
        );
        if enc {
            x.encrypt(iv, data)
        } else {
            x.decrypt(iv, data)
        }
    }
    match key.len() {
        32 => run::<aes::Aes128>(key, iv, data, enc),
        48 => run::<aes::Aes192>(key, iv, data, enc),
        _ => run::<aes::Aes256>(key, iv, data, enc),
    }
}

/// A random length up to a few batches, often right at a batch boundary.
fn length(rng: &mut XorShift, block: usize) -> usize {
    let blocks = match rng.below(4) {
        0 => rng.below(4) * 16 + rng.below(3),
        1 => [8, 16, 32, 64][rng.below(4)] + [0, 1, 15][rng.below(3)],
        _ => rng.below(300),
    };
    blocks * block
}

#[test]
fn every_backend_matches_the_oracle_in_ecb_cbc_ctr() {
    let mut rng = XorShift(0x5eed_ae51);
    for backend in backends() {
        for round in 0..300 {
            let key_len = [16, 24, 32][round % 3];
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let ours = AesModes::with_backend(&key, backend).unwrap();
            let mut theirs = oracle(&key);
            let len = length(&mut rng, 16);
            let offset = rng.below(16);
            let mut buf = vec![0u8; len + offset + 1];
            rng.fill(&mut buf);
            let mut expect = buf[offset..offset + len].to_vec();
            let data = &mut buf[offset..offset + len];
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            let what = format!("{} AES-{} {len} bytes", backend.name(), key_len * 8);
            match round % 5 {
                0 => {
                    ours.ecb_encrypt(data);
                    each!(&mut theirs, m => m.ecb_encrypt(&mut expect));
                }
                1 => {
                    ours.ecb_decrypt(data);
                    each!(&mut theirs, m => m.ecb_decrypt(&mut expect));
                }
                2 => {
                    let mut iv2 = iv;
                    ours.cbc_encrypt(&mut iv, data);
                    each!(&mut theirs, m => m.cbc_encrypt(&mut iv2, &mut expect));
                    assert_eq!(iv, iv2, "{what}: CBC chaining value");
                }
                3 => {
                    let mut iv2 = iv;
                    ours.cbc_decrypt(&mut iv, data);
                    each!(&mut theirs, m => m.cbc_decrypt(&mut iv2, &mut expect));
                    assert_eq!(iv, iv2, "{what}: CBC chaining value");
                }
                _ => {
                    // Odd lengths; counters near both wraps now and then.
                    let cut = rng.below(16).min(expect.len());
                    let data = &mut buf[offset..offset + len - cut];
                    expect.truncate(len - cut);
                    match rng.below(3) {
                        0 => iv[8..].fill(0xff),
                        1 => iv.fill(0xff),
                        _ => {}
                    }
                    iv[15] = iv[15].wrapping_sub(rng.below(40) as u8);
                    let mut iv2 = iv;
                    ours.ctr_apply(&mut iv, data);
                    each!(&mut theirs, m => m.ctr_apply(&mut iv2, &mut expect));
                    assert_eq!(iv, iv2, "{what}: counter after");
                    assert_eq!(&buf[offset..offset + len - cut], &expect[..], "{what}");
                    continue;
                }
            }
            assert_eq!(
                &buf[offset..offset + len],
                &expect[..],
                "{what} mode {}",
                round % 5
            );
        }
    }
}

#[test]
fn every_backend_ctr_carries_across_both_wraps_and_chains() {
    let key = [7u8; 32];
    let mut theirs = oracle(&key);
    for backend in backends() {
        let ours = AesModes::with_backend(&key, backend).unwrap();
        for start in [
            hex!("0000000000000000fffffffffffffff0"),
            hex!("fffffffffffffffffffffffffffffffa"),
            hex!("00000000000000fffffffffffffffffe"),
            // The low 32 bits wrap at a batch boundary, and inside a batch.
            hex!("000000000000000000000000fffffff0"),
            hex!("0000000000000000000000fffffffff5"),
            // The last byte ends a batch exactly at its wrap, and wraps
            // inside one (the aarch64 kernel adds within that byte while it
            // can), again and again over 600 blocks.
            hex!("000000000000000000000000000001f8"),
            hex!("0000000000000000000000000000fefb"),
            // The low 64 bits wrap exactly at the end of a wide batch (16 or
            // 32 blocks) inside the second call, which starts 17 blocks on:
            // the register counters must not go on past it without the carry.
            hex!("00000000000000aaffffffffffffffdf"),
            hex!("00000000000000aaffffffffffffffcf"),
            hex!("00000000000000aaffffffffffffffaf"),
            hex!("00000000000000aaffffffffffffff6f"),
            // Counters that are a multiple of every batch (the fastest path,
            // which makes each block as the counter XOR a constant): the low
            // 64 bits wrap after 256 blocks, inside the second call, and the
            // low 32 bits after 128.
            hex!("00000000000000aaffffffffffffff00"),
            hex!("000000000000000000000000ffffff80"),
        ] {
            let mut data = vec![0u8; 600 * 16 + 5];
            let mut expect = data.clone();
            let (mut c1, mut c2) = (start, start);
            // Two calls: the counter returned must chain.
            let (a, b) = data.split_at_mut(17 * 16);
            ours.ctr_apply(&mut c1, a);
            ours.ctr_apply(&mut c1, b);
            each!(&mut theirs, m => m.ctr_apply(&mut c2, &mut expect));
            assert_eq!(data, expect, "{} from {start:02x?}", backend.name());
            assert_eq!(c1, c2);
        }
    }
}

/// Requests long enough for the x86 backends' cached first round
/// (`x86_modes::ctr_first_round_cached`, from 4 KiB): every key size,
/// counters at random, at every low byte (batches cross multiples of 256,
/// which make their blocks whole again, at every place in the batch), and
/// near the 64-bit and 32-bit wraps, at lengths around the threshold and
/// past it. The same key object serves both the short requests and the
/// long ones after its table is made.
#[test]
fn every_backend_ctr_matches_the_oracle_on_long_requests() {
    #[cfg(target_arch = "x86_64")]
    assert_eq!(super::x86_modes::FIRST_ROUND_FROM, 4096);
    let mut rng = XorShift(0x5eed_c7a1);
    for backend in backends() {
        for round in 0..36 {
            let key_len = [16, 24, 32][round % 3];
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let ours = AesModes::with_backend(&key, backend).unwrap();
            let mut theirs = oracle(&key);
            let len = match round % 6 {
                0 => 4096 - 16,
                1 => 4096,
                2 => 4096 + 16 * 12 + 16 * rng.below(32),
                _ => 4096 + rng.below(40 * 1024),
            };
            let offset = rng.below(16);
            let mut buf = vec![0u8; len + offset];
            rng.fill(&mut buf);
            let mut expect = buf[offset..].to_vec();
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            match round % 4 {
                0 => iv[8..].fill(0xff),
                1 => iv[12..].fill(0xff),
                _ => {}
            }
            // Up to 2,000 blocks before the wrap, or any low byte.
            let back = rng.below(2000) as u16;
            let low = u16::from_be_bytes([iv[14], iv[15]]).wrapping_sub(back);
            iv[14..].copy_from_slice(&low.to_be_bytes());
            let mut iv2 = iv;
            let what = format!(
                "{} AES-{} {len} bytes from {iv:02x?}",
                backend.name(),
                key_len * 8
            );
            // A short request after the long one, on the same counter (a
            // partial block would use one up: cut at a block).
            let cut = (len / 16 - rng.below(20).min((len / 16).saturating_sub(256))) * 16;
            let mut plain = buf.clone();
            let mut iv3 = iv;
            let (long, short) = buf[offset..].split_at_mut(cut);
            ours.ctr_apply(&mut iv, long);
            ours.ctr_apply(&mut iv, short);
            each!(&mut theirs, m => m.ctr_apply(&mut iv2, &mut expect));
            assert_eq!(iv, iv2, "{what}: counter after");
            assert!(buf[offset..] == expect[..], "{what}");
            // The same without the cache (the side-by-side example's path).
            ours.ctr_apply_with(&mut iv3, &mut plain[offset..], false);
            assert_eq!(iv3, iv2, "{what}: counter after, uncached");
            assert!(plain[offset..] == expect[..], "{what} uncached");
        }
    }
}

#[test]
fn every_backend_matches_the_oracle_in_xts() {
    let mut rng = XorShift(0x5eed_a7e5);
    for backend in backends() {
        for round in 0..300 {
            let key_len = [32, 48, 64][round % 3];
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            let ours = AesXts::with_backend(&key, backend).unwrap();
            let len = (length(&mut rng, 16) + rng.below(16)).max(16);
            let offset = rng.below(16);
            let mut buf = vec![0u8; len + offset];
            rng.fill(&mut buf);
            let plain = buf[offset..].to_vec();
            let mut iv = [0u8; 16];
            rng.fill(&mut iv[..8]);
            if rng.below(4) == 0 {
                iv = [0xff; 16]; // a tweak whose doublings all carry
            }
            let mut expect = plain.clone();
            oracle_xts(&key, &iv, &mut expect, true);
            ours.encrypt(&iv, &mut buf[offset..]);
            let what = format!("{} XTS-{} {len} bytes", backend.name(), key_len * 4);
            assert_eq!(&buf[offset..], &expect[..], "{what} encrypt");
            ours.decrypt(&iv, &mut buf[offset..]);
            assert_eq!(&buf[offset..], &plain[..], "{what} decrypt");
        }
    }
}

/// XTS at every length around the batch sizes of the backends (8 to 16
/// blocks) and of the rings of tweaks (AES-NI: 12 blocks a batch, VAES-256:
/// 16; 8 batches, each written 7 batches ahead): 1 to 20 batches of 12, and
/// 8 and 16 blocks times 1 to 10, each -1, 0 and +1 block, and a stolen
/// partial block after; then the same lengths past 64 KiB, where both x86
/// backends run their rings (`RING_FROM`: 16 KiB for AES-NI, 64 KiB for
/// VAES-256). The registers' tweaks, the ring's prefill, its wrap at every
/// batch count modulo 8 and the tweak it returns for the blocks after the
/// batches are then all crossed in every key size. VAES-256 runs each of its
/// batch loops (tweaks on the integer pipes, in vector registers, in the
/// AVX-512 registers where the CPU has them), whichever this CPU's dispatch
/// picks.
#[test]
fn every_backend_matches_the_oracle_in_xts_at_batch_and_ring_boundaries() {
    #[cfg(target_arch = "x86_64")]
    const _: () = assert!(
        super::x86_aesni::RING_FROM <= RING_BASE && super::x86_vaes256::RING_FROM <= RING_BASE
    );
    const RING_BASE: usize = 64 * 1024;
    let mut rng = XorShift(0x5eed_21a9);
    let mut blocks: Vec<usize> = (1..=20).map(|b| 12 * b).collect();
    blocks.extend((1..=10).flat_map(|b| [8 * b, 16 * b]));
    #[cfg(target_arch = "x86_64")]
    let runs = backends().into_iter().flat_map(|b| match b {
        Backend::Vaes256 => {
            use crate::dispatch::XtsTweaks;
            let mut t = vec![(b, XtsTweaks::Integer), (b, XtsTweaks::Vector)];
            if crate::cpu::detected().avx512 {
                t.push((b, XtsTweaks::Evex));
            } else {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: VAES-256 XTS with its tweaks in ymm16-31 not tested: this CPU lacks AVX-512"
                );
            }
            t
        }
        _ => vec![(b, crate::dispatch::aes_xts_tweaks())],
    });
    #[cfg(not(target_arch = "x86_64"))]
    let runs = backends().into_iter().map(|b| (b, ()));
    for (backend, tweaks) in runs {
        for key_len in [32, 48, 64] {
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key);
            #[allow(unused_mut)]
            let mut ours = AesXts::with_backend(&key, backend).unwrap();
            #[cfg(target_arch = "x86_64")]
            {
                ours.data.xts_tweaks = tweaks;
            }
            for (&n, base) in blocks.iter().flat_map(|n| [(n, 0), (n, RING_BASE)]) {
                for len in [16 * (n - 1), 16 * n, 16 * (n + 1), 16 * n + 5].map(|l| base + l) {
                    let mut data = vec![0u8; len];
                    rng.fill(&mut data);
                    let mut iv = [0u8; 16];
                    rng.fill(&mut iv);
                    let mut expect = data.clone();
                    oracle_xts(&key, &iv, &mut expect, true);
                    let mut got = data.clone();
                    ours.encrypt(&iv, &mut got);
                    let what = format!(
                        "{} XTS-{} {len} bytes (tweaks: {tweaks:?})",
                        backend.name(),
                        key_len * 4
                    );
                    assert_eq!(got, expect, "{what} encrypt");
                    ours.decrypt(&iv, &mut got);
                    assert_eq!(got, data, "{what} decrypt");
                }
            }
        }
    }
}

/// FIPS-197 Appendix C.1-C.3: one block under 128-, 192- and 256-bit keys.
#[test]
fn every_backend_passes_fips197_appendix_c() {
    let pt = hex!("00112233445566778899aabbccddeeff");
    let key: Vec<u8> = (0..32).collect();
    let cases = [
        (16, hex!("69c4e0d86a7b0430d8cdb78070b4c55a")),
        (24, hex!("dda97ca4864cdfe06eaf70a0ec0d7191")),
        (32, hex!("8ea2b7ca516745bfeafc49904b496089")),
    ];
    for backend in backends() {
        for (n, ct) in cases {
            let aes = AesModes::with_backend(&key[..n], backend).unwrap();
            // 17 copies: through the wide batch and the single-block tail.
            let mut data = pt.repeat(17);
            aes.ecb_encrypt(&mut data);
            assert_eq!(data, ct.repeat(17), "{} AES-{}", backend.name(), n * 8);
            aes.ecb_decrypt(&mut data);
            assert_eq!(data, pt.repeat(17));
        }
    }
}

/// NIST SP 800-38A F.2.1 (CBC-AES128) and F.5.1 (CTR-AES128).
#[test]
fn every_backend_passes_sp800_38a() {
    let key = hex!("2b7e151628aed2a6abf7158809cf4f3c");
    let pt = hex!(
        "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
        "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"
    );
    let cbc = hex!(
        "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2"
        "73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7"
    );
    let ctr = hex!(
        "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
        "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee"
    );
    for backend in backends() {
        let aes = AesModes::with_backend(&key, backend).unwrap();
        let iv0 = hex!("000102030405060708090a0b0c0d0e0f");
        let mut data = pt;
        let mut iv = iv0;
        aes.cbc_encrypt(&mut iv, &mut data);
        assert_eq!(data, cbc, "{} CBC encrypt", backend.name());
        let mut iv = iv0;
        aes.cbc_decrypt(&mut iv, &mut data);
        assert_eq!(data, pt, "{} CBC decrypt", backend.name());
        let mut c = hex!("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
        aes.ctr_apply(&mut c, &mut data);
        assert_eq!(data, ctr, "{} CTR", backend.name());
    }
}

/// IEEE 1619-2007 Annex B vectors 2 (two blocks) and 15-18 (stealing).
#[test]
fn every_backend_passes_ieee1619() {
    for backend in backends() {
        let key = hex!("11111111111111111111111111111111 22222222222222222222222222222222");
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&0x33_3333_3333u64.to_le_bytes());
        let xts = AesXts::with_backend(&key, backend).unwrap();
        let mut data = [0x44u8; 32];
        xts.encrypt(&iv, &mut data);
        assert_eq!(
            data,
            hex!("c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"),
            "{} vector 2",
            backend.name()
        );
        let key = hex!("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0");
        let xts = AesXts::with_backend(&key, backend).unwrap();
        let iv = hex!("9a785634120000000000000000000000");
        let pt: Vec<u8> = (0..20).collect();
        let cts: [&[u8]; 4] = [
            &hex!("6c1625db4671522d3d7599601de7ca09ed"),
            &hex!("d069444b7a7e0cab09e24447d24deb1fedbf"),
            &hex!("e5df1351c0544ba1350b3363cd8ef4beedbf9d"),
            &hex!("9d84c813f719aa2c7be3f66171c7c5c2edbf9dac"),
        ];
        for ct in cts {
            let mut data = pt[..ct.len()].to_vec();
            xts.encrypt(&iv, &mut data);
            assert_eq!(data, ct, "{} {} bytes", backend.name(), ct.len());
            xts.decrypt(&iv, &mut data);
            assert_eq!(data, &pt[..ct.len()]);
        }
    }
}

#[test]
fn bad_keys_are_refused() {
    for &b in Backend::ALL {
        assert!(AesModes::with_backend(&[0; 20], b).is_none());
        assert!(AesXts::with_backend(&[0; 40], b).is_none());
    }
}
