//! AES implementations of our own, chosen at run time by [`crate::dispatch`].

#[cfg(target_arch = "aarch64")]
pub mod aarch64_neon;
pub(crate) mod bitsliced;
#[cfg(any(target_arch = "aarch64", target_arch = "x86_64"))]
pub(crate) mod simd128;
pub mod soft;
#[cfg(target_arch = "x86_64")]
pub mod x86_ssse3;

#[cfg(test)]
pub(crate) mod tests_common;
