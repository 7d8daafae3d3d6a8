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
    ByteKeys, MAX_ROUND_KEYS, Rows, State, add_round_key, inv_mix_columns, inv_mix_columns_by,
    inv_sub_bytes_no_nots, mix_columns, mix_columns_by, sub_bytes_no_nots,
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
    /// Loads 16 bytes known to be 16-byte aligned (round keys: x86 then
    /// XORs them straight from memory).
    #[inline(always)]
    fn load_aligned(bytes: &Aligned) -> Self {
        Self::load(&bytes.0)
    }
    /// SubBytes without its NOTs ([`sub_bytes_no_nots`]); a backend may
    /// run the same circuit its own way.
    #[inline(always)]
    fn sub_bytes(x: &mut State<Self>) {
        sub_bytes_no_nots(x)
    }
    /// InvSubBytes without its NOTs ([`inv_sub_bytes_no_nots`]).
    #[inline(always)]
    fn inv_sub_bytes(x: &mut State<Self>) {
        inv_sub_bytes_no_nots(x)
    }
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
    /// Whether encryption skips ShiftRows (see [`FRAME_ROT1`]): eight fewer
    /// shuffles a round, but most row rotations become general permutes,
    /// which could cost more than they save where a rotation is much cheaper
    /// than a permute (on Zen 3 the frames are faster with either shuffle).
    const FRAMES: bool;
    /// Whether decryption skips InvShiftRows the same way (see
    /// [`dec_frame`]).
    const DEC_FRAMES: bool = false;
    /// Whether encryption's rounds in frames run four a pass, so that each
    /// round's rotations are constants (see `enc_round`). Not decryption's:
    /// measured slower on x86 (more spills).
    const CONST_FRAMES: bool = false;
}

/// FIPS-197 byte order (column by column) to row by row; its own inverse.
const TRANSPOSE: [u8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];
/// ShiftRows on row-major bytes: row `r` rotates left by `r` positions.
const SHIFT_ROWS: [u8; 16] = [0, 1, 2, 3, 5, 6, 7, 4, 10, 11, 8, 9, 15, 12, 13, 14];
/// InvShiftRows on row-major bytes.
static INV_SHIFT_ROWS: [u8; 16] = [0, 1, 2, 3, 7, 4, 5, 6, 10, 11, 8, 9, 13, 14, 15, 12];

/// The permutation `a` after `b`, for `Vector::permute` indices (`out[j] =
/// in[idx[j]]`).
const fn compose(a: &[u8; 16], b: &[u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    let mut j = 0;
    while j < 16 {
        out[j] = b[a[j] as usize];
        j += 1;
    }
    out
}

/// Row rotations by one and two rows on row-major bytes.
const ROT1: [u8; 16] = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3];
const ROT2: [u8; 16] = compose(&ROT1, &ROT1);
const IDENTITY: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// `SHIFT_ROWS` applied `r` times, and its inverse, for `r` in 0..4.
const SR_POW: [[u8; 16]; 4] = {
    let mut t = [IDENTITY; 4];
    let mut r = 1;
    while r < 4 {
        t[r] = compose(&SHIFT_ROWS, &t[r - 1]);
        r += 1;
    }
    t
};
const SR_INV_POW: [[u8; 16]; 4] = [SR_POW[0], SR_POW[3], SR_POW[2], SR_POW[1]];

/// Encryption never applies ShiftRows (saving eight permutes a round): after
/// round `r` the state is kept as `SR^-r(x)`, so round `r` runs MixColumns
/// conjugated by `SR^r` (its row rotations become the permutations below) and
/// adds `SR^-r(K_r)` (see [`Schedule::new`]); the pending `SR^rounds` is folded
/// into the byte reordering of [`store`]. The same idea as Adomnicai and
/// Peyrin's fixslicing (TCHES 2021/1), here on byte permutations.
static FRAME_ROT1: [[u8; 16]; 4] = {
    let mut t = [IDENTITY; 4];
    let mut r = 0;
    while r < 4 {
        t[r] = compose(&SR_INV_POW[r], &compose(&ROT1, &SR_POW[r]));
        r += 1;
    }
    t
};
static FRAME_ROT2: [[u8; 16]; 4] = {
    let mut t = [IDENTITY; 4];
    let mut r = 0;
    while r < 4 {
        t[r] = compose(&SR_INV_POW[r], &compose(&ROT2, &SR_POW[r]));
        r += 1;
    }
    t
};
/// The output reordering after `r mod 4` pending ShiftRows: `SR^r`, then
/// row-major to FIPS-197 order.
static STORE_FRAME: [[u8; 16]; 4] = {
    let mut t = [IDENTITY; 4];
    let mut r = 0;
    while r < 4 {
        t[r] = compose(&TRANSPOSE, &SR_POW[r]);
        r += 1;
    }
    t
};

