//! Cross-checks of every catalogue mode against independent implementations.
//!
//! * OpenSSL 3 (`openssl enc`, a subprocess): AES, Camellia, DES, 3DES,
//!   Blowfish and RC2 in ECB, CBC and CTR where OpenSSL has them, RC4, ChaCha20,
//!   and the ciphertext of the AEAD rows. `openssl enc` refuses XTS ("enc XTS
//!   ciphers not supported"), so XTS goes to libgcrypt.
//! * libgcrypt, through the small C program `tests/gcrypt/gcrypt_enc.c`,
//!   compiled here with `cc ... -lgcrypt`: Serpent and Twofish (which OpenSSL
//!   lacks) in ECB, CBC, CTR and XTS, and XTS for AES and Camellia.
//! * Python's `cryptography` package, if installed (skipped with a note if
//!   not): AES-GCM and ChaCha20-Poly1305 with AAD and tags, XTS-AES once more
//!   through OpenSSL's library, and RC4 with a 256-bit key.
//!
//! A missing `openssl`, `cc` or libgcrypt fails the tests; only the Python
//! checks may be skipped.
//!
//! The data are deterministic pseudo-random bytes. CBC and CTR requests span
//! several of the 4 KiB batches the mode code works in, and the sector numbers
//! include values other than 0, so the IV generation is checked too: plain64
//! puts the sector little-endian in the first 8 IV bytes (zero elsewhere).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use clustercrypt_catalogue::aead::{Aead, AeadAlgorithm};
use clustercrypt_catalogue::{CipherOp, CipherSpec, Mode, build};

/// Sector numbers every IV-using mode is checked at.
const SECTORS: [u64; 3] = [0, 1, 0x0123_4567_89ab_cdef];

// ---------------------------------------------------------------- helpers

