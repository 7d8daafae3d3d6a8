//! Constant-time AES on x86-64 without AES-NI: the eight-block bitsliced
//! rounds of [`super::simd128`] in SSE registers, encryption in ShiftRows
//! frames (the row rotations of MixColumns conjugated: `pshufb` with constant
//! indices, `pshufd` where they move whole rows), decryption with
//! InvShiftRows, and the S-boxes as generated assembly
//! ([`super::x86_ssse3_sbox`]). CBC decryption, CTR and XTS run on the
//! kernel directly ([`CbcDecrypt`], [`Ctr`], [`Xts`]); the other modes
//! through the `cipher` traits and [`crate::modes`].
//!
//! SSSE3 is not part of the x86-64 baseline (AMD K8/K10 lack it), so the
//! types here check for it when keyed and [`crate::dispatch`] chooses them
//! only where [`available`] says so. The CPU mask has no `ssse3` name: every
//! x86-64 CPU without it is older than AES-NI, and OpenSSL and libgcrypt use
//! SSSE3 (vector-permute AES) at the same tier.

use core::arch::x86_64::*;
use core::ops::{BitAnd, BitXor, Not};

use cipher::InOutBuf;
use cipher::consts::U8;

use super::bitsliced::{ByteKeys, Rows, bitsliced_aes};
use super::simd128::{self, Block, Vector};

pub use super::simd128::PAR_BLOCKS;

/// Whether this CPU can run the SSSE3 code.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

/// One SSE register of bit planes.
#[derive(Clone, Copy)]
struct Sse(__m128i);

/// Calls SSE2/SSSE3 intrinsics.
macro_rules! sse {
    ($e:expr) => {
        // SAFETY: SSE2 is the x86-64 baseline; the SSSE3 ones run only inside
        // `encrypt_ssse3`/`decrypt_ssse3`, reached only after `available()`
        // (see `Schedule::new`).
        unsafe { $e }
    };
}

impl BitXor for Sse {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, rhs: Self) -> Self {
        Sse(sse!(_mm_xor_si128(self.0, rhs.0)))
    }
}

impl BitAnd for Sse {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, rhs: Self) -> Self {
        Sse(sse!(_mm_and_si128(self.0, rhs.0)))
    }
}

impl Not for Sse {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Sse(sse!(_mm_xor_si128(self.0, _mm_set1_epi8(-1))))
    }
}

impl Rows for Sse {
    #[inline(always)]
    fn rot1(self) -> Self {
        Sse(sse!(_mm_shuffle_epi32::<0b00_11_10_01>(self.0)))
    }
    #[inline(always)]
    fn rot2(self) -> Self {
        Sse(sse!(_mm_shuffle_epi32::<0b01_00_11_10>(self.0)))
    }
}

impl Vector for Sse {
    // Encryption in frames: fewer shuffles a round; measured faster on Zen 3
    // than ShiftRows by `pshufb` and rotations by `pshufd` (ECB +3.5%), and
    // fewer instructions (aes-ecb:128 19.62 against 19.74 a byte).
    // Decryption not: InvMixColumns has three rotations, `pshufb` in frames
    // (each after a copy, it overwrites its operand) where `pshufd` copies
    // for free, 24.21 instructions a byte in frames against 22.72.
    const FRAMES: bool = true;
    const DEC_FRAMES: bool = false;
    const CONST_FRAMES: bool = true;

