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

use core::cell::Cell;

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
    /// Each lane's sign bits of its 32-bit words 3, 0, 1, 0 spread over
    /// those words (PSHUFD 0x13 then PSRAD 31): the carries of a doubling.
    unsafe fn carries(self) -> Self;

    /// One AESENC round on each of eight vectors. The backends with 16
    /// registers override these four with `asm!` (see [`round8`]).
    #[inline(always)]
    unsafe fn enc8(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with the features of `enc`.
        b.iter_mut().for_each(|x| *x = unsafe { x.enc(k) });
    }
    /// One AESENCLAST round on each of eight vectors.
    #[inline(always)]
    unsafe fn enc_last8(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with the features of `enc_last`.
        b.iter_mut().for_each(|x| *x = unsafe { x.enc_last(k) });
    }
    /// One AESDEC round on each of eight vectors.
    #[inline(always)]
    unsafe fn dec8(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with the features of `dec`.
        b.iter_mut().for_each(|x| *x = unsafe { x.dec(k) });
    }
    /// One AESDECLAST round on each of eight vectors.
    #[inline(always)]
    unsafe fn dec_last8(b: &mut [Self; 8], k: Self) {
        // SAFETY: the caller runs with the features of `dec_last`.
        b.iter_mut().for_each(|x| *x = unsafe { x.dec_last(k) });
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

/// Round keys broadcast to every lane.
#[inline(always)]
pub(super) unsafe fn splat_keys<V: Lanes>(keys: &[[u8; 16]; MAX_KEYS]) -> [V; MAX_KEYS] {
    // SAFETY: the caller runs with V's features.
    unsafe { core::array::from_fn(|i| V::splat(&keys[i])) }
}

#[inline(always)]
unsafe fn encrypt<V: Lanes, const NR: usize, const W: usize>(k: &[V; MAX_KEYS], b: &mut [V; W]) {
    // SAFETY: the caller runs with V's features.
    unsafe {
        for x in b.iter_mut() {
            *x = x.xor(k[0]);
        }
        encrypt_rounds::<V, NR, W>(k, b);
    }
}

/// Rounds 1 to `NR` of the cipher: blocks already XORed with `k[0]`.
#[inline(always)]
unsafe fn encrypt_rounds<V: Lanes, const NR: usize, const W: usize>(
    k: &[V; MAX_KEYS],
    b: &mut [V; W],
) {
    // SAFETY: the caller runs with V's features.
    unsafe {
        if let Ok(b8) = <&mut [V; 8]>::try_from(&mut b[..]) {
            for key in &k[1..NR] {
                V::enc8(b8, *key);
            }
            V::enc_last8(b8, k[NR]);
            return;
        }
        for key in &k[1..NR] {
            for x in b.iter_mut() {
                *x = x.enc(*key);
            }
        }
        for x in b.iter_mut() {
            *x = x.enc_last(k[NR]);
        }
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
        if let Ok(b8) = <&mut [V; 8]>::try_from(&mut b[..]) {
            for key in &k[1..NR] {
                V::dec8(b8, *key);
            }
            V::dec_last8(b8, k[NR]);
            return;
        }
        for key in &k[1..NR] {
            for x in b.iter_mut() {
                *x = x.dec(*key);
            }
        }
        for x in b.iter_mut() {
            *x = x.dec_last(k[NR]);
        }
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
        let mut b: [V; W] = core::array::from_fn(|j| unsafe { V::load(p.add(j * vb)) });
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

/// Writes the 16 * N bytes before vector `p` of a batch, with `first` standing
/// in for the block before the data.
#[inline(always)]
unsafe fn previous<V: Lanes>(p: *const u8, at_start: bool, first: &[u8; 16]) -> V {
    // SAFETY: the caller runs with V's features; when not at the start, the
    // 16 bytes before `p` are inside the data (and still ciphertext).
    unsafe {
        if !at_start {
            return V::load(p.sub(16));
        }
        let mut buf = [[0u8; 16]; 4];
        buf[0] = *first;
        core::ptr::copy_nonoverlapping(p, buf[1].as_mut_ptr(), 16 * (V::N - 1));
        V::load(buf.as_ptr().cast())
    }
}

/// CBC decryption over the whole vectors of `data`; `iv` becomes the last
/// ciphertext block done; returns the bytes done.
#[inline(always)]
pub(super) unsafe fn cbc_decrypt<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    iv: &mut [u8; 16],
    data: &mut [u8],
) -> usize {
    let vb = 16 * V::N;
    // SAFETY: the caller runs with V's features. Each closure runs on a batch
    // whose ciphertext is in registers and not yet stored, so the blocks
    // before each vector (read by `previous`) are still ciphertext.
    unsafe {
        let k = splat_keys::<V>(keys);
        let chain = Cell::new(*iv);
        let done = for_vectors::<V, W>(
            data,
            |p, b| {
                let first = chain.get();
                let prev: [V; W] =
                    core::array::from_fn(|j| previous::<V>(p.add(j * vb), j == 0, &first));
                chain.set(*p.add(W * vb - 16).cast::<[u8; 16]>());
                decrypt::<V, NR, W>(&k, b);
                for (x, c) in b.iter_mut().zip(prev) {
                    *x = x.xor(c);
                }
            },
            |p, b| {
                let prev = previous::<V>(p, true, &chain.get());
                chain.set(*p.add(vb - 16).cast::<[u8; 16]>());
                decrypt::<V, NR, 1>(&k, b);
                b[0] = b[0].xor(prev);
            },
        );
        *iv = chain.get();
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
    ctr: &mut u128,
    data: &mut [u8],
) -> usize {
    /// Blocks the buffer holds: 8 vectors of up to 4 blocks.
    const MAX_BLOCKS: usize = 32;
    let vb = 16 * V::N;
    let nb = W * V::N;
    assert!(nb <= MAX_BLOCKS, "a CTR batch of {nb} blocks");
    let k0 = keys[0];
    let k0w3 = u32::from_ne_bytes([k0[12], k0[13], k0[14], k0[15]]);
    // Counter blocks XOR k[0]; `held` is the counter of its first block.
    let mut buf = [[0u8; 16]; MAX_BLOCKS];
    let fill = |buf: &mut [[u8; 16]; MAX_BLOCKS], c: u128| {
        for (i, b) in buf.iter_mut().take(nb).enumerate() {
            let x = c.wrapping_add(i as u128).to_be_bytes();
            *b = core::array::from_fn(|j| x[j] ^ k0[j]);
        }
    };
    let mut c = *ctr;
    fill(&mut buf, c);
    let mut done = 0;
    // SAFETY: the caller runs with V's features; the loads of `buf` are of
    // `nb` <= MAX_BLOCKS blocks, those of `data` inside the batch at `p`.
    unsafe {
        let k = splat_keys::<V>(keys);
        while data.len() - done >= nb * 16 {
            let p = data.as_mut_ptr().add(done);
            let mut s: [V; W] = core::array::from_fn(|j| V::load(buf[j * V::N].as_ptr()));
            let next = c.wrapping_add(nb as u128);
            let lo = next as u32;
            if lo.checked_add(nb as u32).is_some() && (next >> 32) == (c >> 32) {
                for (i, b) in buf.iter_mut().take(nb).enumerate() {
                    let w = u32::from_ne_bytes((lo + i as u32).to_be_bytes()) ^ k0w3;
                    b[12..].copy_from_slice(&w.to_ne_bytes());
                }
            } else {
                fill(&mut buf, next);
            }
            encrypt_rounds::<V, NR, W>(&k, &mut s);
            for (j, x) in s.iter().enumerate() {
                let q = p.add(j * vb);
                x.xor(V::load(q)).store(q);
            }
            c = next;
            done += nb * 16;
        }
        while data.len() - done >= vb {
            let p = data.as_mut_ptr().add(done);
            let mut s = [counters::<V>(c).bswap()];
            encrypt::<V, NR, 1>(&k, &mut s);
            s[0].xor(V::load(p)).store(p);
            c = c.wrapping_add(V::N as u128);
            done += vb;
        }
    }
    *ctr = c;
    done
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
    unsafe { t.add64(t).xor(t.carries().and(poly)) }
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
/// The tweaks are made in registers, `N` lanes times α^N per vector.
#[inline(always)]
pub(super) unsafe fn xts<V: Lanes, const NR: usize, const W: usize>(
    keys: &[[u8; 16]; MAX_KEYS],
    t: &mut u128,
    data: &mut [u8],
    enc: bool,
) -> usize {
    let n = V::N as i32;
    // SAFETY: the caller runs with V's features.
    unsafe {
        let k = splat_keys::<V>(keys);
        let mut low = [0u8; 16];
        low[..8].fill(0xff);
        let low = V::splat(&low);
        let mut poly = [0u8; 16];
        poly[0] = 0x87;
        poly[8] = 1;
        let poly = V::splat(&poly);
        let tv = Cell::new(tweaks::<V>(*t));
        let done = for_vectors::<V, W>(
            data,
            |_, b| {
                let t0 = tv.get();
                let mut tw = [t0; W];
                if V::N == 1 {
                    // One block per register: the doubling chain (5 operations
                    // a tweak, as OpenSSL's) hides under the AES rounds.
                    for j in 1..W {
                        tw[j] = double(tw[j - 1], poly);
                    }
                    tv.set(double(tw[W - 1], poly));
                } else {
                    // Each vector's tweaks straight from the batch's first, so
                    // the chain from batch to batch is one multiplication long.
                    for (j, x) in tw.iter_mut().enumerate().skip(1) {
                        *x = mul_alpha_k(t0, n * j as i32, low);
                    }
                    tv.set(mul_alpha_k(t0, n * W as i32, low));
                }
                for (x, y) in b.iter_mut().zip(tw) {
                    *x = x.xor(y);
                }
                if enc {
                    encrypt::<V, NR, W>(&k, b);
                } else {
                    decrypt::<V, NR, W>(&k, b);
                }
                for (x, y) in b.iter_mut().zip(tw) {
                    *x = x.xor(y);
                }
            },
            |_, b| {
                let tw = tv.get();
                tv.set(mul_alpha_k(tw, n, low));
                b[0] = b[0].xor(tw);
                if enc {
                    encrypt::<V, NR, 1>(&k, b);
                } else {
                    decrypt::<V, NR, 1>(&k, b);
                }
                b[0] = b[0].xor(tw);
            },
        );
        let mut buf = [[0u8; 16]; 4];
        tv.get().store(buf.as_mut_ptr().cast());
        *t = u128::from_le_bytes(buf[0]);
        done
    }
}
