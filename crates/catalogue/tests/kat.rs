//! Known-answer tests of the cipher catalogue, taken from each cipher's
//! specification or the reference vectors its authors published.
//!
//! Wherever the vector fits the catalogue's conventions the test goes through
//! the catalogue itself (`CipherSpec::parse` + `build`, one request, sector 0
//! for ECB and the stream ciphers, the vector's data-unit number for XTS), so
//! that the row names, key handling and IV generation are exercised and not
//! only the underlying crates. Vectors with an IV that no sector number
//! produces (NIST SP 800-38A, FIPS 81 CBC) run through `modes::BlockModes`,
//! the mode code every catalogue row uses. Every test also decrypts.
//!
//! TEA and XTEA are tested next to their implementation in `src/ciphers/tea.rs`.

use cipher::{KeyInit, KeyIvInit, StreamCipher, StreamCipherSeek};
use clustercrypt_catalogue::aead::{Aead, AeadAlgorithm};
use clustercrypt_catalogue::modes::BlockModes;
use clustercrypt_catalogue::{CipherOp, CipherSpec, build};
use hex_literal::hex;

/// Keys the catalogue row `name` with `key`.
#[track_caller]
fn row(name: &str, bits: usize, key: &[u8]) -> Box<dyn CipherOp> {
    let spec =
        CipherSpec::parse(name, Some(bits)).unwrap_or_else(|e| panic!("{name} {bits}b: {e}"));
    assert_eq!(spec.key_len(), key.len(), "{name} {bits}b: key length");
    build(&spec, key).unwrap_or_else(|e| panic!("{name} {bits}b: {e}"))
}

/// Encrypts `pt` as one request of row `name` and expects `ct`; then decrypts
/// `ct` with a freshly keyed op (RC4 keeps its key stream position) and
/// expects `pt`.
#[track_caller]
fn kat(name: &str, bits: usize, key: &[u8], sector: u64, pt: &[u8], ct: &[u8]) {
    let what = format!("{name} {bits}b key {} sector {sector:#x}", hex::encode(key));
    let mut buf = pt.to_vec();
    row(name, bits, key)
        .encrypt(&mut buf, sector)
        .unwrap_or_else(|e| panic!("{what}: encrypt: {e}"));
    assert_eq!(hex::encode(&buf), hex::encode(ct), "{what}: encryption");
    row(name, bits, key)
        .decrypt(&mut buf, sector)
        .unwrap_or_else(|e| panic!("{what}: decrypt: {e}"));
    assert_eq!(hex::encode(&buf), hex::encode(pt), "{what}: decryption");
}

/// CBC through `BlockModes` with an explicit IV, both directions, and checks
/// that the IV is left as the last ciphertext block.
#[track_caller]
fn cbc_explicit_iv<C>(cipher: C, iv: &[u8], pt: &[u8], ct: &[u8])
where
    C: cipher::BlockCipherEncrypt + cipher::BlockCipherDecrypt,
{
    let mut modes = BlockModes::new(cipher);
    let bs = modes.block_size();
    let mut buf = pt.to_vec();
    let mut chain = iv.to_vec();
    modes.cbc_encrypt(&mut chain, &mut buf);
    assert_eq!(hex::encode(&buf), hex::encode(ct), "CBC encryption");
    assert_eq!(chain, &ct[ct.len() - bs..], "CBC encryption: chained IV");
    let mut chain = iv.to_vec();
    modes.cbc_decrypt(&mut chain, &mut buf);
    assert_eq!(hex::encode(&buf), hex::encode(pt), "CBC decryption");
    assert_eq!(chain, &ct[ct.len() - bs..], "CBC decryption: chained IV");
}

// ---------------------------------------------------------------- AES

/// FIPS-197 (2001), Appendix C "Example Vectors": C.1 AES-128, C.2 AES-192,
/// C.3 AES-256 (key 000102..., plaintext 00112233...).
#[test]
fn aes_fips197_appendix_c() {
    let pt = hex!("00112233445566778899aabbccddeeff");
    // C.1 AES-128 (Nk=4, Nr=10)
    kat(
        "aes-ecb",
        128,
        &hex!("000102030405060708090a0b0c0d0e0f"),
        0,
        &pt,
        &hex!("69c4e0d86a7b0430d8cdb78070b4c55a"),
    );
    // C.2 AES-192 (Nk=6, Nr=12)
    kat(
        "aes-ecb",
        192,
        &hex!("000102030405060708090a0b0c0d0e0f1011121314151617"),
        0,
        &pt,
        &hex!("dda97ca4864cdfe06eaf70a0ec0d7191"),
    );
    // C.3 AES-256 (Nk=8, Nr=14)
    kat(
        "aes-ecb",
        256,
        &hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
        0,
        &pt,
        &hex!("8ea2b7ca516745bfeafc49904b496089"),
    );
}

