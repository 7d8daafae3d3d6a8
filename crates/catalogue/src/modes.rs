//! Block cipher modes built on a cipher's multi-block primitive.
//!
//! The parallel modes (ECB, CBC decryption, CTR, XTS) work in batches: they
//! prepare a batch of counter blocks, tweaks or saved ciphertext, then make one
//! `encrypt_blocks`/`decrypt_blocks` call for the whole batch, so that ciphers
//! with wide backends (VAES-512, AVX2 Serpent) run at ECB speed. CBC encryption
//! is sequential by nature and runs inside the cipher's backend closure so the
//! round function inlines into the chaining loop.
//!
//! Constructions: NIST SP 800-38A (ECB, CBC, CTR), IEEE 1619-2018 and NIST
//! SP 800-38E (XTS, with ciphertext stealing).

use cipher::array::{Array, ArraySize};

use crate::backends;
pub use crate::backends::Simd;
use cipher::consts::U16;
use cipher::{
    Block, BlockCipherDecrypt, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt,
    BlockSizeUser, InOut,
};

/// Bytes per batch: a few KiB keeps the batch and its scratch copy in L1.
pub const BATCH_BYTES: usize = 16384;

/// A keyed block cipher with the scratch space its batched modes need.
pub struct BlockModes<C> {
    cipher: C,
    scratch: Vec<u8>,
    simd: Simd,
}

fn blocks_mut<BS: ArraySize>(data: &mut [u8]) -> &mut [Array<u8, BS>] {
    let (blocks, rest) = Array::<u8, BS>::slice_as_chunks_mut(data);
    assert!(
        rest.is_empty(),
        "length must be a multiple of the block size"
    );
    blocks
}

#[inline]
fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// `dst ^= src` for one block: a vector XOR per 16 bytes, u64s for an
/// 8-byte block. CBC encryption chains one block at a time; written byte by
/// byte, LLVM kept the chaining value in 16 byte registers (64 instructions
/// a block) and did not vectorise it.
#[inline(always)]
fn xor_block(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    let (d16, d_rest) = dst.as_chunks_mut::<16>();
    let (s16, s_rest) = src.as_chunks::<16>();
    for (d, s) in d16.iter_mut().zip(s16) {
        xor16(d, s);
    }
    let (d8, d_rest) = d_rest.as_chunks_mut::<8>();
    let (s8, s_rest) = s_rest.as_chunks::<8>();
    for (d, s) in d8.iter_mut().zip(s8) {
        *d = (u64::from_ne_bytes(*d) ^ u64::from_ne_bytes(*s)).to_ne_bytes();
    }
    xor_in_place(d_rest, s_rest);
}

