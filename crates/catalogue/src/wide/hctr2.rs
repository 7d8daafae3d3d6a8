//! HCTR2 (Crowley, Huckleberry and Biggers, "Length-preserving encryption with
//! HCTR2", IACR ePrint 2021/1441, section 3; the Linux kernel's
//! `crypto/hctr2.c`): a wide-block cipher from AES-256 in XCTR mode and the
//! POLYVAL hash (RFC 8452), fast where the CPU has AES and carry-less multiply.
//!
//! Encryption of `P = M || N` (`M` the first 16 bytes), tweak `T`:
//! `MM = M ^ H(T, N)`, `UU = AES(MM)`, `S = MM ^ UU ^ L`,
//! `V = N ^ XCTR(S)`, `U = UU ^ H(T, V)`, with `h = AES(0)`, `L = AES(le128(1))`,
//! `XCTR(S)_i = AES(S ^ le128(i))` for `i = 1, 2, ...` and
//! `H(T, N) = POLYVAL_h(le128(2·8|T| + 2 + [16 ∤ |N|]) || pad0(T) || pad(N))`,
//! `pad(N)` appending `0x01` and zeros when `N` is not whole blocks.

use cipher::consts::U16;
use cipher::{Array, Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use polyval::hazmat::FieldElement;
use polyval::universal_hash::UniversalHash;

use crate::dispatch;

/// HCTR2's key: one AES-256 key.
pub const KEY_BYTES: usize = 32;
/// The shortest message HCTR2 takes: one AES block.
pub const MIN_BYTES: usize = 16;
/// Counter blocks per AES call in XCTR: enough for the widest AES backends.
const XCTR_BATCH: usize = 64;

/// HCTR2 keyed with one AES-256 key, over the AES implementation `C`.
pub struct Hctr2<C> {
    aes: C,
    h: [u8; 16],
    l: u128,
    clmul: bool,
}

/// A POLYVAL computation: the `polyval` crate where it would pick carry-less
/// multiply and the mask allows it, else the crate's portable field arithmetic.
enum Polyval {
    Crate(polyval::Polyval),
    Soft { h: FieldElement, acc: FieldElement },
}

impl Polyval {
    fn new(h: &[u8; 16], clmul: bool) -> Self {
        if clmul {
            Polyval::Crate(polyval::Polyval::new(&(*h).into()))
        } else {
            Polyval::Soft {
                h: FieldElement::from(*h),
                acc: FieldElement::default(),
            }
        }
    }

    /// Absorbs whole blocks.
    fn blocks(&mut self, data: &[u8]) {
        match self {
            Polyval::Crate(p) => {
                let (blocks, rest) = Array::<u8, U16>::slice_as_chunks(data);
                debug_assert!(rest.is_empty());
                p.update(blocks);
            }
            Polyval::Soft { h, acc } => {
                for b in data.chunks_exact(16) {
                    let b: [u8; 16] = b.try_into().expect("16 bytes");
                    *acc = (*acc + FieldElement::from(b)) * *h;
                }
            }
        }
    }

    fn finish(self) -> u128 {
        let out: [u8; 16] = match self {
            Polyval::Crate(p) => p.finalize().into(),
            Polyval::Soft { acc, .. } => acc.into(),
        };
        u128::from_le_bytes(out)
    }
}

impl<C> Hctr2<C>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt,
{
    /// Keys HCTR2 with `key`; POLYVAL uses carry-less multiply where
    /// [`dispatch::polyval_clmul`] allows it.
    pub fn new(key: &[u8; KEY_BYTES]) -> Self {
        Self::with_clmul(key, dispatch::polyval_clmul())
    }

    /// Like [`Hctr2::new`] with the POLYVAL implementation forced (tests).
    pub fn with_clmul(key: &[u8; KEY_BYTES], clmul: bool) -> Self {
        let aes = C::new_from_slice(key).expect("AES-256 takes 32 bytes");
        let mut h = Block::<C>::default();
        aes.encrypt_block(&mut h);
        let mut l = Block::<C>::from(1u128.to_le_bytes());
        aes.encrypt_block(&mut l);
        Hctr2 {
            aes,
            h: h.into(),
            l: u128::from_le_bytes(l.into()),
            clmul,
        }
    }

    fn hash(&self, tweak: &[u8], n: &[u8]) -> u128 {
        let mut p = Polyval::new(&self.h, self.clmul);
        let partial = !n.len().is_multiple_of(16);
        let mut head = ((tweak.len() as u128) * 16 + 2 + u128::from(partial))
            .to_le_bytes()
            .to_vec();
        head.extend_from_slice(tweak);
        head.resize(head.len().div_ceil(16) * 16, 0);
        p.blocks(&head);
        let whole = n.len() / 16 * 16;
        p.blocks(&n[..whole]);
        if partial {
            let mut last = [0u8; 16];
            last[..n.len() - whole].copy_from_slice(&n[whole..]);
            last[n.len() - whole] = 1;
            p.blocks(&last);
        }
        p.finish()
    }

    /// XORs `data` with XCTR's key stream from `s`.
    fn xctr(&self, s: u128, data: &mut [u8]) {
        let mut ctrs = [Block::<C>::default(); XCTR_BATCH];
        let mut i = 1u128;
        for chunk in data.chunks_mut(16 * XCTR_BATCH) {
            let n = chunk.len().div_ceil(16);
            for c in &mut ctrs[..n] {
                *c = (s ^ i).to_le_bytes().into();
                i += 1;
            }
            self.aes.encrypt_blocks(&mut ctrs[..n]);
            for (d, k) in chunk.chunks_mut(16).zip(&ctrs[..n]) {
                for (x, y) in d.iter_mut().zip(k) {
                    *x ^= y;
                }
            }
        }
    }

    /// Encrypts `data` (at least 16 bytes) in place under `tweak`.
    pub fn encrypt(&self, tweak: &[u8], data: &mut [u8]) {
        assert!(data.len() >= MIN_BYTES, "HCTR2 needs at least 16 bytes");
        let (m, n) = data.split_at_mut(16);
        let mm = u128::from_le_bytes((&*m).try_into().expect("16 bytes")) ^ self.hash(tweak, n);
        let mut uu = Block::<C>::from(mm.to_le_bytes());
        self.aes.encrypt_block(&mut uu);
        let uu = u128::from_le_bytes(uu.into());
        self.xctr(mm ^ uu ^ self.l, n);
        m.copy_from_slice(&(uu ^ self.hash(tweak, n)).to_le_bytes());
    }

    /// Decrypts `data` (at least 16 bytes) in place under `tweak`.
    pub fn decrypt(&self, tweak: &[u8], data: &mut [u8]) {
        assert!(data.len() >= MIN_BYTES, "HCTR2 needs at least 16 bytes");
        let (u, v) = data.split_at_mut(16);
        let uu = u128::from_le_bytes((&*u).try_into().expect("16 bytes")) ^ self.hash(tweak, v);
        let mut mm = Block::<C>::from(uu.to_le_bytes());
        self.aes.decrypt_block(&mut mm);
        let mm = u128::from_le_bytes(mm.into());
        self.xctr(mm ^ uu ^ self.l, v);
        u.copy_from_slice(&(mm ^ self.hash(tweak, v)).to_le_bytes());
    }
}
