//! AES-CBC encryption through AWS-LC's EVP interface, for the x86 tier
//! without AES instructions.
//!
//! CBC encryption is one block after another, and our SSSE3 code is eight
//! blocks bitsliced: one block costs as much as eight (61 c/B against
//! OpenSSL's 12.8 for AES-128 on a Zen 3). AWS-LC runs Hamburg's
//! vector-permute AES ("Accelerating AES with Vector Permute Instructions",
//! CHES 2009; constant time, `pshufb` lookups of 16-entry tables) as one
//! assembly loop (`vpaes_cbc_encrypt`) when its capability vector says SSSE3
//! but no AES-NI, which is what `OPENSSL_ia32cap` tells it under the mask.
//! [`crate::dispatch::aes_cbc_encrypt_aws_lc`] decides when this runs: only
//! where AWS-LC has been told the mask, so that it cannot pick AES-NI.

use aws_lc_sys::{
    EVP_CIPHER, EVP_CIPHER_CTX, EVP_CIPHER_CTX_free, EVP_CIPHER_CTX_new,
    EVP_CIPHER_CTX_set_padding, EVP_EncryptInit_ex, EVP_EncryptUpdate, EVP_aes_128_cbc,
    EVP_aes_192_cbc, EVP_aes_256_cbc,
};

use super::BLOCK;

/// A keyed AES-CBC encryption context of AWS-LC (freed, and its key schedule
/// wiped by AWS-LC's allocator, on drop).
pub struct AwsLcCbcEncrypt {
    ctx: *mut EVP_CIPHER_CTX,
}

// SAFETY: the context is owned by this value alone and only used through
// `&mut self`; AWS-LC's cipher contexts have no thread affinity.
unsafe impl Send for AwsLcCbcEncrypt {}

/// Requests longer than this are fed to AWS-LC in pieces (its length is a
/// C `int`).
const MAX_UPDATE: usize = 1 << 30;

impl AwsLcCbcEncrypt {
    /// Keys AES-128/192/256 CBC encryption; `None` for another key length or
    /// when AWS-LC fails to allocate.
    pub fn new(key: &[u8]) -> Option<AwsLcCbcEncrypt> {
        // SAFETY: these return pointers to static cipher descriptions.
        let cipher: *const EVP_CIPHER = unsafe {
            match key.len() {
                16 => EVP_aes_128_cbc(),
                24 => EVP_aes_192_cbc(),
                32 => EVP_aes_256_cbc(),
                _ => return None,
            }
        };
        // SAFETY: allocates a fresh context (null on failure, checked).
        let ctx = unsafe { EVP_CIPHER_CTX_new() };
        if ctx.is_null() {
            return None;
        }
        let this = AwsLcCbcEncrypt { ctx };
        let zero_iv = [0u8; BLOCK];
        // SAFETY: `ctx` is valid; `key` has the cipher's key length (matched
        // above) and the IV 16 bytes; AWS-LC copies both.
        let ok = unsafe {
            EVP_EncryptInit_ex(
                this.ctx,
                cipher,
                core::ptr::null_mut(),
                key.as_ptr(),
                zero_iv.as_ptr(),
            ) == 1
                && EVP_CIPHER_CTX_set_padding(this.ctx, 0) == 1
        };
        ok.then_some(this)
    }