/// The four-block plaintext of NIST SP 800-38A Appendix F.
const SP800_38A_PT: [u8; 64] = hex!(
    "6bc1bee22e409f96e93d7e117393172a"
    "ae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52ef"
    "f69f2445df4f9b17ad2b417be66c3710"
);
const SP800_38A_K128: [u8; 16] = hex!("2b7e151628aed2a6abf7158809cf4f3c");
const SP800_38A_K256: [u8; 32] =
    hex!("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
/// SP 800-38A F.2.1: CBC-AES128 of [`SP800_38A_PT`].
const SP800_38A_CBC128: [u8; 64] = hex!(
    "7649abac8119b246cee98e9b12e9197d"
    "5086cb9b507219ee95db113a917678b2"
    "73bed6b8e3c1743b7116e69e22229516"
    "3ff1caa1681fac09120eca307586e1a7"
);
/// SP 800-38A F.2.5: CBC-AES256 of [`SP800_38A_PT`].
const SP800_38A_CBC256: [u8; 64] = hex!(
    "f58c4c04d6e5f1ba779eabfb5f7bfbd6"
    "9cfc4e967edb808d679f777bc6702c7d"
    "39f23369a9d9bacfa530e26304231461"
    "b2eb05e2c39be9fcda6c19078c6a9d1b"
);
/// SP 800-38A F.5.1: CTR-AES128 of [`SP800_38A_PT`].
const SP800_38A_CTR128: [u8; 64] = hex!(
    "874d6191b620e3261bef6864990db6ce"
    "9806f66b7970fdff8617187bb9fffdff"
    "5ae4df3edbd5d35e5b4f09020db03eab"
    "1e031dda2fbe03d1792170a0f3009cee"
);
/// SP 800-38A F.5.5: CTR-AES256 of [`SP800_38A_PT`].
const SP800_38A_CTR256: [u8; 64] = hex!(
    "601ec313775789a5b7a7f504bbf3d228"
    "f443e3ca4d62b59aca84e990cacaf5c5"
    "2b0930daa23de94ce87017ba2d84988d"
    "dfc9c58db67aada613c2dd08457941a6"
);

/// NIST SP 800-38A (2001), Appendix F.1.1/F.1.2 ECB-AES128 and F.1.5/F.1.6
/// ECB-AES256, through the catalogue's ECB rows.
#[test]
fn aes_sp800_38a_f1_ecb() {
    kat(
        "aes-ecb",
        128,
        &SP800_38A_K128,
        0,
        &SP800_38A_PT,
        &hex!(
            "3ad77bb40d7a3660a89ecaf32466ef97"
            "f5d3d58503b9699de785895a96fdbaaf"
            "43b1cd7f598ece23881b00e3ed030688"
            "7b0c785e27e8ad3f8223207104725dd4"
        ),
    );
    kat(
        "aes-ecb",
        256,
        &SP800_38A_K256,
        0,
        &SP800_38A_PT,
        &hex!(
            "f3eed1bdb5d2a03c064b5a7e3db181f8"
            "591ccb10d410ed26dc5ba74a31362870"
            "b6ed21b99ca6f4f9f153e7b1beafed1d"
            "23304b7a39f9f3ff067d8d8f9e24ecc7"
        ),
    );
}

/// NIST SP 800-38A, Appendix F.2.1/F.2.2 CBC-AES128 and F.2.5/F.2.6
/// CBC-AES256 (IV 000102...0f, which no sector number gives, so through
/// `BlockModes`).
#[test]
fn aes_sp800_38a_f2_cbc() {
    let iv = hex!("000102030405060708090a0b0c0d0e0f");
    cbc_explicit_iv(
        aes::Aes128::new(&SP800_38A_K128.into()),
        &iv,
        &SP800_38A_PT,
        &SP800_38A_CBC128,
    );
    cbc_explicit_iv(
        aes::Aes256::new(&SP800_38A_K256.into()),
        &iv,
        &SP800_38A_PT,
        &SP800_38A_CBC256,
    );
}

/// NIST SP 800-38A, Appendix F.5.1/F.5.2 CTR-AES128 and F.5.5/F.5.6
/// CTR-AES256 (initial counter block f0f1...ff: the big-endian increment
/// carries across bytes 15 and 14), through `BlockModes::ctr_apply`.
#[test]
fn aes_sp800_38a_f5_ctr() {
    let ctr0 = hex!("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    let cases: [(&[u8], [u8; 64]); 2] = [
        (&SP800_38A_K128, SP800_38A_CTR128),
        (&SP800_38A_K256, SP800_38A_CTR256),
    ];
    for (key, ct) in cases {
        let run = |data: &mut [u8]| -> [u8; 16] {
            let mut counter = ctr0;
            if key.len() == 16 {
                BlockModes::new(aes::Aes128::new_from_slice(key).unwrap())
                    .ctr_apply(&mut counter, data);
            } else {
                BlockModes::new(aes::Aes256::new_from_slice(key).unwrap())
                    .ctr_apply(&mut counter, data);
            }
            counter
        };
        let mut buf = SP800_38A_PT;
        let next = run(&mut buf);
        assert_eq!(hex::encode(buf), hex::encode(ct), "CTR encryption");
        // f0f1...feff + 4 = f0f1...ff03: the counter wrapped byte 15 into byte 14.
        assert_eq!(next, hex!("f0f1f2f3f4f5f6f7f8f9fafbfcfdff03"));
        run(&mut buf);
        assert_eq!(buf, SP800_38A_PT, "CTR decryption");
        // A partial last block uses the key stream's head.
        let mut short = SP800_38A_PT[..37].to_vec();
        run(&mut short);
        assert_eq!(short, ct[..37]);
    }
}

/// NIST SP 800-38A F.2 (CBC) and F.5 (CTR), AES-128 and AES-256, through the
/// modes the catalogue's rows run (`block_modes`: our AES kernels wherever
/// the tier has them; the tests above use the `aes` crate), with the four
/// vector blocks inside a 67-block message so that every tier's multi-block
/// kernels (8, 16 or 32 blocks a batch) meet them: CTR from a counter 61
/// blocks before the vector's, CBC decryption with the IV as the ciphertext
/// block before the vector's. CBC encryption is serial: the vector itself.
#[test]
fn aes_sp800_38a_cbc_ctr_in_the_rows_modes() {
    use clustercrypt_catalogue::{Algorithm, block_modes};
    const AT: usize = 61;
    const BLOCKS: usize = 67;
    let iv = hex!("000102030405060708090a0b0c0d0e0f");
    let ctr0 = u128::from_be_bytes(hex!("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"));
    let cases: [(&[u8], [u8; 64], [u8; 64]); 2] = [
        (&SP800_38A_K128, SP800_38A_CBC128, SP800_38A_CTR128),
        (&SP800_38A_K256, SP800_38A_CBC256, SP800_38A_CTR256),
    ];
    let vector = AT * 16..(AT + 4) * 16;
    for (key, cbc_ct, ctr_ct) in cases {
        let mut modes = block_modes(Algorithm::Aes, key, 1).unwrap();
        let what = format!("AES-{} ({})", key.len() * 8, modes.backend());

        let mut buf = SP800_38A_PT;
        let mut v = iv;
        modes.cbc_encrypt(&mut v, &mut buf);
        assert_eq!(
            hex::encode(buf),
            hex::encode(cbc_ct),
            "{what}: CBC encryption"
        );
        // Decryption: blocks 0..AT-1 of some ciphertext, the IV, the vector's
        // ciphertext, more blocks; each plaintext block depends only on its
        // ciphertext block and the one before.
        let mut msg: Vec<u8> = (0..BLOCKS * 16).map(|i| (i * 7 + 3) as u8).collect();
        msg[(AT - 1) * 16..AT * 16].copy_from_slice(&iv);
        msg[vector.clone()].copy_from_slice(&cbc_ct);
        let mut v = [0u8; 16];
        modes.cbc_decrypt(&mut v, &mut msg);
        assert_eq!(
            hex::encode(&msg[vector.clone()]),
            hex::encode(SP800_38A_PT),
            "{what}: CBC decryption inside {BLOCKS} blocks"
        );

        // CTR: the vector's counter blocks are blocks AT..AT+3 of the message.
        let mut msg = vec![0u8; BLOCKS * 16];
        msg[vector.clone()].copy_from_slice(&SP800_38A_PT);
        let mut c = ctr0.wrapping_sub(AT as u128).to_be_bytes();
        modes.ctr_apply(&mut c, &mut msg);
        assert_eq!(
            hex::encode(&msg[vector.clone()]),
            hex::encode(ctr_ct),
            "{what}: CTR inside {BLOCKS} blocks"
        );
        assert_eq!(
            u128::from_be_bytes(c),
            ctr0.wrapping_add((BLOCKS - AT) as u128),
            "{what}: counter after"
        );
    }
}

// ---------------------------------------------------------------- Serpent

/// NESSIE Serpent test vectors (Biham, `Serpent-128-128.verified.test-vectors`,
/// `Serpent-192-128...` and `Serpent-256-128...`), Set 1 vector# 0 (key with
/// only the first bit set, zero plaintext) and Set 4 vector# 0 (key 000102...,
/// plaintext 00112233...). The NESSIE byte order is the one libgcrypt, the
/// Linux kernel (`serpent`, not `tnepres`) and the RustCrypto crate use.
#[test]
fn serpent_nessie_sets_1_and_4() {
    let zero = [0u8; 16];
    // Set 1, vector# 0
    kat(
        "serpent-ecb",
        128,
        &hex!("80000000000000000000000000000000"),
        0,
        &zero,
        &hex!("264e5481eff42a4606abda06c0bfda3d"),
    );
    kat(
        "serpent-ecb",
        192,
        &hex!("800000000000000000000000000000000000000000000000"),
        0,
        &zero,
        &hex!("9e274ead9b737bb21efcfca548602689"),
    );
    kat(
        "serpent-ecb",
        256,
        &hex!("8000000000000000000000000000000000000000000000000000000000000000"),
        0,
        &zero,
        &hex!("a223aa1288463c0e2be38ebd825616c0"),
    );
    // Set 4, vector# 0
    let pt = hex!("00112233445566778899aabbccddeeff");
    kat(
        "serpent-ecb",
        128,
        &hex!("000102030405060708090a0b0c0d0e0f"),
        0,
        &pt,
        &hex!("563e2cf8740a27c164804560391e9b27"),
    );
    kat(
        "serpent-ecb",
        192,
        &hex!("000102030405060708090a0b0c0d0e0f1011121314151617"),
        0,
        &pt,
        &hex!("6ab816c82de53b93005008afa2246a02"),
    );
    kat(
        "serpent-ecb",
        256,
        &hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
        0,
        &pt,
        &hex!("2868b7a2d28ecd5e4fdefac3c4330074"),
    );
    // Set 4, vector# 1
    kat(
        "serpent-ecb",
        128,
        &hex!("2bd6459f82c5b300952c49104881ff48"),
        0,
        &hex!("ea024714ad5c4d84ea024714ad5c4d84"),
        &hex!("92d7f8ef2c36c53409f275902f06539f"),
    );
}

// ---------------------------------------------------------------- Twofish

/// Twofish, Schneier et al., "Twofish: A 128-Bit Block Cipher" (1998), the
/// reference package's `ECB_TBL.TXT`: starting from an all-zero key and
/// plaintext, each step encrypts, then the key becomes (previous plaintext ||
/// first bytes of the previous key) and the plaintext the ciphertext. Checks
/// I=1..5 and I=48 for 128-, 192- and 256-bit keys, each step through a freshly
/// keyed catalogue row, both ways.
#[test]
fn twofish_ecb_tbl() {
    let tables: [(usize, [[u8; 16]; 6]); 3] = [
        (
            128,
            [
                hex!("9f589f5cf6122c32b6bfec2f2ae8c35a"),
                hex!("d491db16e7b1c39e86cb086b789f5419"),
                hex!("019f9809de1711858faac3a3ba20fbc3"),
                hex!("6363977de839486297e661c6c9d668eb"),
                hex!("816d5bd0fae35342bf2a7412c246f752"),
                hex!("6b459286f3ffd28d49f15b1581b08e42"),
            ],
        ),
        (
            192,
            [
                hex!("efa71f788965bd4453f860178fc19101"),
                hex!("88b2b2706b105e36b446bb6d731a1e88"),
                hex!("39da69d6ba4997d585b6dc073ca341b2"),
                hex!("182b02d81497ea45f9daacdc29193a65"),
                hex!("7aff7a70ca2ff28ac31dd8ae5daaab63"),
                hex!("f0ab73301125fa21ef70be5385fb76b6"),
            ],
        ),
        (
            256,
            [
                hex!("57ff739d4dc92c1bd7fc01700cc8216f"),
                hex!("d43bb7556ea32e46f2a282b7d45b4e0d"),
                hex!("90afe91bb288544f2c32dc239b2635e6"),
                hex!("6cb4561c40bf0a9705931cb6d408e7fa"),
                hex!("3059d6d61753b958d92f4781c8640e58"),
                hex!("431058f4dbc7f734da4f02f04cc4f459"),
            ],
        ),
    ];
    for (bits, expected) in tables {
        let mut key = vec![0u8; bits / 8];
        let mut pt = [0u8; 16];
        for i in 1..=48 {
            let mut ct = pt;
            row("twofish-ecb", bits, &key).encrypt(&mut ct, 0).unwrap();
            let want = match i {
                1..=5 => Some(expected[i - 1]),
                48 => Some(expected[5]),
                _ => None,
            };
            if let Some(want) = want {
                assert_eq!(hex::encode(ct), hex::encode(want), "{bits}b I={i}");
            }
            let mut back = ct;
            row("twofish-ecb", bits, &key)
                .decrypt(&mut back, 0)
                .unwrap();
            assert_eq!(back, pt, "{bits}b I={i}: decryption");
            // KEY(i+1) = PT(i) || KEY(i)[..len-16]; PT(i+1) = CT(i).
            let n = key.len();
            key.copy_within(..n - 16, 16);
            key[..16].copy_from_slice(&pt);
            pt = ct;
        }
    }
}

// ---------------------------------------------------------------- Camellia

/// RFC 3713 (Camellia), Appendix A "Example Data of Camellia": 128-, 192- and
/// 256-bit keys, plaintext 0123456789abcdeffedcba9876543210. Each vector also
/// at several places among 67 blocks of other data (two 32-block batches and
/// a tail), so that the multi-block kernel the dispatch chooses at each tier
/// (`tiers.rs` runs this under every mask) gets the official vectors too, not
/// only the single-block table code.
#[test]
fn camellia_rfc3713_appendix_a() {
    let pt = hex!("0123456789abcdeffedcba9876543210");
    let cases: [(usize, &[u8], [u8; 16]); 3] = [
        (
            128,
            &hex!("0123456789abcdeffedcba9876543210"),
            hex!("67673138549669730857065648eabe43"),
        ),
        (
            192,
            &hex!("0123456789abcdeffedcba98765432100011223344556677"),
            hex!("b4993401b3e996f84ee5cee7d79b09b9"),
        ),
        (
            256,
            &hex!("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff"),
            hex!("9acc237dff16d76c20ef7c919e3a7509"),
        ),
    ];
    for (bits, key, ct) in cases {
        kat("camellia-ecb", bits, key, 0, &pt, &ct);
        // The other blocks differ from each other, so that a kernel that
        // mixed up blocks (lanes) would be caught.
        let mut buf: Vec<u8> = (0..67 * 16).map(|i| (i * 7 + i / 16) as u8).collect();
        let places = [0, 5, 15, 16, 21, 31, 32, 47, 63, 64, 66];
        for &b in &places {
            buf[16 * b..16 * b + 16].copy_from_slice(&pt);
        }
        let original = buf.clone();
        let mut op = row("camellia-ecb", bits, key);
        op.encrypt(&mut buf, 0).unwrap();
        for &b in &places {
            assert_eq!(buf[16 * b..16 * b + 16], ct, "{bits}-bit key, block {b}");
        }
        op.decrypt(&mut buf, 0).unwrap();
        assert!(buf == original, "{bits}-bit key: 67 blocks round trip");
    }
}

// ---------------------------------------------------------------- Blowfish

/// Schneier's Blowfish test vectors (`vectors.txt`, Eric Young's set), the
/// ECB table with 64-bit keys.
#[test]
fn blowfish_vectors_txt_ecb() {
    let table: [([u8; 8], [u8; 8], [u8; 8]); 9] = [
        (
            hex!("0000000000000000"),
            hex!("0000000000000000"),
            hex!("4ef997456198dd78"),
        ),
        (
            hex!("ffffffffffffffff"),
            hex!("ffffffffffffffff"),
            hex!("51866fd5b85ecb8a"),
        ),
        (
            hex!("3000000000000000"),
            hex!("1000000000000001"),
            hex!("7d856f9a613063f2"),
        ),
        (
            hex!("1111111111111111"),
            hex!("1111111111111111"),
            hex!("2466dd878b963c9d"),
        ),
        (
            hex!("0123456789abcdef"),
            hex!("1111111111111111"),
            hex!("61f9c3802281b096"),
        ),
        (
            hex!("1111111111111111"),
            hex!("0123456789abcdef"),
            hex!("7d0cc630afda1ec7"),
        ),
        (
            hex!("fedcba9876543210"),
            hex!("0123456789abcdef"),
            hex!("0aceab0fc6a0a28d"),
        ),
        (
            hex!("7ca110454a1a6e57"),
            hex!("01a1d6d039776742"),
            hex!("59c68245eb05282b"),
        ),
        (
            hex!("0131d9619dc1376e"),
            hex!("5cd54ca83def57da"),
            hex!("b1b8cc0b250f09a0"),
        ),
    ];
    for (key, pt, ct) in table {
        kat("blowfish-ecb", 64, &key, 0, &pt, &ct);
    }
}

/// Schneier's Blowfish `vectors.txt`, "set_key test data": key prefixes of
/// f0e1d2c3b4a5968778695a4b3c2d1e0f0011223344556677 from 4 bytes (the
/// catalogue's 32-bit minimum) to 24 bytes, plaintext fedcba9876543210.
#[test]
fn blowfish_vectors_txt_set_key() {
    let key = hex!("f0e1d2c3b4a5968778695a4b3c2d1e0f0011223344556677");
    let pt = hex!("fedcba9876543210");
    let cts: [[u8; 8]; 21] = [
        hex!("be1e639408640f05"), // k[4]
        hex!("b39e44481bdb1e6e"),
        hex!("9457aa83b1928c0d"),
        hex!("8bb77032f960629d"),
        hex!("e87a244e2cc85e82"), // k[8]
        hex!("15750e7a4f4ec577"),
        hex!("122ba70b3ab64ae0"),
        hex!("3a833c9affc537f6"),
        hex!("9409da87a90f6bf2"),
        hex!("884f80625060b8b4"),
        hex!("1f85031c19e11968"),
        hex!("79d9373a714ca34f"),
        hex!("93142887ee3be15c"), // k[16]
        hex!("03429e838ce2d14b"),
        hex!("a4299e27469ff67b"),
        hex!("afd5aed1c1bc96a8"),
        hex!("10851c0e3858da9f"),
        hex!("e6f51ed79b9db21f"),
        hex!("64a6e14afd36b46f"),
        hex!("80c7d7d45a5479ad"),
        hex!("05044b62fa52d080"), // k[24]
    ];
    for (i, ct) in cts.iter().enumerate() {
        let n = 4 + i;
        kat("blowfish-ecb", 8 * n, &key[..n], 0, &pt, ct);
    }
}

/// Schneier's Blowfish `vectors.txt`, "chaining mode test data", CBC: key
/// 0123456789abcdeff0e1d2c3b4a59687, IV fedcba9876543210, data
/// "7654321 Now is the time for " and four zero bytes (explicit IV, so through
/// `BlockModes`).
#[test]
fn blowfish_vectors_txt_cbc() {
    let bf: blowfish::Blowfish =
        blowfish::Blowfish::new_from_slice(&hex!("0123456789abcdeff0e1d2c3b4a59687")).unwrap();
    cbc_explicit_iv(
        bf,
        &hex!("fedcba9876543210"),
        &hex!("37363534333231204e6f77206973207468652074696d6520666f722000000000"),
        &hex!("6b77b4d63006dee605b156e27403979358deb9e7154616d959f1652bd5ff92cc"),
    );
}

// ---------------------------------------------------------------- DES, TDES

/// FIPS PUB 81 (DES Modes of Operation), Appendix B, Table B1 "An Example of
/// the Electronic Codebook (ECB) Mode": key 0123456789abcdef, plaintext
/// "Now is the time for all ".
#[test]
fn des_fips81_table_b1_ecb() {
    kat(
        "des-ecb",
        64,
        &hex!("0123456789abcdef"),
        0,
        b"Now is the time for all ",
        &hex!("3fa40e8a984d4815 6a271787ab8883f9 893d51ec4b563b53"),
    );
}

/// FIPS PUB 81, Appendix C, Table C1 "An Example of the Cipher Block Chaining
/// (CBC) Mode": same key and plaintext, IV 1234567890abcdef.
#[test]
fn des_fips81_table_c1_cbc() {
    cbc_explicit_iv(
        des::Des::new_from_slice(&hex!("0123456789abcdef")).unwrap(),
        &hex!("1234567890abcdef"),
        b"Now is the time for all ",
        &hex!("e5c7cdde872bf27c 43e934008c389c0f 683788499a7c05f6"),
    );
}

/// NIST SP 800-17 (Modes of Operation Validation System), Table 1 "Resultant
/// Ciphertext from the Variable Plaintext Known Answer Test" (key
/// 0101010101010101, first rounds) and Table 2 "Variable Key Known Answer
/// Test" (plaintext zero, first rounds).
#[test]
fn des_sp800_17_tables_1_and_2() {
    let key = hex!("0101010101010101");
    for (pt, ct) in [
        (hex!("8000000000000000"), hex!("95f8a5e5dd31d900")),
        (hex!("4000000000000000"), hex!("dd7f121ca5015619")),
        (hex!("2000000000000000"), hex!("2e8653104f3834ea")),
    ] {
        kat("des-ecb", 64, &key, 0, &pt, &ct);
    }
    for (key, ct) in [
        (hex!("8001010101010101"), hex!("95a8d72813daa94d")),
        (hex!("4001010101010101"), hex!("0eec1487dd8c26d5")),
    ] {
        kat("des-ecb", 64, &key, 0, &[0; 8], &ct);
    }
}

/// NIST SP 800-67 Rev. 1 (TDEA), Appendix B "Example of TDEA Forward and
/// Inverse Cipher Operations": keys 0123456789abcdef, 23456789abcdef01,
/// 456789abcdef0123 (EDE, keying option 1), plaintext "The qufck brown fox
/// jump" (sic).
#[test]
fn tdes_sp800_67_appendix_b() {
    kat(
        "des3_ede-ecb",
        192,
        &hex!("0123456789abcdef 23456789abcdef01 456789abcdef0123"),
        0,
        b"The qufck brown fox jump",
        &hex!("a826fd8ce53b855f cce21c8112256fe6 68d5c05dd9b6b900"),
    );
}

// ---------------------------------------------------------------- RC2

/// RFC 2268 (RC2), Section 5 "Test vectors": the vectors whose effective key
/// length equals 8 x the key length (2, 3 and 7), which is what the catalogue
/// uses.
#[test]
fn rc2_rfc2268_section5() {
    // 64-bit key, effective 64 bits.
    kat(
        "rc2-ecb",
        64,
        &hex!("ffffffffffffffff"),
        0,
        &hex!("ffffffffffffffff"),
        &hex!("278b27e42e2f0d49"),
    );
    kat(
        "rc2-ecb",
        64,
        &hex!("3000000000000000"),
        0,
        &hex!("1000000000000001"),
        &hex!("30649edf9be7d2c2"),
    );
    // 128-bit key, effective 128 bits.
    kat(
        "rc2-ecb",
        128,
        &hex!("88bca90e90875a7f0f79c384627bafb2"),
        0,
        &hex!("0000000000000000"),
        &hex!("2269552ab0f85ca6"),
    );
}

// ---------------------------------------------------------------- RC4

/// The offsets RFC 6229 lists, in order.
const RFC6229_OFFSETS: [usize; 18] = [
    0, 16, 240, 256, 496, 512, 752, 768, 1008, 1024, 1520, 1536, 2032, 2048, 3056, 3072, 4080, 4096,
];

/// Runs the catalogue's RC4 row over 4112 zero bytes in uneven requests (the
/// key stream must continue across requests) and compares the RFC 6229 table.
#[track_caller]
fn rc4_rfc6229(key: &[u8], table: &[u8]) {
    let bits = key.len() * 8;
    let mut op = row("rc4", bits, key);
    let mut stream = vec![0u8; 4112];
    let mut rest = &mut stream[..];
    for (i, len) in [1usize, 15, 100, 3000, 7, 989].into_iter().enumerate() {
        let n = len.min(rest.len());
        let (head, tail) = rest.split_at_mut(n);
        op.encrypt(head, i as u64).unwrap();
        rest = tail;
    }
    assert!(rest.is_empty());
    for (offset, want) in RFC6229_OFFSETS.iter().zip(table.chunks(16)) {
        assert_eq!(
            hex::encode(&stream[*offset..offset + 16]),
            hex::encode(want),
            "RC4 {bits}-bit key, offset {offset}"
        );
    }
    // Decryption is the same key stream from a fresh key.
    let mut back = stream.clone();
    row("rc4", bits, key).decrypt(&mut back, 0).unwrap();
    assert!(back.iter().all(|&b| b == 0), "RC4 {bits}-bit decryption");
}

/// RFC 6229 (Test Vectors for the Stream Cipher RC4), Section 2, key length
/// 40 bits, key 0x0102030405.
#[test]
fn rc4_rfc6229_40_bit_key() {
    rc4_rfc6229(
        &hex!("0102030405"),
        &hex!(
            "b2396305f03dc027ccc3524a0a1118a8"
            "6982944f18fc82d589c403a47a0d0919"
            "28cb1132c96ce286421dcaadb8b69eae"
            "1cfcf62b03eddb641d77dfcf7f8d8c93"
            "42b7d0cdd918a8a33dd51781c81f4041"
            "6459844432a7da923cfb3eb4980661f6"
            "ec10327bde2beefd18f9277680457e22"
            "eb62638d4f0ba1fe9fca20e05bf8ff2b"
            "45129048e6a0ed0b56b490338f078da5"
            "30abbcc7c20b01609f23ee2d5f6bb7df"
            "3294f744d8f9790507e70f62e5bbceea"
            "d8729db41882259bee4f825325f5a130"
            "1eb14a0c13b3bf47fa2a0ba93ad45b8b"
            "cc582f8ba9f265e2b1be9112e975d2d7"
            "f2e30f9bd102ecbf75aaade9bc35c43c"
            "ec0e11c479dc329dc8da7968fe965681"
            "068326a2118416d21f9d04b2cd1ca050"
            "ff25b58995996707e51fbdf08b34d875"
        ),
    );
}

/// RFC 6229, Section 2, key length 128 bits, key 0x0102...10.
#[test]
fn rc4_rfc6229_128_bit_key() {
    rc4_rfc6229(
        &hex!("0102030405060708090a0b0c0d0e0f10"),
        &hex!(
            "9ac7cc9a609d1ef7b2932899cde41b97"
            "5248c4959014126a6e8a84f11d1a9e1c"
            "065902e4b620f6cc36c8589f66432f2b"
            "d39d566bc6bce3010768151549f3873f"
            "b6d1e6c4a5e4771cad79538df295fb11"
            "c68c1d5c559a974123df1dbc52a43b89"
            "c5ecf88de897fd57fed301701b82a259"
            "eccbe13de1fcc91c11a0b26c0bc8fa4d"
            "e7a72574f8782ae26aabcf9ebcd66065"
            "bdf0324e6083dcc6d3cedd3ca8c53c16"
            "b40110c4190b5622a96116b0017ed297"
            "ffa0b514647ec04f6306b892ae661181"
            "d03d1bc03cd33d70dff9fa5d71963ebd"
            "8a44126411eaa78bd51e8d87a8879bf5"
            "fabeb76028ade2d0e48722e46c4615a3"
            "c05d88abd50357f935a63c59ee537623"
            "ff38265c1642c1abe8d3c2fe5e572bf8"
            "a36a4c301ae8ac13610ccbc12256cacc"
        ),
    );
}

/// RFC 6229, Section 2, key length 256 bits, key 0x0102...20.
#[test]
fn rc4_rfc6229_256_bit_key() {
    rc4_rfc6229(
        &hex!("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"),
        &hex!(
            "eaa6bd25880bf93d3f5d1e4ca2611d91"
            "cfa45c9f7e714b54bdfa80027cb14380"
            "114ae344ded71b35f2e60febad727fd8"
            "02e1e7056b0f623900496422943e97b6"
            "91cb93c787964e10d9527d999c6f936b"
            "49b18b42f8e8367cbeb5ef104ba1c7cd"
            "87084b3ba700bade955610672745b374"
            "e7a7b9e9ec540d5ff43bdb12792d1b35"
            "c799b596738f6b018c76c74b1759bd90"
            "7fec5bfd9f9b89ce6548309092d7e958"
            "40f250b26d1f096a4afd4c340a588815"
            "3e34135c79db010200767651cf263073"
            "f656abccf88dd827027b2ce917d464ec"
            "18b62503bfbc077fbabb98f20d98ab34"
            "8aed95ee5b0dcbfbef4eb21d3a3f52f9"
            "625a1ab00ee39a5327346bddb01a9c18"
            "a13a7c79c7e119b5ab0296ab28c300b9"
            "f3e4c0a2e02d1d01f7f0a74618af2b48"
        ),
    );
}

// ---------------------------------------------------------------- ChaCha20

const SUNSCREEN: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you \
only one tip for the future, sunscreen would be it.";

/// RFC 8439 (ChaCha20 and Poly1305), Section 2.4.2 "Example and Test Vector
/// for the ChaCha20 Cipher": key 000102...1f, nonce 000000000000004a00000000,
/// initial counter 1.
///
/// The catalogue's nonce is the sector, little-endian, in the first 8 nonce
/// bytes with the counter starting at 0; sector 0x4a00_0000_0000_0000 gives the
/// RFC's nonce, and 64 leading bytes move the key stream to counter 1. The
/// vector is also run through the `chacha20` crate directly.
#[test]
fn chacha20_rfc8439_2_4_2() {
    let key = hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    let nonce = hex!("000000000000004a00000000");
    let ct = hex!(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d"
    );
    assert_eq!(SUNSCREEN.len(), 114);

    // The crate, with the RFC's counter.
    let mut buf = SUNSCREEN.to_vec();
    let mut c = chacha20::ChaCha20::new(&key.into(), &nonce.into());
    c.seek(64u64);
    c.apply_keystream(&mut buf);
    assert_eq!(hex::encode(&buf), hex::encode(ct), "chacha20 crate");

    // The catalogue, with the sector that spells the RFC's nonce.
    let sector = u64::from_le_bytes(nonce[..8].try_into().unwrap());
    assert_eq!(sector, 0x4a00_0000_0000_0000);
    let mut pt = vec![0u8; 64];
    pt.extend_from_slice(SUNSCREEN);
    let mut buf = pt.clone();
    row("chacha20", 256, &key)
        .encrypt(&mut buf, sector)
        .unwrap();
    assert_eq!(
        hex::encode(&buf[64..]),
        hex::encode(ct),
        "catalogue chacha20"
    );
    row("chacha20", 256, &key)
        .decrypt(&mut buf, sector)
        .unwrap();
    assert_eq!(buf, pt);
}

/// RFC 8439, Appendix A.1 "The ChaCha20 Block Functions", Test Vectors #1 and
/// #2: all-zero key and nonce, counters 0 and 1, i.e. the first 128 key stream
/// bytes of the catalogue row at sector 0.
#[test]
fn chacha20_rfc8439_a1_block_tv1_tv2() {
    kat(
        "chacha20",
        256,
        &[0; 32],
        0,
        &[0; 128],
        &hex!(
            "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
            "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
            "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
            "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"
        ),
    );
}

/// RFC 8439 Section 2.3.2 "Test Vector for the ChaCha20 Block Function": key
/// 000102...1f, nonce 000000090000004a00000000, counter 1 (sector
/// 0x4a00_0000_0900_0000 and one skipped block in the catalogue).
#[test]
fn chacha20_rfc8439_2_3_2_block() {
    let key = hex!("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    let sector = u64::from_le_bytes(hex!("000000090000004a"));
    let mut buf = [0u8; 128];
    row("chacha20", 256, &key)
        .encrypt(&mut buf, sector)
        .unwrap();
    assert_eq!(
        hex::encode(&buf[64..]),
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e\
         d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    );
}

/// The catalogue's ChaCha20 nonce convention against the `chacha20` crate:
/// nonce = sector little-endian in bytes 0..8, zero in 8..12, counter 0.
#[test]
fn chacha20_catalogue_nonce_convention() {
    let key: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ 0x5a);
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 131 % 251) as u8).collect();
    let mut op = row("chacha20", 256, &key);
    for sector in [0u64, 1, 7, 0x0123_4567_89ab_cdef, u64::MAX] {
        let mut ours = data.clone();
        op.encrypt(&mut ours, sector).unwrap();
        let mut nonce = [0u8; 12];
        nonce[..8].copy_from_slice(&sector.to_le_bytes());
        let mut theirs = data.clone();
        chacha20::ChaCha20::new(&key.into(), &nonce.into()).apply_keystream(&mut theirs);
        assert_eq!(ours, theirs, "sector {sector:#x}");
        op.decrypt(&mut ours, sector).unwrap();
        assert_eq!(ours, data, "sector {sector:#x}: decryption");
    }
}

