//! ChaCha on AVX2: 8 blocks, one state word of each in a 256-bit register;
//! the 16- and 8-bit rotations are byte shuffles.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use crate::backends::x86_avx2::transpose4;

/// Blocks per batch.
pub(super) const N: usize = 8;

#[inline]
#[target_feature(enable = "avx2")]
fn add(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(a, b)
}
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}
/// Byte-shuffle masks of the 16- and 8-bit rotations, read from memory by
/// `vpshufb` so that they take no register.
#[repr(align(32))]
struct Mask(#[allow(dead_code, reason = "read by asm! only")] [u8; 32]);
static ROT16: Mask = Mask([
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, //
    2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
]);
static ROT8: Mask = Mask([
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, //
    3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
]);

// The rotations by whole bytes are one `vpshufb` each, written as `asm!` so
// that LLVM keeps them so: left to itself it splits them into word shuffles
// or pushes them through the preceding XOR, which doubles the shuffles (the
// port that limits this kernel) and spills the 16 state vectors.
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn r16(mut x: __m256i) -> __m256i {
    // SAFETY: `vpshufb` reads the 32-byte static mask; AVX2 is enabled.
    unsafe {
        core::arch::asm!("vpshufb {x}, {x}, ymmword ptr [rip + {m}]", x = inout(ymm_reg) x,
            m = sym ROT16, options(pure, readonly, nostack, preserves_flags));
    }
    x
}
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn r12(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x))
}
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn r8(mut x: __m256i) -> __m256i {
    // SAFETY: `vpshufb` reads the 32-byte static mask; AVX2 is enabled.
    unsafe {
        core::arch::asm!("vpshufb {x}, {x}, ymmword ptr [rip + {m}]", x = inout(ymm_reg) x,
            m = sym ROT8, options(pure, readonly, nostack, preserves_flags));
    }
    x
}
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn r7(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x))
}

/// XORs 32 bytes of key stream `k` into `out[at..at + 32]`.
#[inline]
#[target_feature(enable = "avx2")]
fn xor_into(out: &mut [u8], at: usize, k: __m256i) {
    let p = out[at..at + 32].as_mut_ptr().cast::<__m256i>();
    // SAFETY: the slice above is 32 bytes long; unaligned load and store.
    unsafe { _mm256_storeu_si256(p, _mm256_xor_si256(_mm256_loadu_si256(p), k)) };
}