    /// CBC encryption of whole blocks in place from `iv`, which becomes the
    /// last ciphertext block.
    ///
    /// # Panics
    /// If `data` is not a whole number of blocks, or AWS-LC reports an error
    /// (it does not for whole blocks without padding).
    pub fn encrypt(&mut self, iv: &mut [u8; BLOCK], data: &mut [u8]) {
        assert!(data.len().is_multiple_of(BLOCK), "whole blocks only");
        if data.is_empty() {
            return;
        }
        // SAFETY: `ctx` was keyed in `new`; a null cipher and key keep them
        // and set only the IV (16 bytes read).
        let ok = unsafe {
            EVP_EncryptInit_ex(
                self.ctx,
                core::ptr::null(),
                core::ptr::null_mut(),
                core::ptr::null(),
                iv.as_ptr(),
            )
        };
        assert_eq!(ok, 1, "AWS-LC refused to set the CBC IV");
        for piece in data.chunks_mut(MAX_UPDATE) {
            let len = piece.len();
            let mut out_len: core::ffi::c_int = 0;
            let p = piece.as_mut_ptr();
            // SAFETY: `p` is valid for `len` bytes of reading and writing; AWS-LC
            // allows the output to be the input exactly (in place); with padding
            // off and whole blocks it writes exactly `len` bytes and buffers
            // nothing, and keeps the chaining value for the next piece.
            let ok = unsafe {
                EVP_EncryptUpdate(
                    self.ctx,
                    p,
                    &mut out_len,
                    p,
                    core::ffi::c_int::try_from(len).expect("pieces fit an int"),
                )
            };
            assert!(
                ok == 1 && usize::try_from(out_len) == Ok(len),
                "AWS-LC's CBC encryption did not take whole blocks"
            );
        }
        iv.copy_from_slice(&data[data.len() - BLOCK..]);
    }
}

impl Drop for AwsLcCbcEncrypt {
    fn drop(&mut self) {
        // SAFETY: `ctx` came from `EVP_CIPHER_CTX_new` and is freed once;
        // freeing cleans up the cipher data (the key schedule) first.
        unsafe { EVP_CIPHER_CTX_free(self.ctx) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{BlockCipherEncrypt, KeyInit};

    /// CBC over the `aes` crate's block function (SP 800-38A §6.2).
    fn oracle<C: KeyInit + BlockCipherEncrypt<BlockSize = cipher::consts::U16>>(
        key: &[u8],
        iv: &[u8; 16],
        data: &[u8],
    ) -> Vec<u8> {
        let c = C::new_from_slice(key).expect("key length");
        let mut chain = *iv;
        let mut out = Vec::with_capacity(data.len());
        for block in data.chunks_exact(16) {
            let mut b = cipher::Block::<C>::default();
            for ((o, p), v) in b.iter_mut().zip(block).zip(&chain) {
                *o = p ^ v;
            }
            c.encrypt_block(&mut b);
            chain.copy_from_slice(&b);
            out.extend_from_slice(&b);
        }
        out
    }

    /// Against the `aes` crate, for every key size, several calls chained
    /// through `iv` (empty ones included).
    #[test]
    fn matches_the_aes_crate_across_calls() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for key_len in [16, 24, 32] {
            let key: Vec<u8> = (0..key_len).map(|_| next() as u8).collect();
            let mut ours = AwsLcCbcEncrypt::new(&key).expect("AES key");
            let mut iv = [0u8; 16];
            iv.iter_mut().for_each(|b| *b = next() as u8);
            let start_iv = iv;
            let (mut all, mut got) = (Vec::new(), Vec::new());
            for blocks in [1usize, 0, 3, 8, 17, 64, 2] {
                let mut data: Vec<u8> = (0..blocks * 16).map(|_| next() as u8).collect();
                all.extend_from_slice(&data);
                ours.encrypt(&mut iv, &mut data);
                got.extend_from_slice(&data);
            }
            let want = match key_len {
                16 => oracle::<::aes::Aes128>(&key, &start_iv, &all),
                24 => oracle::<::aes::Aes192>(&key, &start_iv, &all),
                _ => oracle::<::aes::Aes256>(&key, &start_iv, &all),
            };
            assert_eq!(got, want, "AES-{} CBC", key_len * 8);
            assert_eq!(iv[..], want[want.len() - 16..], "chaining value");
        }
    }

    #[test]
    fn refuses_other_key_lengths() {
        assert!(AwsLcCbcEncrypt::new(&[0; 20]).is_none());
    }
}
