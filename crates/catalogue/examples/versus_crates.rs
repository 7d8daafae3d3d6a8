//! Our catalogue ops against the RustCrypto compositions they replace.
//!
//! The catalogue has its own block-cipher modes (`modes.rs`), its own Twofish
//! and TEA/XTEA; this example shows, row by row, that each is at least as
//! fast as what it replaced: the `cbc`, `ctr`, `ecb` and `xts-mode` crates over
//! the RustCrypto cipher crates (`aes`, `serpent`, `twofish`, `xtea`, ...).
//! TEA has no RustCrypto crate and is not compared.
//!
//! Both sides are measured like `clustercrypt bench` (and `cryptsetup
//! benchmark`): a 1 MiB buffer processed in 64 KiB requests, request i with the
//! IV of sector i (plain64), whole passes repeated for at least `--time`
//! seconds of encryption, then of decryption; MiB = 2^20 bytes; one thread.
//! Ours and the crate's alternate direction by direction, and with `--runs N`
//! each figure is the best of N. Before timing, each row checks that both
//! sides produce the same ciphertext and decrypt it back.
//!
//! ```text
//! cargo run --release -p clustercrypt-catalogue --example versus_crates -- --time 1
//! cargo run --release -p clustercrypt-catalogue --example versus_crates -- --rows aes-xts:512,xtea-ecb:128
//! cargo run --release -p clustercrypt-catalogue --example versus_crates -- --all --runs 3
//! ```
//!
//! Output, after `#` comment lines, one line per row:
//! `ROW OURS_ENC OURS_DEC CRATE_ENC CRATE_DEC RATIO REFERENCE OUR_IMPL`, with
//! ROW as `label:key_bits`, speeds in MiB/s, and RATIO ours/crate in the worse
//! of the two directions (at least 1.0 means ours is as fast or faster).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use cipher::array::{Array, ArraySize};
use cipher::common::{InnerInit, InnerIvInit};
use cipher::consts::{U8, U16};
use cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit,
    StreamCipher,
};
use clustercrypt_catalogue::{Algorithm, CipherOp, CipherSpec, Mode, build, catalogue};
use xts_mode::{Xts128, get_tweak_default};

const BUFFER: usize = 1 << 20;
const REQUEST: usize = 64 << 10;
const MIB: f64 = 1_048_576.0;

/// The rows measured without `--rows` or `--all`: our modes over AES, and our
/// Twofish, Serpent and XTEA rows (Twofish-192 and XTEA in every mode, since
/// neither OpenSSL nor libgcrypt has them).
const DEFAULT_ROWS: &[&str] = &[
    "aes-ecb:128",
    "aes-ecb:256",
    "aes-cbc:128",
    "aes-cbc:256",
    "aes-ctr:128",
    "aes-ctr:256",
    "aes-xts:256",
    "aes-xts:512",
    "twofish-ecb:128",
    "twofish-ecb:192",
    "twofish-ecb:256",
    "twofish-cbc:128",
    "twofish-cbc:192",
    "twofish-cbc:256",
    "twofish-ctr:192",
    "twofish-xts:384",
    "serpent-ecb:128",
    "serpent-ecb:256",
    "serpent-cbc:128",
    "serpent-cbc:256",
    "serpent-ctr:128",
    "serpent-ctr:256",
    "serpent-xts:256",
    "serpent-xts:512",
    "xtea-ecb:128",
    "xtea-cbc:128",
    "xtea-ctr:128",
];

/// One side of a comparison: processes one request in place.
trait Side {
    fn run(&mut self, data: &mut [u8], sector: u64, encrypt: bool);
}

struct Ours(Box<dyn CipherOp>);

impl Side for Ours {
    fn run(&mut self, data: &mut [u8], sector: u64, encrypt: bool) {
        let r = if encrypt {
            self.0.encrypt(data, sector)
        } else {
            self.0.decrypt(data, sector)
        };
        r.expect("our op rejected a benchmark request");
    }
}

/// The plain64 IV of `sector` for a cipher with `BS`-byte blocks.
fn plain64<BS: ArraySize>(sector: u64) -> Array<u8, BS> {
    let mut iv = Array::<u8, BS>::default();
    iv[..8].copy_from_slice(&sector.to_le_bytes());
    iv
}