// ---------------------------------------------------------------- XTS

/// 000102...ff twice: the 512-byte plaintext of IEEE 1619 vectors 4 to 14.
fn ieee1619_pattern() -> Vec<u8> {
    (0..512).map(|i| i as u8).collect()
}

/// IEEE Std 1619-2007, Annex B "Test vectors", XTS-AES-128 (256-bit key)
/// vectors 1, 2 and 3 (two blocks) and 4 (a 512-byte data unit). The data unit
/// sequence number is the tweak as a little-endian 128-bit integer, which is
/// plain64 of that sector.
#[test]
fn xts_aes128_ieee1619_vectors_1_to_4() {
    // Vector 1
    kat(
        "aes-xts-plain64",
        256,
        &[0; 32],
        0,
        &[0; 32],
        &hex!("917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e"),
    );
    // Vector 2
    kat(
        "aes-xts-plain64",
        256,
        &hex!("11111111111111111111111111111111 22222222222222222222222222222222"),
        0x33_3333_3333,
        &[0x44; 32],
        &hex!("c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"),
    );
    // Vector 3
    kat(
        "aes-xts-plain64",
        256,
        &hex!("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 22222222222222222222222222222222"),
        0x33_3333_3333,
        &[0x44; 32],
        &hex!("af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89"),
    );
    // Vector 4
    kat(
        "aes-xts-plain64",
        256,
        &hex!("27182818284590452353602874713526 31415926535897932384626433832795"),
        0,
        &ieee1619_pattern(),
        &hex!(
            "27a7479befa1d476489f308cd4cfa6e2a96e4bbe3208ff25287dd3819616e89c"
            "c78cf7f5e543445f8333d8fa7f56000005279fa5d8b5e4ad40e736ddb4d35412"
            "328063fd2aab53e5ea1e0a9f332500a5df9487d07a5c92cc512c8866c7e860ce"
            "93fdf166a24912b422976146ae20ce846bb7dc9ba94a767aaef20c0d61ad0265"
            "5ea92dc4c4e41a8952c651d33174be51a10c421110e6d81588ede82103a252d8"
            "a750e8768defffed9122810aaeb99f9172af82b604dc4b8e51bcb08235a6f434"
            "1332e4ca60482a4ba1a03b3e65008fc5da76b70bf1690db4eae29c5f1badd03c"
            "5ccf2a55d705ddcd86d449511ceb7ec30bf12b1fa35b913f9f747a8afd1b130e"
            "94bff94effd01a91735ca1726acd0b197c4e5b03393697e126826fb6bbde8ecc"
            "1e08298516e2c9ed03ff3c1b7860f6de76d4cecd94c8119855ef5297ca67e9f3"
            "e7ff72b1e99785ca0a7e7720c5b36dc6d72cac9574c8cbbc2f801e23e56fd344"
            "b07f22154beba0f08ce8891e643ed995c94d9a69c9f1b5f499027a78572aeebd"
            "74d20cc39881c213ee770b1010e4bea718846977ae119f7a023ab58cca0ad752"
            "afe656bb3c17256a9f6e9bf19fdd5a38fc82bbe872c5539edb609ef4f79c203e"
            "bb140f2e583cb2ad15b4aa5b655016a8449277dbd477ef2c8d6c017db738b18d"
            "eb4a427d1923ce3ff262735779a418f20a282df920147beabe421ee5319d0568"
        ),
    );
}

