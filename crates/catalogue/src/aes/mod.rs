//! AES of our own: one backend module per instruction set, chosen at run time
//! by [`crate::dispatch::aes`] (which honours `CLUSTERCRYPT_DISABLE_HWF`).
//! [`AesModes`] and [`AesXts`] run the AES-NI and VAES kernels with the modes
//! inside them; without AES instructions the rows run [`soft`], the SSSE3 or
//! the NEON code through the `cipher` traits and the portable modes.
//!
//! The `aes` crate stays as the test oracle; it cannot be told the mask and
//! picks VAES-512 wherever the CPU has it, so the tiers below that need code
//! that does what the mask says. The modes run inside each backend with
//! counters and tweaks made in registers, so the data is read and written once.

// On 32-bit ARM no backend of ours exists, so `Backend` has no variant and the
// dispatching code is dead there; it stays compiled, one source for all targets.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(
        dead_code,
        unreachable_code,
        unused_mut,
        unused_unsafe,
        unused_variables
    )
)]

use zeroize::Zeroize;

use crate::dispatch::{self, AesImpl};

#[cfg(target_arch = "aarch64")]
mod aarch64_ce;
#[cfg(target_arch = "aarch64")]
pub mod aarch64_neon;
#[cfg(target_arch = "x86_64")]
pub mod aws_lc_cbc;
pub(crate) mod bitsliced;
#[cfg(any(target_arch = "aarch64", target_arch = "x86_64"))]
pub(crate) mod simd128;
pub mod soft;
#[cfg(target_arch = "x86_64")]
pub mod x86_ssse3;
#[cfg(target_arch = "x86_64")]
mod x86_ssse3_sbox;

#[cfg(test)]
pub(crate) mod tests_common;

#[cfg(target_arch = "x86_64")]
mod x86_aesni;
#[cfg(target_arch = "x86_64")]
mod x86_modes;
#[cfg(target_arch = "x86_64")]
mod x86_vaes256;
#[cfg(target_arch = "x86_64")]
mod x86_vaes512;

/// AES block size in bytes.
pub const BLOCK: usize = 16;

/// Encryption and decryption round keys (zeroized on drop).
pub(crate) struct RoundKeys {
    enc: [[u8; 16]; 15],
    dec: [[u8; 16]; 15],
    nr: usize,
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

/// The AES backends of this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// AES-NI on 128-bit registers.
    #[cfg(target_arch = "x86_64")]
    AesNi,
    /// VAES on 256-bit registers with AVX2.
    #[cfg(target_arch = "x86_64")]
    Vaes256,
    /// VAES on 512-bit registers with AVX-512.
    #[cfg(target_arch = "x86_64")]
    Vaes512,
    /// The ARMv8 crypto extensions (AESE/AESMC) on aarch64.
    #[cfg(target_arch = "aarch64")]
    ArmCe,
}

impl Backend {
    /// Every backend compiled in, widest first.
    pub const ALL: &'static [Backend] = &[
        #[cfg(target_arch = "x86_64")]
        Backend::Vaes512,
        #[cfg(target_arch = "x86_64")]
        Backend::Vaes256,
        #[cfg(target_arch = "x86_64")]
        Backend::AesNi,
        #[cfg(target_arch = "aarch64")]
        Backend::ArmCe,
    ];

    /// The name rows report (the same as [`AesImpl::name`]).
    pub fn name(self) -> &'static str {
        self.implementation().name()
    }

    fn implementation(self) -> AesImpl {
        match self {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => AesImpl::AesNi,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => AesImpl::Vaes256,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes512 => AesImpl::Vaes512,
            #[cfg(target_arch = "aarch64")]
            Backend::ArmCe => AesImpl::ArmCe,
        }
    }

    /// The backend of an implementation the dispatch chose, if it is ours.
    pub fn of(implementation: AesImpl) -> Option<Backend> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.implementation() == implementation)
    }

    /// Whether the hardware runs it (the mask aside: tests use every one).
    pub fn runnable(self) -> bool {
        let f = crate::cpu::detected();
        match self {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => f.aes,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => f.aes && f.vaes && f.vpclmul && f.avx2,
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes512 => f.aes && f.vaes && f.avx512,
            #[cfg(target_arch = "aarch64")]
            Backend::ArmCe => f.aes,
        }
    }
}

