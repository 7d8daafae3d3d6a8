//! What the bitsliced AES implementations share: the S-box circuits, the
//! linear layer written on bit planes, the key expansion and the glue to the
//! `cipher` traits.
//!
//! A bitsliced state is eight bit planes: plane `i` holds bit `i` of every
//! state byte of every block in flight, so SubBytes is a Boolean circuit run
//! on whole machine words and no table is ever indexed by secret data (a
//! table-lookup AES leaks its key through the cache: Bernstein 2005,
//! Osvik-Shamir-Tromer 2006). Each backend chooses how a plane is laid out
//! (64-bit words in `soft`, 128-bit NEON registers in `aarch64_neon`) and
//! provides the row rotations MixColumns needs; everything else is here.
//!
//! The forward S-box circuit is Boyar and Peralta's (113 gates, "A small
//! depth-16 circuit for the AES S-box", 2012, as scheduled by Adomnicai and
//! Peyrin's fixslicing code in the `aes` crate). The inverse (115 gates) is
//! derived from it by `scripts/derive_inv_sbox.py`: the same nonlinear
//! middle between new linear top and bottom layers.

use core::ops::{BitAnd, BitXor, Not};

use zeroize::Zeroizing;

/// A word of bit planes: the Boolean operations of the S-box circuit.
pub(crate) trait Gates:
    Copy + BitXor<Output = Self> + BitAnd<Output = Self> + Not<Output = Self>
{
}

impl<T> Gates for T where T: Copy + BitXor<Output = T> + BitAnd<Output = T> + Not<Output = T> {}

/// A bit plane laid out by rows, for MixColumns.
pub(crate) trait Rows: Gates {
    /// Row `r` of the result is row `r + 1 (mod 4)` of `self`, in every column
    /// and block.
    fn rot1(self) -> Self;
    /// Row `r` of the result is row `r + 2 (mod 4)` of `self`.
    fn rot2(self) -> Self;
}

/// A bitsliced state: `s[i]` is bit plane `i` (bit 0 = least significant).
pub(crate) type State<W> = [W; 8];

