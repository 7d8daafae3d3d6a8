//! One interface over every row of the catalogue: a keyed cipher that encrypts
//! and decrypts requests (data units) in place, each with its own sector number
//! from which the IV or nonce is made, as dm-crypt and `cryptsetup benchmark` do.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use cipher::consts::U16;
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::aead::{Aead, AeadAlgorithm, NONCE_LEN, TAG_LEN};
use crate::chacha;
use crate::ciphers;
use crate::dispatch;
use crate::modes::{BlockModes, Kernel64, Xts, block64};
use crate::{Algorithm, CipherSpec, IvGen, Mode, SpecError};

/// Why an operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CipherError {
    /// The specification is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The key has the wrong length for the spec.
    #[error("key is {got} bytes, {spec} needs {expected}")]
    KeyLength {
        /// The spec's label.
        spec: String,
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// The data length does not fit the mode.
    #[error(
        "{len} bytes is not a whole number of {block}-byte blocks, which {mode} needs (use padding or CTR)"
    )]
    DataLength {
        /// Bytes given.
        len: usize,
        /// Block size.
        block: usize,
        /// The mode.
        mode: &'static str,
    },
    /// The request is longer than the cipher's counter covers.
    #[error("{len} bytes is more than {cipher} can encrypt in one request ({max} at most)")]
    TooLong {
        /// Bytes given.
        len: usize,
        /// The cipher.
        cipher: &'static str,
        /// The most bytes one request can take.
        max: u64,
    },
    /// ESSIV needs the cipher to take a 256-bit key.
    #[error("essiv:sha256 needs a cipher that takes a 256-bit key; {0} does not")]
    EssivKey(&'static str),
    /// `--rounds` was given for a cipher that does not take it.
    #[error("repeating the cipher (--rounds) is offered for TEA and XTEA only, not {0}")]
    Repeats(&'static str),
    /// A wide-block cipher got a sector (or a last piece) shorter than a block.
    #[error(
        "{mode} enciphers {sector}-byte sectors of at least 16 bytes; {len} bytes leaves a shorter piece"
    )]
    WideLength {
        /// Bytes given.
        len: usize,
        /// The sector size.
        sector: usize,
        /// The mode.
        mode: &'static str,
    },
    /// An AEAD tag did not verify.
    #[error("authentication failed")]
    Authentication,
}

/// A keyed cipher in a mode, processing one request at a time in place.
pub trait CipherOp: Send {
    /// The row this op implements.
    fn spec(&self) -> &CipherSpec;
    /// The implementation that runs, e.g. `vaes512`, `avx2`, `soft`.
    fn backend(&self) -> &'static str;
    /// The implementation that runs requests of `request` bytes, where it
    /// depends on the length (the AEADs').
    fn backend_for(&self, request: usize) -> &'static str {
        let _ = request;
        self.backend()
    }
    /// Encrypts one request in place; its IV or nonce comes from `sector`.
    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError>;
    /// Decrypts one request in place.
    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError>;
    /// Makes `data` decryptable as the requests of `request` bytes that a benchmark
    /// will decrypt over and over. Only AEADs need it (see [`AeadOp`]).
    fn prepare_decrypt_bench(
        &mut self,
        data: &mut [u8],
        request: usize,
    ) -> Result<(), CipherError> {
        let _ = (data, request);
        Ok(())
    }
}

/// Options that change how a row is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildOptions {
    /// Apply the block function this many times per block (TEA and XTEA only).
    pub repeats: u32,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { repeats: 1 }
    }
}

/// The AES rows' implementation name. The `aes` crate picks its backend from
/// the hardware; where that is not what the mask allows, the name says so.
fn aes_label() -> &'static str {
    let want = dispatch::aes();
    if want == dispatch::aes_crate_choice() || our_aes(want) {
        want.name()
    } else {
        "aes-crate-unmasked"
    }
}

/// Whether `which` is one of our AES implementations rather than the `aes`
/// crate's.
fn our_aes(which: dispatch::AesImpl) -> bool {
    match which {
        dispatch::AesImpl::Soft => true,
        #[cfg(target_arch = "x86_64")]
        dispatch::AesImpl::Ssse3 => true,
        #[cfg(target_arch = "aarch64")]
        dispatch::AesImpl::Neon => true,
        // Our x86 kernels: `AesModes`/`AesXts` for the block rows, and
        // `aes::KernelAes256` in `with_aes!` (only 32-byte keys reach it there).
        #[cfg(target_arch = "x86_64")]
        dispatch::AesImpl::AesNi | dispatch::AesImpl::Vaes256 | dispatch::AesImpl::Vaes512 => true,
        _ => false,
    }
}

