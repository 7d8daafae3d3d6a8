//! Serpent on the 128-bit vector registers every x86-64 (SSE2) and aarch64
//! (NEON) CPU has: word `j` of four blocks per register, with the same round
//! functions as the other backends (Serpent's S-boxes are bitsliced by design:
//! lanes never mix). x86-64 runs eight blocks (two registers per word), which
//! fit the 16 XMM registers with the S-box and rotation temporaries: sixteen
//! blocks spilled (measured under QEMU: ECB 37.6/39.8 -> 32.0/32.9 insn/B
//! encrypt/decrypt, and faster in wall time). aarch64, with 32 registers,
//! runs sixteen.
//!
//! Auto-vectorising the portable lane arrays does not get there (measured:
//! slower than two scalar lanes), hence explicit intrinsics. Neither needs a
//! run-time check on its architecture: SSE2 and NEON are part of the x86-64 and
//! aarch64 baselines. On aarch64 the mask can still hide NEON, and the portable
//! code runs then (see `crate::dispatch::serpent`).
//!
//! Blocks are loaded with a 4x4 transpose (x86: `punpck*`; aarch64: `ld4`,
//! which de-interleaves by itself), both on little-endian words as Serpent
//! specifies.

#[cfg(target_arch = "aarch64")]
use core::arch::aarch64::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use super::{Blk, RoundKeys, Word, decrypt_words, encrypt_words};
use cipher::InOutBuf;

/// Blocks per call.
pub(super) const LANES: usize = 4 * NV;
/// Registers per word (see the module comment).
#[cfg(target_arch = "x86_64")]
const NV: usize = 2;
#[cfg(target_arch = "aarch64")]
const NV: usize = 4;

#[cfg(target_arch = "x86_64")]
type V = __m128i;
#[cfg(target_arch = "aarch64")]
type V = uint32x4_t;

/// One 32-bit word of `4K` blocks, four in each register: a whole batch
/// ([`W8`], `K` = [`NV`]), or one register's blocks alone (`K` = 1, as x86
/// decryption runs them: [`super::X86Words::decrypt`]).
#[derive(Clone, Copy)]
pub(super) struct Wk<const K: usize>([V; K]);

/// The word of a whole batch.
pub(super) type W8 = Wk<NV>;

/// Calls an intrinsic that needs only the architecture's baseline.
macro_rules! base {
    ($e:expr) => {
        // SAFETY: the intrinsic needs only SSE2 (x86-64) or NEON (aarch64),
        // which every CPU of the target architecture has and the target
        // enables at compile time.
        unsafe { $e }
    };
}

#[cfg(target_arch = "x86_64")]
mod op {
    use super::*;
    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        base!(_mm_xor_si128(a, b))
    }
    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        base!(_mm_and_si128(a, b))
    }
    #[inline(always)]
    pub fn or(a: V, b: V) -> V {
        base!(_mm_or_si128(a, b))
    }
    #[inline(always)]
    pub fn splat(v: u32) -> V {
        base!(_mm_set1_epi32(v as i32))
    }
    #[inline(always)]
    pub fn shl(a: V, r: u32) -> V {
        // A shift count in a register: `R` is a const generic of the caller,
        // which `_mm_slli_epi32::<{R}>` cannot take on stable Rust; LLVM folds
        // the constant count into the immediate form.
        base!(_mm_sll_epi32(a, _mm_cvtsi32_si128(r as i32)))
    }
    #[inline(always)]
    pub fn shr(a: V, r: u32) -> V {
        base!(_mm_srl_epi32(a, _mm_cvtsi32_si128(r as i32)))
    }
}

#[cfg(target_arch = "aarch64")]
mod op {
    use super::*;
    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        base!(veorq_u32(a, b))
    }
    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        base!(vandq_u32(a, b))
    }
    #[inline(always)]
    pub fn or(a: V, b: V) -> V {
        base!(vorrq_u32(a, b))
    }
    #[inline(always)]
    pub fn splat(v: u32) -> V {
        base!(vdupq_n_u32(v))
    }
    #[inline(always)]
    pub fn shl(a: V, r: u32) -> V {
        // USHL by a register count (negative shifts right); LLVM folds the
        // constant into SHL/USHR immediates.
        base!(vshlq_u32(a, vdupq_n_s32(r as i32)))
    }
    #[inline(always)]
    pub fn shr(a: V, r: u32) -> V {
        base!(vshlq_u32(a, vdupq_n_s32(-(r as i32))))
    }
}

