//! ChaCha20-Poly1305 (RFC 8439 section 2.8) from our ChaCha kernels
//! ([`crate::chacha`]) and our Poly1305 ([`crate::wide::poly1305`]).
//!
//! Why ours: on aarch64 without the crypto extensions (Raspberry Pi 3/4) our
//! NEON ChaCha20 and radix-2^64 Poly1305 execute fewer instructions per byte
//! than AWS-LC's, and the kernel follows `CLUSTERCRYPT_DISABLE_HWF`;
//! [`crate::dispatch::chacha20_poly1305`] decides where it runs.
//!
//! Sealing runs ChaCha20 over a [`CHUNK`] and then Poly1305 over the same
//! bytes while they are in L1. Opening authenticates the whole ciphertext
//! first and decrypts only when the tag matches, so no unauthenticated
//! plaintext is ever written.
//!
//! On x86-64 with AVX2 and BMI2, or SSSE3, there is also the stitched variant
//! ([`ChaCha20Poly1305::new_stitched`], `crate::chacha::x86_avx2_poly1305`
//! and `crate::chacha::x86_ssse3_poly1305`): one pass in which Poly1305 runs
//! on the integer units between the vector ChaCha rounds. Its opening
//! decrypts while it hashes; on a bad tag it encrypts the data again, so the
//! caller still gets back what it passed.

use zeroize::Zeroizing;

use super::{AuthError, NONCE_LEN, TAG_LEN};
use crate::chacha::{self, KEY_LEN};
use crate::dispatch::{ChaChaImpl, ChaChaPolyImpl};
use crate::wide::poly1305::Poly1305Hash;

/// Bytes per ChaCha20 pass of [`ChaCha20Poly1305::seal`], then Poly1305 over
/// them: half the 32 KiB L1 data cache of the Cortex-A53/A72, and a
/// multiple of every kernel's batch (at most 16 blocks of 64 bytes).
pub const CHUNK: usize = 16 * 1024;

/// The longest plaintext or ciphertext, in bytes. RFC 8439 section 2.8 allows
/// `2^38 - 64` (blocks 1 to `2^32 - 1`); our ChaCha kernels, as the `chacha20`
/// crate, never use block `2^32 - 1`, so one block less.
pub const MAX_DATA_LEN: u64 = (u32::MAX as u64 - 1) * chacha::BLOCK as u64;

/// The shortest data (bytes) an IFMA key ([`ChaCha20Poly1305::new_ifma`])
/// seals on IFMA; shorter data takes the stitched AVX2 pass. IFMA first
/// raises `r` to the powers its eight lanes need, and ChaCha20 on AVX-512
/// makes 16 blocks a batch: fixed costs that long data spreads thin. On the
/// 2-core Zen 4 VM (`examples/chacha_poly_versus_aws_lc.rs --request N`,
/// best of 5 alternating rounds, seal MiB/s, stitched AVX2 against IFMA):
/// 512 B 1125 / 874, 2 KiB 2210 / 2134, 4 KiB 2652 / 2747, 64 KiB 3246 /
/// 3744.
const IFMA_SEAL_FROM: usize = 4096;

/// [`IFMA_SEAL_FROM`] for opening, where the stitched pass hashes each batch
/// in the same pass that decrypts it and so stays ahead longer: open MiB/s,
/// stitched AVX2 against IFMA, 4 KiB 3138 / 2742, 8 KiB 3028 / 3147.
const IFMA_OPEN_FROM: usize = 8192;

/// A ChaCha20-Poly1305 key and the ChaCha kernel that runs it.
pub struct ChaCha20Poly1305 {
    key: Zeroizing<[u8; KEY_LEN]>,
    imp: ChaChaImpl,
    poly: Poly,
    /// An IFMA key's kernel for data under [`IFMA_SEAL_FROM`] or
    /// [`IFMA_OPEN_FROM`]: stitched AVX2 where the CPU has it (every CPU
    /// with IFMA so far), else none and IFMA runs every length.
    short: Option<ChaChaImpl>,
}