/// IEEE Std 1619-2007, Annex B, XTS-AES-256 (512-bit key) vector 10: data
/// unit sequence number 0xff, 512-byte data unit.
#[test]
fn xts_aes256_ieee1619_vector_10() {
    kat(
        "aes-xts-plain64",
        512,
        &hex!(
            "2718281828459045235360287471352662497757247093699959574966967627"
            "3141592653589793238462643383279502884197169399375105820974944592"
        ),
        0xff,
        &ieee1619_pattern(),
        &hex!(
            "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b"
            "5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd"
            "5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
            "c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca"
            "2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0"
            "b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
            "93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec"
            "583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a"
            "84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
            "505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae"
            "9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29"
            "a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
            "6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f"
            "645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385"
            "1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
            "773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151"
        ),
    );
}

/// IEEE Std 1619-2007, Annex B, XTS-AES-128 vectors 15 to 18: data units of
/// 17 to 20 bytes, i.e. ciphertext stealing. Annex B prints the data unit
/// sequence number as "9a78563412", its bytes in tweak (little-endian) order:
/// the tweak is 9a 78 56 34 12 00 .. 00, so the sector is 0x12_3456_789a.
#[test]
fn xts_aes128_ieee1619_vectors_15_to_18_stealing() {
    let key = hex!("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0");
    let sector = 0x12_3456_789a;
    let pt: Vec<u8> = (0..20).collect();
    let cts: [&[u8]; 4] = [
        &hex!("6c1625db4671522d3d7599601de7ca09ed"),
        &hex!("d069444b7a7e0cab09e24447d24deb1fedbf"),
        &hex!("e5df1351c0544ba1350b3363cd8ef4beedbf9d"),
        &hex!("9d84c813f719aa2c7be3f66171c7c5c2edbf9dac"),
    ];
    for ct in cts {
        kat("aes-xts-plain64", 256, &key, sector, &pt[..ct.len()], ct);
    }
}