macro_rules! w8_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:ident) => {
        impl<const K: usize> $tr for Wk<K> {
            type Output = Self;
            #[inline(always)]
            fn $f(self, rhs: Self) -> Self {
                Wk(core::array::from_fn(|i| op::$op(self.0[i], rhs.0[i])))
            }
        }
        impl<const K: usize> $atr for Wk<K> {
            #[inline(always)]
            fn $af(&mut self, rhs: Self) {
                *self = (*self).$f(rhs);
            }
        }
    };
}

w8_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, xor);
w8_op!(BitAnd, bitand, BitAndAssign, bitand_assign, and);
w8_op!(BitOr, bitor, BitOrAssign, bitor_assign, or);

impl<const K: usize> Not for Wk<K> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        self ^ Self::splat(u32::MAX)
    }
}

impl<const K: usize> Word for Wk<K> {
    #[inline(always)]
    fn splat(v: u32) -> Self {
        Wk([op::splat(v); K])
    }
    #[inline(always)]
    fn rotl<const R: u32>(self) -> Self {
        let rot = |a: V| op::or(op::shl(a, R), op::shr(a, 32 - R));
        Wk(self.0.map(rot))
    }
    #[inline(always)]
    fn shl<const R: u32>(self) -> Self {
        Wk(self.0.map(|a| op::shl(a, R)))
    }
}

/// Words of blocks `4h .. 4h + 4` of `blocks` into `x[j].0[h]`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn load4(b: &[Blk], x: &mut [W8; 4], h: usize) {
    let [b0, b1, b2, b3] = core::array::from_fn(|i| {
        // SAFETY: each `Blk` is 16 readable bytes; unaligned loads are allowed
        // and SSE2 is part of the x86-64 baseline.
        unsafe { _mm_loadu_si128(b[i].as_ptr().cast::<__m128i>()) }
    });
    base!({
        let (t0, t1) = (_mm_unpacklo_epi32(b0, b1), _mm_unpacklo_epi32(b2, b3));
        let (t2, t3) = (_mm_unpackhi_epi32(b0, b1), _mm_unpackhi_epi32(b2, b3));
        x[0].0[h] = _mm_unpacklo_epi64(t0, t1);
        x[1].0[h] = _mm_unpackhi_epi64(t0, t1);
        x[2].0[h] = _mm_unpacklo_epi64(t2, t3);
        x[3].0[h] = _mm_unpackhi_epi64(t2, t3);
    });
}