/// How Poly1305 runs with the ChaCha kernel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Poly {
    /// One block at a time, over each [`CHUNK`] after ChaCha20.
    After,
    /// One block at a time on the integer units, stitched between the vector
    /// ChaCha rounds (AVX2 or SSSE3) in one pass.
    Stitched,
    /// Eight blocks a vector on AVX-512 IFMA, over each [`CHUNK`] after
    /// ChaCha20 on AVX-512.
    Ifma,
}

/// Whether this CPU can run [`ChaCha20Poly1305::new_stitched`] on the ChaCha
/// kernel `imp`: x86-64 with AVX2 and BMI2 ([`ChaChaImpl::Avx2`]) or with
/// SSSE3 ([`ChaChaImpl::Ssse3`]); the detected features, ignoring the mask.
pub fn stitched_runnable(imp: ChaChaImpl) -> bool {
    #[cfg(target_arch = "x86_64")]
    return match imp {
        ChaChaImpl::Avx2 => chacha::x86_avx2_poly1305::runnable(),
        ChaChaImpl::Ssse3 => chacha::x86_ssse3_poly1305::runnable(),
        _ => false,
    };
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = imp;
        false
    }
}

/// Whether this CPU can run [`ChaCha20Poly1305::new_ifma`]: x86-64 with
/// AVX-512 F and IFMA; the detected features, ignoring the mask.
pub fn ifma_runnable() -> bool {
    #[cfg(target_arch = "x86_64")]
    return chacha::runnable(ChaChaImpl::Avx512) && crate::wide::poly1305_ifma::runnable();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The stitched implementations this CPU can run ([`stitched_runnable`]),
/// best first.
pub fn stitched_implementations() -> Vec<ChaChaPolyImpl> {
    [ChaChaImpl::Avx2, ChaChaImpl::Ssse3]
        .into_iter()
        .filter(|&imp| stitched_runnable(imp))
        .map(ChaChaPolyImpl::stitched)
        .collect()
}

impl ChaCha20Poly1305 {
    /// Keys the AEAD to run on ChaCha kernel `imp`.
    ///
    /// # Panics
    /// If this CPU cannot run `imp` ([`chacha::runnable`]).
    pub fn new(imp: ChaChaImpl, key: &[u8; KEY_LEN]) -> Self {
        assert!(chacha::runnable(imp), "ChaCha backend {}", imp.name());
        ChaCha20Poly1305 {
            key: Zeroizing::new(*key),
            imp,
            poly: Poly::After,
            short: None,
        }
    }

    /// Keys the AEAD to run ChaCha20 on kernel `imp` (AVX2 or SSSE3)
    /// stitched with Poly1305.
    ///
    /// # Panics
    /// If this CPU cannot run it ([`stitched_runnable`]).
    pub fn new_stitched(imp: ChaChaImpl, key: &[u8; KEY_LEN]) -> Self {
        assert!(
            stitched_runnable(imp),
            "stitched ChaCha20-Poly1305 on {}: not on this CPU",
            imp.name()
        );
        ChaCha20Poly1305 {
            key: Zeroizing::new(*key),
            imp,
            poly: Poly::Stitched,
            short: None,
        }
    }

    /// Keys the AEAD to run ChaCha20 on AVX-512 and Poly1305 on AVX-512 IFMA.
    ///
    /// # Panics
    /// If this CPU cannot run it ([`ifma_runnable`]).
    pub fn new_ifma(key: &[u8; KEY_LEN]) -> Self {
        assert!(
            ifma_runnable(),
            "ChaCha20-Poly1305 on AVX-512 IFMA: not on this CPU"
        );
        ChaCha20Poly1305 {
            key: Zeroizing::new(*key),
            imp: ChaChaImpl::Avx512,
            poly: Poly::Ifma,
            short: stitched_runnable(ChaChaImpl::Avx2).then_some(ChaChaImpl::Avx2),
        }
    }

    /// The ChaCha kernel this key runs on.
    pub fn imp(&self) -> ChaChaImpl {
        self.imp
    }

    /// The implementation this key runs, as the dispatch names it (for
    /// long data: see [`ChaCha20Poly1305::name_for`]).
    pub fn implementation(&self) -> ChaChaPolyImpl {
        Self::implementation_of((self.imp, self.poly))
    }

    fn implementation_of((imp, poly): (ChaChaImpl, Poly)) -> ChaChaPolyImpl {
        match poly {
            Poly::After => ChaChaPolyImpl::Ours(imp),
            Poly::Stitched => ChaChaPolyImpl::stitched(imp),
            Poly::Ifma => ChaChaPolyImpl::Avx512Ifma,
        }
    }

    /// What seals and opens `len` bytes, as rows report it: an IFMA key runs
    /// short data stitched on AVX2, and from [`IFMA_SEAL_FROM`] up to
    /// [`IFMA_OPEN_FROM`] it seals on IFMA but opens stitched (named
    /// `seal/open`).
    pub fn name_for(&self, len: usize) -> &'static str {
        let seal = Self::implementation_of(self.plan(len, true));
        let open = Self::implementation_of(self.plan(len, false));
        match (seal, open) {
            (s, o) if s == o => s.name(),
            (ChaChaPolyImpl::Avx512Ifma, ChaChaPolyImpl::Avx2Stitched) => {
                "avx512+poly1305-ifma/avx2+poly1305-stitched"
            }
            _ => self.implementation().name(),
        }
    }

    /// How this key runs `len` bytes of sealing (`seal`) or opening: the
    /// ChaCha kernel and the Poly1305 mode.
    fn plan(&self, len: usize, seal: bool) -> (ChaChaImpl, Poly) {
        let from = if seal { IFMA_SEAL_FROM } else { IFMA_OPEN_FROM };
        match self.short {
            Some(imp) if self.poly == Poly::Ifma && len < from => (imp, Poly::Stitched),
            _ => (self.imp, self.poly),
        }
    }

    /// XORs the key stream from block `counter` into `data`; the caller has
    /// checked the length against [`MAX_DATA_LEN`].
    fn xor(&self, nonce: &[u8; NONCE_LEN], counter: u32, data: &mut [u8]) {
        chacha::xor_keystream_with::<20>(self.imp, &self.key, nonce, counter, data)
            .expect("length checked against MAX_DATA_LEN");
    }

    /// The one-time Poly1305 key (RFC 8439 section 2.6: the first 32 bytes of
    /// block 0), as a hash keyed with `r` that has absorbed `aad || pad16`,
    /// and `s`.
    fn mac_start(
        &self,
        poly: Poly,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
    ) -> (Poly1305Hash, Zeroizing<[u8; 16]>) {
        Self::mac_keyed(
            &chacha::keystream_block::<20>(&self.key, nonce, 0),
            poly,
            aad,
        )
    }

    /// [`ChaCha20Poly1305::mac_start`] from block 0.
    fn mac_keyed(
        block0: &[u8; chacha::BLOCK],
        poly: Poly,
        aad: &[u8],
    ) -> (Poly1305Hash, Zeroizing<[u8; 16]>) {
        let r = block0[..16].try_into().expect("16 bytes");
        #[cfg(target_arch = "x86_64")]
        let mut mac = if poly == Poly::Ifma {
            Poly1305Hash::new_ifma(r)
        } else {
            Poly1305Hash::new(r)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let mut mac = {
            let _ = poly;
            Poly1305Hash::new(r)
        };
        let s = Zeroizing::new(block0[16..32].try_into().expect("16 bytes"));
        mac.update_padded(aad);
        (mac, s)
    }

    /// The tag after the ciphertext: `le64(aad_len) || le64(ct_len)`, then `+ s`.
    fn mac_finish(
        mac: &mut Poly1305Hash,
        s: &[u8; 16],
        aad_len: usize,
        ct_len: usize,
    ) -> [u8; TAG_LEN] {
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
        lens[8..].copy_from_slice(&(ct_len as u64).to_le_bytes());
        mac.update_blocks(&lens);
        mac.tag(s)
    }

    /// Encrypts `data` in place and returns the tag.
    ///
    /// # Panics
    /// If `data` is longer than [`MAX_DATA_LEN`].
    pub fn seal(&self, nonce: &[u8; NONCE_LEN], aad: &[u8], data: &mut [u8]) -> [u8; TAG_LEN] {
        assert!(
            data.len() as u64 <= MAX_DATA_LEN,
            "ChaCha20-Poly1305: message too long"
        );
        let (imp, poly) = self.plan(data.len(), true);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = imp;
        #[cfg(target_arch = "x86_64")]
        if poly == Poly::Stitched {
            let (done, mut mac, s) =
                if imp == ChaChaImpl::Avx2 && data.len() >= chacha::x86_avx2_poly1305::BATCH {
                    // Block 0 beside the first batch: see `seal_keyed`.
                    chacha::x86_avx2_poly1305::seal_keyed(&self.key, nonce, data, |block0| {
                        Self::mac_keyed(block0, poly, aad)
                    })
                } else {
                    let (mut mac, s) = self.mac_start(poly, nonce, aad);
                    let done = self.stitched_batches(imp, nonce, data, &mut mac, true);
                    (done, mac, s)
                };
            let rest = &mut data[done..];
            self.xor(nonce, 1 + (done / chacha::BLOCK) as u32, rest);
            mac.update_padded(rest);
            return Self::mac_finish(&mut mac, &s, aad.len(), data.len());
        }
        let (mut mac, s) = self.mac_start(poly, nonce, aad);
        let mut counter = 1u32;
        for chunk in data.chunks_mut(CHUNK) {
            self.xor(nonce, counter, chunk);
            // Every chunk but the last is whole blocks; the last gets pad16.
            mac.update_padded(chunk);
            counter = counter.wrapping_add((CHUNK / chacha::BLOCK) as u32);
        }
        Self::mac_finish(&mut mac, &s, aad.len(), data.len())
    }

    /// Verifies `tag` over `aad` and the ciphertext `data`, and only then
    /// decrypts `data` in place. On failure `data` is left as it was.
    pub fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), AuthError> {
        if data.len() as u64 > MAX_DATA_LEN {
            return Err(AuthError);
        }
        let (imp, poly) = self.plan(data.len(), false);
        let (mut mac, s) = self.mac_start(poly, nonce, aad);
        #[cfg(target_arch = "x86_64")]
        if poly == Poly::Stitched {
            return self.open_stitched(imp, nonce, aad, data, tag, mac, &s);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = imp;
        mac.update_padded(data);
        let want = Zeroizing::new(Self::mac_finish(&mut mac, &s, aad.len(), data.len()));
        if !super::tags_equal(&want, tag) {
            return Err(AuthError);
        }
        self.xor(nonce, 1, data);
        Ok(())
    }

    /// The stitched pass of sealing (`seal`) or opening on kernel `imp`
    /// (AVX2 or SSSE3) over the whole batches of `data`, from block 1;
    /// returns the bytes done.
    #[cfg(target_arch = "x86_64")]
    fn stitched_batches(
        &self,
        imp: ChaChaImpl,
        nonce: &[u8; NONCE_LEN],
        data: &mut [u8],
        mac: &mut Poly1305Hash,
        seal: bool,
    ) -> usize {
        use chacha::{x86_avx2_poly1305 as avx2, x86_ssse3_poly1305 as ssse3};
        match imp {
            ChaChaImpl::Avx2 if seal => avx2::seal(&self.key, nonce, 1, data, mac),
            ChaChaImpl::Avx2 => avx2::open(&self.key, nonce, 1, data, mac),
            _ => ssse3::apply(&self.key, nonce, 1, data, mac, seal),
        }
    }

    /// [`ChaCha20Poly1305::open`] in the stitched pass: decrypts while it
    /// hashes, and on a bad tag encrypts `data` back as it was.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::too_many_arguments, reason = "the parts of `open`, passed on")]
    fn open_stitched(
        &self,
        imp: ChaChaImpl,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8; TAG_LEN],
        mut mac: Poly1305Hash,
        s: &[u8; 16],
    ) -> Result<(), AuthError> {
        let done = self.stitched_batches(imp, nonce, data, &mut mac, false);
        let rest = &mut data[done..];
        mac.update_padded(rest);
        self.xor(nonce, 1 + (done / chacha::BLOCK) as u32, rest);
        let want = Zeroizing::new(Self::mac_finish(&mut mac, s, aad.len(), data.len()));
        if !super::tags_equal(&want, tag) {
            // XOR the same key stream again: the ciphertext, as it came.
            self.xor(nonce, 1, data);
            return Err(AuthError);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