// ---------------------------------------------------------------- AEADs

/// Seals `pt` with `aad` and expects `ct || tag`, opens it again, and checks
/// that a changed tag, ciphertext or AAD is rejected.
#[track_caller]
fn aead_kat(
    alg: AeadAlgorithm,
    key: &[u8],
    nonce: &[u8; 12],
    aad: &[u8],
    pt: &[u8],
    ct: &[u8],
    tag: &[u8; 16],
) {
    let aead = Aead::new(alg, key).expect("key length");
    let mut buf = pt.to_vec();
    let got = aead.seal(nonce, aad, &mut buf);
    assert_eq!(hex::encode(&buf), hex::encode(ct), "{alg:?} ciphertext");
    assert_eq!(hex::encode(got), hex::encode(tag), "{alg:?} tag");
    let sealed = buf.clone();
    aead.open(nonce, aad, &mut buf, tag).expect("opens");
    assert_eq!(buf, pt, "{alg:?} open");

    let mut bad_tag = *tag;
    bad_tag[15] ^= 1;
    let mut buf = sealed.clone();
    assert!(aead.open(nonce, aad, &mut buf, &bad_tag).is_err());
    if !sealed.is_empty() {
        let mut buf = sealed.clone();
        buf[0] ^= 0x80;
        assert!(aead.open(nonce, aad, &mut buf, tag).is_err());
    }
    let mut other_aad = aad.to_vec();
    other_aad.push(0);
    let mut buf = sealed;
    assert!(aead.open(nonce, &other_aad, &mut buf, tag).is_err());
}