/// Inverse of [`load4`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn store4(x: &[W8; 4], b: &mut [Blk], h: usize) {
    let (x0, x1, x2, x3) = (x[0].0[h], x[1].0[h], x[2].0[h], x[3].0[h]);
    let out = base!({
        let (t0, t1) = (_mm_unpacklo_epi32(x0, x1), _mm_unpacklo_epi32(x2, x3));
        let (t2, t3) = (_mm_unpackhi_epi32(x0, x1), _mm_unpackhi_epi32(x2, x3));
        [
            _mm_unpacklo_epi64(t0, t1),
            _mm_unpackhi_epi64(t0, t1),
            _mm_unpacklo_epi64(t2, t3),
            _mm_unpackhi_epi64(t2, t3),
        ]
    });
    for (blk, v) in b.iter_mut().zip(out) {
        // SAFETY: each `Blk` is 16 writable bytes; unaligned stores are allowed
        // and SSE2 is part of the x86-64 baseline.
        unsafe { _mm_storeu_si128(blk.as_mut_ptr().cast::<__m128i>(), v) };
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn load4(b: &[Blk], x: &mut [W8; 4], h: usize) {
    let mut buf = [0u32; 16];
    for (i, blk) in b.iter().take(4).enumerate() {
        for j in 0..4 {
            buf[4 * i + j] = u32::from_le_bytes(blk[4 * j..4 * j + 4].try_into().expect("4"));
        }
    }
    // SAFETY: `buf` holds 16 readable u32; LD4 de-interleaves word j of the
    // four blocks into register j.
    let v = unsafe { vld4q_u32(buf.as_ptr()) };
    x[0].0[h] = v.0;
    x[1].0[h] = v.1;
    x[2].0[h] = v.2;
    x[3].0[h] = v.3;
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn store4(x: &[W8; 4], b: &mut [Blk], h: usize) {
    let mut buf = [0u32; 16];
    let v = uint32x4x4_t(x[0].0[h], x[1].0[h], x[2].0[h], x[3].0[h]);
    // SAFETY: `buf` holds 16 writable u32; ST4 interleaves them back into blocks.
    unsafe { vst4q_u32(buf.as_mut_ptr(), v) };
    for (i, blk) in b.iter_mut().take(4).enumerate() {
        for j in 0..4 {
            blk[4 * j..4 * j + 4].copy_from_slice(&buf[4 * i + j].to_le_bytes());
        }
    }
}

/// Encrypts or decrypts up to [`LANES`] blocks.
#[inline(always)]
pub(super) fn crypt<const ENC: bool>(rk: &RoundKeys, mut blocks: InOutBuf<'_, '_, Blk>) {
    let n = blocks.len();
    assert!(n <= LANES, "too many blocks for the lane count");
    let zero = op::splat(0);
    let mut x = [Wk([zero; NV]); 4];
    if n == LANES {
        let input = blocks.get_in();
        for h in 0..NV {
            load4(&input[4 * h..], &mut x, h);
        }
    } else {
        let mut tmp = [Blk::default(); LANES];
        tmp[..n].copy_from_slice(blocks.get_in());
        for h in 0..NV {
            load4(&tmp[4 * h..], &mut x, h);
        }
    }
    let y = if ENC {
        encrypt_words(rk, x)
    } else {
        decrypt_words(rk, x)
    };
    if n == LANES {
        let out = blocks.get_out();
        for h in 0..NV {
            store4(&y, &mut out[4 * h..], h);
        }
    } else {
        let mut tmp = [Blk::default(); LANES];
        for h in 0..NV {
            store4(&y, &mut tmp[4 * h..], h);
        }
        blocks.get_out().copy_from_slice(&tmp[..n]);
    }
}

/// 4x4 transpose of four blocks into words (or back: it is its own inverse);
/// the AVX2 and AVX-512 kernels load their 128-bit lanes with it too.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn transpose(b: [V; 4]) -> [V; 4] {
    base!({
        let (t0, t1) = (
            _mm_unpacklo_epi32(b[0], b[1]),
            _mm_unpacklo_epi32(b[2], b[3]),
        );
        let (t2, t3) = (
            _mm_unpackhi_epi32(b[0], b[1]),
            _mm_unpackhi_epi32(b[2], b[3]),
        );
        [
            _mm_unpacklo_epi64(t0, t1),
            _mm_unpackhi_epi64(t0, t1),
            _mm_unpacklo_epi64(t2, t3),
            _mm_unpackhi_epi64(t2, t3),
        ]
    })
}

#[cfg(target_arch = "x86_64")]
impl super::X86Words for W8 {
    const LANES: usize = LANES;
    type Vec = V;
    x86_words_regs!(transpose);
    #[inline(always)]
    fn from_fn(f: impl Fn(usize) -> u32) -> Self {
        Wk(core::array::from_fn(|h| {
            let l = |i: usize| f(4 * h + i) as i32;
            base!(_mm_set_epi32(l(3), l(2), l(1), l(0)))
        }))
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> V {
        // SAFETY: the caller's contract; SSE2 is the x86-64 baseline.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: V) {
        // SAFETY: as in `load`.
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn store_xor(p: *mut u8, v: V, m: V) {
        // SAFETY: as in `load`.
        unsafe { _mm_storeu_si128(p.cast(), _mm_xor_si128(v, m)) }
    }
    #[inline(always)]
    unsafe fn load_after(prev: V, _p: *const u8) -> V {
        prev
    }
}

/// CBC decryption in place, [`LANES`] blocks per step (see
/// [`super::cbc_decrypt_x86`]).
#[cfg(target_arch = "x86_64")]
pub(super) fn cbc_decrypt(rk: &RoundKeys, iv: &mut [u8; 16], blocks: &mut [[u8; 16]]) {
    super::cbc_decrypt_x86::<W8, LANES>(rk, iv, blocks)
}

/// CTR mode in place (see [`super::ctr_x86`]).
#[cfg(target_arch = "x86_64")]
pub(super) fn ctr(rk: &RoundKeys, ctr: &mut [u8; 16], data: &mut [u8]) {
    super::ctr_x86::<W8, LANES>(rk, ctr, data)
}
