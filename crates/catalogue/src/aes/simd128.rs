//! Constant-time AES on 128-bit vector registers: eight blocks bitsliced in
//! eight registers (Käsper and Schwabe, "Faster and Timing-Attack Resistant
//! AES-GCM", CHES 2009; the layout of the Linux kernel's `aes-neonbs`).
//!
//! Register `i` holds bit `i` of all 128 state bytes: its byte `j` is one
//! state position and the eight bits of that byte are the eight blocks. The
//! positions are stored row by row (`j = 4·row + column`), so that a row
//! rotation (MixColumns) is a rotation of the register by four bytes, and
//! ShiftRows a fixed byte permutation (`tbl` on NEON, `pshufb` on x86).
//! Permutation indices are constants, never data: no secret-dependent
//! lookups or branches.
//!
//! The architecture modules provide the [`Vector`] operations and the cipher
//! types; the rounds are here, once.

use cipher::InOutBuf;

use super::bitsliced::{
    ByteKeys, MAX_ROUND_KEYS, Rows, State, add_round_key, inv_mix_columns, inv_sub_bytes_no_nots,
    mix_columns, sub_bytes_no_nots,
};
use zeroize::Zeroize;

/// Blocks per call.
pub const PAR_BLOCKS: usize = 8;

/// A block of 16 bytes.
pub(crate) type Block = cipher::Block<super::soft::Aes128>;

/// The operations the rounds need from a 128-bit register.
pub(crate) trait Vector: Rows {
    /// Loads 16 bytes.
    fn load(bytes: &[u8; 16]) -> Self;
    /// Stores 16 bytes.
    fn store(self, bytes: &mut [u8; 16]);
    /// Every byte equal to `b`.
    fn splat(b: u8) -> Self;
    /// Byte `j` of the result is byte `idx[j]` of `self` (`idx` a constant).
    fn permute(self, idx: &'static [u8; 16]) -> Self;
    /// Shifts each 64-bit lane right by `N` bits.
    fn shr64<const N: i32>(self) -> Self;
    /// Shifts each 64-bit lane left by `N` bits.
    fn shl64<const N: i32>(self) -> Self;
}

/// FIPS-197 byte order (column by column) to row by row; its own inverse.
static TRANSPOSE: [u8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
/// ShiftRows on row-major bytes: row `r` rotates left by `r` positions.
static SHIFT_ROWS: [u8; 16] = [0, 1, 2, 3, 5, 6, 7, 4, 10, 11, 8, 9, 15, 12, 13, 14];
/// InvShiftRows on row-major bytes.
static INV_SHIFT_ROWS: [u8; 16] = [0, 1, 2, 3, 7, 4, 5, 6, 10, 11, 8, 9, 13, 14, 15, 12];

/// Exchanges the bits of `b` under `m` with those of `a` under `m << S`.
#[inline(always)]
fn swap_move<V: Vector, const S: i32>(x: &mut State<V>, i: usize, j: usize, m: V) {
    let (a, b) = (x[i], x[j]);
    let t = (a.shr64::<S>() ^ b) & m;
    x[j] = b ^ t;
    x[i] = a ^ t.shl64::<S>();
}

/// Transposes the eight registers as 16 8x8 bit matrices, one per byte
/// position: its own inverse.
#[inline(always)]
fn transpose_bits<V: Vector>(x: &mut State<V>) {
    let m = V::splat(0x55);
    for (i, j) in [(0, 1), (2, 3), (4, 5), (6, 7)] {
        swap_move::<V, 1>(x, i, j, m);
    }
    let m = V::splat(0x33);
    for (i, j) in [(0, 2), (1, 3), (4, 6), (5, 7)] {
        swap_move::<V, 2>(x, i, j, m);
    }
    let m = V::splat(0x0f);
    for (i, j) in [(0, 4), (1, 5), (2, 6), (3, 7)] {
        swap_move::<V, 4>(x, i, j, m);
    }
}

/// Bitslices up to eight blocks (missing ones are zero).
#[inline(always)]
fn load<V: Vector>(blocks: &[Block]) -> State<V> {
    let mut x = [V::splat(0); 8];
    for (v, b) in x.iter_mut().zip(blocks) {
        *v = V::load(b.as_ref()).permute(&TRANSPOSE);
    }
    transpose_bits(&mut x);
    x
}

/// Inverse of [`load`] for the first `out.len()` blocks.
#[inline(always)]
fn store<V: Vector>(mut x: State<V>, out: &mut [Block]) {
    transpose_bits(&mut x);
    for (v, b) in x.iter().zip(out) {
        v.permute(&TRANSPOSE).store(b.as_mut());
    }
}

/// Round keys as bit planes in memory (one byte of 0x00 or 0xff per state
/// position and plane), with SubBytes' constant 0x63 folded into rounds 1..
/// (see `sub_bytes_no_nots` and `inv_sub_bytes_no_nots`).
#[derive(Clone)]
pub(crate) struct Schedule {
    rk: [[[u8; 16]; 8]; MAX_ROUND_KEYS],
    rounds: usize,
}

impl Schedule {
    pub(crate) fn new(bytes: &ByteKeys, rounds: usize) -> Self {
        let mut s = Schedule {
            rk: [[[0; 16]; 8]; MAX_ROUND_KEYS],
            rounds,
        };
        for r in 0..=rounds {
            let fold = if r > 0 { 0x63 } else { 0 };
            for (i, plane) in s.rk[r].iter_mut().enumerate() {
                for (j, out) in plane.iter_mut().enumerate() {
                    let (row, col) = (j / 4, j % 4);
                    let bit = ((bytes[r][4 * col + row] ^ fold) >> i) & 1;
                    *out = 0u8.wrapping_sub(bit);
                }
            }
        }
        s
    }

    #[inline(always)]
    fn round_key<V: Vector>(&self, r: usize) -> State<V> {
        core::array::from_fn(|i| V::load(&self.rk[r][i]))
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

/// Runs `f` on the blocks of `buf` (at most [`PAR_BLOCKS`]) as a state.
#[inline(always)]
fn with_state<V: Vector>(mut buf: InOutBuf<'_, '_, Block>, f: impl FnOnce(&mut State<V>)) {
    debug_assert!(buf.len() <= PAR_BLOCKS);
    let mut x = load::<V>(buf.get_in());
    f(&mut x);
    store(x, buf.get_out());
}

/// Encrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.1).
#[inline(always)]
pub(crate) fn encrypt<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    with_state::<V>(buf, |x| {
        add_round_key(x, &s.round_key(0));
        for r in 1..s.rounds {
            sub_bytes_no_nots(x);
            for v in x.iter_mut() {
                *v = v.permute(&SHIFT_ROWS);
            }
            mix_columns(x);
            add_round_key(x, &s.round_key(r));
        }
        sub_bytes_no_nots(x);
        for v in x.iter_mut() {
            *v = v.permute(&SHIFT_ROWS);
        }
        add_round_key(x, &s.round_key(s.rounds));
    })
}

/// Decrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.3).
#[inline(always)]
pub(crate) fn decrypt<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    with_state::<V>(buf, |x| {
        add_round_key(x, &s.round_key(s.rounds));
        for r in (1..s.rounds).rev() {
            for v in x.iter_mut() {
                *v = v.permute(&INV_SHIFT_ROWS);
            }
            inv_sub_bytes_no_nots(x);
            add_round_key(x, &s.round_key(r));
            inv_mix_columns(x);
        }
        for v in x.iter_mut() {
            *v = v.permute(&INV_SHIFT_ROWS);
        }
        inv_sub_bytes_no_nots(x);
        add_round_key(x, &s.round_key(0));
    })
}
