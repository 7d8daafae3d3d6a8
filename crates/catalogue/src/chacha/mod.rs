//! ChaCha (RFC 8439) and XChaCha (draft-irtf-cfrg-xchacha) key streams, with
//! one backend module per instruction set, chosen by [`dispatch::chacha`].
//!
//! The `chacha20` crate picks AVX2/AVX-512 on its own and cannot be told
//! `CLUSTERCRYPT_DISABLE_HWF`, so every tier runs this code instead; the crate
//! stays the test oracle. The number of rounds is a const generic (20, 12 or
//! 8) so that XChaCha12 (Adiantum) shares the kernels.
//!
//! Layout (RFC 8439 section 2.3): 4 constant words, 8 key words, a 32-bit
//! block counter and a 96-bit nonce. As in the crate, the counter never wraps:
//! a request that would go past block `u32::MAX - 1` is refused.
//!
//! Every SIMD backend keeps each of the 16 state words of N blocks in one
//! vector (lane `i` = block `counter + i`), runs the rounds, transposes and
//! XORs N x 64 bytes at a time; a short tail is a full batch into a stack
//! buffer.

use zeroize::{Zeroize, Zeroizing};

use crate::dispatch::{self, ChaChaImpl};

/// Four interleaved quarter rounds (RFC 8439 section 2.1) on vectors of state
/// words, with the backend's `add`, `xor` and rotations.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")),
    allow(unused_macros, reason = "only the SIMD backends use it")
)]
macro_rules! qr4 {
    ($x:ident, $add:ident, $xor:ident, $r16:ident, $r12:ident, $r8:ident, $r7:ident;
     $(($a:literal, $b:literal, $c:literal, $d:literal)),*) => {
        $( $x[$a] = $add($x[$a], $x[$b]); )*
        $( $x[$d] = $r16($xor($x[$d], $x[$a])); )*
        $( $x[$c] = $add($x[$c], $x[$d]); )*
        $( $x[$b] = $r12($xor($x[$b], $x[$c])); )*
        $( $x[$a] = $add($x[$a], $x[$b]); )*
        $( $x[$d] = $r8($xor($x[$d], $x[$a])); )*
        $( $x[$c] = $add($x[$c], $x[$d]); )*
        $( $x[$b] = $r7($xor($x[$b], $x[$c])); )*
    };
}

/// `R / 2` double rounds (columns, then diagonals) on 16 word vectors.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(unused_macros)
)]
macro_rules! rounds {
    ($r:expr, $x:ident, $add:ident, $xor:ident, $r16:ident, $r12:ident, $r8:ident, $r7:ident) => {
        for _ in 0..$r / 2 {
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7;
                 (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7;
                 (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
        }
    };
}

/// [`rounds!`] for ISAs with 16 vector registers, where 16 state vectors and
/// the rotations' temporaries do not fit: two of the four `c` words (8-11)
/// live in stack slots at any time, swapped in pairs twice per double round
/// (the schedule of OpenSSL's and the kernel's 8-block AVX2 code). Volatile
/// accesses keep LLVM from promoting the slots back into registers, which it
/// would then spill at worse places.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(unused_macros, reason = "only the 16-register backends use it")
)]
macro_rules! rounds_c_in_memory {
    ($r:expr, $x:ident, $add:ident, $xor:ident, $r16:ident, $r12:ident, $r8:ident, $r7:ident) => {{
        let mut c89 = [$x[8], $x[9]];
        let mut c1011 = [$x[10], $x[11]];
        // SAFETY: the pointers are to the two live elements of a local
        // array; volatile only pins the accesses.
        let put = |slots: &mut [_; 2], a, b| unsafe {
            core::ptr::write_volatile(&mut slots[0], a);
            core::ptr::write_volatile(&mut slots[1], b);
        };
        // SAFETY: as for `put`, reads of a local array's live elements.
        let get = |slots: &[_; 2]| unsafe {
            (core::ptr::read_volatile(&slots[0]), core::ptr::read_volatile(&slots[1]))
        };
        put(&mut c1011, $x[10], $x[11]);
        for _ in 0..$r / 2 {
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7; (0, 4, 8, 12), (1, 5, 9, 13));
            put(&mut c89, $x[8], $x[9]);
            ($x[10], $x[11]) = get(&c1011);
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7; (2, 6, 10, 14), (3, 7, 11, 15));
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7; (0, 5, 10, 15), (1, 6, 11, 12));
            put(&mut c1011, $x[10], $x[11]);
            ($x[8], $x[9]) = get(&c89);
            qr4!($x, $add, $xor, $r16, $r12, $r8, $r7; (2, 7, 8, 13), (3, 4, 9, 14));
        }
        ($x[10], $x[11]) = get(&c1011);
    }};
}