/// Calls `$f::<Type>($args)` with the AES type of `$bytes`-byte keys that
/// [`dispatch::aes`] chooses.
macro_rules! with_aes {
    ($bytes:expr, $f:ident ( $($args:expr),* )) => {{
        use crate::aes;
        match (dispatch::aes(), $bytes) {
            #[cfg(target_arch = "aarch64")]
            (dispatch::AesImpl::Neon, 16) => $f::<aes::aarch64_neon::Aes128>($($args),*),
            #[cfg(target_arch = "aarch64")]
            (dispatch::AesImpl::Neon, 24) => $f::<aes::aarch64_neon::Aes192>($($args),*),
            #[cfg(target_arch = "aarch64")]
            (dispatch::AesImpl::Neon, _) => $f::<aes::aarch64_neon::Aes256>($($args),*),
            #[cfg(target_arch = "x86_64")]
            (dispatch::AesImpl::Ssse3, 16) => $f::<aes::x86_ssse3::Aes128>($($args),*),
            #[cfg(target_arch = "x86_64")]
            (dispatch::AesImpl::Ssse3, 24) => $f::<aes::x86_ssse3::Aes192>($($args),*),
            #[cfg(target_arch = "x86_64")]
            (dispatch::AesImpl::Ssse3, _) => $f::<aes::x86_ssse3::Aes256>($($args),*),
            #[cfg(target_arch = "x86_64")]
            (
                dispatch::AesImpl::AesNi | dispatch::AesImpl::Vaes256 | dispatch::AesImpl::Vaes512,
                32,
            ) => $f::<aes::KernelAes256>($($args),*),
            (dispatch::AesImpl::Soft, 16) => $f::<aes::soft::Aes128>($($args),*),
            (dispatch::AesImpl::Soft, 24) => $f::<aes::soft::Aes192>($($args),*),
            (dispatch::AesImpl::Soft, _) => $f::<aes::soft::Aes256>($($args),*),
            (_, 16) => $f::<::aes::Aes128>($($args),*),
            (_, 24) => $f::<::aes::Aes192>($($args),*),
            (_, _) => $f::<::aes::Aes256>($($args),*),
        }
    }};
}

/// Keys the row `spec` with `key` (`spec.key_len()` bytes).
pub fn build(spec: &CipherSpec, key: &[u8]) -> Result<Box<dyn CipherOp>, CipherError> {
    build_with(spec, key, BuildOptions::default())
}

/// Like [`build`], with options.
pub fn build_with(
    spec: &CipherSpec,
    key: &[u8],
    options: BuildOptions,
) -> Result<Box<dyn CipherOp>, CipherError> {
    if key.len() != spec.key_len() {
        return Err(CipherError::KeyLength {
            spec: spec.label(),
            expected: spec.key_len(),
            got: key.len(),
        });
    }
    let repeats = options.repeats.max(1);
    if repeats != 1 && !matches!(spec.algorithm, Algorithm::Tea | Algorithm::Xtea) {
        return Err(CipherError::Repeats(spec.algorithm.name()));
    }
    let spec = *spec;
    match spec.mode {
        Mode::Stream => Ok(match spec.algorithm {
            Algorithm::ChaCha20 => Box::new(ChaChaOp {
                spec,
                key: Zeroizing::new(key.try_into().expect("checked length")),
                imp: dispatch::chacha(),
            }),
            _ => Box::new(Rc4Op {
                spec,
                rc4: ciphers::Rc4::new(key).map_err(|_| CipherError::KeyLength {
                    spec: spec.label(),
                    expected: spec.key_len(),
                    got: key.len(),
                })?,
            }),
        }),
        Mode::Gcm | Mode::Poly1305 => {
            let alg = if spec.mode == Mode::Gcm {
                AeadAlgorithm::AesGcm
            } else {
                AeadAlgorithm::ChaCha20Poly1305
            };
            let aead = Aead::new(alg, key).ok_or(CipherError::KeyLength {
                spec: spec.label(),
                expected: spec.key_len(),
                got: key.len(),
            })?;
            Ok(Box::new(AeadOp {
                spec,
                aead,
                tags: HashMap::default(),
            }))
        }
        Mode::Xts => build_xts(spec, key),
        Mode::AdiantumXChaCha12 | Mode::AdiantumXChaCha20 | Mode::Hctr2 => {
            build_wide(spec, key, crate::wide::SECTOR_BYTES)
        }
        Mode::Ecb | Mode::Cbc | Mode::Ctr => {
            let essiv = match spec.iv {
                IvGen::EssivSha256 => Some(essiv_cipher(spec.algorithm, key)?),
                _ => None,
            };
            let mut modes = block_modes(spec.algorithm, key, repeats)?;
            if spec.mode == Mode::Cbc {
                modes = library_cbc_encrypt(spec.algorithm, key, modes);
            }
            Ok(Box::new(BlockOp { spec, modes, essiv }))
        }
    }
}

/// A keyed block cipher in ECB, CBC and CTR with explicit IVs and counters:
/// the object-safe face of [`BlockModes`], used by the sector ops here and by
/// the raw legacy modes of the engine.
pub trait CipherModes: Send {
    /// Block size in bytes.
    fn block_size(&self) -> usize;
    /// The implementation that runs.
    fn backend(&self) -> &'static str;
    /// ECB encryption of whole blocks.
    fn ecb_encrypt(&mut self, data: &mut [u8]);
    /// ECB decryption of whole blocks.
    fn ecb_decrypt(&mut self, data: &mut [u8]);
    /// CBC encryption of whole blocks; `iv` becomes the last ciphertext block.
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]);
    /// CBC decryption of whole blocks; `iv` becomes the last ciphertext block.
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]);
    /// CTR (big-endian counter over the whole block); `counter` advances.
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]);
}

struct Keyed<C> {
    modes: BlockModes<C>,
    backend: &'static str,
}

impl<C: BlockCipherEncrypt + BlockCipherDecrypt + Send> CipherModes for Keyed<C> {
    fn block_size(&self) -> usize {
        self.modes.block_size()
    }
    fn backend(&self) -> &'static str {
        self.backend
    }
    fn ecb_encrypt(&mut self, data: &mut [u8]) {
        self.modes.ecb_encrypt(data)
    }
    fn ecb_decrypt(&mut self, data: &mut [u8]) {
        self.modes.ecb_decrypt(data)
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.modes.cbc_encrypt(iv, data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.modes.cbc_decrypt(iv, data)
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        self.modes.ctr_apply(counter, data)
    }
}