/// Deterministic pseudo-random bytes (SplitMix64 seeded from `seed`).
fn prng(seed: &str, len: usize) -> Vec<u8> {
    let mut state = seed.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Keys the catalogue row `name`.
#[track_caller]
fn row(name: &str, bits: usize, key: &[u8]) -> Box<dyn CipherOp> {
    let spec =
        CipherSpec::parse(name, Some(bits)).unwrap_or_else(|e| panic!("{name} {bits}b: {e}"));
    build(&spec, key).unwrap_or_else(|e| panic!("{name} {bits}b: {e}"))
}

/// Asserts equality, reporting the first differing offset instead of two
/// multi-kilobyte dumps.
#[track_caller]
fn assert_same(ours: &[u8], theirs: &[u8], what: &str) {
    if ours == theirs {
        return;
    }
    let first = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let end = (first + 16).min(ours.len()).min(theirs.len());
    panic!(
        "{what}: outputs differ (ours {} bytes, reference {} bytes), first at offset {first}: \
         ours {} reference {}",
        ours.len(),
        theirs.len(),
        hex::encode(&ours[first..end]),
        hex::encode(&theirs[first..end]),
    );
}

/// Runs `program` with `args`, feeding `input` on stdin, and returns stdout;
/// any failure (program missing, non-zero exit) panics with the details.
fn run(program: &str, args: &[String], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}`: {e} (this cross-check needs it installed)")
        });
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("waiting for the child");
    let written = writer.join().expect("stdin writer thread");
    assert!(
        out.status.success(),
        "`{program} {}` failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    written.unwrap_or_else(|e| panic!("writing to `{program}`: {e}"));
    out.stdout
}

/// The plain64 IV of `sector` for a `bs`-byte block.
fn plain64_iv(sector: u64, bs: usize) -> Vec<u8> {
    let mut iv = vec![0u8; bs];
    iv[..8].copy_from_slice(&sector.to_le_bytes());
    iv
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dir {
    Encrypt,
    Decrypt,
}

/// A reference implementation: (direction, key, sector, input) -> output.
type Reference<'a> = &'a dyn Fn(Dir, &[u8], u64, &[u8]) -> Vec<u8>;

/// One request of `len` bytes of row `name` at `sector` against `reference`:
/// our encryption equals theirs, our decryption inverts theirs, and our and
/// their decryption of unrelated data agree.
fn compare(name: &str, bits: usize, len: usize, sector: u64, reference: Reference) {
    let spec = CipherSpec::parse(name, Some(bits)).unwrap();
    let what = format!("{name} {bits}b, {len} bytes, sector {sector:#x}");
    let key = prng(&format!("key {name} {bits}"), spec.key_len());
    let data = prng(&format!("data {what}"), len);

    let mut ours = data.clone();
    row(name, bits, &key)
        .encrypt(&mut ours, sector)
        .unwrap_or_else(|e| panic!("{what}: encrypt: {e}"));
    let theirs = reference(Dir::Encrypt, &key, sector, &data);
    assert_same(&ours, &theirs, &format!("{what}: encryption"));

    let mut back = theirs;
    row(name, bits, &key)
        .decrypt(&mut back, sector)
        .unwrap_or_else(|e| panic!("{what}: decrypt: {e}"));
    assert_same(
        &back,
        &data,
        &format!("{what}: decrypting the reference's ciphertext"),
    );

    let other = prng(&format!("other {what}"), len);
    let mut ours = other.clone();
    row(name, bits, &key).decrypt(&mut ours, sector).unwrap();
    let theirs = reference(Dir::Decrypt, &key, sector, &other);
    assert_same(&ours, &theirs, &format!("{what}: decryption"));
}

/// Request lengths for a mode: several 4 KiB batches and a partial one, plus
/// the smallest request.
fn lengths(mode: Mode, bs: usize) -> Vec<usize> {
    match mode {
        Mode::Ecb => vec![bs, 12_336],
        Mode::Cbc => vec![bs, 8192, 12_336],
        Mode::Ctr => vec![1, 10_007, 12_336],
        // 17 and 4100 steal ciphertext; 12_295 does so after three batches.
        Mode::Xts => vec![16, 17, 512, 4096, 4100, 12_288, 12_295],
        _ => vec![1, 64, 10_007, 70_001],
    }
}

/// Runs `compare` over the lengths of the row's mode and, for modes with an
/// IV, over [`SECTORS`].
fn compare_all(name: &str, bits: usize, reference: Reference) {
    let spec = CipherSpec::parse(name, Some(bits)).unwrap();
    let bs = spec.algorithm.block_size().unwrap_or(1);
    let sectors: &[u64] = if spec.mode == Mode::Ecb {
        &[7]
    } else {
        &SECTORS
    };
    for len in lengths(spec.mode, bs) {
        for &sector in sectors {
            compare(name, bits, len, sector, reference);
        }
    }
}

// ---------------------------------------------------------------- OpenSSL

fn openssl_program() -> String {
    std::env::var("CLUSTERCRYPT_TEST_OPENSSL").unwrap_or_else(|_| "openssl".to_string())
}

/// `openssl enc -<cipher> -K key [-iv iv] -nosalt -nopad [-d]`, with the
/// legacy provider loaded if `legacy`.
fn openssl_enc(
    cipher: &str,
    legacy: bool,
    dir: Dir,
    key: &[u8],
    iv: Option<&[u8]>,
    data: &[u8],
) -> Vec<u8> {
    let mut args: Vec<String> = vec![
        "enc".into(),
        format!("-{cipher}"),
        "-K".into(),
        hex::encode(key),
        "-nosalt".into(),
        "-nopad".into(),
    ];
    if let Some(iv) = iv {
        args.push("-iv".into());
        args.push(hex::encode(iv));
    }
    if dir == Dir::Decrypt {
        args.push("-d".into());
    }
    if legacy {
        for p in ["-provider", "legacy", "-provider", "default"] {
            args.push(p.into());
        }
    }
    let out = run(&openssl_program(), &args, data);
    assert_eq!(out.len(), data.len(), "openssl {cipher}: output length");
    out
}

/// Cross-checks a block-cipher row (ECB, CBC or CTR, plain64 IV) with
/// `openssl enc -<cipher>`.
fn vs_openssl(name: &str, bits: usize, cipher: &str, legacy: bool) {
    let spec = CipherSpec::parse(name, Some(bits)).unwrap();
    let bs = spec.algorithm.block_size().expect("a block cipher");
    let mode = spec.mode;
    let reference = move |dir: Dir, key: &[u8], sector: u64, data: &[u8]| {
        let iv = (mode != Mode::Ecb).then(|| plain64_iv(sector, bs));
        openssl_enc(cipher, legacy, dir, key, iv.as_deref(), data)
    };
    compare_all(name, bits, &reference);
}

#[test]
fn aes_ecb_cbc_ctr_vs_openssl() {
    for bits in [128, 192, 256] {
        for mode in ["ecb", "cbc", "ctr"] {
            let name = if mode == "ecb" {
                "aes-ecb".to_string()
            } else {
                format!("aes-{mode}-plain64")
            };
            vs_openssl(&name, bits, &format!("aes-{bits}-{mode}"), false);
        }
    }
}

#[test]
fn camellia_ecb_cbc_ctr_vs_openssl() {
    for bits in [128, 192, 256] {
        for mode in ["ecb", "cbc", "ctr"] {
            let name = if mode == "ecb" {
                "camellia-ecb".to_string()
            } else {
                format!("camellia-{mode}-plain64")
            };
            vs_openssl(&name, bits, &format!("camellia-{bits}-{mode}"), false);
        }
    }
}

#[test]
fn des_ecb_cbc_vs_openssl() {
    vs_openssl("des-ecb", 64, "des-ecb", true);
    vs_openssl("des-cbc-plain64", 64, "des-cbc", true);
}

#[test]
fn tdes_ecb_cbc_vs_openssl() {
    vs_openssl("des3_ede-ecb", 192, "des-ede3-ecb", false);
    vs_openssl("des3_ede-cbc-plain64", 192, "des-ede3-cbc", false);
}

/// OpenSSL's `bf` takes a 128-bit key through `enc -K`.
#[test]
fn blowfish_ecb_cbc_vs_openssl() {
    vs_openssl("blowfish-ecb", 128, "bf-ecb", true);
    vs_openssl("blowfish-cbc-plain64", 128, "bf-cbc", true);
}

/// OpenSSL's `rc2-ecb`/`rc2-cbc` take a 128-bit key with 128 effective key
/// bits, as the catalogue's RC2 does (checked against RFC 2268 vector 7 here).
#[test]
fn rc2_ecb_cbc_vs_openssl() {
    let v7 = openssl_enc(
        "rc2-ecb",
        true,
        Dir::Encrypt,
        &hex::decode("88bca90e90875a7f0f79c384627bafb2").unwrap(),
        None,
        &[0; 8],
    );
    assert_eq!(
        hex::encode(v7),
        "2269552ab0f85ca6",
        "openssl rc2 effective bits"
    );
    vs_openssl("rc2-ecb", 128, "rc2-ecb", true);
    vs_openssl("rc2-cbc-plain64", 128, "rc2-cbc", true);
}

/// RC4 is one key stream across requests: uneven requests at arbitrary
/// sectors equal `openssl enc -rc4` over the whole buffer.
#[test]
fn rc4_vs_openssl() {
    let key = prng("rc4 key", 16);
    let data = prng("rc4 data", 20_000);
    let theirs = openssl_enc("rc4", true, Dir::Encrypt, &key, None, &data);

    let mut ours = data.clone();
    let mut op = row("rc4", 128, &key);
    let mut at = 0;
    for (i, len) in [1usize, 4095, 4097, 10, 11_797].into_iter().enumerate() {
        op.encrypt(&mut ours[at..at + len], 1000 - i as u64)
            .unwrap();
        at += len;
    }
    assert_eq!(at, data.len());
    assert_same(&ours, &theirs, "rc4 128b encryption");

    let mut back = theirs;
    let mut op = row("rc4", 128, &key);
    for chunk in back.chunks_mut(3000) {
        op.decrypt(chunk, 0).unwrap();
    }
    assert_same(&back, &data, "rc4 128b decryption");
}

/// OpenSSL's `-chacha20` IV is the 32-bit block counter (little-endian)
/// followed by the 96-bit nonce; the catalogue's nonce is the sector
/// little-endian in its first 8 bytes, and the counter starts at 0.
#[test]
fn chacha20_vs_openssl() {
    let reference = |dir: Dir, key: &[u8], sector: u64, data: &[u8]| {
        let mut iv = [0u8; 16];
        iv[4..12].copy_from_slice(&sector.to_le_bytes());
        openssl_enc("chacha20", false, dir, key, Some(&iv), data)
    };
    for len in lengths(Mode::Stream, 1) {
        for sector in SECTORS.into_iter().chain([u64::MAX]) {
            compare("chacha20", 256, len, sector, &reference);
        }
    }
}

/// dm-crypt's other IV generators on AES-CBC: `plain` (the low 32 bits of the
/// sector, little-endian), `plain64be` (big-endian in the last 8 bytes) and
/// `essiv:sha256` (plain64 encrypted with AES-256 keyed by SHA-256 of the
/// key), the IVs worked out with OpenSSL.
#[test]
fn aes_cbc_iv_generators_vs_openssl() {
    let sector = 0x0000_0005_8000_0001u64;
    let key = prng("ivgen key", 16);
    let data = prng("ivgen data", 8192);
    let mut plain = [0u8; 16];
    plain[..4].copy_from_slice(&(sector as u32).to_le_bytes());
    let mut be = [0u8; 16];
    be[8..].copy_from_slice(&sector.to_be_bytes());
    let salt = run(
        &openssl_program(),
        &["dgst".into(), "-sha256".into(), "-binary".into()],
        &key,
    );
    assert_eq!(salt.len(), 32);
    let essiv = openssl_enc(
        "aes-256-ecb",
        false,
        Dir::Encrypt,
        &salt,
        None,
        &plain64_iv(sector, 16),
    );
    for (name, iv) in [
        ("aes-cbc-plain", plain.to_vec()),
        ("aes-cbc-plain64be", be.to_vec()),
        ("aes-cbc-essiv:sha256", essiv),
    ] {
        let mut ours = data.clone();
        row(name, 128, &key).encrypt(&mut ours, sector).unwrap();
        let theirs = openssl_enc("aes-128-cbc", false, Dir::Encrypt, &key, Some(&iv), &data);
        assert_same(&ours, &theirs, name);
        row(name, 128, &key).decrypt(&mut ours, sector).unwrap();
        assert_same(&ours, &data, &format!("{name} decryption"));
    }
}

/// The AEAD rows (`aes-gcm`, `chacha20-poly1305`) seal each request with
/// nonce = sector little-endian || 4 zero bytes and no AAD. Their ciphertext
/// is a plain key stream: AES-CTR from nonce || 00000002 for GCM (SP 800-38D
/// §7.1, 96-bit IV) and ChaCha20 from block counter 1 (RFC 8439 §2.8), which
/// OpenSSL computes; the tags are checked in kat.rs and below against Python.
#[test]
fn aead_rows_ciphertext_vs_openssl() {
    for (name, bits) in [
        ("aes-gcm", 128),
        ("aes-gcm", 192),
        ("aes-gcm", 256),
        ("chacha20-poly1305", 256),
    ] {
        for len in [1usize, 4096, 10_007] {
            for sector in SECTORS {
                let what = format!("{name} {bits}b {len} bytes sector {sector:#x}");
                let key = prng(&format!("aead key {name} {bits}"), bits / 8);
                let data = prng(&format!("aead data {what}"), len);
                let mut iv = [0u8; 16];
                let cipher = if name == "aes-gcm" {
                    iv[..8].copy_from_slice(&sector.to_le_bytes());
                    iv[15] = 2;
                    format!("aes-{bits}-ctr")
                } else {
                    iv[0] = 1;
                    iv[4..12].copy_from_slice(&sector.to_le_bytes());
                    "chacha20".to_string()
                };
                let theirs = openssl_enc(&cipher, false, Dir::Encrypt, &key, Some(&iv), &data);
                let mut op = row(name, bits, &key);
                let mut ours = data.clone();
                op.encrypt(&mut ours, sector).unwrap();
                assert_same(&ours, &theirs, &what);
                op.decrypt(&mut ours, sector).unwrap();
                assert_same(&ours, &data, &format!("{what}: decryption"));
            }
        }
    }
}

/// What the benchmark does with an AEAD row: `prepare_decrypt_bench` learns
/// both tags of each request, and each decryption then verifies the tag of
/// the state the request is in and flips it (P to C to P). A sector never
/// sealed, or a changed byte, fails authentication and releases no
/// plaintext: our code leaves the request as it was, AWS-LC's (AES-GCM on
/// CPUs with AVX-512) zeroes it.
#[test]
fn aead_rows_benchmark_decryption_flips_and_verifies() {
    // 512-byte requests run ours where 4096-byte ones run AWS-LC (AES-GCM
    // with AVX-512, `dispatch::AWS_LC_GCM_FROM`).
    for (name, bits, request) in [
        ("aes-gcm", 128, 512),
        ("aes-gcm", 128, 4096),
        ("chacha20-poly1305", 256, 4096),
    ] {
        let key = prng(&format!("bench key {name}"), bits / 8);
        let plain = prng(&format!("bench data {name}"), 4 * request);
        // The ciphertext of each request, sealed by a second op.
        let mut sealed = plain.clone();
        let mut other = row(name, bits, &key);
        for (i, chunk) in sealed.chunks_mut(request).enumerate() {
            other.encrypt(chunk, i as u64).unwrap();
        }
        let mut op = row(name, bits, &key);
        let mut buf = plain.clone();
        op.prepare_decrypt_bench(&mut buf, request).unwrap();
        assert_same(&buf, &plain, &format!("{name}: prepared buffer"));
        for round in 0..4 {
            for (i, chunk) in buf.chunks_mut(request).enumerate() {
                op.decrypt(chunk, i as u64)
                    .unwrap_or_else(|e| panic!("{name} round {round} request {i}: {e}"));
            }
            let want = if round % 2 == 0 { &sealed } else { &plain };
            assert_same(
                &buf,
                want,
                &format!("{name}: after {} decryptions", round + 1),
            );
        }
        // A sector that was never sealed has no tag.
        let mut chunk = plain[..request].to_vec();
        assert!(
            op.decrypt(&mut chunk, 99).is_err(),
            "{name}: unsealed sector"
        );
        assert_same(
            &chunk,
            &plain[..request],
            &format!("{name}: unsealed sector"),
        );
        // A changed byte fails, and the request stays as it was (ours) or is
        // zeroed (AWS-LC, which wipes a failed opening's output).
        buf[5] ^= 1;
        let before = buf[..request].to_vec();
        assert!(
            op.decrypt(&mut buf[..request], 0).is_err(),
            "{name}: changed byte"
        );
        let want = if op.backend_for(request).starts_with("aws-lc") {
            vec![0u8; request]
        } else {
            before
        };
        assert_same(&buf[..request], &want, &format!("{name}: changed byte"));
    }
}

// ---------------------------------------------------------------- libgcrypt

/// Compiles `tests/gcrypt/gcrypt_enc.c` against libgcrypt (once per test
/// process) and returns the program's path.
fn gcrypt_tool() -> &'static Path {
    static TOOL: OnceLock<PathBuf> = OnceLock::new();
    TOOL.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gcrypt/gcrypt_enc.c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let exe = dir.join("gcrypt_enc");
        let tmp = dir.join(format!("gcrypt_enc.{}.tmp", std::process::id()));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let out = Command::new(&cc)
            .args(["-O2", "-Wall", "-o"])
            .arg(&tmp)
            .arg(&src)
            .arg("-lgcrypt")
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run the C compiler `{cc}`: {e}; the libgcrypt cross-checks need cc \
                     and libgcrypt (Debian/Ubuntu: libgcrypt20-dev)"
                )
            });
        assert!(
            out.status.success(),
            "compiling {} with `{cc} ... -lgcrypt` failed (is libgcrypt20-dev installed?):\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Atomic replace: another test process may be running the old one.
        std::fs::rename(&tmp, &exe).expect("installing gcrypt_enc");
        exe
    })
}

/// `gcrypt_enc algo mode enc|dec key iv`: one libgcrypt call over the data.
fn gcrypt(algo: &str, mode: &str, dir: Dir, key: &[u8], iv: Option<&[u8]>, data: &[u8]) -> Vec<u8> {
    let args = vec![
        algo.to_string(),
        mode.to_string(),
        if dir == Dir::Encrypt { "enc" } else { "dec" }.to_string(),
        hex::encode(key),
        iv.map_or_else(|| "-".to_string(), hex::encode),
    ];
    let out = run(gcrypt_tool().to_str().expect("UTF-8 path"), &args, data);
    assert_eq!(
        out.len(),
        data.len(),
        "gcrypt_enc {algo} {mode}: output length"
    );
    out
}

/// Cross-checks a 128-bit-block row (ECB, CBC, CTR or XTS, plain64 IV or
/// tweak) with libgcrypt's `algo`.
fn vs_gcrypt(name: &str, bits: usize, algo: &str) {
    let spec = CipherSpec::parse(name, Some(bits)).unwrap();
    let mode = spec.mode;
    let reference = move |dir: Dir, key: &[u8], sector: u64, data: &[u8]| {
        let iv = (mode != Mode::Ecb).then(|| plain64_iv(sector, 16));
        gcrypt(algo, mode.name(), dir, key, iv.as_deref(), data)
    };
    compare_all(name, bits, &reference);
}

/// Serpent's rows against libgcrypt in every mode and key size.
#[test]
fn serpent_vs_libgcrypt() {
    for bits in [128, 192, 256] {
        let algo = format!("serpent{bits}");
        vs_gcrypt("serpent-ecb", bits, &algo);
        vs_gcrypt("serpent-cbc-plain64", bits, &algo);
        vs_gcrypt("serpent-ctr-plain64", bits, &algo);
        vs_gcrypt("serpent-xts-plain64", 2 * bits, &algo);
    }
}

/// Twofish's rows against libgcrypt, which has Twofish-128 and -256 (no 192).
#[test]
fn twofish_vs_libgcrypt() {
    for bits in [128, 256] {
        let algo = format!("twofish{bits}");
        vs_gcrypt("twofish-ecb", bits, &algo);
        vs_gcrypt("twofish-cbc-plain64", bits, &algo);
        vs_gcrypt("twofish-ctr-plain64", bits, &algo);
        vs_gcrypt("twofish-xts-plain64", 2 * bits, &algo);
    }
}

/// XTS-AES (IEEE 1619) against libgcrypt: key1 || key2, tweak = plain64 of
/// the sector, one data unit per request, with ciphertext stealing.
#[test]
fn aes_xts_vs_libgcrypt() {
    for bits in [128, 192, 256] {
        vs_gcrypt("aes-xts-plain64", 2 * bits, &format!("aes{bits}"));
    }
}

#[test]
fn camellia_xts_vs_libgcrypt() {
    for bits in [128, 192, 256] {
        vs_gcrypt("camellia-xts-plain64", 2 * bits, &format!("camellia{bits}"));
    }
}

// ---------------------------------------------------------------- Python

const PYTHON_SCRIPT: &str = r#"
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
op, key, iv, aad = sys.argv[1], *(bytes.fromhex(a) for a in sys.argv[2:5])
data = sys.stdin.buffer.read()
if op == "aes-gcm":
    out = AESGCM(key).encrypt(iv, data, aad)
elif op == "chacha20-poly1305":
    out = ChaCha20Poly1305(key).encrypt(iv, data, aad)
elif op in ("aes-xts", "aes-xts-dec"):
    c = Cipher(algorithms.AES(key), modes.XTS(iv))
    ctx = c.decryptor() if op == "aes-xts-dec" else c.encryptor()
    out = ctx.update(data) + ctx.finalize()
elif op == "rc4":
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import ARC4
    except ImportError:
        from cryptography.hazmat.primitives.ciphers.algorithms import ARC4
    enc = Cipher(ARC4(key), mode=None).encryptor()
    out = enc.update(data) + enc.finalize()
else:
    sys.exit("unknown op " + op)
sys.stdout.buffer.write(out)
"#;

/// Whether `python3` with the `cryptography` package is available; prints a
/// note when it is not.
fn python_cryptography(test: &str) -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    let ok = *AVAILABLE.get_or_init(|| {
        Command::new("python3")
            .args(["-c", "import cryptography.hazmat.primitives.ciphers.aead"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !ok {
        eprintln!(
            "note: {test} skipped: python3 with the `cryptography` package is not installed \
             (kat.rs covers these algorithms with published vectors)"
        );
    }
    ok
}

fn python(op: &str, key: &[u8], iv: &[u8], aad: &[u8], data: &[u8]) -> Vec<u8> {
    let args = vec![
        "-c".to_string(),
        PYTHON_SCRIPT.to_string(),
        op.to_string(),
        hex::encode(key),
        hex::encode(iv),
        hex::encode(aad),
    ];
    run("python3", &args, data)
}

/// `aead::Aead` (seal/open with explicit nonce and AAD) against Python's
/// AESGCM and ChaCha20Poly1305, which return ciphertext || tag.
#[test]
fn aead_vs_python_cryptography() {
    if !python_cryptography("aead_vs_python_cryptography") {
        return;
    }
    for (alg, op, key_len) in [
        (AeadAlgorithm::AesGcm, "aes-gcm", 16),
        (AeadAlgorithm::AesGcm, "aes-gcm", 24),
        (AeadAlgorithm::AesGcm, "aes-gcm", 32),
        (AeadAlgorithm::ChaCha20Poly1305, "chacha20-poly1305", 32),
    ] {
        let key = prng(&format!("py key {op} {key_len}"), key_len);
        let aead = Aead::new(alg, &key).unwrap();
        for (len, aad_len) in [
            (0usize, 0usize),
            (1, 13),
            (16, 0),
            (2047, 5),
            (2048, 0),
            (4096, 100),
            (10_007, 1),
        ] {
            let what = format!("{op} {}b, {len} bytes, {aad_len} bytes AAD", 8 * key_len);
            let nonce: [u8; 12] = prng(&format!("nonce {what}"), 12).try_into().unwrap();
            let aad = prng(&format!("aad {what}"), aad_len);
            let data = prng(&format!("data {what}"), len);
            let theirs = python(op, &key, &nonce, &aad, &data);
            let mut ours = data.clone();
            let tag = aead.seal(&nonce, &aad, &mut ours);
            assert_same(&ours, &theirs[..len], &format!("{what}: ciphertext"));
            assert_same(&tag, &theirs[len..], &format!("{what}: tag"));
            let mut back = theirs[..len].to_vec();
            let their_tag: [u8; 16] = theirs[len..].try_into().unwrap();
            aead.open(&nonce, &aad, &mut back, &their_tag)
                .unwrap_or_else(|_| panic!("{what}: the reference's output does not open"));
            assert_same(&back, &data, &format!("{what}: open"));
        }
    }
}

/// The catalogue's AEAD rows (nonce from the sector, no AAD, tag kept by the
/// op) against Python.
#[test]
fn aead_rows_vs_python_cryptography() {
    if !python_cryptography("aead_rows_vs_python_cryptography") {
        return;
    }
    for (name, op, bits) in [
        ("aes-gcm", "aes-gcm", 128),
        ("aes-gcm", "aes-gcm", 256),
        ("chacha20-poly1305", "chacha20-poly1305", 256),
    ] {
        let key = prng(&format!("py row key {name} {bits}"), bits / 8);
        for sector in SECTORS {
            let data = prng(&format!("py row data {name} {sector}"), 9000);
            let mut nonce = [0u8; 12];
            nonce[..8].copy_from_slice(&sector.to_le_bytes());
            let theirs = python(op, &key, &nonce, &[], &data);
            let mut cat = row(name, bits, &key);
            let mut ours = data.clone();
            cat.encrypt(&mut ours, sector).unwrap();
            assert_same(&ours, &theirs[..data.len()], name);
            cat.decrypt(&mut ours, sector).unwrap();
            assert_same(&ours, &data, &format!("{name}: decryption"));
        }
    }
}

/// XTS-AES a second time, against OpenSSL's library through Python, for data
/// units with and without ciphertext stealing.
#[test]
fn aes_xts_vs_python_cryptography() {
    if !python_cryptography("aes_xts_vs_python_cryptography") {
        return;
    }
    for bits in [256, 512] {
        let reference = |dir: Dir, key: &[u8], sector: u64, data: &[u8]| {
            let op = if dir == Dir::Encrypt {
                "aes-xts"
            } else {
                "aes-xts-dec"
            };
            python(op, key, &plain64_iv(sector, 16), &[], data)
        };
        for len in [16usize, 4096, 4100, 12_295] {
            for sector in SECTORS {
                compare("aes-xts-plain64", bits, len, sector, &reference);
            }
        }
    }
}

/// RC4 with a 256-bit key (OpenSSL's `enc -rc4` takes 128 bits only).
#[test]
fn rc4_256_vs_python_cryptography() {
    if !python_cryptography("rc4_256_vs_python_cryptography") {
        return;
    }
    let key = prng("rc4-256 key", 32);
    let data = prng("rc4-256 data", 10_000);
    let theirs = python("rc4", &key, &[], &[], &data);
    let mut ours = data.clone();
    let mut op = row("rc4", 256, &key);
    let (a, b) = ours.split_at_mut(4321);
    op.encrypt(a, 0).unwrap();
    op.encrypt(b, 0).unwrap();
    assert_same(&ours, &theirs, "rc4 256b");
}