fn blocks<BS: ArraySize>(data: &mut [u8]) -> &mut [Array<u8, BS>] {
    let (blocks, rest) = Array::<u8, BS>::slice_as_chunks_mut(data);
    assert!(rest.is_empty(), "requests are whole blocks");
    blocks
}

/// ECB, CBC or CTR from the `ecb`, `cbc` and `ctr` crates over a 128-bit block
/// cipher, or XTS from `xts-mode`. The keyed cipher is borrowed by a new mode
/// object per request (no re-keying), the crates' fastest use.
enum Crate16<C> {
    Mode(C, Mode),
    Xts(Xts128<C>),
}

impl<C> Side for Crate16<C>
where
    C: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    fn run(&mut self, data: &mut [u8], sector: u64, encrypt: bool) {
        match self {
            Crate16::Mode(c, Mode::Ecb) => {
                if encrypt {
                    ecb::Encryptor::<&C>::inner_init(c).encrypt_blocks(blocks(data));
                } else {
                    ecb::Decryptor::<&C>::inner_init(c).decrypt_blocks(blocks(data));
                }
            }
            Crate16::Mode(c, Mode::Cbc) => {
                let iv = plain64::<U16>(sector);
                if encrypt {
                    cbc::Encryptor::<&C>::inner_iv_init(c, &iv).encrypt_blocks(blocks(data));
                } else {
                    cbc::Decryptor::<&C>::inner_iv_init(c, &iv).decrypt_blocks(blocks(data));
                }
            }
            Crate16::Mode(c, Mode::Ctr) => {
                let iv = plain64::<U16>(sector);
                ctr::Ctr128BE::<&C>::from_core(ctr::CtrCore::inner_iv_init(c, &iv))
                    .apply_keystream(data);
            }
            Crate16::Mode(_, m) => unreachable!("no crate composition for {}", m.name()),
            Crate16::Xts(x) => {
                let tweak = get_tweak_default(u128::from(sector));
                if encrypt {
                    x.encrypt_sector(data, tweak);
                } else {
                    x.decrypt_sector(data, tweak);
                }
            }
        }
    }
}

/// ECB, CBC or CTR (64-bit big-endian counter: the whole block) over a 64-bit
/// block cipher.
struct Crate8<C>(C, Mode);

impl<C> Side for Crate8<C>
where
    C: BlockCipherEncrypt<BlockSize = U8> + BlockCipherDecrypt,
{
    fn run(&mut self, data: &mut [u8], sector: u64, encrypt: bool) {
        let Crate8(c, mode) = self;
        let c = &*c;
        match mode {
            Mode::Ecb if encrypt => {
                ecb::Encryptor::<&C>::inner_init(c).encrypt_blocks(blocks(data));
            }
            Mode::Ecb => ecb::Decryptor::<&C>::inner_init(c).decrypt_blocks(blocks(data)),
            Mode::Cbc if encrypt => cbc::Encryptor::<&C>::inner_iv_init(c, &plain64(sector))
                .encrypt_blocks(blocks(data)),
            Mode::Cbc => cbc::Decryptor::<&C>::inner_iv_init(c, &plain64(sector))
                .decrypt_blocks(blocks(data)),
            Mode::Ctr => {
                ctr::Ctr64BE::<&C>::from_core(ctr::CtrCore::inner_iv_init(c, &plain64(sector)))
                    .apply_keystream(data);
            }
            m => unreachable!("no crate composition for {}", m.name()),
        }
    }
}

fn crate16<C>(spec: &CipherSpec, key: &[u8]) -> Box<dyn Side>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + 'static,
{
    if spec.mode == Mode::Xts {
        let (k1, k2) = key.split_at(key.len() / 2);
        let data = C::new_from_slice(k1).expect("key length");
        let tweak = C::new_from_slice(k2).expect("key length");
        Box::new(Crate16::Xts(Xts128::new(data, tweak)))
    } else {
        let c = C::new_from_slice(key).expect("key length");
        Box::new(Crate16::Mode(c, spec.mode))
    }
}

fn crate8<C>(spec: &CipherSpec, key: &[u8]) -> Box<dyn Side>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U8> + BlockCipherDecrypt + 'static,
{
    Box::new(Crate8(
        C::new_from_slice(key).expect("key length"),
        spec.mode,
    ))
}