/// `d ^= s` in one vector register where the target always has one.
#[inline(always)]
fn xor16(d: &mut [u8; 16], s: &[u8; 16]) {
    #[cfg(target_arch = "aarch64")]
    {
        use core::arch::aarch64::{veorq_u8, vld1q_u8, vst1q_u8};
        // SAFETY: NEON is in every aarch64 target's baseline; both pointers
        // come from references to 16 bytes.
        unsafe {
            vst1q_u8(
                d.as_mut_ptr(),
                veorq_u8(vld1q_u8(d.as_ptr()), vld1q_u8(s.as_ptr())),
            )
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128, _mm_xor_si128};
        let (dp, sp) = (
            d.as_mut_ptr().cast::<__m128i>(),
            s.as_ptr().cast::<__m128i>(),
        );
        // SAFETY: SSE2 is in every x86-64 target's baseline; both pointers
        // come from references to 16 bytes, and these are unaligned accesses.
        unsafe { _mm_storeu_si128(dp, _mm_xor_si128(_mm_loadu_si128(dp), _mm_loadu_si128(sp))) }
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    {
        *d = (u128::from_ne_bytes(*d) ^ u128::from_ne_bytes(*s)).to_ne_bytes();
    }
}

/// Writes consecutive big-endian counter values starting at `ctr` into `out`
/// and leaves `ctr` after them. The counter wraps modulo 2^(8·block size), as
/// OpenSSL's CTR mode does. 16-byte blocks use the SIMD code `simd` allows.
fn fill_counters(simd: Simd, ctr: &mut [u8], out: &mut [u8]) {
    let bs = ctr.len();
    match bs {
        16 => {
            let mut c = u128::from_be_bytes((&*ctr).try_into().expect("16-byte block"));
            backends::fill_counters128(simd, &mut c, out);
            ctr.copy_from_slice(&c.to_be_bytes());
        }
        8 => {
            let mut c = u64::from_be_bytes(ctr.try_into().expect("8-byte block"));
            for blk in out.chunks_exact_mut(8) {
                blk.copy_from_slice(&c.to_be_bytes());
                c = c.wrapping_add(1);
            }
            ctr.copy_from_slice(&c.to_be_bytes());
        }
        _ => {
            for blk in out.chunks_exact_mut(bs) {
                blk.copy_from_slice(ctr);
                for byte in ctr.iter_mut().rev() {
                    *byte = byte.wrapping_add(1);
                    if *byte != 0 {
                        break;
                    }
                }
            }
        }
    }
}

impl<C> BlockModes<C>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt,
{
    /// Wraps a keyed cipher.
    pub fn new(cipher: C) -> Self {
        Self::with_simd(cipher, Simd::detect())
    }

    /// Like [`BlockModes::new`] with the XOR and counter code forced to `simd`
    /// (for tests), or the best available when that one is not.
    pub fn with_simd(cipher: C, simd: Simd) -> Self {
        BlockModes {
            cipher,
            scratch: vec![0; BATCH_BYTES],
            simd: simd.at_most_detected(),
        }
    }

    /// Block size in bytes.
    pub fn block_size(&self) -> usize {
        C::block_size()
    }

    /// The keyed cipher.
    pub fn cipher(&self) -> &C {
        &self.cipher
    }

    /// ECB encryption of whole blocks in place.
    pub fn ecb_encrypt(&self, data: &mut [u8]) {
        self.cipher.encrypt_blocks(blocks_mut(data));
    }

    /// ECB decryption of whole blocks in place.
    pub fn ecb_decrypt(&self, data: &mut [u8]) {
        self.cipher.decrypt_blocks(blocks_mut(data));
    }

    /// CBC encryption of whole blocks in place; `iv` becomes the last ciphertext
    /// block, so consecutive calls chain.
    pub fn cbc_encrypt(&self, iv: &mut [u8], data: &mut [u8]) {
        struct Chain<'a, BS: ArraySize> {
            iv: &'a mut [u8],
            blocks: &'a mut [Array<u8, BS>],
        }
        impl<BS: ArraySize> BlockSizeUser for Chain<'_, BS> {
            type BlockSize = BS;
        }
        impl<BS: ArraySize> BlockCipherEncClosure for Chain<'_, BS> {
            #[inline(always)]
            fn call<B: BlockCipherEncBackend<BlockSize = BS>>(self, backend: &B) {
                // Each block is XORed with the ciphertext before it, read
                // back from the buffer rather than held in a copy.
                let Some((first, rest)) = self.blocks.split_first_mut() else {
                    return;
                };
                xor_block(first, self.iv);
                backend.encrypt_block(InOut::from(&mut *first));
                let mut prev: &Array<u8, BS> = first;
                for block in rest.iter_mut() {
                    xor_block(block, prev);
                    backend.encrypt_block(InOut::from(&mut *block));
                    prev = block;
                }
                self.iv.copy_from_slice(prev);
            }
        }
        let blocks = blocks_mut::<C::BlockSize>(data);
        self.cipher.encrypt_with_backend(Chain { iv, blocks });
    }

    /// CBC decryption of whole blocks in place, a batch at a time; `iv` becomes
    /// the last ciphertext block.
    pub fn cbc_decrypt(&mut self, iv: &mut [u8], data: &mut [u8]) {
        let bs = C::block_size();
        for chunk in data.chunks_mut(BATCH_BYTES) {
            let n = chunk.len();
            let saved = &mut self.scratch[..n];
            saved.copy_from_slice(chunk);
            self.cipher.decrypt_blocks(blocks_mut(chunk));
            xor_in_place(&mut chunk[..bs], iv);
            backends::xor_in_place(self.simd, &mut chunk[bs..], &saved[..n - bs]);
            iv.copy_from_slice(&saved[n - bs..]);
        }
    }

    /// CTR keystream applied in place (encryption and decryption are the same).
    /// `counter` advances by the number of blocks used; a final partial block
    /// uses up a whole counter value.
    pub fn ctr_apply(&mut self, counter: &mut [u8], data: &mut [u8]) {
        let bs = C::block_size();
        for chunk in data.chunks_mut(BATCH_BYTES) {
            let len = chunk.len().div_ceil(bs) * bs;
            let stream = &mut self.scratch[..len];
            fill_counters(self.simd, counter, stream);
            self.cipher.encrypt_blocks(blocks_mut(stream));
            backends::xor_in_place(self.simd, chunk, stream);
        }
    }
}

/// A 64-bit block cipher with its own multi-block kernel over blocks held
/// as `u64`s (`u64::from_be_bytes(block)`), `N` independent blocks
/// interleaved: Blowfish, DES, Triple-DES, RC2, TEA and XTEA. The functions
/// of [`block64`] run ECB, CBC and CTR on it directly: counters, chaining
/// values and data stay in registers, with no scratch buffer and no extra
/// pass over the data (the batched [`BlockModes`] spend about a tenth of
/// Blowfish's time on those passes).
pub trait Kernel64<const N: usize> {
    /// Tails of this many blocks or more (and fewer than `N`) go through the
    /// `N`-block kernel padded with dummy blocks, shorter ones one at a time.
    const MIN_PADDED_TAIL: usize = 2;

    /// Encrypts one block.
    fn encrypt_one(&self, x: u64) -> u64;
    /// Decrypts one block.
    fn decrypt_one(&self, x: u64) -> u64;
    /// Encrypts `N` independent blocks.
    fn encrypt_par(&self, x: &mut [u64; N]);
    /// Decrypts `N` independent blocks.
    fn decrypt_par(&self, x: &mut [u64; N]);

