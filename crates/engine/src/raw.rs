//! The unauthenticated legacy modes the studies measured: any catalogue cipher
//! in ECB, CBC or CTR (or a stream cipher) with an explicit key and IV, PKCS#7
//! padding or none, byte for byte what `openssl enc -K .. -iv .. -nosalt`
//! produces where OpenSSL has the cipher. TEA and XTEA take `repeats`, the TEA
//! study's "rounds" knob.
//!
//! ECB, CTR, CBC decryption and ChaCha20 run chunks in parallel (each chunk's
//! IV or counter follows from its position, or for CBC decryption from the
//! previous chunk's last ciphertext block); CBC encryption and RC4 are
//! sequential by nature and run one chunk after another.

use std::io::{Read, Write};
use std::sync::Mutex;

use cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};

use clustercrypt_catalogue::{
    Algorithm, CipherModes, CipherSpec, Kind, Mode, block_modes, ciphers,
};
use zeroize::Zeroizing;

use crate::error::EngineError;
use crate::pipeline::{self, ChunkTransform, Job, Totals};

/// Padding of the last block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// PKCS#7 (RFC 5652 §6.3), as `openssl enc` pads by default.
    Pkcs7,
    /// None: the input must be a whole number of blocks (`openssl enc -nopad`).
    None,
}

/// A raw-mode job description.
pub struct RawParams {
    /// Cipher and mode (ECB, CBC, CTR or a stream cipher).
    pub spec: CipherSpec,
    /// The key (`spec.key_len()` bytes).
    pub key: Zeroizing<Vec<u8>>,
    /// The IV: one block for CBC and CTR, 16 bytes for ChaCha20 (OpenSSL's
    /// 32-bit little-endian block counter then 96-bit nonce), empty otherwise.
    pub iv: Vec<u8>,
    /// Padding (block modes ECB and CBC only).
    pub padding: Padding,
    /// Times the block function is applied per block (TEA and XTEA).
    pub repeats: u32,
    /// Bytes per chunk (rounded down to whole blocks).
    pub chunk_size: usize,
    /// Worker threads.
    pub threads: usize,
}

/// The padding `openssl enc` uses when none is asked for: PKCS#7 for the
/// block modes that need whole blocks (ECB, CBC), none for CTR and stream ciphers.
pub fn default_padding(mode: Mode) -> Padding {
    match mode {
        Mode::Ecb | Mode::Cbc => Padding::Pkcs7,
        _ => Padding::None,
    }
}

/// Whether the raw mode runs chunks in parallel or one after another.
pub fn is_sequential(spec: &CipherSpec, encrypt: bool) -> bool {
    (spec.mode == Mode::Cbc && encrypt) || spec.algorithm == Algorithm::Rc4
}

/// The IV length `spec` needs in raw mode.
pub fn iv_len(spec: &CipherSpec) -> usize {
    match (spec.mode, spec.algorithm.kind()) {
        (Mode::Cbc | Mode::Ctr, Kind::Block(bs)) => bs,
        (Mode::Stream, _) if spec.algorithm == Algorithm::ChaCha20 => 16,
        _ => 0,
    }
}

/// Checks the parameters before any work starts.
pub fn check(params: &RawParams) -> Result<(), EngineError> {
    let spec = &params.spec;
    if !matches!(spec.mode, Mode::Ecb | Mode::Cbc | Mode::Ctr | Mode::Stream) {
        return Err(EngineError::Input(format!(
            "raw mode offers ECB, CBC, CTR and the stream ciphers, not {}",
            spec.label()
        )));
    }
    if params.key.len() != spec.key_len() {
        return Err(EngineError::Input(format!(
            "the key is {} bytes; {} with a {}-bit key needs {}",
            params.key.len(),
            spec.label(),
            spec.key_bits,
            spec.key_len()
        )));
    }
    let want = iv_len(spec);
    if params.iv.len() != want {
        return Err(EngineError::Input(if want == 0 {
            format!("{} takes no IV", spec.label())
        } else {
            format!(
                "the IV is {} bytes; {} needs {want}",
                params.iv.len(),
                spec.label()
            )
        }));
    }
    if params.padding == Padding::Pkcs7 && !matches!(spec.mode, Mode::Ecb | Mode::Cbc) {
        return Err(EngineError::Input(format!(
            "{} is a stream mode and takes no padding (use --padding none)",
            spec.label()
        )));
    }
    if params.repeats > 1 && !matches!(spec.algorithm, Algorithm::Tea | Algorithm::Xtea) {
        return Err(EngineError::Input(format!(
            "--rounds repeats the cipher for TEA and XTEA only, not {}",
            spec.algorithm.name()
        )));
    }
    if params.repeats == 0 {
        return Err(EngineError::Input("--rounds must be at least 1".into()));
    }
    Ok(())
}