    #[inline(always)]
    fn load(bytes: &[u8; 16]) -> Self {
        // SAFETY: `bytes` is 16 readable bytes; the load is unaligned.
        Sse(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) })
    }
    #[inline(always)]
    fn sub_bytes(x: &mut [Self; 8]) {
        let mut v = x.map(|v| v.0);
        super::x86_ssse3_sbox::sub_bytes(&mut v);
        *x = v.map(Sse);
    }
    #[inline(always)]
    fn inv_sub_bytes(x: &mut [Self; 8]) {
        let mut v = x.map(|v| v.0);
        super::x86_ssse3_sbox::inv_sub_bytes(&mut v);
        *x = v.map(Sse);
    }
    #[inline(always)]
    fn load_aligned(bytes: &simd128::Aligned) -> Self {
        // SAFETY: `Aligned` is 16 readable bytes on a 16-byte boundary.
        Sse(unsafe { _mm_load_si128(bytes.0.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, bytes: &mut [u8; 16]) {
        // SAFETY: `bytes` is 16 writable bytes; the store is unaligned.
        unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn splat(b: u8) -> Self {
        Sse(sse!(_mm_set1_epi8(b as i8)))
    }
    #[inline(always)]
    fn permute(self, idx: &'static [u8; 16]) -> Self {
        let idx = Self::load(idx);
        Sse(sse!(_mm_shuffle_epi8(self.0, idx.0)))
    }
    #[inline(always)]
    fn shr64<const N: i32>(self) -> Self {
        Sse(sse!(_mm_srli_epi64::<N>(self.0)))
    }
    #[inline(always)]
    fn shl64<const N: i32>(self) -> Self {
        Sse(sse!(_mm_slli_epi64::<N>(self.0)))
    }
}

/// The shared schedule, made only where SSSE3 is available.
#[derive(Clone)]
struct Schedule(simd128::Schedule);

impl Schedule {
    fn new(bytes: &ByteKeys, rounds: usize) -> Self {
        assert!(available(), "the SSSE3 AES needs a CPU with SSSE3");
        Schedule(simd128::Schedule::new(bytes, rounds))
    }
}

#[target_feature(enable = "ssse3")]
fn encrypt_ssse3(s: &simd128::Schedule, buf: InOutBuf<'_, '_, Block>) {
    simd128::encrypt::<Sse>(s, buf)
}

#[target_feature(enable = "ssse3")]
fn decrypt_ssse3(s: &simd128::Schedule, buf: InOutBuf<'_, '_, Block>) {
    simd128::decrypt::<Sse>(s, buf)
}

#[inline(always)]
fn encrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    // SAFETY: a `Schedule` exists only after `available()` (see `new`).
    unsafe { encrypt_ssse3(&s.0, buf) }
}

#[inline(always)]
fn decrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    // SAFETY: as in `encrypt`.
    unsafe { decrypt_ssse3(&s.0, buf) }
}

bitsliced_aes!(
    U8,
    "constant-time SSSE3 bitsliced (eight blocks in SSE registers)."
);

/// Bytes the kernel takes at once.
const CHUNK: usize = 16 * PAR_BLOCKS;

/// CBC decryption of one chunk; `iv` becomes its last ciphertext block. The
/// blocks are written last to first, so that each block's predecessor is
/// still ciphertext when it is read: the data is read and written once,
/// with no copy of the ciphertext aside.
#[inline(always)]
fn cbc_decrypt_chunk(s: &simd128::Schedule, iv: &mut [u8; 16], chunk: &mut [u8; CHUNK]) {
    let (b, _) = chunk.as_chunks_mut::<16>();
    let mut x = [Sse::splat(0); PAR_BLOCKS];
    for (v, b) in x.iter_mut().zip(b.iter()) {
        *v = Sse::load(b).permute(&simd128::TO_ROWS);
    }
    let p = simd128::decrypt_rows(s, x);
    let last = Sse::load(&b[PAR_BLOCKS - 1]);
    for i in (1..PAR_BLOCKS).rev() {
        let prev = Sse::load(&b[i - 1]);
        (p[i] ^ prev).store(&mut b[i]);
    }
    (p[0] ^ Sse::load(iv)).store(&mut b[0]);
    last.store(iv);
}

#[target_feature(enable = "ssse3")]
fn cbc_decrypt_ssse3(s: &simd128::Schedule, iv: &mut [u8; 16], data: &mut [u8]) {
    let (whole, tail) = data.as_chunks_mut::<CHUNK>();
    for chunk in whole {
        cbc_decrypt_chunk(s, iv, chunk);
    }
    if let Some(&last) = tail.last_chunk::<16>() {
        // Fewer than eight blocks: through a chunk of zeros, wiped after.
        let mut buf = zeroize::Zeroizing::new([0u8; CHUNK]);
        let n = tail.len();
        buf[..n].copy_from_slice(tail);
        cbc_decrypt_chunk(s, iv, &mut buf);
        tail.copy_from_slice(&buf[..n]);
        // The padding left a block of zeros in `iv`.
        *iv = last;
    }
}

/// CBC decryption on this kernel straight from the data: the generic
/// batched mode ([`crate::modes::BlockModes::cbc_decrypt`]) copies each
/// batch's ciphertext aside and XORs in a pass of its own.
pub trait CbcDecrypt {
    /// CBC decryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block.
    ///
    /// # Panics
    /// If `data` is not whole blocks.
    fn cbc_decrypt(&self, iv: &mut [u8; 16], data: &mut [u8]);
}

macro_rules! cbc_decrypt {
    ($($name:ident),*) => {$(
        impl CbcDecrypt for $name {
            fn cbc_decrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
                assert!(data.len().is_multiple_of(16), "whole blocks only");
                // SAFETY: a `Schedule` exists only after `available()` (see
                // `Schedule::new`).
                unsafe { cbc_decrypt_ssse3(&self.schedule.0, iv, data) }
            }
        }
    )*};
}