    /// Blocks per call of the bulk kernel ([`Kernel64::encrypt_bulk`]), at
    /// most [`block64::MAX_BULK`]; 0 when the cipher has none.
    fn bulk_blocks(&self) -> usize {
        0
    }

    /// Encrypts [`Kernel64::bulk_blocks`] blocks in place (DES's bitsliced
    /// rounds, which take hundreds of blocks at once). Only called when
    /// `bulk_blocks()` is not 0.
    fn encrypt_bulk(&self, x: &mut [u64]) {
        let _ = x;
        unreachable!("no bulk kernel");
    }

    /// Decrypts [`Kernel64::bulk_blocks`] blocks in place.
    fn decrypt_bulk(&self, x: &mut [u64]) {
        let _ = x;
        unreachable!("no bulk kernel");
    }

    /// CBC encryption of `blocks` in place, chained from `iv`; returns the
    /// last ciphertext block. A cipher may override it to keep the chaining
    /// value in its own representation (DES does, after its initial
    /// permutation).
    #[inline(always)]
    fn cbc_encrypt(&self, iv: u64, blocks: &mut [[u8; 8]]) -> u64 {
        let mut prev = iv;
        for b in blocks {
            prev = self.encrypt_one(u64::from_be_bytes(*b) ^ prev);
            *b = prev.to_be_bytes();
        }
        prev
    }
}

/// ECB, CBC and CTR over a [`Kernel64`], with the semantics of the same
/// methods of [`BlockModes`] (which the tests check them against).
pub mod block64 {
    use super::Kernel64;

    #[inline(always)]
    fn as_blocks(data: &mut [u8]) -> &mut [[u8; 8]] {
        let (blocks, rest) = data.as_chunks_mut::<8>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        blocks
    }

    #[inline(always)]
    fn load<const N: usize>(blocks: &[[u8; 8]; N]) -> [u64; N] {
        core::array::from_fn(|i| u64::from_be_bytes(blocks[i]))
    }

    /// Runs the blocks through `par` `N` at a time and the tail through
    /// `par` (padded) or `one`.
    #[inline(always)]
    fn each<const N: usize>(
        blocks: &mut [[u8; 8]],
        par: impl Fn(&mut [u64; N]),
        one: impl Fn(u64) -> u64,
        min_padded_tail: usize,
    ) {
        let (groups, tail) = blocks.as_chunks_mut::<N>();
        for g in groups {
            let mut x = load(g);
            par(&mut x);
            for (b, x) in g.iter_mut().zip(x) {
                *b = x.to_be_bytes();
            }
        }
        if tail.len() >= min_padded_tail {
            let mut x = [0u64; N];
            for (x, b) in x.iter_mut().zip(tail.iter()) {
                *x = u64::from_be_bytes(*b);
            }
            par(&mut x);
            for (b, x) in tail.iter_mut().zip(x) {
                *b = x.to_be_bytes();
            }
        } else {
            for b in tail {
                *b = one(u64::from_be_bytes(*b)).to_be_bytes();
            }
        }
    }

    /// Most blocks a bulk kernel takes at once.
    pub const MAX_BULK: usize = 256;

    /// Runs `f` on the whole batches of `n` blocks at the start of
    /// `blocks` (none when `n` is 0), each loaded into a buffer of `u64`s;
    /// `f` gets the loaded batch, the batch's blocks and the buffer to work
    /// on (its first `n` values). Returns the blocks left.
    #[inline(always)]
    fn batches(
        blocks: &mut [[u8; 8]],
        n: usize,
        mut f: impl FnMut(&mut [[u8; 8]], &mut [u64]),
    ) -> &mut [[u8; 8]] {
        if n == 0 || blocks.len() < n {
            return blocks;
        }
        assert!(n <= MAX_BULK, "bulk batch too large");
        let mut buf = [0u64; MAX_BULK];
        let (head, rest) = blocks.split_at_mut(blocks.len() / n * n);
        for chunk in head.chunks_exact_mut(n) {
            f(chunk, &mut buf[..n]);
        }
        rest
    }

    /// Loads blocks into `x`.
    #[inline(always)]
    fn load_into(x: &mut [u64], blocks: &[[u8; 8]]) {
        for (x, b) in x.iter_mut().zip(blocks) {
            *x = u64::from_be_bytes(*b);
        }
    }

    /// ECB encryption of whole blocks in place.
    pub fn ecb_encrypt<K: Kernel64<N>, const N: usize>(k: &K, data: &mut [u8]) {
        let rest = batches(as_blocks(data), k.bulk_blocks(), |chunk, x| {
            load_into(x, chunk);
            k.encrypt_bulk(x);
            for (b, x) in chunk.iter_mut().zip(x) {
                *b = x.to_be_bytes();
            }
        });
        each::<N>(
            rest,
            |x| k.encrypt_par(x),
            |x| k.encrypt_one(x),
            K::MIN_PADDED_TAIL,
        );
    }

