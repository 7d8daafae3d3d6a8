//! The Poly1305 polynomial hash (Bernstein, "The Poly1305-AES
//! message-authentication code", 2005; RFC 8439 section 2.5): `h mod 2^130-5`,
//! truncated to 128 bits. [`Poly1305Hash::finish`] leaves out the addition of
//! `s`: Adiantum adds its own sum, the ChaCha20-Poly1305 AEAD
//! ([`crate::aead`]) the `s` half of its one-time key.
//!
//! It is ours rather than the `poly1305` crate's because that crate picks AVX2
//! from the hardware, which `CLUSTERCRYPT_DISABLE_HWF` must be able to forbid;
//! the crate is the oracle in the tests.
//!
//! Radix 2^64, as OpenSSL's scalar poly1305-armv8 and poly1305-x86_64: `h` is
//! two 64-bit limbs and a third of three bits, `r` two limbs. Clamping clears
//! the low two bits of `r1`, so `h1 * r1 * 2^128 = h1 * (r1 / 4) * 5 (mod p)`
//! is one product by `s1 = r1 + r1 / 4`. A block costs four 64x64->128
//! products, two 64-bit ones and a partial reduction. Elsewhere LLVM makes the
//! `u128` products `mul`/`mulx` (x86-64); on aarch64, where the instruction
//! count per byte is what we measure against OpenSSL and libgcrypt, the block
//! is 27 instructions of inline assembly (about 28.4 per block with the load
//! and the loop, 1.78 per byte).

use zeroize::{Zeroize, Zeroizing};

/// Bytes per Poly1305 block.
pub const BLOCK: usize = 16;

/// Blocks per iteration of the unrolled loop: the loop's three instructions
/// (aarch64) come to under half an instruction per block.
const UNROLL: usize = 8;

/// A clamped Poly1305 key `r` in radix 2^64, with the block function: copied
/// into registers by the loops that absorb many blocks (here and the
/// stitched ChaCha20-Poly1305 of [`crate::chacha::x86_avx2_poly1305`]).
#[derive(Clone, Copy)]
pub(crate) struct Key {
    r0: u64,
    r1: u64,
    /// `r1 + r1 / 4`: the reduction `2^130 = 5 (mod p)` folded into `r1`.
    s1: u64,
}

/// A clamped Poly1305 key `r` and a running hash.
#[derive(Clone)]
pub struct Poly1305Hash {
    key: Key,
    /// `h0 + h1 * 2^64 + h2 * 2^128`, with `h2 <= 4` between blocks.
    h: [u64; 3],
    /// The powers of `r` for the AVX-512 IFMA code, which then absorbs the
    /// long runs of blocks ([`Poly1305Hash::new_ifma`]).
    #[cfg(target_arch = "x86_64")]
    ifma: Option<Box<super::poly1305_ifma::Powers>>,
}

impl Drop for Poly1305Hash {
    fn drop(&mut self) {
        self.key.r0.zeroize();
        self.key.r1.zeroize();
        self.key.s1.zeroize();
        self.h.zeroize();
    }
}

/// 64x64 -> 128-bit product.
#[cfg(not(target_arch = "aarch64"))]
#[inline(always)]
fn mul(a: u64, b: u64) -> u128 {
    u128::from(a) * u128::from(b)
}

/// The 128-bit number of two limbs.
#[inline(always)]
fn join(lo: u64, hi: u64) -> u128 {
    u128::from(lo) | (u128::from(hi) << 64)
}