cbc_decrypt!(Aes128, Aes192, Aes256);

/// Row-major bytes of a big-endian counter block from the counter's value
/// in a register ([`from_u128`], little-endian): row-major byte `j` is
/// FIPS-197 byte `TO_ROWS[j]`, byte `15 - TO_ROWS[j]` of the value.
static CTR_ROWS: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut j = 0;
    while j < 16 {
        t[j] = 15 - simd128::TO_ROWS[j];
        j += 1;
    }
    t
};

/// Bits 0, 1 and 2 of the block index `b` at bit `b` of byte 15 (the last
/// counter byte, row-major byte 15 too): planes 0, 1 and 2 of the low byte of
/// eight counters from a multiple of eight.
static LOW_BITS: [[u8; 16]; 3] = {
    let mut t = [[0u8; 16]; 3];
    t[0][15] = 0xaa;
    t[1][15] = 0xcc;
    t[2][15] = 0xf0;
    t
};

/// The bitsliced state of the eight counter blocks `c..c + 8`, `c` a
/// multiple of eight, with round key 0 added: the blocks differ only in the
/// three low bits of byte 15, so each plane is a byte mask of one bit of
/// `c ^ key 0` (the same in every block) with the index bits put in, and the
/// transposition that loading blocks costs is not needed.
#[inline(always)]
fn ctr_planes(s: &simd128::Schedule, c: u128) -> [Sse; PAR_BLOCKS] {
    debug_assert!(c.is_multiple_of(8));
    let x = from_u128(c).permute(&CTR_ROWS) ^ simd128::key0_rows::<Sse>(s);
    core::array::from_fn(|i| {
        let bit = Sse::splat(1 << i);
        let plane = Sse(sse!(_mm_cmpeq_epi8((x & bit).0, bit.0)));
        match LOW_BITS.get(i) {
            Some(low) => plane ^ Sse::load(low),
            None => plane,
        }
    })
}

/// CTR over the whole chunks of `data` from the big-endian counter `c`
/// (wrapping mod 2^128), which advances by the blocks done; returns the
/// bytes done.
#[target_feature(enable = "ssse3")]
fn ctr_ssse3(s: &simd128::Schedule, c: &mut u128, data: &mut [u8]) -> usize {
    let (chunks, _) = data.as_chunks_mut::<CHUNK>();
    // The counter is public: which way the blocks are made may depend on it.
    let aligned = c.is_multiple_of(PAR_BLOCKS as u128);
    for chunk in chunks.iter_mut() {
        let y = if aligned {
            simd128::encrypt_keyed_planes(s, ctr_planes(s, *c))
        } else {
            let x =
                core::array::from_fn(|b| from_u128(c.wrapping_add(b as u128)).permute(&CTR_ROWS));
            simd128::encrypt_rows(s, x)
        };
        *c = c.wrapping_add(PAR_BLOCKS as u128);
        let (b, _) = chunk.as_chunks_mut::<16>();
        for (y, b) in y.iter().zip(b.iter_mut()) {
            (*y ^ Sse::load(b)).store(b);
        }
    }
    chunks.len() * CHUNK
}

/// CTR on this kernel with the counters made in registers and the
/// keystream XORed into the data as it is stored (the generic
/// [`crate::modes::BlockModes::ctr_apply`] writes counters to a buffer,
/// encrypts it and XORs in a pass of its own).
pub trait Ctr {
    /// Applies the keystream from the big-endian `counter` (wrapping mod
    /// 2^128) to the whole eight-block chunks of `data`; `counter` advances
    /// by the blocks done. Returns the bytes done: the caller runs the
    /// generic CTR on the rest.
    fn ctr_batches(&self, counter: &mut [u8; 16], data: &mut [u8]) -> usize;
}

