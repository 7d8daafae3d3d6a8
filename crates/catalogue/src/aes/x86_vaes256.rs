//! VAES on 256-bit registers (VAES, VPCLMULQDQ and AVX2): 2 blocks per register, 8
//! registers (16 blocks) in flight for ECB, CTR and XTS, 12 for CBC decryption (XTS
//! as an `asm!` loop whose tweaks are made on the integer pipes,
//! [`xts_batches`], or with vector instructions, [`xts_batches_vec`] and
//! [`xts_batches_evex`]).
//! CBC encryption is sequential and runs the AES-NI code; the last blocks
//! that fill no whole register go there too.

use core::arch::x86_64::*;

use super::x86_aesni::{self, TweakRing, by_rounds, tweak_asm};
use super::x86_modes::{self as m, Lanes, MAX_KEYS, round8};
use crate::dispatch::XtsTweaks;
use zeroize::Zeroize;

/// Registers in flight in the parallel modes.
const W: usize = 8;
/// Registers in flight in CBC decryption. With 8, a batch's AESDEC chain
/// (4 cycles a round) is as long as its issue at two a cycle, which leaves
/// no slack at the batch edges, as with AES-NI ([`x86_aesni`]'s `W_WIDE`).
/// 12 measured 1.04x (AES-192), 1.02x (AES-128) and 1.00-1.01x (AES-256)
/// against 8 on Zen 4, alternating runs (PERFORMANCE-LOG.md, fourteenth Zen 4
/// session); not measured on Zen 3.
const W_CBC: usize = 12;

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
    unsafe fn round12<const ENC: bool>(b: &mut [Self; 12], k: Self) {
        // SAFETY: the caller runs with VAES and AVX2.
        unsafe { round12_ymm::<ENC>(b, k) }
    }
}

#[inline]
#[target_feature(enable = "avx2,vaes")]
fn round12_ymm<const ENC: bool>(b: &mut [Ymm; 12], k: Ymm) {
    // SAFETY: VAES and AVX2 are enabled; register operands only.
    unsafe {
        if ENC {
            round8!(vex12 "vaesenc", b, k);
        } else {
            round8!(vex12 "vaesdec", b, k);
        }
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
        let done = by_rounds!(nr, cbc_decrypt::<Ymm, W_CBC>(keys, iv, data));
        x86_aesni::cbc_decrypt(keys, nr, iv, &mut data[done..]);
    }
}

/// CTR over `data`, a partial last block included (it uses up a counter).
///
/// # Safety
/// The CPU must have VAES and AVX2.
#[target_feature(enable = "aes,vaes,avx2")]
pub(super) unsafe fn ctr(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    first: Option<&m::FirstRound>,
    c: &mut u128,
    data: &mut [u8],
) {
    // SAFETY: as in `ecb`.
    unsafe { m::ctr_wide::<Ymm, W>(keys, nr, first, c, data) }
}

/// XTS over the whole blocks of `data` from tweak `t`, which advances. The
/// tweaks are multiplied with VPCLMULQDQ (every CPU with VAES has it; the
/// backend requires it); from [`RING_FROM`] on, whole batches run one `asm!`
/// loop whose tweaks `tweaks` says how to make: on the integer pipes
/// ([`xts_batches`]), with vector instructions ([`xts_batches_vec`]) or with
/// them in the AVX-512 registers ([`xts_batches_evex`]).
///
/// # Safety
/// The CPU must have VAES, VPCLMULQDQ and AVX2, and AVX-512 (F, VL, BW) for
/// [`XtsTweaks::Evex`].
#[target_feature(enable = "aes,vaes,vpclmulqdq,avx2")]
pub(super) unsafe fn xts(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
    tweaks: XtsTweaks,
) {
    // SAFETY: as in `ecb`.
    unsafe {
        macro_rules! batches {
            ($f:ident) => {
                match (nr, enc) {
                    (10, true) => $f::<10, true>(keys, t, data),
                    (12, true) => $f::<12, true>(keys, t, data),
                    (_, true) => $f::<14, true>(keys, t, data),
                    (10, false) => $f::<10, false>(keys, t, data),
                    (12, false) => $f::<12, false>(keys, t, data),
                    _ => $f::<14, false>(keys, t, data),
                }
            };
        }
        let done = if data.len() < RING_FROM {
            0
        } else {
            match tweaks {
                XtsTweaks::Integer => batches!(xts_batches),
                XtsTweaks::Vector => batches!(xts_batches_vec),
                XtsTweaks::Evex => batches!(xts_batches_evex),
            }
        };
        let data = &mut data[done..];
        let done = by_rounds!(nr, xts::<Ymm, W>(keys, t, data, enc));
        x86_aesni::xts(keys, nr, t, &mut data[done..], enc);
    }
}