/// Modes of `base()` with some replaced: a wrapper that gives a cipher its
/// own code for a mode or two (Twofish's CBC encryption, Camellia's fused
/// kernels, AWS-LC's CBC encryption) implements `base` and those modes; the
/// blanket [`CipherModes`] implementation forwards the others.
trait Overrides: Send {
    /// The modes the wrapper does not replace.
    fn base(&mut self) -> &mut dyn CipherModes;
    /// [`Overrides::base`], shared.
    fn base_ref(&self) -> &dyn CipherModes;
    /// See [`CipherModes::backend`].
    fn backend(&self) -> &'static str {
        self.base_ref().backend()
    }
    /// See [`CipherModes::cbc_encrypt`].
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.base().cbc_encrypt(iv, data)
    }
    /// See [`CipherModes::cbc_decrypt`].
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.base().cbc_decrypt(iv, data)
    }
    /// See [`CipherModes::ctr_apply`].
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        self.base().ctr_apply(counter, data)
    }
}

impl<T: Overrides> CipherModes for T {
    fn block_size(&self) -> usize {
        self.base_ref().block_size()
    }
    fn backend(&self) -> &'static str {
        Overrides::backend(self)
    }
    fn ecb_encrypt(&mut self, data: &mut [u8]) {
        self.base().ecb_encrypt(data)
    }
    fn ecb_decrypt(&mut self, data: &mut [u8]) {
        self.base().ecb_decrypt(data)
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        Overrides::cbc_encrypt(self, iv, data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        Overrides::cbc_decrypt(self, iv, data)
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        Overrides::ctr_apply(self, counter, data)
    }
}

fn keyed<C>(
    cipher: Result<C, cipher::InvalidLength>,
    algorithm: Algorithm,
    key_len: usize,
    backend: &'static str,
) -> Result<Box<dyn CipherModes>, CipherError>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + Send + 'static,
{
    Ok(Box::new(keyed_concrete(
        cipher, algorithm, key_len, backend,
    )?))
}

/// [`keyed`] before it is boxed as a trait object.
fn keyed_concrete<C>(
    cipher: Result<C, cipher::InvalidLength>,
    algorithm: Algorithm,
    key_len: usize,
    backend: &'static str,
) -> Result<Keyed<C>, CipherError>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + Send + 'static,
{
    let cipher = cipher.map_err(|_| CipherError::KeyLength {
        spec: algorithm.name().to_string(),
        expected: algorithm.default_key_bits() / 8,
        got: key_len,
    })?;
    Ok(Keyed {
        modes: BlockModes::new(cipher),
        backend,
    })
}

/// A 16-byte block cipher with a CBC encryption loop of its own that keeps
/// the chaining value in registers (the generic one goes through memory on
/// every block of the serial chain).
trait CbcEncryptOwn {
    /// CBC encryption of whole blocks; `iv` becomes the last ciphertext block.
    fn cbc_encrypt_own(&self, iv: &mut [u8; 16], data: &mut [u8]);
    /// CBC decryption by a loop of the cipher's own, if it has one for the
    /// backend in use (`false`: nothing done, use the generic mode).
    fn cbc_decrypt_own(&self, _iv: &mut [u8; 16], _data: &mut [u8]) -> bool {
        false
    }
    /// CTR by a loop of the cipher's own, as [`CbcEncryptOwn::cbc_decrypt_own`].
    fn ctr_apply_own(&self, _counter: &mut [u8; 16], _data: &mut [u8]) -> bool {
        false
    }
}

impl CbcEncryptOwn for ciphers::twofish::Twofish {
    fn cbc_encrypt_own(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        self.cbc_encrypt(iv, data)
    }
    fn cbc_decrypt_own(&self, iv: &mut [u8; 16], data: &mut [u8]) -> bool {
        // Measured faster on x86-64 only (see `Twofish::cbc_decrypt`).
        let own = cfg!(target_arch = "x86_64");
        if own {
            self.cbc_decrypt(iv, data);
        }
        own
    }
}

impl CbcEncryptOwn for ciphers::Serpent {
    fn cbc_encrypt_own(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        self.cbc_encrypt(iv, data)
    }
    fn cbc_decrypt_own(&self, iv: &mut [u8; 16], data: &mut [u8]) -> bool {
        self.cbc_decrypt_fused(iv, data)
    }
    fn ctr_apply_own(&self, counter: &mut [u8; 16], data: &mut [u8]) -> bool {
        self.ctr_apply_fused(counter, data)
    }
}

/// The generic modes, but CBC encryption by the cipher's own loop
/// ([`CbcEncryptOwn`]): Twofish, Serpent; CBC decryption too (Twofish's in
/// batches on x86-64, Serpent's where its backend has fused loops), and
/// Serpent's CTR.
struct OwnCbcEncrypt<C>(Keyed<C>);