    /// ECB decryption of whole blocks in place.
    pub fn ecb_decrypt<K: Kernel64<N>, const N: usize>(k: &K, data: &mut [u8]) {
        let rest = batches(as_blocks(data), k.bulk_blocks(), |chunk, x| {
            load_into(x, chunk);
            k.decrypt_bulk(x);
            for (b, x) in chunk.iter_mut().zip(x) {
                *b = x.to_be_bytes();
            }
        });
        each::<N>(
            rest,
            |x| k.decrypt_par(x),
            |x| k.decrypt_one(x),
            K::MIN_PADDED_TAIL,
        );
    }

    /// CBC encryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block, so consecutive calls chain.
    pub fn cbc_encrypt<K: Kernel64<N>, const N: usize>(k: &K, iv: &mut [u8; 8], data: &mut [u8]) {
        let last = k.cbc_encrypt(u64::from_be_bytes(*iv), as_blocks(data));
        *iv = last.to_be_bytes();
    }

    /// CBC decryption of whole blocks in place, a bulk batch or `N` blocks
    /// at a time: each group is decrypted from a copy while the data still
    /// holds its ciphertext, which the blocks chain from. `iv` becomes the
    /// last ciphertext block.
    pub fn cbc_decrypt<K: Kernel64<N>, const N: usize>(k: &K, iv: &mut [u8; 8], data: &mut [u8]) {
        let blocks = as_blocks(data);
        let Some(&last) = blocks.last() else {
            return;
        };
        let mut prev = u64::from_be_bytes(*iv);
        let blocks = batches(blocks, k.bulk_blocks(), |chunk, x| {
            load_into(x, chunk);
            let c_last = x[x.len() - 1];
            k.decrypt_bulk(x);
            // From the end, so that the ciphertext each block chains from
            // is still there.
            for i in (1..chunk.len()).rev() {
                chunk[i] = (x[i] ^ u64::from_be_bytes(chunk[i - 1])).to_be_bytes();
            }
            chunk[0] = (x[0] ^ prev).to_be_bytes();
            prev = c_last;
        });
        let (groups, tail) = blocks.as_chunks_mut::<N>();
        for g in groups {
            let c = load(g);
            let mut x = c;
            k.decrypt_par(&mut x);
            g[0] = (x[0] ^ prev).to_be_bytes();
            for i in 1..N {
                g[i] = (x[i] ^ c[i - 1]).to_be_bytes();
            }
            prev = c[N - 1];
        }
        if tail.len() >= K::MIN_PADDED_TAIL {
            let mut c = [0u64; N];
            for (c, b) in c.iter_mut().zip(tail.iter()) {
                *c = u64::from_be_bytes(*b);
            }
            let mut x = c;
            k.decrypt_par(&mut x);
            for (b, (x, c)) in tail.iter_mut().zip(x.into_iter().zip(c)) {
                *b = (x ^ prev).to_be_bytes();
                prev = c;
            }
        } else {
            for b in tail {
                let c = u64::from_be_bytes(*b);
                *b = (k.decrypt_one(c) ^ prev).to_be_bytes();
                prev = c;
            }
        }
        *iv = last;
    }

    /// CTR keystream applied in place: the block is one big-endian 64-bit
    /// counter that wraps, as in [`BlockModes::ctr_apply`](super::BlockModes::ctr_apply),
    /// OpenSSL and libgcrypt. `counter` advances by the number of blocks
    /// used; a final partial block uses up a whole counter value.
    pub fn ctr_apply<K: Kernel64<N>, const N: usize>(
        k: &K,
        counter: &mut [u8; 8],
        data: &mut [u8],
    ) {
        let mut ctr = u64::from_be_bytes(*counter);
        let (blocks, partial) = data.as_chunks_mut::<8>();
        let blocks = batches(blocks, k.bulk_blocks(), |chunk, x| {
            for x in x.iter_mut() {
                *x = ctr;
                ctr = ctr.wrapping_add(1);
            }
            k.encrypt_bulk(x);
            for (b, x) in chunk.iter_mut().zip(x) {
                *b = (u64::from_be_bytes(*b) ^ *x).to_be_bytes();
            }
        });
        let (groups, tail) = blocks.as_chunks_mut::<N>();
        for g in groups {
            let mut x: [u64; N] = core::array::from_fn(|i| ctr.wrapping_add(i as u64));
            ctr = ctr.wrapping_add(N as u64);
            k.encrypt_par(&mut x);
            for (b, x) in g.iter_mut().zip(x) {
                *b = (u64::from_be_bytes(*b) ^ x).to_be_bytes();
            }
        }
        // At most N - 1 whole blocks and a partial one: at most N counters.
        let used = tail.len() + usize::from(!partial.is_empty());
        if used > 0 {
            let mut x: [u64; N] = core::array::from_fn(|i| ctr.wrapping_add(i as u64));
            ctr = ctr.wrapping_add(used as u64);
            if used >= K::MIN_PADDED_TAIL {
                k.encrypt_par(&mut x);
            } else {
                for x in &mut x[..used] {
                    *x = k.encrypt_one(*x);
                }
            }
            for (b, x) in tail.iter_mut().zip(x) {
                *b = (u64::from_be_bytes(*b) ^ x).to_be_bytes();
            }
            for (d, k) in partial.iter_mut().zip(x[tail.len()].to_be_bytes()) {
                *d ^= k;
            }
        }
        *counter = ctr.to_be_bytes();
    }
}