/// Decryption without InvShiftRows: when round key `r` of `rounds` is added,
/// `rounds - r` InvShiftRows are pending, so the state is kept as `SR^-f(x)`
/// with `f` this value, and the round keys and InvMixColumns' rotations are
/// those of encryption's frame `f` ([`FRAME_ROT1`]).
const fn dec_frame(rounds: usize, r: usize) -> usize {
    (4 - (rounds - r) % 4) % 4
}

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

/// Inverse of [`load`] for the first `out.len()` blocks, each reordered by
/// `order` (from row-major: [`TRANSPOSE`], or a [`STORE_FRAME`]).
#[inline(always)]
fn store<V: Vector>(mut x: State<V>, out: &mut [Block], order: &'static [u8; 16]) {
    transpose_bits(&mut x);
    for (v, b) in x.iter().zip(out) {
        v.permute(order).store(b.as_mut());
    }
}

/// 16 bytes on a 16-byte boundary.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct Aligned(pub(crate) [u8; 16]);

impl Zeroize for Aligned {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// One round key's eight bit planes.
type KeyPlanes = [Aligned; 8];

/// Round keys as bit planes in memory (one byte of 0x00 or 0xff per state
/// position and plane), with SubBytes' constant 0x63 folded into rounds 1..
/// (see `sub_bytes_no_nots` and `inv_sub_bytes_no_nots`).
#[derive(Clone)]
pub(crate) struct Schedule {
    /// Decryption's round keys.
    rk: [KeyPlanes; MAX_ROUND_KEYS],
    /// Encryption's: round `r` permuted by `SR^-r` (see [`FRAME_ROT1`]).
    enc: [KeyPlanes; MAX_ROUND_KEYS],
    /// Decryption's in frames: round `r` permuted by `SR^-f` (see [`dec_frame`]).
    dec: [KeyPlanes; MAX_ROUND_KEYS],
    /// Round key 0 as row-major bytes.
    key0_rows: Aligned,
    rounds: usize,
}

impl Schedule {
    pub(crate) fn new(bytes: &ByteKeys, rounds: usize) -> Self {
        let mut s = Schedule {
            rk: [[Aligned::default(); 8]; MAX_ROUND_KEYS],
            enc: [[Aligned::default(); 8]; MAX_ROUND_KEYS],
            dec: [[Aligned::default(); 8]; MAX_ROUND_KEYS],
            key0_rows: Aligned(core::array::from_fn(|j| {
                bytes[0][usize::from(TRANSPOSE[j])]
            })),
            rounds,
        };
        for r in 0..=rounds {
            let fold = if r > 0 { 0x63 } else { 0 };
            for (i, plane) in s.rk[r].iter_mut().enumerate() {
                for (j, out) in plane.0.iter_mut().enumerate() {
                    let (row, col) = (j / 4, j % 4);
                    let bit = ((bytes[r][4 * col + row] ^ fold) >> i) & 1;
                    *out = 0u8.wrapping_sub(bit);
                }
            }
            let frame = &SR_INV_POW[r % 4];
            for (enc, plain) in s.enc[r].iter_mut().zip(&s.rk[r]) {
                for (e, &from) in enc.0.iter_mut().zip(frame) {
                    *e = plain.0[usize::from(from)];
                }
            }
            let frame = &SR_INV_POW[dec_frame(rounds, r)];
            for (dec, plain) in s.dec[r].iter_mut().zip(&s.rk[r]) {
                for (d, &from) in dec.0.iter_mut().zip(frame) {
                    *d = plain.0[usize::from(from)];
                }
            }
        }
        s
    }

    #[inline(always)]
    fn round_key<V: Vector>(&self, r: usize) -> State<V> {
        core::array::from_fn(|i| V::load_aligned(&self.rk[r][i]))
    }

    #[inline(always)]
    fn enc_key<V: Vector>(&self, r: usize) -> State<V> {
        core::array::from_fn(|i| V::load_aligned(&self.enc[r][i]))
    }

