//! ChaCha20 on AVX2 stitched with scalar Poly1305, for the ChaCha20-Poly1305
//! AEAD ([`crate::aead::chacha20_poly1305`]): the technique of libgcrypt's
//! `_gcry_chacha20_poly1305_amd64_avx2_blocks8` and of OpenSSL's and AWS-LC's
//! `chacha20_poly1305_x86_64`.
//!
//! The ChaCha rounds of one 8-block batch (512 bytes) keep the vector ports
//! busy and leave the integer multipliers idle; Poly1305 in radix 2^64 is
//! integer multiplies and adds. So each batch hashes 32 Poly1305 blocks (512
//! bytes) along with its rounds: one in each of the four steps (column or
//! diagonal pairs) of the first 2 double rounds and in each of the last three
//! steps of the other 8, cut in four parts between the step's vector
//! instructions ([`super::x86_avx2`]'s assembly); the out-of-order core runs
//! both at once. The Poly1305 limbs stay in
//! general-purpose registers for the whole loop; BMI2's `mulx` (three
//! operands, flags untouched) lets the parts leave no carry pending between
//! them.
//!
//! Opening hashes each batch's ciphertext while it computes the batch's key
//! stream, then decrypts it; sealing hashes the previous batch's ciphertext
//! (one batch behind) and the last one after the loop. So sealing has no
//! Poly1305 work in its first batch, and [`seal_keyed`] runs the rounds of
//! block 0, the one-time key, on the integer units there instead of before.

use super::x86_avx2::{Hash, N, Words, batch_and_block, broadcast, keystream, xor_out};
use super::{BLOCK, KEY_LEN, NONCE_LEN, state};
use crate::dispatch::ChaChaImpl;
use crate::wide::poly1305::{self, Key, Poly1305Hash};
use zeroize::Zeroizing;

/// Bytes per batch: 8 ChaCha blocks, 32 Poly1305 blocks.
pub(crate) const BATCH: usize = N * BLOCK;

/// Whether this CPU can run the stitched code: AVX2 and BMI2 (every AVX2 CPU
/// from Intel Haswell and AMD Excavator on has both; a VM may hide one).
pub(crate) fn runnable() -> bool {
    super::runnable(ChaChaImpl::Avx2) && std::arch::is_x86_feature_detected!("bmi2")
}

/// The ChaCha20 key stream of the batch at counter `ctr` ([`keystream`])
/// XORed into `out`, with the 32 Poly1305 blocks of `prev`, or if none of
/// `out` before the XOR, absorbed into `h` along with the rounds. Out of
/// line, so that the loops around it keep their registers to themselves
/// (inlined into them, it was 4% slower); the key stream goes from registers
/// into the XOR.
#[inline(never)]
#[target_feature(enable = "avx2,bmi2")]
fn batch_hashing(
    st: &Words,
    ctr: u32,
    out: &mut [u8; BATCH],
    prev: Option<&[u8; BATCH]>,
    key: Key,
    h: &mut [u64; 3],
) {
    let src = prev.unwrap_or(out);
    let limbs = key.limbs();
    // All 32 blocks inside the rounds: two double rounds take four, the
    // other eight three (until 2026-11-26 ten took three and the last two
    // blocks came after the rounds; all inside measured 1.01-1.04x sealing,
    // 0.97-1.02x opening on Zen 4, in noisy interleaved runs).
    // SAFETY: AVX2 and BMI2 are enabled here, so the CPU has them.
    let x = unsafe { keystream::<20>(st, ctr, Hash::new(h, &limbs, src)) };
    xor_out(&x, out);
}

/// Absorbs the 32 Poly1305 blocks of `src` into `h`.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn hash_batch(src: &[u8], key: Key, h: &mut [u64; 3]) {
    for b in src.chunks_exact(poly1305::BLOCK) {
        key.absorb(h, u128::from_le_bytes(b.try_into().expect("16 bytes")), 1);
    }
}

/// Seals `data` (whole batches) from the state `st`, hashing the ciphertext.
///
/// # Safety
/// The CPU must support AVX2 and BMI2.
#[target_feature(enable = "avx2,bmi2")]
unsafe fn seal_batches(st: &[u32; 16], data: &mut [u8], key: Key, h: &mut [u64; 3]) {
    debug_assert!(data.len().is_multiple_of(BATCH));
    if data.is_empty() {
        return;
    }
    let words = Zeroizing::new(broadcast(st));
    // Nothing sealed yet to hash while the first batch's key stream runs.
    // SAFETY: AVX2 is enabled here.
    xor_out(
        &unsafe { keystream::<20>(&words, st[12], ()) },
        &mut data[..BATCH],
    );
    // SAFETY: AVX2 and BMI2 are enabled here.
    unsafe { seal_after_first(&words, st[12], data, key, h) };
}

/// [`seal_batches`] after the first batch, which is sealed (from counter
/// `ctr`) but not hashed.
///
/// # Safety
/// The CPU must support AVX2 and BMI2.
#[target_feature(enable = "avx2,bmi2")]
unsafe fn seal_after_first(st: &Words, ctr: u32, data: &mut [u8], key: Key, h: &mut [u64; 3]) {
    let batches = data.len() / BATCH;
    let mut hh = *h;
    let mut ctr = ctr;
    for i in 1..batches {
        ctr = ctr.wrapping_add(N as u32);
        let (done, rest) = data.split_at_mut(i * BATCH);
        let prev: &[u8; BATCH] = done[done.len() - BATCH..].try_into().expect("a batch");
        let out: &mut [u8; BATCH] = (&mut rest[..BATCH]).try_into().expect("a batch");
        batch_hashing(st, ctr, out, Some(prev), key, &mut hh);
    }
    hash_batch(&data[data.len() - BATCH..], key, &mut hh);
    *h = hh;
}

