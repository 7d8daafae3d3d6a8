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

/// One round on the eight blocks in v0..v7 with the round key operand `$k`:
/// `aese`/`aesmc` (or `aesd`/`aesimc`), for an `asm!` template.
macro_rules! round8 {
    ($op:literal, $mc:literal, $k:ident) => {
        concat!(
            $op,
            " v0.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v0.16b, v0.16b\n",
            $op,
            " v1.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v1.16b, v1.16b\n",
            $op,
            " v2.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v2.16b, v2.16b\n",
            $op,
            " v3.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v3.16b, v3.16b\n",
            $op,
            " v4.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v4.16b, v4.16b\n",
            $op,
            " v5.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v5.16b, v5.16b\n",
            $op,
            " v6.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v6.16b, v6.16b\n",
            $op,
            " v7.16b, {",
            stringify!($k),
            ":v}.16b\n",
            $mc,
            " v7.16b, v7.16b\n",
        )
    };
}

/// Every round on v0..v7: `$k` the keys of the full rounds, then the last
/// round with `$kp` and the final key `$kl` added.
macro_rules! rounds8 {
    ($op:literal, $mc:literal, [$($k:ident)*], $kp:ident, $kl:ident) => {
        concat!(
            $(round8!($op, $mc, $k),)*
            $op, " v0.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v1.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v2.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v3.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v4.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v5.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v6.16b, {", stringify!($kp), ":v}.16b\n",
            $op, " v7.16b, {", stringify!($kp), ":v}.16b\n",
            "eor v0.16b, v0.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v1.16b, v1.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v2.16b, v2.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v3.16b, v3.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v4.16b, v4.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v5.16b, v5.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v6.16b, v6.16b, {", stringify!($kl), ":v}.16b\n",
            "eor v7.16b, v7.16b, {", stringify!($kl), ":v}.16b\n",
        )
    };
}

/// Calls `$m!` with the round keys of `NR` rounds named for `rounds8!`: the
/// keys of the full rounds, the last round's and the final one, each with
/// its index into the key array.
macro_rules! with_keys {
    ($nr:expr, $m:ident!($($arg:tt)*)) => {
        match $nr {
            10 => $m!($($arg)*; [k0 0 k1 1 k2 2 k3 3 k4 4 k5 5 k6 6 k7 7 k8 8], k9 9, k10 10),
            12 => $m!($($arg)*; [k0 0 k1 1 k2 2 k3 3 k4 4 k5 5 k6 6 k7 7 k8 8 k9 9 k10 10], k11 11, k12 12),
            _ => $m!($($arg)*; [k0 0 k1 1 k2 2 k3 3 k4 4 k5 5 k6 6 k7 7 k8 8 k9 9 k10 10 k11 11 k12 12], k13 13, k14 14),
        }
    };
}

/// Eight CTR blocks at `p` in one `asm!` block: the counters `b0 + j` made
/// by byte additions to the last byte (right while it does not wrap in the
/// batch), encrypted, and the data read, XORed and written once, with the
/// blocks in v0..v7 and the data in v16..v19. Returns `b0 + 8` the same way.
/// The compiler, given the same in intrinsics, folds the chain of additions
/// into seven constants and spills round keys to make room for them.
macro_rules! ctr8_asm {
    ($k:expr, $b0:expr, $inc:expr, $p:expr; [$($kn:ident $ki:literal)*], $kp:ident $kpi:literal, $kl:ident $kli:literal) => {{
        let next: uint8x16_t;
        core::arch::asm!(
            "add v1.16b, v0.16b, {i:v}.16b",
            "add v2.16b, v1.16b, {i:v}.16b",
            "add v3.16b, v2.16b, {i:v}.16b",
            "add v4.16b, v3.16b, {i:v}.16b",
            "add v5.16b, v4.16b, {i:v}.16b",
            "add v6.16b, v5.16b, {i:v}.16b",
            "add v7.16b, v6.16b, {i:v}.16b",
            "add {nx:v}.16b, v7.16b, {i:v}.16b",
            rounds8!("aese", "aesmc", [$($kn)*], $kp, $kl),
            "ld1 {{v16.16b-v19.16b}}, [{p}]",
            "eor v0.16b, v0.16b, v16.16b",
            "eor v1.16b, v1.16b, v17.16b",
            "eor v2.16b, v2.16b, v18.16b",
            "eor v3.16b, v3.16b, v19.16b",
            "st1 {{v0.16b-v3.16b}}, [{p}], #64",
            "ld1 {{v16.16b-v19.16b}}, [{p}]",
            "eor v4.16b, v4.16b, v16.16b",
            "eor v5.16b, v5.16b, v17.16b",
            "eor v6.16b, v6.16b, v18.16b",
            "eor v7.16b, v7.16b, v19.16b",
            "st1 {{v4.16b-v7.16b}}, [{p}]",
            p = inout(reg) $p => _,
            i = in(vreg) $inc,
            nx = out(vreg) next,
            $($kn = in(vreg) $k[$ki],)*
            $kp = in(vreg) $k[$kpi],
            $kl = in(vreg) $k[$kli],
            inout("v0") $b0 => _,
            out("v1") _, out("v2") _, out("v3") _, out("v4") _,
            out("v5") _, out("v6") _, out("v7") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            options(nostack, preserves_flags),
        );
        next
    }};
}

