//! Portable constant-time AES: four blocks bitsliced in eight 64-bit words
//! (the "ct64" layout of Thomas Pornin's BearSSL, `aes_ct64.c`).
//!
//! This is what runs when the CPU has no AES instructions (or the mask
//! `CLUSTERCRYPT_DISABLE_HWF=aes` hides them) and no SIMD backend of ours
//! applies. The `aes` crate has an equivalent fixsliced backend but chooses it
//! only at compile time, so it cannot be the run-time fallback; it stays the
//! test oracle.
//!
//! Layout: word `i` is bit plane `i`; its 64 bits are four rows of 16 bits
//! (row `r` at bits `16r..16r + 16`), each row four columns of four bits
//! (column `c` at bits `4c..4c + 4` of the row), one bit per block. A row
//! rotation is then a 16-bit rotation of the word and ShiftRows a rotation
//! of nibbles inside each 16-bit row.

use cipher::InOutBuf;
use cipher::consts::U4;
use zeroize::Zeroize;

use super::bitsliced::{
    ByteKeys, MAX_ROUND_KEYS, Rows, State, add_round_key, bitsliced_aes, inv_mix_columns,
    inv_sub_bytes_no_nots, mix_columns, sub_bytes_no_nots,
};

/// Blocks per call.
pub const PAR_BLOCKS: usize = 4;

type Block = cipher::Block<Aes128>;

impl Rows for u64 {
    #[inline(always)]
    fn rot1(self) -> Self {
        self.rotate_right(16)
    }
    #[inline(always)]
    fn rot2(self) -> Self {
        self.rotate_right(32)
    }
}

/// Exchanges the bits of `x` selected by `lo` with those of `y` selected by
/// `lo << s` (one step of an 8x8 bit-matrix transpose).
#[inline(always)]
fn swap_bits(x: &mut u64, y: &mut u64, lo: u64, s: u32) {
    let (a, b) = (*x, *y);
    *x = (a & lo) | ((b & lo) << s);
    *y = ((a >> s) & lo) | (b & !lo);
}

/// Transposes the eight words as eight 8x8 bit matrices (one per byte
/// position): its own inverse.
#[inline(always)]
fn ortho(q: &mut State<u64>) {
    const M1: u64 = 0x5555_5555_5555_5555;
    const M2: u64 = 0x3333_3333_3333_3333;
    const M4: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    for (lo, s, pairs) in [
        (M1, 1, [(0, 1), (2, 3), (4, 5), (6, 7)]),
        (M2, 2, [(0, 2), (1, 3), (4, 6), (5, 7)]),
        (M4, 4, [(0, 4), (1, 5), (2, 6), (3, 7)]),
    ] {
        for (i, j) in pairs {
            let (mut x, mut y) = (q[i], q[j]);
            swap_bits(&mut x, &mut y, lo, s);
            q[i] = x;
            q[j] = y;
        }
    }
}

/// Spreads the bytes of one block (as four little-endian column words) over
/// two words: `(columns 0 and 2, columns 1 and 3)`, row `r` in 16-bit slot `r`.
#[inline(always)]
fn interleave_in(block: &[u8; 16]) -> (u64, u64) {
    let w = |c: usize| {
        let mut x = u64::from(u32::from_le_bytes(
            block[4 * c..4 * c + 4].try_into().expect("4 bytes"),
        ));
        x |= x << 16;
        x &= 0x0000_ffff_0000_ffff;
        x |= x << 8;
        x & 0x00ff_00ff_00ff_00ff
    };
    (w(0) | (w(2) << 8), w(1) | (w(3) << 8))
}

/// Inverse of [`interleave_in`].
#[inline(always)]
fn interleave_out(q0: u64, q1: u64, block: &mut [u8; 16]) {
    let w = |x: u64| {
        let mut x = x & 0x00ff_00ff_00ff_00ff;
        x |= x >> 8;
        x &= 0x0000_ffff_0000_ffff;
        (x as u32) | ((x >> 16) as u32)
    };
    for (c, x) in [q0, q1, q0 >> 8, q1 >> 8].into_iter().enumerate() {
        block[4 * c..4 * c + 4].copy_from_slice(&w(x).to_le_bytes());
    }
}

/// Bitslices up to four blocks (missing ones are zero).
#[inline(always)]
fn load(blocks: &[[u8; 16]]) -> State<u64> {
    let mut q = [0u64; 8];
    for (i, b) in blocks.iter().enumerate() {
        (q[i], q[i + 4]) = interleave_in(b);
    }
    ortho(&mut q);
    q
}

/// Inverse of [`load`] for the first `out.len()` blocks.
#[inline(always)]
fn store(mut q: State<u64>, out: &mut [[u8; 16]]) {
    ortho(&mut q);
    for (i, b) in out.iter_mut().enumerate() {
        interleave_out(q[i], q[i + 4], b);
    }
}