/// Opens `data` (whole batches) from the state `st`, hashing the ciphertext
/// of each batch before it decrypts it.
///
/// # Safety
/// The CPU must support AVX2 and BMI2.
#[target_feature(enable = "avx2,bmi2")]
unsafe fn open_batches(st: &[u32; 16], data: &mut [u8], key: Key, h: &mut [u64; 3]) {
    debug_assert!(data.len().is_multiple_of(BATCH));
    let mut hh = *h;
    let mut ctr = st[12];
    let st = &Zeroizing::new(broadcast(st));
    for chunk in data.chunks_exact_mut(BATCH) {
        let out: &mut [u8; BATCH] = chunk.try_into().expect("a batch");
        batch_hashing(st, ctr, out, None, key, &mut hh);
        ctr = ctr.wrapping_add(N as u32);
    }
    *h = hh;
}

/// ChaCha20-Poly1305 sealing of the whole 512-byte batches of `data` (at
/// least one) for `key` and `nonce`, from block 1, with block 0, the
/// one-time key, made beside the first batch ([`batch_and_block`]): `start`
/// takes block 0 and returns the hash keyed with it (that has absorbed the
/// aad) and anything else it keeps of it; the ciphertext is then absorbed
/// as in [`seal`]. Returns the bytes done, the hash and what `start` kept.
///
/// # Panics
/// If the CPU cannot run it ([`runnable`]), `data` holds no whole batch,
/// or the batches would run the block counter past `u32::MAX`.
pub(crate) fn seal_keyed<T>(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    data: &mut [u8],
    start: impl FnOnce(&[u8; BLOCK]) -> (Poly1305Hash, T),
) -> (usize, Poly1305Hash, T) {
    assert!(runnable(), "AVX2 and BMI2");
    let data = whole_batches(1, data);
    assert!(!data.is_empty(), "a whole batch");
    let st = Zeroizing::new(state(key, 1, nonce));
    let init0 = Zeroizing::new(state(key, 0, nonce));
    // SAFETY: `runnable` checked AVX2 and BMI2.
    let words = Zeroizing::new(unsafe { broadcast(&st) });
    let first: &mut [u8; BATCH] = (&mut data[..BATCH]).try_into().expect("a batch");
    // Block 0's key stream XORed into zeros: the block itself.
    let mut block0 = Zeroizing::new([0u8; BLOCK]);
    // SAFETY: as above.
    unsafe { batch_and_block::<20>(&words, 1, first, &init0, &mut block0) };
    let (mut mac, kept) = start(&block0);
    let (k, mut h) = mac.state();
    // SAFETY: as above.
    unsafe { seal_after_first(&words, 1, data, k, &mut h) };
    mac.set_h(h);
    (data.len(), mac, kept)
}

/// The whole batches of `data`, checked against the counter's end.
fn whole_batches(counter: u32, data: &mut [u8]) -> &mut [u8] {
    let len = data.len() / BATCH * BATCH;
    assert!(
        (len / BLOCK) as u64 <= u64::from(u32::MAX - counter),
        "ChaCha block counter would wrap"
    );
    &mut data[..len]
}

/// ChaCha20 for `key` and `nonce` from block `counter` XORed into the whole
/// 512-byte batches of `data`, and Poly1305 (`mac`) over the result: the
/// sealing half of the AEAD. Returns the bytes done; the caller finishes the
/// rest (under 512 bytes).
///
/// # Panics
/// If the CPU cannot run it ([`runnable`]), or the batches would run the
/// block counter past `u32::MAX`.
pub(crate) fn seal(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
    mac: &mut Poly1305Hash,
) -> usize {
    batches(key, nonce, counter, data, mac, true)
}

/// Poly1305 (`mac`) over the whole 512-byte batches of `data`, and ChaCha20
/// for `key` and `nonce` from block `counter` XORed into them: the opening
/// half of the AEAD, which decrypts before the tag is known (the caller
/// undoes it on a bad tag). Returns the bytes done; the caller finishes the
/// rest (under 512 bytes).
///
/// # Panics
/// As [`seal`].
pub(crate) fn open(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
    mac: &mut Poly1305Hash,
) -> usize {
    batches(key, nonce, counter, data, mac, false)
}

/// [`seal`] (`seal`) or [`open`]: the whole batches, with the hash state
/// taken out of `mac` and put back.
fn batches(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
    mac: &mut Poly1305Hash,
    seal: bool,
) -> usize {
    assert!(runnable(), "AVX2 and BMI2");
    let data = whole_batches(counter, data);
    let st = Zeroizing::new(state(key, counter, nonce));
    let (k, mut h) = mac.state();
    // SAFETY: `runnable` checked AVX2 and BMI2.
    unsafe {
        if seal {
            seal_batches(&st, data, k, &mut h)
        } else {
            open_batches(&st, data, k, &mut h)
        }
    };
    mac.set_h(h);
    data.len()
}
