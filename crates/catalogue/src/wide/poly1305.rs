//! The Poly1305 polynomial hash without its final mask: `h mod 2^130-5`,
//! truncated to 128 bits (Bernstein, "The Poly1305-AES message-authentication
//! code", 2005; RFC 8439 section 2.5 without the addition of `s`).
//!
//! Adiantum uses it twice per sector over a few blocks (the header and the NH
//! outputs), so its speed does not matter; it is ours rather than the
//! `poly1305` crate's because that crate picks AVX2 from the hardware, which
//! `CLUSTERCRYPT_DISABLE_HWF` must be able to forbid. The crate is the oracle
//! in the tests. Radix 2^44 with 128-bit products (poly1305-donna-64).

use zeroize::Zeroize;

const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// A clamped Poly1305 key `r` and a running hash.
#[derive(Clone)]
pub struct Poly1305Hash {
    r: [u64; 3],
    /// `r1 * 20`, `r2 * 20`: the reduction `2^130 = 5 (mod p)` folded into `r`.
    s: [u64; 2],
    h: [u64; 3],
}

impl Drop for Poly1305Hash {
    fn drop(&mut self) {
        self.r.zeroize();
        self.s.zeroize();
        self.h.zeroize();
    }
}

impl Poly1305Hash {
    /// A hash keyed with `r` (16 bytes, clamped here as RFC 8439 says).
    pub fn new(r: &[u8; 16]) -> Self {
        let t0 = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
        let t1 = u64::from_le_bytes(r[8..].try_into().expect("8 bytes"));
        let r0 = t0 & 0xffc_0fff_ffff;
        let r1 = ((t0 >> 44) | (t1 << 20)) & 0xfff_ffc0_ffff;
        let r2 = (t1 >> 24) & 0x00f_ffff_fc0f;
        Poly1305Hash {
            r: [r0, r1, r2],
            s: [r1 * 20, r2 * 20],
            h: [0; 3],
        }
    }

    /// Starts a new message with the same key.
    pub fn reset(&mut self) {
        self.h = [0; 3];
    }

    /// Absorbs one 16-byte block; `hibit` is 1 for a full block, 0 for a padded last one.
    #[inline]
    fn block(&mut self, m: &[u8; 16], hibit: u64) {
        let t0 = u64::from_le_bytes(m[..8].try_into().expect("8 bytes"));
        let t1 = u64::from_le_bytes(m[8..].try_into().expect("8 bytes"));
        let [r0, r1, r2] = self.r;
        let [s1, s2] = self.s;
        let h0 = self.h[0] + (t0 & M44);
        let h1 = self.h[1] + (((t0 >> 44) | (t1 << 20)) & M44);
        let h2 = self.h[2] + (((t1 >> 24) & M42) | (hibit << 40));
        let m = |a: u64, b: u64| u128::from(a) * u128::from(b);
        let d0 = m(h0, r0) + m(h1, s2) + m(h2, s1);
        let mut d1 = m(h0, r1) + m(h1, r0) + m(h2, s2);
        let mut d2 = m(h0, r2) + m(h1, r1) + m(h2, r0);
        d1 += d0 >> 44;
        let h0 = (d0 as u64) & M44;
        d2 += d1 >> 44;
        let h1 = (d1 as u64) & M44;
        let c = (d2 >> 42) as u64;
        let h2 = (d2 as u64) & M42;
        let h0 = h0 + c * 5;
        self.h = [h0 & M44, h1 + (h0 >> 44), h2];
    }

    /// Absorbs whole 16-byte blocks (`data.len()` must be a multiple of 16).
    pub fn update_blocks(&mut self, data: &[u8]) {
        debug_assert!(data.len().is_multiple_of(16));
        for b in data.chunks_exact(16) {
            self.block(b.try_into().expect("16 bytes"), 1);
        }
    }

    /// Absorbs a whole message: full blocks, then a last partial block padded
    /// with a 1 byte and zeros as Poly1305 pads it.
    pub fn update_message(&mut self, data: &[u8]) {
        let whole = data.len() / 16 * 16;
        self.update_blocks(&data[..whole]);
        let rest = &data[whole..];
        if !rest.is_empty() {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            last[rest.len()] = 1;
            self.block(&last, 0);
        }
    }

    /// `h mod 2^130-5`, low 128 bits, as a little-endian number.
    pub fn finish(&self) -> u128 {
        let [mut h0, mut h1, mut h2] = self.h;
        // Carry fully, twice: h < 2^130 + small.
        for _ in 0..2 {
            h2 += h1 >> 44;
            h1 &= M44;
            h0 += (h2 >> 42) * 5;
            h2 &= M42;
            h1 += h0 >> 44;
            h0 &= M44;
        }
        // g = h + 5 - 2^130; take it when it does not borrow (h >= p).
        let g0 = h0 + 5;
        let g1 = h1 + (g0 >> 44);
        let g2 = (h2 + (g1 >> 44)).wrapping_sub(1 << 42);
        let (g0, g1) = (g0 & M44, g1 & M44);
        let take_g = (g2 >> 63).wrapping_sub(1); // all ones when g2 did not borrow
        let h0 = (h0 & !take_g) | (g0 & take_g);
        let h1 = (h1 & !take_g) | (g1 & take_g);
        let h2 = (h2 & !take_g) | (g2 & take_g);
        u128::from(h0) | (u128::from(h1) << 44) | (u128::from(h2) << 88)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poly1305::universal_hash::KeyInit;

    /// The `poly1305` crate with `s = 0` computes exactly our hash.
    fn oracle(r: &[u8; 16], msg: &[u8]) -> u128 {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(r);
        let tag = poly1305::Poly1305::new(&key.into()).compute_unpadded(msg);
        u128::from_le_bytes(tag.into())
    }

    #[test]
    fn rfc8439_2_5_2_without_s() {
        // RFC 8439 section 2.5.2: tag = h + s; here s is subtracted back out.
        let r = hex_literal::hex!("85d6be7857556d337f4452fe42d506a8");
        let s = u128::from_le_bytes(hex_literal::hex!("0103808afb0db2fd4abff6af4149f51b"));
        let tag = u128::from_le_bytes(hex_literal::hex!("a8061dc1305136c6c22b8baf0c0127a9"));
        let mut p = Poly1305Hash::new(&r);
        p.update_message(b"Cryptographic Forum Research Group");
        assert_eq!(p.finish().wrapping_add(s), tag);
    }

    #[test]
    fn equals_the_crate_on_random_messages() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in (0..200).chain([255, 256, 1024, 4095]) {
            let mut r = [0u8; 16];
            r.iter_mut().for_each(|b| *b = next() as u8);
            let msg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut p = Poly1305Hash::new(&r);
            p.update_message(&msg);
            assert_eq!(p.finish(), oracle(&r, &msg), "length {len}");
        }
    }

    #[test]
    fn reduces_values_at_and_above_p() {
        // All-ones blocks with the largest r drive h near 2^130 and past p.
        let r = [0xff; 16];
        for n in 1..40 {
            let msg = vec![0xff; 16 * n];
            let mut p = Poly1305Hash::new(&r);
            p.update_message(&msg);
            assert_eq!(p.finish(), oracle(&r, &msg), "{n} blocks");
        }
    }
}