impl<C> Overrides for OwnCbcEncrypt<C>
where
    C: CbcEncryptOwn + BlockCipherEncrypt + BlockCipherDecrypt + Send,
{
    fn base(&mut self) -> &mut dyn CipherModes {
        &mut self.0
    }
    fn base_ref(&self) -> &dyn CipherModes {
        &self.0
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.0.modes.cipher().cbc_encrypt_own(block16(iv), data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        if !self.0.modes.cipher().cbc_decrypt_own(block16(iv), data) {
            self.0.cbc_decrypt(iv, data)
        }
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        if !self.0.modes.cipher().ctr_apply_own(block16(counter), data) {
            self.0.ctr_apply(counter, data)
        }
    }
}

/// A 64-bit block cipher on its own `u64` kernel ([`block64`]): Blowfish,
/// DES, Triple-DES.
struct Keyed64<K, const N: usize> {
    cipher: K,
    backend: &'static str,
}

fn block8(b: &mut [u8]) -> &mut [u8; 8] {
    b.try_into()
        .expect("IVs and counters of a 64-bit block cipher are 8 bytes")
}

impl<K: Kernel64<N> + Send, const N: usize> CipherModes for Keyed64<K, N> {
    fn block_size(&self) -> usize {
        8
    }
    fn backend(&self) -> &'static str {
        self.backend
    }
    fn ecb_encrypt(&mut self, data: &mut [u8]) {
        block64::ecb_encrypt(&self.cipher, data)
    }
    fn ecb_decrypt(&mut self, data: &mut [u8]) {
        block64::ecb_decrypt(&self.cipher, data)
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        block64::cbc_encrypt(&self.cipher, block8(iv), data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        block64::cbc_decrypt(&self.cipher, block8(iv), data)
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        block64::ctr_apply(&self.cipher, block8(counter), data)
    }
}

fn keyed64<K, const N: usize>(
    cipher: Result<K, cipher::InvalidLength>,
    algorithm: Algorithm,
    key_len: usize,
    backend: &'static str,
) -> Result<Box<dyn CipherModes>, CipherError>
where
    K: Kernel64<N> + Send + 'static,
{
    let cipher = cipher.map_err(|_| CipherError::KeyLength {
        spec: algorithm.name().to_string(),
        expected: algorithm.default_key_bits() / 8,
        got: key_len,
    })?;
    Ok(Box::new(Keyed64::<K, N> { cipher, backend }))
}

fn keyed_aes<C>(
    key: &[u8],
    algorithm: Algorithm,
    backend: &'static str,
) -> Result<Box<dyn CipherModes>, CipherError>
where
    C: KeyInit + BlockCipherEncrypt + BlockCipherDecrypt + Send + 'static,
{
    keyed(C::new_from_slice(key), algorithm, key.len(), backend)
}

/// The SSSE3 bitsliced AES's modes (the portable x86-64 tier), keyed with
/// `key` (16, 24 or 32 bytes): [`block_modes`]' AES there, and AES-GCM's.
#[cfg(target_arch = "x86_64")]
pub(crate) fn ssse3_aes_modes(key: &[u8]) -> Result<Box<dyn CipherModes>, CipherError> {
    use crate::aes::x86_ssse3::{Aes128, Aes192, Aes256};
    fn ssse3_cbc<C>(key: &[u8]) -> Result<Box<dyn CipherModes>, CipherError>
    where
        C: crate::aes::x86_ssse3::CbcDecrypt
            + crate::aes::x86_ssse3::Ctr
            + KeyInit
            + BlockCipherEncrypt
            + BlockCipherDecrypt
            + Send
            + 'static,
    {
        let name = dispatch::AesImpl::Ssse3.name();
        let keyed = keyed_concrete(C::new_from_slice(key), Algorithm::Aes, key.len(), name)?;
        Ok(Box::new(Ssse3Cbc(keyed)))
    }
    match key.len() {
        16 => ssse3_cbc::<Aes128>(key),
        24 => ssse3_cbc::<Aes192>(key),
        _ => ssse3_cbc::<Aes256>(key),
    }
}

/// Keys the block cipher `algorithm` with `key` (its length picks the variant:
/// AES-128/192/256, Blowfish 4-56 bytes, ...). `repeats` applies the block
/// function that many times per block (TEA and XTEA only). This is the one
/// place that maps the catalogue's block ciphers to implementations.
pub fn block_modes(
    algorithm: Algorithm,
    key: &[u8],
    repeats: u32,
) -> Result<Box<dyn CipherModes>, CipherError> {
    if repeats > 1 && !matches!(algorithm, Algorithm::Tea | Algorithm::Xtea) {
        return Err(CipherError::Repeats(algorithm.name()));
    }
    if algorithm == Algorithm::Aes
        && let Some(modes) = crate::aes::AesModes::new(key)
    {
        return Ok(Box::new(OwnAes(modes)));
    }
    #[cfg(target_arch = "x86_64")]
    if algorithm == Algorithm::Aes && dispatch::aes() == dispatch::AesImpl::Ssse3 {
        return ssse3_aes_modes(key);
    }
    let aes = aes_label();
    let (a, n) = (algorithm, key.len());
    match (algorithm, key.len()) {
        (Algorithm::Aes, _) => with_aes!(n, keyed_aes(key, a, aes)),
        (Algorithm::Serpent, _) => Ok(Box::new(OwnCbcEncrypt(keyed_concrete(
            ciphers::Serpent::new_from_slice(key),
            a,
            n,
            ciphers::serpent_backend(),
        )?))),
        (Algorithm::Twofish, _) => Ok(Box::new(OwnCbcEncrypt(keyed_concrete(
            ciphers::twofish::Twofish::new_from_slice(key),
            a,
            n,
            dispatch::twofish(),
        )?))),
        (Algorithm::Camellia, _) => {
            let cipher =
                ciphers::Camellia::new_from_slice(key).map_err(|_| CipherError::KeyLength {
                    spec: a.name().to_string(),
                    expected: a.default_key_bits() / 8,
                    got: n,
                })?;
            Ok(camellia_modes(cipher))
        }
        (Algorithm::Blowfish, _) => keyed64::<_, { ciphers::blowfish::PAR_BLOCKS }>(
            ciphers::Blowfish::new_from_slice(key),
            a,
            n,
            "soft",
        ),
        (Algorithm::Des, _) => keyed64::<_, { ciphers::des::PAR_BLOCKS }>(
            ciphers::Des::new_from_slice(key),
            a,
            n,
            dispatch::des().name(),
        ),
        (Algorithm::TripleDes, _) => keyed64::<_, { ciphers::des::PAR_BLOCKS }>(
            ciphers::TdesEde3::new_from_slice(key),
            a,
            n,
            dispatch::des().name(),
        ),
        (Algorithm::Rc2, _) => keyed64::<_, { ciphers::rc2::LANES }>(
            ciphers::Rc2::new_from_slice(key),
            a,
            n,
            "lanes16",
        ),
        (Algorithm::Tea, _) => keyed64::<_, { ciphers::tea::LANES }>(
            ciphers::tea::Tea::with_repeats(key, repeats),
            a,
            n,
            "soft",
        ),
        (Algorithm::Xtea, _) => keyed64::<_, { ciphers::tea::LANES }>(
            ciphers::tea::Xtea::with_repeats(key, repeats),
            a,
            n,
            "soft",
        ),
        (Algorithm::Rc4 | Algorithm::ChaCha20, _) => {
            Err(SpecError::ModeNotSupported(algorithm, Mode::Ecb).into())
        }
    }
}

/// `modes` with CBC encryption handed to AWS-LC where
/// [`dispatch::aes_cbc_encrypt_aws_lc`] says so (CBC rows only, so that the
/// other rows' implementation names stay true).
fn library_cbc_encrypt(
    algorithm: Algorithm,
    key: &[u8],
    modes: Box<dyn CipherModes>,
) -> Box<dyn CipherModes> {
    #[cfg(target_arch = "x86_64")]
    if algorithm == Algorithm::Aes
        && dispatch::aes_cbc_encrypt_aws_lc()
        && let Some(enc) = crate::aes::aws_lc_cbc::AwsLcCbcEncrypt::new(key)
    {
        return Box::new(AwsLcCbc { modes, enc });
    }
    let _ = (algorithm, key);
    modes
}

/// Our AES modes with CBC encryption by AWS-LC (see
/// [`crate::aes::aws_lc_cbc`]).
#[cfg(target_arch = "x86_64")]
struct AwsLcCbc {
    modes: Box<dyn CipherModes>,
    enc: crate::aes::aws_lc_cbc::AwsLcCbcEncrypt,
}

#[cfg(target_arch = "x86_64")]
impl Overrides for AwsLcCbc {
    fn base(&mut self) -> &mut dyn CipherModes {
        &mut *self.modes
    }
    fn base_ref(&self) -> &dyn CipherModes {
        &*self.modes
    }
    fn backend(&self) -> &'static str {
        "ssse3+aws-lc:vpaes-cbc-enc"
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.enc.encrypt(block16(iv), data)
    }
}

