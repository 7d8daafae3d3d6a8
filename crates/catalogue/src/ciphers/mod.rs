//! Our own cipher implementations, where no library fits or ours is measurably faster.
//!
//! Each one is proven against its library counterpart in its tests.

pub mod tea;
pub mod twofish;