/// A keyed AES (128, 192 or 256 bits) in ECB, CBC and CTR on one backend.
pub struct AesModes {
    keys: RoundKeys,
    backend: Backend,
    /// CTR's first-round table, made on the first long request.
    #[cfg(target_arch = "x86_64")]
    first_round: std::sync::OnceLock<x86_modes::FirstRound>,
    /// How VAES-256 XTS makes its tweaks ([`dispatch::aes_xts_tweaks`]).
    #[cfg(target_arch = "x86_64")]
    xts_tweaks: dispatch::XtsTweaks,
}

impl AesModes {
    /// Keys AES with the backend the dispatch picks; `None` when that is not
    /// one of ours (the portable tier) or the key is not 16, 24 or 32 bytes.
    pub fn new(key: &[u8]) -> Option<AesModes> {
        AesModes::with_backend(key, Backend::of(dispatch::aes())?)
    }

    /// Keys AES on `backend`; `None` when the CPU lacks it or the key is not
    /// 16, 24 or 32 bytes.
    pub fn with_backend(key: &[u8], backend: Backend) -> Option<AesModes> {
        if !matches!(key.len(), 16 | 24 | 32) || !backend.runnable() {
            return None;
        }
        let mut keys = RoundKeys {
            enc: [[0; 16]; 15],
            dec: [[0; 16]; 15],
            nr: 0,
        };
        // SAFETY: every backend needs AES-NI, and `runnable` checked the CPU has it.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86_aesni::expand(key, &mut keys)
        };
        // SAFETY: `runnable` checked the CPU has the AES extension.
        #[cfg(target_arch = "aarch64")]
        unsafe {
            aarch64_ce::expand(key, &mut keys)
        };
        Some(AesModes {
            keys,
            backend,
            #[cfg(target_arch = "x86_64")]
            first_round: std::sync::OnceLock::new(),
            #[cfg(target_arch = "x86_64")]
            xts_tweaks: dispatch::aes_xts_tweaks(),
        })
    }

    /// The backend that runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The encryption round keys and the number of rounds (10, 12 or 14),
    /// for code that runs AES rounds itself (the stitched AES-GCM).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn enc_keys(&self) -> (&[[u8; 16]; 15], usize) {
        (&self.keys.enc, self.keys.nr)
    }

    /// ECB encryption of whole blocks in place.
    ///
    /// # Panics
    /// If `data` is not a whole number of blocks.
    pub fn ecb_encrypt(&self, data: &mut [u8]) {
        self.ecb(data, true)
    }

    /// ECB decryption of whole blocks in place.
    ///
    /// # Panics
    /// If `data` is not a whole number of blocks.
    pub fn ecb_decrypt(&self, data: &mut [u8]) {
        self.ecb(data, false)
    }

    fn ecb(&self, data: &mut [u8], enc: bool) {
        assert!(data.len().is_multiple_of(BLOCK), "whole blocks only");
        let k = &self.keys;
        let keys = if enc { &k.enc } else { &k.dec };
        // SAFETY: `with_backend` checked the CPU has the backend's features.
        unsafe {
            match self.backend {
                #[cfg(target_arch = "x86_64")]
                Backend::AesNi => x86_aesni::ecb(keys, k.nr, data, enc),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes256 => x86_vaes256::ecb(keys, k.nr, data, enc),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes512 => x86_vaes512::ecb(keys, k.nr, data, enc),
                #[cfg(target_arch = "aarch64")]
                Backend::ArmCe => aarch64_ce::ecb(keys, k.nr, data, enc),
            }
        }
    }

    /// CBC encryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block. One block after another on every backend: each
    /// needs the one before, so wider registers do not help.
    ///
    /// # Panics
    /// If `data` is not a whole number of blocks.
    pub fn cbc_encrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        assert!(data.len().is_multiple_of(BLOCK), "whole blocks only");
        let k = &self.keys;
        // SAFETY: `with_backend` checked the CPU has the backend's features,
        // and all of them include AES-NI.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86_aesni::cbc_encrypt(&k.enc, k.nr, iv, data)
        };
        // SAFETY: `with_backend` checked the CPU has the AES extension.
        #[cfg(target_arch = "aarch64")]
        unsafe {
            aarch64_ce::cbc_encrypt(&k.enc, k.nr, iv, data)
        };
    }

    /// CBC decryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block.
    ///
    /// # Panics
    /// If `data` is not a whole number of blocks.
    pub fn cbc_decrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        assert!(data.len().is_multiple_of(BLOCK), "whole blocks only");
        let k = &self.keys;
        // SAFETY: `with_backend` checked the CPU has the backend's features.
        unsafe {
            match self.backend {
                #[cfg(target_arch = "x86_64")]
                Backend::AesNi => x86_aesni::cbc_decrypt(&k.dec, k.nr, iv, data),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes256 => x86_vaes256::cbc_decrypt(&k.dec, k.nr, iv, data),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes512 => x86_vaes512::cbc_decrypt(&k.dec, k.nr, iv, data),
                #[cfg(target_arch = "aarch64")]
                Backend::ArmCe => aarch64_ce::cbc_decrypt(&k.dec, k.nr, iv, data),
            }
        }
    }

    /// CTR (NIST SP 800-38A §6.5) in place with a 128-bit big-endian counter
    /// over the whole block that wraps modulo 2^128, as OpenSSL's; `counter`
    /// advances by the blocks used, a partial last block using up one.
    pub fn ctr_apply(&self, counter: &mut [u8; 16], data: &mut [u8]) {
        self.ctr_apply_with(counter, data, true);
    }

    /// [`AesModes::ctr_apply`], with the first-round cache of long requests
    /// (x86) turned off when `first_round` is false: for the side-by-side
    /// example `aes_ctr_first_round`, not for use.
    #[doc(hidden)]
    pub fn ctr_apply_with(&self, counter: &mut [u8; 16], data: &mut [u8], first_round: bool) {
        let mut c = u128::from_be_bytes(*counter);
        let k = &self.keys;
        #[cfg(not(target_arch = "x86_64"))]
        let _ = first_round;
        #[cfg(target_arch = "x86_64")]
        let first = (first_round
            && data.len() >= x86_modes::FIRST_ROUND_FROM
            && x86_modes::first_round_pays(self.backend, k.nr))
        .then(|| {
            self.first_round
                // SAFETY: every x86 backend needs AES-NI, which
                // `with_backend` checked.
                .get_or_init(|| unsafe { x86_modes::FirstRound::new(&k.enc[0]) })
        });
        // SAFETY: `with_backend` checked the CPU has the backend's features.
        unsafe {
            match self.backend {
                #[cfg(target_arch = "x86_64")]
                Backend::AesNi => x86_aesni::ctr(&k.enc, k.nr, first, &mut c, data),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes256 => x86_vaes256::ctr(&k.enc, k.nr, first, &mut c, data),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes512 => x86_vaes512::ctr(&k.enc, k.nr, first, &mut c, data),
                #[cfg(target_arch = "aarch64")]
                Backend::ArmCe => aarch64_ce::ctr(&k.enc, k.nr, &mut c, data),
            }
        }
        *counter = c.to_be_bytes();
    }

    /// XTS over whole blocks from tweak `t` (little-endian), which advances.
    fn xts_blocks(&self, t: &mut u128, data: &mut [u8], enc: bool) {
        let k = &self.keys;
        let keys = if enc { &k.enc } else { &k.dec };
        // SAFETY: `with_backend` checked the CPU has the backend's features.
        unsafe {
            match self.backend {
                #[cfg(target_arch = "x86_64")]
                Backend::AesNi => x86_aesni::xts(keys, k.nr, t, data, enc),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes256 => x86_vaes256::xts(keys, k.nr, t, data, enc, self.xts_tweaks),
                #[cfg(target_arch = "x86_64")]
                Backend::Vaes512 => x86_vaes512::xts(keys, k.nr, t, data, enc),
                #[cfg(target_arch = "aarch64")]
                Backend::ArmCe => aarch64_ce::xts(keys, k.nr, t, data, enc),
            }
        }
    }
}