/// Blocks a batch in [`xts_batches`]: 8 ymm registers of 2.
const XW: usize = 16;

/// Requests from which XTS runs [`xts_batches`]; shorter ones make their
/// tweaks in registers with VPCLMULQDQ, which here is faster up to 32 KiB:
/// on one Zen 3, MiB/s with the ring against without, 512 B 2,250 / 4,100,
/// 4 KiB 5,300 / 7,500, 8 KiB 6,100 / 7,600, 16 KiB 6,800 / 7,600, 32 KiB
/// 8,000 / 8,400, 64 KiB 9,000-9,700 / 8,400. `tests.rs` crosses the ring
/// from 64 KiB.
pub(super) const RING_FROM: usize = 64 * 1024;

/// The VAES-256 XTS batch loop of [`xts_batches`] as one `asm!` block.
macro_rules! vxts_asm {
    ($op:literal, $last:literal, $p:ident, $n:ident, $k:ident, $kl:ident, $rd:ident,
     $wr:ident, $ring:ident, $lo:ident, $hi:ident; $(($r:literal $(, $j:literal)*))*) => {
        core::arch::asm!(
            "vbroadcasti128 ymm13, xmmword ptr [{k}]",
            "vbroadcasti128 ymm14, xmmword ptr [{kl}]",
            ".p2align 5",
            "2:",
            vxts_asm!(@batch $op, $last, vxts_asm; $(($r $(, $j)*))*),
            "mov {wr}, {rd}",
            "add {rd}, 256",
            "lea {tmp}, [{ring} + 2048]",
            "cmp {rd}, {tmp}",
            "cmove {rd}, {ring}",
            "add {p}, 256",
            "dec {n}",
            "jnz 2b",
            "vzeroupper",
            p = inout(reg) $p => _,
            n = inout(reg) $n => _,
            k = in(reg) $k,
            kl = in(reg) $kl,
            rd = inout(reg) $rd => _,
            wr = inout(reg) $wr => _,
            ring = in(reg) $ring,
            lo = inout(reg) $lo => _,
            hi = inout(reg) $hi => _,
            tmp = out(reg) _,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        )
    };
    // One batch: its 8 registers loaded, the rounds with the tweak steps of
    // `$m` (`$m!(@step j)`) among them, the last round and the stores.
    (@batch $op:literal, $last:literal, $m:ident; $(($r:literal $(, $j:literal)*))*) => {
        concat!(
            vxts_asm!(@load 0), "\n", vxts_asm!(@load 1), "\n",
            vxts_asm!(@load 2), "\n", vxts_asm!(@load 3), "\n",
            vxts_asm!(@load 4), "\n", vxts_asm!(@load 5), "\n",
            vxts_asm!(@load 6), "\n", vxts_asm!(@load 7), "\n",
            $(
                "vbroadcasti128 ymm12, xmmword ptr [{k} + ", $r, " * 16]\n",
                $($m!(@step $j), "\n",)*
                vxts_asm!(@aes8 $op), "\n",
            )*
            vxts_asm!(@last $last, 0), "\n", vxts_asm!(@last $last, 1), "\n",
            vxts_asm!(@last $last, 2), "\n", vxts_asm!(@last $last, 3), "\n",
            vxts_asm!(@last $last, 4), "\n", vxts_asm!(@last $last, 5), "\n",
            vxts_asm!(@last $last, 6), "\n", vxts_asm!(@last $last, 7),
        )
    };
    // Blocks 2j, 2j+1: data XOR their tweaks XOR round key 0.
    (@load $j:literal) => {
        concat!(
            "vmovdqu ymm", $j, ", ymmword ptr [{p} + ", $j, " * 32]\n",
            "vpxor ymm", $j, ", ymm", $j, ", ymmword ptr [{rd} + ", $j, " * 32]\n",
            "vpxor ymm", $j, ", ymm", $j, ", ymm13",
        )
    };
    (@aes8 $op:literal) => {
        concat!(
            $op, " ymm0, ymm0, ymm12\n", $op, " ymm1, ymm1, ymm12\n",
            $op, " ymm2, ymm2, ymm12\n", $op, " ymm3, ymm3, ymm12\n",
            $op, " ymm4, ymm4, ymm12\n", $op, " ymm5, ymm5, ymm12\n",
            $op, " ymm6, ymm6, ymm12\n", $op, " ymm7, ymm7, ymm12",
        )
    };
    // Tweak j of the batch 7 on: the chain doubled, stored as two halves.
    (@step $j:literal) => {
        concat!(tweak_asm!(double), tweak_asm!(store $j))
    };
    // The last round's key XOR the two tweaks.
    (@last $last:literal, $j:literal) => {
        concat!(
            "vpxor ymm15, ymm14, ymmword ptr [{rd} + ", $j, " * 32]\n",
            $last, " ymm", $j, ", ymm", $j, ", ymm15\n",
            "vmovdqu ymmword ptr [{p} + ", $j, " * 32], ymm", $j,
        )
    };
}

