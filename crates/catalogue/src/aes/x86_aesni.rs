//! AES-NI on 128-bit registers (no VAES): 12 blocks in flight for CTR, CBC
//! decryption and XTS (an `asm!` loop whose tweaks are made on the integer
//! pipes: [`xts_batches`]), 8 for ECB, one block at a time for CBC
//! encryption.
//! Also the key schedule (FIPS-197 §5.2, SubWord by AESENCLAST) and the
//! decryption keys (AESIMC), which the VAES backends share, and the last
//! blocks they leave over.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use zeroize::Zeroize;

use super::RoundKeys;
use super::x86_modes::{self as m, Lanes, MAX_KEYS, round8};

/// Blocks in flight in ECB (and in XTS's last blocks, fewer than
/// [`xts_batches`] takes).
const W: usize = 8;
/// Blocks in flight in CTR and CBC decryption: 12 of the 16 xmm registers,
/// the round key and the data XORed into the last round taking the rest.
/// With 8, AESENC's latency (4 cycles at 2 a cycle on Zen 4) left no slack
/// at the batch edges; 12 measured 1.04x for AES-256 there (Zen 4,
/// `aesni-avx2` tier). On Zen 3 an earlier try of the same measured CTR at
/// 0.97-1.01x (docs/PERFORMANCE-LOG.md, eighth Zen 3 session), within its noise;
/// VAES-256 at 12 ymm registers was 0.9-1.0x on Zen 4.
const W_WIDE: usize = 12;