/// XTS-AES style mode for 128-bit block ciphers: a data cipher and a tweak cipher.
pub struct Xts<C> {
    data: BlockModes<C>,
    tweak: C,
    simd: Simd,
}

/// Multiplies a tweak by α (x) in GF(2^128), little-endian as IEEE 1619 §5.2 defines.
#[inline(always)]
fn mul_alpha(t: u128) -> u128 {
    let carry = (t >> 127) as u8;
    (t << 1) ^ (0x87 * u128::from(carry))
}

/// Multiplies a tweak by α^8. The byte `b` shifted out of the top folds back
/// into the bottom as b(x)·(x^7 + x^2 + x + 1), since x^128 = x^7 + x^2 + x + 1:
/// a carry-less product by a constant, i.e. four shifts XORed. No table: the
/// tweak is secret (it is the tweak key's encryption of the sector number), and
/// a table indexed by it would leak through the cache.
#[inline(always)]
fn mul_alpha8(t: u128) -> u128 {
    let b = (t >> 120) as u16;
    (t << 8) ^ u128::from(b ^ (b << 1) ^ (b << 2) ^ (b << 7))
}

/// Tweak lanes: consecutive tweaks are a serial chain (T·α), which caps XTS
/// well below the cipher's speed; eight chains stepping by α^8 run in parallel.
const TWEAK_LANES: usize = 8;