/// The VAES-256 XTS batch loop with its tweaks made in vector registers
/// ([`xts_batches_vec`]) as one `asm!` block: each `($r $(, $j)*)` is round
/// `r` with the next batch's tweak register `j` (its two lanes times α^16).
macro_rules! vxts_vec_asm {
    ($op:literal, $last:literal, $p:ident, $n:ident, $k:ident, $kl:ident, $rd:ident,
     $wr:ident, $poly:ident; $(($r:literal $(, $j:literal)*))*) => {
        core::arch::asm!(
            "vbroadcasti128 ymm13, xmmword ptr [{k}]",
            "vbroadcasti128 ymm14, xmmword ptr [{kl}]",
            "vbroadcasti128 ymm11, xmmword ptr [{poly}]",
            ".p2align 5",
            "2:",
            vxts_asm!(@batch $op, $last, vxts_vec_asm; $(($r $(, $j)*))*),
            "mov {tmp}, {rd}",
            "mov {rd}, {wr}",
            "mov {wr}, {tmp}",
            "add {p}, 256",
            "dec {n}",
            "jnz 2b",
            "vzeroupper",
            p = inout(reg) $p => _,
            n = inout(reg) $n => _,
            k = in(reg) $k,
            kl = in(reg) $kl,
            rd = inout(reg) $rd => $rd,
            wr = inout(reg) $wr => _,
            poly = in(reg) $poly,
            tmp = out(reg) _,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        )
    };
    // Tweak register j of the next batch: this batch's times α^16 in each
    // lane, the lane shifted up two bytes and its top 16 bits folded back
    // with the polynomial (a product of at most 23 bits: no second fold).
    (@step $j:literal) => {
        concat!(
            "vmovdqu ymm8, ymmword ptr [{rd} + ", $j, " * 32]\n",
            "vpsrldq ymm9, ymm8, 14\n",
            "vpslldq ymm8, ymm8, 2\n",
            "vpclmulqdq ymm9, ymm9, ymm11, 0\n",
            "vpxor ymm8, ymm8, ymm9\n",
            "vmovdqu ymmword ptr [{wr} + ", $j, " * 32], ymm8",
        )
    };
}