/// SubBytes without its four NOTs (bits 0, 1, 5 and 6 of the constant
/// 0x63): the backends fold those into the round keys (see
/// [`expand_key`]'s callers), since ShiftRows and MixColumns map a state of
/// 0x63 bytes to itself.
#[inline(always)]
pub(crate) fn sub_bytes_no_nots<W: Gates>(state: &mut State<W>) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;
    let y14 = u3 ^ u5;
    let y13 = u0 ^ u6;
    let y12 = y13 ^ y14;
    let t1 = u4 ^ y12;
    let y15 = t1 ^ u5;
    let t2 = y12 & y15;
    let y6 = y15 ^ u7;
    let y20 = t1 ^ u1;
    let y9 = u0 ^ u3;
    let y11 = y20 ^ y9;
    let t12 = y9 & y11;
    let y7 = u7 ^ y11;
    let y8 = u0 ^ u5;
    let t0 = u1 ^ u2;
    let y10 = y15 ^ t0;
    let y17 = y10 ^ y11;
    let t13 = y14 & y17;
    let t14 = t13 ^ t12;
    let y19 = y10 ^ y8;
    let t15 = y8 & y10;
    let t16 = t15 ^ t12;
    let y16 = t0 ^ y11;
    let y21 = y13 ^ y16;
    let t7 = y13 & y16;
    let y18 = u0 ^ y16;
    let y1 = t0 ^ u7;
    let y4 = y1 ^ u3;
    let t5 = y4 & u7;
    let t6 = t5 ^ t2;
    let t18 = t6 ^ t16;
    let t22 = t18 ^ y19;
    let y2 = y1 ^ u0;
    let t10 = y2 & y7;
    let t11 = t10 ^ t7;
    let t20 = t11 ^ t16;
    let t24 = t20 ^ y18;
    let y5 = y1 ^ u6;
    let t8 = y5 & y1;
    let t9 = t8 ^ t7;
    let t19 = t9 ^ t14;
    let t23 = t19 ^ y21;
    let y3 = y5 ^ y8;
    let t3 = y3 & y6;
    let t4 = t3 ^ t2;
    let t17 = t4 ^ y20;
    let t21 = t17 ^ t14;
    let t26 = t21 & t23;
    let t27 = t24 ^ t26;
    let t31 = t22 ^ t26;
    let t25 = t21 ^ t22;
    let t28 = t25 & t27;
    let t29 = t28 ^ t22;
    let z14 = t29 & y2;
    let z5 = t29 & y7;
    let t30 = t23 ^ t24;
    let t32 = t31 & t30;
    let t33 = t32 ^ t24;
    let t35 = t27 ^ t33;
    let t36 = t24 & t35;
    let t38 = t27 ^ t36;
    let t39 = t29 & t38;
    let t40 = t25 ^ t39;
    let t43 = t29 ^ t40;
    let z3 = t43 & y16;
    let tc12 = z3 ^ z5;
    let z12 = t43 & y13;
    let z13 = t40 & y5;
    let z4 = t40 & y1;
    let tc6 = z3 ^ z4;
    let t34 = t23 ^ t33;
    let t37 = t36 ^ t34;
    let t41 = t40 ^ t37;
    let z8 = t41 & y10;
    let z17 = t41 & y8;
    let t44 = t33 ^ t37;
    let z0 = t44 & y15;
    let z9 = t44 & y12;
    let z10 = t37 & y3;
    let z1 = t37 & y6;
    let tc5 = z1 ^ z0;
    let tc11 = tc6 ^ tc5;
    let z11 = t33 & y4;
    let t42 = t29 ^ t33;
    let t45 = t42 ^ t41;
    let z7 = t45 & y17;
    let tc8 = z7 ^ tc6;
    let z16 = t45 & y14;
    let z6 = t42 & y11;
    let tc16 = z6 ^ tc8;
    let z15 = t42 & y9;
    let tc20 = z15 ^ tc16;
    let tc1 = z15 ^ z16;
    let tc2 = z10 ^ tc1;
    let tc21 = tc2 ^ z11;
    let tc3 = z9 ^ tc2;
    let s0 = tc3 ^ tc16;
    let s3 = tc3 ^ tc11;
    let s1 = s3 ^ tc16;
    let tc13 = z13 ^ tc1;
    let z2 = t33 & u7;
    let tc4 = z0 ^ z2;
    let tc7 = z12 ^ tc4;
    let tc9 = z8 ^ tc7;
    let tc10 = tc8 ^ tc9;
    let tc17 = z14 ^ tc10;
    let s5 = tc21 ^ tc17;
    let tc26 = tc17 ^ tc20;
    let s2 = tc26 ^ z17;
    let tc14 = tc4 ^ tc12;
    let tc18 = tc13 ^ tc14;
    let s6 = tc10 ^ tc18;
    let s7 = z12 ^ tc18;
    let s4 = tc14 ^ s3;
    *state = [s7, s6, s5, s4, s3, s2, s1, s0];
}