/// ShiftRows (FIPS-197 §5.1.2): row `r` rotates left by `r` columns, here a
/// right rotation by `4r` bits inside its 16-bit slot.
#[inline(always)]
fn shift_rows(q: &mut State<u64>) {
    for x in q.iter_mut() {
        let v = *x;
        *x = (v & 0x0000_0000_0000_ffff)
            | ((v & 0x0000_0000_fff0_0000) >> 4)
            | ((v & 0x0000_0000_000f_0000) << 12)
            | ((v & 0x0000_ff00_0000_0000) >> 8)
            | ((v & 0x0000_00ff_0000_0000) << 8)
            | ((v & 0xf000_0000_0000_0000) >> 12)
            | ((v & 0x0fff_0000_0000_0000) << 4);
    }
}

/// InvShiftRows (FIPS-197 §5.3.1).
#[inline(always)]
fn inv_shift_rows(q: &mut State<u64>) {
    for x in q.iter_mut() {
        let v = *x;
        *x = (v & 0x0000_0000_0000_ffff)
            | ((v & 0x0000_0000_0fff_0000) << 4)
            | ((v & 0x0000_0000_f000_0000) >> 12)
            | ((v & 0x0000_ff00_0000_0000) >> 8)
            | ((v & 0x0000_00ff_0000_0000) << 8)
            | ((v & 0x000f_0000_0000_0000) << 12)
            | ((v & 0xfff0_0000_0000_0000) >> 4);
    }
}

/// Bitsliced round keys, with SubBytes' constant 0x63 folded into rounds 1..
/// (which serves decryption as well: see [`inv_sub_bytes_no_nots`]).
#[derive(Clone)]
struct Schedule {
    rk: [State<u64>; MAX_ROUND_KEYS],
    rounds: usize,
}

impl Schedule {
    fn new(bytes: &ByteKeys, rounds: usize) -> Self {
        let mut s = Schedule {
            rk: [[0; 8]; MAX_ROUND_KEYS],
            rounds,
        };
        for r in 0..=rounds {
            let mut k = bytes[r];
            if r > 0 {
                k.iter_mut().for_each(|b| *b ^= 0x63);
            }
            s.rk[r] = load(&[k; PAR_BLOCKS]);
            k.zeroize();
        }
        s
    }
}

impl Drop for Schedule {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

/// Runs `f` on the blocks of `buf` (at most [`PAR_BLOCKS`]) as a state.
#[inline(always)]
fn with_state(mut buf: InOutBuf<'_, '_, Block>, f: impl FnOnce(&mut State<u64>)) {
    let n = buf.len();
    debug_assert!(n <= PAR_BLOCKS);
    let mut tmp = [[0u8; 16]; PAR_BLOCKS];
    for (t, b) in tmp.iter_mut().zip(buf.get_in()) {
        t.copy_from_slice(b);
    }
    let mut q = load(&tmp[..n]);
    f(&mut q);
    store(q, &mut tmp[..n]);
    for (b, t) in buf.get_out().iter_mut().zip(&tmp) {
        b.copy_from_slice(t);
    }
}

/// Encrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.1).
#[inline(always)]
fn encrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    with_state(buf, |q| {
        add_round_key(q, &s.rk[0]);
        for rk in &s.rk[1..s.rounds] {
            sub_bytes_no_nots(q);
            shift_rows(q);
            mix_columns(q);
            add_round_key(q, rk);
        }
        sub_bytes_no_nots(q);
        shift_rows(q);
        add_round_key(q, &s.rk[s.rounds]);
    })
}

/// Decrypts up to [`PAR_BLOCKS`] blocks (FIPS-197 §5.3).
#[inline(always)]
fn decrypt(s: &Schedule, buf: InOutBuf<'_, '_, Block>) {
    with_state(buf, |q| {
        add_round_key(q, &s.rk[s.rounds]);
        for rk in s.rk[1..s.rounds].iter().rev() {
            inv_shift_rows(q);
            inv_sub_bytes_no_nots(q);
            add_round_key(q, rk);
            inv_mix_columns(q);
        }
        inv_shift_rows(q);
        inv_sub_bytes_no_nots(q);
        add_round_key(q, &s.rk[0]);
    })
}

bitsliced_aes!(U4, "portable bitsliced (four blocks in 64-bit words).");

#[cfg(test)]
mod tests {
    use super::super::tests_common::check_against_oracle;
    use super::*;

    #[test]
    fn soft_matches_the_aes_crate() {
        check_against_oracle::<Aes128, aes::Aes128>();
        check_against_oracle::<Aes192, aes::Aes192>();
        check_against_oracle::<Aes256, aes::Aes256>();
    }

    #[test]
    fn soft_fips197_appendix_c() {
        super::super::tests_common::fips197::<Aes128, Aes192, Aes256>();
    }

    #[test]
    fn soft_in_every_mode() {
        super::super::tests_common::modes::<Aes128, aes::Aes128>();
        super::super::tests_common::modes::<Aes256, aes::Aes256>();
    }
}