/// XTS over the whole 16-block batches of `data` as [`xts_batches`], with
/// the tweaks made in vector registers: each batch's from the one before,
/// two slots taking turns.
///
/// # Safety
/// The CPU must have VAES, VPCLMULQDQ and AVX2; `keys` holds `NR + 1` round
/// keys.
#[target_feature(enable = "aes,vaes,vpclmulqdq,avx2")]
unsafe fn xts_batches_vec<const NR: usize, const ENC: bool>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
) -> usize {
    let batches = data.len() / (16 * XW);
    if batches == 0 {
        return 0;
    }
    let mut ring = TweakRing::<XW>::new();
    let mut chain = *t;
    ring.prefill(0, || {
        let t = chain;
        chain = super::mul_alpha(t);
        t
    });
    let (base, _) = ring.pointers();
    let p = data.as_mut_ptr();
    let n = batches;
    let mut rd = base;
    let wr = base.wrapping_add(16 * XW);
    let poly = 0x87u128.to_le_bytes();
    let pp = poly.as_ptr();
    let kp = keys.as_ptr();
    let klp = keys[NR].as_ptr();
    macro_rules! rounds {
        ($($schedule:tt)*) => {
            if ENC {
                vxts_vec_asm!("vaesenc", "vaesenclast", p, n, kp, klp, rd, wr, pp;
                    $($schedule)*)
            } else {
                vxts_vec_asm!("vaesdec", "vaesdeclast", p, n, kp, klp, rd, wr, pp;
                    $($schedule)*)
            }
        };
    }
    // SAFETY: the CPU has VAES, VPCLMULQDQ and AVX2 (the caller's
    // contract). The loop reads and writes `batches` * 256 bytes from `p`,
    // inside `data`; it reads `NR + 1` keys at `kp` and 16 bytes at `pp`;
    // `rd` and `wr` are the ring's first two slots of 256 bytes, swapped each
    // batch. Every ymm register it uses is declared clobbered, and it ends
    // with VZEROUPPER.
    unsafe {
        match NR {
            10 => rounds! { (1, 0) (2, 1) (3, 2) (4, 3) (5, 4) (6, 5) (7, 6) (8, 7) (9) },
            12 => rounds! { (1, 0) (2, 1) (3, 2) (4, 3) (5, 4) (6, 5) (7, 6) (8, 7) (9) (10) (11) },
            _ => rounds! {
                (1, 0) (2, 1) (3, 2) (4, 3) (5, 4) (6, 5) (7, 6) (8, 7) (9) (10) (11) (12) (13)
            },
        }
        // SAFETY: `rd` is the slot the last batch wrote, the tweaks after the
        // data; its first block is inside the ring.
        *t = u128::from_le_bytes(rd.cast::<[u8; 16]>().read());
    }
    batches * 16 * XW
}