fn unit(spec: &CipherSpec) -> usize {
    match spec.algorithm.kind() {
        Kind::Block(bs) => bs,
        Kind::Stream => 64,
    }
}

struct RawTransform {
    spec: CipherSpec,
    key: Zeroizing<Vec<u8>>,
    iv: Vec<u8>,
    padding: Padding,
    repeats: u32,
    chunk: usize,
    encrypt: bool,
    /// Keyed block ciphers for the workers to borrow.
    pool: Mutex<Vec<Box<dyn CipherModes>>>,
    /// CBC encryption's running IV, or RC4's running state.
    chain: Mutex<Chain>,
}

enum Chain {
    None,
    Cbc(Vec<u8>),
    Rc4(Box<ciphers::Rc4>),
}

fn pad(data: &mut Vec<u8>, bs: usize) {
    let n = bs - data.len() % bs;
    data.resize(data.len() + n, n as u8);
}

fn unpad(data: &mut Vec<u8>, bs: usize) -> Result<(), EngineError> {
    let n = *data.last().ok_or(EngineError::Padding)? as usize;
    if n == 0
        || n > bs
        || n > data.len()
        || !data[data.len() - n..].iter().all(|&b| b as usize == n)
    {
        return Err(EngineError::Padding);
    }
    data.truncate(data.len() - n);
    Ok(())
}

/// Adds `blocks` to a big-endian counter block.
fn counter_add(iv: &[u8], blocks: u64) -> Vec<u8> {
    match iv.len() {
        16 => {
            let c = u128::from_be_bytes(iv.try_into().expect("16 bytes"));
            c.wrapping_add(u128::from(blocks)).to_be_bytes().to_vec()
        }
        8 => {
            let c = u64::from_be_bytes(iv.try_into().expect("8 bytes"));
            c.wrapping_add(blocks).to_be_bytes().to_vec()
        }
        _ => iv.to_vec(),
    }
}

impl RawTransform {
    fn with_modes<T>(&self, f: impl FnOnce(&mut dyn CipherModes) -> T) -> Result<T, EngineError> {
        let taken = self.pool.lock().expect("pool lock").pop();
        let mut modes = match taken {
            Some(m) => m,
            None => block_modes(self.spec.algorithm, &self.key, self.repeats)
                .map_err(|e| EngineError::Input(e.to_string()))?,
        };
        let out = f(modes.as_mut());
        self.pool.lock().expect("pool lock").push(modes);
        Ok(out)
    }

    fn whole_blocks(&self, job: &Job, bs: usize) -> Result<(), EngineError> {
        if job.data.len().is_multiple_of(bs) {
            Ok(())
        } else if self.encrypt {
            Err(EngineError::Input(format!(
                "the input is not a whole number of {bs}-byte blocks; use --padding pkcs7"
            )))
        } else {
            Err(EngineError::Input(format!(
                "the ciphertext is not a whole number of {bs}-byte blocks (truncated?)"
            )))
        }
    }
}