/// Our SSSE3 AES in the generic modes, but CBC decryption and CTR by its
/// own loops ([`crate::aes::x86_ssse3::CbcDecrypt`],
/// [`crate::aes::x86_ssse3::Ctr`], the generic CTR for the tail).
#[cfg(target_arch = "x86_64")]
struct Ssse3Cbc<C>(Keyed<C>);

#[cfg(target_arch = "x86_64")]
impl<C> Overrides for Ssse3Cbc<C>
where
    C: crate::aes::x86_ssse3::CbcDecrypt
        + crate::aes::x86_ssse3::Ctr
        + BlockCipherEncrypt
        + BlockCipherDecrypt
        + Send,
{
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        let counter = block16(counter);
        let done = self.0.modes.cipher().ctr_batches(counter, data);
        self.0.modes.ctr_apply(counter, &mut data[done..])
    }
    fn base(&mut self) -> &mut dyn CipherModes {
        &mut self.0
    }
    fn base_ref(&self) -> &dyn CipherModes {
        &self.0
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.0.modes.cipher().cbc_decrypt(block16(iv), data)
    }
}

#[cfg(target_arch = "x86_64")]
impl<C: crate::aes::x86_ssse3::XtsKernel + Send> UnitXts for crate::aes::x86_ssse3::Xts<C> {
    fn encrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        crate::aes::x86_ssse3::Xts::encrypt(self, iv, data)
    }
    fn decrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        crate::aes::x86_ssse3::Xts::decrypt(self, iv, data)
    }
    fn backend(&self) -> &'static str {
        dispatch::AesImpl::Ssse3.name()
    }
}