/// XTS-AES (IEEE 1619-2018, NIST SP 800-38E) with a data key and a tweak key,
/// ciphertext stealing for data units that are not whole blocks.
pub struct AesXts {
    data: AesModes,
    tweak: AesModes,
}

/// Multiplies a tweak by α in GF(2^128) (IEEE 1619 §5.2).
pub(super) fn mul_alpha(t: u128) -> u128 {
    (t << 1) ^ (0x87 * (t >> 127))
}

impl AesXts {
    /// Keys XTS with `key` = data key ‖ tweak key (32, 48 or 64 bytes) on the
    /// backend the dispatch picks for XTS ([`dispatch::aes_xts`]); `None` as
    /// [`AesModes::new`].
    pub fn new(key: &[u8]) -> Option<AesXts> {
        AesXts::with_backend(key, Backend::of(dispatch::aes_xts())?)
    }

    /// Keys XTS on `backend`; `None` as [`AesModes::with_backend`].
    pub fn with_backend(key: &[u8], backend: Backend) -> Option<AesXts> {
        let (k1, k2) = key.split_at(key.len() / 2);
        Some(AesXts {
            data: AesModes::with_backend(k1, backend)?,
            tweak: AesModes::with_backend(k2, backend)?,
        })
    }

    /// The backend that runs.
    pub fn backend(&self) -> Backend {
        self.data.backend
    }

