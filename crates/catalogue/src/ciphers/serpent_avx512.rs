//! Serpent on AVX-512 with explicit intrinsics: thirty-two blocks at a time,
//! word `j` of sixteen blocks per 512-bit register, two registers per word
//! (the state and the temporaries fit in the 32 ZMM registers), through the same
//! round functions as the other backends; LLVM fuses their AND/OR/XOR chains
//! into `vpternlogd`.
//!
//! Only reached through `Kind::Avx512`, which exists only when the CPU features
//! in use include AVX-512 (F, VL, BW).

use core::arch::x86_64::*;
use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use super::simd128::transpose;
use super::{Blk, RoundKeys, Word, decrypt_words, encrypt_words};
use cipher::InOutBuf;

/// Blocks per call.
pub(super) const LANES: usize = 16 * NV;
/// Registers per word.
const NV: usize = 2;

type V = __m512i;

/// One 32-bit word of [`LANES`] blocks: blocks `16h .. 16h + 16` in register `h`.
#[derive(Clone, Copy)]
pub(super) struct W([V; NV]);

/// Calls AVX-512 intrinsics.
macro_rules! avx512 {
    ($e:expr) => {
        // SAFETY: this module runs only inside `crypt`, which is compiled with
        // AVX-512F and called only when the CPU features in use include AVX-512.
        unsafe { $e }
    };
}

mod op {
    use super::*;
    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        avx512!(_mm512_xor_si512(a, b))
    }
    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        avx512!(_mm512_and_si512(a, b))
    }
    #[inline(always)]
    pub fn or(a: V, b: V) -> V {
        avx512!(_mm512_or_si512(a, b))
    }
    #[inline(always)]
    pub fn splat(v: u32) -> V {
        avx512!(_mm512_set1_epi32(v as i32))
    }
    #[inline(always)]
    pub fn shl(a: V, r: u32) -> V {
        // A count in a register (see serpent_simd128.rs); LLVM folds it.
        avx512!(_mm512_sll_epi32(a, _mm_cvtsi32_si128(r as i32)))
    }
    #[inline(always)]
    pub fn rotl(a: V, r: u32) -> V {
        // VPROLVD with a constant vector; LLVM turns it into VPROLD.
        avx512!(_mm512_rolv_epi32(a, _mm512_set1_epi32(r as i32)))
    }
}

macro_rules! w_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:ident) => {
        impl $tr for W {
            type Output = Self;
            #[inline(always)]
            fn $f(self, rhs: Self) -> Self {
                W(core::array::from_fn(|i| op::$op(self.0[i], rhs.0[i])))
            }
        }
        impl $atr for W {
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

impl Not for W {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        self ^ W::splat(u32::MAX)
    }
}

impl Word for W {
    #[inline(always)]
    fn splat(v: u32) -> Self {
        W([op::splat(v); NV])
    }
    #[inline(always)]
    fn rotl<const R: u32>(self) -> Self {
        W(self.0.map(|a| op::rotl(a, R)))
    }
    #[inline(always)]
    fn shl<const R: u32>(self) -> Self {
        W(self.0.map(|a| op::shl(a, R)))
    }
}

/// Blocks `16h .. 16h + 16` of `b` into `x[j].0[h]`.
#[inline(always)]
fn load16(b: &[Blk], x: &mut [W; 4], h: usize) {
    let ld = |i: usize| {
        // SAFETY: each `Blk` is 16 readable bytes; unaligned loads are allowed.
        unsafe { _mm_loadu_si128(b[i].as_ptr().cast::<__m128i>()) }
    };
    let q: [[__m128i; 4]; 4] = core::array::from_fn(|g| {
        transpose([ld(4 * g), ld(4 * g + 1), ld(4 * g + 2), ld(4 * g + 3)])
    });
    for j in 0..4 {
        x[j].0[h] = avx512!({
            let v = _mm512_castsi128_si512(q[0][j]);
            let v = _mm512_inserti32x4::<1>(v, q[1][j]);
            let v = _mm512_inserti32x4::<2>(v, q[2][j]);
            _mm512_inserti32x4::<3>(v, q[3][j])
        });
    }
}

/// Inverse of [`load16`].
#[inline(always)]
fn store16(x: &[W; 4], b: &mut [Blk], h: usize) {
    let q: [[__m128i; 4]; 4] = [
        transpose(core::array::from_fn(|j| {
            avx512!(_mm512_extracti32x4_epi32::<0>(x[j].0[h]))
        })),
        transpose(core::array::from_fn(|j| {
            avx512!(_mm512_extracti32x4_epi32::<1>(x[j].0[h]))
        })),
        transpose(core::array::from_fn(|j| {
            avx512!(_mm512_extracti32x4_epi32::<2>(x[j].0[h]))
        })),
        transpose(core::array::from_fn(|j| {
            avx512!(_mm512_extracti32x4_epi32::<3>(x[j].0[h]))
        })),
    ];
    for (i, v) in q.into_iter().flatten().enumerate() {
        // SAFETY: each `Blk` is 16 writable bytes; unaligned stores are allowed.
        unsafe { _mm_storeu_si128(b[i].as_mut_ptr().cast::<__m128i>(), v) };
    }
}

/// Encrypts or decrypts up to [`LANES`] blocks.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn crypt<const ENC: bool>(rk: &RoundKeys, mut blocks: InOutBuf<'_, '_, Blk>) {
    let n = blocks.len();
    assert!(n <= LANES, "too many blocks for the lane count");
    let zero = op::splat(0);
    let mut x = [W([zero; NV]); 4];
    let mut tmp = [Blk::default(); LANES];
    let input: &[Blk] = if n == LANES {
        blocks.get_in()
    } else {
        tmp[..n].copy_from_slice(blocks.get_in());
        &tmp
    };
    for h in 0..NV {
        load16(&input[16 * h..], &mut x, h);
    }
    let y = if ENC {
        encrypt_words(rk, x)
    } else {
        decrypt_words(rk, x)
    };
    if n == LANES {
        let out = blocks.get_out();
        for h in 0..NV {
            store16(&y, &mut out[16 * h..], h);
        }
    } else {
        for h in 0..NV {
            store16(&y, &mut tmp[16 * h..], h);
        }
        blocks.get_out().copy_from_slice(&tmp[..n]);
    }
}