/// The inverse of [`sub_bytes_no_nots`]: InvSubBytes on a state whose bytes
/// have been XORed with 0x63 beforehand, which the backends fold into the
/// round keys as for encryption (InvShiftRows and InvMixColumns also map a
/// state of 0x63 bytes to itself).
///
/// The forward circuit is `B∘M∘T` (linear top `T`, the tower-field inversion
/// `M`, linear bottom `B` holding the affine map's linear part `L`), so the
/// inverse, `Inv∘L⁻¹ = L⁻¹∘B∘M∘T∘L⁻¹`, reuses `M` (62 gates) between the
/// XOR programs for `T∘L⁻¹` (the `a` signals) and `L⁻¹∘B` (generated by
/// `scripts/derive_inv_sbox.py`, which checks all 256 inputs): 115 gates
/// where Boyar, Peralta and Calik's depth-16 inverse has 127. The middle's 62
/// lines are the forward circuit's, inputs renamed: each circuit stays one
/// flat list of gates, which is what `scripts/gen_ssse3_sbox.py` schedules.
#[inline(always)]
pub(crate) fn inv_sub_bytes_no_nots<W: Gates>(state: &mut State<W>) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;
    let a0 = u1 ^ u0;
    let a1 = u3 ^ u0;
    let a2 = u3 ^ a0;
    let a3 = u7 ^ u4;
    let a4 = u4 ^ a2;
    let a5 = u3 ^ u1;
    let a6 = a0 ^ a3;
    let a7 = u3 ^ a3;
    let a8 = u7 ^ a7;
    let a9 = u6 ^ a7;
    let a10 = a4 ^ a9;
    let a11 = a1 ^ a10;
    let a12 = u2 ^ a11;
    let a13 = a5 ^ a9;
    let a14 = u6 ^ a12;
    let a15 = a7 ^ a12;
    let a16 = u2 ^ a8;
    let a17 = u5 ^ u0;
    let a18 = a11 ^ a17;
    let a19 = u2 ^ a17;
    let a20 = a6 ^ a18;
    let a21 = a2 ^ a19;
    let a22 = a8 ^ a18;
    let t2 = a10 & a21;
    let t12 = a8 & a18;
    let t13 = a4 & a20;
    let t14 = t13 ^ t12;
    let t15 = a0 & a6;
    let t16 = t15 ^ t12;
    let t7 = a9 & a15;
    let t5 = a11 & a19;
    let t6 = t5 ^ t2;
    let t18 = t6 ^ t16;
    let t22 = t18 ^ a3;
    let t10 = a13 & a12;
    let t11 = t10 ^ t7;
    let t20 = t11 ^ t16;
    let t24 = t20 ^ a16;
    let t8 = a5 & a7;
    let t9 = t8 ^ t7;
    let t19 = t9 ^ t14;
    let t23 = t19 ^ a14;
    let t3 = a1 & a2;
    let t4 = t3 ^ t2;
    let t17 = t4 ^ a22;
    let t21 = t17 ^ t14;
    let t26 = t21 & t23;
    let t27 = t24 ^ t26;
    let t31 = t22 ^ t26;
    let t25 = t21 ^ t22;
    let t28 = t25 & t27;
    let t29 = t28 ^ t22;
    let z14 = t29 & a13;
    let z5 = t29 & a12;
    let t30 = t23 ^ t24;
    let t32 = t31 & t30;
    let t33 = t32 ^ t24;
    let t35 = t27 ^ t33;
    let t36 = t24 & t35;
    let t38 = t27 ^ t36;
    let t39 = t29 & t38;
    let t40 = t25 ^ t39;
    let t43 = t29 ^ t40;
    let z3 = t43 & a15;
    let z12 = t43 & a9;
    let z13 = t40 & a5;
    let z4 = t40 & a7;
    let t34 = t23 ^ t33;
    let t37 = t36 ^ t34;
    let t41 = t40 ^ t37;
    let z8 = t41 & a6;
    let z17 = t41 & a0;
    let t44 = t33 ^ t37;
    let z0 = t44 & a21;
    let z9 = t44 & a10;
    let z10 = t37 & a1;
    let z1 = t37 & a2;
    let z11 = t33 & a11;
    let t42 = t29 ^ t33;
    let t45 = t42 ^ t41;
    let z7 = t45 & a20;
    let z16 = t45 & a4;
    let z6 = t42 & a18;
    let z15 = t42 & a8;
    let z2 = t33 & a19;
    let b0 = z6 ^ z15;
    let b1 = z12 ^ b0;
    let b2 = z13 ^ b1;
    let b3 = z16 ^ b2;
    let b4 = z8 ^ b3;
    let b5 = z2 ^ b4;
    let s3 = z0 ^ b5;
    let b7 = z5 ^ b4;
    let s0 = z3 ^ b7;
    let b9 = z3 ^ z4;
    let b10 = z1 ^ b9;
    let b11 = z7 ^ b9;
    let s6 = b3 ^ b11;
    let b13 = z11 ^ z17;
    let b14 = z14 ^ b10;
    let b15 = z10 ^ b5;
    let b16 = z0 ^ s0;
    let s5 = b10 ^ b16;
    let b18 = b14 ^ b15;
    let b19 = z11 ^ b18;
    let s2 = z13 ^ b19;
    let b21 = z9 ^ b13;
    let s7 = z15 ^ b21;
    let b23 = z12 ^ z16;
    let b24 = b21 ^ b23;
    let s1 = b19 ^ b24;
    let b26 = b15 ^ b16;
    let b27 = b11 ^ b13;
    let b28 = b26 ^ b27;
    let s4 = b2 ^ b28;
    *state = [s7, s6, s5, s4, s3, s2, s1, s0];
}

/// Multiplies every byte by x (FIPS-197 §4.2.1 `xtime`) on bit planes.
#[inline(always)]
fn xtime<W: Gates>(y: State<W>) -> State<W> {
    [
        y[7],
        y[0] ^ y[7],
        y[1],
        y[2] ^ y[7],
        y[3] ^ y[7],
        y[4],
        y[5],
        y[6],
    ]
}