impl<C> Xts<C>
where
    C: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    /// Builds XTS from the data-unit cipher (key 1) and the tweak cipher (key 2).
    pub fn new(data: C, tweak: C) -> Self {
        Self::with_simd(data, tweak, Simd::detect())
    }

    /// Like [`Xts::new`] with the tweak code forced to `simd` (for tests), or the
    /// best available when that one is not.
    pub fn with_simd(data: C, tweak: C, simd: Simd) -> Self {
        let simd = simd.at_most_detected();
        Xts {
            data: BlockModes::with_simd(data, simd),
            tweak,
            simd,
        }
    }

    /// The tweak code in use.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    fn initial_tweak(&self, iv: &[u8; 16]) -> u128 {
        let mut t = Block::<C>::from(*iv);
        self.tweak.encrypt_block(&mut t);
        u128::from_le_bytes(t.into())
    }

    /// XEX over whole blocks with tweaks starting at `t`; returns the next tweak.
    fn xex(&mut self, mut t: u128, data: &mut [u8], encrypt: bool) -> u128 {
        for chunk in data.chunks_mut(BATCH_BYTES) {
            let n = chunk.len() / 16;
            let tweaks = &mut self.data.scratch[..chunk.len()];
            let mut lanes = [t; TWEAK_LANES];
            for j in 1..TWEAK_LANES {
                lanes[j] = mul_alpha(lanes[j - 1]);
            }
            let mut i = 0;
            #[cfg(target_arch = "x86_64")]
            if self.simd != Simd::Portable {
                use crate::backends::{x86_avx2, x86_avx512};
                let step = if self.simd == Simd::Avx512 {
                    x86_avx512::TWEAKS_PER_STEP
                } else {
                    x86_avx2::TWEAKS_PER_STEP
                };
                let bulk = n / step * step * 16;
                if bulk > 0 {
                    let mut first = [t; 16];
                    for j in 1..16 {
                        first[j] = mul_alpha(first[j - 1]);
                    }
                    let (d, w) = (&mut chunk[..bulk], &mut tweaks[..bulk]);
                    lanes[0] = if self.simd == Simd::Avx512 {
                        // SAFETY: `simd` is Avx512 only when `x86_avx512::available()`.
                        unsafe { x86_avx512::xor_tweaks(&first, d, w) }
                    } else {
                        let eight: &[u128; 8] = first[..8].try_into().expect("8 tweaks");
                        // SAFETY: `simd` is Avx2 only when the CPU has AVX2.
                        unsafe { x86_avx2::xor_tweaks(eight, d, w) }
                    };
                    for j in 1..TWEAK_LANES {
                        lanes[j] = mul_alpha(lanes[j - 1]);
                    }
                    i = bulk / 16;
                }
            }
            // Write each tweak aside and XOR it into the data in the same pass.
            while i + TWEAK_LANES <= n {
                for (j, lane) in lanes.iter_mut().enumerate() {
                    let at = (i + j) * 16;
                    let block = &mut chunk[at..at + 16];
                    let x = u128::from_le_bytes((&*block).try_into().expect("16 bytes")) ^ *lane;
                    block.copy_from_slice(&x.to_le_bytes());
                    tweaks[at..at + 16].copy_from_slice(&lane.to_le_bytes());
                    *lane = mul_alpha8(*lane);
                }
                i += TWEAK_LANES;
            }
            t = lanes[0];
            while i < n {
                let at = i * 16;
                let block = &mut chunk[at..at + 16];
                let x = u128::from_le_bytes((&*block).try_into().expect("16 bytes")) ^ t;
                block.copy_from_slice(&x.to_le_bytes());
                tweaks[at..at + 16].copy_from_slice(&t.to_le_bytes());
                t = mul_alpha(t);
                i += 1;
            }
            if encrypt {
                self.data.cipher.encrypt_blocks(blocks_mut(chunk));
            } else {
                self.data.cipher.decrypt_blocks(blocks_mut(chunk));
            }
            backends::xor_in_place(self.simd, chunk, &self.data.scratch[..chunk.len()]);
        }
        t
    }

    fn one(&self, t: u128, block: &mut [u8], encrypt: bool) {
        let tb = t.to_le_bytes();
        xor_in_place(block, &tb);
        let blk = Block::<C>::slice_as_chunks_mut(block).0;
        if encrypt {
            self.data.cipher.encrypt_blocks(blk);
        } else {
            self.data.cipher.decrypt_blocks(blk);
        }
        xor_in_place(block, &tb);
    }

    /// Encrypts one data unit (at least 16 bytes) whose tweak is `iv`, with
    /// ciphertext stealing for a partial last block (IEEE 1619 §5.3.2).
    pub fn encrypt(&mut self, iv: &[u8; 16], data: &mut [u8]) {
        assert!(data.len() >= 16, "XTS needs at least one full block");
        let t = self.initial_tweak(iv);
        let tail = data.len() % 16;
        if tail == 0 {
            self.xex(t, data, true);
            return;
        }
        let full = data.len() - tail;
        let t_last = self.xex(t, &mut data[..full], true);
        // Steal: the last full ciphertext block gives its head to the partial block.
        let (head, partial) = data.split_at_mut(full);
        let last_full = &mut head[full - 16..];
        let mut pp = [0u8; 16];
        pp[..tail].copy_from_slice(partial);
        pp[tail..].copy_from_slice(&last_full[tail..]);
        partial.copy_from_slice(&last_full[..tail]);
        self.one(t_last, &mut pp, true);
        last_full.copy_from_slice(&pp);
    }

    /// Decrypts one data unit encrypted by [`Xts::encrypt`].
    pub fn decrypt(&mut self, iv: &[u8; 16], data: &mut [u8]) {
        assert!(data.len() >= 16, "XTS needs at least one full block");
        let t = self.initial_tweak(iv);
        let tail = data.len() % 16;
        if tail == 0 {
            self.xex(t, data, false);
            return;
        }
        let full = data.len() - tail;
        let t_prev = self.xex(t, &mut data[..full - 16], false);
        let t_last = mul_alpha(t_prev);
        let (head, partial) = data.split_at_mut(full);
        let last_full = &mut head[full - 16..];
        let mut pp = [0u8; 16];
        pp.copy_from_slice(last_full);
        self.one(t_last, &mut pp, false);
        let mut cc = [0u8; 16];
        cc[..tail].copy_from_slice(partial);
        cc[tail..].copy_from_slice(&pp[tail..]);
        partial.copy_from_slice(&pp[..tail]);
        self.one(t_prev, &mut cc, false);
        last_full.copy_from_slice(&cc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::KeyInit;

    #[test]
    fn counters_wrap_big_endian() {
        let mut c = [0xffu8; 16];
        let mut out = [0u8; 32];
        fill_counters(Simd::Portable, &mut c, &mut out);
        assert_eq!(&out[..16], &[0xff; 16]);
        assert_eq!(&out[16..], &[0; 16]);
        assert_eq!(c, {
            let mut one = [0u8; 16];
            one[15] = 1;
            one
        });
        let mut c8 = [0, 0, 0, 0, 0, 0, 0, 0xfe];
        let mut out8 = [0u8; 16];
        fill_counters(Simd::Portable, &mut c8, &mut out8);
        assert_eq!(out8[15], 0xff);
        assert_eq!(c8, [0, 0, 0, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn alpha_matches_ieee1619() {
        assert_eq!(mul_alpha(1), 2);
        assert_eq!(mul_alpha(1 << 127), 0x87);
        let mut t = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210_u128;
        for _ in 0..1000 {
            let mut slow = t;
            for _ in 0..8 {
                slow = mul_alpha(slow);
            }
            assert_eq!(mul_alpha8(t), slow);
            t = mul_alpha(t) ^ (t >> 3);
        }
    }

    #[test]
    fn simd_tweaks_equal_portable_tweaks() {
        let mk = |simd| {
            Xts::with_simd(
                aes::Aes128::new(&[1u8; 16].into()),
                aes::Aes128::new(&[2u8; 16].into()),
                simd,
            )
        };
        let (mut avx2, mut slow) = (mk(Simd::Avx2), mk(Simd::Portable));
        let mut best = mk(Simd::Avx512);
        for len in [
            16,
            17,
            31,
            128,
            129,
            4096,
            4100,
            4096 + 16 * 9,
            65536,
            70000,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let (mut a, mut b, mut c) = (data.clone(), data.clone(), data.clone());
            let iv = [len as u8; 16];
            avx2.encrypt(&iv, &mut a);
            slow.encrypt(&iv, &mut b);
            best.encrypt(&iv, &mut c);
            assert_eq!(a, b, "encrypt {len}");
            assert_eq!(c, b, "encrypt {len}");
            avx2.decrypt(&iv, &mut a);
            slow.decrypt(&iv, &mut b);
            best.decrypt(&iv, &mut c);
            assert_eq!(a, data, "decrypt {len}");
            assert_eq!(b, data, "decrypt {len}");
            assert_eq!(c, data, "decrypt {len}");
        }
    }

    #[test]
    fn simd_ctr_and_cbc_equal_portable() {
        let key = [9u8; 16];
        let mut fast = BlockModes::new(aes::Aes128::new(&key.into()));
        let mut slow = BlockModes::with_simd(aes::Aes128::new(&key.into()), Simd::Portable);
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 13 % 256) as u8).collect();
        // Counters near the 64-bit and 128-bit wrap points too.
        for start in [0u128, 5, u64::MAX as u128 - 3, u128::MAX - 2, 1 << 100] {
            let (mut a, mut b) = (data.clone(), data.clone());
            let (mut ca, mut cb) = (start.to_be_bytes(), start.to_be_bytes());
            fast.ctr_apply(&mut ca, &mut a);
            slow.ctr_apply(&mut cb, &mut b);
            assert_eq!(a, b, "ctr from {start:x}");
            assert_eq!(ca, cb);
        }
        let mut blocks = data.clone();
        blocks.truncate(19_984);
        let (mut a, mut b) = (blocks.clone(), blocks.clone());
        let (mut ia, mut ib) = ([1u8; 16], [1u8; 16]);
        fast.cbc_decrypt(&mut ia, &mut a);
        slow.cbc_decrypt(&mut ib, &mut b);
        assert_eq!(a, b);
        assert_eq!(ia, ib);
    }

    #[test]
    fn chained_calls_equal_one_call() {
        let key = [7u8; 16];
        let mut one = BlockModes::new(aes::Aes128::new(&key.into()));
        let mut data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        data.truncate(9984);
        for mode in 0..3 {
            let mut whole = data.clone();
            let mut parts = data.clone();
            let (mut iv1, mut iv2) = ([3u8; 16], [3u8; 16]);
            match mode {
                0 => {
                    one.cbc_encrypt(&mut iv1, &mut whole);
                    let (a, b) = parts.split_at_mut(4800);
                    one.cbc_encrypt(&mut iv2, a);
                    one.cbc_encrypt(&mut iv2, b);
                }
                1 => {
                    one.cbc_decrypt(&mut iv1, &mut whole);
                    let (a, b) = parts.split_at_mut(4800);
                    one.cbc_decrypt(&mut iv2, a);
                    one.cbc_decrypt(&mut iv2, b);
                }
                _ => {
                    one.ctr_apply(&mut iv1, &mut whole);
                    let (a, b) = parts.split_at_mut(4800);
                    one.ctr_apply(&mut iv2, a);
                    one.ctr_apply(&mut iv2, b);
                }
            }
            assert_eq!(whole, parts, "mode {mode}");
            assert_eq!(iv1, iv2, "mode {mode}");
        }
    }

    /// The `u64`-kernel modes of the 64-bit block ciphers against the
    /// batched [`BlockModes`] over the same cipher's `cipher` traits (the
    /// table rounds only): lengths that reach every tail and the bulk
    /// batches, plus a partial CTR block, counters across the 2^64 wrap,
    /// and calls that chain.
    fn block64_matches_block_modes<K, const N: usize>(cipher: K)
    where
        K: Kernel64<N>
            + BlockCipherEncrypt<BlockSize = cipher::consts::U8>
            + BlockCipherDecrypt
            + Clone,
    {
        let mut generic = BlockModes::new(cipher.clone());
        let k = &cipher;
        let data: Vec<u8> = (0..8 * 600 + 7).map(|i| (i * 29 % 253) as u8).collect();
        // Every tail length of the interleaved kernels, and around the bulk
        // batches (128 and 256 blocks for DES on SSE2/NEON and AVX2).
        let lengths = (0..=70).chain([127, 128, 129, 255, 256, 257, 383, 384, 512, 517, 600]);
        for blocks in lengths {
            let len = 8 * blocks;
            let plain = &data[..len];
            let name = format!("{} blocks", blocks);

            let (mut a, mut b) = (plain.to_vec(), plain.to_vec());
            block64::ecb_encrypt(k, &mut a);
            generic.ecb_encrypt(&mut b);
            assert_eq!(a, b, "ECB encryption, {name}");
            block64::ecb_decrypt(k, &mut a);
            assert_eq!(a, plain, "ECB decryption, {name}");

            let (mut ia, mut ib) = ([0xA5u8; 8], [0xA5u8; 8]);
            let (mut a, mut b) = (plain.to_vec(), plain.to_vec());
            block64::cbc_encrypt(k, &mut ia, &mut a);
            generic.cbc_encrypt(&mut ib, &mut b);
            assert_eq!((a.clone(), ia), (b, ib), "CBC encryption, {name}");
            let mut ia = [0xA5u8; 8];
            let mut b = a.clone();
            let mut ib = [0xA5u8; 8];
            block64::cbc_decrypt(k, &mut ia, &mut a);
            generic.cbc_decrypt(&mut ib, &mut b);
            assert_eq!((a.as_slice(), ia), (plain, ib), "CBC decryption, {name}");

            for extra in [0, 1, 7] {
                let plain = &data[..len + extra];
                for start in [0u64, 1, u64::MAX - 2, u64::MAX] {
                    let (mut ca, mut cb) = (start.to_be_bytes(), start.to_be_bytes());
                    let (mut a, mut b) = (plain.to_vec(), plain.to_vec());
                    block64::ctr_apply(k, &mut ca, &mut a);
                    generic.ctr_apply(&mut cb, &mut b);
                    assert_eq!((a, ca), (b, cb), "CTR, {name} + {extra} from {start:x}");
                }
            }
        }
        // Calls chain like one call.
        let plain = &data[..8 * 600];
        for split in [0, 8, 24, 8 * 33, 8 * 300] {
            let mut whole = plain.to_vec();
            let mut parts = plain.to_vec();
            let (mut i1, mut i2) = ([3u8; 8], [3u8; 8]);
            block64::cbc_encrypt(k, &mut i1, &mut whole);
            let (x, y) = parts.split_at_mut(split);
            block64::cbc_encrypt(k, &mut i2, x);
            block64::cbc_encrypt(k, &mut i2, y);
            assert_eq!(
                (&whole, i1),
                (&parts, i2),
                "CBC encryption split at {split}"
            );
            let (mut i1, mut i2) = ([3u8; 8], [3u8; 8]);
            block64::cbc_decrypt(k, &mut i1, &mut whole);
            let (x, y) = parts.split_at_mut(split);
            block64::cbc_decrypt(k, &mut i2, x);
            block64::cbc_decrypt(k, &mut i2, y);
            assert_eq!(
                (&whole, i1),
                (&parts, i2),
                "CBC decryption split at {split}"
            );
            assert_eq!(whole, plain);
            let (mut c1, mut c2) = ([9u8; 8], [9u8; 8]);
            block64::ctr_apply(k, &mut c1, &mut whole);
            let (x, y) = parts.split_at_mut(split);
            block64::ctr_apply(k, &mut c2, x);
            block64::ctr_apply(k, &mut c2, y);
            assert_eq!((&whole, c1), (&parts, c2), "CTR split at {split}");
        }
    }

    #[test]
    fn block64_blowfish() {
        use crate::ciphers::blowfish::{Blowfish, PAR_BLOCKS};
        for key in [&[1u8, 2, 3, 4][..], &[0x5Au8; 16], &[0xC3u8; 56]] {
            block64_matches_block_modes::<_, PAR_BLOCKS>(Blowfish::new_from_slice(key).unwrap());
        }
    }

    #[test]
    fn block64_des() {
        use crate::ciphers::des::{Des, PAR_BLOCKS, TdesEde3};
        block64_matches_block_modes::<_, PAR_BLOCKS>(Des::new(&[0x13u8; 8].into()));
        let key: [u8; 24] = core::array::from_fn(|i| (i * 37 + 1) as u8);
        block64_matches_block_modes::<_, PAR_BLOCKS>(TdesEde3::new(&key.into()));
    }

    /// RC2, whose words are little-endian inside block64's big-endian
    /// `u64`s, with keys of several lengths.
    #[test]
    fn block64_rc2() {
        use crate::ciphers::Rc2;
        for len in [1usize, 8, 16, 128] {
            let key: Vec<u8> = (0..len).map(|i| (i * 41 + 3) as u8).collect();
            block64_matches_block_modes::<_, { crate::ciphers::rc2::LANES }>(
                Rc2::new_from_slice(&key).unwrap(),
            );
        }
    }

    /// TEA and XTEA, whose words are little-endian inside block64's
    /// big-endian `u64`s, with the study's repeats (which the CBC chain
    /// kept in the cipher's own words must apply too).
    #[test]
    fn block64_tea() {
        use crate::ciphers::tea::{LANES, Tea, Xtea};
        let key: [u8; 16] = core::array::from_fn(|i| (i * 53 + 7) as u8);
        for repeats in [1, 3] {
            block64_matches_block_modes::<_, LANES>(Tea::with_repeats(&key, repeats).unwrap());
            block64_matches_block_modes::<_, LANES>(Xtea::with_repeats(&key, repeats).unwrap());
        }
    }
}
