//! VAES on 256-bit registers (VAES, VPCLMULQDQ and AVX2): 2 blocks per register, 8
//! registers (16 blocks) in flight for ECB, CBC decryption, CTR and XTS.
//! CBC encryption is sequential and runs the AES-NI code; the last blocks
//! that fill no whole register go there too.

use core::arch::x86_64::*;

use super::x86_aesni::{self, by_rounds};
use super::x86_modes::{self as m, Lanes, MAX_KEYS, round8};

/// Registers in flight in the parallel modes.
const W: usize = 8;

/// 2 AES blocks in a ymm register.
#[derive(Clone, Copy)]
pub(super) struct Ymm(__m256i);

impl Lanes for Ymm {
    const N: usize = 2;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 32 readable bytes.
        Ymm(unsafe { _mm256_loadu_si256(p.cast()) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the caller passes 32 writable bytes.
        unsafe { _mm256_storeu_si256(p.cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: &[u8; 16]) -> Self {
        // SAFETY: `b` is 16 bytes; the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(b.as_ptr().cast())) })
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn enc(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Ymm(unsafe { _mm256_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn enc_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Ymm(unsafe { _mm256_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Ymm(unsafe { _mm256_aesdec_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Ymm(unsafe { _mm256_aesdeclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn add64(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_add_epi64(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe {
            let rev = _mm256_broadcastsi128_si256(_mm_set_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            ));
            Ymm(_mm256_shuffle_epi8(self.0, rev))
        }
    }
    #[inline(always)]
    unsafe fn shl64(self, k: i32) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn shr64(self, k: i32) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn swap64(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_shuffle_epi32::<0x4e>(self.0) })
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX2.
        Ymm(unsafe { _mm256_and_si256(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn signs(self) -> Self {
        // SAFETY: the caller runs with this backend's features.
        Ymm(unsafe { _mm256_shuffle_epi32::<0x5f>(self.0) })
    }
    #[inline(always)]
    unsafe fn spread(self) -> Self {
        // SAFETY: the caller runs with this backend's features.
        Ymm(unsafe { _mm256_srai_epi32::<31>(self.0) })
    }
    #[inline(always)]
    unsafe fn mul_alpha(self, k: i32, _low: Self, poly: Self) -> Self {
        // SAFETY: the caller runs with VPCLMULQDQ and AVX2 (this backend's
        // XTS; see `xts`).
        unsafe {
            // The k bits that leave each 64-bit half: the low half's move up
            // into the high half, the high half's fold back times 0x87 (a
            // carry-less product below 2^64 for k <= 56), as in the Linux
            // kernel's AES-XTS.
            let out = self.shr64(64 - k).0;
            let fold = _mm256_clmulepi64_epi128::<0x01>(out, poly.0);
            let up = _mm256_slli_si256::<8>(out);
            Ymm(_mm256_xor_si256(
                _mm256_xor_si256(self.shl64(k).0, up),
                fold,
            ))
        }
    }
    #[inline(always)]
    unsafe fn mul_alpha16(self, _low: Self, poly: Self) -> Self {
        // SAFETY: as `mul_alpha`.
        unsafe {
            // Whole bytes: the lane shifts left by two bytes, and its top 16
            // bits fold back times 0x87: 4 instructions.
            let top = _mm256_srli_si256::<14>(self.0);
            let fold = _mm256_clmulepi64_epi128::<0x00>(top, poly.0);
            Ymm(_mm256_xor_si256(_mm256_slli_si256::<2>(self.0), fold))
        }
    }
    #[inline(always)]
    unsafe fn round8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe { round8_ymm::<ENC>(b, k) }
    }
    #[inline(always)]
    unsafe fn last8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe { last8_ymm::<ENC>(b, k) }
    }
    #[inline(always)]
    unsafe fn round8_mul16<const ENC: bool>(
        b: &mut [Self; 8],
        k: Self,
        src: *const Self,
        dst: *mut Self,
        _low: Self,
        poly: Self,
    ) {
        // SAFETY: the caller runs with VAES, VPCLMULQDQ and AVX2 and passes
        // a readable `src` and a writable `dst`.
        unsafe { round8_mul16_ymm::<ENC>(b, k, src, dst, poly) }
    }
}

// The eight-register rounds as `asm!` (see `round8`); ymm operands need AVX
// enabled where the `asm!` is written, hence functions of their own.
#[inline]
#[target_feature(enable = "avx2,vaes")]
fn round8_ymm<const ENC: bool>(b: &mut [Ymm; 8], k: Ymm) {
    // SAFETY: VAES and AVX2 are enabled; register operands only.
    unsafe {
        if ENC {
            round8!(vex "vaesenc", b, k);
        } else {
            round8!(vex "vaesdec", b, k);
        }
    }
}
#[inline]
#[target_feature(enable = "avx2,vaes")]
fn last8_ymm<const ENC: bool>(b: &mut [Ymm; 8], k: Ymm) {
    // SAFETY: as `round8_ymm`.
    unsafe {
        if ENC {
            round8!(vex "vaesenclast", b, k);
        } else {
            round8!(vex "vaesdeclast", b, k);
        }
    }
}

#[inline]
#[target_feature(enable = "avx2,vaes,vpclmulqdq")]
unsafe fn round8_mul16_ymm<const ENC: bool>(
    b: &mut [Ymm; 8],
    k: Ymm,
    src: *const Ymm,
    dst: *mut Ymm,
    poly: Ymm,
) {
    // SAFETY: VAES, VPCLMULQDQ and AVX2 are enabled; the caller passes 32
    // readable bytes at `src` and 32 writable at `dst`.
    unsafe {
        if ENC {
            round8!(vex_mul16 "vaesenc", b, k, src, dst, poly);
        } else {
            round8!(vex_mul16 "vaesdec", b, k, src, dst, poly);
        }
    }
}

/// ECB over the whole blocks of `data` (`keys`: encryption or decryption keys).
///
/// # Safety
/// The CPU must have VAES and AVX2.
#[target_feature(enable = "aes,vaes,avx2")]
pub(super) unsafe fn ecb(keys: &[[u8; 16]; MAX_KEYS], nr: usize, data: &mut [u8], enc: bool) {
    // SAFETY: compiled with and called on a CPU with this backend's features,
    // which include AES-NI's.
    unsafe {
        let done = by_rounds!(nr, ecb::<Ymm, W>(keys, data, enc));
        x86_aesni::ecb(keys, nr, &mut data[done..], enc);
    }
}

/// CBC decryption of whole blocks (decryption keys).
///
/// # Safety
/// The CPU must have VAES and AVX2.
#[target_feature(enable = "aes,vaes,avx2")]
pub(super) unsafe fn cbc_decrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: as in `ecb`.
    unsafe {
        let done = by_rounds!(nr, cbc_decrypt::<Ymm, W>(keys, iv, data));
        x86_aesni::cbc_decrypt(keys, nr, iv, &mut data[done..]);
    }
}

/// CTR over `data`, a partial last block included (it uses up a counter).
///
/// # Safety
/// The CPU must have VAES and AVX2.
#[target_feature(enable = "aes,vaes,avx2")]
pub(super) unsafe fn ctr(keys: &[[u8; 16]; MAX_KEYS], nr: usize, c: &mut u128, data: &mut [u8]) {
    // SAFETY: as in `ecb`.
    unsafe {
        let lead = m::ctr_lead(*c, W * Ymm::N, data.len());
        x86_aesni::ctr(keys, nr, c, &mut data[..lead]);
        let done = lead + by_rounds!(nr, ctr::<Ymm, W>(keys, c, &mut data[lead..]));
        x86_aesni::ctr(keys, nr, c, &mut data[done..]);
    }
}

/// XTS over the whole blocks of `data` from tweak `t`, which advances. The
/// tweaks are multiplied with VPCLMULQDQ (every CPU with VAES has it; the
/// backend requires it).
///
/// # Safety
/// The CPU must have VAES, VPCLMULQDQ and AVX2.
#[target_feature(enable = "aes,vaes,vpclmulqdq,avx2")]
pub(super) unsafe fn xts(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) {
    // SAFETY: as in `ecb`.
    unsafe {
        let done = by_rounds!(nr, xts::<Ymm, W>(keys, t, data, enc));
        x86_aesni::xts(keys, nr, t, &mut data[done..], enc);
    }
}
