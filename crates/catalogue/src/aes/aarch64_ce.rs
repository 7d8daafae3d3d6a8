//! AES with the ARMv8 crypto extensions (AESE/AESMC, AESD/AESIMC) on aarch64:
//! eight blocks in flight for ECB, CBC decryption, CTR and XTS, with the
//! round keys held in registers (15 of the 32), CTR counters and XTS tweaks
//! made in registers; CBC encryption one block at a time. Also the key
//! schedule (FIPS-197 §5.2, SubWord by AESE with a zero key) and the
//! decryption keys (AESIMC), laid out as the x86 backends lay them out.
//!
//! AESE is AddRoundKey, SubBytes and ShiftRows, so a round is AESE with the
//! round's key followed by AESMC, and the last key is a plain XOR.

use core::arch::aarch64::*;

use super::RoundKeys;

/// Round keys kept: 15 for AES-256.
const MAX_KEYS: usize = 15;
/// Blocks in flight in the parallel modes.
const W: usize = 8;

type Keys = [uint8x16_t; MAX_KEYS];

/// Calls `$f::<NR>` with the number of rounds as a constant.
macro_rules! by_rounds {
    ($nr:expr, $f:ident ($($arg:expr),*)) => {
        match $nr {
            10 => $f::<10>($($arg),*),
            12 => $f::<12>($($arg),*),
            _ => $f::<14>($($arg),*),
        }
    };
}

#[inline(always)]
unsafe fn load_keys(keys: &[[u8; 16]; MAX_KEYS]) -> Keys {
    // SAFETY: each round key is 16 readable bytes.
    core::array::from_fn(|i| unsafe { vld1q_u8(keys[i].as_ptr()) })
}

/// Encrypts the blocks of array `$b` with `$nr` rounds of keys `$k`, round
/// by round across the blocks so that the AESE/AESMC pairs of different
/// blocks overlap. A macro: the AES intrinsics inline only into functions
/// compiled with the `aes` feature.
macro_rules! encrypt {
    ($nr:expr, $k:expr, $b:expr) => {
        for key in &$k[..$nr - 1] {
            for x in $b.iter_mut() {
                *x = vaesmcq_u8(vaeseq_u8(*x, *key));
            }
        }
        for x in $b.iter_mut() {
            *x = veorq_u8(vaeseq_u8(*x, $k[$nr - 1]), $k[$nr]);
        }
    };
}

/// Decrypts the blocks of `$b` with the equivalent inverse cipher's keys.
macro_rules! decrypt {
    ($nr:expr, $k:expr, $b:expr) => {
        for key in &$k[..$nr - 1] {
            for x in $b.iter_mut() {
                *x = vaesimcq_u8(vaesdq_u8(*x, *key));
            }
        }
        for x in $b.iter_mut() {
            *x = veorq_u8(vaesdq_u8(*x, $k[$nr - 1]), $k[$nr]);
        }
    };
}

/// Loads eight blocks from `p` (two four-register loads).
#[inline(always)]
unsafe fn load8(p: *const u8) -> [uint8x16_t; W] {
    // SAFETY: the caller passes 128 readable bytes.
    unsafe {
        let a = vld1q_u8_x4(p);
        let b = vld1q_u8_x4(p.add(64));
        [a.0, a.1, a.2, a.3, b.0, b.1, b.2, b.3]
    }
}

/// Stores eight blocks to `p`.
#[inline(always)]
unsafe fn store8(p: *mut u8, v: &[uint8x16_t; W]) {
    // SAFETY: the caller passes 128 writable bytes.
    unsafe {
        vst1q_u8_x4(p, uint8x16x4_t(v[0], v[1], v[2], v[3]));
        vst1q_u8_x4(p.add(64), uint8x16x4_t(v[4], v[5], v[6], v[7]));
    }
}

/// SubWord (FIPS-197 §5.2): AESE with a zero key on four copies of the word
/// is SubBytes alone (ShiftRows moves equal columns onto each other).
#[target_feature(enable = "aes,neon")]
fn sub_word(w: u32) -> u32 {
    let v = vreinterpretq_u8_u32(vdupq_n_u32(w));
    vgetq_lane_u32::<0>(vreinterpretq_u32_u8(vaeseq_u8(v, vdupq_n_u8(0))))
}

/// Expands a 16-, 24- or 32-byte key (FIPS-197 §5.2) into encryption keys and
/// the decryption keys of the equivalent inverse cipher (§5.3.5, AESIMC).
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
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
            let k = vld1q_u8(keys.enc[nr - r].as_ptr());
            vst1q_u8(keys.dec[r].as_mut_ptr(), vaesimcq_u8(k));
        }
    }
    keys.nr = nr;
}

