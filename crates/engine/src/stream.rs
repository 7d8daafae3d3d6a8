//! Encrypting and decrypting streams in the clustercrypt format.

use std::io::{Read, Write};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::EngineError;
use zeroize::Zeroizing;

use crate::format::{
    DEFAULT_CHUNK_SIZE, HEADER_LEN, HEADER_MAC_LEN, HEADER_MAC_OFFSET as HEADER_MAC_LEN_OFFSET,
    Header, Kdf, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE, NONCE_PREFIX_LEN, SALT_LEN, Suite,
};
use crate::keys::{FileKeys, KeySource, MasterKey, master_for_header};
use crate::pipeline::{self, ChunkTransform, Job, Totals};
use crate::suite::ChunkCipher;

/// The random values of a new file.
#[derive(Clone, PartialEq, Eq)]
pub struct Randomness {
    salt: [u8; SALT_LEN],
    nonce_prefix: [u8; NONCE_PREFIX_LEN],
}

impl Randomness {
    /// Fresh values from the operating system.
    pub fn generate() -> Result<Randomness, EngineError> {
        let mut r = Randomness {
            salt: [0; SALT_LEN],
            nonce_prefix: [0; NONCE_PREFIX_LEN],
        };
        getrandom::fill(&mut r.salt)
            .and_then(|()| getrandom::fill(&mut r.nonce_prefix))
            .map_err(|e| EngineError::Input(format!("no randomness from the OS: {e}")))?;
        Ok(r)
    }

    /// **Tests only.** Fixed salt and nonce prefix, so that outputs can be
    /// compared byte for byte (e.g. across thread counts or against a cluster
    /// run). Reusing them with one key for different data breaks the security
    /// of the format; nothing in the command-line tool calls this.
    #[doc(hidden)]
    pub fn insecure_fixed_for_tests(
        salt: [u8; SALT_LEN],
        nonce_prefix: [u8; NONCE_PREFIX_LEN],
    ) -> Randomness {
        Randomness { salt, nonce_prefix }
    }
}

/// How to encrypt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncryptOptions {
    /// Cipher suite.
    pub suite: Suite,
    /// Plaintext bytes per chunk.
    pub chunk_size: usize,
    /// Worker threads.
    pub threads: usize,
    /// Argon2id cost when the key source is a passphrase.
    pub argon2: Kdf,
}

impl Default for EncryptOptions {
    fn default() -> Self {
        EncryptOptions {
            suite: Suite::default_for_cpu(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            argon2: crate::keys::DEFAULT_ARGON2,
        }
    }
}

fn header_mac(keys: &FileKeys, header: &Header) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as hmac::digest::KeyInit>::new_from_slice(&*keys.header)
        .expect("HMAC takes any key length");
    m.update(&header.body());
    m
}

/// Seals chunks: the transform behind encryption.
pub struct Sealer {
    header: Header,
    data_key: Zeroizing<Vec<u8>>,
    cipher: ChunkCipher,
    aad: [u8; HEADER_MAC_LEN],
}

/// Opens chunks: the transform behind decryption.
pub struct Opener {
    header: Header,
    data_key: Zeroizing<Vec<u8>>,
    cipher: ChunkCipher,
    aad: [u8; HEADER_MAC_LEN],
}

/// Serialises what a sealer or opener needs, for another rank of a cluster:
/// kind, the 100 header bytes, the data key. The data key is secret: send it
/// only over a network you trust (MPI does not encrypt).
fn describe(
    kind: u8,
    header: &Header,
    aad: &[u8; HEADER_MAC_LEN],
    data_key: &[u8],
) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(vec![kind]);
    out.extend_from_slice(&header.body());
    out.extend_from_slice(aad);
    out.extend_from_slice(data_key);
    out
}

/// Rebuilds a sealer (kind 1) or opener (kind 2) from [`Sealer::describe`] or
/// [`Opener::describe`] bytes, or a raw transform (kind 3, see
/// [`crate::raw::describe`]) running on `threads` threads.
pub fn transform_from_description(
    bytes: &[u8],
    threads: usize,
) -> Result<Box<dyn ChunkTransform + Send + Sync>, EngineError> {
    match bytes.first() {
        Some(3) => crate::raw::from_description(bytes, threads),
        _ => from_description(bytes),
    }
}

/// Rebuilds a sealer (kind 1) or opener (kind 2) from [`Sealer::describe`] or
/// [`Opener::describe`] bytes.
pub fn from_description(
    bytes: &[u8],
) -> Result<Box<dyn ChunkTransform + Send + Sync>, EngineError> {
    let bad = || EngineError::Input("malformed transform description".into());
    let (&kind, rest) = bytes.split_first().ok_or_else(bad)?;
    if rest.len() < HEADER_LEN {
        return Err(bad());
    }
    let (header, aad) = Header::parse(&rest[..HEADER_LEN])?;
    let data_key = Zeroizing::new(rest[HEADER_LEN..].to_vec());
    let want = if header.suite.tag_len() == 16 { 32 } else { 64 };
    if data_key.len() != want {
        return Err(bad());
    }
    let cipher = ChunkCipher::new(header.suite, &data_key);
    Ok(match kind {
        1 => Box::new(Sealer {
            header,
            data_key,
            cipher,
            aad,
        }),
        2 => Box::new(Opener {
            header,
            data_key,
            cipher,
            aad,
        }),
        _ => return Err(bad()),
    })
}

impl Sealer {
    /// What another rank needs to seal this file's chunks (secret: see [`from_description`]).
    pub fn describe(&self) -> Zeroizing<Vec<u8>> {
        describe(1, &self.header, &self.aad, &self.data_key)
    }
}

