//! SIMD helpers for the modes, one module per instruction set, chosen at run
//! time. The portable code in `modes.rs` is the reference they are tested against.

#[cfg(target_arch = "x86_64")]
pub mod x86_avx2;
#[cfg(target_arch = "x86_64")]
pub mod x86_avx512;

/// Which tweak/XOR backend XTS uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    /// Portable code.
    Portable,
    /// AVX2.
    Avx2,
    /// AVX-512 with VPCLMULQDQ.
    Avx512,
}

impl Simd {
    /// `self` if this CPU can run it, else the best it can.
    pub fn at_most_detected(self) -> Simd {
        match (self, Simd::detect()) {
            (Simd::Portable, _) => Simd::Portable,
            (Simd::Avx2, Simd::Avx512 | Simd::Avx2) => Simd::Avx2,
            (_, best) => best,
        }
    }

    /// The best the CPU features in use allow (see `crate::dispatch`).
    pub fn detect() -> Simd {
        crate::dispatch::mode_simd()
    }
}

/// `dst ^= src` with the widest registers `simd` allows.
#[inline]
pub(crate) fn xor_in_place(simd: Simd, dst: &mut [u8], src: &[u8]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx512` is only chosen when `x86_avx512::available()`.
        Simd::Avx512 => unsafe { x86_avx512::xor_in_place(dst, src) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Simd::Avx2` is only chosen when the CPU has AVX2.
        Simd::Avx2 => unsafe { x86_avx2::xor_in_place(dst, src) },
        _ => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d ^= s;
            }
        }
    }
}

/// Writes consecutive 16-byte big-endian counters starting at `*ctr` into `out`
/// and advances `*ctr` past them (wrapping modulo 2^128, as OpenSSL's CTR does).
pub(crate) fn fill_counters128(simd: Simd, ctr: &mut u128, out: &mut [u8]) {
    let blocks = (out.len() / 16) as u64;
    // The SIMD code adds in 64-bit lanes: use it only when the low half cannot wrap.
    let no_wrap = (*ctr as u64).checked_add(blocks).is_some();
    #[cfg(target_arch = "x86_64")]
    if no_wrap {
        match simd {
            Simd::Avx512 if out.len().is_multiple_of(64) => {
                // SAFETY: `Simd::Avx512` is only chosen when `x86_avx512::available()`.
                unsafe { x86_avx512::fill_counters_be(*ctr, out) };
                *ctr = ctr.wrapping_add(u128::from(blocks));
                return;
            }
            Simd::Avx2 | Simd::Avx512 if out.len().is_multiple_of(32) => {
                // SAFETY: both variants are only chosen when the CPU has AVX2.
                unsafe { x86_avx2::fill_counters_be(*ctr, out) };
                *ctr = ctr.wrapping_add(u128::from(blocks));
                return;
            }
            _ => {}
        }
    }
    let _ = (simd, no_wrap);
    for blk in out.chunks_exact_mut(16) {
        blk.copy_from_slice(&ctr.to_be_bytes());
        *ctr = ctr.wrapping_add(1);
    }
}
