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
//! The forward S-box circuit is Boyar and Peralta's smallest (113 gates, as
//! scheduled by Adomnicai and Peyrin's fixslicing code in the `aes` crate;
//! their depth-16 circuit of "A small depth-16 circuit for the AES S-box",
//! 2012, is the larger [`sub_bytes_depth16`]). The inverse (115 gates) is
//! derived from it by `scripts/derive_inv_sbox.py`: the same nonlinear
//! middle between new linear top and bottom layers. These two have the fewest
//! gates and are what the generic backends run.
//!
//! The SSSE3 backend runs a second pair instead, as generated assembly
//! (`scripts/gen_ssse3_sbox.py`): [`sub_bytes_depth16`] and
//! [`inv_sub_bytes_depth16`], 16 gates deep where the first pair is 27 and 32
//! deep, at 12 more gates each: one round of its eight blocks waits on the
//! S-box's longest path rather than on the vector pipes, and the shallow pair
//! measured 1.015-1.031x in every mode on Zen 4.

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

/// SubBytes without its NOTs (the same function as [`sub_bytes_no_nots`]) on
/// Boyar and Peralta's depth-16 circuit (AESDEPTH16SIZE125 of the Yale
/// Circuit Minimization Team, its four XNORs XORs here): 125 gates against
/// the other's 113, but 16 gates deep against 27.
// Only the SSSE3 backend runs it, as assembly generated from these lines.
#[cfg_attr(not(test), allow(dead_code))]
#[inline(always)]
pub(crate) fn sub_bytes_depth16<W: Gates>(state: &mut State<W>) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;
    let t1 = u6 ^ u4;
    let t2 = u3 ^ u0;
    let t3 = u1 ^ u2;
    let t4 = u7 ^ t3;
    let t5 = t1 ^ t2;
    let t6 = u1 ^ u5;
    let t7 = u0 ^ u6;
    let t8 = t1 ^ t6;
    let t9 = u6 ^ t4;
    let t10 = u3 ^ t4;
    let t11 = u7 ^ t5;
    let t12 = t5 ^ t6;
    let t13 = u2 ^ u5;
    let t14 = t3 ^ t5;
    let t15 = u5 ^ t7;
    let t16 = u0 ^ u5;
    let t17 = u7 ^ t8;
    let t18 = u6 ^ u5;
    let t19 = t2 ^ t18;
    let t20 = t4 ^ t15;
    let t21 = t1 ^ t13;
    let t22 = u0 ^ t4;
    let t39 = t21 ^ t5;
    let t40 = t21 ^ t7;
    let t41 = t7 ^ t19;
    let t42 = t16 ^ t14;
    let t43 = t22 ^ t17;
    let t44 = t19 & t5;
    let t45 = t20 & t11;
    let t46 = t12 ^ t44;
    let t47 = t10 & u7;
    let t48 = t47 ^ t44;
    let t49 = t7 & t21;
    let t50 = t9 & t4;
    let t51 = t40 ^ t49;
    let t52 = t22 & t17;
    let t53 = t52 ^ t49;
    let t54 = t2 & t8;
    let t55 = t41 & t39;
    let t56 = t55 ^ t54;
    let t57 = t16 & t14;
    let t58 = t57 ^ t54;
    let t59 = t46 ^ t45;
    let t60 = t48 ^ t42;
    let t61 = t51 ^ t50;
    let t62 = t53 ^ t58;
    let t63 = t59 ^ t56;
    let t64 = t60 ^ t58;
    let t65 = t61 ^ t56;
    let t66 = t62 ^ t43;
    let t67 = t65 ^ t66;
    let t68 = t65 & t63;
    let t69 = t64 ^ t68;
    let t70 = t63 ^ t64;
    let t71 = t66 ^ t68;
    let t72 = t71 & t70;
    let t73 = t69 & t67;
    let t74 = t63 & t66;
    let t75 = t70 & t74;
    let t76 = t70 ^ t68;
    let t77 = t64 & t65;
    let t78 = t67 & t77;
    let t79 = t67 ^ t68;
    let t80 = t64 ^ t72;
    let t81 = t75 ^ t76;
    let t82 = t66 ^ t73;
    let t83 = t78 ^ t79;
    let t84 = t81 ^ t83;
    let t85 = t80 ^ t82;
    let t86 = t80 ^ t81;
    let t87 = t82 ^ t83;
    let t88 = t85 ^ t84;
    let t89 = t87 & t5;
    let t90 = t83 & t11;
    let t91 = t82 & u7;
    let t92 = t86 & t21;
    let t93 = t81 & t4;
    let t94 = t80 & t17;
    let t95 = t85 & t8;
    let t96 = t88 & t39;
    let t97 = t84 & t14;
    let t98 = t87 & t19;
    let t99 = t83 & t20;
    let t100 = t82 & t10;
    let t101 = t86 & t7;
    let t102 = t81 & t9;
    let t103 = t80 & t22;
    let t104 = t85 & t2;
    let t105 = t88 & t41;
    let t106 = t84 & t16;
    let t107 = t104 ^ t105;
    let t108 = t93 ^ t99;
    let t109 = t96 ^ t107;
    let t110 = t98 ^ t108;
    let t111 = t91 ^ t101;
    let t112 = t89 ^ t92;
    let t113 = t107 ^ t112;
    let t114 = t90 ^ t110;
    let t115 = t89 ^ t95;
    let t116 = t94 ^ t102;
    let t117 = t97 ^ t103;
    let t118 = t91 ^ t114;
    let t119 = t111 ^ t117;
    let t120 = t100 ^ t108;
    let t121 = t92 ^ t95;
    let t122 = t110 ^ t121;
    let t123 = t106 ^ t119;
    let t124 = t104 ^ t115;
    let t125 = t111 ^ t116;
    let s0 = t109 ^ t122;
    let s2 = t123 ^ t124;
    let t128 = t94 ^ t107;
    let s3 = t113 ^ t114;
    let s4 = t118 ^ t128;
    let t131 = t93 ^ t101;
    let t132 = t112 ^ t120;
    let s7 = t113 ^ t125;
    let t134 = t97 ^ t116;
    let t135 = t131 ^ t134;
    let t136 = t93 ^ t115;
    let s6 = t109 ^ t135;
    let t138 = t119 ^ t132;
    let s5 = t109 ^ t138;
    let t140 = t114 ^ t136;
    let s1 = t109 ^ t140;
    *state = [s7, s6, s5, s4, s3, s2, s1, s0];
}

