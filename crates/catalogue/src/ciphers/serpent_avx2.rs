//! Serpent on AVX2 with explicit intrinsics: sixteen blocks at a time, word
//! `j` of eight blocks per 256-bit register, two registers per word, through
//! the same round functions as the other backends.
//!
//! Replaces the auto-vectorised 32-lane AVX2 kernel, which LLVM compiled with
//! spills (measured in this file's commit: see docs/PERFORMANCE-LOG.md).
//! Only reached through `Kind::Avx2`, which exists only when the CPU features
//! in use include AVX2.

use core::arch::x86_64::*;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use super::{Blk, RoundKeys, Word};
use cipher::InOutBuf;

/// Blocks per call.
pub(super) const LANES: usize = 8 * NV;
/// Registers per word.
const NV: usize = 2;

type V = __m256i;

/// One 32-bit word of `8K` blocks, eight in each register: a whole batch
/// ([`W`], `K` = [`NV`]), or one register's blocks alone (`K` = 1, as
/// decryption runs them: [`super::X86Words::decrypt`]).
#[derive(Clone, Copy)]
pub(super) struct Wk<const K: usize>([V; K]);

/// The word of a whole batch.
pub(super) type W = Wk<NV>;

/// Calls AVX2 intrinsics.
macro_rules! avx2 {
    ($e:expr) => {
        // SAFETY: this module runs only inside `crypt`, which is compiled with
        // AVX2 and called only when the CPU features in use include AVX2.
        unsafe { $e }
    };
}

mod op {
    use super::*;
    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        avx2!(_mm256_xor_si256(a, b))
    }
    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        avx2!(_mm256_and_si256(a, b))
    }
    #[inline(always)]
    pub fn or(a: V, b: V) -> V {
        avx2!(_mm256_or_si256(a, b))
    }
    #[inline(always)]
    pub fn splat(v: u32) -> V {
        avx2!(_mm256_set1_epi32(v as i32))
    }
    #[inline(always)]
    pub fn shl(a: V, r: u32) -> V {
        // A count in a register (see serpent_simd128.rs); LLVM folds it.
        avx2!(_mm256_sll_epi32(a, _mm_cvtsi32_si128(r as i32)))
    }
    #[inline(always)]
    pub fn shr(a: V, r: u32) -> V {
        avx2!(_mm256_srl_epi32(a, _mm_cvtsi32_si128(r as i32)))
    }
}

macro_rules! w_op {
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

w_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, xor);
w_op!(BitAnd, bitand, BitAndAssign, bitand_assign, and);
w_op!(BitOr, bitor, BitOrAssign, bitor_assign, or);

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

/// Encrypts or decrypts up to [`LANES`] blocks (see [`super::crypt_x86`]).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn crypt<const ENC: bool>(rk: &RoundKeys, blocks: InOutBuf<'_, '_, Blk>) {
    super::crypt_x86::<W, LANES, ENC>(rk, blocks)
}

/// The 4x4 transposition of 32-bit words within each 128-bit lane of four
/// registers: two blocks per register in, word `j` of eight blocks per
/// register out (its own inverse).
#[inline(always)]
fn transpose_lanes(b: [V; 4]) -> [V; 4] {
    avx2!({
        let (t0, t1) = (
            _mm256_unpacklo_epi32(b[0], b[1]),
            _mm256_unpacklo_epi32(b[2], b[3]),
        );
        let (t2, t3) = (
            _mm256_unpackhi_epi32(b[0], b[1]),
            _mm256_unpackhi_epi32(b[2], b[3]),
        );
        [
            _mm256_unpacklo_epi64(t0, t1),
            _mm256_unpackhi_epi64(t0, t1),
            _mm256_unpacklo_epi64(t2, t3),
            _mm256_unpackhi_epi64(t2, t3),
        ]
    })
}

/// Vectors of two consecutive blocks: vectors `4h .. 4h + 4` make register
/// `h` of each word, whose 32-bit lane `4k + m` holds block `8h + 2m + k`
/// (lane `k` of vector `4h + m`).
impl super::X86Words for W {
    const LANES: usize = LANES;
    type Vec = V;
    x86_words_regs!(transpose_lanes);
    #[inline(always)]
    fn from_fn(f: impl Fn(usize) -> u32) -> Self {
        // Scalars through memory, and no intrinsic inside a closure (which
        // would not inherit AVX2).
        let v: [[u32; 8]; NV] =
            core::array::from_fn(|h| core::array::from_fn(|p| f(8 * h + 2 * (p % 4) + p / 4)));
        let mut w = [op::splat(0); NV];
        for h in 0..NV {
            // SAFETY: `v[h]` is 32 readable bytes; unaligned loads are allowed.
            w[h] = unsafe { _mm256_loadu_si256(v[h].as_ptr().cast()) };
        }
        Wk(w)
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> V {
        // SAFETY: the caller's contract (a readable vector, AVX2).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: V) {
        // SAFETY: the caller's contract (a writable vector, AVX2).
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn store_xor(p: *mut u8, v: V, m: V) {
        // SAFETY: the caller's contract (a writable vector, AVX2).
        unsafe { _mm256_storeu_si256(p.cast(), _mm256_xor_si256(v, m)) }
    }
    #[inline(always)]
    unsafe fn load_after(prev: __m128i, p: *const u8) -> V {
        // SAFETY: the caller's contract (16 readable bytes at `p`, AVX2).
        unsafe { _mm256_set_m128i(_mm_loadu_si128(p.cast()), prev) }
    }
}

/// CBC decryption in place, [`LANES`] blocks per step (see
/// [`super::cbc_decrypt_x86`]).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn cbc_decrypt(rk: &RoundKeys, iv: &mut [u8; 16], blocks: &mut [[u8; 16]]) {
    super::cbc_decrypt_x86::<W, LANES>(rk, iv, blocks)
}

/// CTR mode in place (see [`super::ctr_x86`]).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn ctr(rk: &RoundKeys, ctr: &mut [u8; 16], data: &mut [u8]) {
    super::ctr_x86::<W, LANES>(rk, ctr, data)
}
