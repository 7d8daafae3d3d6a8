//! Poly1305 on AVX-512 IFMA: eight blocks at a time in the eight 64-bit lanes
//! of a 512-bit register, in radix 2^44, with `vpmadd52luq`/`vpmadd52huq`
//! (the low and high 52 bits of a 52x52-bit product, accumulated).
//!
//! Why: the scalar block function ([`super::poly1305`]) is a chain of four
//! 64x64-bit products a block, about 1 cycle a byte; ChaCha20 on AVX-512 takes
//! about two thirds of that (0.64 cycles a byte on Zen 4), so after it the
//! scalar hash would cost more than the cipher. OpenSSL hashes with AVX-512
//! code on these CPUs too.
//!
//! Each lane carries its own Horner chain over every 8th block (every 16th
//! with two chains taking turns, see [`absorb`]), multiplied by `r^8` (`r^16`)
//! a step; the last step multiplies each lane by the power of `r` that puts
//! its block where the one-at-a-time hash would, and the lanes are summed.
//! Every limb of a value `x0 + x1 * 2^44 + x2 * 2^88` is under 2^46 at every
//! multiplication, and of a multiplier under 2^49: inside the 52 bits IFMA
//! reads.

use core::arch::x86_64::*;

use zeroize::{Zeroize, ZeroizeOnDrop};

use super::poly1305::{BLOCK, Key};

/// Blocks per step: one per 64-bit lane.
const LANES: usize = 8;
/// Bytes per step.
pub(crate) const STEP: usize = LANES * BLOCK;
const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// Whether this CPU has AVX-512 F and IFMA (detected; the dispatch applies
/// `CLUSTERCRYPT_DISABLE_HWF`).
pub(crate) fn runnable() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

/// A partially reduced value `h0 + h1 * 2^64 + h2 * 2^128` (`h2` a few bits)
/// in radix 2^44.
fn to_44([h0, h1, h2]: [u64; 3]) -> [u64; 3] {
    [
        h0 & M44,
        ((h0 >> 44) | (h1 << 20)) & M44,
        (h1 >> 24) | (h2 << 40),
    ]
}

/// A multiplier per lane in radix 2^44: `r0, r1, r2`, and `20 * r1`,
/// `20 * r2` for the products that wrap past 2^130 (`2^132 = 4 * 2^130`,
/// and `2^130 = 5 mod p`).
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
struct Multiplier([[u64; LANES]; 5]);

impl Multiplier {
    fn new(powers: [[u64; 3]; LANES]) -> Self {
        let mut m = [[0u64; LANES]; 5];
        for (l, p) in powers.iter().enumerate() {
            let [r0, r1, r2] = to_44(*p);
            m[0][l] = r0;
            m[1][l] = r1;
            m[2][l] = r2;
            m[3][l] = 20 * r1;
            m[4][l] = 20 * r2;
        }
        Multiplier(m)
    }
}

/// The powers of a key `r` the vector loops multiply by.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub(crate) struct Powers {
    /// `r^16` in every lane: a step of each chain when two chains take turns
    /// (16 blocks a step).
    step2: Multiplier,
    /// The last step of the two chains: lane `l` of the first holds block
    /// [`block_of`]`(l)` of the 16, which is `16 - block_of(l)` from the end...
    last2_first: Multiplier,
    /// ...and of the second block `8 + block_of(l)`, `8 - block_of(l)` from
    /// the end; the same as the last of a lone step.
    last: Multiplier,
}

/// The block of a step that lane `l` holds: the unpacks of two 64-byte
/// loads put blocks 0-3 in the even lanes and blocks 4-7 in the odd ones.
const fn block_of(l: usize) -> usize {
    l / 2 + 4 * (l % 2)
}

impl Powers {
    /// From `r^1` to `r^16` of `key`, partially reduced.
    pub(crate) fn new(key: Key) -> Self {
        let [r0, r1, _] = key.limbs();
        let mut pow = [[0u64; 3]; 2 * LANES + 1];
        pow[1] = [r0, r1, 0];
        for k in 2..=2 * LANES {
            let mut h = pow[k - 1];
            key.absorb(&mut h, 0, 0);
            pow[k] = h;
        }
        let powers = Powers {
            step2: Multiplier::new([pow[2 * LANES]; LANES]),
            last2_first: Multiplier::new(core::array::from_fn(|l| pow[2 * LANES - block_of(l)])),
            last: Multiplier::new(core::array::from_fn(|l| pow[LANES - block_of(l)])),
        };
        pow.zeroize();
        powers
    }
}

