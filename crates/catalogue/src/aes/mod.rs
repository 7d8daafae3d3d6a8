//! AES implementations of our own, chosen at run time by [`crate::dispatch`].

pub(crate) mod bitsliced;
pub mod soft;

#[cfg(test)]
pub(crate) mod tests_common;