/// Two quarter rounds, `(a1, b1, c1, d1)` and `(a2, b2, c2, d2)`, on named
/// ymm registers, with `t` as the temporary of the shifts: the assembly text
/// of one step of [`rounds_asm`]. The rotations by 16 and 8 are one `vpshufb`
/// each, by 12 and 7 two shifts and an OR (AVX2 has no rotation). With
/// `yes`, the four parts of a Poly1305 block (`poly!`) go one before each
/// quarter of the step, as in libgcrypt's stitched code: spread thinly, the
/// scalar work never holds up the vector instructions behind it.
#[cfg(target_arch = "x86_64")]
macro_rules! qr2 {
    ($p:tt; $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal, $t:literal) => {
        concat!(
            poly!($p, 1),
            qr2!(@add_xor_shuf $a1, $b1, $d1, $a2, $b2, $d2, "{r16}"),
            poly!($p, 2),
            qr2!(@add_xor_shift $b1, $c1, $d1, $b2, $c2, $d2, $t, "20", "12"),
            poly!($p, 3),
            qr2!(@add_xor_shuf $a1, $b1, $d1, $a2, $b2, $d2, "{r8}"),
            poly!($p, 4),
            qr2!(@add_xor_shift $b1, $c1, $d1, $b2, $c2, $d2, $t, "25", "7"),
        )
    };
    // a += b; d ^= a; d <<<= 16 or 8 (a byte shuffle by the mask in memory).
    (@add_xor_shuf $a1:literal, $b1:literal, $d1:literal,
     $a2:literal, $b2:literal, $d2:literal, $mask:literal) => {
        concat!(
            "vpaddd ", $a1, ", ", $a1, ", ", $b1, "\n",
            "vpaddd ", $a2, ", ", $a2, ", ", $b2, "\n",
            "vpxor ", $d1, ", ", $d1, ", ", $a1, "\n",
            "vpxor ", $d2, ", ", $d2, ", ", $a2, "\n",
            "vpshufb ", $d1, ", ", $d1, ", ymmword ptr [rip + ", $mask, "]\n",
            "vpshufb ", $d2, ", ", $d2, ", ymmword ptr [rip + ", $mask, "]\n",
        )
    };
    // c += d; b ^= c; b <<<= 12 or 7 (two shifts and an OR).
    (@add_xor_shift $b1:literal, $c1:literal, $d1:literal,
     $b2:literal, $c2:literal, $d2:literal, $t:literal, $right:literal, $left:literal) => {
        concat!(
            "vpaddd ", $c1, ", ", $c1, ", ", $d1, "\n",
            "vpaddd ", $c2, ", ", $c2, ", ", $d2, "\n",
            "vpxor ", $b1, ", ", $b1, ", ", $c1, "\n",
            "vpxor ", $b2, ", ", $b2, ", ", $c2, "\n",
            "vpsrld ", $t, ", ", $b1, ", ", $right, "\n",
            "vpslld ", $b1, ", ", $b1, ", ", $left, "\n",
            "vpor ", $b1, ", ", $b1, ", ", $t, "\n",
            "vpsrld ", $t, ", ", $b2, ", ", $right, "\n",
            "vpslld ", $b2, ", ", $b2, ", ", $left, "\n",
            "vpor ", $b2, ", ", $b2, ", ", $t, "\n",
        )
    };
}

/// Part 1-4 of one Poly1305 block (`yes`) or nothing (`no`): the arithmetic
/// of [`crate::wide::poly1305`]'s `absorb` in radix 2^64, `h = (h + m +
/// 2^128) * r` partially reduced (`h2 <= 4` after it), with the key limbs
/// `r0, r1, s1` read from `{k}` and the block from `{m}`. Each part leaves
/// no carry pending for the next.
#[cfg(target_arch = "x86_64")]
macro_rules! poly {
    ([no], $part:tt) => {
        ""
    };
    // The same quarter of step `$s` of the scalar block's double round
    // ([`batch_and_block`]).
    ([key $s:tt], $part:tt) => {
        scalar_part!($s, $part)
    };
    // h += m + 2^128; x0 = h0 * r0, x1 = h0 * r1.
    ([yes $(, $x:tt)*], 1) => {
        concat!(
            "add {h0}, qword ptr [{m}]\n",
            "adc {h1}, qword ptr [{m} + 8]\n",
            "adc {h2}, 1\n",
            "mov rdx, {h0}\n",
            "mulx {x0h}, {x0l}, qword ptr [{k}]\n",
            "mulx {x1h}, {x1l}, qword ptr [{k} + 8]\n",
        )
    };
    // x0 += h1 * s1, x1 += h1 * r0.
    ([yes $(, $x:tt)*], 2) => {
        concat!(
            "mov rdx, {h1}\n",
            "mulx {h1}, {h0}, qword ptr [{k} + 16]\n",
            "add {x0l}, {h0}\n",
            "adc {x0h}, {h1}\n",
            "mulx {h1}, {h0}, qword ptr [{k}]\n",
            "add {x1l}, {h0}\n",
            "adc {x1h}, {h1}\n",
        )
    };
    // x1 += h2 * s1, d2 = h2 * r0 + the high half of x1; h0 = (d2 >> 2) * 5.
    ([yes $(, $x:tt)*], 3) => {
        concat!(
            "mov {h0}, {h2}\n",
            "imul {h0}, qword ptr [{k} + 16]\n",
            "imul {h2}, qword ptr [{k}]\n",
            "add {x1l}, {h0}\n",
            "adc {h2}, {x1h}\n",
            "mov {h0}, {h2}\n",
            "shr {h0}, 2\n",
            "lea {h0}, [{h0} + 4 * {h0}]\n",
        )
    };
    // h = (d2 >> 2) * 5 + x0 + x1_lo * 2^64 + (d2 & 3) * 2^128.
    ([yes $(, $x:tt)*], 4) => {
        concat!(
            "and {h2}, 3\n",
            "add {h0}, {x0l}\n",
            "adc {x1l}, {x0h}\n",
            "adc {h2}, 0\n",
            "mov {h1}, {x1l}\n",
        )
    };
}

