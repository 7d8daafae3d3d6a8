//! Adiantum and HCTR2: the official vectors (the Linux kernel's self-tests and
//! the authors' reference implementations, in `data/`), the catalogue rows
//! against the constructions, round trips at dm-crypt's sector sizes and the
//! wide-block property. `tiers.rs` runs this file at every CPU tier.

use clustercrypt_catalogue::wide::nh::NhPoly1305;
use clustercrypt_catalogue::wide::{Adiantum, Hctr2, SECTOR_BYTES, XChaChaRounds};
use clustercrypt_catalogue::{CipherError, CipherSpec, build, build_wide};

struct Vector {
    line: usize,
    fields: Vec<Vec<u8>>,
}

/// The vectors of a data file: hex fields a line, `-` for empty, `#` comments.
fn vectors(text: &str, fields: usize) -> Vec<Vector> {
    let out: Vec<Vector> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<Vec<u8>> = l
                .split_whitespace()
                .map(|h| {
                    if h == "-" {
                        Vec::new()
                    } else {
                        hex::decode(h).unwrap()
                    }
                })
                .collect();
            assert_eq!(f.len(), fields, "line {}", i + 1);
            Vector {
                line: i + 1,
                fields: f,
            }
        })
        .collect();
    assert!(out.len() >= 5, "the data file has its vectors");
    out
}

/// Every AES-256 implementation this CPU can run, each named.
macro_rules! for_each_aes {
    ($f:ident ( $($args:expr),* )) => {{
        $f::<aes::Aes256>("aes crate", $($args),*);
        $f::<clustercrypt_catalogue::aes::soft::Aes256>("soft", $($args),*);
        #[cfg(target_arch = "x86_64")]
        $f::<clustercrypt_catalogue::aes::x86_ssse3::Aes256>("ssse3", $($args),*);
    }};
}

fn check_adiantum(text: &str, rounds: XChaChaRounds) {
    for_each_aes!(check_adiantum_with(text, rounds));
}

fn check_adiantum_with<C>(aes: &str, text: &str, rounds: XChaChaRounds)
where
    C: cipher::KeyInit
        + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
        + cipher::BlockCipherDecrypt,
{
    for v in vectors(text, 4) {
        let [key, tweak, pt, ct] = &v.fields[..] else {
            unreachable!()
        };
        let a = Adiantum::<C>::new(key.as_slice().try_into().unwrap(), rounds);
        let mut buf = pt.clone();
        a.encrypt(tweak, &mut buf);
        assert_eq!(
            &buf,
            ct,
            "{aes}: line {} ({} bytes) encrypts",
            v.line,
            pt.len()
        );
        a.decrypt(tweak, &mut buf);
        assert_eq!(&buf, pt, "{aes}: line {} decrypts", v.line);
    }
}

#[test]
fn adiantum_xchacha12_vectors() {
    check_adiantum(
        include_str!("data/adiantum_xchacha12_aes256.txt"),
        XChaChaRounds::R12,
    );
}

#[test]
fn adiantum_xchacha20_vectors() {
    check_adiantum(
        include_str!("data/adiantum_xchacha20_aes256.txt"),
        XChaChaRounds::R20,
    );
}

#[test]
fn nhpoly1305_vectors() {
    for v in vectors(include_str!("data/nhpoly1305.txt"), 3) {
        let [key, msg, digest] = &v.fields[..] else {
            unreachable!()
        };
        let h = NhPoly1305::new(key.as_slice().try_into().unwrap());
        assert_eq!(
            h.hash(msg).to_le_bytes().as_slice(),
            digest.as_slice(),
            "line {} ({} bytes)",
            v.line,
            msg.len()
        );
    }
}

#[test]
fn hctr2_vectors_with_both_polyvals() {
    for_each_aes!(check_hctr2());
}

fn check_hctr2<C>(aes: &str)
where
    C: cipher::KeyInit
        + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
        + cipher::BlockCipherDecrypt,
{
    for clmul in [true, false] {
        for v in vectors(include_str!("data/hctr2_aes256.txt"), 4) {
            let [key, tweak, pt, ct] = &v.fields[..] else {
                unreachable!()
            };
            let h = Hctr2::<C>::with_clmul(key.as_slice().try_into().unwrap(), clmul);
            let mut buf = pt.clone();
            h.encrypt(tweak, &mut buf);
            assert_eq!(&buf, ct, "{aes}: line {} clmul {clmul} encrypts", v.line);
            h.decrypt(tweak, &mut buf);
            assert_eq!(&buf, pt, "{aes}: line {} clmul {clmul} decrypts", v.line);
        }
    }
}