/// MixColumns (FIPS-197 §5.1.3): with `t` the state rotated by one row and
/// `y = s ^ t`, each byte becomes `2·y ^ t ^ rot2(y)`, which is
/// `2·s[r] ^ 3·s[r+1] ^ s[r+2] ^ s[r+3]`.
#[inline(always)]
pub(crate) fn mix_columns<W: Rows>(s: &mut State<W>) {
    mix_columns_by(s, W::rot1, W::rot2);
}

/// [`mix_columns`] with the row rotations given: code that keeps its state
/// with the rows permuted passes the rotations conjugated by that permutation.
#[inline(always)]
pub(crate) fn mix_columns_by<W: Gates>(
    s: &mut State<W>,
    rot1: impl Fn(W) -> W,
    rot2: impl Fn(W) -> W,
) {
    let t = s.map(rot1);
    let mut y = *s;
    for i in 0..8 {
        y[i] = y[i] ^ t[i];
    }
    let x = xtime(y);
    for i in 0..8 {
        s[i] = x[i] ^ t[i] ^ rot2(y[i]);
    }
}

/// InvMixColumns as MixColumns after multiplying each column by
/// `{04}x^2 + {05}`, since `({03}x^3 + {01}x^2 + {01}x + {02})·({04}x^2 + {05})
/// = {0b}x^3 + {0d}x^2 + {09}x + {0e}` (The Design of Rijndael, §4.1.3):
/// `5·s[r] ^ 4·s[r+2] = s[r] ^ 4·(s[r] ^ s[r+2])`.
#[inline(always)]
pub(crate) fn inv_mix_columns<W: Rows>(s: &mut State<W>) {
    inv_mix_columns_by(s, W::rot1, W::rot2);
}

/// [`inv_mix_columns`] with the row rotations given (see [`mix_columns_by`]).
#[inline(always)]
pub(crate) fn inv_mix_columns_by<W: Gates>(
    s: &mut State<W>,
    rot1: impl Fn(W) -> W,
    rot2: impl Fn(W) -> W,
) {
    let mut u = *s;
    for v in u.iter_mut() {
        *v = *v ^ rot2(*v);
    }
    let u4 = xtime(xtime(u));
    for i in 0..8 {
        s[i] = s[i] ^ u4[i];
    }
    mix_columns_by(s, rot1, rot2);
}

/// XORs a round key (in the backend's plane layout) into the state.
#[inline(always)]
pub(crate) fn add_round_key<W: Gates>(s: &mut State<W>, rk: &State<W>) {
    for i in 0..8 {
        s[i] = s[i] ^ rk[i];
    }
}

/// The S-box table, computed from its definition (FIPS-197 §5.1.1: the
/// inverse in GF(2^8), then the affine map). Only for code that keeps the
/// whole table in registers (NEON `tbl`): never index it with secret data.
#[cfg_attr(
    not(target_arch = "aarch64"),
    allow(dead_code, reason = "used by NEON and the tests")
)]
pub(crate) const SBOX: [u8; 256] = {
    const fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 == 1 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    }
    let mut table = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let mut inv = 0u8;
        let mut y = 1;
        while y < 256 {
            if mul(x as u8, y as u8) == 1 {
                inv = y as u8;
            }
            y += 1;
        }
        table[x] = inv
            ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63;
        x += 1;
    }
    table
};

/// Most round keys: AES-256 has 14 rounds.
pub(crate) const MAX_ROUND_KEYS: usize = 15;

/// Round keys as bytes, in FIPS-197 order (byte `4c + r` is row `r` of column `c`).
pub(crate) type ByteKeys = Zeroizing<[[u8; 16]; MAX_ROUND_KEYS]>;

/// SubWord (FIPS-197 §5.2) in constant time: the four bytes as bit planes of
/// a `u8`, through the same circuit as the data.
fn sub_word(w: [u8; 4]) -> [u8; 4] {
    let mut planes = [0u8; 8];
    for (i, p) in planes.iter_mut().enumerate() {
        for (k, b) in w.iter().enumerate() {
            *p |= ((b >> i) & 1) << k;
        }
    }
    sub_bytes_no_nots(&mut planes);
    for i in [0, 1, 5, 6] {
        planes[i] = !planes[i];
    }
    let mut out = [0u8; 4];
    for (k, o) in out.iter_mut().enumerate() {
        for (i, p) in planes.iter().enumerate() {
            *o |= ((p >> k) & 1) << i;
        }
    }
    out
}