/// One step of [`rounds_asm`]: the assembly `$text` on the 16 ymm registers,
/// `$v[i]` in `ymm{i}`, with the extra operands `$extra`.
#[cfg(target_arch = "x86_64")]
macro_rules! step {
    // A step that hashes no block: the flags survive.
    (@hash no [], $v:ident, $text:expr, ($($opt:ident),*), $($extra:tt)*) => {
        step!($v, $text, ($($opt,)* preserves_flags), $($extra)*)
    };
    // A step that hashes the block at `$m` ([`poly!`]'s operands).
    (@hash yes [$h:ident, $key:ident, $m:expr], $v:ident, $text:expr, ($($opt:ident),*),
     $($extra:tt)*) => {
        step!($v, $text, ($($opt),*), $($extra)*
            h0 = inout(reg) $h[0], h1 = inout(reg) $h[1], h2 = inout(reg) $h[2],
            m = in(reg) $m, k = in(reg) $key.as_ptr(),
            x0l = out(reg) _, x0h = out(reg) _, x1l = out(reg) _, x1h = out(reg) _,
            out("rdx") _,)
    };
    ($v:ident, $text:expr, ($($opt:ident),*), $($extra:tt)*) => {
        // SAFETY: register arithmetic on the operands; aligned 32-byte reads
        // of the masks and of and writes to the swap slot (a live local);
        // 16-byte reads of a Poly1305 block and 24 of the key, which the
        // caller checked are in bounds. AVX2 is enabled in the caller, and
        // BMI2 is there when Poly1305 is ([`Hash::new`]).
        unsafe {
            core::arch::asm!(
                $text,
                r16 = sym ROT16,
                r8 = sym ROT8,
                $($extra)*
                inout("ymm0") $v[0], inout("ymm1") $v[1], inout("ymm2") $v[2],
                inout("ymm3") $v[3], inout("ymm4") $v[4], inout("ymm5") $v[5],
                inout("ymm6") $v[6], inout("ymm7") $v[7], inout("ymm8") $v[8],
                inout("ymm9") $v[9], inout("ymm10") $v[10], inout("ymm11") $v[11],
                inout("ymm12") $v[12], inout("ymm13") $v[13], inout("ymm14") $v[14],
                inout("ymm15") $v[15],
                options($($opt),*),
            )
        }
    };
}

