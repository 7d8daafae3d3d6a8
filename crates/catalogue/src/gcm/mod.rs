//! AES-GCM of our own (NIST SP 800-38D) where it beats AWS-LC: our AES CTR
//! kernels ([`crate::aes::AesModes`]) and GHASH computed as POLYVAL
//! (RFC 8452 appendix A: GHASH(H, X) = rev(POLYVAL(mulX(rev H), rev X))) with
//! carry-less multiplies, the products of 8 or 16 blocks summed before one
//! reduction. One backend per instruction set: `aarch64_pmull` (PMULL, a
//! Raspberry Pi 5), [`x86_vpclmul`] (VPCLMULQDQ on 256-bit registers, the
//! Zen 3 kind of x86 without AVX-512), [`x86_pclmul`] (PCLMULQDQ on
//! 128-bit registers, x86 with AES-NI but no VAES) and [`x86_pshufb`] (no
//! carry-less multiply: constant-time 4-bit tables looked up with PSHUFB,
//! under the portable tier's bitsliced AES);
//! [`crate::dispatch::aes_gcm`] decides, AWS-LC runs everywhere else.
//!
//! The data is processed in chunks that stay in L1 between the CTR pass and
//! the GHASH pass; decryption hashes the ciphertext and checks the tag before
//! it decrypts anything. Except with AES-NI and [`x86_pclmul`]: there the
//! two passes one after the other were 0.9x libgcrypt's stitched code, so
//! [`x86_aesni_stitched`] runs CTR and GHASH in one loop over the 128-byte
//! batches. Its decryption hashes and decrypts each batch together; if the
//! tag then fails, the batches are encrypted again, so the caller's buffer
//! is the ciphertext again and no plaintext is returned.

// On 32-bit ARM no GHASH backend exists: `GhashImpl` has no variant and the
// code is dead there (AWS-LC runs); it stays compiled, one source for all.
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

use crate::aes::AesModes;

#[cfg(target_arch = "aarch64")]
mod aarch64_pmull;
// No GHASH of ours on 32-bit ARM to test (nor AES kernels: `aes::tests`).
#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86_aesni_stitched;
#[cfg(target_arch = "x86_64")]
mod x86_pclmul;
#[cfg(target_arch = "x86_64")]
mod x86_pshufb;
#[cfg(target_arch = "x86_64")]
mod x86_vpclmul;

/// Bytes one CTR pass covers before GHASH reads them back (fits in L1).
const CHUNK: usize = 8 * 1024;
/// The longest plaintext GCM allows: 2^32 - 2 blocks (SP 800-38D §5.2.1.1).
pub const MAX_DATA: u64 = (1 << 36) - 32;

/// The GHASH implementations of this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GhashImpl {
    /// PMULL on aarch64, 8 blocks per reduction.
    #[cfg(target_arch = "aarch64")]
    Pmull,
    /// VPCLMULQDQ on 256-bit registers (with AVX2), 16 blocks per reduction.
    #[cfg(target_arch = "x86_64")]
    Vpclmul256,
    /// PCLMULQDQ on 128-bit registers (with SSSE3), 8 blocks per reduction.
    #[cfg(target_arch = "x86_64")]
    Pclmul128,
    /// No carry-less multiply: 4-bit tables looked up with PSHUFB (SSSE3),
    /// constant time, 4 blocks per pass ([`x86_pshufb`]).
    #[cfg(target_arch = "x86_64")]
    Pshufb,
}

impl GhashImpl {
    /// Every implementation compiled in.
    pub const ALL: &'static [GhashImpl] = &[
        #[cfg(target_arch = "aarch64")]
        GhashImpl::Pmull,
        #[cfg(target_arch = "x86_64")]
        GhashImpl::Vpclmul256,
        #[cfg(target_arch = "x86_64")]
        GhashImpl::Pclmul128,
        #[cfg(target_arch = "x86_64")]
        GhashImpl::Pshufb,
    ];

    /// The name rows report.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(target_arch = "aarch64")]
            GhashImpl::Pmull => "pmull",
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Vpclmul256 => "vpclmul256",
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Pclmul128 => "pclmul128",
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Pshufb => "pshufb",
        }
    }

    /// Whether the hardware runs it (the mask aside: tests use every one).
    pub fn runnable(self) -> bool {
        let f = crate::cpu::detected();
        match self {
            #[cfg(target_arch = "aarch64")]
            GhashImpl::Pmull => f.pmull,
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Vpclmul256 => f.pmull && f.vpclmul && f.avx2,
            // SSSE3 (PSHUFB) is older than every CPU with PCLMULQDQ, but checked.
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Pclmul128 => f.pmull && std::arch::is_x86_feature_detected!("ssse3"),
            #[cfg(target_arch = "x86_64")]
            GhashImpl::Pshufb => std::arch::is_x86_feature_detected!("ssse3"),
        }
    }
}