/// The RustCrypto composition for a row and its name, or `None` (TEA, stream
/// ciphers and AEADs).
fn reference(spec: &CipherSpec, key: &[u8]) -> Option<(Box<dyn Side>, String)> {
    let mode_crate = match spec.mode {
        Mode::Ecb => "ecb",
        Mode::Cbc => "cbc",
        Mode::Ctr => "ctr",
        Mode::Xts => "xts-mode",
        _ => return None,
    };
    let one_key = spec.cipher_key_bits();
    let (side, cipher_crate) = match (spec.algorithm, one_key) {
        (Algorithm::Aes, 128) => (crate16::<aes::Aes128>(spec, key), "aes"),
        (Algorithm::Aes, 192) => (crate16::<aes::Aes192>(spec, key), "aes"),
        (Algorithm::Aes, 256) => (crate16::<aes::Aes256>(spec, key), "aes"),
        (Algorithm::Serpent, _) => (crate16::<serpent::Serpent>(spec, key), "serpent"),
        (Algorithm::Twofish, _) => (crate16::<twofish::Twofish>(spec, key), "twofish"),
        (Algorithm::Camellia, 128) => (crate16::<camellia::Camellia128>(spec, key), "camellia"),
        (Algorithm::Camellia, 192) => (crate16::<camellia::Camellia192>(spec, key), "camellia"),
        (Algorithm::Camellia, 256) => (crate16::<camellia::Camellia256>(spec, key), "camellia"),
        (Algorithm::Blowfish, _) => (crate8::<blowfish::Blowfish>(spec, key), "blowfish"),
        (Algorithm::Des, _) => (crate8::<des::Des>(spec, key), "des"),
        (Algorithm::TripleDes, _) => (crate8::<des::TdesEde3>(spec, key), "des"),
        (Algorithm::Rc2, _) => (crate8::<rc2::Rc2>(spec, key), "rc2"),
        (Algorithm::Xtea, _) => (crate8::<xtea::Xtea>(spec, key), "xtea"),
        _ => return None,
    };
    Some((side, format!("{mode_crate}+{cipher_crate}")))
}

fn row_name(spec: &CipherSpec) -> String {
    format!("{}:{}", spec.label(), spec.key_bits)
}

/// Every row this example can compare, in catalogue order.
fn supported() -> Vec<CipherSpec> {
    let key = [0u8; 64];
    catalogue()
        .into_iter()
        .filter(|s| reference(s, &key[..s.key_len()]).is_some())
        .collect()
}

fn pass(side: &mut dyn Side, buf: &mut [u8], encrypt: bool) {
    for (i, chunk) in buf.chunks_mut(REQUEST).enumerate() {
        side.run(chunk, i as u64, encrypt);
    }
}

/// Repeats passes until `min_time` (at least one); returns MiB/s.
fn measure(side: &mut dyn Side, buf: &mut [u8], min_time: Duration, encrypt: bool) -> f64 {
    let start = Instant::now();
    let mut bytes = 0u64;
    loop {
        pass(side, buf, encrypt);
        bytes += buf.len() as u64;
        let elapsed = start.elapsed();
        if elapsed >= min_time {
            return bytes as f64 / MIB / elapsed.as_secs_f64();
        }
    }
}

/// A fixed key: distinct XTS halves, no weak DES keys.
fn bench_key(spec: &CipherSpec) -> Vec<u8> {
    (0..spec.key_len()).map(|i| (i * 73 + 41) as u8).collect()
}

/// Both sides must encrypt a buffer to the same bytes and decrypt it back.
fn check_same(spec: &CipherSpec, ours: &mut dyn Side, theirs: &mut dyn Side) -> Result<(), String> {
    let plain: Vec<u8> = (0..BUFFER).map(|i| (i * 131 + 7) as u8).collect();
    let (mut a, mut b) = (plain.clone(), plain.clone());
    pass(ours, &mut a, true);
    pass(theirs, &mut b, true);
    if a != b {
        return Err(format!(
            "{}: ours and the crate's ciphertexts differ",
            row_name(spec)
        ));
    }
    if a == plain {
        return Err(format!(
            "{}: encryption left the data unchanged",
            row_name(spec)
        ));
    }
    pass(ours, &mut a, false);
    pass(theirs, &mut b, false);
    if a != plain || b != plain {
        return Err(format!(
            "{}: decryption did not give the data back",
            row_name(spec)
        ));
    }
    Ok(())
}