/// `R / 2` double rounds on `v` (`v[i]` in `ymm{i}`) and the swap slot
/// `slot`; with `yes`, a Poly1305 block in each step of the first double
/// rounds and in each of the last three steps of the others, as many as
/// `$blocks` holds (3 to 4 a double round): `$h` the hash limbs, `$blocks`
/// the blocks, `$key` the key limbs. The steps with the swap may write
/// memory; without Poly1305 the flags survive.
#[cfg(target_arch = "x86_64")]
macro_rules! double_rounds {
    ($r:expr, $v:ident, $slot:ident, no) => {
        for _ in 0..$r / 2 {
            double_rounds!(@one $v, $slot, [no], [no], [no], [no]);
        }
    };
    ($r:expr, $v:ident, $slot:ident, yes, $h:ident, $blocks:ident, $key:ident) => {
        // The double rounds that hash four blocks (one in each step) come
        // first; the others hash three.
        let four = $blocks.len() / 16 - 3 * ($r / 2);
        let mut m = $blocks.as_ptr();
        for i in 0..$r / 2 {
            if i < four {
                double_rounds!(@one $v, $slot, [yes, $h, $key, m],
                    [yes, $h, $key, (m.wrapping_add(16))], [yes, $h, $key, (m.wrapping_add(32))],
                    [yes, $h, $key, (m.wrapping_add(48))]);
                m = m.wrapping_add(64);
            } else {
                double_rounds!(@one $v, $slot, [no], [yes, $h, $key, m],
                    [yes, $h, $key, (m.wrapping_add(16))], [yes, $h, $key, (m.wrapping_add(32))]);
                m = m.wrapping_add(48);
            }
        }
    };
    // One double round, each step `[no]`, `[yes, h, key, block]` or `[key,
    // words, indices]`. The steps with the swap write memory.
    (@one $v:ident, $slot:ident, [$p1:ident $(, $x1:tt)*], [$p2:ident $(, $x2:tt)*],
     [$p3:ident $(, $x3:tt)*], [$p4:ident $(, $x4:tt)*]) => {
        step!(@hash $p1 [$($x1),*], $v, concat!(
            qr2!([$p1 $(, $x1)*]; "ymm0", "ymm4", "ymm8", "ymm12", "ymm1", "ymm5", "ymm9", "ymm13", "ymm15"),
            "vmovdqa ymm15, ymmword ptr [{s}]\n",
            "vmovdqa ymmword ptr [{s}], ymm8\n",
        ), (nostack), s = in(reg) &raw mut $slot,);
        step!(@hash $p2 [$($x2),*], $v,
            qr2!([$p2 $(, $x2)*]; "ymm2", "ymm6", "ymm10", "ymm14", "ymm3", "ymm7", "ymm11", "ymm15", "ymm8"),
            (pure, readonly, nostack),);
        step!(@hash $p3 [$($x3),*], $v, concat!(
            qr2!([$p3 $(, $x3)*]; "ymm0", "ymm5", "ymm10", "ymm15", "ymm1", "ymm6", "ymm11", "ymm12", "ymm8"),
            "vmovdqa ymm8, ymmword ptr [{s}]\n",
            "vmovdqa ymmword ptr [{s}], ymm15\n",
        ), (nostack), s = in(reg) &raw mut $slot,);
        step!(@hash $p4 [$($x4),*], $v,
            qr2!([$p4 $(, $x4)*]; "ymm2", "ymm7", "ymm8", "ymm13", "ymm3", "ymm4", "ymm9", "ymm14", "ymm15"),
            (pure, readonly, nostack),);
    };
}

/// What [`keystream`]'s rounds do besides: nothing (`()`) or hash Poly1305
/// blocks ([`Hash`]); one more block on the integer units has its own
/// function, [`batch_and_block`]. A type rather than an enum argument so
/// that each use gets its own copy of the rounds, without a branch or the
/// unused paths.
pub(super) trait Stitch: Sized {
    /// The work, if any.
    #[cfg(target_arch = "x86_64")]
    fn into_work<'a>(self) -> Work<'a>
    where
        Self: 'a;
}

/// [`Stitch`]'s work.
#[cfg(target_arch = "x86_64")]
pub(super) enum Work<'a> {
    Nothing,
    Hash(Hash<'a>),
}

impl Stitch for () {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn into_work<'a>(self) -> Work<'a> {
        Work::Nothing
    }
}

#[cfg(target_arch = "x86_64")]
impl Stitch for Hash<'_> {
    #[inline(always)]
    fn into_work<'a>(self) -> Work<'a>
    where
        Self: 'a,
    {
        Work::Hash(self)
    }
}