/// POLYVAL's multiplication by x (RFC 8452 appendix A), little-endian.
fn mul_x(v: u128) -> u128 {
    (v << 1) ^ ((v >> 127) * 0xc200_0000_0000_0000_0000_0000_0000_0001)
}

/// `H^16, H^15, .., H^1` in POLYVAL's field (the order the kernels load).
pub(crate) type Powers = [u128; 16];

/// A GHASH key in POLYVAL form: `H` and its powers, computed once per AES
/// key (15 field multiplications), not once per message.
struct GhashKey {
    imp: GhashImpl,
    powers: Powers,
    /// [`GhashImpl::Pshufb`]'s tables of `H^1..H^4` (empty for the others).
    #[cfg(target_arch = "x86_64")]
    tables: Vec<x86_pshufb::Table>,
}

impl Drop for GhashKey {
    fn drop(&mut self) {
        self.powers.zeroize();
        #[cfg(target_arch = "x86_64")]
        self.tables.zeroize();
    }
}

impl GhashKey {
    /// `h`: the 16 bytes of AES_K(0), as SP 800-38D defines H.
    fn new(imp: GhashImpl, h: &[u8; 16]) -> GhashKey {
        assert!(
            imp.runnable(),
            "GHASH backend {} not on this CPU",
            imp.name()
        );
        let h = mul_x(u128::from_be_bytes(*h));
        let mut powers = [0u128; 16];
        let mut p = h;
        for k in (0..16).rev() {
            powers[k] = p;
            if k > 0 {
                p = GhashKey::mul(imp, p, h);
            }
        }
        #[cfg(target_arch = "x86_64")]
        let tables = match imp {
            // H^1..H^BATCH (`powers` runs from H^16 down to H^1).
            GhashImpl::Pshufb => powers[16 - x86_pshufb::BATCH..]
                .iter()
                .rev()
                .map(|&p| x86_pshufb::table(p))
                .collect(),
            _ => Vec::new(),
        };
        GhashKey {
            imp,
            powers,
            #[cfg(target_arch = "x86_64")]
            tables,
        }
    }

    /// A running hash of a new message.
    fn start(&self) -> Ghash<'_> {
        Ghash { key: self, acc: 0 }
    }

    fn mul(imp: GhashImpl, a: u128, b: u128) -> u128 {
        // SAFETY: `new` checked that the CPU has the backend's features.
        unsafe {
            match imp {
                #[cfg(target_arch = "aarch64")]
                GhashImpl::Pmull => aarch64_pmull::mul(a, b),
                #[cfg(target_arch = "x86_64")]
                GhashImpl::Vpclmul256 | GhashImpl::Pclmul128 => x86_pclmul::mul(a, b),
                #[cfg(target_arch = "x86_64")]
                GhashImpl::Pshufb => x86_pshufb::dot(a, b),
            }
        }
    }
}

/// A running GHASH under a key.
struct Ghash<'k> {
    key: &'k GhashKey,
    acc: u128,
}

impl Drop for Ghash<'_> {
    fn drop(&mut self) {
        self.acc.zeroize();
    }
}

impl Ghash<'_> {
    /// Absorbs `data`, the last partial block padded with zeros.
    fn update_padded(&mut self, data: &[u8]) {
        let whole = data.len() / 16 * 16;
        self.blocks(&data[..whole]);
        if whole < data.len() {
            let mut last = [0u8; 16];
            last[..data.len() - whole].copy_from_slice(&data[whole..]);
            self.blocks(&last);
            last.zeroize();
        }
    }

    /// Absorbs whole blocks.
    fn blocks(&mut self, data: &[u8]) {
        debug_assert_eq!(data.len() % 16, 0);
        let k = self.key;
        // SAFETY: `GhashKey::new` checked that the CPU has the backend's features.
        unsafe {
            match k.imp {
                #[cfg(target_arch = "aarch64")]
                GhashImpl::Pmull => aarch64_pmull::update(&mut self.acc, &k.powers, data),
                #[cfg(target_arch = "x86_64")]
                GhashImpl::Vpclmul256 => x86_vpclmul::update(&mut self.acc, &k.powers, data),
                #[cfg(target_arch = "x86_64")]
                GhashImpl::Pclmul128 => x86_pclmul::update(&mut self.acc, &k.powers, data),
                #[cfg(target_arch = "x86_64")]
                GhashImpl::Pshufb => {
                    let tables = k.tables[..].try_into().expect("four tables");
                    x86_pshufb::update(&mut self.acc, tables, data)
                }
            }
        }
    }

    /// The GHASH value as SP 800-38D's bytes.
    fn value(&self) -> [u8; 16] {
        self.acc.to_be_bytes()
    }
}