/// The VAES-256 XTS batch loop of [`xts_batches_evex`] as one `asm!` block:
/// the batch's tweak registers in ymm16-23, each one's XOR with the last round
/// key in ymm24-31. Each `($r $(, $j $t $w)*)` is round `r` with the steps of
/// tweak register `j` (`ymm$t`, its last-round key `ymm$w`).
macro_rules! vxts_evex_asm {
    ($op:literal, $last:literal, $p:ident, $n:ident, $k:ident, $kl:ident, $poly:ident,
     $tw:ident; $(($r:literal $(, $j:literal $t:literal $w:literal)*))*) => {
        core::arch::asm!(
            "vbroadcasti128 ymm13, xmmword ptr [{k}]",
            "vbroadcasti128 ymm14, xmmword ptr [{kl}]",
            "vbroadcasti128 ymm11, xmmword ptr [{poly}]",
            "vmovdqu64 ymm16, ymmword ptr [{tw}]",
            "vmovdqu64 ymm17, ymmword ptr [{tw} + 32]",
            "vmovdqu64 ymm18, ymmword ptr [{tw} + 64]",
            "vmovdqu64 ymm19, ymmword ptr [{tw} + 96]",
            "vmovdqu64 ymm20, ymmword ptr [{tw} + 128]",
            "vmovdqu64 ymm21, ymmword ptr [{tw} + 160]",
            "vmovdqu64 ymm22, ymmword ptr [{tw} + 192]",
            "vmovdqu64 ymm23, ymmword ptr [{tw} + 224]",
            ".p2align 5",
            "2:",
            vxts_evex_asm!(@load 0 16), vxts_evex_asm!(@load 1 17),
            vxts_evex_asm!(@load 2 18), vxts_evex_asm!(@load 3 19),
            vxts_evex_asm!(@load 4 20), vxts_evex_asm!(@load 5 21),
            vxts_evex_asm!(@load 6 22), vxts_evex_asm!(@load 7 23),
            $(
                concat!("vbroadcasti128 ymm12, xmmword ptr [{k} + ", $r, " * 16]"),
                $(vxts_evex_asm!(@step $t $w),)*
                vxts_asm!(@aes8 $op),
            )*
            vxts_evex_asm!(@last $last, 0 24), vxts_evex_asm!(@last $last, 1 25),
            vxts_evex_asm!(@last $last, 2 26), vxts_evex_asm!(@last $last, 3 27),
            vxts_evex_asm!(@last $last, 4 28), vxts_evex_asm!(@last $last, 5 29),
            vxts_evex_asm!(@last $last, 6 30), vxts_evex_asm!(@last $last, 7 31),
            "add {p}, 256",
            "dec {n}",
            "jnz 2b",
            "vmovdqu64 xmmword ptr [{tw}], xmm16",
            "vzeroupper",
            p = inout(reg) $p => _,
            n = inout(reg) $n => _,
            k = in(reg) $k,
            kl = in(reg) $kl,
            poly = in(reg) $poly,
            tw = in(reg) $tw,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm9") _, out("ymm11") _, out("ymm12") _, out("ymm13") _, out("ymm14") _,
            out("ymm16") _, out("ymm17") _, out("ymm18") _, out("ymm19") _,
            out("ymm20") _, out("ymm21") _, out("ymm22") _, out("ymm23") _,
            out("ymm24") _, out("ymm25") _, out("ymm26") _, out("ymm27") _,
            out("ymm28") _, out("ymm29") _, out("ymm30") _, out("ymm31") _,
            options(nostack),
        )
    };
    // Blocks 2j, 2j+1: data XOR their tweaks XOR round key 0, one VPTERNLOGD.
    (@load $j:literal $t:literal) => {
        concat!(
            "vmovdqu ymm", $j, ", ymmword ptr [{p} + ", $j, " * 32]\n",
            "vpternlogd ymm", $j, ", ymm13, ymm", $t, ", 0x96",
        )
    };
    // The tweak register's last-round key (the last round key XOR it), then
    // the register times α^16 in place for the next batch, as
    // `vxts_vec_asm!`'s step.
    (@step $t:literal $w:literal) => {
        concat!(
            "vpxord ymm", $w, ", ymm14, ymm", $t, "\n",
            "vpsrldq ymm9, ymm", $t, ", 14\n",
            "vpslldq ymm", $t, ", ymm", $t, ", 2\n",
            "vpclmulqdq ymm9, ymm9, ymm11, 0\n",
            "vpxord ymm", $t, ", ymm", $t, ", ymm9",
        )
    };
    (@last $last:literal, $j:literal $w:literal) => {
        concat!(
            $last, " ymm", $j, ", ymm", $j, ", ymm", $w, "\n",
            "vmovdqu ymmword ptr [{p} + ", $j, " * 32], ymm", $j,
        )
    };
}

/// XTS over the whole 16-block batches of `data` as [`xts_batches_vec`], with
/// the tweaks in the AVX-512 registers (ymm16-31) and the first XOR a
/// VPTERNLOGD: 6 vector instructions a register of two blocks besides its 10-14
/// AES ones, against 7, and no memory for the tweaks.
///
/// # Safety
/// The CPU must have VAES, VPCLMULQDQ, AVX2 and AVX-512 (F, VL, BW); `keys`
/// holds `NR + 1` round keys.
#[target_feature(enable = "aes,vaes,vpclmulqdq,avx2,avx512f,avx512vl,avx512bw")]
unsafe fn xts_batches_evex<const NR: usize, const ENC: bool>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
) -> usize {
    let batches = data.len() / (16 * XW);
    if batches == 0 {
        return 0;
    }
    // The first batch's tweaks in; the first tweak after the data out.
    let mut tw = [0u128; XW];
    let mut chain = *t;
    for x in &mut tw {
        *x = chain;
        chain = super::mul_alpha(chain);
    }
    let twp = tw.as_mut_ptr();
    let p = data.as_mut_ptr();
    let n = batches;
    let poly = 0x87u128.to_le_bytes();
    let pp = poly.as_ptr();
    let kp = keys.as_ptr();
    let klp = keys[NR].as_ptr();
    macro_rules! rounds {
        ($($schedule:tt)*) => {
            if ENC {
                vxts_evex_asm!("vaesenc", "vaesenclast", p, n, kp, klp, pp, twp; $($schedule)*)
            } else {
                vxts_evex_asm!("vaesdec", "vaesdeclast", p, n, kp, klp, pp, twp; $($schedule)*)
            }
        };
    }
    // SAFETY: the CPU has VAES, VPCLMULQDQ, AVX2 and AVX-512 F, VL and BW (the
    // caller's contract). The loop reads and writes `batches` * 256 bytes from
    // `p`, inside `data`; it reads `NR + 1` keys at `kp`, 16 bytes at `pp` and
    // the 256 bytes of `tw` at `twp`, and writes `tw`'s first 16. Every vector
    // register it uses is declared clobbered, and it ends with VZEROUPPER.
    unsafe {
        match NR {
            10 => rounds! {
                (1, 0 16 24) (2, 1 17 25) (3, 2 18 26) (4, 3 19 27) (5, 4 20 28)
                (6, 5 21 29) (7, 6 22 30) (8, 7 23 31) (9)
            },
            12 => rounds! {
                (1, 0 16 24) (2, 1 17 25) (3, 2 18 26) (4, 3 19 27) (5, 4 20 28)
                (6, 5 21 29) (7, 6 22 30) (8, 7 23 31) (9) (10) (11)
            },
            _ => rounds! {
                (1, 0 16 24) (2, 1 17 25) (3, 2 18 26) (4, 3 19 27) (5, 4 20 28)
                (6, 5 21 29) (7, 6 22 30) (8, 7 23 31) (9) (10) (11) (12) (13)
            },
        }
    }
    *t = tw[0];
    tw.zeroize();
    batches * 16 * XW
}