impl Key {
    /// `r0, r1, s1`, for the stitched code's assembly.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn limbs(self) -> [u64; 3] {
        [self.r0, self.r1, self.s1]
    }

    /// `h = (h + m + pad * 2^128) * r`, partially reduced (`h2 <= 4`).
    ///
    /// Bounds: on entry `h2 <= 4`, so after the addition `h2 <= 6`;
    /// `r0, r1 < 2^60` and `s1 < 2^60 * 5/4` (clamping), so `h2 * s1` and
    /// `h2 * r0` fit 64 bits and each sum of products below fits 128 bits.
    #[cfg(not(target_arch = "aarch64"))]
    #[inline(always)]
    pub(crate) fn absorb(self, h: &mut [u64; 3], m: u128, pad: u64) {
        let (r0, r1, s1) = (self.r0, self.r1, self.s1);
        let (t, c) = join(h[0], h[1]).overflowing_add(m);
        let (h0, h1) = (t as u64, (t >> 64) as u64);
        let h2 = h[2] + pad + u64::from(c);
        let d0 = mul(h0, r0) + mul(h1, s1);
        let d1 = mul(h0, r1) + mul(h1, r0) + u128::from(h2 * s1);
        let d2 = h2 * r0 + (d1 >> 64) as u64;
        // d2 * 2^128 = (d2 & 3) * 2^128 + (d2 >> 2) * 5 (mod p). The high
        // half of `d0` joins after the fold rather than before `d2` (as in
        // libgcrypt's): the next block waits on a shorter chain.
        let fold = (d2 & !3) + (d2 >> 2);
        let (t, c) = join(fold, d1 as u64).overflowing_add(d0);
        *h = [t as u64, (t >> 64) as u64, (d2 & 3) + u64::from(c)];
    }

    /// The same as the portable `absorb` above, in 27 instructions. From the
    /// `u128` code LLVM made 29.5 per block: it merges the two carries into
    /// `h2` (the reduction's and the message's) with a `cset`, an `adc` and
    /// an `add` where `adc xzr` and `adc pad` do.
    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub(crate) fn absorb(self, h: &mut [u64; 3], m: u128, pad: u64) {
        let [mut h0, mut h1, mut h2] = *h;
        // SAFETY: arithmetic on registers only: no memory, no stack; the
        // flags it changes are not preserved across asm! by default.
        unsafe {
            core::arch::asm!(
                // h += m + pad * 2^128
                "adds  {h0}, {h0}, {m0}",
                "adcs  {h1}, {h1}, {m1}",
                "adc   {h2}, {h2}, {pad}",
                // d0 + d1 * 2^64 = h0 * r0 + h1 * s1
                "mul   {d0}, {h0}, {r0}",
                "umulh {d1}, {h0}, {r0}",
                "mul   {t}, {h1}, {s1}",
                "umulh {u}, {h1}, {s1}",
                "adds  {d0}, {d0}, {t}",
                "adc   {d1}, {d1}, {u}",
                // d1 + d2 * 2^64 += h0 * r1 + h1 * r0 + h2 * s1 + h2 * r0 * 2^64
                "mul   {t}, {h0}, {r1}",
                "umulh {d2}, {h0}, {r1}",
                "adds  {d1}, {d1}, {t}",
                "adc   {d2}, {d2}, xzr",
                "mul   {t}, {h1}, {r0}",
                "umulh {u}, {h1}, {r0}",
                "adds  {d1}, {d1}, {t}",
                "adc   {d2}, {d2}, {u}",
                "mul   {t}, {h2}, {s1}",
                "mul   {u}, {h2}, {r0}",
                "adds  {d1}, {d1}, {t}",
                "adc   {d2}, {d2}, {u}",
                // h = d0 + d1 * 2^64 + (d2 & 3) * 2^128 + (d2 >> 2) * 5
                "and   {t}, {d2}, #-4",
                "and   {h2}, {d2}, #3",
                "add   {t}, {t}, {d2}, lsr #2",
                "adds  {h0}, {d0}, {t}",
                "adcs  {h1}, {d1}, xzr",
                "adc   {h2}, {h2}, xzr",
                h0 = inout(reg) h0,
                h1 = inout(reg) h1,
                h2 = inout(reg) h2,
                m0 = in(reg) m as u64,
                m1 = in(reg) (m >> 64) as u64,
                pad = in(reg) pad,
                r0 = in(reg) self.r0,
                r1 = in(reg) self.r1,
                s1 = in(reg) self.s1,
                d0 = out(reg) _,
                d1 = out(reg) _,
                d2 = out(reg) _,
                t = out(reg) _,
                u = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        *h = [h0, h1, h2];
    }
}

impl Poly1305Hash {
    /// A hash keyed with `r` (16 bytes, clamped here as RFC 8439 section 2.5 says).
    pub fn new(r: &[u8; 16]) -> Self {
        let r = u128::from_le_bytes(*r) & 0x0fff_fffc_0fff_fffc_0fff_fffc_0fff_ffff;
        let (r0, r1) = (r as u64, (r >> 64) as u64);
        Poly1305Hash {
            key: Key {
                r0,
                r1,
                s1: r1 + (r1 >> 2),
            },
            h: [0; 3],
            #[cfg(target_arch = "x86_64")]
            ifma: None,
        }
    }

    /// The same hash, absorbing runs of eight or more blocks with AVX-512
    /// IFMA (`crate::wide::poly1305_ifma`).
    ///
    /// # Panics
    /// If this CPU lacks AVX-512 F or IFMA.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn new_ifma(r: &[u8; 16]) -> Self {
        assert!(
            super::poly1305_ifma::runnable(),
            "Poly1305 on AVX-512 IFMA: not on this CPU"
        );
        let mut p = Self::new(r);
        p.ifma = Some(Box::new(super::poly1305_ifma::Powers::new(p.key)));
        p
    }

    /// The key and the running hash, for a loop that keeps them in registers.
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "the stitched AEAD")
    )]
    pub(crate) fn state(&self) -> (Key, [u64; 3]) {
        (self.key, self.h)
    }

    /// Takes back the running hash from [`Poly1305Hash::state`]'s loop.
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(dead_code, reason = "the stitched AEAD")
    )]
    pub(crate) fn set_h(&mut self, h: [u64; 3]) {
        self.h = h;
    }

    /// Starts a new message with the same key.
    pub fn reset(&mut self) {
        self.h = [0; 3];
    }

    /// Absorbs whole 16-byte blocks (`data.len()` must be a multiple of 16).
    pub fn update_blocks(&mut self, data: &[u8]) {
        debug_assert!(data.len().is_multiple_of(BLOCK));
        #[cfg(target_arch = "x86_64")]
        let data = match &self.ifma {
            // SAFETY: `new_ifma` checked that the CPU has AVX-512 F and IFMA.
            Some(p) => &data[unsafe { super::poly1305_ifma::absorb(p, &mut self.h, data) }..],
            None => data,
        };
        let load = |b: &[u8]| u128::from_le_bytes(b.try_into().expect("16 bytes"));
        // The limbs live in registers for the whole loop.
        let mut h = self.h;
        let mut quads = data.chunks_exact(UNROLL * BLOCK);
        for q in &mut quads {
            for b in q.chunks_exact(BLOCK) {
                self.key.absorb(&mut h, load(b), 1);
            }
        }
        for b in quads.remainder().chunks_exact(BLOCK) {
            self.key.absorb(&mut h, load(b), 1);
        }
        self.h = h;
    }

    /// Absorbs the whole blocks of `data` and returns the rest (0-15 bytes)
    /// copied into a zeroed block, if there is one.
    fn whole_blocks_then_rest(&mut self, data: &[u8]) -> Option<(Zeroizing<[u8; BLOCK]>, usize)> {
        let whole = data.len() / BLOCK * BLOCK;
        self.update_blocks(&data[..whole]);
        let rest = &data[whole..];
        (!rest.is_empty()).then(|| {
            let mut last = Zeroizing::new([0u8; BLOCK]);
            last[..rest.len()].copy_from_slice(rest);
            (last, rest.len())
        })
    }

    /// Absorbs `data` zero-padded to a multiple of 16 bytes, every block a
    /// full one: the `pad16` of the ChaCha20-Poly1305 MAC input (RFC 8439
    /// section 2.8).
    pub fn update_padded(&mut self, data: &[u8]) {
        if let Some((last, _)) = self.whole_blocks_then_rest(data) {
            self.update_blocks(&*last);
        }
    }

    /// Absorbs a whole message: full blocks, then a last partial block padded
    /// with a 1 byte and zeros as Poly1305 pads it (RFC 8439 section 2.5.1).
    pub fn update_message(&mut self, data: &[u8]) {
        if let Some((mut last, len)) = self.whole_blocks_then_rest(data) {
            last[len] = 1;
            let mut h = self.h;
            self.key.absorb(&mut h, u128::from_le_bytes(*last), 0);
            self.h = h;
        }
    }

    /// `h mod 2^130-5`, low 128 bits, as a little-endian number; constant time.
    pub fn finish(&self) -> u128 {
        let [h0, h1, h2] = self.h;
        // h2 <= 4: one fold leaves h < 2^130 + 5, so one conditional
        // subtraction of p reduces it fully.
        let (h, c) = join(h0, h1).overflowing_add(u128::from((h2 >> 2) * 5));
        let h2 = (h2 & 3) + u64::from(c);
        // g = h + 5 - 2^130: taken when h + 5 reaches 2^130 (h >= p).
        let (g, c) = h.overflowing_add(5);
        let take_g = 0u128.wrapping_sub(u128::from((h2 + u64::from(c)) >> 2));
        (h & !take_g) | (g & take_g)
    }

    /// The Poly1305 tag: `finish() + s mod 2^128` (RFC 8439 section 2.5).
    pub fn tag(&self, s: &[u8; 16]) -> [u8; 16] {
        self.finish()
            .wrapping_add(u128::from_le_bytes(*s))
            .to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hex_literal::hex;
    use poly1305::universal_hash::KeyInit;

    /// The `poly1305` crate with `s = 0` computes exactly our hash.
    fn oracle(r: &[u8; 16], msg: &[u8]) -> u128 {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(r);
        let tag = poly1305::Poly1305::new(&key.into()).compute_unpadded(msg);
        u128::from_le_bytes(tag.into())
    }

    /// xorshift64: reproducible cases without a dependency.
    fn rng(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn rfc8439_2_5_2() {
        // RFC 8439 section 2.5.2: key r || s, the message, and the tag.
        let key = hex!(
            "85d6be7857556d337f4452fe42d506a8"
            "0103808afb0db2fd4abff6af4149f51b"
        );
        let mut p = Poly1305Hash::new(key[..16].try_into().unwrap());
        p.update_message(b"Cryptographic Forum Research Group");
        let tag = hex!("a8061dc1305136c6c22b8baf0c0127a9");
        assert_eq!(p.tag(key[16..].try_into().unwrap()), tag);
        // The same with s subtracted back out.
        let s = u128::from_le_bytes(key[16..].try_into().unwrap());
        assert_eq!(p.finish().wrapping_add(s), u128::from_le_bytes(tag));
    }

    /// RFC 8439 Appendix A.3, test vectors #1 (all zero) and #5 to #11: the
    /// edge cases of the reduction (h near and above p, carries through all
    /// limbs). Each is (key r || s, message, tag).
    #[test]
    fn rfc8439_appendix_a3() {
        let zero = [0u8; 64];
        let cases: [(&[u8; 32], &[u8], [u8; 16]); 8] = [
            (&[0; 32], &zero, [0; 16]),
            (
                &hex!("0200000000000000000000000000000000000000000000000000000000000000"),
                &hex!("ffffffffffffffffffffffffffffffff"),
                hex!("03000000000000000000000000000000"),
            ),
            (
                &hex!("02000000000000000000000000000000ffffffffffffffffffffffffffffffff"),
                &hex!("02000000000000000000000000000000"),
                hex!("03000000000000000000000000000000"),
            ),
            (
                &hex!("0100000000000000000000000000000000000000000000000000000000000000"),
                &hex!(
                    "ffffffffffffffffffffffffffffffff"
                    "f0ffffffffffffffffffffffffffffff"
                    "11000000000000000000000000000000"
                ),
                hex!("05000000000000000000000000000000"),
            ),
            (
                &hex!("0100000000000000000000000000000000000000000000000000000000000000"),
                &hex!(
                    "ffffffffffffffffffffffffffffffff"
                    "fbfefefefefefefefefefefefefefefe"
                    "01010101010101010101010101010101"
                ),
                hex!("00000000000000000000000000000000"),
            ),
            (
                &hex!("0200000000000000000000000000000000000000000000000000000000000000"),
                &hex!("fdffffffffffffffffffffffffffffff"),
                hex!("faffffffffffffffffffffffffffffff"),
            ),
            (
                &hex!("0100000000000000040000000000000000000000000000000000000000000000"),
                &hex!(
                    "e33594d7505e43b90000000000000000"
                    "3394d7505e4379cd0100000000000000"
                    "00000000000000000000000000000000"
                    "01000000000000000000000000000000"
                ),
                hex!("14000000000000005500000000000000"),
            ),
            (
                &hex!("0100000000000000040000000000000000000000000000000000000000000000"),
                &hex!(
                    "e33594d7505e43b90000000000000000"
                    "3394d7505e4379cd0100000000000000"
                    "00000000000000000000000000000000"
                ),
                hex!("13000000000000000000000000000000"),
            ),
        ];
        for (i, (key, msg, tag)) in cases.iter().enumerate() {
            let mut p = Poly1305Hash::new(key[..16].try_into().unwrap());
            p.update_message(msg);
            assert_eq!(p.tag(key[16..].try_into().unwrap()), *tag, "case {i}");
        }
    }

    #[test]
    fn equals_the_crate_on_random_messages() {
        let mut next = rng(0x1234_5678_9abc_def0);
        for len in (0..300).chain([511, 512, 1024, 4095, 4096, 16_384 + 17]) {
            let mut r = [0u8; 16];
            r.iter_mut().for_each(|b| *b = next() as u8);
            let msg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut p = Poly1305Hash::new(&r);
            p.update_message(&msg);
            assert_eq!(p.finish(), oracle(&r, &msg), "length {len}");
            // Split anywhere on a block boundary: the same hash.
            let cut = (next() as usize % (len / BLOCK + 1)) * BLOCK;
            let mut q = Poly1305Hash::new(&r);
            q.update_blocks(&msg[..cut]);
            q.update_message(&msg[cut..]);
            assert_eq!(q.finish(), p.finish(), "length {len} cut {cut}");
        }
    }

    #[test]
    fn padded_equals_the_crates_padded() {
        let mut next = rng(0x0bad_cafe_f00d_1234);
        for len in (0..100usize).chain([1000, 4097]) {
            let mut key = [0u8; 32];
            key.iter_mut().for_each(|b| *b = next() as u8);
            let msg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut p = Poly1305Hash::new(key[..16].try_into().unwrap());
            p.update_padded(&msg);
            let want = poly1305::Poly1305::new(&key.into()).compute_unpadded(&{
                let mut m = msg.clone();
                m.resize(len.div_ceil(BLOCK) * BLOCK, 0);
                m
            });
            assert_eq!(
                p.tag(key[16..].try_into().unwrap()),
                want.as_slice(),
                "{len}"
            );
        }
    }

    /// The AVX-512 IFMA code (eight blocks a step) against the crate: random
    /// keys and lengths across step edges, a hash carried in from blocks
    /// before, and the largest keys and blocks, where every limb is at its
    /// bound.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ifma_equals_the_crate() {
        if !crate::wide::poly1305_ifma::runnable() {
            println!("note: Poly1305 on AVX-512 IFMA not tested: not on this CPU");
            return;
        }
        let mut next = rng(0x1f3a_0305_cafe_d00d);
        let mut cases: Vec<([u8; 16], Vec<u8>)> = Vec::new();
        for len in (0..600).chain([1023, 1024, 1025, 4096 + 5, 16_384, 65_536 + 31]) {
            let mut r = [0u8; 16];
            r.iter_mut().for_each(|b| *b = next() as u8);
            cases.push((r, (0..len).map(|_| next() as u8).collect()));
        }
        for r in [[0xff; 16], [0x0f; 16]] {
            for n in [8, 9, 16, 17, 64, 200] {
                cases.push((r, vec![0xff; 16 * n + 3]));
            }
        }
        for (r, msg) in &cases {
            let len = msg.len();
            let mut p = Poly1305Hash::new_ifma(r);
            p.update_message(msg);
            assert_eq!(p.finish(), oracle(r, msg), "length {len}");
            // Blocks before the vector code: h arrives non-zero.
            let cut = (next() as usize % (len / BLOCK + 1)) * BLOCK;
            let mut q = Poly1305Hash::new_ifma(r);
            q.update_blocks(&msg[..cut]);
            q.update_blocks(&msg[cut..len / BLOCK * BLOCK]);
            q.update_message(&msg[len / BLOCK * BLOCK..]);
            assert_eq!(q.finish(), p.finish(), "length {len} cut {cut}");
        }
    }

    #[test]
    fn reduces_values_at_and_above_p() {
        // All-ones blocks with the largest r drive h near 2^130 and past p;
        // so do the all-ones partial blocks.
        for r in [[0xff; 16], [0xf0; 16], [0x0f; 16]] {
            for n in 1..40 {
                for tail in [0, 1, 15] {
                    let msg = vec![0xff; 16 * n + tail];
                    let mut p = Poly1305Hash::new(&r);
                    p.update_message(&msg);
                    assert_eq!(p.finish(), oracle(&r, &msg), "{n} blocks + {tail}");
                }
            }
        }
    }
}
