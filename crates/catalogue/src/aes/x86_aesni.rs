//! AES-NI on 128-bit registers (no VAES): 12 blocks in flight for CTR and CBC
//! decryption, 8 for ECB and XTS, one block at a time for CBC encryption.
//! Also the key schedule (FIPS-197 §5.2, SubWord by AESENCLAST) and the
//! decryption keys (AESIMC), which the VAES backends share, and the last
//! blocks they leave over.

use core::arch::x86_64::*;

use super::RoundKeys;
use super::x86_modes::{self as m, Lanes, MAX_KEYS, round8};

/// Blocks in flight in ECB and XTS (whose tweak chain takes a step in each
/// of the 8 rounds of [`Lanes::round8_double`]).
const W: usize = 8;
/// Blocks in flight in CTR and CBC decryption: 12 of the 16 xmm registers,
/// the round key and the data XORed into the last round taking the rest.
/// With 8, AESENC's latency (4 cycles at 2 a cycle on Zen 4) left no slack
/// at the batch edges; 12 measured 1.04x for AES-256 there (Zen 4,
/// `aesni-avx2` tier). On Zen 3 an earlier try of the same measured CTR at
/// 0.97-1.01x (docs/PERFORMANCE.md, eighth Zen 3 session), within its noise;
/// VAES-256 at 12 ymm registers was 0.9-1.0x on Zen 4.
const W_WIDE: usize = 12;

/// One AES block in an xmm register.
#[derive(Clone, Copy)]
pub(super) struct Xmm(__m128i);

