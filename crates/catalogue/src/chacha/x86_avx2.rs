//! ChaCha on AVX2: 8 blocks, one state word of each in a 256-bit register;
//! the 16- and 8-bit rotations are byte shuffles.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Blocks per batch.
pub(super) const N: usize = 8;

#[inline]
#[target_feature(enable = "avx2")]
fn add(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(a, b)
}
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
#[inline]
#[target_feature(enable = "avx2")]
fn r12(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x))
}
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

/// 4x4 transpose of 32-bit words within each 128-bit half.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose4(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(a, b);
    let t1 = _mm256_unpackhi_epi32(a, b);
    let t2 = _mm256_unpacklo_epi32(c, d);
    let t3 = _mm256_unpackhi_epi32(c, d);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// Two quarter rounds, `(a1, b1, c1, d1)` and `(a2, b2, c2, d2)`, on named
/// ymm registers, with `t` as the temporary (the shuffle mask, then the
/// shifted-out bits): the assembly text of one step of [`rounds_asm`].
#[cfg(target_arch = "x86_64")]
macro_rules! qr2 {
    ($a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal, $t:literal) => {
        concat!(
            qr2!(@half $a1, $b1, $c1, $d1, $a2, $b2, $c2, $d2, $t, "{r16}", "20", "12"),
            qr2!(@half $a1, $b1, $c1, $d1, $a2, $b2, $c2, $d2, $t, "{r8}", "25", "7"),
        )
    };
    (@half $a1:literal, $b1:literal, $c1:literal, $d1:literal,
     $a2:literal, $b2:literal, $c2:literal, $d2:literal, $t:literal,
     $mask:literal, $right:literal, $left:literal) => {
        concat!(
            "vmovdqa ", $t, ", ymmword ptr [rip + ", $mask, "]\n",
            "vpaddd ", $a1, ", ", $a1, ", ", $b1, "\n",
            "vpaddd ", $a2, ", ", $a2, ", ", $b2, "\n",
            "vpxor ", $d1, ", ", $d1, ", ", $a1, "\n",
            "vpxor ", $d2, ", ", $d2, ", ", $a2, "\n",
            "vpshufb ", $d1, ", ", $d1, ", ", $t, "\n",
            "vpshufb ", $d2, ", ", $d2, ", ", $t, "\n",
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

/// One step of [`rounds_asm`]: the assembly `$text` on the 16 ymm registers,
/// `$v[i]` in `ymm{i}`; with `$slot`, it also swaps a word with the spilled
/// word's 32-byte slot.
#[cfg(target_arch = "x86_64")]
macro_rules! step {
    ($v:ident, $text:expr) => {
        step!(@asm $v, $text, (pure, readonly, nostack, preserves_flags), )
    };
    ($v:ident, $slot:ident, $text:expr) => {
        step!(@asm $v, $text, (nostack, preserves_flags), s = in(reg) &raw mut $slot,)
    };
    (@asm $v:ident, $text:expr, ($($opt:ident),*), $($slot:tt)*) => {
        // SAFETY: register arithmetic on the operands, aligned 32-byte reads
        // of the masks, and of and writes to the slot (a live local); AVX2 is
        // enabled in the caller.
        unsafe {
            core::arch::asm!(
                $text,
                r16 = sym ROT16,
                r8 = sym ROT8,
                $($slot)*
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

/// The rounds on the 16 word vectors `x`, with `between` after each quarter.
///
/// The 16 state vectors and a temporary do not fit 16 registers, so one word
/// lives in a stack slot (libgcrypt's schedule): word 15 during the column
/// pairs (0, 4, 8, 12)/(1, 5, 9, 13) and (2, 7, 8, 13)/(3, 4, 9, 14), word 8
/// during the two others, one store and one load at each swap. Written as
/// assembly on fixed registers because LLVM, given intrinsics, spills more
/// and in worse places (about 4% slower on Zen 3); `v[i]` is what `ymm{i}`
/// holds, ymm15 or ymm8 being the temporary.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn rounds_asm<const R: usize>(x: &mut [__m256i; 16], mut between: impl super::Between) {
    let mut v = *x;
    let mut slot = x[15];
    for i in 0..R / 2 {
        step!(v, slot, concat!(
            qr2!("ymm0", "ymm4", "ymm8", "ymm12", "ymm1", "ymm5", "ymm9", "ymm13", "ymm15"),
            "vmovdqa ymm15, ymmword ptr [{s}]\n",
            "vmovdqa ymmword ptr [{s}], ymm8\n",
        ));
        super::Between::at(&mut between, i, 0);
        step!(v,
            qr2!("ymm2", "ymm6", "ymm10", "ymm14", "ymm3", "ymm7", "ymm11", "ymm15", "ymm8"));
        super::Between::at(&mut between, i, 1);
        step!(v, slot, concat!(
            qr2!("ymm0", "ymm5", "ymm10", "ymm15", "ymm1", "ymm6", "ymm11", "ymm12", "ymm8"),
            "vmovdqa ymm8, ymmword ptr [{s}]\n",
            "vmovdqa ymmword ptr [{s}], ymm15\n",
        ));
        super::Between::at(&mut between, i, 2);
        step!(v,
            qr2!("ymm2", "ymm7", "ymm8", "ymm13", "ymm3", "ymm4", "ymm9", "ymm14", "ymm15"));
        super::Between::at(&mut between, i, 3);
    }
    v[15] = slot;
    *x = v;
}

/// The key stream of `N` blocks from counter `ctr`: the 16 state words after
/// the rounds and the feed-forward, one word of each block per vector.
/// `between.at(i, q)` runs after quarter `q` (0-3) of double round `i`, where
/// the stitched ChaCha20-Poly1305 ([`super::x86_avx2_poly1305`]) hashes.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn keystream<const R: usize>(
    st: &[u32; 16],
    ctr: u32,
    between: impl super::Between,
) -> [__m256i; 16] {
    let mut x = [_mm256_setzero_si256(); 16];
    for (v, &w) in x.iter_mut().zip(st) {
        *v = _mm256_set1_epi32(w as i32);
    }
    x[12] = _mm256_add_epi32(
        _mm256_set1_epi32(ctr as i32),
        _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0),
    );
    let ctrs = x[12];
    #[cfg(target_arch = "x86_64")]
    rounds_asm::<R>(&mut x, between);
    // 32-bit x86 has 8 vector registers: LLVM spills as it must.
    #[cfg(target_arch = "x86")]
    rounds_c_in_memory!(R, x, add, xor, r16, r12, r8, r7; between);
    for (i, v) in x.iter_mut().enumerate() {
        let input = if i == 12 {
            ctrs
        } else {
            _mm256_set1_epi32(st[i] as i32)
        };
        *v = add(*v, input);
    }
    x
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
fn batch<const R: usize>(st: &[u32; 16], ctr: u32, out: &mut [u8]) {
    xor_out(&keystream::<R>(st, ctr, ()), out);
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    batches!(N, st[12], data, |ctr, out| batch::<R>(st, ctr, out));
}
