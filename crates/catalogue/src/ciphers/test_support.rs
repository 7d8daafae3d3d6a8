//! Shared by the cipher tests: deterministic pseudo-random test data.

/// xorshift64* (Vigna 2016): deterministic test data without a `rand` dependency.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// A cipher's own CBC encryption (`encrypt`, on the cipher `ours` keys)
/// against the generic CBC of [`crate::modes::BlockModes`] over the
/// `reference` crate: `iters` random keys (length from `key_len`), IVs and
/// lengths of 0 to 40 blocks, in one call and split in two calls that must
/// chain (the IV left as the last ciphertext block).
pub fn check_cbc_encrypt<O, R>(
    iters: usize,
    key_len: impl Fn(&mut XorShift, usize) -> usize,
    ours: impl Fn(&[u8]) -> O,
    encrypt: impl Fn(&O, &mut [u8; 16], &mut [u8]),
    reference: impl Fn(&[u8]) -> R,
) where
    R: cipher::BlockCipherEncrypt<BlockSize = cipher::consts::U16> + cipher::BlockCipherDecrypt,
{
    let mut rng = XorShift(0x0123_4567_89AB_CDEF);
    for iter in 0..iters {
        let key_len = key_len(&mut rng, iter);
        let mut key = [0u8; 32];
        rng.fill(&mut key[..key_len]);
        let key = &key[..key_len];
        let cipher = ours(key);
        let generic = crate::modes::BlockModes::new(reference(key));
        let blocks = rng.below(41);
        let mut data = vec![0u8; 16 * blocks];
        rng.fill(&mut data);
        let mut iv = [0u8; 16];
        rng.fill(&mut iv);

        let (mut want, mut want_iv) = (data.clone(), iv);
        generic.cbc_encrypt(&mut want_iv, &mut want);
        let (mut got, mut got_iv) = (data.clone(), iv);
        encrypt(&cipher, &mut got_iv, &mut got);
        assert_eq!(got, want, "{key_len}-byte key, {blocks} blocks");
        assert_eq!(got_iv, want_iv);

        let split = 16 * rng.below(blocks + 1);
        let (mut got, mut got_iv) = (data, iv);
        let (a, b) = got.split_at_mut(split);
        encrypt(&cipher, &mut got_iv, a);
        encrypt(&cipher, &mut got_iv, b);
        assert_eq!(got, want, "{blocks} blocks split at {split}");
        assert_eq!(got_iv, want_iv);
    }
}