/// The backends' outer loop: whole batches of `$n` blocks straight into
/// `data`, a short tail through a zeroized stack buffer. `$body` runs once per
/// batch with `$ctr` the batch's first block counter (from `$start`, wrapping)
/// and `$out` its `$n * 64` bytes.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")),
    allow(unused_macros, reason = "the SIMD backends use it")
)]
macro_rules! batches {
    ($n:expr, $start:expr, $data:expr, |$ctr:ident, $out:ident| $body:expr) => {{
        let mut $ctr: u32 = $start;
        let mut chunks = $data.chunks_exact_mut($n * super::BLOCK);
        for $out in &mut chunks {
            $body;
            $ctr = $ctr.wrapping_add($n as u32);
        }
        let tail = chunks.into_remainder();
        if !tail.is_empty() {
            let mut buf = super::TailBuf([0u8; $n * super::BLOCK]);
            buf.0[..tail.len()].copy_from_slice(tail);
            {
                let $out = &mut buf.0[..];
                $body;
            }
            tail.copy_from_slice(&buf.0[..tail.len()]);
        }
    }};
}

/// The stack buffer of [`batches!`]'s short tail and of [`Block`]: after the
/// batch it holds key stream past the data's end, so it is wiped when
/// dropped, with one volatile store per 8 bytes. `zeroize` on a byte array
/// stores a byte at a time: 512 stores for an AVX2 batch, which made a
/// 64-byte message slower than a 512-byte one.
#[repr(C, align(64))]
struct TailBuf<const N: usize>([u8; N]);

impl<const N: usize> Drop for TailBuf<N> {
    fn drop(&mut self) {
        const { assert!(N.is_multiple_of(8)) };
        // SAFETY: the buffer is 64-byte aligned and `N` a multiple of 8.
        unsafe { wipe_u64s(self.0.as_mut_ptr().cast(), N / 8) };
    }
}