impl ChunkTransform for RawTransform {
    fn input_len(&self) -> usize {
        self.chunk
    }
    fn growth(&self) -> usize {
        unit(&self.spec)
    }
    fn tail_len(&self) -> usize {
        if self.spec.mode == Mode::Cbc && !self.encrypt {
            unit(&self.spec)
        } else {
            0
        }
    }
    fn sequential(&self) -> bool {
        is_sequential(&self.spec, self.encrypt)
    }

    fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
        let bs = unit(&self.spec);
        let pkcs7 = self.padding == Padding::Pkcs7;
        match self.spec.mode {
            Mode::Stream if self.spec.algorithm == Algorithm::Rc4 => {
                let mut chain = self.chain.lock().expect("chain lock");
                if let Chain::Rc4(rc4) = &mut *chain {
                    rc4.apply_keystream(&mut job.data);
                }
            }
            Mode::Stream => {
                let key: [u8; 32] = self.key[..].try_into().expect("256-bit key");
                chacha20_at(&key, &self.iv, job.index * self.chunk as u64, &mut job.data)?;
            }
            Mode::Ecb => {
                if self.encrypt && job.last && pkcs7 {
                    pad(&mut job.data, bs);
                }
                self.whole_blocks(job, bs)?;
                if self.encrypt {
                    self.with_modes(|m| m.ecb_encrypt(&mut job.data))?;
                } else {
                    self.with_modes(|m| m.ecb_decrypt(&mut job.data))?;
                    if job.last && pkcs7 {
                        unpad(&mut job.data, bs)?;
                    }
                }
            }
            Mode::Cbc if self.encrypt => {
                if job.last && pkcs7 {
                    pad(&mut job.data, bs);
                }
                self.whole_blocks(job, bs)?;
                let mut chain = self.chain.lock().expect("chain lock");
                if let Chain::Cbc(iv) = &mut *chain {
                    self.with_modes(|m| m.cbc_encrypt(iv, &mut job.data))?;
                }
            }
            Mode::Cbc => {
                self.whole_blocks(job, bs)?;
                let mut iv = if job.index == 0 {
                    self.iv.clone()
                } else {
                    job.prev_tail.clone()
                };
                self.with_modes(|m| m.cbc_decrypt(&mut iv, &mut job.data))?;
                if job.last && pkcs7 {
                    unpad(&mut job.data, bs)?;
                }
            }
            _ => {
                let mut counter = counter_add(&self.iv, job.index * (self.chunk / bs) as u64);
                self.with_modes(|m| m.ctr_apply(&mut counter, &mut job.data))?;
            }
        }
        Ok(())
    }
}

/// ChaCha20 key stream from byte `pos` of the stream OpenSSL's `-chacha20`
/// defines. Its 16-byte IV fills state words 12-15, a 32-bit block counter then
/// a 96-bit nonce, and the counter carries into word 13: words 12-13 are in
/// effect a 64-bit counter and words 14-15 a 64-bit nonce, which is the original
/// (Bernstein 2008) ChaCha20 layout that `ChaCha20Legacy` implements.
fn chacha20_at(key: &[u8; 32], iv: &[u8], pos: u64, data: &mut [u8]) -> Result<(), EngineError> {
    let counter = u64::from_le_bytes(iv[..8].try_into().expect("8 bytes"));
    let nonce: [u8; 8] = iv[8..16].try_into().expect("8 bytes");
    let mut c = chacha20::ChaCha20Legacy::new(key.into(), &nonce.into());
    let overflow = || EngineError::Input("ChaCha20 block counter overflow".into());
    c.try_seek(u128::from(counter) * 64 + u128::from(pos))
        .map_err(|_| overflow())?;
    c.try_apply_keystream(data).map_err(|_| overflow())
}