/// Poly1305 work for [`keystream`]: the stitched ChaCha20-Poly1305
/// ([`super::x86_avx2_poly1305`]) hashes one block in each step (column or
/// diagonal pair) of the first double rounds and in each of the last three
/// steps of the others ([`double_rounds!`]).
#[cfg(target_arch = "x86_64")]
pub(super) struct Hash<'a> {
    /// The running hash `h0, h1, h2` (`h2 <= 4`).
    h: &'a mut [u64; 3],
    /// The clamped key `r0, r1, s1 = r1 + r1 / 4`.
    key: &'a [u64; 3],
    /// 3 to 4 Poly1305 blocks per double round (`3 * R / 2` to `2 * R`), in order.
    blocks: &'a [u8],
}

#[cfg(target_arch = "x86_64")]
impl<'a> Hash<'a> {
    /// The hash `h` under `key` of `blocks`.
    ///
    /// # Safety
    /// The CPU must support BMI2: the rounds hash with `mulx`.
    pub(super) unsafe fn new(h: &'a mut [u64; 3], key: &'a [u64; 3], blocks: &'a [u8]) -> Self {
        Hash { h, key, blocks }
    }
}

/// The rounds on the 16 word vectors `x`, hashing `hash`'s blocks if any.
///
/// The 16 state vectors and a temporary do not fit 16 registers, so one word
/// lives in a stack slot (libgcrypt's schedule): word 15 during the column
/// pairs (0, 4, 8, 12)/(1, 5, 9, 13) and (2, 7, 8, 13)/(3, 4, 9, 14), word 8
/// during the two others, one store and one load at each swap. Written as
/// assembly on fixed registers because LLVM, given intrinsics, spills more
/// and in worse places (about 5% slower on Zen 3); `v[i]` is what `ymm{i}`
/// holds, ymm15 or ymm8 being the temporary.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn rounds_asm<const R: usize>(x: &mut [__m256i; 16], stitch: impl Stitch) {
    let mut v = *x;
    let mut slot = x[15];
    match stitch.into_work() {
        Work::Nothing => double_rounds!(R, v, slot, no),
        Work::Hash(Hash { h, key, blocks }) => {
            assert!(
                blocks.len().is_multiple_of(16)
                    && (48 * (R / 2)..=64 * (R / 2)).contains(&blocks.len()),
                "3 or 4 Poly1305 blocks per double round"
            );
            let mut hh = *h;
            double_rounds!(R, v, slot, yes, hh, blocks, key);
            *h = hh;
        }
    }
    v[15] = slot;
    *x = v;
}

/// The rounds on 32-bit x86, which has 8 vector registers: LLVM spills as it
/// must.
#[cfg(target_arch = "x86")]
#[inline]
#[target_feature(enable = "avx2")]
fn rounds_x86<const R: usize>(x: &mut [__m256i; 16]) {
    rounds_c_in_memory!(R, x, add, xor, r16, r12, r8, r7);
}

/// The 16 state words, each broadcast to a vector: made once per call, so
/// that each batch loads them (as [`keystream`]'s inputs and feed-forward
/// operands) instead of broadcasting them again, 30 broadcasts a batch
/// (measured on Zen 3: stitched sealing 0.6% faster).
pub(super) type Words = [__m256i; 16];

/// The state `st` as [`Words`].
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn broadcast(st: &[u32; 16]) -> Words {
    let mut w = [_mm256_setzero_si256(); 16];
    for (v, &x) in w.iter_mut().zip(st) {
        *v = _mm256_set1_epi32(x as i32);
    }
    w
}

/// The key stream of `N` blocks from counter `ctr` of the state `st`
/// ([`broadcast`]): the 16 state words after the rounds and the
/// feed-forward, one word of each block per vector. With `hash`, the rounds
/// also absorb its Poly1305 blocks ([`Hash`]).
///
/// # Safety
/// The CPU must support AVX2. Always inlined (it has no target features of
/// its own, so it is callable only from code with AVX2 enabled), so that
/// the key stream goes from registers to [`xor_out`].
#[inline(always)]
pub(super) unsafe fn keystream<const R: usize>(
    st: &Words,
    ctr: u32,
    stitch: impl Stitch,
) -> [__m256i; 16] {
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        let mut x = *st;
        x[12] = counters(ctr);
        #[cfg(target_arch = "x86_64")]
        rounds_asm::<R>(&mut x, stitch);
        #[cfg(target_arch = "x86")]
        {
            let _ = stitch;
            rounds_x86::<R>(&mut x);
        }
        feed_forward(&mut x, st, ctr);
        x
    }
}

