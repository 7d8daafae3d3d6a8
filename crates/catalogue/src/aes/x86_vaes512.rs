//! VAES on 512-bit registers (VAES and AVX-512): 4 blocks per register, 4
//! registers (16 blocks) in flight for ECB, CTR and XTS, 8 (32 blocks) for
//! CBC decryption.
//! CBC encryption is sequential and runs the AES-NI code; the last blocks
//! that fill no whole register go there too.

use core::arch::x86_64::*;

use super::x86_aesni::{self, by_rounds};
use super::x86_modes::{self as m, Lanes, MAX_KEYS};

/// Registers in flight in the parallel modes...
const W: usize = 4;
/// ...but CBC decryption, which needs no register for tweaks or counters:
/// on Zen 4 (one 512-bit AESDEC a cycle) 1.6% faster with eight, and XTS 17%
/// slower.
const W_CBC: usize = 8;

/// 4 AES blocks in a zmm register.
#[derive(Clone, Copy)]
pub(super) struct Zmm(__m512i);

impl Lanes for Zmm {
    const N: usize = 4;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 64 readable bytes.
        Zmm(unsafe { _mm512_loadu_si512(p.cast()) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the caller passes 64 writable bytes.
        unsafe { _mm512_storeu_si512(p.cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: &[u8; 16]) -> Self {
        // SAFETY: `b` is 16 bytes; the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(b.as_ptr().cast())) })
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_xor_si512(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn enc(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Zmm(unsafe { _mm512_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn enc_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Zmm(unsafe { _mm512_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Zmm(unsafe { _mm512_aesdec_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with VAES.
        Zmm(unsafe { _mm512_aesdeclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn add64(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_add_epi64(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        unsafe {
            let rev = _mm512_broadcast_i32x4(_mm_set_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            ));
            Zmm(_mm512_shuffle_epi8(self.0, rev))
        }
    }
    #[inline(always)]
    unsafe fn shl64(self, k: i32) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_sll_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn shr64(self, k: i32) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_srl_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn swap64(self) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_shuffle_epi32::<0x4e>(self.0) })
    }
    #[inline(always)]
    unsafe fn previous(p: *const u8, before: Self, _: &[u8; 16]) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512, and `p` has 64
        // bytes. VALIGNQ: `before`'s last two quadwords, then p's first six.
        unsafe { Zmm(_mm512_alignr_epi64::<6>(Self::load(p).0, before.0)) }
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: the caller runs with VAES and AVX-512.
        Zmm(unsafe { _mm512_and_si512(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn signs(self) -> Self {
        // SAFETY: the caller runs with this backend's features.
        Zmm(unsafe { _mm512_shuffle_epi32::<0x5f>(self.0) })
    }
    #[inline(always)]
    unsafe fn spread(self) -> Self {
        // SAFETY: the caller runs with this backend's features.
        Zmm(unsafe { _mm512_srai_epi32::<31>(self.0) })
    }
}

/// ECB over the whole blocks of `data` (`keys`: encryption or decryption keys).
///
/// # Safety
/// The CPU must have VAES and AVX-512.
#[target_feature(enable = "aes,vaes,avx512f,avx512bw")]
pub(super) unsafe fn ecb(keys: &[[u8; 16]; MAX_KEYS], nr: usize, data: &mut [u8], enc: bool) {
    // SAFETY: compiled with and called on a CPU with this backend's features,
    // which include AES-NI's.
    unsafe {
        let done = by_rounds!(nr, ecb::<Zmm, W>(keys, data, enc));
        x86_aesni::ecb(keys, nr, &mut data[done..], enc);
    }
}

/// CBC decryption of whole blocks (decryption keys).
///
/// # Safety
/// The CPU must have VAES and AVX-512.
#[target_feature(enable = "aes,vaes,avx512f,avx512bw")]
pub(super) unsafe fn cbc_decrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: as in `ecb`.
    unsafe {
        let done = by_rounds!(nr, cbc_decrypt::<Zmm, W_CBC>(keys, iv, data));
        x86_aesni::cbc_decrypt(keys, nr, iv, &mut data[done..]);
    }
}

/// CTR over `data`, a partial last block included (it uses up a counter).
///
/// # Safety
/// The CPU must have VAES and AVX-512.
#[target_feature(enable = "aes,vaes,avx512f,avx512bw")]
pub(super) unsafe fn ctr(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    first: Option<&m::FirstRound>,
    c: &mut u128,
    data: &mut [u8],
) {
    // SAFETY: as in `ecb`.
    unsafe { m::ctr_wide::<Zmm, W>(keys, nr, first, c, data) }
}

/// XTS over the whole blocks of `data` from tweak `t`, which advances.
///
/// # Safety
/// The CPU must have VAES and AVX-512.
#[target_feature(enable = "aes,vaes,avx512f,avx512bw")]
pub(super) unsafe fn xts(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) {
    // SAFETY: as in `ecb`.
    unsafe {
        let done = by_rounds!(nr, xts::<Zmm, W>(keys, t, data, enc));
        x86_aesni::xts(keys, nr, t, &mut data[done..], enc);
    }
}
