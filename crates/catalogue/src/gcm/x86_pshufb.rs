//! GHASH as POLYVAL without a carry-less multiply (x86-64 with SSSE3 but no
//! PCLMULQDQ: the `portable` tier), constant time.
//!
//! The classic GHASH multiplies by 4-bit windows: a table of the 16 products
//! `n(x)·P` indexed by each nibble of the input. Indexing a table in memory
//! with secret nibbles leaks them (and so `H`) through the cache, which is
//! why OpenSSL's `gcm_ghash_4bit` is not constant time. Here, as in
//! BoringSSL's `ghash-ssse3-x86_64.pl` (D. Benjamin, 2019), the table is
//! transposed: row `r` holds byte `r` of all 16 products, and PSHUFB looks up
//! all 16 nibbles of a block in a register at once, reading every row in the
//! same order whatever the data. In POLYVAL's bit order (bit `i` of the
//! little-endian `u128` is the coefficient of `x^i`) the product
//! `dot(Y, P) = Y·P·x^-128` is a Horner scheme over the rows that only ever
//! multiplies by `x^-8` and `x^-4`, that is shifts right: the bits that fall
//! off the bottom collect in a carry register, folded back
//! (`x^-128 = 1 + x^-1 + x^-2 + x^-7`) every few rows.
//!
//! Four blocks per pass, each times its own power of `H` (`H^4..H^1`, four
//! tables, 1 KiB): their lookups are summed row by row before the shifts, so
//! the shifts and folds are shared and four independent lookup chains keep
//! the vector units busy, where one block at a time is a chain of 16
//! dependent rows.

use core::arch::x86_64::*;

use zeroize::Zeroize;

/// One power `P`'s table, transposed: `rows[r][n]` is byte `r` of
/// `n(x)·P·x^-4 mod g` (the `x^-4` pays for the high nibbles' shift, see
/// [`mul_sum`]).
pub(crate) type Table = [[u8; 16]; 16];

/// Blocks per pass.
pub(super) const BATCH: usize = 4;

/// `x^-1 mod g`, for `g = x^128 + x^127 + x^126 + x^121 + 1`:
/// `x · (x^127 + x^126 + x^125 + x^120) = 1 mod g`.
const X_INV: u128 = (1 << 127) | (1 << 126) | (1 << 125) | (1 << 120);

/// `v · x^-1` in POLYVAL's field, constant time.
fn div_x(v: u128) -> u128 {
    (v >> 1) ^ ((v & 1).wrapping_neg() & X_INV)
}

/// `a · b · x^-128` (POLYVAL's product) bit by bit, constant time: for the
/// key's powers, once per key.
pub(crate) fn dot(a: u128, b: u128) -> u128 {
    let mut acc = 0u128;
    for i in 0..128 {
        acc ^= ((a >> i) & 1).wrapping_neg() & b;
        acc = div_x(acc);
    }
    acc
}

/// The transposed table of `p` (see [`Table`]).
pub(crate) fn table(p: u128) -> Table {
    let mut q = p;
    for _ in 0..4 {
        q = div_x(q);
    }
    // q · x^j for j < 4, then every n(x)·q as the XOR of its bits' terms.
    let mut xq = [q; 4];
    for j in 1..4 {
        xq[j] = super::mul_x(xq[j - 1]);
    }
    let mut entries = [0u128; 16];
    for (n, e) in entries.iter_mut().enumerate() {
        for (j, t) in xq.iter().enumerate() {
            *e ^= ((n as u128 >> j) & 1).wrapping_neg() & t;
        }
    }
    let mut rows = [[0u8; 16]; 16];
    for (r, row) in rows.iter_mut().enumerate() {
        for (b, e) in row.iter_mut().zip(&entries) {
            *b = e.to_le_bytes()[r];
        }
    }
    entries.zeroize();
    xq.zeroize();
    q.zeroize();
    rows
}