    fn initial_tweak(&self, iv: &[u8; 16]) -> u128 {
        let mut t = *iv;
        self.tweak.ecb_encrypt(&mut t);
        u128::from_le_bytes(t)
    }

    /// Encrypts one data unit (at least 16 bytes) whose IV is `iv`, with
    /// ciphertext stealing for a partial last block (IEEE 1619 §5.3.2).
    ///
    /// # Panics
    /// If `data` is shorter than a block.
    pub fn encrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        xts_encrypt_with(self.initial_tweak(iv), data, |t, d, e| {
            self.data.xts_blocks(t, d, e)
        })
    }

    /// Decrypts one data unit encrypted by [`AesXts::encrypt`].
    ///
    /// # Panics
    /// If `data` is shorter than a block.
    pub fn decrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        xts_decrypt_with(self.initial_tweak(iv), data, |t, d, e| {
            self.data.xts_blocks(t, d, e)
        })
    }
}

/// XTS encryption of one data unit from its initial tweak `t`, with
/// ciphertext stealing for a partial last block (IEEE 1619 §5.3.2), over a
/// backend's XTS of whole blocks (`blocks(tweak, data, encrypt)`, the tweak
/// advancing): shared by [`AesXts`] and the SSSE3 code's XTS.
///
/// # Panics
/// If `data` is shorter than a block.
pub(crate) fn xts_encrypt_with(
    mut t: u128,
    data: &mut [u8],
    mut blocks: impl FnMut(&mut u128, &mut [u8], bool),
) {
    assert!(data.len() >= BLOCK, "XTS needs at least one full block");
    let tail = data.len() % BLOCK;
    let full = data.len() - tail;
    blocks(&mut t, &mut data[..full], true);
    if tail == 0 {
        return;
    }
    // Steal: the last full ciphertext block gives its head to the partial block.
    let (head, partial) = data.split_at_mut(full);
    let last_full = &mut head[full - BLOCK..];
    let mut pp = [0u8; 16];
    pp[..tail].copy_from_slice(partial);
    pp[tail..].copy_from_slice(&last_full[tail..]);
    partial.copy_from_slice(&last_full[..tail]);
    blocks(&mut t, &mut pp, true);
    last_full.copy_from_slice(&pp);
}

