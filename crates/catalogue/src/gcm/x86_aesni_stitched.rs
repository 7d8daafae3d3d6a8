//! AES-GCM with AES-NI and PCLMULQDQ stitched into one loop (the
//! `aesni-avx2` tier, as AWS-LC's aesni-gcm-x86_64 and libgcrypt do): the
//! rounds of eight CTR blocks interleaved with the GHASH products of eight
//! ciphertext blocks (sealing: the batch before, already written; opening:
//! the batch itself, read before it is overwritten). The AES units and the
//! carry-less multiplier then work side by side, where one pass after the
//! other left each idle half the time.
//!
//! Each round is one `asm!` block: the eight AESENC and one block's
//! Karatsuba product (three PCLMULQDQ with the powers from memory) in one
//! instruction stream, VEX-encoded (AVX) for three operands: eight AES
//! states, the round key, the three sums and two temporaries fit in the
//! sixteen xmm registers without spills. The reductions, counters and the
//! last round are intrinsics.

use core::arch::asm;
use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::Powers;
use super::x86_pclmul::{finish, m128, rev128, u128_of};

/// Blocks per batch (and per reduction).
const BATCH: usize = 8;
/// Bytes per batch.
pub(super) const BATCH_BYTES: usize = 16 * BATCH;

/// The powers as the `asm!` blocks read them: `pow[j]` = H^(8-j), the
/// multiplier of block `j` of a batch, and `mid[j]` its `lo ^ hi` in the
/// low half (Karatsuba's middle operand), 128 bytes after it.
#[repr(C, align(16))]
struct Table {
    pow: [u128; BATCH],
    mid: [u128; BATCH],
}

impl Table {
    fn new(powers: &Powers) -> Table {
        let mut t = Table {
            pow: [0; BATCH],
            mid: [0; BATCH],
        };
        t.pow.copy_from_slice(&powers[16 - BATCH..]);
        for (m, p) in t.mid.iter_mut().zip(&t.pow) {
            *m = (p ^ (p >> 64)) & u128::from(u64::MAX);
        }
        t
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        self.pow.zeroize();
        self.mid.zeroize();
    }
}