/// `sum over b of dot(y[b], P_b)` for the powers whose tables are `t`.
///
/// Row by row, `r = 0..16`: `acc = acc·x^-8 + H_r + L_r·x^-4`, where lane
/// `k` of `L_r` (`H_r`) is byte `r` of the table entry of block byte `k`'s
/// low (high) nibble. Unrolled, that is `sum_k y_k·Q·x^(8k-124)` for the
/// tables' `Q = P·x^-4`, which is `Y·P·x^-128`. The pair (`acc`, `carry`) is
/// `acc + carry·x^-128`, shifted right as one 256-bit number; `carry` only
/// fills from the top and is folded in every 5-6 rows, before its bits come
/// within 7 of the 64-bit lane boundary that PSRLQ cannot cross.
#[inline]
#[target_feature(enable = "ssse3")]
fn mul_sum<const N: usize>(y: [__m128i; N], t: [&Table; N]) -> __m128i {
    let low4 = _mm_set1_epi8(0x0f);
    let mut lo = [_mm_setzero_si128(); N];
    let mut hi = [_mm_setzero_si128(); N];
    for b in 0..N {
        lo[b] = _mm_and_si128(y[b], low4);
        hi[b] = _mm_and_si128(_mm_srli_epi32::<4>(y[b]), low4);
    }
    let mut acc = _mm_setzero_si128();
    let mut carry = _mm_setzero_si128();
    let mut r = 0;
    for rows in [5, 5, 6] {
        for _ in 0..rows {
            // acc·x^-8: the byte falling off `acc` enters `carry` at the top.
            carry = _mm_alignr_epi8::<1>(acc, carry);
            acc = _mm_srli_si128::<1>(acc);
            let mut sl = _mm_setzero_si128();
            let mut sh = _mm_setzero_si128();
            for b in 0..N {
                // SAFETY: `r < 16` indexes a 16-byte row; unaligned load.
                let row = unsafe { _mm_loadu_si128(t[b][r].as_ptr().cast()) };
                sl = _mm_xor_si128(sl, _mm_shuffle_epi8(row, lo[b]));
                sh = _mm_xor_si128(sh, _mm_shuffle_epi8(row, hi[b]));
            }
            acc = _mm_xor_si128(acc, sh);
            // sl·x^-4: PSRLQ shifts each 64-bit half; the low nibble of the
            // high half moves to the top of the low half, the low nibble of
            // the low half drops into `carry`.
            let out = _mm_slli_epi64::<60>(sl);
            carry = _mm_xor_si128(carry, _mm_slli_si128::<8>(out));
            acc = _mm_xor_si128(acc, _mm_srli_si128::<8>(out));
            acc = _mm_xor_si128(acc, _mm_srli_epi64::<4>(sl));
            r += 1;
        }
        // carry·x^-128 = carry·(1 + x^-1 + x^-2 + x^-7): its bits are all
        // at 72 or above, so the shifts drop nothing.
        acc = _mm_xor_si128(acc, carry);
        carry = _mm_srli_epi64::<1>(carry);
        acc = _mm_xor_si128(acc, carry);
        carry = _mm_srli_epi64::<1>(carry);
        acc = _mm_xor_si128(acc, carry);
        carry = _mm_srli_epi64::<5>(carry);
        acc = _mm_xor_si128(acc, carry);
        carry = _mm_setzero_si128();
    }
    acc
}

/// A GHASH block (16 bytes) in POLYVAL's byte order.
#[inline]
#[target_feature(enable = "ssse3")]
fn load(block: &[u8], rev: __m128i) -> __m128i {
    debug_assert_eq!(block.len(), 16);
    // SAFETY: `block` is 16 bytes; unaligned load.
    _mm_shuffle_epi8(unsafe { _mm_loadu_si128(block.as_ptr().cast()) }, rev)
}

/// Absorbs the whole blocks of `data` into `acc` (POLYVAL form); `tables`
/// are those of `H^1..H^4`, in that order.
///
/// # Safety
/// The CPU must have SSSE3.
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn update(acc: &mut u128, tables: &[Table; BATCH], data: &[u8]) {
    debug_assert_eq!(data.len() % 16, 0);
    let rev = super::x86_pclmul::rev128();
    // SAFETY: u128 and __m128i are both 16 bytes of plain data.
    let mut a: __m128i = unsafe { core::mem::transmute::<u128, __m128i>(*acc) };
    let mut batches = data.chunks_exact(16 * BATCH);
    for batch in &mut batches {
        let mut y = [_mm_setzero_si128(); BATCH];
        for (v, block) in y.iter_mut().zip(batch.chunks_exact(16)) {
            *v = load(block, rev);
        }
        y[0] = _mm_xor_si128(y[0], a);
        a = mul_sum(y, [&tables[3], &tables[2], &tables[1], &tables[0]]);
    }
    for block in batches.remainder().chunks_exact(16) {
        a = mul_sum([_mm_xor_si128(load(block, rev), a)], [&tables[0]]);
    }
    // SAFETY: as above.
    *acc = unsafe { core::mem::transmute::<__m128i, u128>(a) };
}