/// The key expansion of FIPS-197 §5.2 for a 16-, 24- or 32-byte key: the
/// round keys and the number of rounds (10, 12 or 14).
pub(crate) fn expand_key(key: &[u8]) -> (ByteKeys, usize) {
    let nk = key.len() / 4;
    assert!(
        matches!(nk, 4 | 6 | 8) && key.len().is_multiple_of(4),
        "AES keys are 16, 24 or 32 bytes"
    );
    let rounds = nk + 6;
    let total = 4 * (rounds + 1);
    let mut w = Zeroizing::new([[0u8; 4]; 4 * MAX_ROUND_KEYS]);
    for (i, word) in key.chunks_exact(4).enumerate() {
        w[i].copy_from_slice(word);
    }
    let mut rcon = 1u8;
    for i in nk..total {
        let mut temp = w[i - 1];
        if i % nk == 0 {
            temp.rotate_left(1);
            temp = sub_word(temp);
            temp[0] ^= rcon;
            // xtime on a public constant.
            rcon = (rcon << 1) ^ (0x1b * (rcon >> 7));
        } else if nk > 6 && i % nk == 4 {
            temp = sub_word(temp);
        }
        for b in 0..4 {
            w[i][b] = w[i - nk][b] ^ temp[b];
        }
    }
    let mut keys = Zeroizing::new([[0u8; 16]; MAX_ROUND_KEYS]);
    for (r, k) in keys.iter_mut().enumerate().take(rounds + 1) {
        for c in 0..4 {
            k[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
        }
    }
    (keys, rounds)
}

/// Defines `Aes128`, `Aes192` and `Aes256` for a bitsliced backend module
/// that has a `Schedule` type (`Schedule::new(&ByteKeys, rounds)`, zeroized on
/// drop), `encrypt(&Schedule, InOutBuf)` and `decrypt(&Schedule, InOutBuf)` for
/// at most `$par` blocks, and the marker `$par` (a `typenum` size).
macro_rules! bitsliced_aes {
    ($par:ty, $what:literal) => {
        bitsliced_aes!(@backend $par);
        bitsliced_aes!(@one Aes128, U16, $par, $what, "AES-128");
        bitsliced_aes!(@one Aes192, U24, $par, $what, "AES-192");
        bitsliced_aes!(@one Aes256, U32, $par, $what, "AES-256");
    };
    (@one $name:ident, $ks:ident, $par:ty, $what:literal, $label:literal) => {
        #[doc = concat!($label, ", ", $what)]
        #[derive(Clone)]
        pub struct $name {
            schedule: Schedule,
        }

        impl cipher::KeySizeUser for $name {
            type KeySize = cipher::consts::$ks;
        }

        impl cipher::KeyInit for $name {
            fn new(key: &cipher::Key<Self>) -> Self {
                let (bytes, rounds) = $crate::aes::bitsliced::expand_key(key);
                Self {
                    schedule: Schedule::new(&bytes, rounds),
                }
            }
        }

        impl cipher::BlockSizeUser for $name {
            type BlockSize = cipher::consts::U16;
        }

        impl cipher::BlockCipherEncrypt for $name {
            #[inline]
            fn encrypt_with_backend(
                &self,
                f: impl cipher::BlockCipherEncClosure<BlockSize = cipher::consts::U16>,
            ) {
                f.call(&Backend(&self.schedule))
            }
        }

        impl cipher::BlockCipherDecrypt for $name {
            #[inline]
            fn decrypt_with_backend(
                &self,
                f: impl cipher::BlockCipherDecClosure<BlockSize = cipher::consts::U16>,
            ) {
                f.call(&Backend(&self.schedule))
            }
        }

        impl zeroize::ZeroizeOnDrop for $name {}

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }
    };
    (@backend $par:ty) => {
        /// The schedule seen through the `cipher` backend traits.
        struct Backend<'a>(&'a Schedule);

        impl cipher::BlockSizeUser for Backend<'_> {
            type BlockSize = cipher::consts::U16;
        }

        impl cipher::ParBlocksSizeUser for Backend<'_> {
            type ParBlocksSize = $par;
        }

        impl cipher::BlockCipherEncBackend for Backend<'_> {
            #[inline(always)]
            fn encrypt_block(&self, mut block: cipher::InOut<'_, '_, cipher::Block<Self>>) {
                let mut b = block.clone_in();
                encrypt(self.0, cipher::InOutBuf::from_mut(&mut b));
                *block.get_out() = b;
            }

            #[inline(always)]
            fn encrypt_par_blocks(
                &self,
                blocks: cipher::InOut<'_, '_, cipher::ParBlocks<Self>>,
            ) {
                encrypt(self.0, blocks.into_buf())
            }

            #[inline(always)]
            fn encrypt_tail_blocks(&self, blocks: cipher::InOutBuf<'_, '_, cipher::Block<Self>>) {
                if !blocks.is_empty() {
                    encrypt(self.0, blocks)
                }
            }
        }

        impl cipher::BlockCipherDecBackend for Backend<'_> {
            #[inline(always)]
            fn decrypt_block(&self, mut block: cipher::InOut<'_, '_, cipher::Block<Self>>) {
                let mut b = block.clone_in();
                decrypt(self.0, cipher::InOutBuf::from_mut(&mut b));
                *block.get_out() = b;
            }

            #[inline(always)]
            fn decrypt_par_blocks(
                &self,
                blocks: cipher::InOut<'_, '_, cipher::ParBlocks<Self>>,
            ) {
                decrypt(self.0, blocks.into_buf())
            }

            #[inline(always)]
            fn decrypt_tail_blocks(&self, blocks: cipher::InOutBuf<'_, '_, cipher::Block<Self>>) {
                if !blocks.is_empty() {
                    decrypt(self.0, blocks)
                }
            }
        }
    };
}