impl Lanes for Xmm {
    const N: usize = 1;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller passes 16 readable bytes.
        Xmm(unsafe { _mm_loadu_si128(p.cast()) })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: the caller passes 16 writable bytes.
        unsafe { _mm_storeu_si128(p.cast(), self.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: &[u8; 16]) -> Self {
        // SAFETY: `b` is 16 bytes.
        unsafe { Self::load(b.as_ptr()) }
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_xor_si128(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn enc(self, k: Self) -> Self {
        // SAFETY: the caller runs with AES-NI.
        Xmm(unsafe { _mm_aesenc_si128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn enc_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with AES-NI.
        Xmm(unsafe { _mm_aesenclast_si128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec(self, k: Self) -> Self {
        // SAFETY: the caller runs with AES-NI.
        Xmm(unsafe { _mm_aesdec_si128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn dec_last(self, k: Self) -> Self {
        // SAFETY: the caller runs with AES-NI.
        Xmm(unsafe { _mm_aesdeclast_si128(self.0, k.0) })
    }
    #[inline(always)]
    unsafe fn add64(self, o: Self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_add_epi64(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn bswap(self) -> Self {
        // SAFETY: the caller runs with SSSE3.
        unsafe {
            let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            Xmm(_mm_shuffle_epi8(self.0, rev))
        }
    }
    #[inline(always)]
    unsafe fn shl64(self, k: i32) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_sll_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn shr64(self, k: i32) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_srl_epi64(self.0, _mm_cvtsi32_si128(k)) })
    }
    #[inline(always)]
    unsafe fn swap64(self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_shuffle_epi32::<0x4e>(self.0) })
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_and_si128(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn add32(self, o: Self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_add_epi32(self.0, o.0) })
    }
    #[inline(always)]
    unsafe fn signs(self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_shuffle_epi32::<0x5f>(self.0) })
    }
    #[inline(always)]
    unsafe fn spread(self) -> Self {
        // SAFETY: SSE2 is the x86-64 baseline.
        Xmm(unsafe { _mm_srai_epi32::<31>(self.0) })
    }
    #[inline(always)]
    unsafe fn round12<const ENC: bool>(b: &mut [Self; 12], k: Self) {
        // SAFETY: the caller runs with AES-NI; register operands only.
        unsafe {
            if ENC {
                round8!(sse12 "aesenc", b, k);
            } else {
                round8!(sse12 "aesdec", b, k);
            }
        }
    }
    #[inline(always)]
    unsafe fn round8_double<const ENC: bool>(
        b: &mut [Self; 8],
        k: Self,
        t: &mut Self,
        m: &mut Self,
        poly: Self,
    ) {
        // SAFETY: the caller runs with AES-NI; register operands only.
        unsafe {
            if ENC {
                round8!(sse_double "aesenc", b, k, t, m, poly);
            } else {
                round8!(sse_double "aesdec", b, k, t, m, poly);
            }
        }
    }
    #[inline(always)]
    unsafe fn round8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with AES-NI; register operands only.
        unsafe {
            if ENC {
                round8!(sse "aesenc", b, k);
            } else {
                round8!(sse "aesdec", b, k);
            }
        }
    }
    #[inline(always)]
    unsafe fn last8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        // SAFETY: as `round8`.
        unsafe {
            if ENC {
                round8!(sse "aesenclast", b, k);
            } else {
                round8!(sse "aesdeclast", b, k);
            }
        }
    }
}

/// Calls `$f::<Xmm, NR, ..>` with the number of rounds as a constant.
macro_rules! by_rounds {
    ($nr:expr, $f:ident :: <$v:ty $(, $w:tt)?> ($($arg:expr),*)) => {
        match $nr {
            10 => m::$f::<$v, 10 $(, $w)?>($($arg),*),
            12 => m::$f::<$v, 12 $(, $w)?>($($arg),*),
            _ => m::$f::<$v, 14 $(, $w)?>($($arg),*),
        }
    };
}
pub(super) use by_rounds;

/// SubWord (FIPS-197 §5.2): AESENCLAST with a zero key on four copies of the
/// word is SubBytes alone (ShiftRows moves equal columns onto each other).
#[target_feature(enable = "aes,sse2,ssse3")]
fn sub_word(w: u32) -> u32 {
    let v = _mm_set1_epi32(w as i32);
    _mm_cvtsi128_si32(_mm_aesenclast_si128(v, _mm_setzero_si128())) as u32
}

/// Expands a 16-, 24- or 32-byte key (FIPS-197 §5.2) into encryption keys and
/// the decryption keys of the equivalent inverse cipher (§5.3.5, AESIMC).
///
/// # Safety
/// The CPU must have AES-NI.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn expand(key: &[u8], keys: &mut RoundKeys) {
    let nk = key.len() / 4;
    let nr = nk + 6;
    let mut w = [0u32; 4 * MAX_KEYS];
    for (i, c) in key.chunks_exact(4).enumerate() {
        w[i] = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    let mut rcon = 1u32;
    for i in nk..4 * (nr + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = sub_word(t.rotate_right(8)) ^ rcon;
            rcon = (rcon << 1) ^ (0x11b * (rcon >> 7));
        } else if nk > 6 && i % nk == 4 {
            t = sub_word(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    for (r, k) in keys.enc.iter_mut().take(nr + 1).enumerate() {
        for (j, c) in k.chunks_exact_mut(4).enumerate() {
            c.copy_from_slice(&w[4 * r + j].to_le_bytes());
        }
    }
    w.fill(0);
    keys.dec[0] = keys.enc[nr];
    keys.dec[nr] = keys.enc[0];
    for r in 1..nr {
        // SAFETY: 16-byte loads and stores of round keys.
        unsafe {
            let k = _mm_loadu_si128(keys.enc[nr - r].as_ptr().cast());
            _mm_storeu_si128(keys.dec[r].as_mut_ptr().cast(), _mm_aesimc_si128(k));
        }
    }
    keys.nr = nr;
}

/// ECB over the whole blocks of `data` (`keys`: encryption or decryption keys).
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn ecb(keys: &[[u8; 16]; MAX_KEYS], nr: usize, data: &mut [u8], enc: bool) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe { by_rounds!(nr, ecb::<Xmm, W>(keys, data, enc)) };
}

/// CBC encryption of whole blocks; `iv` becomes the last ciphertext block.
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn cbc_encrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe { by_rounds!(nr, cbc_encrypt::<Xmm>(keys, iv, data)) };
}

/// CBC decryption of whole blocks (decryption keys).
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn cbc_decrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe { by_rounds!(nr, cbc_decrypt::<Xmm, W_WIDE>(keys, iv, data)) };
}

/// CTR over `data`, a partial last block included (it uses up a counter).
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn ctr(keys: &[[u8; 16]; MAX_KEYS], nr: usize, c: &mut u128, data: &mut [u8]) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe {
        let done = by_rounds!(nr, ctr::<Xmm, W_WIDE>(keys, c, data));
        let rest = &mut data[done..];
        if !rest.is_empty() {
            let mut block = [0u8; 16];
            block[..rest.len()].copy_from_slice(rest);
            by_rounds!(nr, ctr::<Xmm, 1>(keys, c, &mut block));
            rest.copy_from_slice(&block[..rest.len()]);
        }
    }
}

/// XTS over the whole blocks of `data` from tweak `t`, which advances.
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[target_feature(enable = "aes,sse2,ssse3")]
pub(super) unsafe fn xts(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe { by_rounds!(nr, xts::<Xmm, W>(keys, t, data, enc)) };
}