struct Options {
    min_time: Duration,
    runs: u32,
    rows: Vec<CipherSpec>,
    list: bool,
}

const USAGE: &str =
    "usage: versus_crates [--time SECONDS] [--runs N] [--all | --rows ROW,ROW... | ROW...] [--list]
  ROW is label:key_bits as clustercrypt counts them, e.g. aes-xts:512, twofish-cbc:256";

fn parse_row(text: &str) -> Result<CipherSpec, String> {
    let (label, bits) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("'{text}' is not label:key_bits"))?;
    let bits: usize = bits
        .parse()
        .map_err(|_| format!("'{text}': '{bits}' is not a number of bits"))?;
    supported()
        .into_iter()
        .find(|s| s.label() == label && s.key_bits == bits)
        .ok_or_else(|| format!("no crate composition for row '{text}' (see --list)"))
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        min_time: Duration::from_secs(1),
        runs: 1,
        rows: Vec::new(),
        list: false,
    };
    let mut all = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--time" | "-t" => {
                let v = value("--time")?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("--time '{v}' is not a positive number"))?;
                opts.min_time = Duration::from_secs_f64(secs);
            }
            "--runs" => {
                let v = value("--runs")?;
                opts.runs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--runs '{v}' is not a positive number"))?;
            }
            "--rows" => {
                for r in value("--rows")?.split(',').filter(|r| !r.is_empty()) {
                    opts.rows.push(parse_row(r.trim())?);
                }
            }
            "--all" => all = true,
            "--list" => opts.list = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other if !other.starts_with('-') => opts.rows.push(parse_row(other)?),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if all {
        opts.rows = supported();
    } else if opts.rows.is_empty() {
        for r in DEFAULT_ROWS {
            opts.rows.push(parse_row(r)?);
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("versus_crates: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if opts.list {
        for s in supported() {
            let key = bench_key(&s);
            let (_, name) = reference(&s, &key).expect("supported");
            println!("{} {name}", row_name(&s));
        }
        return ExitCode::SUCCESS;
    }
    println!(
        "# versus_crates: buffer {BUFFER}, request {REQUEST}, min time {:.3} s, best of {} run(s), one thread",
        opts.min_time.as_secs_f64(),
        opts.runs
    );
    println!("# row ours_enc ours_dec crate_enc crate_dec ratio reference our_impl");
    let mut failed = false;
    for spec in &opts.rows {
        let key = bench_key(spec);
        let op = match build(spec, &key) {
            Ok(op) => op,
            Err(e) => {
                eprintln!("versus_crates: {}: {e}", row_name(spec));
                failed = true;
                continue;
            }
        };
        let implementation = op.backend();
        let mut ours = Ours(op);
        let (mut theirs, name) = reference(spec, &key).expect("parse_row keeps supported rows");
        if let Err(e) = check_same(spec, &mut ours, theirs.as_mut()) {
            eprintln!("versus_crates: {e}");
            println!("# {} MISMATCH", row_name(spec));
            failed = true;
            continue;
        }
        let mut ours_buf: Vec<u8> = (0..BUFFER).map(|i| (i * 131 + 7) as u8).collect();
        let mut their_buf = ours_buf.clone();
        // Best of `runs`, ours and theirs alternating so that a busy moment of
        // the machine does not fall on one side only.
        // [direction][0 = ours, 1 = crate], direction 0 = encryption.
        let mut best = [[0f64; 2]; 2];
        for _ in 0..opts.runs {
            for (d, encrypt) in [(0, true), (1, false)] {
                let o = measure(&mut ours, &mut ours_buf, opts.min_time, encrypt);
                let t = measure(theirs.as_mut(), &mut their_buf, opts.min_time, encrypt);
                best[d][0] = best[d][0].max(o);
                best[d][1] = best[d][1].max(t);
            }
        }
        let [[oe, ce], [od, cd]] = best;
        let ratio = (oe / ce).min(od / cd);
        println!(
            "{} {oe:.2} {od:.2} {ce:.2} {cd:.2} {ratio:.3} {name} {implementation}",
            row_name(spec)
        );
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