const GCM_P3: [u8; 64] = hex!(
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
);
const GCM_A4: [u8; 20] = hex!("feedfacedeadbeeffeedfacedeadbeefabaddad2");
const GCM_IV: [u8; 12] = hex!("cafebabefacedbaddecaf888");
const GCM_K3: [u8; 16] = hex!("feffe9928665731c6d6a8f9467308308");

/// McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)" (2005),
/// Appendix B "AES Test Vectors", test cases 1 to 4 (AES-128).
#[test]
fn gcm_aes128_mcgrew_viega_cases_1_to_4() {
    let gcm = AeadAlgorithm::AesGcm;
    // Test case 1
    aead_kat(
        gcm,
        &[0; 16],
        &[0; 12],
        &[],
        &[],
        &[],
        &hex!("58e2fccefa7e3061367f1d57a4e7455a"),
    );
    // Test case 2
    aead_kat(
        gcm,
        &[0; 16],
        &[0; 12],
        &[],
        &[0; 16],
        &hex!("0388dace60b6a392f328c2b971b2fe78"),
        &hex!("ab6e47d42cec13bdf53a67b21257bddf"),
    );
    let c3 = hex!(
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
        "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
    );
    // Test case 3
    aead_kat(
        gcm,
        &GCM_K3,
        &GCM_IV,
        &[],
        &GCM_P3,
        &c3,
        &hex!("4d5c2af327cd64a62cf35abd2ba6fab4"),
    );
    // Test case 4: 60-byte plaintext, 20-byte AAD
    aead_kat(
        gcm,
        &GCM_K3,
        &GCM_IV,
        &GCM_A4,
        &GCM_P3[..60],
        &c3[..60],
        &hex!("5bc94fbc3221a5db94fae95ae7121a47"),
    );
}