fn build_xts(spec: CipherSpec, key: &[u8]) -> Result<Box<dyn CipherOp>, CipherError> {
    fn xts<C>(spec: CipherSpec, key: &[u8], backend: &'static str) -> Box<dyn CipherOp>
    where
        C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send + 'static,
    {
        let (k1, k2) = key.split_at(key.len() / 2);
        let data = C::new_from_slice(k1).expect("key length checked by the spec");
        let tweak = C::new_from_slice(k2).expect("key length checked by the spec");
        Box::new(XtsOp {
            spec,
            xts: Xts::new(data, tweak),
            backend,
        })
    }
    if spec.algorithm == Algorithm::Aes
        && let Some(xts) = crate::aes::AesXts::new(key)
    {
        return Ok(Box::new(UnitXtsOp { spec, xts }));
    }
    #[cfg(target_arch = "x86_64")]
    if spec.algorithm == Algorithm::Aes && dispatch::aes() == dispatch::AesImpl::Ssse3 {
        use crate::aes::x86_ssse3::{Aes128, Aes192, Aes256, Xts, XtsKernel};
        fn op<C: XtsKernel + Send + 'static>(
            spec: CipherSpec,
            key: &[u8],
        ) -> Option<Box<dyn CipherOp>> {
            let xts = Xts::<C>::new(key)?;
            Some(Box::new(UnitXtsOp { spec, xts }))
        }
        let built = match key.len() / 2 {
            16 => op::<Aes128>(spec, key),
            24 => op::<Aes192>(spec, key),
            _ => op::<Aes256>(spec, key),
        };
        return built.ok_or(CipherError::KeyLength {
            spec: spec.label(),
            expected: spec.key_len(),
            got: key.len(),
        });
    }
    let aes = aes_label();
    Ok(match (spec.algorithm, key.len() / 2) {
        (Algorithm::Aes, n) => with_aes!(n, xts(spec, key, aes)),
        (Algorithm::Serpent, _) => xts::<ciphers::Serpent>(spec, key, ciphers::serpent_backend()),
        (Algorithm::Twofish, _) => xts::<ciphers::twofish::Twofish>(spec, key, dispatch::twofish()),
        (Algorithm::Camellia, _) => {
            xts::<ciphers::Camellia>(spec, key, ciphers::camellia_backend())
        }
        (alg, _) => return Err(SpecError::ModeNotSupported(alg, Mode::Xts).into()),
    })
}

/// Keys a wide-block row (Adiantum, HCTR2) that enciphers `sector_bytes`-byte
/// sectors (512 or 4096 in dm-crypt).
pub fn build_wide(
    spec: CipherSpec,
    key: &[u8],
    sector_bytes: usize,
) -> Result<Box<dyn CipherOp>, CipherError> {
    use crate::wide::{WideBlock, WideOp, XChaChaRounds};
    let key: &[u8; 32] = key.try_into().map_err(|_| CipherError::KeyLength {
        spec: spec.label(),
        expected: 32,
        got: key.len(),
    })?;
    let aes = aes_label();
    let (cipher, backend): (Box<dyn WideBlock>, String) = match spec.mode {
        Mode::AdiantumXChaCha12 | Mode::AdiantumXChaCha20 => {
            let rounds = if spec.mode == Mode::AdiantumXChaCha12 {
                XChaChaRounds::R12
            } else {
                XChaChaRounds::R20
            };
            (
                with_aes!(32, adiantum_with(key, rounds)),
                format!("{}+nh+{aes}", dispatch::chacha().name()),
            )
        }
        Mode::Hctr2 => {
            let polyval = if dispatch::polyval_clmul() {
                "clmul"
            } else {
                "soft"
            };
            (
                with_aes!(32, hctr2_with(key)),
                format!("{aes}+polyval-{polyval}"),
            )
        }
        other => return Err(SpecError::ModeNotSupported(spec.algorithm, other).into()),
    };
    Ok(Box::new(WideOp::new(
        spec,
        cipher,
        intern(backend),
        sector_bytes,
    )))
}

fn adiantum_with<C>(
    key: &[u8; 32],
    rounds: crate::wide::XChaChaRounds,
) -> Box<dyn crate::wide::WideBlock>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send + 'static,
{
    Box::new(crate::wide::Adiantum::<C>::new(key, rounds))
}

fn hctr2_with<C>(key: &[u8; 32]) -> Box<dyn crate::wide::WideBlock>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send + 'static,
{
    Box::new(crate::wide::Hctr2::<C>::new(key))
}

/// A `'static` copy of a composed backend name, made once per distinct name.
fn intern(name: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.get(name.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The ESSIV cipher: the same algorithm keyed with SHA-256 of the key (dm-crypt).
fn essiv_cipher(alg: Algorithm, key: &[u8]) -> Result<Box<dyn CipherModes>, CipherError> {
    let salt = Zeroizing::new(<[u8; 32]>::from(Sha256::digest(key)));
    match alg {
        Algorithm::Aes
        | Algorithm::Serpent
        | Algorithm::Twofish
        | Algorithm::Camellia
        | Algorithm::Blowfish
        | Algorithm::Rc2 => block_modes(alg, &salt[..], 1),
        other => Err(CipherError::EssivKey(other.name())),
    }
}

/// The IV of `sector` for a cipher with `bs`-byte blocks (dm-crypt's IV modes).
fn sector_iv(
    iv: IvGen,
    sector: u64,
    bs: usize,
    essiv: Option<&mut Box<dyn CipherModes>>,
) -> [u8; 16] {
    let mut out = [0u8; 16];
    match iv {
        IvGen::None | IvGen::Random => {}
        IvGen::Plain => out[..4].copy_from_slice(&(sector as u32).to_le_bytes()),
        IvGen::Plain64 => out[..8].copy_from_slice(&sector.to_le_bytes()),
        IvGen::Plain64Be => out[bs - 8..bs].copy_from_slice(&sector.to_be_bytes()),
        IvGen::EssivSha256 => {
            out[..8].copy_from_slice(&sector.to_le_bytes());
            if let Some(c) = essiv {
                c.ecb_encrypt(&mut out[..bs]);
            }
        }
    }
    out
}

/// ECB, CBC or CTR over any block cipher.
struct BlockOp {
    spec: CipherSpec,
    modes: Box<dyn CipherModes>,
    essiv: Option<Box<dyn CipherModes>>,
}

impl BlockOp {
    fn check(&self, data: &[u8]) -> Result<usize, CipherError> {
        let bs = self.modes.block_size();
        if self.spec.mode != Mode::Ctr && !data.len().is_multiple_of(bs) {
            return Err(CipherError::DataLength {
                len: data.len(),
                block: bs,
                mode: self.spec.mode.name(),
            });
        }
        Ok(bs)
    }
}

impl CipherOp for BlockOp {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }

    fn backend(&self) -> &'static str {
        self.modes.backend()
    }

    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        let bs = self.check(data)?;
        let mut iv = sector_iv(self.spec.iv, sector, bs, self.essiv.as_mut());
        match self.spec.mode {
            Mode::Ecb => self.modes.ecb_encrypt(data),
            Mode::Cbc => self.modes.cbc_encrypt(&mut iv[..bs], data),
            _ => self.modes.ctr_apply(&mut iv[..bs], data),
        }
        Ok(())
    }

    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        let bs = self.check(data)?;
        let mut iv = sector_iv(self.spec.iv, sector, bs, self.essiv.as_mut());
        match self.spec.mode {
            Mode::Ecb => self.modes.ecb_decrypt(data),
            Mode::Cbc => self.modes.cbc_decrypt(&mut iv[..bs], data),
            _ => self.modes.ctr_apply(&mut iv[..bs], data),
        }
        Ok(())
    }
}