/// The multiplier's five vectors.
#[inline]
#[target_feature(enable = "avx512f")]
fn load(m: &Multiplier) -> [__m512i; 5] {
    let row = |i: usize| m.0[i].as_ptr().cast::<__m512i>();
    // SAFETY: each row is 8 u64 (64 bytes); unaligned loads.
    unsafe {
        [
            _mm512_loadu_si512(row(0)),
            _mm512_loadu_si512(row(1)),
            _mm512_loadu_si512(row(2)),
            _mm512_loadu_si512(row(3)),
            _mm512_loadu_si512(row(4)),
        ]
    }
}

/// `x0 * a + x1 * b + x2 * c` per lane: the low 52 bits of each product
/// summed (`HI = false`) or the high 52 bits (`HI = true`).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn dot<const HI: bool>(x: &[__m512i; 3], a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    let z = _mm512_setzero_si512();
    if HI {
        let t = _mm512_madd52hi_epu64(z, x[0], a);
        let t = _mm512_madd52hi_epu64(t, x[1], b);
        _mm512_madd52hi_epu64(t, x[2], c)
    } else {
        let t = _mm512_madd52lo_epu64(z, x[0], a);
        let t = _mm512_madd52lo_epu64(t, x[1], b);
        _mm512_madd52lo_epu64(t, x[2], c)
    }
}

/// `x * r` per lane, carried so that the limbs fit the next multiplication
/// (`x0 < 2^44`, `x1 < 2^45`, `x2 < 2^42`; every input limb under 2^52).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(x: [__m512i; 3], [r0, r1, r2, s1, s2]: [__m512i; 5]) -> [__m512i; 3] {
    let (lo0, hi0) = (dot::<false>(&x, r0, s2, s1), dot::<true>(&x, r0, s2, s1));
    let (lo1, hi1) = (dot::<false>(&x, r1, r0, s2), dot::<true>(&x, r1, r0, s2));
    let (lo2, hi2) = (dot::<false>(&x, r2, r1, r0), dot::<true>(&x, r2, r1, r0));
    // d_i = lo_i + hi_i * 2^52, at weight 2^(44 i).
    let m44 = _mm512_set1_epi64(M44 as i64);
    // hi_i * 2^52 * 2^(44 i) = (hi_i << 8) * 2^(44 (i + 1)).
    let c = _mm512_add_epi64(_mm512_srli_epi64::<44>(lo0), _mm512_slli_epi64::<8>(hi0));
    let h0 = _mm512_and_si512(lo0, m44);
    let lo1 = _mm512_add_epi64(lo1, c);
    let c = _mm512_add_epi64(_mm512_srli_epi64::<44>(lo1), _mm512_slli_epi64::<8>(hi1));
    let h1 = _mm512_and_si512(lo1, m44);
    let lo2 = _mm512_add_epi64(lo2, c);
    // Past bit 130 (limb 2 holds 42 bits): times 5 into limb 0.
    let c = _mm512_add_epi64(_mm512_srli_epi64::<42>(lo2), _mm512_slli_epi64::<10>(hi2));
    let h2 = _mm512_and_si512(lo2, _mm512_set1_epi64(M42 as i64));
    let h0 = _mm512_add_epi64(h0, _mm512_add_epi64(c, _mm512_slli_epi64::<2>(c)));
    let h1 = _mm512_add_epi64(h1, _mm512_srli_epi64::<44>(h0));
    [_mm512_and_si512(h0, m44), h1, h2]
}