#[inline]
#[target_feature(enable = "aes,neon")]
unsafe fn ecb_n<const NR: usize>(keys: &[[u8; 16]; MAX_KEYS], data: &mut [u8], enc: bool) {
    // SAFETY: the caller runs with the AES extension; every pointer is to a
    // chunk of the size loaded and stored.
    unsafe {
        let k = load_keys(keys);
        let mut chunks = data.chunks_exact_mut(16 * W);
        for c in &mut chunks {
            let mut b = load8(c.as_ptr());
            if enc {
                encrypt!(NR, k, b);
            } else {
                decrypt!(NR, k, b);
            }
            store8(c.as_mut_ptr(), &b);
        }
        for c in chunks.into_remainder().chunks_exact_mut(16) {
            let mut b = [vld1q_u8(c.as_ptr())];
            if enc {
                encrypt!(NR, k, b);
            } else {
                decrypt!(NR, k, b);
            }
            vst1q_u8(c.as_mut_ptr(), b[0]);
        }
    }
}

/// ECB over the whole blocks of `data` (`keys`: encryption or decryption keys).
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
pub(super) unsafe fn ecb(keys: &[[u8; 16]; MAX_KEYS], nr: usize, data: &mut [u8], enc: bool) {
    // SAFETY: compiled with and called on a CPU with the AES extension.
    unsafe { by_rounds!(nr, ecb_n(keys, data, enc)) }
}

#[inline]
#[target_feature(enable = "aes,neon")]
unsafe fn cbc_encrypt_n<const NR: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: the caller runs with the AES extension; 16-byte loads and
    // stores of whole blocks.
    unsafe {
        let k = load_keys(keys);
        let mut prev = vld1q_u8(iv.as_ptr());
        for c in data.chunks_exact_mut(16) {
            let mut b = [veorq_u8(vld1q_u8(c.as_ptr()), prev)];
            encrypt!(NR, k, b);
            prev = b[0];
            vst1q_u8(c.as_mut_ptr(), prev);
        }
        vst1q_u8(iv.as_mut_ptr(), prev);
    }
}

/// CBC encryption of whole blocks; `iv` becomes the last ciphertext block.
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
pub(super) unsafe fn cbc_encrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: compiled with and called on a CPU with the AES extension.
    unsafe { by_rounds!(nr, cbc_encrypt_n(keys, iv, data)) }
}

#[inline]
#[target_feature(enable = "aes,neon")]
unsafe fn cbc_decrypt_n<const NR: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: the caller runs with the AES extension; every pointer is to a
    // chunk of the size loaded and stored.
    unsafe {
        let k = load_keys(keys);
        let mut prev = vld1q_u8(iv.as_ptr());
        let mut chunks = data.chunks_exact_mut(16 * W);
        for c in &mut chunks {
            let ct = load8(c.as_ptr());
            let mut b = ct;
            decrypt!(NR, k, b);
            b[0] = veorq_u8(b[0], prev);
            for j in 1..W {
                b[j] = veorq_u8(b[j], ct[j - 1]);
            }
            prev = ct[W - 1];
            store8(c.as_mut_ptr(), &b);
        }
        for c in chunks.into_remainder().chunks_exact_mut(16) {
            let ct = vld1q_u8(c.as_ptr());
            let mut b = [ct];
            decrypt!(NR, k, b);
            vst1q_u8(c.as_mut_ptr(), veorq_u8(b[0], prev));
            prev = ct;
        }
        vst1q_u8(iv.as_mut_ptr(), prev);
    }
}

/// CBC decryption of whole blocks (decryption keys); `iv` becomes the last
/// ciphertext block.
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
pub(super) unsafe fn cbc_decrypt(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    // SAFETY: compiled with and called on a CPU with the AES extension.
    unsafe { by_rounds!(nr, cbc_decrypt_n(keys, iv, data)) }
}

/// The counter block of `c` (big-endian bytes).
#[inline(always)]
unsafe fn counter_block(c: u128) -> uint8x16_t {
    let b = c.to_be_bytes();
    // SAFETY: `b` is 16 readable bytes.
    unsafe { vld1q_u8(b.as_ptr()) }
}