struct XtsOp<C> {
    spec: CipherSpec,
    xts: Xts<C>,
    backend: &'static str,
}

impl<C> CipherOp for XtsOp<C>
where
    C: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send,
{
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }

    fn backend(&self) -> &'static str {
        self.backend
    }

    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        if data.len() < 16 {
            return Err(CipherError::DataLength {
                len: data.len(),
                block: 16,
                mode: "xts",
            });
        }
        let iv = sector_iv(self.spec.iv, sector, 16, None);
        self.xts.encrypt(&iv, data);
        Ok(())
    }

    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        if data.len() < 16 {
            return Err(CipherError::DataLength {
                len: data.len(),
                block: 16,
                mode: "xts",
            });
        }
        let iv = sector_iv(self.spec.iv, sector, 16, None);
        self.xts.decrypt(&iv, data);
        Ok(())
    }
}

/// The modes of a keyed Camellia (its backend chosen at key setup).
pub(crate) fn camellia_modes(cipher: ciphers::Camellia) -> Box<dyn CipherModes> {
    Box::new(OwnCamellia(Keyed {
        backend: cipher.backend(),
        modes: BlockModes::new(cipher),
    }))
}

/// Camellia in the generic modes, but CBC encryption by its own loop
/// ([`ciphers::Camellia::cbc_encrypt`]), and CTR and CBC decryption through
/// its kernels' fused entries ([`ciphers::Camellia::ctr_batches`],
/// [`ciphers::Camellia::cbc_decrypt_batches`]) with the generic modes for
/// the tail.
struct OwnCamellia(Keyed<ciphers::Camellia>);

impl Overrides for OwnCamellia {
    fn base(&mut self) -> &mut dyn CipherModes {
        &mut self.0
    }
    fn base_ref(&self) -> &dyn CipherModes {
        &self.0
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.0.modes.cipher().cbc_encrypt(block16(iv), data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        let iv = block16(iv);
        let done = self.0.modes.cipher().cbc_decrypt_batches(iv, data);
        self.0.modes.cbc_decrypt(iv, &mut data[done..])
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        let counter = block16(counter);
        let done = self.0.modes.cipher().ctr_batches(counter, data);
        self.0.modes.ctr_apply(counter, &mut data[done..])
    }
}

/// Our AES kernels ([`crate::aes`]) behind [`CipherModes`].
struct OwnAes(crate::aes::AesModes);

fn block16(b: &mut [u8]) -> &mut [u8; 16] {
    b.try_into()
        .expect("IVs and counters of 16-byte block ciphers are one block")
}

impl CipherModes for OwnAes {
    fn block_size(&self) -> usize {
        crate::aes::BLOCK
    }
    // Dead on 32-bit ARM, where `aes::Backend` has no variant.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unreachable_code)
    )]
    fn backend(&self) -> &'static str {
        self.0.backend().name()
    }
    fn ecb_encrypt(&mut self, data: &mut [u8]) {
        self.0.ecb_encrypt(data)
    }
    fn ecb_decrypt(&mut self, data: &mut [u8]) {
        self.0.ecb_decrypt(data)
    }
    fn cbc_encrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.0.cbc_encrypt(block16(iv), data)
    }
    fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        self.0.cbc_decrypt(block16(iv), data)
    }
    fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        self.0.ctr_apply(block16(counter), data)
    }
}

/// An XTS of our own over whole data units, with ciphertext stealing: the
/// AES-instruction backends' [`crate::aes::AesXts`] or the SSSE3 code's.
trait UnitXts: Send {
    fn encrypt(&self, iv: &[u8; 16], data: &mut [u8]);
    fn decrypt(&self, iv: &[u8; 16], data: &mut [u8]);
    /// The implementation, as rows report it.
    fn backend(&self) -> &'static str;
}

impl UnitXts for crate::aes::AesXts {
    fn encrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        crate::aes::AesXts::encrypt(self, iv, data)
    }
    fn decrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        crate::aes::AesXts::decrypt(self, iv, data)
    }
    // Dead on 32-bit ARM, where `aes::Backend` has no variant.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unreachable_code)
    )]
    fn backend(&self) -> &'static str {
        crate::aes::AesXts::backend(self).name()
    }
}