fn transform(params: &RawParams, encrypt: bool) -> Result<RawTransform, EngineError> {
    check(params)?;
    let u = unit(&params.spec);
    let chunk = (params.chunk_size / u).max(1) * u;
    let chain = match params.spec.mode {
        Mode::Cbc if encrypt => Chain::Cbc(params.iv.clone()),
        Mode::Stream if params.spec.algorithm == Algorithm::Rc4 => {
            Chain::Rc4(Box::new(ciphers::Rc4::new(&params.key).map_err(|_| {
                EngineError::Input("RC4 takes keys of 5 to 256 bytes".into())
            })?))
        }
        _ => Chain::None,
    };
    Ok(RawTransform {
        spec: params.spec,
        key: params.key.clone(),
        iv: params.iv.clone(),
        padding: params.padding,
        repeats: params.repeats,
        chunk,
        encrypt,
        pool: Mutex::new(Vec::new()),
        chain: Mutex::new(chain),
    })
}

/// The raw transform for `params`, for running through [`pipeline::run`] or a cluster.
pub fn transform_for(
    params: &RawParams,
    encrypt: bool,
) -> Result<Box<dyn ChunkTransform + Send + Sync>, EngineError> {
    Ok(Box::new(transform(params, encrypt)?))
}

/// Serialises `params` for another rank of a cluster. Holds the key: send it
/// only over a network you trust (MPI does not encrypt).
pub fn describe(params: &RawParams, encrypt: bool) -> Zeroizing<Vec<u8>> {
    let name = params.spec.full_name();
    let mut out = Zeroizing::new(vec![
        3u8,
        u8::from(encrypt),
        u8::from(params.padding == Padding::Pkcs7),
    ]);
    out.extend_from_slice(&params.repeats.to_le_bytes());
    out.extend_from_slice(&(params.chunk_size as u64).to_le_bytes());
    out.extend_from_slice(&(params.spec.key_bits as u32).to_le_bytes());
    for field in [name.as_bytes(), &params.key[..], &params.iv[..]] {
        out.extend_from_slice(&(field.len() as u32).to_le_bytes());
        out.extend_from_slice(field);
    }
    out
}

/// Rebuilds a raw transform from [`describe`] bytes; `threads` is this rank's.
pub fn from_description(
    bytes: &[u8],
    threads: usize,
) -> Result<Box<dyn ChunkTransform + Send + Sync>, EngineError> {
    let bad = || EngineError::Input("malformed raw transform description".into());
    if bytes.len() < 19 || bytes[0] != 3 {
        return Err(bad());
    }
    let encrypt = bytes[1] == 1;
    let padding = if bytes[2] == 1 {
        Padding::Pkcs7
    } else {
        Padding::None
    };
    let repeats = u32::from_le_bytes(bytes[3..7].try_into().map_err(|_| bad())?);
    let chunk_size = u64::from_le_bytes(bytes[7..15].try_into().map_err(|_| bad())?) as usize;
    let key_bits = u32::from_le_bytes(bytes[15..19].try_into().map_err(|_| bad())?) as usize;
    let mut rest = &bytes[19..];
    let mut field = || -> Result<Vec<u8>, EngineError> {
        if rest.len() < 4 {
            return Err(bad());
        }
        let n = u32::from_le_bytes(rest[..4].try_into().map_err(|_| bad())?) as usize;
        if rest.len() < 4 + n {
            return Err(bad());
        }
        let v = rest[4..4 + n].to_vec();
        rest = &rest[4 + n..];
        Ok(v)
    };
    let name = String::from_utf8(field()?).map_err(|_| bad())?;
    let key = Zeroizing::new(field()?);
    let iv = field()?;
    let spec =
        CipherSpec::parse(&name, Some(key_bits)).map_err(|e| EngineError::Input(e.to_string()))?;
    let params = RawParams {
        spec,
        key,
        iv,
        padding,
        repeats,
        chunk_size,
        threads,
    };
    transform_for(&params, encrypt)
}

/// Encrypts `input` in raw mode.
pub fn raw_encrypt(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    params: &RawParams,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let t = transform(params, true)?;
    pipeline::run(input, output, &t, params.threads, progress)
}