macro_rules! ctr {
    ($($name:ident),*) => {$(
        impl Ctr for $name {
            fn ctr_batches(&self, counter: &mut [u8; 16], data: &mut [u8]) -> usize {
                let mut c = u128::from_be_bytes(*counter);
                // SAFETY: a `Schedule` exists only after `available()` (see
                // `Schedule::new`).
                let done = unsafe { ctr_ssse3(&self.schedule.0, &mut c, data) };
                *counter = c.to_be_bytes();
                done
            }
        }
    )*};
}

ctr!(Aes128, Aes192, Aes256);

/// A `u128` in a register, little-endian (the low 64 bits in lane 0).
#[inline(always)]
fn from_u128(x: u128) -> Sse {
    Sse(sse!(_mm_set_epi64x((x >> 64) as i64, x as i64)))
}

/// A chunk's eight tweaks as little-endian blocks, in memory.
type Tweaks = [[u8; 16]; PAR_BLOCKS];

/// Writes the eight tweaks from `t` to `out`; `t` advances by eight. The
/// doublings run on the integer pipes, which the bitsliced rounds leave
/// idle (they are bound by the vector pipes), and the next chunk's tweaks
/// are made while this chunk is encrypted, so the vector side only loads
/// them (XTS 1.015-1.036x against doubling in SSE registers, AES-128 and
/// AES-256 both ways, in one process on Zen 4).
#[inline(always)]
fn next_tweaks(t: &mut u128, out: &mut Tweaks) {
    for o in out.iter_mut() {
        *o = t.to_le_bytes();
        *t = super::mul_alpha(*t);
    }
}

/// XTS over one chunk with the tweaks `tw`.
#[inline(always)]
fn xts_chunk<const ENC: bool>(s: &simd128::Schedule, tw: &Tweaks, chunk: &mut [u8; CHUNK]) {
    let (b, _) = chunk.as_chunks_mut::<16>();
    // A loop, not `array::from_fn`, which the compiler left out of line
    // here (a call, the blocks through the stack: XTS 0.80-0.94x).
    let mut x = [Sse::splat(0); PAR_BLOCKS];
    for i in 0..PAR_BLOCKS {
        x[i] = (Sse::load(&b[i]) ^ Sse::load(&tw[i])).permute(&simd128::TO_ROWS);
    }
    let y = if ENC {
        simd128::encrypt_rows(s, x)
    } else {
        simd128::decrypt_rows(s, x)
    };
    for i in 0..PAR_BLOCKS {
        (y[i] ^ Sse::load(&tw[i])).store(&mut b[i]);
    }
}

