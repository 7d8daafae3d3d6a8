//! The AES modes written once over a vector of 1, 2 or 4 AES blocks
//! ([`Lanes`]), instantiated by the AES-NI (xmm), VAES-256 (ymm) and VAES-512
//! (zmm) backends inside their `#[target_feature]` entry points, where every
//! `#[inline(always)]` helper here inlines into straight-line code with the
//! round keys in registers.
//!
//! Each kernel handles the whole vectors of its input (`W` vectors per batch,
//! then one vector at a time) and returns how many blocks it did; the entry
//! points finish the last blocks with the 128-bit instance.
//! Constructions: NIST SP 800-38A (ECB, CBC, CTR), IEEE 1619-2018 (XTS).

/// Most round keys AES has (AES-256: 14 rounds + 1).
pub(super) const MAX_KEYS: usize = 15;

/// A vector of `N` AES blocks and the operations the modes need.
///
/// # Safety
/// Every method needs the CPU features of its implementation; callers run
/// them only inside functions compiled with those features, after checking
/// the CPU has them.
pub(super) trait Lanes: Copy {
    /// Blocks per vector.
    const N: usize;
    /// Loads `16 * N` bytes (any alignment).
    unsafe fn load(p: *const u8) -> Self;
    /// Stores `16 * N` bytes (any alignment).
    unsafe fn store(self, p: *mut u8);
    /// The same 16 bytes in every lane.
    unsafe fn splat(b: &[u8; 16]) -> Self;
    /// Bitwise XOR.
    unsafe fn xor(self, o: Self) -> Self;
    /// One AES encryption round (AESENC).
    unsafe fn enc(self, k: Self) -> Self;
    /// The last encryption round (AESENCLAST).
    unsafe fn enc_last(self, k: Self) -> Self;
    /// One round of the equivalent inverse cipher (AESDEC).
    unsafe fn dec(self, k: Self) -> Self;
    /// The last decryption round (AESDECLAST).
    unsafe fn dec_last(self, k: Self) -> Self;
    /// Adds 64-bit lanes.
    unsafe fn add64(self, o: Self) -> Self;
    /// Reverses the bytes of each 128-bit lane.
    unsafe fn bswap(self) -> Self;
    /// Shifts each 64-bit lane left by `k`.
    unsafe fn shl64(self, k: i32) -> Self;
    /// Shifts each 64-bit lane right by `k`.
    unsafe fn shr64(self, k: i32) -> Self;
    /// Swaps the two 64-bit halves of each 128-bit lane.
    unsafe fn swap64(self) -> Self;
    /// Bitwise AND.
    unsafe fn and(self, o: Self) -> Self;
    /// Each lane's 32-bit words 3, 3, 1, 1 (PSHUFD 0x5f): the words whose top
    /// bits leave the two 64-bit halves when the lane doubles.
    unsafe fn signs(self) -> Self;
    /// Each 32-bit word's top bit spread over the word (PSRAD 31).
    unsafe fn spread(self) -> Self;
    /// For CBC decryption, the ciphertext blocks before those of the vector
    /// at `p`: `chain`, then the blocks at `p` but the last. `before` is the
    /// vector that stood before `p`, whose last block is `chain` (the batch
    /// before has stored its plaintext over it). By default put together in
    /// memory, which compiles to one insert for two blocks a vector; VAES-512
    /// shifts `before` in instead (one `valignq`, where the insert took five
    /// shuffles).
    #[inline(always)]
    unsafe fn previous(p: *const u8, before: Self, chain: &[u8; 16]) -> Self {
        let _ = before;
        let mut buf = [[0u8; 16]; 4];
        buf[0] = *chain;
        // SAFETY: the caller's `p` has N blocks; `buf` holds 4 >= N.
        unsafe {
            core::ptr::copy_nonoverlapping(p, buf[1].as_mut_ptr(), 16 * (Self::N - 1));
            Self::load(buf.as_ptr().cast())
        }
    }

    /// Multiplies every lane by α^k (see [`mul_alpha_k`], whose operations
    /// this default runs); `poly` holds 0x87 in each lane's low 64 bits.
    /// Backends with a carry-less multiply fold the bits that leave the top
    /// with one, in 6 instructions instead of 11.
    #[inline(always)]
    unsafe fn mul_alpha(self, k: i32, low: Self, poly: Self) -> Self {
        let _ = poly;
        // SAFETY: the caller runs with this backend's features.
        unsafe { mul_alpha_k(self, k, low) }
    }

    /// Multiplies every lane by α^16, the step from a tweak of one batch of
    /// the wide backends (16 blocks) to the same lane's in the next.
    #[inline(always)]
    unsafe fn mul_alpha16(self, low: Self, poly: Self) -> Self {
        // SAFETY: the caller runs with this backend's features.
        unsafe { self.mul_alpha(16, low, poly) }
    }

    /// One round (AESENC if `ENC`, else AESDEC) on each of eight vectors.
    /// The backends with 16 registers override this and [`Lanes::last8`]
    /// with `asm!` (see [`round8`]).
    #[inline(always)]
    unsafe fn round8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        for x in b.iter_mut() {
            // SAFETY: the caller runs with the features of `enc` and `dec`.
            *x = unsafe { if ENC { x.enc(k) } else { x.dec(k) } };
        }
    }
    /// The last round (AESENCLAST if `ENC`, else AESDECLAST) on eight vectors.
    #[inline(always)]
    unsafe fn last8<const ENC: bool>(b: &mut [Self; 8], k: Self) {
        for x in b.iter_mut() {
            // SAFETY: the caller runs with the features of `enc_last`, `dec_last`.
            *x = unsafe { if ENC { x.enc_last(k) } else { x.dec_last(k) } };
        }
    }
    /// One round (AESENC if `ENC`, else AESDEC) on twelve vectors: the
    /// AES-NI backend overrides it as [`Lanes::round8`].
    #[inline(always)]
    unsafe fn round12<const ENC: bool>(b: &mut [Self; 12], k: Self) {
        for x in b.iter_mut() {
            // SAFETY: the caller runs with the features of `enc` and `dec`.
            *x = unsafe { if ENC { x.enc(k) } else { x.dec(k) } };
        }
    }
}