/// XTS on our AES code ([`UnitXts`]), one data unit per sector.
struct UnitXtsOp<X> {
    spec: CipherSpec,
    xts: X,
}

impl<X: UnitXts> CipherOp for UnitXtsOp<X> {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }

    fn backend(&self) -> &'static str {
        self.xts.backend()
    }

    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        xts_check(data)?;
        self.xts
            .encrypt(&sector_iv(self.spec.iv, sector, 16, None), data);
        Ok(())
    }

    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        xts_check(data)?;
        self.xts
            .decrypt(&sector_iv(self.spec.iv, sector, 16, None), data);
        Ok(())
    }
}

fn xts_check(data: &[u8]) -> Result<(), CipherError> {
    if data.len() < 16 {
        return Err(CipherError::DataLength {
            len: data.len(),
            block: 16,
            mode: "xts",
        });
    }
    Ok(())
}

/// ChaCha20 (RFC 8439): a fresh 96-bit nonce per request from its sector.
struct ChaChaOp {
    spec: CipherSpec,
    key: Zeroizing<[u8; 32]>,
    imp: dispatch::ChaChaImpl,
}

impl ChaChaOp {
    fn apply(&self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        let mut nonce = [0u8; 12];
        nonce[..8].copy_from_slice(&sector.to_le_bytes());
        chacha::xor_keystream_with::<20>(self.imp, &self.key, &nonce, 0, data).map_err(|_| {
            CipherError::TooLong {
                len: data.len(),
                cipher: "chacha20",
                max: u64::from(u32::MAX) * chacha::BLOCK as u64,
            }
        })
    }
}

impl CipherOp for ChaChaOp {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }
    fn backend(&self) -> &'static str {
        self.imp.name()
    }
    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        self.apply(data, sector)
    }
    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        self.apply(data, sector)
    }
}

/// RC4 has no IV: one continuous key stream, as `openssl speed rc4` measures it.
struct Rc4Op {
    spec: CipherSpec,
    rc4: ciphers::Rc4,
}

impl CipherOp for Rc4Op {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }
    fn backend(&self) -> &'static str {
        dispatch::rc4()
    }
    fn encrypt(&mut self, data: &mut [u8], _sector: u64) -> Result<(), CipherError> {
        self.rc4.apply_keystream(data);
        Ok(())
    }
    fn decrypt(&mut self, data: &mut [u8], _sector: u64) -> Result<(), CipherError> {
        self.rc4.apply_keystream(data);
        Ok(())
    }
}

/// An AEAD per request, nonce from the sector, tag kept beside the data.
///
/// A benchmark decrypts the same buffer over and over, and every decryption
/// must verify a real tag. Both AEADs here XOR a key stream, so decrypting
/// ciphertext C gives P and decrypting P (as if it were ciphertext) gives C.
/// [`CipherOp::prepare_decrypt_bench`] seals each request twice to learn the
/// tag of both states, and each decryption then verifies the tag of the state
/// the request is in and flips it. A decryption that fails authentication
/// releases no plaintext: ours leaves the request as it was, AWS-LC's zeroes
/// it ([`Aead::open`]).
pub struct AeadOp {
    spec: CipherSpec,
    aead: Aead,
    /// sector -> (tag of the current state, tag of the other state).
    tags: HashMap<u64, ([u8; TAG_LEN], [u8; TAG_LEN]), BuildHasherDefault<SectorHasher>>,
}

/// The hasher of [`AeadOp`]'s tag map: one multiply (Fibonacci hashing).
/// With the default SipHash, a lookup and an insert took 31-34 ns a request
/// on Zen 3, 0.15% of a 64 KiB request of ChaCha20-Poly1305 at 3 GB/s, time
/// no library's harness spends; with this, 9-10 ns. The keys are the
/// benchmark's own sector numbers, so no one can choose them to collide.
#[derive(Default)]
struct SectorHasher(u64);

impl Hasher for SectorHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

fn aead_nonce(sector: u64) -> [u8; NONCE_LEN] {
    let mut nonce = [0u8; NONCE_LEN];
    nonce[..8].copy_from_slice(&sector.to_le_bytes());
    nonce
}

impl CipherOp for AeadOp {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }

    fn backend(&self) -> &'static str {
        self.aead.backend()
    }

    fn backend_for(&self, request: usize) -> &'static str {
        self.aead.backend_for(request)
    }

    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        let tag = self.aead.seal(&aead_nonce(sector), &[], data);
        let other = self.tags.get(&sector).map_or([0; TAG_LEN], |t| t.0);
        self.tags.insert(sector, (tag, other));
        Ok(())
    }

    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        let (tag, other) = *self.tags.get(&sector).ok_or(CipherError::Authentication)?;
        self.aead
            .open(&aead_nonce(sector), &[], data, &tag)
            .map_err(|_| CipherError::Authentication)?;
        self.tags.insert(sector, (other, tag));
        Ok(())
    }

    fn prepare_decrypt_bench(
        &mut self,
        data: &mut [u8],
        request: usize,
    ) -> Result<(), CipherError> {
        for (i, chunk) in data.chunks_mut(request.max(1)).enumerate() {
            let sector = i as u64;
            let nonce = aead_nonce(sector);
            let tag_c = self.aead.seal(&nonce, &[], chunk); // chunk now C
            let tag_p = self.aead.seal(&nonce, &[], chunk); // chunk back to P
            // The chunk holds P, whose tag (as ciphertext) is tag_p; opening it gives C.
            self.tags.insert(sector, (tag_p, tag_c));
        }
        Ok(())
    }
}