/// Adds the input state (`st`, the counters from `ctr`) to the words after
/// the rounds. `st` is read again from memory through an opaque pointer and
/// the counters made again: kept from before the rounds, which leave them
/// no register, LLVM spilled all 16 to the stack and reloaded them, 32
/// memory operations a batch. Without them, on Zen 3: the stitched AEAD
/// 1.006-1.013x, ChaCha20 1.004-1.006x (best and median of ten alternating
/// runs of the product binary).
///
/// # Safety
/// The CPU must support AVX2 (always inlined, like [`keystream`]).
#[inline(always)]
unsafe fn feed_forward(x: &mut [__m256i; 16], st: &Words, ctr: u32) {
    let st = core::hint::black_box(st);
    // SAFETY: the caller guarantees AVX2.
    unsafe {
        for (i, v) in x.iter_mut().enumerate() {
            let input = if i == 12 { counters(ctr) } else { st[i] };
            *v = add(*v, input);
        }
    }
}

/// XORs the key stream `x` of [`keystream`] into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn xor_out(x: &[__m256i; 16], out: &mut [u8]) {
    // Words 0-7 then 8-15: after the in-lane transposes, `lo[k]` holds words
    // 8h..8h+3 of blocks k (low half) and k + 4 (high half), `hi[k]` the next four.
    for h in 0..2 {
        let lo = transpose4(x[8 * h], x[8 * h + 1], x[8 * h + 2], x[8 * h + 3]);
        let hi = transpose4(x[8 * h + 4], x[8 * h + 5], x[8 * h + 6], x[8 * h + 7]);
        for k in 0..4 {
            xor_into(
                out,
                64 * k + 32 * h,
                _mm256_permute2x128_si256::<0x20>(lo[k], hi[k]),
            );
            xor_into(
                out,
                64 * (k + 4) + 32 * h,
                _mm256_permute2x128_si256::<0x31>(lo[k], hi[k]),
            );
        }
    }
}

/// One batch of `N` blocks from counter `ctr` XORed into `out` (`N * 64` bytes).
#[inline]
#[target_feature(enable = "avx2")]
fn batch<const R: usize>(st: &Words, ctr: u32, out: &mut [u8]) {
    // SAFETY: AVX2 is enabled here.
    xor_out(&unsafe { keystream::<R>(st, ctr, ()) }, out);
}

/// The counters of blocks `ctr` to `ctr + 7`, one per lane.
#[inline]
#[target_feature(enable = "avx2")]
fn counters(ctr: u32) -> __m256i {
    _mm256_add_epi32(
        _mm256_set1_epi32(ctr as i32),
        _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0),
    )
}

/// XORs the key stream of `st` (counter in word 12) into `data`, one batch
/// of `N` blocks at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    let words = zeroize::Zeroizing::new(broadcast(st));
    // One batch at a time, not two interleaved: see the SSSE3 backend's
    // module docs (here the pair's median was 0.69-1.01x of one batch's on a
    // shared Zen 3).
    batches!(N, st[12], data, |c, out| batch::<R>(&words, c, out));
}