/// One AES round instruction on eight registers, in one `asm!` block.
///
/// With 16 vector registers, 8 blocks in flight and 15 round keys, LLVM's
/// scheduler lowers register pressure by running the blocks one after the
/// other, 10-14 dependent AES instructions each, which leaves the AES units
/// waiting on latency. A round as one `asm!` block keeps the eight blocks of
/// each round together, and the rounds in order by their data dependences.
macro_rules! round8 {
    (sse12 $op:literal, $b:expr, $k:expr) => {
        core::arch::asm!(
            concat!($op, " {0}, {k}"), concat!($op, " {1}, {k}"),
            concat!($op, " {2}, {k}"), concat!($op, " {3}, {k}"),
            concat!($op, " {4}, {k}"), concat!($op, " {5}, {k}"),
            concat!($op, " {6}, {k}"), concat!($op, " {7}, {k}"),
            concat!($op, " {8}, {k}"), concat!($op, " {9}, {k}"),
            concat!($op, " {10}, {k}"), concat!($op, " {11}, {k}"),
            inout(xmm_reg) $b[0].0, inout(xmm_reg) $b[1].0,
            inout(xmm_reg) $b[2].0, inout(xmm_reg) $b[3].0,
            inout(xmm_reg) $b[4].0, inout(xmm_reg) $b[5].0,
            inout(xmm_reg) $b[6].0, inout(xmm_reg) $b[7].0,
            inout(xmm_reg) $b[8].0, inout(xmm_reg) $b[9].0,
            inout(xmm_reg) $b[10].0, inout(xmm_reg) $b[11].0,
            k = in(xmm_reg) $k.0,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    (sse $op:literal, $b:expr, $k:expr) => {
        core::arch::asm!(
            concat!($op, " {0}, {k}"), concat!($op, " {1}, {k}"),
            concat!($op, " {2}, {k}"), concat!($op, " {3}, {k}"),
            concat!($op, " {4}, {k}"), concat!($op, " {5}, {k}"),
            concat!($op, " {6}, {k}"), concat!($op, " {7}, {k}"),
            inout(xmm_reg) $b[0].0, inout(xmm_reg) $b[1].0,
            inout(xmm_reg) $b[2].0, inout(xmm_reg) $b[3].0,
            inout(xmm_reg) $b[4].0, inout(xmm_reg) $b[5].0,
            inout(xmm_reg) $b[6].0, inout(xmm_reg) $b[7].0,
            k = in(xmm_reg) $k.0,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    (vex12 $op:literal, $b:expr, $k:expr) => {
        core::arch::asm!(
            concat!($op, " {0}, {0}, {k}"), concat!($op, " {1}, {1}, {k}"),
            concat!($op, " {2}, {2}, {k}"), concat!($op, " {3}, {3}, {k}"),
            concat!($op, " {4}, {4}, {k}"), concat!($op, " {5}, {5}, {k}"),
            concat!($op, " {6}, {6}, {k}"), concat!($op, " {7}, {7}, {k}"),
            concat!($op, " {8}, {8}, {k}"), concat!($op, " {9}, {9}, {k}"),
            concat!($op, " {10}, {10}, {k}"), concat!($op, " {11}, {11}, {k}"),
            inout(ymm_reg) $b[0].0, inout(ymm_reg) $b[1].0,
            inout(ymm_reg) $b[2].0, inout(ymm_reg) $b[3].0,
            inout(ymm_reg) $b[4].0, inout(ymm_reg) $b[5].0,
            inout(ymm_reg) $b[6].0, inout(ymm_reg) $b[7].0,
            inout(ymm_reg) $b[8].0, inout(ymm_reg) $b[9].0,
            inout(ymm_reg) $b[10].0, inout(ymm_reg) $b[11].0,
            k = in(ymm_reg) $k.0,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
    (vex $op:literal, $b:expr, $k:expr) => {
        core::arch::asm!(
            concat!($op, " {0}, {0}, {k}"), concat!($op, " {1}, {1}, {k}"),
            concat!($op, " {2}, {2}, {k}"), concat!($op, " {3}, {3}, {k}"),
            concat!($op, " {4}, {4}, {k}"), concat!($op, " {5}, {5}, {k}"),
            concat!($op, " {6}, {6}, {k}"), concat!($op, " {7}, {7}, {k}"),
            inout(ymm_reg) $b[0].0, inout(ymm_reg) $b[1].0,
            inout(ymm_reg) $b[2].0, inout(ymm_reg) $b[3].0,
            inout(ymm_reg) $b[4].0, inout(ymm_reg) $b[5].0,
            inout(ymm_reg) $b[6].0, inout(ymm_reg) $b[7].0,
            k = in(ymm_reg) $k.0,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
}
pub(super) use round8;

/// `[f(0), .., f(N - 1)]`, unrolled: `core::array::from_fn` left a call per
/// batch in the VAES loops (its closure was not inlined).
#[inline(always)]
fn each<T: Copy, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    let first = f(0);
    let mut out = [first; N];
    for (i, o) in out.iter_mut().enumerate().skip(1) {
        *o = f(i);
    }
    out
}

/// Round keys broadcast to every lane.
#[inline(always)]
pub(super) unsafe fn splat_keys<V: Lanes>(keys: &[[u8; 16]; MAX_KEYS]) -> [V; MAX_KEYS] {
    // SAFETY: the caller runs with V's features.
    unsafe { each(|i| V::splat(&keys[i])) }
}

#[inline(always)]
unsafe fn encrypt<V: Lanes, const NR: usize, const W: usize>(k: &[V; MAX_KEYS], b: &mut [V; W]) {
    // SAFETY: the caller runs with V's features.
    unsafe {
        for x in b.iter_mut() {
            *x = x.xor(k[0]);
        }
        rounds_with::<V, NR, W, true>(k, b, |_| {});
    }
}

/// `k` are the decryption keys of the equivalent inverse cipher (FIPS-197 §5.3.5).
#[inline(always)]
unsafe fn decrypt<V: Lanes, const NR: usize, const W: usize>(k: &[V; MAX_KEYS], b: &mut [V; W]) {
    // SAFETY: the caller runs with V's features.
    unsafe {
        for x in b.iter_mut() {
            *x = x.xor(k[0]);
        }
        rounds_with::<V, NR, W, false>(k, b, |_| {});
    }
}

/// Rounds 1 to `NR` of the cipher (`ENC`) or of its equivalent inverse, on
/// blocks already XORed with `k[0]`; `between(r)` runs after round `r + 1`
/// (r < NR - 1), in program order among the rounds: work for the next batch
/// (XTS's tweaks) placed there fills the AES latency, as in OpenSSL.
#[inline(always)]
unsafe fn rounds_with<V: Lanes, const NR: usize, const W: usize, const ENC: bool>(
    k: &[V; MAX_KEYS],
    b: &mut [V; W],
    between: impl FnMut(usize),
) {
    // SAFETY: the caller runs with V's features.
    unsafe {
        rounds_but_last::<V, NR, W, ENC>(k, b, between);
        if let Ok(b8) = <&mut [V; 8]>::try_from(&mut b[..]) {
            V::last8::<ENC>(b8, k[NR]);
            return;
        }
        for x in b.iter_mut() {
            *x = if ENC {
                x.enc_last(k[NR])
            } else {
                x.dec_last(k[NR])
            };
        }
    }
}

/// [`rounds_with`] without the last round (rounds 1 to `NR - 1`).
#[inline(always)]
unsafe fn rounds_but_last<V: Lanes, const NR: usize, const W: usize, const ENC: bool>(
    k: &[V; MAX_KEYS],
    b: &mut [V; W],
    between: impl FnMut(usize),
) {
    // SAFETY: the caller runs with V's features.
    unsafe { rounds_from::<V, NR, W, ENC, 1>(k, b, between) }
}

/// Rounds `FIRST` to `NR - 1` (`between` as in [`rounds_with`]).
#[inline(always)]
unsafe fn rounds_from<
    V: Lanes,
    const NR: usize,
    const W: usize,
    const ENC: bool,
    const FIRST: usize,
>(
    k: &[V; MAX_KEYS],
    b: &mut [V; W],
    mut between: impl FnMut(usize),
) {
    // Unrolled by hand (a macro, r constant in each copy): with `between`
    // in the loop LLVM keeps it rolled, and `between`'s state goes to memory.
    macro_rules! unrolled {
        ($round:expr; $($r:literal)*) => {$(
            if $r + 1 >= FIRST && $r + 1 < NR {
                $round(&k[$r + 1]);
                between($r);
            }
        )*};
    }
    // SAFETY: the caller runs with V's features.
    unsafe {
        if let Ok(b8) = <&mut [V; 8]>::try_from(&mut b[..]) {
            let mut round = |key: &V| V::round8::<ENC>(b8, *key);
            unrolled!(round; 0 1 2 3 4 5 6 7 8 9 10 11 12);
            return;
        }
        if let Ok(b12) = <&mut [V; 12]>::try_from(&mut b[..]) {
            let mut round = |key: &V| V::round12::<ENC>(b12, *key);
            unrolled!(round; 0 1 2 3 4 5 6 7 8 9 10 11 12);
            return;
        }
        let mut round = |key: &V| {
            for x in b.iter_mut() {
                *x = if ENC { x.enc(*key) } else { x.dec(*key) };
            }
        };
        unrolled!(round; 0 1 2 3 4 5 6 7 8 9 10 11 12);
    }
}

/// Runs `f` over the whole vectors of `data`, `W` at a time and then one at a
/// time; returns the bytes done.
#[inline(always)]
unsafe fn for_vectors<V: Lanes, const W: usize>(
    data: &mut [u8],
    mut batch: impl FnMut(*mut u8, &mut [V; W]),
    mut single: impl FnMut(*mut u8, &mut [V; 1]),
) -> usize {
    let vb = 16 * V::N;
    let mut done = 0;
    while data.len() - done >= W * vb {
        // SAFETY: `W * vb` bytes from `done` are inside `data`.
        let p = unsafe { data.as_mut_ptr().add(done) };
        // SAFETY: as above; the caller runs with V's features.
        let mut b: [V; W] = each(|j| unsafe { V::load(p.add(j * vb)) });
        batch(p, &mut b);
        for (j, x) in b.iter().enumerate() {
            // SAFETY: as above.
            unsafe { x.store(p.add(j * vb)) };
        }
        done += W * vb;
    }
    while data.len() - done >= vb {
        // SAFETY: `vb` bytes from `done` are inside `data`.
        let p = unsafe { data.as_mut_ptr().add(done) };
        // SAFETY: as above; the caller runs with V's features.
        let mut b = [unsafe { V::load(p) }];
        single(p, &mut b);
        // SAFETY: as above.
        unsafe { b[0].store(p) };
        done += vb;
    }
    done
}

/// ECB over the whole vectors of `data`; returns the bytes done.
#[inline(always)]
pub(super) unsafe fn ecb<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    data: &mut [u8],
    enc: bool,
) -> usize {
    // SAFETY: the caller runs with V's features.
    unsafe {
        let k = splat_keys::<V>(keys);
        if enc {
            for_vectors::<V, W>(
                data,
                |_, b| encrypt::<V, NR, W>(&k, b),
                |_, b| encrypt::<V, NR, 1>(&k, b),
            )
        } else {
            for_vectors::<V, W>(
                data,
                |_, b| decrypt::<V, NR, W>(&k, b),
                |_, b| decrypt::<V, NR, 1>(&k, b),
            )
        }
    }
}

/// CBC encryption, one block after the other (each needs the one before);
/// `iv` becomes the last ciphertext block.
#[inline(always)]
pub(super) unsafe fn cbc_encrypt<V: Lanes, const NR: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    iv: &mut [u8; 16],
    data: &mut [u8],
) {
    debug_assert_eq!(V::N, 1);
    // SAFETY: the caller runs with V's features; every load and store is of
    // one 16-byte block inside `data` or `iv`.
    //
    // The chain from block to block is the 10-14 AES instructions alone: the
    // next plaintext and the first round key are folded into the last
    // round's key (AESENCLAST ends with an XOR), and the ciphertext is
    // recovered from that off the chain.
    unsafe {
        let k = splat_keys::<V>(keys);
        let mut blocks = data.chunks_exact_mut(16);
        let Some(first) = blocks.next() else {
            return;
        };
        let mut x = V::load(first.as_ptr()).xor(V::load(iv.as_ptr())).xor(k[0]);
        let mut out = first;
        for block in blocks {
            for key in &k[1..NR] {
                x = x.enc(*key);
            }
            let pk = V::load(block.as_ptr()).xor(k[0]);
            x = x.enc_last(k[NR].xor(pk)); // = ciphertext ^ next plaintext ^ k[0]
            x.xor(pk).store(out.as_mut_ptr());
            out = block;
        }
        for key in &k[1..NR] {
            x = x.enc(*key);
        }
        x = x.enc_last(k[NR]);
        x.store(out.as_mut_ptr());
        x.store(iv.as_mut_ptr());
    }
}

/// CBC decryption over the whole vectors of `data`; `iv` becomes the last
/// ciphertext block done; returns the bytes done.
///
/// Each batch's previous ciphertext blocks are read after its rounds (the
/// XORs take them from memory, where they still are, since the batch is
/// stored last), which leaves the registers to the rounds.
#[inline(always)]
pub(super) unsafe fn cbc_decrypt<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    iv: &mut [u8; 16],
    data: &mut [u8],
) -> usize {
    let vb = 16 * V::N;
    // SAFETY: the caller runs with V's features; every load and store is of
    // a vector inside the batch or block at `p`, or of the block before it
    // (inside `data` when not at the batch's start). Each batch reads all its
    // ciphertext before it stores any plaintext.
    unsafe {
        let k = splat_keys::<V>(keys);
        // The ciphertext block before the batch, and the vector it ends
        // ([`Lanes::previous`]).
        let mut chain = *iv;
        let mut before = V::splat(iv);
        let mut done = 0;
        while data.len() - done >= W * vb {
            let p = data.as_mut_ptr().add(done);
            let mut s: [V; W] = each(|j| V::load(p.add(j * vb)).xor(k[0]));
            // All rounds but the last, whose key takes in the previous
            // ciphertext (AESDECLAST ends with an XOR), as libgcrypt does.
            rounds_but_last::<V, NR, W, false>(&k, &mut s, |_| {});
            let out: [V; W] = each(|j| {
                let prev = if j == 0 {
                    V::previous(p, before, &chain)
                } else {
                    V::load(p.add(j * vb - 16))
                };
                s[j].dec_last(k[NR].xor(prev))
            });
            before = V::load(p.add((W - 1) * vb));
            chain = *p.add(W * vb - 16).cast::<[u8; 16]>();
            for (j, x) in out.iter().enumerate() {
                x.store(p.add(j * vb));
            }
            done += W * vb;
        }
        while data.len() - done >= vb {
            let p = data.as_mut_ptr().add(done);
            let mut s = [V::load(p).xor(k[0])];
            rounds_with::<V, NR, 1, false>(&k, &mut s, |_| {});
            let out = s[0].xor(V::previous(p, before, &chain));
            before = V::load(p);
            chain = *p.add(vb - 16).cast::<[u8; 16]>();
            out.store(p);
            done += vb;
        }
        *iv = chain;
        done
    }
}

/// The counter blocks `c, c+1, ..` (128-bit, big-endian, wrapping) of one
/// vector, made in registers when the low 64 bits do not wrap inside it.
#[inline(always)]
unsafe fn counters<V: Lanes>(c: u128) -> V {
    let mut buf = [[0u8; 16]; 4];
    for (l, b) in buf.iter_mut().take(V::N).enumerate() {
        *b = c.wrapping_add(l as u128).to_le_bytes();
    }
    // SAFETY: `buf` holds 4 >= N blocks; the caller runs with V's features.
    unsafe { V::load(buf.as_ptr().cast()) }
}

/// The bytes of `data` (`len` long) to encrypt first, one block at a time,
/// so that the counter `c` reaches a multiple of `blocks`, the batch of a
/// wide backend's [`ctr`], which runs fastest from there.
///
/// Only for requests of [`CTR_LEAD_FROM`] bytes or more: the lead's blocks
/// go one after the other, each waiting the whole AES latency, which a short
/// request does not win back (AES-GCM, whose counter starts at 2, spent a
/// third of a 512-byte request there).
pub(super) fn ctr_lead(c: u128, blocks: usize, len: usize) -> usize {
    let r = (c % blocks as u128) as usize;
    if r == 0 || len < CTR_LEAD_FROM {
        0
    } else {
        ((blocks - r) * 16).min(len / 16 * 16)
    }
}

/// Requests from which [`ctr`] and the wide backends first take single
/// blocks up to a counter that is a multiple of the batch ([`ctr_lead`]);
/// shorter ones run from any counter (the buffer path, or two or four blocks
/// a register).
pub(super) const CTR_LEAD_FROM: usize = 4096;

/// Blocks a CTR batch may have: 8 vectors of up to 4 blocks.
const MAX_BLOCKS: usize = 32;

/// [`ctr`]'s counter blocks, aligned for its 32-bit stores. They are XORed
/// with round key 0, and so wiped on drop, 16 bytes a store.
#[repr(C, align(16))]
struct CtrBuf([[u8; 16]; MAX_BLOCKS]);

impl Drop for CtrBuf {
    fn drop(&mut self) {
        // SAFETY: the buffer is 16-aligned and holds 32 blocks.
        unsafe { wipe_blocks(self.0.as_mut_ptr().cast(), self.0.len()) };
    }
}

/// Zeroes `n` 16-byte blocks from `p` with volatile 16-byte stores, so that
/// the wipe of key material is not elided (`zeroize` on bytes stores one
/// byte at a time).
///
/// # Safety
/// `p` must be 16-aligned and valid for writes of `n` blocks.
pub(super) unsafe fn wipe_blocks(p: *mut core::arch::x86_64::__m128i, n: usize) {
    for i in 0..n {
        // SAFETY: block `i` < `n` is inside the caller's buffer and aligned;
        // SSE2 is the x86-64 baseline.
        unsafe { core::ptr::write_volatile(p.add(i), core::arch::x86_64::_mm_setzero_si128()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// CTR over the whole vectors of `data`; `ctr` advances by the blocks done;
/// returns the bytes done.
///
/// OpenSSL's schedule: the batch's counter blocks wait in a stack buffer
/// already XORed with round key 0, and from batch to batch only their last
/// 32-bit words change, made with scalar instructions (add, byte swap, XOR)
/// that run beside the AES rounds instead of on the vector ports. A batch
/// whose low 32 bits would wrap is rebuilt from the 128-bit counter, so the
/// carry is exact. The data is read only for the final XOR, which leaves the
/// registers to the rounds.
#[inline(always)]
pub(super) unsafe fn ctr<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    first: Option<&FirstRound>,
    ctr: &mut u128,
    data: &mut [u8],
) -> usize {
    let vb = 16 * V::N;
    let nb = W * V::N;
    assert!(nb <= MAX_BLOCKS, "a CTR batch of {nb} blocks");
    if data.len() < vb {
        // No whole vector: nothing to do (the wide backends call this for
        // their lead and rest, often empty).
        return 0;
    }
    let k0 = keys[0];
    let k0w3 = u32::from_ne_bytes([k0[12], k0[13], k0[14], k0[15]]);
    // Whole-u128 arithmetic: byte by byte (`from_fn`) this took 12% of
    // AES-GCM's time, which calls CTR once per 8 KiB.
    let k0x = u128::from_ne_bytes(k0);
    let fill = |buf: &mut [[u8; 16]; MAX_BLOCKS], c: u128| {
        for (i, b) in buf.iter_mut().take(nb).enumerate() {
            *b = (u128::from_ne_bytes(c.wrapping_add(i as u128).to_be_bytes()) ^ k0x).to_ne_bytes();
        }
    };
    let mut c = *ctr;
    let mut done = 0;
    // SAFETY: the caller runs with V's features; the loads of `buf` are of
    // `nb` <= MAX_BLOCKS blocks, those of `data` inside the batch at `p`.
    unsafe {
        let k = splat_keys::<V>(keys);
        if let Some(t) = first {
            done = ctr_first_round_cached::<V, NR, W>(&k, keys, t, &mut c, data);
        } else if V::N == 1 {
            // Single blocks up to a counter that is a multiple of the batch
            // (the wider backends do this with AES-NI first).
            let lead = ctr_lead(c, nb, data.len());
            while done < lead {
                let p = data.as_mut_ptr().add(done);
                let mut s = [counters::<V>(c).bswap()];
                encrypt::<V, NR, 1>(&k, &mut s);
                s[0].xor(V::load(p)).store(p);
                c = c.wrapping_add(1);
                done += 16;
            }
        }
        // Counters made in registers, while neither the batch nor the step
        // to the next one carries out of the low 64 bits (the register adds
        // do not carry into the high half); from there the buffer path goes
        // on. From a counter that is a multiple of the batch (adding batches
        // keeps it so), the batch's blocks differ from it only in byte 15's
        // low bits, which are zero in it, so each block XOR k[0] is (c XOR
        // k[0]) XOR a constant: one XOR a register (a batch adds, swaps and
        // XORs once). Otherwise, with two or four blocks a register, each
        // register takes a 64-bit add, a byte reversal and the XOR with k[0]
        // (a scalar add, swap and store a block being slower); one block a
        // register takes the buffer path.
        let aligned = nb.is_power_of_two() && c.is_multiple_of(nb as u128);
        if aligned || V::N > 1 {
            let step: [V; W] = each(|j| counters::<V>((j * V::N) as u128));
            let low: [V; W] = each(|j| step[j].bswap());
            let inc = V::splat(&(nb as u128).to_le_bytes());
            let mut base = V::splat(&c.to_le_bytes());
            while data.len() - done >= nb * 16 && (c as u64).checked_add(nb as u64).is_some() {
                let p = data.as_mut_ptr().add(done);
                let mut s: [V; W] = if aligned {
                    let cx = base.bswap().xor(k[0]);
                    each(|j| cx.xor(low[j]))
                } else {
                    each(|j| base.add64(step[j]).bswap().xor(k[0]))
                };
                rounds_but_last::<V, NR, W, true>(&k, &mut s, |_| {});
                for (j, x) in s.iter().enumerate() {
                    let q = p.add(j * vb);
                    x.enc_last(k[NR].xor(V::load(q))).store(q);
                }
                base = base.add64(inc);
                c = c.wrapping_add(nb as u128);
                done += nb * 16;
            }
        }
        // The batch's counter blocks XOR k[0], from counter `c` on: made
        // only when batches are left (a short or aligned request has none;
        // made every call, they cost a 512-byte request more than a third of
        // its time), and wiped after, as they hold round key 0.
        if data.len() - done >= nb * 16 {
            let mut buf = CtrBuf([[0u8; 16]; MAX_BLOCKS]);
            let buf = &mut buf.0;
            fill(buf, c);
            while data.len() - done >= nb * 16 {
                let p = data.as_mut_ptr().add(done);
                let mut s: [V; W] = each(|j| V::load(buf[j * V::N].as_ptr()));
                let next = c.wrapping_add(nb as u128);
                let lo = next as u32;
                if lo.checked_add(nb as u32).is_some() && (next >> 32) == (c >> 32) {
                    for (i, b) in buf.iter_mut().take(nb).enumerate() {
                        let w = u32::from_ne_bytes((lo + i as u32).to_be_bytes()) ^ k0w3;
                        // Volatile, to keep the buffer in memory: as a plain
                        // store LLVM promoted the buffer to registers and made
                        // each word a MOVD and two SHUFPS on the vector ports,
                        // beside the AES rounds (5-7% slower on Zen 3). A store
                        // and a 16-byte load a block cost nothing there or on
                        // Intel (load and store ports are otherwise idle here).
                        // SAFETY: bytes 12..16 of a 16-aligned block of `buf`.
                        core::ptr::write_volatile(b.as_mut_ptr().add(12).cast::<u32>(), w);
                    }
                } else {
                    fill(buf, next);
                }
                // The last round's key takes in the data (AESENCLAST ends with
                // an XOR), as in OpenSSL.
                rounds_but_last::<V, NR, W, true>(&k, &mut s, |_| {});
                for (j, x) in s.iter().enumerate() {
                    let q = p.add(j * vb);
                    x.enc_last(k[NR].xor(V::load(q))).store(q);
                }
                c = next;
                done += nb * 16;
            }
        }
        // The whole vectors left, fewer than a batch, in as few steps as can
        // run side by side: one block at a time, each waited the whole AES
        // latency (8 blocks after two 12-block batches took a third of a
        // 512-byte request's time with AES-NI).
        while data.len() - done >= vb {
            let p = data.as_mut_ptr().add(done);
            let left = (data.len() - done) / vb;
            let n = match left {
                1 => ctr_tail::<V, NR, 1>(&k, c, p, left),
                2 => ctr_tail::<V, NR, 2>(&k, c, p, left),
                3..=4 => ctr_tail::<V, NR, 4>(&k, c, p, left),
                _ => ctr_tail::<V, NR, 8>(&k, c, p, left),
            };
            c = c.wrapping_add((n * V::N) as u128);
            done += n * vb;
        }
    }
    *ctr = c;
    done
}

/// Requests from which CTR caches the first round
/// ([`ctr_first_round_cached`]; the key's [`FirstRound`] table is made on
/// the first of them).
pub(crate) const FIRST_ROUND_FROM: usize = 4096;

/// The wide backends' CTR over `data`, a partial last block included: with
/// the first round cached when given its table (the caller asked
/// [`first_round_pays`]), from any counter; otherwise single
/// AES-NI blocks first up to a counter that is a multiple of the batch
/// ([`ctr_lead`]). The blocks after the last whole vector run on AES-NI.
///
/// # Safety
/// The caller runs with V's features (which include AES-NI), inlined into
/// its `#[target_feature]` entry point.
#[inline(always)]
pub(super) unsafe fn ctr_wide<V: Lanes, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    nr: usize,
    first: Option<&FirstRound>,
    c: &mut u128,
    data: &mut [u8],
) {
    use super::x86_aesni::ctr as narrow;
    let lead = match first {
        Some(_) => 0,
        None => ctr_lead(*c, W * V::N, data.len()),
    };
    // SAFETY: the caller runs with V's features, AES-NI among them.
    unsafe {
        narrow(keys, nr, None, c, &mut data[..lead]);
        let rest = &mut data[lead..];
        let done = lead
            + match nr {
                10 => ctr::<V, 10, W>(keys, first, c, rest),
                12 => ctr::<V, 12, W>(keys, first, c, rest),
                _ => ctr::<V, 14, W>(keys, first, c, rest),
            };
        narrow(keys, nr, None, c, &mut data[done..]);
    }
}

/// Whether CTR caches the first round ([`ctr_first_round_cached`]) on
/// `backend` with `nr` rounds; the kernels run it whenever they are given
/// the table. It pays where the AES instructions bound
/// the loop: on Zen 4 (64 KiB requests, best of 15, side by side) AES-NI
/// ran 1.07-1.09x with it at every key size, VAES-256 and VAES-512 AES-256
/// 1.04-1.08x; VAES AES-128, as fast as ECB there already, ran 0.95-1.03x,
/// and VAES-512 with 8 registers a batch (32 buffer stores) 0.79x.
pub(super) fn first_round_pays(backend: super::Backend, nr: usize) -> bool {
    backend == super::Backend::AesNi || nr >= 12
}

/// What each value of counter byte 15 adds to the output of round 1 (see
/// [`ctr_first_round_cached`]): word 0 of E[v], the only word it touches.
/// It depends on byte 15 of round key 0, so it is wiped on drop.
pub(crate) struct FirstRound([u32; 256]);

impl FirstRound {
    /// The table for round key 0 `k0`: E[v] = AESENC(e15(v ^ k0[15]), 0) ^
    /// AESENC(0, 0), 256 AESENC instructions, the same for every key byte.
    ///
    /// # Safety
    /// The CPU must have AES-NI.
    #[target_feature(enable = "aes")]
    pub(crate) unsafe fn new(k0: &[u8; 16]) -> FirstRound {
        use core::arch::x86_64::*;
        let mut t = FirstRound([0; 256]);
        // Compiled with AES-NI, so the intrinsics are safe to call here.
        let zero = _mm_setzero_si128();
        let at_zero = _mm_aesenc_si128(zero, zero);
        for (v, w) in t.0.iter_mut().enumerate() {
            let x = _mm_slli_si128::<15>(_mm_cvtsi32_si128(i32::from(v as u8 ^ k0[15])));
            *w = _mm_cvtsi128_si32(_mm_xor_si128(_mm_aesenc_si128(x, zero), at_zero)) as u32;
        }
        t
    }
}

impl Drop for FirstRound {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

/// CTR over whole batches of `data` with the first round cached
/// (Bernstein and Schwabe, "New AES software speed records", 2008); `ctr`
/// advances by the blocks done; returns the bytes done.
///
/// Blocks whose counters differ only in byte 15 differ only there after
/// round key 0. With `x` such a block and `z` the same with byte 15 zeroed,
/// AESENC(x, k1) = AESENC(z, k1) ^ E[v], v the counter's byte 15: SubBytes
/// is bytewise and the rest of the round linear, and byte 15's difference
/// lands in word 0 (ShiftRows takes it to column 0, MixColumns keeps it
/// there). So the round-1 states of 256 counters are one AESENC and 256
/// words of [`FirstRound`]. They wait in a stack buffer, where the integer
/// units (idle here) XOR the next batch's word 0 in while the vector units
/// run this one's rounds, as OpenSSL's CTR does with the counter's last
/// word. Each block then takes 9 AES rounds and the data XOR where it took
/// 10 and the XOR (AES-128), which is what bounds these loops: on Zen 4
/// leaving one vector instruction out of 11 a block sped them up 3-11%,
/// while trading the round for a vector XOR did nothing.
///
/// The table is indexed by the counter alone, which is public; the key
/// byte is inside the entries. A batch that reaches a new multiple of 256
/// has its blocks made whole again, one AESENC for each run of 256.
#[inline(always)]
unsafe fn ctr_first_round_cached<V: Lanes, const NR: usize, const W: usize>(
    k: &[V; MAX_KEYS],
    keys: &[[u8; 16]; MAX_KEYS],
    t: &FirstRound,
    ctr: &mut u128,
    data: &mut [u8],
) -> usize {
    use core::arch::x86_64::{_mm_aesenc_si128, _mm_loadu_si128, _mm_storeu_si128};
    let vb = 16 * V::N;
    let nb = W * V::N;
    let mut c = *ctr;
    let mut done = 0;
    if data.len() < nb * 16 {
        return 0;
    }
    let mut k0 = keys[0];
    k0[15] = 0;
    let k0 = u128::from_ne_bytes(k0);
    // SAFETY: the caller runs with V's features, which include AES-NI; the
    // loads of `buf` are of `nb` <= MAX_BLOCKS blocks, those of `data`
    // inside the batch at `p`, the table's at `lo + i < 256`.
    unsafe {
        let k1 = _mm_loadu_si128(keys[1].as_ptr().cast());
        // AESENC(z, k1) for the counters from `c`'s multiple of 256 on.
        let run = |c: u128| {
            let z = (u128::from_ne_bytes((c & !0xff).to_be_bytes()) ^ k0).to_ne_bytes();
            let mut r = [0u8; 16];
            _mm_storeu_si128(
                r.as_mut_ptr().cast(),
                _mm_aesenc_si128(_mm_loadu_si128(z.as_ptr().cast()), k1),
            );
            u128::from_ne_bytes(r)
        };
        // The round-1 states of the batch at `c`; returns AESENC(z, k1) of
        // its last block's run.
        let fill = |buf: &mut [[u8; 16]; MAX_BLOCKS], c: u128| {
            let mut r = run(c);
            for (i, b) in buf.iter_mut().take(nb).enumerate() {
                let ci = c.wrapping_add(i as u128);
                if i > 0 && ci as u8 == 0 {
                    r = run(ci);
                }
                *b = (r ^ u128::from(t.0[ci as u8 as usize])).to_ne_bytes();
            }
            r as u32
        };
        // Two buffers, batches alternating between them: a batch's words
        // are stored a whole batch before its loads, by when the stores
        // have left the store queue (a wide load over stores still queued
        // waits for them; with one buffer VAES-512 ran 0.87-0.90x).
        let mut bufs = [
            CtrBuf([[0u8; 16]; MAX_BLOCKS]),
            CtrBuf([[0u8; 16]; MAX_BLOCKS]),
        ];
        let mut r0 = [
            fill(&mut bufs[0].0, c),
            fill(&mut bufs[1].0, c.wrapping_add(nb as u128)),
        ];
        let mut i = 0;
        while data.len() - done >= nb * 16 {
            let p = data.as_mut_ptr().add(done);
            let buf = &mut bufs[i].0;
            let mut s: [V; W] = each(|j| V::load(buf[j * V::N].as_ptr()));
            // This buffer's next batch, two on.
            let next = c.wrapping_add(2 * nb as u128);
            let lo = next as u8 as usize;
            if next >> 8 == c >> 8 && lo + nb <= 256 {
                // The same run of 256 as this batch, which is whole in it:
                // only word 0 changes. Volatile, as in `ctr`'s buffer path
                // (kept in memory, off the vector ports).
                for (j, b) in buf.iter_mut().take(nb).enumerate() {
                    core::ptr::write_volatile(b.as_mut_ptr().cast::<u32>(), r0[i] ^ t.0[lo + j]);
                }
            } else {
                r0[i] = fill(buf, next);
            }
            rounds_from::<V, NR, W, true, 2>(k, &mut s, |_| {});
            for (j, x) in s.iter().enumerate() {
                let q = p.add(j * vb);
                x.enc_last(k[NR].xor(V::load(q))).store(q);
            }
            c = c.wrapping_add(nb as u128);
            done += nb * 16;
            i ^= 1;
        }
    }
    *ctr = c;
    done
}

/// CTR over `min(left, G)` whole vectors at `p` from counter `c` (counters
/// made in registers; `G` vectors encrypted side by side, the unused ones
/// thrown away); returns the vectors done.
///
/// # Safety
/// The caller runs with V's features; `p` holds `left` whole vectors.
#[inline(always)]
unsafe fn ctr_tail<V: Lanes, const NR: usize, const G: usize>(
    k: &[V; MAX_KEYS],
    c: u128,
    p: *mut u8,
    left: usize,
) -> usize {
    let n = left.min(G);
    // SAFETY: the caller runs with V's features; the `n` vectors stored are
    // inside the caller's data.
    unsafe {
        let mut s: [V; G] = each(|j| counters::<V>(c.wrapping_add((j * V::N) as u128)).bswap());
        encrypt::<V, NR, G>(k, &mut s);
        for (j, x) in s.iter().take(n).enumerate() {
            let q = p.add(j * 16 * V::N);
            x.xor(V::load(q)).store(q);
        }
    }
    n
}

/// Multiplies every lane by α^k in GF(2^128) (IEEE 1619 §5.2), 1 <= k <= 57:
/// the k bits shifted out of the top fold back as b·(x^7 + x^2 + x + 1), which
/// stays below 2^64 for k <= 57.
#[inline(always)]
unsafe fn mul_alpha_k<V: Lanes>(t: V, k: i32, low: V) -> V {
    // SAFETY: the caller runs with V's features.
    unsafe {
        let out = t.shr64(64 - k).swap64(); // [hi >> (64-k), lo >> (64-k)]
        let b = out.and(low); // the bits that left the top, in the low half
        t.shl64(k)
            .xor(out)
            .xor(b.shl64(1))
            .xor(b.shl64(2))
            .xor(b.shl64(7))
    }
}

/// Multiplies every lane by α (IEEE 1619 §5.2): each 64-bit half doubles, the
/// low half's top bit carries into the high half and the high half's top bit
/// folds back as 0x87 (`poly` holds 0x87 and 1 at those places).
#[inline(always)]
unsafe fn double<V: Lanes>(t: V, poly: V) -> V {
    // SAFETY: the caller runs with V's features.
    unsafe { t.add64(t).xor(t.signs().spread().and(poly)) }
}

/// The tweaks `t, t·α, .., t·α^(N-1)` of one vector.
#[inline(always)]
unsafe fn tweaks<V: Lanes>(mut t: u128) -> V {
    let mut buf = [[0u8; 16]; 4];
    for b in buf.iter_mut().take(V::N) {
        *b = t.to_le_bytes();
        t = (t << 1) ^ (0x87 * (t >> 127));
    }
    // SAFETY: `buf` holds 4 >= N blocks; the caller runs with V's features.
    unsafe { V::load(buf.as_ptr().cast()) }
}

/// XTS over the whole vectors of `data` with the first tweak `t` (already
/// encrypted); `t` becomes the tweak of the next block; returns the bytes done.
///
/// The tweaks are made in registers, `N` lanes times α^N per vector, and the
/// next batch's between the rounds of this one (OpenSSL's schedule), so that
/// a batch starts with all its tweaks ready. The data is read as late as the
/// first XOR needs it and the output straight after the last.
#[inline(always)]
pub(super) unsafe fn xts<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) -> usize {
    if enc {
        // SAFETY: as the caller's.
        unsafe { xts_dir::<V, NR, W, true>(keys, t, data) }
    } else {
        // SAFETY: as the caller's.
        unsafe { xts_dir::<V, NR, W, false>(keys, t, data) }
    }
}

#[inline(always)]
unsafe fn xts_dir<V: Lanes, const NR: usize, const W: usize, const ENC: bool>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
) -> usize {
    let n = V::N as i32;
    let vb = 16 * V::N;
    // SAFETY: the caller runs with V's features; every load and store of
    // `data` is of a vector inside the batch or block at `p`.
    unsafe {
        let k = splat_keys::<V>(keys);
        let mut low = [0u8; 16];
        low[..8].fill(0xff);
        let low = V::splat(&low);
        let mut poly = [0u8; 16];
        poly[0] = 0x87;
        poly[8] = 1;
        let poly = V::splat(&poly);
        // The next batch's tweaks from its first; one block per register
        // doubles along a chain (5 operations a tweak, as OpenSSL's), wider
        // vectors multiply each from the first. A function, not a closure: a
        // closure is compiled without the caller's target features, so the
        // intrinsics in it stayed calls (VAES-256 XTS ran at 0.4 GB/s).
        #[inline(always)]
        unsafe fn from_first<V: Lanes>(t0: V, j: usize, prev: V, poly: V, low: V) -> V {
            // SAFETY: the caller runs with V's features.
            unsafe {
                if V::N == 1 {
                    double(prev, poly)
                } else {
                    t0.mul_alpha((V::N * j) as i32, low, poly)
                }
            }
        }
        let first = tweaks::<V>(*t);
        let mut tw = [first; W];
        for j in 1..W {
            tw[j] = from_first(first, j, tw[j - 1], poly, low);
        }
        let mut done = 0;
        while data.len() - done >= W * vb {
            let p = data.as_mut_ptr().add(done);
            let mut s: [V; W] = each(|j| V::load(p.add(j * vb)).xor(tw[j]).xor(k[0]));
            let mut next = tw;
            // Each tweak is a few operations from the same lane's of this
            // batch, independent of the rounds; the out-of-order core
            // overlaps them (no hook: it would be a closure, see above).
            // One block a register: a chain of doublings from the batch's
            // last tweak, 5 operations a tweak where times α^W from the same
            // lane is 9. They share the vector ports with AESENC (two of the
            // four on Zen), so under the ring's threshold (`RING_FROM`) the
            // fewer the faster: 512-byte XTS 1.2x on Zen 4.
            for j in 0..W {
                next[j] = if V::N == 1 {
                    double(if j == 0 { tw[W - 1] } else { next[j - 1] }, poly)
                } else if n * W as i32 == 16 {
                    tw[j].mul_alpha16(low, poly)
                } else {
                    tw[j].mul_alpha(n * W as i32, low, poly)
                };
            }
            rounds_but_last::<V, NR, W, ENC>(&k, &mut s, |_| {});
            // The last round's key takes in the tweak (AESENCLAST and
            // AESDECLAST end with an XOR), as in OpenSSL.
            for (j, x) in s.iter().enumerate() {
                let kt = k[NR].xor(tw[j]);
                let y = if ENC { x.enc_last(kt) } else { x.dec_last(kt) };
                y.store(p.add(j * vb));
            }
            tw = next;
            done += W * vb;
        }
        let mut cur = tw[0];
        while data.len() - done >= vb {
            let p = data.as_mut_ptr().add(done);
            let mut s = [V::load(p).xor(cur).xor(k[0])];
            rounds_with::<V, NR, 1, ENC>(&k, &mut s, |_| {});
            s[0].xor(cur).store(p);
            cur = cur.mul_alpha(n, low, poly);
            done += vb;
        }
        let mut buf = [[0u8; 16]; 4];
        cur.store(buf.as_mut_ptr().cast());
        *t = u128::from_le_bytes(buf[0]);
        done
    }
}