/// Requests from which CTR runs [`W_WIDE`]-block batches. Shorter ones
/// (dm-crypt's sectors, packets) run [`W`]-block batches, a power of two, so
/// that a counter at a multiple of 8 (every sector IV) takes the register
/// path; the 12-block batches fill and wipe a buffer of counter blocks each
/// request. On one Zen 4, 512-byte AES-256-CTR 4,217 -> 5,650 MiB/s with
/// this and the side-by-side tail of `x86_modes::ctr`.
const CTR_WIDE_FROM: usize = 4096;

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
pub(super) unsafe fn ctr(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    first: Option<&m::FirstRound>,
    c: &mut u128,
    data: &mut [u8],
) {
    // SAFETY: compiled with and called on a CPU with this backend's features.
    unsafe {
        let done = if data.len() < CTR_WIDE_FROM {
            by_rounds!(nr, ctr::<Xmm, W>(keys, first, c, data))
        } else {
            by_rounds!(nr, ctr::<Xmm, W_WIDE>(keys, first, c, data))
        };
        let rest = &mut data[done..];
        if !rest.is_empty() {
            let mut block = [0u8; 16];
            block[..rest.len()].copy_from_slice(rest);
            by_rounds!(nr, ctr::<Xmm, 1>(keys, None, c, &mut block));
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
    unsafe {
        let done = match (nr, enc) {
            _ if data.len() < RING_FROM => 0,
            (10, true) => xts_batches::<10, true>(keys, t, data),
            (12, true) => xts_batches::<12, true>(keys, t, data),
            (14, true) => xts_batches::<14, true>(keys, t, data),
            (10, false) => xts_batches::<10, false>(keys, t, data),
            (12, false) => xts_batches::<12, false>(keys, t, data),
            _ => xts_batches::<14, false>(keys, t, data),
        };
        by_rounds!(nr, xts::<Xmm, W>(keys, t, &mut data[done..], enc))
    };
}

/// Blocks a batch in [`xts_batches`]: with 12 AESENCs of a round in flight
/// (latency 4, two a cycle on Zen) the AES units stay busy across the batch
/// edges; 8 reached 96% of their throughput, 12 99-100% (Zen 4, a probe of
/// the loop alone).
const XW: usize = 12;

/// Batches in XTS's ring of tweaks (see [`xts_batches`]).
const RING: usize = 8;

/// Requests from which XTS runs [`xts_batches`]; shorter ones make their
/// tweaks in registers, each a doubling of the one before. The ring's fixed
/// cost (its tweaks made one after the other before the loop, its wipe) is
/// paid back from 16 KiB: on the 2-core Zen 4 VM (`compare.py --tier
/// aesni-avx2 --request-size N`, best of 7), AES-128 / AES-256 XTS
/// encryption MiB/s with the ring against without, 4 KiB 7,478 / 5,785
/// against 8,639 / 6,725, 8 KiB 8,858 / 6,507 against 9,020 / 6,941, 16 KiB
/// 9,804 / 7,239 against 8,927 / 7,055, 32 KiB 10,308 / 7,274 against 9,058
/// / 7,006, 64 KiB 10,577 / 7,563 against 8,982 / 7,123. (With the register
/// tweaks made times α^8 from the same lane, 9 operations each, the ring won
/// from 4 KiB on Zen 3.) `tests.rs` crosses the ring from 64 KiB.
pub(super) const RING_FROM: usize = 16 * 1024;

/// The ring of tweaks of [`xts_batches`] (and of the VAES-256 XTS loop),
/// `B` blocks a batch: batch `i` reads slot `i % RING`. It holds tweaks
/// (XOR round key 0 here), and so is zeroized on drop, 16 bytes a store:
/// `zeroize` on its bytes (a volatile byte store each) took 3-4% of a 64 KiB
/// request.
///
/// It is made in place and left uninitialised: zeroed when made and moved
/// out of the function that filled it, its 1.5-2 KiB cost a 512-byte request
/// more than its AES work. Requests that short no longer use it
/// ([`RING_FROM`]).
#[repr(C, align(64))]
pub(super) struct TweakRing<const B: usize>(MaybeUninit<[[[u8; 16]; B]; RING]>);

impl<const B: usize> Drop for TweakRing<B> {
    fn drop(&mut self) {
        // SAFETY: the ring is 64-aligned and holds RING * B blocks (writing
        // over slots never filled is fine).
        unsafe { m::wipe_blocks(self.0.as_mut_ptr().cast(), RING * B) };
    }
}

impl<const B: usize> TweakRing<B> {
    /// An empty ring.
    pub(super) fn new() -> Self {
        TweakRing(MaybeUninit::uninit())
    }

    /// Fills slot `b` with batch `b`'s tweaks, taken in order from `tweaks`,
    /// for the first min(`batches` + 1, RING - 1) batches: the loop writes
    /// the others, RING - 1 ahead (batch `i` writes slot `(i + RING - 1) %
    /// RING`), so that every slot is written before it is read and the
    /// tweak after the data is in its slot at the end ([`TweakRing::after`]).
    /// Returns the last tweak written, from which the loop's chain goes on.
    pub(super) fn prefill(&mut self, batches: usize, mut tweaks: impl FnMut() -> u128) -> u128 {
        let base = self.0.as_mut_ptr().cast::<[u8; 16]>();
        let mut last = 0;
        for i in 0..(batches + 1).min(RING - 1) * B {
            last = tweaks();
            // SAFETY: block `i` < (RING - 1) * B is inside the ring.
            unsafe { base.add(i).write(last.to_le_bytes()) };
        }
        last
    }

    /// The ring's start, where batch 0 reads, and the slot batch 0 writes
    /// (RING - 1 ahead).
    pub(super) fn pointers(&mut self) -> (*mut u8, *mut u8) {
        let base = self.0.as_mut_ptr().cast::<u8>();
        (base, base.wrapping_add(16 * B * (RING - 1)))
    }

    /// The first tweak of batch `batches`: the one after the data, once the
    /// loop has run over `batches` batches after [`TweakRing::prefill`].
    pub(super) fn after(&self, batches: usize) -> u128 {
        let base = self.0.as_ptr().cast::<[u8; 16]>();
        // SAFETY: slot `batches % RING` is inside the ring and written:
        // by `prefill` when `batches` <= RING - 2, else by the loop's batch
        // `batches - RING + 1`.
        u128::from_le_bytes(unsafe { base.add(batches % RING * B).read() })
    }
}

/// The XTS tweak chain on the integer pipes: `T' = T ^ k0` for one block,
/// and the next block's, `α·T' ^ (α·k0 ^ k0)` (doubling is linear). Both
/// hold round key 0, so it is wiped on drop.
struct Chain {
    t: u128,
    c: u128,
}

impl Drop for Chain {
    fn drop(&mut self) {
        self.t.zeroize();
        self.c.zeroize();
    }
}

impl Chain {
    /// This block's `T'`; the chain moves on to the next block's.
    fn take(&mut self) -> u128 {
        let t = self.t;
        self.t = super::mul_alpha(t) ^ self.c;
        t
    }
}

/// The integer side of the XTS loops (this module's and
/// [`super::x86_vaes256`]'s), in `asm!` text on the tweak `{hi}:{lo}` with
/// the scratch `{tmp}`: `double`, the multiplication by α (the top bit folds
/// back as 0x87); `store j`, the tweak as block `j` of the ring slot `{wr}`.
macro_rules! tweak_asm {
    (double) => {
        concat!(
            "mov {tmp}, {hi}\n",
            "sar {tmp}, 63\n",
            "and {tmp}, 0x87\n",
            "add {lo}, {lo}\n",
            "adc {hi}, {hi}\n",
            "xor {lo}, {tmp}\n",
        )
    };
    (store $j:literal) => {
        concat!(
            "mov qword ptr [{wr} + ",
            $j,
            " * 16], {lo}\n",
            "mov qword ptr [{wr} + ",
            $j,
            " * 16 + 8], {hi}",
        )
    };
}
pub(super) use tweak_asm;

/// The XTS batch loop of [`xts_batches`] as one `asm!` block, 12 blocks in
/// xmm0-11, each round's key loaded into xmm12, `k[NR] ^ k0` in xmm13.
/// `$op`/`$last` are the round instructions; each `($r $(, $j)*)` is round
/// `r` (its key at `16 * r`) with the tweak steps of blocks `j`.
macro_rules! xts_asm {
    ($op:literal, $last:literal, $p:ident, $n:ident, $k:ident, $kl:ident, $rd:ident,
     $wr:ident, $ring:ident, $lo:ident, $hi:ident, $clo:ident, $chi:ident;
     $(($r:literal $(, $j:literal)*))*) => {
        core::arch::asm!(
            "movdqu xmm13, xmmword ptr [{kl}]",
            ".p2align 5",
            "2:",
            xts_asm!(@load 0), xts_asm!(@load 1), xts_asm!(@load 2), xts_asm!(@load 3),
            xts_asm!(@load 4), xts_asm!(@load 5), xts_asm!(@load 6), xts_asm!(@load 7),
            xts_asm!(@load 8), xts_asm!(@load 9), xts_asm!(@load 10), xts_asm!(@load 11),
            $(
                concat!("movdqu xmm12, xmmword ptr [{k} + ", $r, " * 16]"),
                $(xts_asm!(@step $j),)*
                xts_asm!(@aes12 $op),
            )*
            xts_asm!(@last $last, 0), xts_asm!(@last $last, 1),
            xts_asm!(@last $last, 2), xts_asm!(@last $last, 3),
            xts_asm!(@last $last, 4), xts_asm!(@last $last, 5),
            xts_asm!(@last $last, 6), xts_asm!(@last $last, 7),
            xts_asm!(@last $last, 8), xts_asm!(@last $last, 9),
            xts_asm!(@last $last, 10), xts_asm!(@last $last, 11),
            // The slot just read is written 7 batches on (RING - 1 ahead).
            "mov {wr}, {rd}",
            "add {rd}, 192",
            "lea {tmp}, [{ring} + 1536]",
            "cmp {rd}, {tmp}",
            "cmove {rd}, {ring}",
            "add {p}, 192",
            "dec {n}",
            "jnz 2b",
            p = inout(reg) $p => _,
            n = inout(reg) $n => _,
            k = in(reg) $k,
            kl = in(reg) $kl,
            rd = inout(reg) $rd => _,
            wr = inout(reg) $wr => _,
            ring = in(reg) $ring,
            lo = inout(reg) $lo => _,
            hi = inout(reg) $hi => _,
            clo = in(reg) $clo,
            chi = in(reg) $chi,
            tmp = out(reg) _,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _,
            options(nostack),
        )
    };
    // Block j's data XOR its T' (the tweak XOR round key 0).
    (@load $j:literal) => {
        concat!(
            "movdqu xmm", $j, ", xmmword ptr [{p} + ", $j, " * 16]\n",
            "pxor xmm", $j, ", xmmword ptr [{rd} + ", $j, " * 16]",
        )
    };
    (@aes12 $op:literal) => {
        concat!(
            $op, " xmm0, xmm12\n", $op, " xmm1, xmm12\n", $op, " xmm2, xmm12\n",
            $op, " xmm3, xmm12\n", $op, " xmm4, xmm12\n", $op, " xmm5, xmm12\n",
            $op, " xmm6, xmm12\n", $op, " xmm7, xmm12\n", $op, " xmm8, xmm12\n",
            $op, " xmm9, xmm12\n", $op, " xmm10, xmm12\n", $op, " xmm11, xmm12",
        )
    };
    // The next T' of the chain, stored as block j of the slot 7 batches on:
    // double, then XOR α·k0 ^ k0.
    (@step $j:literal) => {
        concat!(
            tweak_asm!(double),
            "xor {lo}, {clo}\n",
            "xor {hi}, {chi}\n",
            tweak_asm!(store $j),
        )
    };
    // The last round's key XOR the tweak: (T' XOR (k[NR] ^ k0)).
    (@last $last:literal, $j:literal) => {
        concat!(
            "movdqa xmm12, xmmword ptr [{rd} + ", $j, " * 16]\n",
            "pxor xmm12, xmm13\n",
            $last, " xmm", $j, ", xmm12\n",
            "movdqu xmmword ptr [{p} + ", $j, " * 16], xmm", $j,
        )
    };
}

/// XTS over the whole 12-block batches of `data` from tweak `t` (already
/// encrypted), which advances; returns the bytes done.
///
/// The tweaks are made on the integer pipes, which AES leaves idle, instead
/// of with five vector operations a block on the pipes AESENC uses (there
/// every side reached 77% of AESENC's throughput on Zen 4). Each is stored
/// XORed with round key 0, so a block takes one XOR in and one for the last
/// round's key besides its AES instructions. They are stored 7 batches ahead
/// in a ring of 8: a 16-byte load of two 8-byte stores cannot be forwarded
/// and waits until they reach the cache: in a first probe on Zen 4 (8-block
/// batches) one or two batches ahead ran at 0.82x of three or more; 7 is
/// never slower (`scripts/xts_ring_probe.py`, docs/PERFORMANCE-LOG.md).
///
/// # Safety
/// The CPU must have AES-NI and SSSE3; `keys` holds `NR + 1` round keys.
#[target_feature(enable = "aes,sse2,ssse3")]
unsafe fn xts_batches<const NR: usize, const ENC: bool>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
) -> usize {
    let batches = data.len() / (16 * XW);
    if batches == 0 {
        return 0;
    }
    let k0 = u128::from_le_bytes(keys[0]);
    let mut chain = Chain {
        t: *t ^ k0,
        c: super::mul_alpha(k0) ^ k0,
    };
    let mut ring = TweakRing::<XW>::new();
    let last = ring.prefill(batches, || chain.take());
    // Key material (T' holds round key 0): zeroized below.
    let mut kl = (u128::from_le_bytes(keys[NR]) ^ k0).to_le_bytes();
    let (base, wr) = ring.pointers();
    let p = data.as_mut_ptr();
    let n = batches;
    let rd = base;
    let (lo, hi) = (last as u64, (last >> 64) as u64);
    let (clo, chi) = (chain.c as u64, (chain.c >> 64) as u64);
    let kp = keys.as_ptr();
    let klp = kl.as_ptr();
    // The 12 steps go into the first 9 rounds, which every key size has.
    macro_rules! rounds {
        ($($schedule:tt)*) => {
            if ENC {
                xts_asm!("aesenc", "aesenclast", p, n, kp, klp, rd, wr, base, lo, hi, clo, chi;
                    $($schedule)*)
            } else {
                xts_asm!("aesdec", "aesdeclast", p, n, kp, klp, rd, wr, base, lo, hi, clo, chi;
                    $($schedule)*)
            }
        };
    }
    // SAFETY: the CPU has AES-NI (the caller's contract). The loop reads and
    // writes `batches` * 192 bytes from `p`, inside `data`; it reads `NR + 1`
    // keys at `kp` and 16 bytes at `klp`; its ring pointers stay inside the
    // 1,536 bytes of `ring` (slots of 192, wrapping at the end). Legacy SSE
    // memory operands (PXOR, MOVDQA) need 16-byte alignment: the ring is
    // 64-aligned. Every xmm register it uses is declared clobbered.
    unsafe {
        match NR {
            10 => {
                rounds! { (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6) (5, 7) (6, 8) (7, 9) (8, 10) (9, 11) }
            }
            12 => rounds! {
                (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6) (5, 7) (6, 8) (7, 9) (8, 10) (9, 11) (10) (11)
            },
            _ => rounds! {
                (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6) (5, 7) (6, 8) (7, 9) (8, 10) (9, 11)
                (10) (11) (12) (13)
            },
        }
    }
    *t = ring.after(batches) ^ k0;
    kl.zeroize();
    batches * 16 * XW
}