const NAMES: [&str; 3] = [
    "xchacha12,aes-adiantum-plain64",
    "xchacha20,aes-adiantum-plain64",
    "aes-hctr2-plain64",
];

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// The rows encipher each 4096-byte sector of a request with the `plain64`
/// tweak of its own number, exactly as the constructions do.
#[test]
fn rows_are_the_constructions_per_sector() {
    let key = pattern(32, 9);
    let k: &[u8; 32] = key.as_slice().try_into().unwrap();
    for name in NAMES {
        let spec = CipherSpec::parse(name, None).unwrap();
        assert_eq!(spec.key_bits, 256, "{name}");
        let mut op = build(&spec, &key).unwrap();
        let data = pattern(3 * SECTOR_BYTES + 100, 1);
        let mut got = data.clone();
        op.encrypt(&mut got, 7).unwrap();
        let mut want = data.clone();
        for (i, s) in want.chunks_mut(SECTOR_BYTES).enumerate() {
            let mut tweak = [0u8; 32];
            tweak[..8].copy_from_slice(&(7 + i as u64).to_le_bytes());
            match name {
                "aes-hctr2-plain64" => Hctr2::<aes::Aes256>::new(k).encrypt(&tweak, s),
                n if n.starts_with("xchacha12") => {
                    Adiantum::<aes::Aes256>::new(k, XChaChaRounds::R12).encrypt(&tweak, s)
                }
                _ => Adiantum::<aes::Aes256>::new(k, XChaChaRounds::R20).encrypt(&tweak, s),
            }
        }
        assert_eq!(got, want, "{name}");
        op.decrypt(&mut got, 7).unwrap();
        assert_eq!(got, data, "{name}");
    }
}

/// decrypt(encrypt(x)) == x at 512- and 4096-byte sectors, for lengths that
/// end inside a unit and for many sectors in one request.
#[test]
fn round_trips_at_both_sector_sizes() {
    let key = pattern(32, 3);
    for name in NAMES {
        let spec = CipherSpec::parse(name, None).unwrap();
        for sector in [512, 4096] {
            let mut op = build_wide(spec, &key, sector).unwrap();
            for len in [16, 17, 31, 511, 512, 4096, 4096 + 17, 8 * 4096] {
                let data = pattern(len, len as u8);
                let mut buf = data.clone();
                op.encrypt(&mut buf, 1234).unwrap();
                assert_ne!(buf, data, "{name} {sector} {len}");
                op.decrypt(&mut buf, 1234).unwrap();
                assert_eq!(buf, data, "{name} {sector} {len}");
            }
        }
    }
}

/// A sector is one block: flipping any one bit of the ciphertext changes
/// (about half of) every 16-byte block of the decrypted plaintext, and a
/// different sector number changes the whole ciphertext.
#[test]
fn one_flipped_bit_changes_the_whole_sector() {
    let key = pattern(32, 5);
    for name in NAMES {
        let spec = CipherSpec::parse(name, None).unwrap();
        for sector in [512, 4096] {
            let mut op = build_wide(spec, &key, sector).unwrap();
            let plain = pattern(sector, 11);
            let mut ct = plain.clone();
            op.encrypt(&mut ct, 42).unwrap();
            let step = if sector == 512 { 1 } else { 61 };
            for bit in (0..sector * 8).step_by(step) {
                let mut flipped = ct.clone();
                flipped[bit / 8] ^= 1 << (bit % 8);
                op.decrypt(&mut flipped, 42).unwrap();
                for (b, (x, y)) in flipped.chunks(16).zip(plain.chunks(16)).enumerate() {
                    assert_ne!(x, y, "{name} {sector}: bit {bit} left block {b} alone");
                }
            }
            let mut other = plain.clone();
            op.encrypt(&mut other, 43).unwrap();
            for (x, y) in other.chunks(16).zip(ct.chunks(16)) {
                assert_ne!(x, y, "{name}: the sector number is the tweak");
            }
        }
    }
}

#[test]
fn short_pieces_are_refused() {
    let key = [0u8; 32];
    for name in NAMES {
        let spec = CipherSpec::parse(name, None).unwrap();
        let mut op = build(&spec, &key).unwrap();
        for len in [0, 15, SECTOR_BYTES + 15] {
            let mut buf = vec![0u8; len];
            let e = op.encrypt(&mut buf, 0).unwrap_err();
            assert!(matches!(e, CipherError::WideLength { .. }), "{name} {len}");
            assert!(op.decrypt(&mut buf, 0).is_err());
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_length_round_trips(
            key in proptest::array::uniform32(any::<u8>()),
            tweak in proptest::collection::vec(any::<u8>(), 0..48),
            data in proptest::collection::vec(any::<u8>(), 16..3000),
        ) {
            for rounds in [XChaChaRounds::R12, XChaChaRounds::R20] {
                let a = Adiantum::<aes::Aes256>::new(&key, rounds);
                let mut buf = data.clone();
                a.encrypt(&tweak, &mut buf);
                prop_assert_ne!(&buf, &data);
                a.decrypt(&tweak, &mut buf);
                prop_assert_eq!(&buf, &data);
            }
            let h = Hctr2::<aes::Aes256>::new(&key);
            let mut buf = data.clone();
            h.encrypt(&tweak, &mut buf);
            prop_assert_ne!(&buf, &data);
            h.decrypt(&tweak, &mut buf);
            prop_assert_eq!(&buf, &data);
        }
    }
}