/// The AES under AES-GCM: our AES-instruction kernels, or the catalogue's
/// block modes (the portable x86-64 tier's bitsliced AES, whose CTR keeps
/// scratch state and so runs under a lock, uncontended: one AES-GCM per
/// worker).
#[expect(
    clippy::large_enum_variant,
    reason = "one per key, built once and never moved on the data path"
)]
// Only x86-64 has a GHASH for the catalogue's (non-kernel) AES.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
enum GcmAes {
    Kernels(AesModes),
    Modes(std::sync::Mutex<Box<dyn crate::op::CipherModes>>),
}

impl GcmAes {
    fn name(&self) -> &'static str {
        match self {
            GcmAes::Kernels(m) => m.backend().name(),
            GcmAes::Modes(m) => m.lock().expect("not poisoned").backend(),
        }
    }

    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn kernels(&self) -> Option<&AesModes> {
        match self {
            GcmAes::Kernels(m) => Some(m),
            GcmAes::Modes(_) => None,
        }
    }

    /// CTR from `ctr` (big-endian over the block; advances).
    fn ctr_apply(&self, ctr: &mut [u8; 16], data: &mut [u8]) {
        match self {
            GcmAes::Kernels(m) => m.ctr_apply(ctr, data),
            GcmAes::Modes(m) => m.lock().expect("not poisoned").ctr_apply(ctr, data),
        }
    }

    /// Encrypts one block.
    fn encrypt_block(&self, block: &mut [u8; 16]) {
        match self {
            GcmAes::Kernels(m) => m.ecb_encrypt(block),
            GcmAes::Modes(m) => m.lock().expect("not poisoned").ecb_encrypt(block),
        }
    }
}

/// AES-GCM with a 96-bit nonce and a 128-bit tag on our kernels.
pub struct AesGcm {
    aes: GcmAes,
    ghash: GhashKey,
    /// AES-NI and [`GhashImpl::Pclmul128`] in one loop
    /// ([`x86_aesni_stitched`]) for the whole 128-byte batches.
    stitched: bool,
}

impl AesGcm {
    /// Keys AES-GCM (16, 24 or 32-byte key) with the AES backend the dispatch
    /// picks and GHASH `imp`; `None` if the key length is wrong, the AES
    /// backend is not one of ours or the CPU lacks `imp`.
    pub fn new(key: &[u8], imp: GhashImpl) -> Option<AesGcm> {
        if let Some(aes) = AesModes::new(key) {
            return AesGcm::with_aes(aes, imp);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::dispatch::aes() == crate::dispatch::AesImpl::Ssse3 {
            return AesGcm::with_modes(crate::op::ssse3_aes_modes(key).ok()?, imp);
        }
        None
    }

    /// As [`AesGcm::new`] on a keyed AES of the caller's choice (tests run
    /// every backend).
    pub fn with_aes(aes: AesModes, imp: GhashImpl) -> Option<AesGcm> {
        AesGcm::keyed(GcmAes::Kernels(aes), imp)
    }

    /// As [`AesGcm::new`] on the catalogue's AES block modes (16, 24 or
    /// 32-byte key; tests run the portable tier's bitsliced AES this way).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn with_modes(
        aes: Box<dyn crate::op::CipherModes>,
        imp: GhashImpl,
    ) -> Option<AesGcm> {
        AesGcm::keyed(GcmAes::Modes(std::sync::Mutex::new(aes)), imp)
    }

    fn keyed(aes: GcmAes, imp: GhashImpl) -> Option<AesGcm> {
        if !imp.runnable() {
            return None;
        }
        let mut h = [0u8; 16];
        aes.encrypt_block(&mut h);
        let ghash = GhashKey::new(imp, &h);
        h.zeroize();
        #[cfg(target_arch = "x86_64")]
        let stitched = aes.kernels().map(|m| m.backend()) == Some(crate::aes::Backend::AesNi)
            && imp == GhashImpl::Pclmul128
            && x86_aesni_stitched::runnable();
        #[cfg(not(target_arch = "x86_64"))]
        let stitched = false;
        Some(AesGcm {
            aes,
            ghash,
            stitched,
        })
    }