    #[inline(always)]
    fn dec_key<V: Vector>(&self, r: usize) -> State<V> {
        core::array::from_fn(|i| V::load_aligned(&self.dec[r][i]))
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        self.rk.zeroize();
        self.enc.zeroize();
        self.dec.zeroize();
        self.key0_rows.zeroize();
    }
}

/// Runs `f` on the blocks of `buf` (at most [`PAR_BLOCKS`]) as a state,
/// storing with the byte order `f` returns.
#[inline(always)]
fn with_state<V: Vector>(
    mut buf: InOutBuf<'_, '_, Block>,
    f: impl FnOnce(&mut State<V>) -> &'static [u8; 16],
) {
    debug_assert!(buf.len() <= PAR_BLOCKS);
    let mut x = load::<V>(buf.get_in());
    let order = f(&mut x);
    store(x, buf.get_out(), order);
}

/// Encrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.1), without ShiftRows
/// (see [`FRAME_ROT1`]).
#[inline(always)]
pub(crate) fn encrypt<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    encrypt_as::<V>(s, buf, V::FRAMES)
}

/// [`encrypt`] with or without ShiftRows frames (for tests of both).
#[inline(always)]
pub(crate) fn encrypt_as<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>, frames: bool) {
    with_state::<V>(buf, |x| encrypt_rounds(s, x, frames))
}

/// The rounds of encryption on a bitsliced state; returns the byte order
/// to store with.
#[inline(always)]
fn encrypt_rounds<V: Vector>(s: &Schedule, x: &mut State<V>, frames: bool) -> &'static [u8; 16] {
    // Round key 0 is the same in frames (frame 0 is the identity).
    add_round_key(x, &s.round_key(0));
    encrypt_after_key0(s, x, frames)
}

/// [`encrypt_rounds`] on a state that has round key 0 added already.
#[inline(always)]
fn encrypt_after_key0<V: Vector>(
    s: &Schedule,
    x: &mut State<V>,
    frames: bool,
) -> &'static [u8; 16] {
    if !frames {
        return encrypt_plain(s, x);
    }
    if V::CONST_FRAMES {
        // Four rounds a pass, frames 1, 2, 3, 0: each round's rotations are
        // constants the compiler sees (a `pshufd` where they move whole rows
        // of four bytes, no index loaded).
        let mut r = 1;
        while r < s.rounds {
            enc_round::<V, 1>(s, x, r);
            if r + 1 == s.rounds {
                break;
            }
            enc_round::<V, 2>(s, x, r + 1);
            if r + 2 == s.rounds {
                break;
            }
            enc_round::<V, 3>(s, x, r + 2);
            if r + 3 == s.rounds {
                break;
            }
            enc_round::<V, 0>(s, x, r + 3);
            r += 4;
        }
    } else {
        for r in 1..s.rounds {
            V::sub_bytes(x);
            let (rot1, rot2) = (&FRAME_ROT1[r % 4], &FRAME_ROT2[r % 4]);
            mix_columns_by(x, |v: V| v.permute(rot1), |v: V| v.permute(rot2));
            add_round_key(x, &s.enc_key(r));
        }
    }
    V::sub_bytes(x);
    add_round_key(x, &s.enc_key(s.rounds));
    &STORE_FRAME[s.rounds % 4]
}

/// Middle round `r` of encryption in frame `F` (`r mod 4`).
#[inline(always)]
fn enc_round<V: Vector, const F: usize>(s: &Schedule, x: &mut State<V>, r: usize) {
    debug_assert_eq!(r % 4, F);
    V::sub_bytes(x);
    let (rot1, rot2) = (&FRAME_ROT1[F], &FRAME_ROT2[F]);
    mix_columns_by(x, |v: V| v.permute(rot1), |v: V| v.permute(rot2));
    add_round_key(x, &s.enc_key(r));
}

/// The rounds of encryption (FIPS-197 §5.1) round by round.
#[inline(always)]
fn encrypt_plain<V: Vector>(s: &Schedule, x: &mut State<V>) -> &'static [u8; 16] {
    for r in 1..s.rounds {
        V::sub_bytes(x);
        for v in x.iter_mut() {
            *v = v.permute(&SHIFT_ROWS);
        }
        mix_columns(x);
        add_round_key(x, &s.round_key(r));
    }
    V::sub_bytes(x);
    for v in x.iter_mut() {
        *v = v.permute(&SHIFT_ROWS);
    }
    add_round_key(x, &s.round_key(s.rounds));
    &TRANSPOSE
}

/// Decrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.3).
#[inline(always)]
pub(crate) fn decrypt<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    decrypt_as::<V>(s, buf, V::DEC_FRAMES)
}

/// [`decrypt`] with or without InvShiftRows frames (for tests of both).
#[inline(always)]
pub(crate) fn decrypt_as<V: Vector>(s: &Schedule, buf: InOutBuf<'_, '_, Block>, frames: bool) {
    with_state::<V>(buf, |x| decrypt_rounds(s, x, frames))
}

/// The rounds of decryption on a bitsliced state; returns the byte order
/// to store with.
#[inline(always)]
fn decrypt_rounds<V: Vector>(s: &Schedule, x: &mut State<V>, frames: bool) -> &'static [u8; 16] {
    if !frames {
        return decrypt_plain(s, x);
    }
    let n = s.rounds;
    add_round_key(x, &s.dec_key(n));
    for r in (1..n).rev() {
        V::inv_sub_bytes(x);
        add_round_key(x, &s.dec_key(r));
        let f = dec_frame(n, r);
        let (rot1, rot2) = (&FRAME_ROT1[f], &FRAME_ROT2[f]);
        inv_mix_columns_by(x, |v: V| v.permute(rot1), |v: V| v.permute(rot2));
    }
    V::inv_sub_bytes(x);
    add_round_key(x, &s.dec_key(0));
    &STORE_FRAME[dec_frame(n, 0)]
}

/// The rounds of decryption (FIPS-197 §5.3) round by round.
#[inline(always)]
fn decrypt_plain<V: Vector>(s: &Schedule, x: &mut State<V>) -> &'static [u8; 16] {
    add_round_key(x, &s.round_key(s.rounds));
    for r in (1..s.rounds).rev() {
        for v in x.iter_mut() {
            *v = v.permute(&INV_SHIFT_ROWS);
        }
        V::inv_sub_bytes(x);
        add_round_key(x, &s.round_key(r));
        inv_mix_columns(x);
    }
    for v in x.iter_mut() {
        *v = v.permute(&INV_SHIFT_ROWS);
    }
    V::inv_sub_bytes(x);
    add_round_key(x, &s.round_key(0));
    &TRANSPOSE
}

/// The permutation that takes a block in FIPS-197 byte order to the
/// row-major order [`encrypt_rows`] and [`decrypt_rows`] take.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const TO_ROWS: [u8; 16] = TRANSPOSE;

/// Encrypts eight blocks held in registers, each already reordered by
/// [`TO_ROWS`]; returns them in FIPS-197 byte order (see [`decrypt_rows`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn encrypt_rows<V: Vector>(s: &Schedule, mut x: State<V>) -> State<V> {
    transpose_bits(&mut x);
    let order = encrypt_rounds(s, &mut x, V::FRAMES);
    transpose_bits(&mut x);
    for v in x.iter_mut() {
        *v = v.permute(order);
    }
    x
}

/// Round key 0 as row-major bytes (see [`encrypt_keyed_planes`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn key0_rows<V: Vector>(s: &Schedule) -> V {
    V::load_aligned(&s.key0_rows)
}

/// Encrypts eight blocks given as a bitsliced state (plane `i`, byte `j`,
/// bit `b`: bit `i` of row-major byte `j` of block `b`) with round key 0
/// already added; returns the blocks in FIPS-197 byte order. For CTR, whose
/// counters can be bitsliced without the transposition of [`encrypt_rows`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn encrypt_keyed_planes<V: Vector>(s: &Schedule, mut x: State<V>) -> State<V> {
    let order = encrypt_after_key0(s, &mut x, V::FRAMES);
    transpose_bits(&mut x);
    for v in x.iter_mut() {
        *v = v.permute(order);
    }
    x
}

/// Decrypts eight blocks held in registers, each already reordered by
/// [`TO_ROWS`]; returns them in FIPS-197 byte order. For modes that combine
/// the blocks in registers (CBC decryption, XTS) rather than through memory.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn decrypt_rows<V: Vector>(s: &Schedule, mut x: State<V>) -> State<V> {
    transpose_bits(&mut x);
    let order = decrypt_rounds(s, &mut x, V::DEC_FRAMES);
    transpose_bits(&mut x);
    for v in x.iter_mut() {
        *v = v.permute(order);
    }
    x
}
