//! Portable ChaCha: one block at a time (RFC 8439 section 2.3).

use zeroize::Zeroize;

/// The quarter round (RFC 8439 section 2.1).
#[inline(always)]
pub(super) fn qr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// `R` rounds (`R / 2` column + diagonal double rounds), no feed-forward.
pub(super) fn rounds<const R: usize>(s: &mut [u32; 16]) {
    for _ in 0..R / 2 {
        qr(s, 0, 4, 8, 12);
        qr(s, 1, 5, 9, 13);
        qr(s, 2, 6, 10, 14);
        qr(s, 3, 7, 11, 15);
        qr(s, 0, 5, 10, 15);
        qr(s, 1, 6, 11, 12);
        qr(s, 2, 7, 8, 13);
        qr(s, 3, 4, 9, 14);
    }
}

/// The block function: rounds plus the input added back.
pub(super) fn block<const R: usize>(st: &[u32; 16], out: &mut [u32; 16]) {
    *out = *st;
    rounds::<R>(out);
    for (o, i) in out.iter_mut().zip(st) {
        *o = o.wrapping_add(*i);
    }
}

/// XORs the key stream of `st` (counter in word 12) into `data`.
pub(super) fn xor_keystream<const R: usize>(st: &[u32; 16], data: &mut [u8]) {
    let mut s = *st;
    let mut ks = [0u32; 16];
    for chunk in data.chunks_mut(super::BLOCK) {
        block::<R>(&s, &mut ks);
        super::xor_block_words(&ks, chunk);
        s[12] = s[12].wrapping_add(1);
    }
    ks.zeroize();
    s.zeroize();
}
