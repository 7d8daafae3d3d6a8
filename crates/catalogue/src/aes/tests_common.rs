//! Checks every AES implementation of ours runs against the `aes` crate.

use cipher::consts::U16;
use cipher::{Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use hex_literal::hex;

use crate::modes::{BlockModes, Xts};

/// A small deterministic generator (SplitMix64) for test data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `C` and the oracle `O`, keyed alike, agree on random keys and data, one
/// block and many (every count up to 40, so every batch remainder), both ways.
pub(crate) fn check_against_oracle<C, O>()
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    O: KeyInit<KeySize = C::KeySize> + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    let mut rng = Rng::new(C::key_size() as u64);
    for trial in 0..20 {
        let mut key = vec![0u8; C::key_size()];
        rng.fill(&mut key);
        let ours = C::new_from_slice(&key).expect("key size");
        let oracle = O::new_from_slice(&key).expect("key size");
        let n = if trial < 2 { 1 } else { 1 + trial * 2 };
        let mut data = vec![Block::<C>::default(); n];
        for b in &mut data {
            rng.fill(b);
        }
        let mut expect = data.clone();
        oracle.encrypt_blocks(&mut expect);
        let mut got = data.clone();
        ours.encrypt_blocks(&mut got);
        assert_eq!(got, expect, "encrypt, {n} blocks, key size {}", key.len());
        let mut one = data[0];
        ours.encrypt_block(&mut one);
        assert_eq!(one, expect[0], "encrypt one block");
        ours.decrypt_blocks(&mut got);
        assert_eq!(got, data, "decrypt, {n} blocks");
        let mut one = expect[0];
        ours.decrypt_block(&mut one);
        assert_eq!(one, data[0], "decrypt one block");
    }
}

/// FIPS-197 Appendix C: the example vectors for each key size.
pub(crate) fn fips197<C128, C192, C256>()
where
    C128: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    C192: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    C256: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    fn one<C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt>(
        key_len: usize,
        expect: [u8; 16],
    ) {
        let key: Vec<u8> = (0..key_len as u8).collect();
        let plain = hex!("00112233445566778899aabbccddeeff");
        let c = C::new_from_slice(&key).expect("key size");
        let mut b = Block::<C>::from(plain);
        c.encrypt_block(&mut b);
        assert_eq!(b, Block::<C>::from(expect), "C.{key_len} encrypt");
        c.decrypt_block(&mut b);
        assert_eq!(b, Block::<C>::from(plain), "C.{key_len} decrypt");
    }
    one::<C128>(16, hex!("69c4e0d86a7b0430d8cdb78070b4c55a"));
    one::<C192>(24, hex!("dda97ca4864cdfe06eaf70a0ec0d7191"));
    one::<C256>(32, hex!("8ea2b7ca516745bfeafc49904b496089"));
}

/// Every mode of [`BlockModes`] and [`Xts`] gives the same bytes with `C` as
/// with the oracle `O`, on random lengths across batch boundaries.
pub(crate) fn modes<C, O>()
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
    O: KeyInit<KeySize = C::KeySize> + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    let mut rng = Rng::new(0x5eed ^ C::key_size() as u64);
    let batch = crate::modes::BATCH_BYTES;
    let mut lens = vec![
        16,
        32,
        48,
        64,
        80,
        112,
        128,
        144,
        batch - 16,
        batch,
        batch + 48,
    ];
    for _ in 0..6 {
        lens.push(16 * (1 + rng.below(3 * batch / 16)));
    }
    for len in lens {
        let mut key = vec![0u8; C::key_size()];
        rng.fill(&mut key);
        let mut ours = BlockModes::new(C::new_from_slice(&key).expect("key"));
        let mut oracle = BlockModes::new(O::new_from_slice(&key).expect("key"));
        let mut data = vec![0u8; len];
        rng.fill(&mut data);
        let mut iv = [0u8; 16];
        rng.fill(&mut iv);
        for mode in ["ecb", "cbc", "ctr"] {
            let (mut a, mut b) = (data.clone(), data.clone());
            let (mut ia, mut ib) = (iv, iv);
            match mode {
                "ecb" => {
                    ours.ecb_encrypt(&mut a);
                    oracle.ecb_encrypt(&mut b);
                }
                "cbc" => {
                    ours.cbc_encrypt(&mut ia, &mut a);
                    oracle.cbc_encrypt(&mut ib, &mut b);
                }
                _ => {
                    ours.ctr_apply(&mut ia, &mut a);
                    oracle.ctr_apply(&mut ib, &mut b);
                }
            }
            assert_eq!(a, b, "{mode} encrypt, {len} bytes");
            assert_eq!(ia, ib, "{mode} chaining value");
            let mut ia = iv;
            match mode {
                "ecb" => ours.ecb_decrypt(&mut a),
                "cbc" => ours.cbc_decrypt(&mut ia, &mut a),
                _ => ours.ctr_apply(&mut ia, &mut a),
            }
            assert_eq!(a, data, "{mode} decrypt, {len} bytes");
        }
        // XTS with a partial last block too (ciphertext stealing).
        let xlen = len + rng.below(16);
        let mut data = vec![0u8; xlen];
        rng.fill(&mut data);
        let mut k2 = vec![0u8; C::key_size()];
        rng.fill(&mut k2);
        let mut ours = Xts::new(
            C::new_from_slice(&key).expect("key"),
            C::new_from_slice(&k2).expect("key"),
        );
        let mut oracle = Xts::new(
            O::new_from_slice(&key).expect("key"),
            O::new_from_slice(&k2).expect("key"),
        );
        let (mut a, mut b) = (data.clone(), data.clone());
        ours.encrypt(&iv, &mut a);
        oracle.encrypt(&iv, &mut b);
        assert_eq!(a, b, "xts encrypt, {xlen} bytes");
        ours.decrypt(&iv, &mut a);
        assert_eq!(a, data, "xts decrypt, {xlen} bytes");
    }
}