/// CBC decryption of eight blocks at `p` in one `asm!` block (`$prev`: the
/// ciphertext before them, and after: the last of them): the ciphertext is
/// read twice (for the rounds, and again for the chaining XOR) rather than
/// held in eight more registers, and written once.
macro_rules! cbc_dec8_asm {
    ($k:expr, $prev:expr, $p:expr; [$($kn:ident $ki:literal)*], $kp:ident $kpi:literal, $kl:ident $kli:literal) => {
        core::arch::asm!(
            "ld1 {{v0.16b-v3.16b}}, [{p}]",
            "ld1 {{v4.16b-v7.16b}}, [{q}]",
            rounds8!("aesd", "aesimc", [$($kn)*], $kp, $kl),
            "eor v0.16b, v0.16b, v19.16b",
            "ld1 {{v16.16b-v19.16b}}, [{p}]",
            "eor v1.16b, v1.16b, v16.16b",
            "eor v2.16b, v2.16b, v17.16b",
            "eor v3.16b, v3.16b, v18.16b",
            "eor v4.16b, v4.16b, v19.16b",
            "st1 {{v0.16b-v3.16b}}, [{p}]",
            "ld1 {{v16.16b-v19.16b}}, [{q}]",
            "eor v5.16b, v5.16b, v16.16b",
            "eor v6.16b, v6.16b, v17.16b",
            "eor v7.16b, v7.16b, v18.16b",
            "st1 {{v4.16b-v7.16b}}, [{q}]",
            p = in(reg) $p,
            q = in(reg) $p.add(64),
            $($kn = in(vreg) $k[$ki],)*
            $kp = in(vreg) $k[$kpi],
            $kl = in(vreg) $k[$kli],
            inout("v19") $prev,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v16") _, out("v17") _, out("v18") _,
            options(nostack, preserves_flags),
        )
    };
}

/// `$dst` = `$src` times α (the next XTS tweak, as [`next_tweak`]), v0 the
/// scratch register; for an `asm!` template with `{poly}` = (0x87, 1).
macro_rules! tweak_asm {
    ($dst:literal, $src:literal) => {
        concat!(
            "sshr v0.2d, ",
            $src,
            ".2d, #63\n",
            "ext v0.16b, v0.16b, v0.16b, #8\n",
            "and v0.16b, v0.16b, {poly:v}.16b\n",
            "add ",
            $dst,
            ".2d, ",
            $src,
            ".2d, ",
            $src,
            ".2d\n",
            "eor ",
            $dst,
            ".16b, ",
            $dst,
            ".16b, v0.16b\n",
        )
    };
}

