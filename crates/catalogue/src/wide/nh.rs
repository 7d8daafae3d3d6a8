//! NH and NHPoly1305, Adiantum's bulk hash (Crowley and Biggers, "Adiantum:
//! length-preserving encryption for entry-level processors", ToSC 2018,
//! section 6.3; the Linux kernel's `crypto/nhpoly1305.c`).
//!
//! NH is an almost-universal hash of 32-bit additions and 32x32->64-bit
//! multiplications over 1 KiB chunks with a 1072-byte key, 4 passes (a
//! 32-byte output per chunk); Poly1305 then hashes the chunk outputs. Written
//! as plain loops over fixed-size arrays so that the compiler vectorises them
//! with the baseline instruction set (SSE2 `pmuludq`, NEON `umlal`).

use zeroize::Zeroizing;

use super::poly1305::Poly1305Hash;

/// Bytes NH consumes per step.
pub const NH_UNIT: usize = 16;
/// Bytes of message per NH output (one chunk).
pub const NH_MESSAGE_BYTES: usize = 1024;
/// Bytes of NH key: the chunk plus three more units for the four passes.
pub const NH_KEY_BYTES: usize = NH_MESSAGE_BYTES + 48;
/// Bytes of one NH output: four 64-bit sums.
pub const NH_HASH_BYTES: usize = 32;
/// Bytes of an NHPoly1305 key: the Poly1305 `r`, then the NH key.
pub const NHPOLY1305_KEY_BYTES: usize = 16 + NH_KEY_BYTES;

const KEY_WORDS: usize = NH_KEY_BYTES / 4;

/// NH of one chunk: `msg.len()` a multiple of 16, at most 1024 bytes.
pub fn nh(key: &[u32; KEY_WORDS], msg: &[u8]) -> [u8; NH_HASH_BYTES] {
    assert!(msg.len() <= NH_MESSAGE_BYTES && msg.len().is_multiple_of(NH_UNIT));
    let mut sums = [0u64; 4];
    for (i, unit) in msg.chunks_exact(NH_UNIT).enumerate() {
        let m: [u32; 4] =
            std::array::from_fn(|j| u32::from_le_bytes(unit[4 * j..4 * j + 4].try_into().unwrap()));
        let k = &key[4 * i..4 * i + 16];
        for (pass, sum) in sums.iter_mut().enumerate() {
            let k = &k[4 * pass..4 * pass + 4];
            *sum = sum
                .wrapping_add(
                    u64::from(m[0].wrapping_add(k[0])) * u64::from(m[2].wrapping_add(k[2])),
                )
                .wrapping_add(
                    u64::from(m[1].wrapping_add(k[1])) * u64::from(m[3].wrapping_add(k[3])),
                );
        }
    }
    let mut out = [0u8; NH_HASH_BYTES];
    for (o, s) in out.chunks_exact_mut(8).zip(sums) {
        o.copy_from_slice(&s.to_le_bytes());
    }
    out
}

/// NHPoly1305 keyed once: Poly1305 over the NH outputs of each 1 KiB chunk of
/// the zero-padded message (the kernel's `nhpoly1305`), without Poly1305's mask.
#[derive(Clone)]
pub struct NhPoly1305 {
    poly: Poly1305Hash,
    nh_key: Box<Zeroizing<[u32; KEY_WORDS]>>,
}

impl NhPoly1305 {
    /// Keys the hash with `key`: 16 bytes of Poly1305 `r`, then 1072 of NH key.
    pub fn new(key: &[u8; NHPOLY1305_KEY_BYTES]) -> Self {
        let mut nh_key = Box::new(Zeroizing::new([0u32; KEY_WORDS]));
        for (w, b) in nh_key.iter_mut().zip(key[16..].chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        NhPoly1305 {
            poly: Poly1305Hash::new(key[..16].try_into().expect("16 bytes")),
            nh_key,
        }
    }

    /// The hash of `msg` (any length; zero-padded to whole 16-byte units).
    pub fn hash(&self, msg: &[u8]) -> u128 {
        let mut poly = self.poly.clone();
        poly.reset();
        for chunk in msg.chunks(NH_MESSAGE_BYTES) {
            if chunk.len().is_multiple_of(NH_UNIT) {
                poly.update_blocks(&nh(&self.nh_key, chunk));
            } else {
                // Only the message's last chunk can end inside a unit.
                let mut padded = [0u8; NH_MESSAGE_BYTES];
                padded[..chunk.len()].copy_from_slice(chunk);
                let len = chunk.len().div_ceil(NH_UNIT) * NH_UNIT;
                poly.update_blocks(&nh(&self.nh_key, &padded[..len]));
            }
        }
        poly.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NH straight from the paper's definition, one pass at a time.
    fn nh_reference(key: &[u8], msg: &[u8]) -> [u64; 4] {
        let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        let mut out = [0u64; 4];
        for (pass, o) in out.iter_mut().enumerate() {
            let k = &key[16 * pass..];
            for i in (0..msg.len() / 4).step_by(4) {
                let a = u64::from(w(msg, i).wrapping_add(w(k, i)))
                    * u64::from(w(msg, i + 2).wrapping_add(w(k, i + 2)));
                let b = u64::from(w(msg, i + 1).wrapping_add(w(k, i + 1)))
                    * u64::from(w(msg, i + 3).wrapping_add(w(k, i + 3)));
                *o = o.wrapping_add(a).wrapping_add(b);
            }
        }
        out
    }

    #[test]
    fn nh_equals_the_definition() {
        let key_bytes: Vec<u8> = (0..NH_KEY_BYTES).map(|i| (i * 131 + 7) as u8).collect();
        let mut key = [0u32; KEY_WORDS];
        for (w, b) in key.iter_mut().zip(key_bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes(b.try_into().unwrap());
        }
        for units in [1, 2, 63, 64] {
            let msg: Vec<u8> = (0..units * 16).map(|i| (i * 37 + 255) as u8).collect();
            let got = nh(&key, &msg);
            let want = nh_reference(&key_bytes, &msg);
            for (g, w) in got.chunks_exact(8).zip(want) {
                assert_eq!(
                    u64::from_le_bytes(g.try_into().unwrap()),
                    w,
                    "{units} units"
                );
            }
        }
    }

    #[test]
    fn partial_tails_are_zero_padded() {
        let key: Vec<u8> = (0..NHPOLY1305_KEY_BYTES).map(|i| (i * 7) as u8).collect();
        let h = NhPoly1305::new(key.as_slice().try_into().unwrap());
        for len in [1usize, 15, 17, 1023, 1025, 2047, 3000] {
            let msg: Vec<u8> = (0..len).map(|i| (i * 3 + 1) as u8).collect();
            let mut padded = msg.clone();
            padded.resize(len.div_ceil(16) * 16, 0);
            assert_eq!(h.hash(&msg), h.hash(&padded), "length {len}");
        }
    }
}