impl Opener {
    /// What another rank needs to open this file's chunks (secret: see [`from_description`]).
    pub fn describe(&self) -> Zeroizing<Vec<u8>> {
        describe(2, &self.header, &self.aad, &self.data_key)
    }
}

impl ChunkTransform for Sealer {
    fn input_len(&self) -> usize {
        self.header.chunk_size
    }
    fn growth(&self) -> usize {
        self.header.suite.tag_len()
    }
    fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
        let nonce = self.header.nonce(job.index, job.last)?;
        self.cipher.seal(&nonce, &self.aad, &mut job.data);
        Ok(())
    }
}

impl ChunkTransform for Opener {
    fn input_len(&self) -> usize {
        self.header.chunk_size + self.header.suite.tag_len()
    }
    fn transform(&self, job: &mut Job) -> Result<(), EngineError> {
        let tag = self.header.suite.tag_len();
        if job.last && job.data.len() < tag {
            return Err(EngineError::Truncated(
                if job.index == 0 && job.data.is_empty() {
                    "there are no chunks after the header".into()
                } else {
                    format!("chunk {} is shorter than its tag", job.index)
                },
            ));
        }
        // Keep the last chunk, to tell a truncated file from a modified one.
        let saved = job.last.then(|| job.data.clone());
        let nonce = self.header.nonce(job.index, job.last)?;
        if self.cipher.open(&nonce, &self.aad, &mut job.data).is_ok() {
            return Ok(());
        }
        if let Some(mut data) = saved {
            let nonce = self.header.nonce(job.index, false)?;
            if self.cipher.open(&nonce, &self.aad, &mut data).is_ok() {
                return Err(EngineError::Truncated(format!(
                    "chunk {} is not marked as the last one",
                    job.index
                )));
            }
        }
        Err(EngineError::Chunk(job.index))
    }
}

/// Encrypts `input` into `output` with fresh random salt and nonce prefix.
pub fn encrypt(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    key: &KeySource,
    options: &EncryptOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    encrypt_with(
        input,
        output,
        key,
        options,
        Randomness::generate()?,
        progress,
    )
}

/// Checks encryption options before any work starts.
pub fn check_options(options: &EncryptOptions) -> Result<(), EngineError> {
    if !(MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&options.chunk_size) {
        return Err(EngineError::Input(format!(
            "chunk size {} is out of range ({MIN_CHUNK_SIZE} bytes to {} MiB)",
            options.chunk_size,
            MAX_CHUNK_SIZE >> 20
        )));
    }
    Ok(())
}

/// [`encrypt`] with the given random values (see [`Randomness`]).
pub fn encrypt_with(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    key: &KeySource,
    options: &EncryptOptions,
    randomness: Randomness,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let (head, sealer) = prepare_encrypt(key, options, randomness)?;
    output
        .write_all(&head)
        .map_err(EngineError::io("cannot write the output"))?;
    let mut totals = pipeline::run(input, output, &sealer, options.threads, progress)?;
    totals.bytes_out += HEADER_LEN as u64;
    Ok(totals)
}

/// Everything before the chunks: the header bytes to write first, and the
/// sealer for the chunks (which [`pipeline::run`], or a cluster, then applies).
pub fn prepare_encrypt(
    key: &KeySource,
    options: &EncryptOptions,
    randomness: Randomness,
) -> Result<([u8; HEADER_LEN], Sealer), EngineError> {
    check_options(options)?;
    let Randomness { salt, nonce_prefix } = randomness;
    let kdf = match key {
        KeySource::Key(_) => Kdf::KeyFile,
        KeySource::Passphrase(_) => options.argon2,
    };
    let header = Header {
        suite: options.suite,
        kdf,
        chunk_size: options.chunk_size,
        salt,
        nonce_prefix,
    };
    let master = match key {
        KeySource::Key(k) => k.duplicate(),
        KeySource::Passphrase(p) => MasterKey::from_passphrase(p, &salt, kdf)?,
    };
    let keys = FileKeys::derive(&master, &header);
    let mac: [u8; HEADER_MAC_LEN] = header_mac(&keys, &header).finalize().into_bytes().into();
    let mut head = [0u8; HEADER_LEN];
    head[..HEADER_MAC_LEN_OFFSET].copy_from_slice(&header.body());
    head[HEADER_MAC_LEN_OFFSET..].copy_from_slice(&mac);
    let sealer = Sealer {
        cipher: ChunkCipher::new(header.suite, &keys.data),
        data_key: keys.data.clone(),
        header,
        aad: mac,
    };
    Ok((head, sealer))
}

/// Reads and authenticates a header; returns it with the opener for its chunks.
pub fn open_header(input: &mut dyn Read, key: &KeySource) -> Result<(Header, Opener), EngineError> {
    let mut head = [0u8; HEADER_LEN];
    let filled =
        pipeline::read_full(input, &mut head).map_err(EngineError::io("cannot read the input"))?;
    let (header, mac) = Header::parse(&head[..filled])?;
    let master = master_for_header(key, &header)?;
    let keys = FileKeys::derive(&master, &header);
    // `verify_slice` compares in constant time.
    header_mac(&keys, &header)
        .verify_slice(&mac)
        .map_err(|_| EngineError::WrongKey)?;
    let opener = Opener {
        cipher: ChunkCipher::new(header.suite, &keys.data),
        data_key: keys.data.clone(),
        header: header.clone(),
        aad: mac,
    };
    Ok((header, opener))
}

/// Decrypts `input` into `output`; nothing of a chunk is written before it verified.
pub fn decrypt(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    key: &KeySource,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let (_, opener) = open_header(input, key)?;
    pipeline::run(input, output, &opener, threads, progress)
}