#[inline]
#[target_feature(enable = "aes,neon")]
unsafe fn ctr_n<const NR: usize>(keys: &[[u8; 16]; MAX_KEYS], c: &mut u128, data: &mut [u8]) {
    // SAFETY: the caller runs with the AES extension; every pointer is to a
    // chunk of the size loaded and stored.
    unsafe {
        let k = load_keys(keys);
        // Counters are made in the byte-reversed-words domain, where the
        // counter's low 32 bits are lane 3 and a vector add steps them; one
        // REV32 per block gives the big-endian block. A batch whose low word
        // would wrap takes the 128-bit path.
        let one = vreinterpretq_u32_u8(vld1q_u8(
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0].as_ptr(),
        ));
        let mut chunks = data.chunks_exact_mut(16 * W);
        for ch in &mut chunks {
            let base = *c;
            let mut b: [uint8x16_t; W];
            if (base as u32).checked_add(W as u32 - 1).is_some() {
                let mut v = vreinterpretq_u32_u8(vrev32q_u8(counter_block(base)));
                b = [vdupq_n_u8(0); W];
                for x in b.iter_mut() {
                    *x = vrev32q_u8(vreinterpretq_u8_u32(v));
                    v = vaddq_u32(v, one);
                }
            } else {
                b = core::array::from_fn(|j| counter_block(base.wrapping_add(j as u128)));
            }
            *c = base.wrapping_add(W as u128);
            encrypt!(NR, k, b);
            let d = load8(ch.as_ptr());
            for (x, y) in b.iter_mut().zip(d) {
                *x = veorq_u8(*x, y);
            }
            store8(ch.as_mut_ptr(), &b);
        }
        for ch in chunks.into_remainder().chunks_mut(16) {
            let mut b = [counter_block(*c)];
            *c = c.wrapping_add(1);
            encrypt!(NR, k, b);
            let mut block = [0u8; 16];
            block[..ch.len()].copy_from_slice(ch);
            let x = veorq_u8(vld1q_u8(block.as_ptr()), b[0]);
            vst1q_u8(block.as_mut_ptr(), x);
            ch.copy_from_slice(&block[..ch.len()]);
        }
    }
}

/// CTR over `data`, a partial last block included (it uses up a counter);
/// `c` is the 128-bit big-endian counter, wrapping, and advances.
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
pub(super) unsafe fn ctr(keys: &[[u8; 16]; MAX_KEYS], nr: usize, c: &mut u128, data: &mut [u8]) {
    // SAFETY: compiled with and called on a CPU with the AES extension.
    unsafe { by_rounds!(nr, ctr_n(keys, c, data)) }
}

/// The next XTS tweak: times α in GF(2^128) (IEEE 1619 §5.2) on the
/// little-endian tweak as two 64-bit lanes. The sign of each lane, swapped
/// across the lanes, says where a carry goes: into the high lane, or out of
/// the top as the reduction 0x87.
#[inline(always)]
unsafe fn next_tweak(t: uint64x2_t, poly: uint64x2_t) -> uint64x2_t {
    // SAFETY: NEON is part of aarch64.
    unsafe {
        let s = vreinterpretq_u64_s64(vshrq_n_s64::<63>(vreinterpretq_s64_u64(t)));
        let carry = vandq_u64(vextq_u64::<1>(s, s), poly);
        veorq_u64(vaddq_u64(t, t), carry)
    }
}

#[inline]
#[target_feature(enable = "aes,neon")]
unsafe fn xts_n<const NR: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) {
    // SAFETY: the caller runs with the AES extension; every pointer is to a
    // chunk of the size loaded and stored.
    unsafe {
        let k = load_keys(keys);
        let poly = vcombine_u64(vcreate_u64(0x87), vcreate_u64(1));
        let tb = t.to_le_bytes();
        let mut tw = vreinterpretq_u64_u8(vld1q_u8(tb.as_ptr()));
        let mut chunks = data.chunks_exact_mut(16 * W);
        for ch in &mut chunks {
            let mut ts = [tw; W];
            for j in 1..W {
                ts[j] = next_tweak(ts[j - 1], poly);
            }
            tw = next_tweak(ts[W - 1], poly);
            let mut b = load8(ch.as_ptr());
            for (x, y) in b.iter_mut().zip(ts) {
                *x = veorq_u8(*x, vreinterpretq_u8_u64(y));
            }
            if enc {
                encrypt!(NR, k, b);
            } else {
                decrypt!(NR, k, b);
            }
            for (x, y) in b.iter_mut().zip(ts) {
                *x = veorq_u8(*x, vreinterpretq_u8_u64(y));
            }
            store8(ch.as_mut_ptr(), &b);
        }
        for ch in chunks.into_remainder().chunks_exact_mut(16) {
            let twb = vreinterpretq_u8_u64(tw);
            let mut b = [veorq_u8(vld1q_u8(ch.as_ptr()), twb)];
            if enc {
                encrypt!(NR, k, b);
            } else {
                decrypt!(NR, k, b);
            }
            vst1q_u8(ch.as_mut_ptr(), veorq_u8(b[0], twb));
            tw = next_tweak(tw, poly);
        }
        let mut out = [0u8; 16];
        vst1q_u8(out.as_mut_ptr(), vreinterpretq_u8_u64(tw));
        *t = u128::from_le_bytes(out);
    }
}

/// XTS over the whole blocks of `data` from tweak `t` (little-endian), which
/// advances.
///
/// # Safety
/// The CPU must have the AES extension.
#[target_feature(enable = "aes,neon")]
pub(super) unsafe fn xts(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) {
    // SAFETY: compiled with and called on a CPU with the AES extension.
    unsafe { by_rounds!(nr, xts_n(keys, t, data, enc)) }
}