/// One AES round (AESENC with `k`) on the eight blocks `b`, and the
/// Karatsuba product of the 16 bytes at `src` (byte-reversed, plus `a`)
/// with `h` (a `Table` entry) added into `acc` (lo, mid, hi).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ and AVX; `src` must be 16 readable
/// bytes, `h` a `pow` entry of a [`Table`] (its `mid` 128 bytes on).
#[inline(always)]
unsafe fn round_hash(
    b: &mut [__m128i; BATCH],
    k: __m128i,
    src: *const u8,
    h: *const u128,
    rev: &__m128i,
    acc: &mut [__m128i; 3],
    a: __m128i,
) {
    // SAFETY: as the caller promises; the memory read is `src`, `h`, `h +
    // 128 bytes` and `rev`, all valid.
    unsafe {
        asm!(
            "vmovdqu {x}, xmmword ptr [{src}]",
            "vaesenc {b0}, {b0}, {k}",
            "vpshufb {x}, {x}, xmmword ptr [{rev}]",
            "vaesenc {b1}, {b1}, {k}",
            "vpxor {x}, {x}, {a}",
            "vaesenc {b2}, {b2}, {k}",
            "vpclmulqdq {t}, {x}, xmmword ptr [{h}], 0x00",
            "vaesenc {b3}, {b3}, {k}",
            "vpxor {lo}, {lo}, {t}",
            "vpclmulqdq {t}, {x}, xmmword ptr [{h}], 0x11",
            "vaesenc {b4}, {b4}, {k}",
            "vpxor {hi}, {hi}, {t}",
            "vpshufd {t}, {x}, 0x4e",
            "vaesenc {b5}, {b5}, {k}",
            "vpxor {x}, {x}, {t}",
            "vpclmulqdq {t}, {x}, xmmword ptr [{h} + 128], 0x00",
            "vaesenc {b6}, {b6}, {k}",
            "vpxor {mid}, {mid}, {t}",
            "vaesenc {b7}, {b7}, {k}",
            b0 = inout(xmm_reg) b[0],
            b1 = inout(xmm_reg) b[1],
            b2 = inout(xmm_reg) b[2],
            b3 = inout(xmm_reg) b[3],
            b4 = inout(xmm_reg) b[4],
            b5 = inout(xmm_reg) b[5],
            b6 = inout(xmm_reg) b[6],
            b7 = inout(xmm_reg) b[7],
            lo = inout(xmm_reg) acc[0],
            mid = inout(xmm_reg) acc[1],
            hi = inout(xmm_reg) acc[2],
            k = in(xmm_reg) k,
            a = in(xmm_reg) a,
            src = in(reg) src,
            h = in(reg) h,
            rev = in(reg) rev,
            x = out(xmm_reg) _,
            t = out(xmm_reg) _,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
}

/// One AES round (AESENC with `k`) on the eight blocks `b`.
///
/// # Safety
/// The CPU must have AES-NI and AVX.
#[inline(always)]
unsafe fn round(b: &mut [__m128i; BATCH], k: __m128i) {
    // SAFETY: as the caller promises; registers only.
    unsafe {
        asm!(
            "vaesenc {0}, {0}, {k}", "vaesenc {1}, {1}, {k}",
            "vaesenc {2}, {2}, {k}", "vaesenc {3}, {3}, {k}",
            "vaesenc {4}, {4}, {k}", "vaesenc {5}, {5}, {k}",
            "vaesenc {6}, {6}, {k}", "vaesenc {7}, {7}, {k}",
            inout(xmm_reg) b[0], inout(xmm_reg) b[1],
            inout(xmm_reg) b[2], inout(xmm_reg) b[3],
            inout(xmm_reg) b[4], inout(xmm_reg) b[5],
            inout(xmm_reg) b[6], inout(xmm_reg) b[7],
            k = in(xmm_reg) k,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
}

/// The counter blocks of a batch, XORed with round key 0, and the scalar
/// bookkeeping that makes the next batch's (as the CTR kernel does).
struct Counters {
    buf: [[u8; 16]; BATCH],
    k0: u128,
    k0w3: u32,
    c: u128,
}

impl Counters {
    fn new(k0: &[u8; 16], c: u128) -> Counters {
        let mut s = Counters {
            buf: [[0; 16]; BATCH],
            k0: u128::from_ne_bytes(*k0),
            k0w3: u32::from_ne_bytes([k0[12], k0[13], k0[14], k0[15]]),
            c,
        };
        s.fill();
        s
    }

    /// The whole batch from the 128-bit counter (exact carries).
    fn fill(&mut self) {
        for (i, b) in self.buf.iter_mut().enumerate() {
            let v = u128::from_ne_bytes(self.c.wrapping_add(i as u128).to_be_bytes());
            *b = (v ^ self.k0).to_ne_bytes();
        }
    }

    /// Steps to the next batch: only the last 32-bit words change unless
    /// their sum would carry.
    #[inline(always)]
    fn advance(&mut self) {
        let next = self.c.wrapping_add(BATCH as u128);
        let lo = next as u32;
        let same_top = (next >> 32) == (self.c >> 32);
        self.c = next;
        if lo.checked_add(BATCH as u32).is_some() && same_top {
            for (i, b) in self.buf.iter_mut().enumerate() {
                let w = u32::from_ne_bytes((lo + i as u32).to_be_bytes()) ^ self.k0w3;
                b[12..].copy_from_slice(&w.to_ne_bytes());
            }
        } else {
            self.fill();
        }
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        // The buffer is the counters XOR a round key: key material.
        self.buf.zeroize();
        self.k0.zeroize();
        self.k0w3.zeroize();
    }
}

/// Round key `r` in a register.
#[inline(always)]
fn key(keys: &[[u8; 16]; 15], r: usize) -> __m128i {
    // SAFETY: 16 bytes; SSE2 is in the x86-64 baseline.
    unsafe { _mm_loadu_si128(keys[r].as_ptr().cast()) }
}

/// One batch at `p`: AES-CTR of the counters in `ctrs` (encrypting or
/// decrypting `p` in place) with, if `HASH`, the GHASH products of the
/// eight blocks at `src` folded into `a`.
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ, SSSE3 and AVX; `p` and (if `HASH`)
/// `src` must be 128 bytes, readable (`p` writable), and `src` may be `p`:
/// it is read before `p` is written.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn batch<const NR: usize, const HASH: bool>(
    keys: &[[u8; 16]; 15],
    ctrs: &mut Counters,
    tab: &Table,
    rev: &__m128i,
    a: &mut __m128i,
    p: *mut u8,
    src: *const u8,
) {
    // SAFETY: as the caller promises; `keys` has 15 entries, r <= NR <= 14.
    unsafe {
        let mut b = [_mm_setzero_si128(); BATCH];
        for (x, c) in b.iter_mut().zip(&ctrs.buf) {
            *x = _mm_loadu_si128(c.as_ptr().cast());
        }
        ctrs.advance();
        let zero = _mm_setzero_si128();
        let mut acc = [zero; 3];
        // Round r (1..=8) hashes block 8 - r: block 0, the one that needs
        // the running hash `a` (last batch's reduction), comes last.
        macro_rules! rounds {
            ($($r:literal)*) => {$(
                if $r < NR {
                    if HASH && $r <= BATCH {
                        let j = BATCH - $r;
                        round_hash(
                            &mut b,
                            key(keys, $r),
                            src.add(16 * j),
                            tab.pow.as_ptr().add(j),
                            rev,
                            &mut acc,
                            if j == 0 { *a } else { zero },
                        );
                    } else {
                        round(&mut b, key(keys, $r));
                    }
                }
            )*};
        }
        rounds!(1 2 3 4 5 6 7 8 9 10 11 12 13);
        if HASH {
            acc[1] = _mm_xor_si128(acc[1], _mm_xor_si128(acc[0], acc[2]));
            *a = finish(acc);
        }
        // The last round's key takes in the data (AESENCLAST ends with an XOR).
        let last = key(keys, NR);
        for (j, x) in b.iter().enumerate() {
            let q = p.add(16 * j);
            let d = _mm_xor_si128(last, _mm_loadu_si128(q.cast()));
            _mm_storeu_si128(q.cast(), _mm_aesenclast_si128(*x, d));
        }
    }
}

/// Encrypts the whole batches of `data` and absorbs their ciphertext into
/// `acc`; `ctr` advances; returns the bytes done (a multiple of 128).
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ, SSSE3 and AVX.
#[target_feature(enable = "aes,pclmulqdq,ssse3,avx")]
unsafe fn seal_nr<const NR: usize>(
    keys: &[[u8; 16]; 15],
    powers: &Powers,
    ctr: &mut u128,
    acc: &mut u128,
    data: &mut [u8],
) -> usize {
    let n = data.len() / BATCH_BYTES;
    if n == 0 {
        return 0;
    }
    let tab = Table::new(powers);
    let rev = rev128();
    let mut a = m128(*acc);
    let mut ctrs = Counters::new(&keys[0], *ctr);
    let base = data.as_mut_ptr();
    // SAFETY: batch i is bytes 128 i .. 128 (i + 1) of `data`, i < n; the
    // features as the caller promises.
    unsafe {
        // The first batch has no ciphertext before it to hash.
        batch::<NR, false>(keys, &mut ctrs, &tab, &rev, &mut a, base, base);
        for i in 1..n {
            let p = base.add(BATCH_BYTES * i);
            batch::<NR, true>(keys, &mut ctrs, &tab, &rev, &mut a, p, p.sub(BATCH_BYTES));
        }
    }
    *acc = u128_of(a);
    // The last batch's ciphertext.
    let last = &data[BATCH_BYTES * (n - 1)..BATCH_BYTES * n];
    // SAFETY: the CPU has PCLMULQDQ and SSSE3, as the caller promises.
    unsafe { super::x86_pclmul::update(acc, powers, last) };
    *ctr = ctrs.c;
    BATCH_BYTES * n
}

/// Absorbs the ciphertext of the whole batches of `data` into `acc` and
/// decrypts them; `ctr` advances; returns the bytes done.
///
/// # Safety
/// The CPU must have AES-NI, PCLMULQDQ, SSSE3 and AVX.
#[target_feature(enable = "aes,pclmulqdq,ssse3,avx")]
unsafe fn open_nr<const NR: usize>(
    keys: &[[u8; 16]; 15],
    powers: &Powers,
    ctr: &mut u128,
    acc: &mut u128,
    data: &mut [u8],
) -> usize {
    let n = data.len() / BATCH_BYTES;
    if n == 0 {
        return 0;
    }
    let tab = Table::new(powers);
    let rev = rev128();
    let mut a = m128(*acc);
    let mut ctrs = Counters::new(&keys[0], *ctr);
    let base = data.as_mut_ptr();
    for i in 0..n {
        // SAFETY: batch i is inside `data` (i < n); the features as the
        // caller promises; the batch is hashed before it is overwritten.
        unsafe {
            let p = base.add(BATCH_BYTES * i);
            batch::<NR, true>(keys, &mut ctrs, &tab, &rev, &mut a, p, p);
        }
    }
    *acc = u128_of(a);
    *ctr = ctrs.c;
    BATCH_BYTES * n
}

/// Whether this CPU runs the stitched code (the mask aside, as
/// [`super::GhashImpl::runnable`]).
pub(super) fn runnable() -> bool {
    let f = crate::cpu::detected();
    f.aes && f.pmull && std::arch::is_x86_feature_detected!("avx")
}

/// Seals (`open` false) or opens the whole batches of `data` in place with
/// AES round keys `keys` (`nr` rounds), the CTR counter `ctr` (advances)
/// and the running GHASH `acc` (absorbs the ciphertext); returns the bytes
/// done (a multiple of 128).
///
/// # Safety
/// [`runnable`] must be true.
pub(super) unsafe fn apply(
    keys: &[[u8; 16]; 15],
    nr: usize,
    powers: &Powers,
    ctr: &mut u128,
    acc: &mut u128,
    data: &mut [u8],
    open: bool,
) -> usize {
    // SAFETY: the caller checked `runnable`.
    unsafe {
        match (nr, open) {
            (10, false) => seal_nr::<10>(keys, powers, ctr, acc, data),
            (12, false) => seal_nr::<12>(keys, powers, ctr, acc, data),
            (_, false) => seal_nr::<14>(keys, powers, ctr, acc, data),
            (10, true) => open_nr::<10>(keys, powers, ctr, acc, data),
            (12, true) => open_nr::<12>(keys, powers, ctr, acc, data),
            (_, true) => open_nr::<14>(keys, powers, ctr, acc, data),
        }
    }
}