/// McGrew and Viega, GCM, Appendix B, test cases 7 to 10 (AES-192).
#[test]
fn gcm_aes192_mcgrew_viega_cases_7_to_10() {
    let gcm = AeadAlgorithm::AesGcm;
    // Test case 7
    aead_kat(
        gcm,
        &[0; 24],
        &[0; 12],
        &[],
        &[],
        &[],
        &hex!("cd33b28ac773f74ba00ed1f312572435"),
    );
    // Test case 8
    aead_kat(
        gcm,
        &[0; 24],
        &[0; 12],
        &[],
        &[0; 16],
        &hex!("98e7247c07f0fe411c267e4384b0f600"),
        &hex!("2ff58d80033927ab8ef4d4587514f0fb"),
    );
    let key = hex!("feffe9928665731c6d6a8f9467308308feffe9928665731c");
    let c9 = hex!(
        "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
        "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256"
    );
    // Test case 9
    aead_kat(
        gcm,
        &key,
        &GCM_IV,
        &[],
        &GCM_P3,
        &c9,
        &hex!("9924a7c8587336bfb118024db8674a14"),
    );
    // Test case 10
    aead_kat(
        gcm,
        &key,
        &GCM_IV,
        &GCM_A4,
        &GCM_P3[..60],
        &c9[..60],
        &hex!("2519498e80f1478f37ba55bd6d27618c"),
    );
}