/// Decrypts `input` in raw mode.
pub fn raw_decrypt(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    params: &RawParams,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let t = transform(params, false)?;
    pipeline::run(input, output, &t, params.threads, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(spec: &str, bits: usize, padding: Padding, threads: usize) -> RawParams {
        let spec = CipherSpec::parse(spec, Some(bits)).unwrap();
        RawParams {
            key: Zeroizing::new((0..spec.key_len() as u8).collect()),
            iv: (100..100 + iv_len(&spec) as u8).collect(),
            spec,
            padding,
            repeats: 1,
            chunk_size: 64,
            threads,
        }
    }

    fn run(p: &RawParams, data: &[u8], encrypt: bool) -> Result<Vec<u8>, EngineError> {
        let mut out = Vec::new();
        if encrypt {
            raw_encrypt(&mut &data[..], &mut out, p, &|_| {})?;
        } else {
            raw_decrypt(&mut &data[..], &mut out, p, &|_| {})?;
        }
        Ok(out)
    }

    #[test]
    fn chunked_parallel_equals_one_chunk() {
        for (spec, bits, padding) in [
            ("aes-ecb", 128, Padding::Pkcs7),
            ("aes-cbc", 256, Padding::Pkcs7),
            ("aes-ctr", 128, Padding::None),
            ("des-cbc", 64, Padding::Pkcs7),
            ("tea-ctr", 128, Padding::None),
            ("chacha20", 256, Padding::None),
            ("rc4", 128, Padding::None),
        ] {
            for len in [0usize, 1, 15, 16, 17, 63, 64, 65, 1000] {
                let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
                let mut one = params(spec, bits, padding, 1);
                one.chunk_size = 1 << 20;
                let many = params(spec, bits, padding, 3);
                let a = run(&one, &data, true).unwrap();
                let b = run(&many, &data, true).unwrap();
                assert_eq!(a, b, "{spec} {len}");
                assert_eq!(run(&many, &a, false).unwrap(), data, "{spec} {len}");
            }
        }
    }

    #[test]
    fn descriptions_round_trip() {
        let p = params("tea-ctr", 128, Padding::None, 2);
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let direct = run(&p, &data, true).unwrap();
        let t = from_description(&describe(&p, true), 2).unwrap();
        let mut out = Vec::new();
        pipeline::run(&mut &data[..], &mut out, &*t, 2, &|_| {}).unwrap();
        assert_eq!(out, direct);
        assert!(from_description(&[3, 1], 1).is_err());
    }

    #[test]
    fn padding_and_sizes() {
        let p = params("aes-cbc", 128, Padding::Pkcs7, 2);
        assert_eq!(run(&p, b"", true).unwrap().len(), 16);
        assert_eq!(run(&p, &[0; 16], true).unwrap().len(), 32);
        let nopad = params("aes-ecb", 128, Padding::None, 2);
        assert!(run(&nopad, &[0; 17], true).is_err());
        assert!(run(&p, &[0; 17], false).is_err());
        let mut bad = run(&p, b"hello", true).unwrap();
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        assert!(matches!(run(&p, &bad, false), Err(EngineError::Padding)));
        let mut wrong = params("aes-ctr", 128, Padding::Pkcs7, 1);
        assert!(check(&wrong).is_err());
        wrong.padding = Padding::None;
        wrong.iv.pop();
        assert!(check(&wrong).is_err());
        let mut rounds = params("aes-ctr", 128, Padding::None, 1);
        rounds.repeats = 3;
        assert!(check(&rounds).is_err());
    }

    #[test]
    fn tea_rounds_apply_the_cipher_again() {
        let mut p1 = params("tea-ecb", 128, Padding::None, 2);
        let mut p3 = params("tea-ecb", 128, Padding::None, 2);
        p3.repeats = 3;
        let data = [9u8; 64];
        let once = run(&p1, &data, true).unwrap();
        let twice = run(&p1, &once, true).unwrap();
        let thrice = run(&p1, &twice, true).unwrap();
        assert_eq!(run(&p3, &data, true).unwrap(), thrice);
        p1.repeats = 1;
        assert_eq!(run(&p3, &thrice, false).unwrap(), data);
    }
}