/// XTS over the whole 16-block batches of `data` from tweak `t` (already
/// encrypted), which advances; returns the bytes done.
///
/// As the AES-NI loop ([`x86_aesni`]'s `xts_batches`): the tweaks are made
/// on the integer pipes and stored 7 batches ahead in a ring of 8, so that
/// the vector pipes AESENC shares take three XORs a register of two blocks
/// besides its AES instructions, instead of seven (the multiplication by
/// α^16 with VPCLMULQDQ was four).
///
/// # Safety
/// The CPU must have VAES and AVX2; `keys` holds `NR + 1` round keys.
#[target_feature(enable = "aes,vaes,avx2")]
unsafe fn xts_batches<const NR: usize, const ENC: bool>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
) -> usize {
    let batches = data.len() / (16 * XW);
    if batches == 0 {
        return 0;
    }
    let mut chain = *t;
    let mut ring = TweakRing::<XW>::new();
    let last = ring.prefill(batches, || {
        let t = chain;
        chain = super::mul_alpha(t);
        t
    });
    let (base, wr) = ring.pointers();
    let p = data.as_mut_ptr();
    let n = batches;
    let rd = base;
    let (lo, hi) = (last as u64, (last >> 64) as u64);
    let kp = keys.as_ptr();
    let klp = keys[NR].as_ptr();
    macro_rules! rounds {
        ($($schedule:tt)*) => {
            if ENC {
                vxts_asm!("vaesenc", "vaesenclast", p, n, kp, klp, rd, wr, base, lo, hi;
                    $($schedule)*)
            } else {
                vxts_asm!("vaesdec", "vaesdeclast", p, n, kp, klp, rd, wr, base, lo, hi;
                    $($schedule)*)
            }
        };
    }
    // SAFETY: the CPU has VAES and AVX2 (the caller's contract). The loop
    // reads and writes `batches` * 256 bytes from `p`, inside `data`; it
    // reads `NR + 1` keys at `kp`; its ring pointers stay inside the 2,048
    // bytes of `ring` (slots of 256, wrapping at the end). Every ymm
    // register it uses is declared clobbered, and it ends with VZEROUPPER.
    unsafe {
        match NR {
            10 => rounds! {
                (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6, 7) (5, 8) (6, 9, 10) (7, 11, 12) (8, 13, 14)
                (9, 15)
            },
            12 => rounds! {
                (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6, 7) (5, 8) (6, 9, 10) (7, 11, 12) (8, 13, 14)
                (9, 15) (10) (11)
            },
            _ => rounds! {
                (1, 0, 1) (2, 2, 3) (3, 4, 5) (4, 6, 7) (5, 8) (6, 9, 10) (7, 11, 12) (8, 13, 14)
                (9, 15) (10) (11) (12) (13)
            },
        }
    }
    *t = ring.after(batches);
    batches * 16 * XW
}