pub(crate) use bitsliced_aes;

#[cfg(test)]
mod tests {
    use super::*;

    /// The S-box from its definition: inverse in GF(2^8), then the affine map.
    fn reference_sbox(x: u8) -> u8 {
        let mul = |mut a: u8, mut b: u8| {
            let mut p = 0u8;
            while b != 0 {
                if b & 1 == 1 {
                    p ^= a;
                }
                a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
                b >>= 1;
            }
            p
        };
        let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
        let mut s = inv;
        for r in 1..5 {
            s ^= inv.rotate_left(r);
        }
        s ^ 0x63
    }

    fn planes_of(bytes: [u8; 8]) -> [u8; 8] {
        core::array::from_fn(|i| {
            let mut p = 0u8;
            for (k, b) in bytes.iter().enumerate() {
                p |= ((b >> i) & 1) << k;
            }
            p
        })
    }

    #[test]
    fn circuits_are_the_sbox_and_its_inverse() {
        // FIPS-197 §5.1.1 Figure 7 entries.
        assert_eq!((SBOX[0x00], SBOX[0x01], SBOX[0x53]), (0x63, 0x7c, 0xed));
        for chunk in 0..32u8 {
            let bytes: [u8; 8] = core::array::from_fn(|k| chunk * 8 + k as u8);
            let mut p = planes_of(bytes);
            sub_bytes_no_nots(&mut p);
            for i in [0, 1, 5, 6] {
                p[i] = !p[i];
            }
            let out = planes_of(p); // the transpose is its own inverse
            for k in 0..8 {
                assert_eq!(out[k], reference_sbox(bytes[k]), "S({:#x})", bytes[k]);
                assert_eq!(SBOX[usize::from(bytes[k])], out[k], "table");
            }
            let mut q = planes_of(out);
            for i in [0, 1, 5, 6] {
                q[i] = !q[i];
            }
            inv_sub_bytes_no_nots(&mut q);
            assert_eq!(planes_of(q), bytes);
        }
    }

    #[test]
    fn key_expansion_matches_fips197_appendix_a() {
        // FIPS-197 Appendix A.1, A.2, A.3: the last round key of each.
        let k128 = hex_literal::hex!("2b7e151628aed2a6abf7158809cf4f3c");
        let (keys, rounds) = expand_key(&k128);
        assert_eq!(rounds, 10);
        assert_eq!(
            keys[10],
            hex_literal::hex!("d014f9a8c9ee2589e13f0cc8b6630ca6")
        );
        let k192 = hex_literal::hex!("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b");
        let (keys, rounds) = expand_key(&k192);
        assert_eq!(rounds, 12);
        assert_eq!(
            keys[12],
            hex_literal::hex!("e98ba06f448c773c8ecc720401002202")
        );
        let k256 =
            hex_literal::hex!("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        let (keys, rounds) = expand_key(&k256);
        assert_eq!(rounds, 14);
        assert_eq!(
            keys[14],
            hex_literal::hex!("fe4890d1e6188d0b046df344706c631e")
        );
    }
}