/// One step's eight blocks from `p` (128 bytes) in radix 2^44, with the
/// `2^128` pad bit; lane `l` holds block [`block_of`]`(l)`.
#[inline]
#[target_feature(enable = "avx512f")]
fn blocks(p: &[u8]) -> [__m512i; 3] {
    let p = &p[..STEP];
    // SAFETY: `p` is 128 bytes: two unaligned 64-byte loads.
    let (a, b) = unsafe {
        (
            _mm512_loadu_si512(p.as_ptr().cast()),
            _mm512_loadu_si512(p[64..].as_ptr().cast()),
        )
    };
    let lo = _mm512_unpacklo_epi64(a, b);
    let hi = _mm512_unpackhi_epi64(a, b);
    let m44 = _mm512_set1_epi64(M44 as i64);
    [
        _mm512_and_si512(lo, m44),
        _mm512_and_si512(
            _mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)),
            m44,
        ),
        _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40)),
    ]
}

/// The hash `h` in the first lane of a vector, the others zero.
#[inline]
#[target_feature(enable = "avx512f")]
fn start(h: &[u64; 3]) -> [__m512i; 3] {
    let h44 = to_44(*h);
    [
        _mm512_maskz_set1_epi64(1, h44[0] as i64),
        _mm512_maskz_set1_epi64(1, h44[1] as i64),
        _mm512_maskz_set1_epi64(1, h44[2] as i64),
    ]
}

/// `x + m` per lane and limb.
#[inline]
#[target_feature(enable = "avx512f")]
fn add3(x: [__m512i; 3], m: [__m512i; 3]) -> [__m512i; 3] {
    [
        _mm512_add_epi64(x[0], m[0]),
        _mm512_add_epi64(x[1], m[1]),
        _mm512_add_epi64(x[2], m[2]),
    ]
}

/// The sum of the lanes of `x` (each limb under 2^46, so the sums under
/// 2^49) as a partially reduced hash in radix 2^64.
#[inline]
#[target_feature(enable = "avx512f")]
fn finish(x: [__m512i; 3]) -> [u64; 3] {
    let mut l0 = _mm512_reduce_add_epi64(x[0]) as u64;
    let mut l1 = _mm512_reduce_add_epi64(x[1]) as u64;
    let mut l2 = _mm512_reduce_add_epi64(x[2]) as u64;
    l1 += l0 >> 44;
    l0 &= M44;
    l2 += l1 >> 44;
    l1 &= M44;
    l0 += (l2 >> 42) * 5;
    l2 &= M42;
    l1 += l0 >> 44;
    l0 &= M44;
    l2 += l1 >> 44;
    l1 &= M44;
    // l2 < 2^42 + 1: the value is under 2^131, h2 = l2 >> 40 <= 4.
    [l0 | (l1 << 44), (l1 >> 20) | (l2 << 24), l2 >> 40]
}

/// Absorbs the whole steps of `data` (full blocks, pad bit set) into the
/// partially reduced hash `h`; returns the bytes absorbed, a multiple of
/// [`STEP`]. The rest is the caller's, for the block-at-a-time code.
///
/// Two chains take turns, 16 blocks a step, so that one multiplies while the
/// other waits for its carries (a step is a chain of three dependent
/// `vpmadd52` and about ten carry operations); an odd step at the end is a
/// lone one. On Zen 4 the AEAD at `avx512` ran 1.06x faster than with one
/// chain (docs/PERFORMANCE-LOG.md, "Zen 4 session").
///
/// # Safety
/// The CPU must support AVX-512 F and IFMA ([`runnable`]).
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) unsafe fn absorb(powers: &Powers, h: &mut [u64; 3], data: &[u8]) -> usize {
    let pairs = data.len() / (2 * STEP);
    if pairs > 0 {
        let (step, last_first, last) = (
            load(&powers.step2),
            load(&powers.last2_first),
            load(&powers.last),
        );
        // The running hash joins block 0's lane (lane 0 of the first chain).
        let mut x = start(h);
        let mut y = [_mm512_setzero_si512(); 3];
        for p in 0..pairs {
            let at = 2 * STEP * p;
            let (a, b) = (
                add3(x, blocks(&data[at..])),
                add3(y, blocks(&data[at + STEP..])),
            );
            (x, y) = if p + 1 < pairs {
                (mul(a, step), mul(b, step))
            } else {
                (mul(a, last_first), mul(b, last))
            };
        }
        *h = finish(add3(x, y));
    }
    let done = 2 * STEP * pairs;
    if data.len() - done < STEP {
        return done;
    }
    *h = finish(mul(
        add3(start(h), blocks(&data[done..])),
        load(&powers.last),
    ));
    done + STEP
}