    /// The GHASH backend.
    pub fn ghash(&self) -> GhashImpl {
        self.ghash.imp
    }

    /// The implementation's name: AES backend and GHASH backend.
    pub fn name(&self) -> String {
        format!("{}+{}", self.aes.name(), self.ghash.imp.name())
    }

    /// The stitched loop over the whole 128-byte batches of `data`, if it
    /// runs here: CTR from `ctr` (advances), GHASH of the ciphertext into
    /// `ghash`; returns the bytes done (0 where it does not run).
    fn stitched(
        &self,
        ctr: &mut [u8; 16],
        ghash: &mut Ghash,
        data: &mut [u8],
        open: bool,
    ) -> usize {
        if !self.stitched {
            return 0;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let (keys, nr) = self
                .aes
                .kernels()
                .expect("stitched runs on kernels")
                .enc_keys();
            let mut c = u128::from_be_bytes(*ctr);
            let k = &self.ghash.powers;
            // SAFETY: `with_aes` checked `x86_aesni_stitched::runnable`.
            let done = unsafe {
                x86_aesni_stitched::apply(keys, nr, k, &mut c, &mut ghash.acc, data, open)
            };
            *ctr = c.to_be_bytes();
            done
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (ctr, ghash, data, open);
            unreachable!("stitched is x86-64 only")
        }
    }

    /// The tag mask `E_K(J0)` and the first data counter `inc32(J0)`.
    fn j0(&self, nonce: &[u8; 12]) -> ([u8; 16], [u8; 16]) {
        let mut j0 = [0u8; 16];
        j0[..12].copy_from_slice(nonce);
        j0[15] = 1;
        let mut ctr = j0;
        ctr[15] = 2;
        self.aes.encrypt_block(&mut j0);
        (j0, ctr)
    }

    /// The tag over `aad` and the ciphertext `ct`, masked with `mask`.
    fn tag(ghash: &mut Ghash, aad_len: usize, ct_len: usize, mask: &[u8; 16]) -> [u8; 16] {
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(aad_len as u64 * 8).to_be_bytes());
        lens[8..].copy_from_slice(&(ct_len as u64 * 8).to_be_bytes());
        ghash.blocks(&lens);
        let mut tag = ghash.value();
        for (t, m) in tag.iter_mut().zip(mask) {
            *t ^= m;
        }
        tag
    }

    fn check_len(len: usize) {
        assert!(
            len as u64 <= MAX_DATA,
            "AES-GCM takes at most {MAX_DATA} bytes per nonce, not {len}"
        );
    }

    /// Encrypts `data` in place and returns the tag.
    ///
    /// # Panics
    /// If `data` is longer than [`MAX_DATA`].
    pub fn seal(&self, nonce: &[u8; 12], aad: &[u8], data: &mut [u8]) -> [u8; 16] {
        AesGcm::check_len(data.len());
        let (mut mask, mut ctr) = self.j0(nonce);
        let mut ghash = self.ghash.start();
        ghash.update_padded(aad);
        let done = self.stitched(&mut ctr, &mut ghash, data, false);
        for chunk in data[done..].chunks_mut(CHUNK) {
            self.aes.ctr_apply(&mut ctr, chunk);
            ghash.update_padded(chunk);
        }
        let tag = AesGcm::tag(&mut ghash, aad.len(), data.len(), &mask);
        mask.zeroize();
        tag
    }

    /// Checks `tag` over `aad` and the ciphertext `data`, then decrypts
    /// `data` in place; on failure `data` is left as it was (no plaintext).
    pub fn open(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), crate::aead::AuthError> {
        if data.len() as u64 > MAX_DATA {
            return Err(crate::aead::AuthError);
        }
        let (mut mask, first) = self.j0(nonce);
        let mut ghash = self.ghash.start();
        ghash.update_padded(aad);
        // The stitched loop decrypts while it hashes; the rest is hashed
        // first and decrypted only once the tag checks.
        let mut ctr = first;
        let done = self.stitched(&mut ctr, &mut ghash, data, true);
        ghash.update_padded(&data[done..]);
        let mut want = AesGcm::tag(&mut ghash, aad.len(), data.len(), &mask);
        mask.zeroize();
        let ok = crate::aead::tags_equal(&want, tag);
        want.zeroize();
        if !ok {
            // Back to the ciphertext (CTR is its own inverse): no plaintext
            // of a forged message leaves this function.
            self.aes.ctr_apply(&mut first.clone(), &mut data[..done]);
            return Err(crate::aead::AuthError);
        }
        self.aes.ctr_apply(&mut ctr, &mut data[done..]);
        Ok(())
    }
}