/// The decryption of [`xts_encrypt_with`].
///
/// # Panics
/// If `data` is shorter than a block.
pub(crate) fn xts_decrypt_with(
    mut t: u128,
    data: &mut [u8],
    mut blocks: impl FnMut(&mut u128, &mut [u8], bool),
) {
    assert!(data.len() >= BLOCK, "XTS needs at least one full block");
    let tail = data.len() % BLOCK;
    if tail == 0 {
        blocks(&mut t, data, false);
        return;
    }
    let full = data.len() - tail;
    blocks(&mut t, &mut data[..full - BLOCK], false);
    let (head, partial) = data.split_at_mut(full);
    let last_full = &mut head[full - BLOCK..];
    let mut pp = [0u8; 16];
    pp.copy_from_slice(last_full);
    blocks(&mut mul_alpha(t), &mut pp, false);
    let mut cc = [0u8; 16];
    cc[..tail].copy_from_slice(partial);
    cc[tail..].copy_from_slice(&pp[tail..]);
    partial.copy_from_slice(&pp[..tail]);
    blocks(&mut t, &mut cc, false);
    last_full.copy_from_slice(&cc);
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) mod tests;

/// AES-256 on our x86 kernels behind the `cipher` crate's block-cipher traits,
/// for constructions written over those traits (Adiantum, HCTR2), so that they
/// follow the CPU mask as the other AES rows do. Eight blocks per parallel call.
#[cfg(target_arch = "x86_64")]
pub struct KernelAes256(AesModes);

#[cfg(target_arch = "x86_64")]
mod kernel_traits {
    use super::{AesModes, KernelAes256};
    use cipher::consts::{U8, U16, U32};
    use cipher::{
        AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
        BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
        InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
    };

    impl KeySizeUser for KernelAes256 {
        type KeySize = U32;
    }

    impl KeyInit for KernelAes256 {
        /// # Panics
        /// When the dispatch does not pick one of our x86 kernels (callers
        /// choose this type only when it does).
        fn new(key: &Key<Self>) -> Self {
            Self::new_from_slice(key).expect("an x86 AES kernel for this tier")
        }

        fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
            if key.len() != 32 {
                return Err(InvalidLength);
            }
            AesModes::new(key).map(KernelAes256).ok_or(InvalidLength)
        }
    }

    impl BlockSizeUser for KernelAes256 {
        type BlockSize = U16;
    }

    impl ParBlocksSizeUser for KernelAes256 {
        type ParBlocksSize = U8;
    }

    /// Runs ECB over `n` blocks copied out of an in/out pair (the kernels
    /// work in place on bytes).
    fn ecb<const N: usize>(
        m: &AesModes,
        input: &[Block<KernelAes256>],
        out: &mut [Block<KernelAes256>],
        enc: bool,
    ) {
        let mut buf = [0u8; 16 * 8];
        let buf = &mut buf[..16 * N];
        for (chunk, b) in buf.chunks_exact_mut(16).zip(input) {
            chunk.copy_from_slice(b);
        }
        if enc {
            m.ecb_encrypt(buf);
        } else {
            m.ecb_decrypt(buf);
        }
        for (chunk, b) in buf.chunks_exact(16).zip(out) {
            b.copy_from_slice(chunk);
        }
    }

    impl BlockCipherEncBackend for KernelAes256 {
        fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
            let input = *block.get_in();
            ecb::<1>(
                &self.0,
                &[input],
                core::slice::from_mut(block.get_out()),
                true,
            );
        }

        fn encrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
            let input = *blocks.get_in();
            ecb::<8>(&self.0, &input, blocks.get_out(), true);
        }
    }

    impl BlockCipherDecBackend for KernelAes256 {
        fn decrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
            let input = *block.get_in();
            ecb::<1>(
                &self.0,
                &[input],
                core::slice::from_mut(block.get_out()),
                false,
            );
        }

        fn decrypt_par_blocks(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
            let input = *blocks.get_in();
            ecb::<8>(&self.0, &input, blocks.get_out(), false);
        }
    }

    impl BlockCipherEncrypt for KernelAes256 {
        fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
            f.call(self)
        }
    }

    impl BlockCipherDecrypt for KernelAes256 {
        fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
            f.call(self)
        }
    }

    impl AlgorithmName for KernelAes256 {
        fn write_alg_name(f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("AES-256")
        }
    }
}