/// XTS on eight blocks at `p` in one `asm!` block: the tweaks made from
/// `$tw` (in v16, and after: the next batch's) into v16..v23 while v0..v7
/// are still free, the data read, XORed, through the rounds (`aese`/`aesmc`
/// or `aesd`/`aesimc`), XORed and written once. 8 blocks, 8 tweaks, 15
/// round keys and the reduction constant are the 32 registers exactly.
macro_rules! xts8_asm {
    ($op:literal, $mc:literal, $k:expr, $tw:expr, $poly:expr, $p:expr; [$($kn:ident $ki:literal)*], $kp:ident $kpi:literal, $kl:ident $kli:literal) => {
        core::arch::asm!(
            tweak_asm!("v17", "v16"),
            tweak_asm!("v18", "v17"),
            tweak_asm!("v19", "v18"),
            tweak_asm!("v20", "v19"),
            tweak_asm!("v21", "v20"),
            tweak_asm!("v22", "v21"),
            tweak_asm!("v23", "v22"),
            "ld1 {{v0.16b-v3.16b}}, [{p}]",
            "ld1 {{v4.16b-v7.16b}}, [{q}]",
            "eor v0.16b, v0.16b, v16.16b",
            "eor v1.16b, v1.16b, v17.16b",
            "eor v2.16b, v2.16b, v18.16b",
            "eor v3.16b, v3.16b, v19.16b",
            "eor v4.16b, v4.16b, v20.16b",
            "eor v5.16b, v5.16b, v21.16b",
            "eor v6.16b, v6.16b, v22.16b",
            "eor v7.16b, v7.16b, v23.16b",
            rounds8!($op, $mc, [$($kn)*], $kp, $kl),
            "eor v0.16b, v0.16b, v16.16b",
            "eor v1.16b, v1.16b, v17.16b",
            "eor v2.16b, v2.16b, v18.16b",
            "eor v3.16b, v3.16b, v19.16b",
            "eor v4.16b, v4.16b, v20.16b",
            "eor v5.16b, v5.16b, v21.16b",
            "eor v6.16b, v6.16b, v22.16b",
            "eor v7.16b, v7.16b, v23.16b",
            "st1 {{v0.16b-v3.16b}}, [{p}]",
            "st1 {{v4.16b-v7.16b}}, [{q}]",
            tweak_asm!("v16", "v23"),
            p = in(reg) $p,
            q = in(reg) $p.add(64),
            poly = in(vreg) $poly,
            $($kn = in(vreg) $k[$ki],)*
            $kp = in(vreg) $k[$kpi],
            $kl = in(vreg) $k[$kli],
            inout("v16") $tw,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v17") _, out("v18") _, out("v19") _, out("v20") _,
            out("v21") _, out("v22") _, out("v23") _,
            options(nostack, preserves_flags),
        )
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
            let p = c.as_mut_ptr();
            with_keys!(NR, cbc_dec8_asm!(k, prev, p));
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
        // While the counter's last byte does not wrap within a batch (31 of
        // every 32 batches, or all when it starts at a multiple of 8), the
        // eight blocks are the first plus 0..7 in that byte, one byte-wise
        // add each, and the next batch's first block is the last plus one.
        // Such batches run in a loop of their own, counted in advance.
        let mut inc = [0u8; 16];
        inc[15] = 1;
        let inc = vld1q_u8(inc.as_ptr());
        let batches = data.len() / (16 * W);
        let (whole, rest) = data.split_at_mut(batches * 16 * W);
        let mut p = whole.as_mut_ptr();
        let mut left = batches;
        // A local copy: the `asm!` blocks may touch memory, so the counter
        // behind `c` would be stored and reloaded around each of them.
        let mut ctr = *c;
        while left > 0 {
            let low = ctr as u8 as usize;
            if low > 256 - W {
                // The last byte wraps inside this batch.
                let mut b = core::array::from_fn(|j| counter_block(ctr.wrapping_add(j as u128)));
                encrypt!(NR, k, b);
                let d = load8(p);
                for (x, y) in b.iter_mut().zip(d) {
                    *x = veorq_u8(*x, y);
                }
                store8(p, &b);
                p = p.add(16 * W);
                ctr = ctr.wrapping_add(W as u128);
                left -= 1;
                continue;
            }
            // The batches up to the one that would wrap, or up to the wrap
            // (the carry out of the last byte needs a fresh first block).
            let n = ((256 - W - low) / W + 1).min(left);
            let mut next = counter_block(ctr);
            for _ in 0..n {
                next = with_keys!(NR, ctr8_asm!(k, next, inc, p));
                p = p.add(16 * W);
            }
            ctr = ctr.wrapping_add((n * W) as u128);
            left -= n;
        }
        *c = ctr;
        for ch in rest.chunks_mut(16) {
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
            let p = ch.as_mut_ptr();
            if enc {
                with_keys!(NR, xts8_asm!("aese", "aesmc", k, tw, poly, p));
            } else {
                with_keys!(NR, xts8_asm!("aesd", "aesimc", k, tw, poly, p));
            }
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