/// Zeroes `n` aligned `u64`s from `p` with volatile stores, so that the wipe
/// is not elided.
///
/// # Safety
/// `p` must be 8-aligned and valid for writes of `n` `u64`s.
unsafe fn wipe_u64s(p: *mut u64, n: usize) {
    for i in 0..n {
        // SAFETY: word `i` < `n` is inside the caller's buffer and aligned.
        unsafe { core::ptr::write_volatile(p.add(i), 0) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

#[cfg(target_arch = "aarch64")]
mod aarch64_neon;
mod soft;
#[cfg(target_arch = "x86_64")]
#[macro_use]
mod x86_scalar;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_avx2_poly1305;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86_avx512;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86_sse2;
#[cfg(target_arch = "x86_64")]
mod x86_ssse3;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_ssse3_poly1305;

/// Bytes per ChaCha block.
pub const BLOCK: usize = 64;
/// Key bytes.
pub const KEY_LEN: usize = 32;
/// Nonce bytes of the IETF variant (RFC 8439).
pub const NONCE_LEN: usize = 12;
/// Nonce bytes of XChaCha.
pub const XNONCE_LEN: usize = 24;

/// "expand 32-byte k" (RFC 8439 section 2.3).
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The request would run the 32-bit block counter past its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterOverflow;

impl core::fmt::Display for CounterOverflow {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ChaCha block counter would wrap")
    }
}

impl std::error::Error for CounterOverflow {}

/// The backends this build has for this architecture, best first (whether the
/// CPU can run them is [`runnable`]).
pub fn implementations() -> &'static [ChaChaImpl] {
    #[cfg(target_arch = "x86_64")]
    {
        &[
            ChaChaImpl::Avx512,
            ChaChaImpl::Avx2Scalar,
            ChaChaImpl::Avx2,
            ChaChaImpl::Ssse3Scalar,
            ChaChaImpl::Ssse3,
            ChaChaImpl::Sse2,
            ChaChaImpl::Soft,
        ]
    }
    #[cfg(target_arch = "x86")]
    {
        &[
            ChaChaImpl::Avx512,
            ChaChaImpl::Avx2,
            ChaChaImpl::Ssse3,
            ChaChaImpl::Sse2,
            ChaChaImpl::Soft,
        ]
    }
    #[cfg(target_arch = "aarch64")]
    {
        &[ChaChaImpl::Neon, ChaChaImpl::Soft]
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
    {
        &[ChaChaImpl::Soft]
    }
}

/// Whether this CPU (its detected features, ignoring the mask) can run `imp`.
pub fn runnable(imp: ChaChaImpl) -> bool {
    let f = crate::cpu::detected();
    match imp {
        ChaChaImpl::Soft => true,
        ChaChaImpl::Ssse3 | ChaChaImpl::Ssse3Scalar => ssse3(),
        ChaChaImpl::Sse2 => cfg!(any(target_arch = "x86", target_arch = "x86_64")) && sse2(),
        ChaChaImpl::Avx2 => cfg!(any(target_arch = "x86", target_arch = "x86_64")) && f.avx2,
        ChaChaImpl::Avx2Scalar => cfg!(target_arch = "x86_64") && f.avx2,
        ChaChaImpl::Avx512 => cfg!(any(target_arch = "x86", target_arch = "x86_64")) && f.avx512,
        ChaChaImpl::Neon => cfg!(target_arch = "aarch64") && f.neon,
    }
}

#[cfg(target_arch = "x86_64")]
fn ssse3() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

#[cfg(not(target_arch = "x86_64"))]
fn ssse3() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn sse2() -> bool {
    true // the x86-64 baseline
}

#[cfg(target_arch = "x86")]
fn sse2() -> bool {
    cfg!(target_feature = "sse2")
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn sse2() -> bool {
    false
}

/// The initial state for `key`, `nonce` and block `counter`.
fn state(key: &[u8; KEY_LEN], counter: u32, nonce: &[u8; NONCE_LEN]) -> [u32; 16] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&SIGMA);
    for (w, c) in s[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    s[12] = counter;
    for (w, c) in s[13..].iter_mut().zip(nonce.chunks_exact(4)) {
        *w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    s
}

/// XORs the ChaCha key stream with `R` rounds for `key`, `nonce`, starting at
/// block `counter`, into `data`, with the implementation `imp`.
///
/// Refuses (leaving `data` unchanged) when the request needs blocks past
/// `u32::MAX - 1`, as the `chacha20` crate does.
///
/// # Panics
/// If `imp` is not [`runnable`] on this CPU (running it would be undefined).
pub fn xor_keystream_with<const R: usize>(
    imp: ChaChaImpl,
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
) -> Result<(), CounterOverflow> {
    let blocks = data.len().div_ceil(BLOCK) as u64;
    if blocks > u64::from(u32::MAX - counter) {
        return Err(CounterOverflow);
    }
    if data.is_empty() {
        // Nothing to do; the AEADs call this for their tail, empty when a
        // request is whole batches (20 ns a request otherwise).
        return Ok(());
    }
    assert!(
        runnable(imp),
        "ChaCha backend {} not on this CPU",
        imp.name()
    );
    let mut st = Zeroizing::new(state(key, counter, nonce));
    run::<R>(imp, &st, data);
    st.zeroize();
    Ok(())
}

/// [`xor_keystream_with`] with the implementation the dispatch chose.
pub fn xor_keystream<const R: usize>(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
    data: &mut [u8],
) -> Result<(), CounterOverflow> {
    xor_keystream_with::<R>(dispatch::chacha(), key, nonce, counter, data)
}

/// Runs `imp` (checked runnable by the caller) over `data`, the counter in
/// `st[12]` never wrapping (checked by the caller).
fn run<const R: usize>(imp: ChaChaImpl, st: &[u32; 16], data: &mut [u8]) {
    match imp {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `runnable` checked that the CPU has AVX-512 F/VL/BW.
        ChaChaImpl::Avx512 => unsafe { x86_avx512::xor_keystream::<R>(st, data) },
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `runnable` checked that the CPU has AVX2.
        ChaChaImpl::Avx2 => unsafe { x86_avx2::xor_keystream::<R>(st, data) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `runnable` checked that the CPU has AVX2.
        ChaChaImpl::Avx2Scalar => unsafe { x86_avx2::xor_keystream_hybrid::<R>(st, data) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `runnable` checked that the CPU has SSSE3.
        ChaChaImpl::Ssse3 => unsafe { x86_ssse3::xor_keystream::<R>(st, data) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `runnable` checked that the CPU has SSSE3.
        ChaChaImpl::Ssse3Scalar => unsafe { x86_ssse3::xor_keystream_hybrid::<R>(st, data) },
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `runnable` checked that the CPU has SSE2.
        ChaChaImpl::Sse2 => unsafe { x86_sse2::xor_keystream::<R>(st, data) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `runnable` checked that the CPU has NEON.
        ChaChaImpl::Neon => unsafe { aarch64_neon::xor_keystream::<R>(st, data) },
        _ => soft::xor_keystream::<R>(st, data),
    }
}

/// One key-stream block ([`keystream_block`]), wiped when dropped.
pub struct Block(TailBuf<BLOCK>);

impl core::ops::Deref for Block {
    type Target = [u8; BLOCK];
    fn deref(&self) -> &[u8; BLOCK] {
        &self.0.0
    }
}

/// Key-stream block `counter` for `key` and `nonce` with `R` rounds (RFC 8439
/// section 2.3), in portable code: for a single block (the one-time key of
/// ChaCha20-Poly1305) it is cheaper than a SIMD batch of four or more, and
/// as fast as one block held in four rows of a vector register (SSSE3 or
/// AVX-512, tried on Zen 4: about 9.5 ns a double round each, latency
/// bound). The state, the words and the block are wiped 8 bytes a store:
/// with `zeroize`'s byte and word stores, the ChaCha20-Poly1305 one-time
/// key took 135 ns on Zen 4, now ~110.
pub fn keystream_block<const R: usize>(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    counter: u32,
) -> Block {
    let st = Words(state(key, counter, nonce));
    let mut words = Words([0u32; 16]);
    soft::block::<R>(&st.0, &mut words.0);
    let mut out = Block(TailBuf([0u8; BLOCK]));
    for (o, w) in out.0.0.chunks_exact_mut(4).zip(words.0.iter()) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// A state or block of 16 words, wiped 8 bytes a store when dropped.
#[repr(C, align(8))]
struct Words([u32; 16]);

impl Drop for Words {
    fn drop(&mut self) {
        // SAFETY: 64 bytes, 8-aligned.
        unsafe { wipe_u64s(self.0.as_mut_ptr().cast(), 8) };
    }
}

/// HChaCha with `R` rounds (draft-irtf-cfrg-xchacha section 2.2): the subkey
/// for `key` and the first 16 bytes of an XChaCha nonce.
pub fn hchacha<const R: usize>(key: &[u8; KEY_LEN], input: &[u8; 16]) -> Zeroizing<[u8; 32]> {
    let mut s = Zeroizing::new([0u32; 16]);
    s[..4].copy_from_slice(&SIGMA);
    for (w, c) in s[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    for (w, c) in s[12..].iter_mut().zip(input.chunks_exact(4)) {
        *w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
    }
    soft::rounds::<R>(&mut s);
    let mut out = Zeroizing::new([0u8; 32]);
    for (i, &w) in s[..4].iter().chain(&s[12..]).enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// XORs the XChaCha key stream with `R` rounds (draft-irtf-cfrg-xchacha
/// section 2.3: HChaCha subkey, then the IETF cipher with nonce
/// `0^4 || nonce[16..24]`) from block `counter` into `data`.
pub fn xchacha_xor_keystream<const R: usize>(
    key: &[u8; KEY_LEN],
    nonce: &[u8; XNONCE_LEN],
    counter: u32,
    data: &mut [u8],
) -> Result<(), CounterOverflow> {
    let sub = hchacha::<R>(key, nonce[..16].try_into().expect("16 bytes"));
    let mut n = [0u8; NONCE_LEN];
    n[4..].copy_from_slice(&nonce[16..]);
    xor_keystream::<R>(&sub, &n, counter, data)
}

/// Writes block `st` (after the rounds and the feed-forward) XORed into `out`
/// (up to 64 bytes); shared by the backends' short tails.
fn xor_block_words(words: &[u32; 16], out: &mut [u8]) {
    for (c, w) in out.chunks_mut(4).zip(words) {
        for (b, k) in c.iter_mut().zip(w.to_le_bytes()) {
            *b ^= k;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