/// InvSubBytes without its NOTs (the same function as
/// [`inv_sub_bytes_no_nots`]) on Boyar, Peralta and Calik's depth-16
/// circuit (AESReverseDepth of the Yale Circuit Minimization Team, its XNORs
/// XORs here): 127 gates against the other's 115, but 16 gates deep against
/// 32.
// Only the SSSE3 backend runs it, as assembly generated from these lines.
#[cfg_attr(not(test), allow(dead_code))]
#[inline(always)]
pub(crate) fn inv_sub_bytes_depth16<W: Gates>(state: &mut State<W>) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;
    let t23 = u0 ^ u3;
    let t8 = u1 ^ t23;
    let m2 = t23 & t8;
    let t4 = u4 ^ t8;
    let t22 = u1 ^ u3;
    let t2 = u0 ^ u1;
    let t1 = u3 ^ u4;
    let t9 = u7 ^ t1;
    let m7 = t22 & t9;
    let t24 = u4 ^ u7;
    let t10 = t2 ^ t24;
    let m14 = t2 & t10;
    let r5 = u6 ^ u7;
    let t3 = t1 ^ r5;
    let t13 = t2 ^ r5;
    let t19 = t22 ^ r5;
    let t17 = u2 ^ t19;
    let t25 = u2 ^ t1;
    let r13 = u1 ^ u6;
    let t20 = t24 ^ r13;
    let m9 = t20 & t17;
    let r17 = u2 ^ u5;
    let t6 = t22 ^ r17;
    let m1 = t13 & t6;
    let y5 = u0 ^ r17;
    let m4 = t19 & y5;
    let m5 = m4 ^ m1;
    let m17 = m5 ^ t24;
    let r18 = u5 ^ u6;
    let t27 = t1 ^ r18;
    let t15 = t10 ^ t27;
    let m11 = t1 & t15;
    let m15 = m14 ^ m11;
    let m21 = m17 ^ m15;
    let m12 = t4 & t27;
    let m13 = m12 ^ m11;
    let t14 = t10 ^ r18;
    let m3 = t14 ^ m1;
    let m16 = m3 ^ m2;
    let m20 = m16 ^ m13;
    let r19 = u2 ^ u4;
    let t16 = r13 ^ r19;
    let t26 = t3 ^ t16;
    let m6 = t3 & t16;
    let m8 = t26 ^ m6;
    let m18 = m8 ^ m7;
    let m22 = m18 ^ m13;
    let m25 = m22 & m20;
    let m26 = m21 ^ m25;
    let m10 = m9 ^ m6;
    let m19 = m10 ^ m15;
    let m23 = m19 ^ t25;
    let m28 = m23 ^ m25;
    let m24 = m22 ^ m23;
    let m30 = m26 & m24;
    let m39 = m23 ^ m30;
    let m48 = m39 & y5;
    let m57 = m39 & t19;
    let m36 = m24 ^ m25;
    let m31 = m20 & m23;
    let m27 = m20 ^ m21;
    let m32 = m27 & m31;
    let m29 = m28 & m27;
    let m37 = m21 ^ m29;
    let m42 = m37 ^ m39;
    let m52 = m42 & t15;
    let m61 = m42 & t1;
    let p0 = m52 ^ m61;
    let p16 = m57 ^ m61;
    let m60 = m37 & t20;
    let m51 = m37 & t17;
    let m33 = m27 ^ m25;
    let m38 = m32 ^ m33;
    let m43 = m37 ^ m38;
    let m49 = m43 & t16;
    let p6 = m49 ^ m60;
    let p13 = m49 ^ m51;
    let m58 = m43 & t3;
    let m50 = m38 & t9;
    let m59 = m38 & t22;
    let p1 = m58 ^ m59;
    let p7 = p0 ^ p1;
    let m34 = m21 & m22;
    let m35 = m24 & m34;
    let m40 = m35 ^ m36;
    let m41 = m38 ^ m40;
    let m45 = m42 ^ m41;
    let m53 = m45 & t27;
    let p8 = m50 ^ m53;
    let p23 = p7 ^ p8;
    let m62 = m45 & t4;
    let p14 = m49 ^ m62;
    let s6 = p14 ^ p23;
    let m54 = m41 & t10;
    let p2 = m54 ^ m62;
    let p22 = p2 ^ p7;
    let s0 = p13 ^ p22;
    let p17 = m58 ^ p2;
    let p15 = m54 ^ m59;
    let m63 = m41 & t2;
    let m44 = m39 ^ m40;
    let m46 = m44 & t6;
    let p5 = m46 ^ m51;
    let p18 = m63 ^ p5;
    let p24 = p5 ^ p7;
    let p12 = m46 ^ m48;
    let s3 = p12 ^ p22;
    let m55 = m44 & t13;
    let p9 = m55 ^ m63;
    let s7 = p9 ^ p16;
    let m47 = m40 & t8;
    let p3 = m47 ^ m50;
    let p19 = p2 ^ p3;
    let s5 = p19 ^ p24;
    let p11 = p0 ^ p3;
    let p26 = p9 ^ p11;
    let m56 = m40 & t23;
    let p4 = m48 ^ m56;
    let p20 = p4 ^ p6;
    let p29 = p15 ^ p20;
    let s1 = p26 ^ p29;
    let p10 = m57 ^ p4;
    let p27 = p10 ^ p18;
    let s4 = p23 ^ p27;
    let p25 = p6 ^ p10;
    let p28 = p11 ^ p25;
    let s2 = p17 ^ p28;
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
            let mut shallow = p;
            sub_bytes_no_nots(&mut p);
            sub_bytes_depth16(&mut shallow);
            assert_eq!(shallow, p, "depth 16");
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
            let mut shallow = q;
            inv_sub_bytes_no_nots(&mut q);
            assert_eq!(planes_of(q), bytes);
            inv_sub_bytes_depth16(&mut shallow);
            assert_eq!(planes_of(shallow), bytes, "depth 16");
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
