//! Our own cipher implementations, where no library fits or ours is measurably faster.
//!
//! Each one is proven against its library counterpart in its tests.

pub mod tea;
pub mod twofish;

/// The Serpent implementation the catalogue uses.
pub type Serpent = serpent::Serpent;
