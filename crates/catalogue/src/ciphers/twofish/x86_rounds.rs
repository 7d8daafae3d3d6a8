//! The rounds of Twofish's vector kernels ([`super::x86_avx2`],
//! [`super::x86_gfni`]), generic over the register: word `j` of a
//! register's blocks in word register `j`, `S` sets of four interleaved.

/// A register of words, one per block, and what the rounds do with it. The
/// methods run only inside the kernels, compiled with their features.
pub(super) trait Words: Copy {
    /// What `g` needs (tables, constants), made once a call.
    type G;
    /// `self ^ o`, per word.
    unsafe fn xor(self, o: Self) -> Self;
    /// `self + o` modulo 2^32, per word.
    unsafe fn add(self, o: Self) -> Self;
    /// Rotation left by one bit, per word.
    unsafe fn rol1(self) -> Self;
    /// Rotation right by one bit, per word.
    unsafe fn ror1(self) -> Self;
    /// `k` in every word.
    unsafe fn splat(k: u32) -> Self;
    /// `g(self)`, or with `rot` `g(self <<< 8)`, per word.
    unsafe fn g(self, g: &Self::G, rot: bool) -> Self;
}

/// `g` of words `a` (plain) and `b` (rotated), through the pseudo-Hadamard
/// transform with round keys `k0`, `k1`: `(t0 + t1 + k0, t0 + 2 t1 + k1)`.
#[inline(always)]
unsafe fn f<V: Words>(g: &V::G, a: V, b: V, k0: u32, k1: u32) -> (V, V) {
    // SAFETY: inside a kernel, with its features.
    unsafe {
        let t0 = a.g(g, false);
        let t1 = b.g(g, true);
        let f0 = t0.add(t1);
        (f0.add(V::splat(k0)), f0.add(t1).add(V::splat(k1)))
    }
}

#[inline(always)]
unsafe fn xor_keys<V: Words, const S: usize>(x: &mut [[V; 4]; S], k: &[u32]) {
    // SAFETY: inside a kernel, with its features.
    unsafe {
        for set in x.iter_mut() {
            for (w, &k) in set.iter_mut().zip(k) {
                *w = w.xor(V::splat(k));
            }
        }
    }
}

/// Encrypts the blocks whose words are `x` under round keys `k`.
///
/// # Safety
///
/// The CPU must have `V`'s features (the caller is compiled with them).
#[inline(always)]
pub(super) unsafe fn encrypt<V: Words, const S: usize>(
    g: &V::G,
    k: &[u32; 40],
    x: &mut [[V; 4]; S],
) {
    // SAFETY: as the caller promised.
    unsafe {
        xor_keys(x, &k[..4]);
        for r in 0..8 {
            let rk = &k[8 + 4 * r..12 + 4 * r];
            for b in x.iter_mut() {
                let (f0, f1) = f(g, b[0], b[1], rk[0], rk[1]);
                b[2] = b[2].xor(f0).ror1();
                b[3] = b[3].rol1().xor(f1);
            }
            for b in x.iter_mut() {
                let (f0, f1) = f(g, b[2], b[3], rk[2], rk[3]);
                b[0] = b[0].xor(f0).ror1();
                b[1] = b[1].rol1().xor(f1);
            }
        }
        // Undo the last swap and apply output whitening.
        for b in x.iter_mut() {
            *b = [b[2], b[3], b[0], b[1]];
        }
        xor_keys(x, &k[4..8]);
    }
}

/// Decrypts the blocks whose words are `x` under round keys `k`.
///
/// # Safety
///
/// As [`encrypt`].
#[inline(always)]
pub(super) unsafe fn decrypt<V: Words, const S: usize>(
    g: &V::G,
    k: &[u32; 40],
    x: &mut [[V; 4]; S],
) {
    // SAFETY: as the caller promised.
    unsafe {
        xor_keys(x, &k[4..8]);
        for b in x.iter_mut() {
            *b = [b[2], b[3], b[0], b[1]];
        }
        for r in (0..8).rev() {
            let rk = &k[8 + 4 * r..12 + 4 * r];
            for b in x.iter_mut() {
                let (f0, f1) = f(g, b[2], b[3], rk[2], rk[3]);
                b[0] = b[0].rol1().xor(f0);
                b[1] = b[1].xor(f1).ror1();
            }
            for b in x.iter_mut() {
                let (f0, f1) = f(g, b[0], b[1], rk[0], rk[1]);
                b[2] = b[2].rol1().xor(f0);
                b[3] = b[3].xor(f1).ror1();
            }
        }
        xor_keys(x, &k[..4]);
    }
}