/// McGrew and Viega, GCM, Appendix B, test cases 13 to 16 (AES-256).
#[test]
fn gcm_aes256_mcgrew_viega_cases_13_to_16() {
    let gcm = AeadAlgorithm::AesGcm;
    // Test case 13
    aead_kat(
        gcm,
        &[0; 32],
        &[0; 12],
        &[],
        &[],
        &[],
        &hex!("530f8afbc74536b9a963b4f1c4cb738b"),
    );
    // Test case 14
    aead_kat(
        gcm,
        &[0; 32],
        &[0; 12],
        &[],
        &[0; 16],
        &hex!("cea7403d4d606b6e074ec5d3baf39d18"),
        &hex!("d0d1c8a799996bf0265b98b5d48ab919"),
    );
    let key = hex!("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
    let c15 = hex!(
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
    );
    // Test case 15
    aead_kat(
        gcm,
        &key,
        &GCM_IV,
        &[],
        &GCM_P3,
        &c15,
        &hex!("b094dac5d93471bdec1a502270e3cc6c"),
    );
    // Test case 16
    aead_kat(
        gcm,
        &key,
        &GCM_IV,
        &GCM_A4,
        &GCM_P3[..60],
        &c15[..60],
        &hex!("76fc6ece0f4e1768cddf8853bb2d551b"),
    );
}

/// RFC 8439, Section 2.8.2 "Example and Test Vector for
/// AEAD_CHACHA20_POLY1305": key 808182...9f, nonce 07000000 || 4041424344454647,
/// AAD 50515253c0c1c2c3c4c5c6c7.
#[test]
fn chacha20_poly1305_rfc8439_2_8_2() {
    aead_kat(
        AeadAlgorithm::ChaCha20Poly1305,
        &hex!("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"),
        &hex!("070000004041424344454647"),
        &hex!("50515253c0c1c2c3c4c5c6c7"),
        SUNSCREEN,
        &hex!(
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
            "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
            "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
            "3ff4def08e4b7a9de576d26586cec64b6116"
        ),
        &hex!("1ae10b594f09e26a7e902ecbd0600691"),
    );
}