#[target_feature(enable = "ssse3")]
fn xts_ssse3<const ENC: bool>(s: &simd128::Schedule, t: &mut u128, data: &mut [u8]) {
    // Two buffers: this chunk's tweaks, and the next one's being made.
    let mut bufs = zeroize::Zeroizing::new([[[0u8; 16]; PAR_BLOCKS]; 2]);
    let [cur, next] = &mut *bufs;
    let mut t_next = *t;
    next_tweaks(&mut t_next, cur);
    let (whole, tail) = data.as_chunks_mut::<CHUNK>();
    for chunk in whole {
        next_tweaks(&mut t_next, next);
        xts_chunk::<ENC>(s, cur, chunk);
        core::mem::swap(cur, next);
    }
    // `cur` holds the tweaks of the blocks after the whole chunks.
    let n = tail.len() / 16;
    if n > 0 {
        // Fewer than eight blocks: through a chunk of zeros, wiped after.
        let mut buf = zeroize::Zeroizing::new([0u8; CHUNK]);
        buf[..tail.len()].copy_from_slice(tail);
        xts_chunk::<ENC>(s, cur, &mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
    }
    *t = u128::from_le_bytes(cur[n]);
}

/// XTS-AES (IEEE 1619) on this kernel, with ciphertext stealing: each
/// chunk's tweaks made on the integer side while the chunk before is
/// encrypted (`next_tweaks`) and XORed in on the way into and out of the
/// kernel (the generic [`crate::modes::Xts`] XORs them in passes of their
/// own over the data). `C` is [`Aes128`], [`Aes192`] or [`Aes256`].
pub struct Xts<C> {
    data: C,
    tweak: C,
}

/// The AES types [`Xts`] runs on.
pub trait XtsKernel:
    cipher::KeyInit + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
{
    /// XTS over whole blocks from the little-endian tweak `t`, which
    /// advances by the blocks done.
    fn xts_blocks(&self, t: &mut u128, data: &mut [u8], encrypt: bool);
}

macro_rules! xts_kernel {
    ($($name:ident),*) => {$(
        impl XtsKernel for $name {
            fn xts_blocks(&self, t: &mut u128, data: &mut [u8], encrypt: bool) {
                debug_assert!(data.len().is_multiple_of(16));
                // SAFETY: a `Schedule` exists only after `available()` (see
                // `Schedule::new`).
                unsafe {
                    if encrypt {
                        xts_ssse3::<true>(&self.schedule.0, t, data)
                    } else {
                        xts_ssse3::<false>(&self.schedule.0, t, data)
                    }
                }
            }
        }
    )*};
}

xts_kernel!(Aes128, Aes192, Aes256);

impl<C: XtsKernel> Xts<C> {
    /// Keys XTS with `key` = data key ‖ tweak key; `None` when the halves
    /// are not `C`'s key size.
    pub fn new(key: &[u8]) -> Option<Self> {
        let (k1, k2) = key.split_at(key.len() / 2);
        Some(Xts {
            data: C::new_from_slice(k1).ok()?,
            tweak: C::new_from_slice(k2).ok()?,
        })
    }

    fn initial_tweak(&self, iv: &[u8; 16]) -> u128 {
        let mut t = cipher::Block::<C>::from(*iv);
        self.tweak.encrypt_block(&mut t);
        u128::from_le_bytes(t.into())
    }

    /// Encrypts one data unit (at least 16 bytes) whose IV is `iv`.
    ///
    /// # Panics
    /// If `data` is shorter than a block.
    pub fn encrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        super::xts_encrypt_with(self.initial_tweak(iv), data, |t, d, e| {
            self.data.xts_blocks(t, d, e)
        })
    }

    /// Decrypts one data unit encrypted by [`Xts::encrypt`].
    ///
    /// # Panics
    /// If `data` is shorter than a block.
    pub fn decrypt(&self, iv: &[u8; 16], data: &mut [u8]) {
        super::xts_decrypt_with(self.initial_tweak(iv), data, |t, d, e| {
            self.data.xts_blocks(t, d, e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_common::{check_against_oracle, fips197, modes};
    use super::*;

    /// Both encryption variants of the shared kernel on this CPU (NEON
    /// runs the frames).
    #[target_feature(enable = "ssse3")]
    fn encrypt_both(s: &simd128::Schedule, blocks: &mut [Block]) -> Vec<Block> {
        let mut other = blocks.to_vec();
        simd128::encrypt_as::<Sse>(s, InOutBuf::from(blocks), true);
        simd128::encrypt_as::<Sse>(s, InOutBuf::from(&mut other[..]), false);
        other
    }

    /// Both decryption variants (NEON runs the plain rounds).
    #[target_feature(enable = "ssse3")]
    fn decrypt_both(s: &simd128::Schedule, blocks: &mut [Block]) -> Vec<Block> {
        let mut other = blocks.to_vec();
        simd128::decrypt_as::<Sse>(s, InOutBuf::from(blocks), true);
        simd128::decrypt_as::<Sse>(s, InOutBuf::from(&mut other[..]), false);
        other
    }

    #[test]
    fn ssse3_frames_and_plain_rounds_agree_with_the_aes_crate_both_ways() {
        use cipher::{BlockCipherEncrypt, KeyInit};
        if !available() {
            eprintln!("note: no SSSE3 on this CPU, the SSSE3 AES is not tested");
            return;
        }
        let mut rng = super::super::tests_common::Rng::new(5);
        for len in [16, 24, 32] {
            let mut key = vec![0u8; len];
            rng.fill(&mut key);
            let (bytes, rounds) = super::super::bitsliced::expand_key(&key);
            let s = simd128::Schedule::new(&bytes, rounds);
            for n in 1..=PAR_BLOCKS {
                let mut data = vec![Block::default(); n];
                for b in &mut data {
                    rng.fill(b);
                }
                let mut expect = data.clone();
                match len {
                    16 => aes::Aes128::new_from_slice(&key)
                        .unwrap()
                        .encrypt_blocks(&mut expect),
                    24 => aes::Aes192::new_from_slice(&key)
                        .unwrap()
                        .encrypt_blocks(&mut expect),
                    _ => aes::Aes256::new_from_slice(&key)
                        .unwrap()
                        .encrypt_blocks(&mut expect),
                }
                let original = data.clone();
                // SAFETY: `available()` said SSSE3.
                let plain = unsafe { encrypt_both(&s, &mut data) };
                assert_eq!(data, expect, "frames, {len}-byte key, {n} blocks");
                assert_eq!(plain, expect, "plain rounds, {len}-byte key, {n} blocks");
                // SAFETY: as above.
                let plain = unsafe { decrypt_both(&s, &mut data) };
                assert_eq!(
                    data, original,
                    "decryption in frames, {len}-byte key, {n} blocks"
                );
                assert_eq!(
                    plain, original,
                    "plain decryption, {len}-byte key, {n} blocks"
                );
            }
        }
    }

    #[test]
    fn ssse3_matches_the_aes_crate() {
        if !available() {
            eprintln!("note: no SSSE3 on this CPU, the SSSE3 AES is not tested");
            return;
        }
        check_against_oracle::<Aes128, aes::Aes128>();
        check_against_oracle::<Aes192, aes::Aes192>();
        check_against_oracle::<Aes256, aes::Aes256>();
        check_against_oracle::<Aes256, super::super::soft::Aes256>();
        fips197::<Aes128, Aes192, Aes256>();
        modes::<Aes128, aes::Aes128>();
        modes::<Aes192, aes::Aes192>();
        modes::<Aes256, aes::Aes256>();
    }

    /// [`CbcDecrypt`] against the generic CBC decryption over the `aes`
    /// crate: every block count up to a few chunks (each tail length), at
    /// odd offsets in the buffer, in one call and split at a random block.
    fn cbc_decrypt_matches<C, O>()
    where
        C: CbcDecrypt + cipher::KeyInit,
        O: cipher::KeyInit<KeySize = C::KeySize>
            + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
            + cipher::BlockCipherDecrypt,
    {
        use crate::modes::BlockModes;
        let mut rng = super::super::tests_common::Rng::new(C::key_size() as u64 + 77);
        let mut key = vec![0u8; C::key_size()];
        rng.fill(&mut key);
        let ours = C::new_from_slice(&key).unwrap();
        let mut oracle = BlockModes::new(O::new_from_slice(&key).unwrap());
        for blocks in 0..=3 * PAR_BLOCKS + 1 {
            let offset = rng.below(16);
            let mut buf = vec![0u8; offset + 16 * blocks];
            rng.fill(&mut buf);
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            let mut expect = buf[offset..].to_vec();
            let mut iv_expect = iv;
            oracle.cbc_decrypt(&mut iv_expect, &mut expect);
            let mut whole = buf.clone();
            let mut iv_whole = iv;
            ours.cbc_decrypt(&mut iv_whole, &mut whole[offset..]);
            assert_eq!(
                &whole[offset..],
                &expect[..],
                "{blocks} blocks at +{offset}"
            );
            assert_eq!(iv_whole, iv_expect, "next IV, {blocks} blocks");
            let split = 16 * rng.below(blocks + 1);
            let mut iv_parts = iv;
            let (a, b) = buf[offset..].split_at_mut(split);
            ours.cbc_decrypt(&mut iv_parts, a);
            ours.cbc_decrypt(&mut iv_parts, b);
            assert_eq!(
                &buf[offset..],
                &expect[..],
                "{blocks} blocks split at {split}"
            );
            assert_eq!(iv_parts, iv_expect, "next IV, split at {split}");
        }
    }

    /// [`Xts`] against the generic XTS over the `aes` crate: every length
    /// from one block to a few chunks (whole and partial last blocks, each
    /// tail), at odd offsets in the buffer, tweaks from random IVs.
    fn xts_matches<C, O>()
    where
        C: XtsKernel,
        O: cipher::KeyInit<KeySize = C::KeySize>
            + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
            + cipher::BlockCipherDecrypt,
    {
        let mut rng = super::super::tests_common::Rng::new(C::key_size() as u64 + 99);
        let mut key = vec![0u8; 2 * C::key_size()];
        rng.fill(&mut key);
        let ours = Xts::<C>::new(&key).unwrap();
        let (k1, k2) = key.split_at(C::key_size());
        let mut oracle = crate::modes::Xts::new(
            O::new_from_slice(k1).unwrap(),
            O::new_from_slice(k2).unwrap(),
        );
        for len in 16..=16 * (3 * PAR_BLOCKS + 1) + 15 {
            let offset = rng.below(16);
            let mut buf = vec![0u8; offset + len];
            rng.fill(&mut buf);
            let plain = buf[offset..].to_vec();
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            let mut expect = plain.clone();
            oracle.encrypt(&iv, &mut expect);
            ours.encrypt(&iv, &mut buf[offset..]);
            assert_eq!(
                &buf[offset..],
                &expect[..],
                "encrypt {len} bytes at +{offset}"
            );
            ours.decrypt(&iv, &mut buf[offset..]);
            assert_eq!(
                &buf[offset..],
                &plain[..],
                "decrypt {len} bytes at +{offset}"
            );
        }
    }

    #[test]
    fn ssse3_xts_matches_the_aes_crate() {
        if !available() {
            eprintln!("note: no SSSE3 on this CPU, the SSSE3 AES is not tested");
            return;
        }
        xts_matches::<Aes128, aes::Aes128>();
        xts_matches::<Aes192, aes::Aes192>();
        xts_matches::<Aes256, aes::Aes256>();
    }

    /// [`Ctr`] (then the generic CTR for the tail, as the catalogue runs it)
    /// against the generic CTR over the `aes` crate, from counters on both
    /// sides of the 2^32, 2^64 and 2^128 carries, multiples of eight (the
    /// bitsliced counters) and not, in one call and split at a random block.
    fn ctr_matches<C, O>()
    where
        C: Ctr + cipher::KeyInit + cipher::BlockCipherEncrypt + cipher::BlockCipherDecrypt,
        O: cipher::KeyInit<KeySize = C::KeySize>
            + cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16>
            + cipher::BlockCipherDecrypt,
    {
        use crate::modes::BlockModes;
        let mut rng = super::super::tests_common::Rng::new(C::key_size() as u64 + 55);
        let mut key = vec![0u8; C::key_size()];
        rng.fill(&mut key);
        let ours = C::new_from_slice(&key).unwrap();
        let mut tail = BlockModes::new(C::new_from_slice(&key).unwrap());
        let mut oracle = BlockModes::new(O::new_from_slice(&key).unwrap());
        let mut random = [0u8; 16];
        rng.fill(&mut random);
        let mut starts = vec![u128::from_be_bytes(random), 0];
        for edge in [1u128 << 32, 1u128 << 64, 0] {
            for back in 1..=2 * PAR_BLOCKS as u128 + 1 {
                starts.push(edge.wrapping_sub(back));
            }
        }
        for start in starts {
            let blocks = rng.below(4 * PAR_BLOCKS);
            let len = 16 * blocks + rng.below(16);
            let offset = rng.below(16);
            let mut buf = vec![0u8; offset + len];
            rng.fill(&mut buf);
            let mut expect = buf[offset..].to_vec();
            let mut c_expect = start.to_be_bytes();
            oracle.ctr_apply(&mut c_expect, &mut expect);
            let split = 16 * rng.below(blocks + 1);
            let mut c = start.to_be_bytes();
            let (a, b) = buf[offset..].split_at_mut(split);
            for part in [a, b] {
                let done = ours.ctr_batches(&mut c, part);
                assert_eq!(done, part.len() / CHUNK * CHUNK);
                tail.ctr_apply(&mut c, &mut part[done..]);
            }
            assert_eq!(
                &buf[offset..],
                &expect[..],
                "{len} bytes from {start:#x}, split at {split}"
            );
            assert_eq!(c, c_expect, "next counter from {start:#x}");
        }
    }

    #[test]
    fn ssse3_ctr_matches_the_aes_crate() {
        if !available() {
            eprintln!("note: no SSSE3 on this CPU, the SSSE3 AES is not tested");
            return;
        }
        ctr_matches::<Aes128, aes::Aes128>();
        ctr_matches::<Aes192, aes::Aes192>();
        ctr_matches::<Aes256, aes::Aes256>();
    }

    #[test]
    fn ssse3_cbc_decryption_matches_the_aes_crate() {
        if !available() {
            eprintln!("note: no SSSE3 on this CPU, the SSSE3 AES is not tested");
            return;
        }
        cbc_decrypt_matches::<Aes128, aes::Aes128>();
        cbc_decrypt_matches::<Aes192, aes::Aes192>();
        cbc_decrypt_matches::<Aes256, aes::Aes256>();
    }
}