/// The key stream of `N` blocks from counter `ctr` of `st` ([`broadcast`])
/// XORed into `out`, and that of one more block, the state `block` (with its
/// own counter), XORed into `block_out`. The extra block's rounds run in
/// scalar registers inside the vector steps, on the integer units that the
/// vector rounds leave idle on CPUs whose vector instructions have ports of
/// their own (AMD Zen): on Zen 4 it cost about 3% of the batch's time in a
/// timing loop, where alone it waits on its own dependency chains (about
/// 100 ns).
///
/// The rounds are expanded here rather than through [`keystream`], which
/// LLVM left out of line in this use: the 16 vectors went through memory,
/// and the ninth block gained nothing. Out of line itself, so that the loops
/// around it keep their registers.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx2")]
pub(super) fn batch_and_block<const R: usize>(
    st: &Words,
    ctr: u32,
    out: &mut [u8; N * super::BLOCK],
    block: &[u32; 16],
    block_out: &mut [u8; super::BLOCK],
) {
    let mut v = *st;
    v[12] = counters(ctr);
    // The rounds of [`double_rounds!`] (its swap slot at `{p} + 32`), a
    // quarter-round pair of the scalar block in each step.
    let (mut sc, mut r) = scalar_rounds!(
        step,
        v,
        R / 2,
        block,
        v[15],
        concat!(
            qr2!([key 1]; "ymm0", "ymm4", "ymm8", "ymm12", "ymm1", "ymm5", "ymm9", "ymm13", "ymm15"),
            "vmovdqa ymm15, ymmword ptr [{p} + 32]\n",
            "vmovdqa ymmword ptr [{p} + 32], ymm8\n",
            scalar_swap!(1),
            qr2!([key 2]; "ymm2", "ymm6", "ymm10", "ymm14", "ymm3", "ymm7", "ymm11", "ymm15", "ymm8"),
            scalar_swap!(2),
            qr2!([key 3]; "ymm0", "ymm5", "ymm10", "ymm15", "ymm1", "ymm6", "ymm11", "ymm12", "ymm8"),
            "vmovdqa ymm8, ymmword ptr [{p} + 32]\n",
            "vmovdqa ymmword ptr [{p} + 32], ymm15\n",
            scalar_swap!(3),
            qr2!([key 4]; "ymm2", "ymm7", "ymm8", "ymm13", "ymm3", "ymm4", "ymm9", "ymm14", "ymm15"),
            scalar_swap!(4),
        )
    );
    v[15] = sc.slot;
    // SAFETY: AVX2 is enabled here.
    unsafe { feed_forward(&mut v, st, ctr) };
    xor_out(&v, out);
    // The block's words into vectors straight from the registers: through
    // memory as 32-bit stores, the 32-byte loads waited on them (no store
    // forwarding), a few percent of the batch.
    let [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11] = r;
    let w = sc.words.map(|x| x as i32);
    let k = [
        _mm256_setr_epi32(r0 as _, r1 as _, w[0], w[1], r2 as _, r3 as _, w[2], w[3]),
        _mm256_setr_epi32(
            r4 as _, r5 as _, r6 as _, r7 as _, r8 as _, r9 as _, r10 as _, r11 as _,
        ),
    ];
    for (h, k) in k.into_iter().enumerate() {
        // SAFETY: a 32-byte unaligned load of half the input block.
        let i = unsafe { _mm256_loadu_si256(block[8 * h..].as_ptr().cast()) };
        xor_into(block_out, 32 * h, _mm256_add_epi32(k, i));
    }
    // Plain locals, in registers or spilled: wipe the copies.
    zeroize::Zeroize::zeroize(&mut r);
    zeroize::Zeroize::zeroize(&mut sc.words);
}

/// [`xor_keystream`] with a ninth block in each batch, on the integer units
/// ([`batch_and_block`]): for CPUs whose vector kernels leave integer ALUs
/// idle ([`crate::cpu::scalar_beside_vector`]).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_keystream_hybrid<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    let words = zeroize::Zeroizing::new(broadcast(st));
    super::x86_scalar::xor_keystream(
        st,
        data,
        N,
        |ctr, out, extra, extra_out| {
            batch_and_block::<R>(
                &words,
                ctr,
                out.try_into().expect("a batch"),
                extra,
                extra_out,
            );
        },
        // SAFETY: AVX2 is enabled here.
        |st, rest| unsafe { xor_keystream::<R>(st, rest) },
    );
}
