//! Our own cipher implementations, where no library fits or ours is measurably faster.
//!
//! Each one is proven against its library counterpart in its tests.

pub mod blowfish;
pub mod camellia;
#[cfg(target_arch = "x86_64")]
mod camellia_aesni;
pub mod des;
// Without SIMD registers (32-bit ARM) DES keeps the table rounds.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code, unused_variables)
)]
mod des_bitslice;
pub mod rc2;
pub mod rc4;
pub mod serpent;
pub mod tea;
pub mod twofish;

#[cfg(test)]
pub(crate) mod test_support;

/// The Serpent implementation the catalogue uses.
pub type Serpent = serpent::Serpent;

/// Which Serpent implementation runs on this CPU.
pub fn serpent_backend() -> &'static str {
    Serpent::available_backends()[0]
}

/// The Camellia implementation the catalogue uses (every key size).
pub type Camellia = camellia::Camellia;

/// Which Camellia implementation runs on this CPU for multi-block calls.
pub fn camellia_backend() -> &'static str {
    crate::dispatch::camellia()
}

/// The Blowfish implementation the catalogue uses.
pub type Blowfish = blowfish::Blowfish;
/// The DES implementation the catalogue uses.
pub type Des = des::Des;
/// The Triple-DES (EDE3) implementation the catalogue uses.
pub type TdesEde3 = des::TdesEde3;
/// The RC2 implementation the catalogue uses.
pub type Rc2 = rc2::Rc2;
/// The RC4 implementation the catalogue uses.
pub type Rc4 = rc4::Rc4;

/// `v`, hidden from the optimizer (no instruction): keeps a tree of XORs
/// from being re-linearised, or a rotation from being folded into shifts of
/// the value before it. 32-bit targets, which hold a `u64` in two
/// registers, pass it through.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn opaque(mut v: u64) -> u64 {
    // SAFETY: an empty asm block that leaves its register as it is.
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) v, options(pure, nomem, nostack, preserves_flags));
    }
    v
}

/// `v` (see the 64-bit version).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
pub(crate) fn opaque(v: u64) -> u64 {
    v
}
