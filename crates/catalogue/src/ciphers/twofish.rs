//! Table-driven Twofish block cipher.
//!
//! # Why this exists
//!
//! The RustCrypto [`twofish`](https://docs.rs/twofish) 0.8 crate keeps only
//! the 16 S-box key bytes after key setup and re-evaluates the key-dependent
//! S-boxes (`q0`/`q1` nibble permutations, key XORs and the MDS product in
//! GF(2^8), bit by bit) inside every round. That is compact but runs at about
//! 3 MiB/s, which makes Twofish look two orders of magnitude slower than it
//! is in a cipher benchmark (libgcrypt manages 290-590 MiB/s on the same
//! hardware).
//!
//! This module implements the textbook fast variant instead: the "full
//! keying" option of the Twofish paper (B. Schneier, J. Kelsey, D. Whiting,
//! D. Wagner, C. Hall, N. Ferguson, *Twofish: A 128-Bit Block Cipher*,
//! AES submission, 15 June 1998, sections 4.3 and 7.1). Key setup folds the
//! key-dependent S-boxes and the MDS matrix into four 256-entry `u32`
//! tables, so `g` is four table lookups and three XORs, and a round is two
//! `g` evaluations, a pseudo-Hadamard transform, two subkey additions and
//! three rotations. Key setup costs about 1 100 small table lookups
//! (a few microseconds), the tables take 4 KiB per key.
//!
//! The multi-block path ([`BlockCipherEncrypt::encrypt_blocks`] and friends)
//! runs [`PAR_BLOCKS`] blocks a call through the implementation
//! [`crate::dispatch::twofish`] chose at key setup: the table rounds four
//! blocks interleaved, so that independent lookups of different blocks
//! overlap in the CPU pipeline; on x86-64, `x86_avx2` (16 blocks, the lookups
//! as AVX2 gathers) or `x86_gfni` (32 blocks in AVX-512 registers, no memory
//! lookups).
//!
//! The output is bit-for-bit identical to the `twofish` crate (checked by
//! the tests against it and against the paper's known-answer vectors), and
//! the type implements the same `cipher` 0.5 traits, so it is a drop-in
//! replacement.
//!
//! Like every table-driven Twofish (and the `twofish` crate, whose S-box
//! evaluation also indexes tables with secret data), lookups are indexed by
//! secret-dependent bytes, so the table rounds and the gather kernel are not
//! constant-time with respect to cache-timing side channels; the GFNI kernel
//! is (its lookups are register permutes).

use core::fmt;

use cipher::{
    AlgorithmName, Block, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, InOut,
    InOutBuf, InvalidLength, Key, KeyInit, KeySizeUser, ParBlocks, ParBlocksSizeUser,
    consts::{U16, U32},
};
use zeroize::{Zeroize, ZeroizeOnDrop};

#[cfg(target_arch = "x86_64")]
mod x86_avx2;
#[cfg(target_arch = "x86_64")]
mod x86_gfni;
#[cfg(target_arch = "x86_64")]
mod x86_rounds;

/// Number of blocks of the backends' multi-block calls: the widest kernel's
/// (AVX-512 with GFNI, 32) on x86-64, else the table rounds' four.
#[cfg(target_arch = "x86_64")]
pub const PAR_BLOCKS: usize = x86_gfni::LANES;
/// Number of blocks of the backends' multi-block calls.
#[cfg(not(target_arch = "x86_64"))]
pub const PAR_BLOCKS: usize = TABLE_BLOCKS;

/// Number of blocks the table rounds process interleaved.
const TABLE_BLOCKS: usize = 4;

/// `ParBlocksSize` of the backends; must equal [`PAR_BLOCKS`].
#[cfg(target_arch = "x86_64")]
type ParSize = U32;
#[cfg(not(target_arch = "x86_64"))]
type ParSize = cipher::consts::U4;

// ---------------------------------------------------------------------------
// Fixed tables, computed at compile time from the paper's definitions.
// ---------------------------------------------------------------------------

/// The 4-bit permutations `t0..t3` of `q0` (paper, section 4.3.5).
const Q0_T: [[u8; 16]; 4] = [
    [
        0x8, 0x1, 0x7, 0xD, 0x6, 0xF, 0x3, 0x2, 0x0, 0xB, 0x5, 0x9, 0xE, 0xC, 0xA, 0x4,
    ],
    [
        0xE, 0xC, 0xB, 0x8, 0x1, 0x2, 0x3, 0x5, 0xF, 0x4, 0xA, 0x6, 0x7, 0x0, 0x9, 0xD,
    ],
    [
        0xB, 0xA, 0x5, 0xE, 0x6, 0xD, 0x9, 0x0, 0xC, 0x8, 0xF, 0x3, 0x2, 0x4, 0x7, 0x1,
    ],
    [
        0xD, 0x7, 0xF, 0x4, 0x1, 0x2, 0x6, 0xE, 0x9, 0xB, 0x3, 0x0, 0x8, 0x5, 0xC, 0xA,
    ],
];

/// The 4-bit permutations `t0..t3` of `q1` (paper, section 4.3.5).
const Q1_T: [[u8; 16]; 4] = [
    [
        0x2, 0x8, 0xB, 0xD, 0xF, 0x7, 0x6, 0xE, 0x3, 0x1, 0x9, 0x4, 0x0, 0xA, 0xC, 0x5,
    ],
    [
        0x1, 0xE, 0x2, 0xB, 0x4, 0xC, 0x3, 0x7, 0x6, 0xD, 0xA, 0x5, 0xF, 0x9, 0x0, 0x8,
    ],
    [
        0x4, 0xC, 0x7, 0x5, 0x1, 0x6, 0x9, 0xA, 0x0, 0xE, 0xD, 0x8, 0x2, 0xB, 0x3, 0xF,
    ],
    [
        0xB, 0x9, 0x5, 0x1, 0xC, 0x3, 0xD, 0xE, 0x6, 0x4, 0x7, 0xF, 0x2, 0x0, 0x8, 0xA,
    ],
];

/// 4-bit rotate right by one.
const fn ror4(x: u8) -> u8 {
    ((x >> 1) | (x << 3)) & 0xF
}

/// Builds the 8-bit permutation `q` from its nibble permutations (paper,
/// section 4.3.5).
const fn build_q(t: &[[u8; 16]; 4]) -> [u8; 256] {
    let mut q = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let a0 = (x >> 4) as u8;
        let b0 = (x & 0xF) as u8;
        let a1 = a0 ^ b0;
        let b1 = (a0 ^ ror4(b0) ^ (a0 << 3)) & 0xF;
        let a2 = t[0][a1 as usize];
        let b2 = t[1][b1 as usize];
        let a3 = a2 ^ b2;
        let b3 = (a2 ^ ror4(b2) ^ (a2 << 3)) & 0xF;
        let a4 = t[2][a3 as usize];
        let b4 = t[3][b3 as usize];
        q[x] = (b4 << 4) | a4;
        x += 1;
    }
    q
}

/// The fixed permutation `q0`.
const Q0: [u8; 256] = build_q(&Q0_T);
/// The fixed permutation `q1`.
const Q1: [u8; 256] = build_q(&Q1_T);

/// Multiplication in GF(2^8) modulo `x^8 + poly_low` (the `0x100` bit is
/// implied).
const fn gf_mul(mut a: u8, mut b: u8, poly_low: u8) -> u8 {
    let mut r = 0u8;
    while a != 0 {
        if a & 1 != 0 {
            r ^= b;
        }
        a >>= 1;
        b = if b & 0x80 != 0 {
            (b << 1) ^ poly_low
        } else {
            b << 1
        };
    }
    r
}

/// MDS field polynomial `x^8 + x^6 + x^5 + x^3 + 1` (0x169).
const MDS_POLY: u8 = 0x69;
/// RS field polynomial `x^8 + x^6 + x^3 + x^2 + 1` (0x14D).
const RS_POLY: u8 = 0x4D;

/// The MDS matrix (paper, section 4.2).
const MDS: [[u8; 4]; 4] = [
    [0x01, 0xEF, 0x5B, 0x5B],
    [0x5B, 0xEF, 0xEF, 0x01],
    [0xEF, 0x5B, 0x01, 0xEF],
    [0xEF, 0x01, 0xEF, 0x5B],
];

/// The Reed-Solomon matrix used to derive the S-box key (paper, section 4.3).
const RS: [[u8; 8]; 4] = [
    [0x01, 0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E],
    [0xA4, 0x56, 0x82, 0xF3, 0x1E, 0xC6, 0x68, 0xE5],
    [0x02, 0xA1, 0xFC, 0xC1, 0x47, 0xAE, 0x3D, 0x19],
    [0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E, 0x03],
];

/// The constant `rho = 2^24 + 2^16 + 2^8 + 1` of the subkey generation
/// (paper, section 4.3).
const RHO: u32 = 0x0101_0101;

/// `MDS_COL[j][y]` = column `j` of the MDS matrix times byte `y`, packed
/// little-endian into a word (row `i` in byte `i`).
const MDS_COL: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let mut j = 0;
    while j < 4 {
        let mut y = 0;
        while y < 256 {
            let mut w = 0u32;
            let mut i = 0;
            while i < 4 {
                w |= (gf_mul(MDS[i][j], y as u8, MDS_POLY) as u32) << (8 * i);
                i += 1;
            }
            t[j][y] = w;
            y += 1;
        }
        j += 1;
    }
    t
};

/// Which permutation (`false` = `q0`, `true` = `q1`) each byte position
/// goes through at each stage of `h` (paper, figure 2 / section 4.3.2).
/// Stages, outermost first: the `k = 4` stage (XOR `L3`), the `k >= 3`
/// stage (XOR `L2`), the two always-present stages (XOR `L1`, then `L0`)
/// and the final permutation before the MDS multiply.
const H_STAGES: [[bool; 4]; 5] = [
    [true, false, false, true],
    [true, true, false, false],
    [false, true, false, true],
    [false, false, true, true],
    [true, false, true, false],
];

/// `q1[x]` if `sel`, else `q0[x]`.
#[inline(always)]
fn q(sel: bool, x: u8) -> u8 {
    if sel {
        Q1[usize::from(x)]
    } else {
        Q0[usize::from(x)]
    }
}

/// The byte-`j` path of the function `h` (paper, section 4.3.2) without the
/// final MDS multiplication: `l[i]` holds the bytes of key word `L_i`, and
/// `k` (2, 3 or 4) is the number of key words.
fn h_byte(j: usize, mut y: u8, l: &[[u8; 4]; 4], k: usize) -> u8 {
    if k == 4 {
        y = q(H_STAGES[0][j], y) ^ l[3][j];
    }
    if k >= 3 {
        y = q(H_STAGES[1][j], y) ^ l[2][j];
    }
    y = q(H_STAGES[2][j], y) ^ l[1][j];
    y = q(H_STAGES[3][j], y) ^ l[0][j];
    q(H_STAGES[4][j], y)
}

/// The function `h` (paper, section 4.3.2).
fn h(x: u32, l: &[[u8; 4]; 4], k: usize) -> u32 {
    x.to_le_bytes().iter().enumerate().fold(0, |acc, (j, &b)| {
        acc ^ MDS_COL[j][usize::from(h_byte(j, b, l, k))]
    })
}

/// XOR of four table words: as a chain, or as a tree (`serial`: one cycle
/// shorter when they arrive together).
#[inline(always)]
fn xor4(t: [u32; 4], serial: bool) -> u32 {
    if serial {
        opaque(t[0] ^ t[1]) ^ opaque(t[2] ^ t[3])
    } else {
        t[0] ^ t[1] ^ t[2] ^ t[3]
    }
}

/// `x`, hidden from the optimiser (no instruction is emitted): LLVM
/// re-associates XOR and addition trees into chains, which lengthens the
/// critical path of a single block.
#[inline(always)]
fn opaque(mut x: u32) -> u32 {
    // The template is a comment naming the register (32-bit form).
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty asm block: no instruction, no memory or stack access.
    unsafe {
        core::arch::asm!("/* {0:e} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: an empty asm block: no instruction, no memory or stack access.
    unsafe {
        core::arch::asm!("/* {0:w} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "arm")]
    // SAFETY: an empty asm block: no instruction, no memory or stack access.
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

// ---------------------------------------------------------------------------
// The cipher.
// ---------------------------------------------------------------------------

/// Twofish block cipher (128-bit block; 128, 192 or 256-bit key) with
/// precomputed key-dependent S-box/MDS tables ("full keying").
///
/// Same interface and output as `twofish::Twofish` from the `twofish`
/// crate, about 150-200 times faster on bulk data (about 600 MiB/s versus
/// 3-4 MiB/s on an AMD EPYC core).
#[derive(Clone)]
pub struct Twofish {
    /// Round subkeys `K_0 .. K_39`.
    k: [u32; 40],
    /// Key-dependent tables: `s[j][x]` = MDS column `j` times the S-box
    /// output for byte `x` at position `j`; `g(X)` is the XOR of
    /// `s[j][byte j of X]`.
    s: [[u32; 256]; 4],
    /// The key-dependent S-boxes alone, their outputs mapped into AES's
    /// field (the AVX-512 GFNI kernel's tables).
    #[cfg(target_arch = "x86_64")]
    sbox_phi: [[u8; 256]; 4],
    /// The code that runs bulk data, as [`crate::dispatch::twofish`] chose
    /// when the key was set.
    imp: Imp,
}

/// Twofish's multi-block implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Imp {
    /// Four blocks interleaved, lookups as loads.
    Table,
    /// 16 blocks, lookups as AVX2 gathers.
    #[cfg(target_arch = "x86_64")]
    Gather,
    /// 32 blocks, S-boxes by AVX-512 VBMI permutes, MDS by GFNI.
    #[cfg(target_arch = "x86_64")]
    Gfni,
}

impl Imp {
    const ALL: &[Imp] = &[
        Imp::Table,
        #[cfg(target_arch = "x86_64")]
        Imp::Gather,
        #[cfg(target_arch = "x86_64")]
        Imp::Gfni,
    ];

    fn name(self) -> &'static str {
        match self {
            Imp::Table => "table",
            #[cfg(target_arch = "x86_64")]
            Imp::Gather => "avx2-gather",
            #[cfg(target_arch = "x86_64")]
            Imp::Gfni => "avx512-gfni",
        }
    }

    /// Whether the CPU features in use run it.
    fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        let f = crate::cpu::features();
        match self {
            Imp::Table => true,
            #[cfg(target_arch = "x86_64")]
            Imp::Gather => f.avx2,
            #[cfg(target_arch = "x86_64")]
            Imp::Gfni => f.avx512 && crate::cpu::gfni_vbmi(),
        }
    }

    fn from_name(name: &str) -> Option<Imp> {
        Imp::ALL.iter().copied().find(|i| i.name() == name)
    }
}

impl Twofish {
    /// The multi-block implementation this key runs: `"avx512-gfni"`,
    /// `"avx2-gather"` or `"table"`.
    pub fn backend(&self) -> &'static str {
        self.imp.name()
    }

    /// Every multi-block implementation's name.
    pub fn backends() -> impl Iterator<Item = &'static str> {
        Imp::ALL.iter().map(|i| i.name())
    }

    /// The same key on the multi-block implementation `name` (as
    /// [`Twofish::backend`] names them), or `None` where this CPU (with the
    /// mask applied) cannot run it: for the tests and benchmarks of each
    /// backend.
    pub fn with_backend(&self, name: &str) -> Option<Self> {
        let imp = Imp::from_name(name).filter(|i| i.available())?;
        let mut c = self.clone();
        c.imp = imp;
        Some(c)
    }

    /// Encrypts `n` blocks from `inp` to `out`: the kernel `imp` names
    /// ([`Twofish::wide_many`]), the table rounds for what it leaves.
    ///
    /// # Safety
    ///
    /// `inp` valid for reading and `out` for writing `n` blocks, the same
    /// blocks or disjoint ones.
    #[inline(always)]
    unsafe fn encrypt_many(&self, inp: *const [u8; 16], out: *mut [u8; 16], n: usize) {
        // SAFETY: as the caller promised; `imp` is a kernel the CPU runs
        // (`dispatch::twofish`, `with_backend`), and blocks `done..n` exist.
        unsafe {
            let done = match self.imp {
                Imp::Table => 0,
                #[cfg(target_arch = "x86_64")]
                Imp::Gather => {
                    self.wide_many::<{ x86_avx2::LANES }>(inp, out, n, x86_avx2::encrypt)
                }
                #[cfg(target_arch = "x86_64")]
                Imp::Gfni => self.wide_many::<{ x86_gfni::LANES }>(inp, out, n, x86_gfni::encrypt),
            };
            self.table_many::<true>(inp.add(done), out.add(done), n - done);
        }
    }

    /// The decryption of [`Twofish::encrypt_many`].
    ///
    /// # Safety
    ///
    /// As [`Twofish::encrypt_many`].
    #[inline(always)]
    unsafe fn decrypt_many(&self, inp: *const [u8; 16], out: *mut [u8; 16], n: usize) {
        // SAFETY: as in `encrypt_many`.
        unsafe {
            let done = match self.imp {
                Imp::Table => 0,
                #[cfg(target_arch = "x86_64")]
                Imp::Gather => {
                    self.wide_many::<{ x86_avx2::LANES }>(inp, out, n, x86_avx2::decrypt)
                }
                #[cfg(target_arch = "x86_64")]
                Imp::Gfni => self.wide_many::<{ x86_gfni::LANES }>(inp, out, n, x86_gfni::decrypt),
            };
            self.table_many::<false>(inp.add(done), out.add(done), n - done);
        }
    }

    /// The first blocks of `n` through the `L`-block kernel `kernel`: its
    /// whole batches, and a rest of `L / 4` or more blocks padded to a batch
    /// (cheaper than the table rounds from there). Returns how many blocks
    /// it did; the rest is for the table rounds.
    ///
    /// # Safety
    ///
    /// As [`Twofish::encrypt_many`], and `kernel` one the CPU runs.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn wide_many<const L: usize>(
        &self,
        inp: *const [u8; 16],
        out: *mut [u8; 16],
        n: usize,
        kernel: unsafe fn(&Self, *const [u8; 16], *mut [u8; 16]),
    ) -> usize {
        // SAFETY: the pointers as promised (batch `i` ends at or before
        // block `n`), or a local buffer of the kernel's width.
        unsafe {
            let mut i = 0;
            while n - i >= L {
                kernel(self, inp.add(i), out.add(i));
                i += L;
            }
            let rest = n - i;
            if rest < L / 4 {
                return i;
            }
            let mut buf = [[0u8; 16]; L];
            core::ptr::copy_nonoverlapping(inp.add(i), buf.as_mut_ptr(), rest);
            kernel(self, buf.as_ptr(), buf.as_mut_ptr());
            core::ptr::copy_nonoverlapping(buf.as_ptr(), out.add(i), rest);
            buf.zeroize();
            n
        }
    }

    /// `n` blocks through the table rounds (encryption if `ENC`, else
    /// decryption): [`TABLE_BLOCKS`] interleaved by [`Twofish::table_words`],
    /// a rest of two or more padded to that, one alone.
    ///
    /// # Safety
    ///
    /// As [`Twofish::encrypt_many`].
    #[inline(always)]
    unsafe fn table_many<const ENC: bool>(
        &self,
        inp: *const [u8; 16],
        out: *mut [u8; 16],
        n: usize,
    ) {
        let mut i = 0;
        while i < n {
            let m = (n - i).min(TABLE_BLOCKS);
            if m == 1 {
                // SAFETY: block `i < n` as the caller promised.
                let mut x = [load(unsafe { &*inp.add(i) })];
                self.words::<ENC, 1>(&mut x);
                // SAFETY: as above; the input block was read.
                store(unsafe { &mut *out.add(i) }, &x[0]);
            } else {
                let mut x = [[0u32; 4]; TABLE_BLOCKS];
                for (j, x) in x.iter_mut().take(m).enumerate() {
                    // SAFETY: block `i + j < n` as the caller promised.
                    *x = load(unsafe { &*inp.add(i + j) });
                }
                self.table_words::<ENC>(&mut x);
                for (j, x) in x.iter().take(m).enumerate() {
                    // SAFETY: as above; all `m` input blocks were read.
                    store(unsafe { &mut *out.add(i + j) }, x);
                }
            }
            i += m;
        }
    }

    /// [`TABLE_BLOCKS`] blocks' words through the table rounds, interleaved.
    /// Inlined on aarch64, whose 31 general registers hold the sixteen words
    /// (as a call it took them through memory: CBC decryption 36.57 against
    /// 32.21 instructions a byte); a call elsewhere: x86-64's 15 registers
    /// cannot hold them, and a function of the array alone works on it in
    /// place, where inlined into the callers' loops, with their pointers
    /// live too, it spilled (the portable tier's Twofish CBC decryption 418
    /// against 197 MiB/s, CTR 400 against 285 on Emerald Rapids).
    #[cfg_attr(target_arch = "aarch64", inline(always))]
    #[cfg_attr(not(target_arch = "aarch64"), inline(never))]
    fn table_words<const ENC: bool>(&self, x: &mut [[u32; 4]; TABLE_BLOCKS]) {
        self.words::<ENC, TABLE_BLOCKS>(x)
    }

    /// CBC encryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block, so consecutive calls chain.
    ///
    /// Same result as the generic CBC of [`crate::modes::BlockModes`], but the
    /// chaining value stays in registers: the generic loop re-reads each
    /// ciphertext block from memory as one 16-byte load right after it was
    /// stored as four words, which store-to-load forwarding cannot serve (a
    /// stall of several cycles on every block of a serial chain).
    ///
    /// # Panics
    ///
    /// If `data` is not a whole number of blocks.
    pub fn cbc_encrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        let (blocks, rest) = data.as_chunks_mut::<16>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        let mut x = [load(iv)];
        for block in blocks {
            for (c, p) in x[0].iter_mut().zip(load(block)) {
                *c ^= p;
            }
            self.encrypt_words(&mut x);
            store(block, &x[0]);
        }
        store(iv, &x[0]);
    }

    /// CBC decryption of whole blocks in place; `iv` becomes the last
    /// ciphertext block, so consecutive calls chain.
    ///
    /// Same result as the generic CBC of [`crate::modes::BlockModes`], but a
    /// batch of [`PAR_BLOCKS`] at a time: the multi-block kernel decrypts the
    /// batch into a buffer on the stack, and one pass XORs each block with
    /// the ciphertext before it and writes it back, all in L1. The generic
    /// loop copies a whole request aside, decrypts it and XORs it in two
    /// more passes. The gather kernel's whole batches XOR as they are stored
    /// (`x86_avx2::cbc_decrypt`, no buffer at all). The rows use it on
    /// x86-64 only: on aarch64 (four-block batches of the table
    /// rounds) it executed 33.35 instructions a byte against the generic
    /// loop's 32.21 in the same build (`arm_count.py`).
    ///
    /// # Panics
    ///
    /// If `data` is not a whole number of blocks.
    pub fn cbc_decrypt(&self, iv: &mut [u8; 16], data: &mut [u8]) {
        let (blocks, rest) = data.as_chunks_mut::<16>();
        assert!(
            rest.is_empty(),
            "length must be a multiple of the block size"
        );
        // The gather kernel XORs as it stores: its whole batches first.
        #[cfg(target_arch = "x86_64")]
        let blocks = if self.imp == Imp::Gather {
            let (batches, rest) = blocks.as_chunks_mut::<{ x86_avx2::LANES }>();
            for b in batches {
                let next = b[x86_avx2::LANES - 1];
                // SAFETY: `imp` is a kernel the CPU runs (`dispatch::twofish`,
                // `with_backend`); `b` is one batch, decrypted in place.
                unsafe {
                    x86_avx2::cbc_decrypt(self, iv, b.as_ptr().cast(), b.as_mut_ptr().cast())
                };
                *iv = next;
            }
            rest
        } else {
            blocks
        };
        let mut prev = u128::from_ne_bytes(*iv);
        let mut buf = [[0u8; 16]; PAR_BLOCKS];
        for chunk in blocks.chunks_mut(PAR_BLOCKS) {
            // SAFETY: `chunk` holds `chunk.len()` blocks to read, `buf` at
            // least as many to write, and they do not overlap.
            unsafe { self.decrypt_many(chunk.as_ptr(), buf.as_mut_ptr(), chunk.len()) };
            for (c, p) in chunk.iter_mut().zip(&buf) {
                let next = u128::from_ne_bytes(*c);
                *c = (u128::from_ne_bytes(*p) ^ prev).to_ne_bytes();
                prev = next;
            }
        }
        *iv = prev.to_ne_bytes();
        buf.zeroize();
    }

    /// Expands a 16, 24 or 32-byte key (length checked by the caller).
    fn expand(key: &[u8]) -> Self {
        debug_assert!(matches!(key.len(), 16 | 24 | 32));
        let k = key.len() / 8;

        // Key words M_i, split into even (M_e) and odd (M_o) vectors, and the
        // S-box key words S_i = RS * (m_{8i} .. m_{8i+7}).
        let mut me = [[0u8; 4]; 4];
        let mut mo = [[0u8; 4]; 4];
        let mut sk = [[0u8; 4]; 4];
        for (i, chunk) in key.chunks_exact(8).enumerate() {
            me[i].copy_from_slice(&chunk[..4]);
            mo[i].copy_from_slice(&chunk[4..]);
            for (r, row) in RS.iter().enumerate() {
                sk[i][r] = row
                    .iter()
                    .zip(chunk)
                    .fold(0, |acc, (&c, &m)| acc ^ gf_mul(c, m, RS_POLY));
            }
        }
        // g uses S in reverse order: L_i = S_{k-1-i}.
        let mut sl = [[0u8; 4]; 4];
        for i in 0..k {
            sl[i] = sk[k - 1 - i];
        }

        let mut out = Self {
            k: [0; 40],
            s: [[0; 256]; 4],
            #[cfg(target_arch = "x86_64")]
            sbox_phi: [[0; 256]; 4],
            imp: Imp::from_name(crate::dispatch::twofish()).unwrap_or(Imp::Table),
        };

        // Subkeys (paper, section 4.3).
        for i in 0..20u32 {
            let a = h(2 * i * RHO, &me, k);
            let b = h((2 * i + 1) * RHO, &mo, k).rotate_left(8);
            let idx = 2 * i as usize;
            out.k[idx] = a.wrapping_add(b);
            out.k[idx + 1] = a.wrapping_add(b).wrapping_add(b).rotate_left(9);
        }

        // Full keying: fold S-boxes and MDS columns into four tables.
        for (j, table) in out.s.iter_mut().enumerate() {
            for (x, entry) in table.iter_mut().enumerate() {
                // x < 256 by construction of the table size.
                let y = h_byte(j, x as u8, &sl, k);
                *entry = MDS_COL[j][usize::from(y)];
                #[cfg(target_arch = "x86_64")]
                {
                    out.sbox_phi[j][x] = x86_gfni::PHI[usize::from(y)];
                }
            }
        }

        me.zeroize();
        mo.zeroize();
        sk.zeroize();
        sl.zeroize();
        out
    }

    /// `g(x)`: four lookups in the key-dependent tables, XORed.
    #[inline(always)]
    fn g0(&self, x: u32, serial: bool) -> u32 {
        xor4(
            [
                self.s[0][(x & 0xFF) as usize],
                self.s[1][((x >> 8) & 0xFF) as usize],
                self.s[2][((x >> 16) & 0xFF) as usize],
                self.s[3][(x >> 24) as usize],
            ],
            serial,
        )
    }

    /// `g(x <<< 8)`, without doing the rotation.
    #[inline(always)]
    fn g1(&self, x: u32, serial: bool) -> u32 {
        xor4(
            [
                self.s[0][(x >> 24) as usize],
                self.s[1][(x & 0xFF) as usize],
                self.s[2][((x >> 8) & 0xFF) as usize],
                self.s[3][((x >> 16) & 0xFF) as usize],
            ],
            serial,
        )
    }

    /// The pseudo-Hadamard transform of `g`'s outputs `t0`, `t1` plus the
    /// round keys: `(t0 + t1 + k0, t0 + 2 t1 + k1)`. `late` says which of
    /// `t0` (false) or `t1` (true) the caller expects last on a `serial`
    /// path: the sums not involving it are formed while it is still loading.
    #[inline(always)]
    fn pht(t0: u32, t1: u32, k0: u32, k1: u32, serial: bool, late_t1: bool) -> (u32, u32) {
        if !serial {
            let f0 = t0.wrapping_add(t1);
            (f0.wrapping_add(k0), f0.wrapping_add(t1).wrapping_add(k1))
        } else if late_t1 {
            let t2 = t1.wrapping_add(t1);
            (
                t1.wrapping_add(opaque(t0.wrapping_add(k0))),
                t2.wrapping_add(opaque(t0.wrapping_add(k1))),
            )
        } else {
            let t2 = t1.wrapping_add(t1);
            (
                t0.wrapping_add(opaque(t1.wrapping_add(k0))),
                t0.wrapping_add(opaque(t2.wrapping_add(k1))),
            )
        }
    }

    /// Encryption rounds `2r` and `2r + 1` of `N` blocks.
    #[inline(always)]
    fn encrypt_pair<const N: usize>(&self, x: &mut [[u32; 4]; N], r: usize) {
        // One block is latency-bound: shorten its dependency chain. Several
        // interleaved blocks are throughput-bound, and there the hints cost
        // registers (measured 7% slower with four blocks).
        let serial = N == 1;
        let rk = &self.k[8 + 4 * r..12 + 4 * r];
        // The input of g1 (the word that is rotated left before its XOR) is
        // ready before that of g0 (rotated right after it): t0 comes last.
        for b in x.iter_mut() {
            let t0 = self.g0(b[0], serial);
            let t1 = self.g1(b[1], serial);
            let (f0, f1) = Self::pht(t0, t1, rk[0], rk[1], serial, false);
            b[2] = (b[2] ^ f0).rotate_right(1);
            b[3] = b[3].rotate_left(1) ^ f1;
        }
        for b in x.iter_mut() {
            let t0 = self.g0(b[2], serial);
            let t1 = self.g1(b[3], serial);
            let (f0, f1) = Self::pht(t0, t1, rk[2], rk[3], serial, false);
            b[0] = (b[0] ^ f0).rotate_right(1);
            b[1] = b[1].rotate_left(1) ^ f1;
        }
    }

    /// Decryption rounds `2r + 1` and `2r` of `N` blocks.
    #[inline(always)]
    fn decrypt_pair<const N: usize>(&self, x: &mut [[u32; 4]; N], r: usize) {
        let serial = N == 1;
        let rk = &self.k[8 + 4 * r..12 + 4 * r];
        // Here the input of g1 is the word rotated right after its XOR.
        for b in x.iter_mut() {
            let t0 = self.g0(b[2], serial);
            let t1 = self.g1(b[3], serial);
            let (f0, f1) = Self::pht(t0, t1, rk[2], rk[3], serial, true);
            b[0] = b[0].rotate_left(1) ^ f0;
            b[1] = (b[1] ^ f1).rotate_right(1);
        }
        for b in x.iter_mut() {
            let t0 = self.g0(b[0], serial);
            let t1 = self.g1(b[1], serial);
            let (f0, f1) = Self::pht(t0, t1, rk[0], rk[1], serial, true);
            b[2] = b[2].rotate_left(1) ^ f0;
            b[3] = (b[3] ^ f1).rotate_right(1);
        }
    }

    /// Encrypts `N` blocks (as little-endian words) with their rounds
    /// interleaved.
    #[inline(always)]
    fn encrypt_words<const N: usize>(&self, x: &mut [[u32; 4]; N]) {
        let k = &self.k;
        for b in x.iter_mut() {
            for (w, kw) in b.iter_mut().zip(&k[..4]) {
                *w ^= kw;
            }
        }
        // Unrolled by hand: with the round number constant, the round keys
        // are loads at fixed offsets and no loop counter takes a register
        // (4 blocks need 16 of aarch64's 31; the loop made it spill).
        self.encrypt_pair(x, 0);
        self.encrypt_pair(x, 1);
        self.encrypt_pair(x, 2);
        self.encrypt_pair(x, 3);
        self.encrypt_pair(x, 4);
        self.encrypt_pair(x, 5);
        self.encrypt_pair(x, 6);
        self.encrypt_pair(x, 7);
        // Undo the last swap and apply output whitening.
        for b in x.iter_mut() {
            *b = [b[2] ^ k[4], b[3] ^ k[5], b[0] ^ k[6], b[1] ^ k[7]];
        }
    }

    /// Encrypts (`ENC`) or decrypts `N` blocks with their rounds
    /// interleaved.
    #[inline(always)]
    fn words<const ENC: bool, const N: usize>(&self, x: &mut [[u32; 4]; N]) {
        if ENC {
            self.encrypt_words(x)
        } else {
            self.decrypt_words(x)
        }
    }

    /// Decrypts `N` blocks (as little-endian words) with their rounds
    /// interleaved.
    #[inline(always)]
    fn decrypt_words<const N: usize>(&self, x: &mut [[u32; 4]; N]) {
        let k = &self.k;
        for b in x.iter_mut() {
            *b = [b[2] ^ k[6], b[3] ^ k[7], b[0] ^ k[4], b[1] ^ k[5]];
        }
        self.decrypt_pair(x, 7);
        self.decrypt_pair(x, 6);
        self.decrypt_pair(x, 5);
        self.decrypt_pair(x, 4);
        self.decrypt_pair(x, 3);
        self.decrypt_pair(x, 2);
        self.decrypt_pair(x, 1);
        self.decrypt_pair(x, 0);
        for b in x.iter_mut() {
            for (w, kw) in b.iter_mut().zip(&k[..4]) {
                *w ^= kw;
            }
        }
    }
}

/// Loads a block as four little-endian words.
#[inline(always)]
fn load(block: &[u8; 16]) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (w, c) in w.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

/// Stores four words into a block, little-endian.
#[inline(always)]
fn store(block: &mut [u8; 16], w: &[u32; 4]) {
    for (c, w) in block.chunks_exact_mut(4).zip(w) {
        c.copy_from_slice(&w.to_le_bytes());
    }
}

impl KeySizeUser for Twofish {
    type KeySize = U32;
}

impl KeyInit for Twofish {
    #[inline]
    fn new(key: &Key<Self>) -> Self {
        Self::expand(key)
    }

    #[inline]
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        match key.len() {
            16 | 24 | 32 => Ok(Self::expand(key)),
            _ => Err(InvalidLength),
        }
    }
}

impl BlockSizeUser for Twofish {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for Twofish {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = Self::BlockSize>) {
        f.call(&TwofishEncBackend(self));
    }
}

impl BlockCipherDecrypt for Twofish {
    #[inline]
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = Self::BlockSize>) {
        f.call(&TwofishDecBackend(self));
    }
}

/// Encryption backend: one block at a time, or [`PAR_BLOCKS`] through
/// [`Twofish::encrypt_many`].
struct TwofishEncBackend<'a>(&'a Twofish);

impl BlockSizeUser for TwofishEncBackend<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for TwofishEncBackend<'_> {
    type ParBlocksSize = ParSize;
}

impl BlockCipherEncBackend for TwofishEncBackend<'_> {
    #[inline]
    fn encrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut x = [load(block.get_in().as_ref())];
        self.0.encrypt_words(&mut x);
        store(block.get_out().as_mut(), &x[0]);
    }

    #[inline]
    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (inp, out) = blocks.into_raw();
        // SAFETY: an `InOut` of PAR_BLOCKS blocks (the same or disjoint).
        unsafe { self.0.encrypt_many(inp.cast(), out.cast(), PAR_BLOCKS) }
    }

    #[inline]
    fn encrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        let n = blocks.len();
        assert!(n < PAR_BLOCKS);
        let (inp, out) = blocks.into_raw();
        // SAFETY: an `InOutBuf` of `n` blocks (the same or disjoint).
        unsafe { self.0.encrypt_many(inp.cast(), out.cast(), n) }
    }
}

/// Decryption backend: one block at a time, or [`PAR_BLOCKS`] through
/// [`Twofish::decrypt_many`].
struct TwofishDecBackend<'a>(&'a Twofish);

impl BlockSizeUser for TwofishDecBackend<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for TwofishDecBackend<'_> {
    type ParBlocksSize = ParSize;
}

impl BlockCipherDecBackend for TwofishDecBackend<'_> {
    #[inline]
    fn decrypt_block(&self, mut block: InOut<'_, '_, Block<Self>>) {
        let mut x = [load(block.get_in().as_ref())];
        self.0.decrypt_words(&mut x);
        store(block.get_out().as_mut(), &x[0]);
    }

    // Inlined on aarch64 into the generic CBC and XTS loops, as the table
    // rounds are inlined into it: the packages' build (16 code-generation
    // units, no LTO) left it a call, 33.29 instructions a byte in CBC
    // decryption; inlined, 32.36 there and 32.34 in the LTO build (was
    // 32.21; `arm_count.py`).
    #[cfg_attr(target_arch = "aarch64", inline(always))]
    #[cfg_attr(not(target_arch = "aarch64"), inline)]
    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let (inp, out) = blocks.into_raw();
        // SAFETY: an `InOut` of PAR_BLOCKS blocks (the same or disjoint).
        unsafe { self.0.decrypt_many(inp.cast(), out.cast(), PAR_BLOCKS) }
    }

    #[inline]
    fn decrypt_tail_blocks(&self, blocks: InOutBuf<'_, '_, Block<Self>>) {
        let n = blocks.len();
        assert!(n < PAR_BLOCKS);
        let (inp, out) = blocks.into_raw();
        // SAFETY: an `InOutBuf` of `n` blocks (the same or disjoint).
        unsafe { self.0.decrypt_many(inp.cast(), out.cast(), n) }
    }
}

impl fmt::Debug for Twofish {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Twofish { ... }")
    }
}

impl AlgorithmName for Twofish {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Twofish")
    }
}

impl Drop for Twofish {
    fn drop(&mut self) {
        self.k.zeroize();
        self.s.zeroize();
        #[cfg(target_arch = "x86_64")]
        self.sbox_phi.zeroize();
    }
}

impl ZeroizeOnDrop for Twofish {}

#[cfg(test)]
mod tests {
    use super::*;
    use hex_literal::hex;

    /// Reference implementation (RustCrypto `twofish` 0.8).
    type Reference = ::twofish::Twofish;

    #[test]
    fn q_tables_match_paper() {
        // First bytes of q0 and q1 as tabulated in the submission's C code
        // (`P8x8`) and in most other Twofish implementations.
        assert_eq!(Q0[..8], [0xA9, 0x67, 0xB3, 0xE8, 0x04, 0xFD, 0xA3, 0x76]);
        assert_eq!(Q1[..8], [0x75, 0xF3, 0xC6, 0xF4, 0xDB, 0x7B, 0xFB, 0xC8]);
        // Both are permutations.
        for q in [&Q0, &Q1] {
            let mut seen = [false; 256];
            for &v in q.iter() {
                assert!(!seen[usize::from(v)]);
                seen[usize::from(v)] = true;
            }
        }
    }

    /// Subkeys for the all-zero 128-bit key, from `ECB_IVL.TXT` (intermediate
    /// values) of the Twofish submission package.
    #[test]
    fn subkeys_zero_key_128() {
        let c = Twofish::new_from_slice(&[0u8; 16]).unwrap();
        let expected: [u32; 40] = [
            0x52C54DDE, 0x11F0626D, 0x7CAC9D4A, 0x4D1B4AAA, 0xB7B83A10, 0x1E7D0BEB, 0xEE9C341F,
            0xCFE14BE4, 0xF98FFEF9, 0x9C5B3C17, 0x15A48310, 0x342A4D81, 0x424D89FE, 0xC14724A7,
            0x311B834C, 0xFDE87320, 0x3302778F, 0x26CD67B4, 0x7A6C6362, 0xC2BAF60E, 0x3411B994,
            0xD972C87F, 0x84ADB1EA, 0xA7DEE434, 0x54D2960F, 0xA2F7CAA8, 0xA6B8FF8C, 0x8014C425,
            0x6A748D1C, 0xEDBAF720, 0x928EF78C, 0x0338EE13, 0x9949D6BE, 0xC8314176, 0x07C07D68,
            0xECAE7EA7, 0x1FE71844, 0x85C05C89, 0xF298311E, 0x696EA672,
        ];
        assert_eq!(c.k, expected);
    }

    /// Single known-answer vectors from `ECB_IVL.TXT` of the Twofish
    /// submission package (<https://www.schneier.com/code/ecb_ival.txt>),
    /// also listed in the paper's appendix: all-zero plaintext under the
    /// all-zero 128-bit key and the "counting" 192/256-bit keys.
    #[test]
    fn known_answers_ecb_ival() {
        let cases: [(&[u8], [u8; 16]); 3] = [
            (&[0u8; 16], hex!("9F589F5CF6122C32B6BFEC2F2AE8C35A")),
            (
                &hex!("0123456789ABCDEFFEDCBA98765432100011223344556677"),
                hex!("CFD1D2E5A9BE9CDF501F13B892BD2248"),
            ),
            (
                &hex!("0123456789ABCDEFFEDCBA987654321000112233445566778899AABBCCDDEEFF"),
                hex!("37527BE0052334B89F0CFCCAE87CFA20"),
            ),
        ];
        for (key, ct) in cases {
            let c = Twofish::new_from_slice(key).unwrap();
            let mut block = Block::<Twofish>::default();
            c.encrypt_block(&mut block);
            assert_eq!(block[..], ct, "key {}", hex::encode(key));
            c.decrypt_block(&mut block);
            assert_eq!(block[..], [0u8; 16]);
        }
    }

    /// The iterated table test `ECB_TBL.TXT` of the Twofish submission
    /// package (the 49-step chain also printed in the paper's appendix and
    /// in "The Twofish Encryption Algorithm", appendix B.2): starting from
    /// an all-zero key and plaintext, step `I` encrypts `PT_I` under `KEY_I`,
    /// then `PT_{I+1} = CT_I` and `KEY_{I+1} = PT_I || first (len - 16) bytes
    /// of KEY_I`. Checks steps 1-5, 48 and 49, and decryption at each step.
    fn ecb_tbl_chain(key_len: usize, expected: &[(usize, [u8; 16])]) {
        let mut key = [0u8; 32];
        let mut pt = [0u8; 16];
        let mut checked = 0;
        for i in 1..=49 {
            let c = Twofish::new_from_slice(&key[..key_len]).unwrap();
            let mut block = Block::<Twofish>::from(pt);
            c.encrypt_block(&mut block);
            let ct: [u8; 16] = block.into();
            if let Some((_, want)) = expected.iter().find(|(n, _)| *n == i) {
                assert_eq!(ct, *want, "key_len {key_len}, I={i}");
                checked += 1;
            }
            // Same step through the multi-block path, and back.
            let mut blocks = [Block::<Twofish>::from(pt); PAR_BLOCKS + 1];
            c.encrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|b| b[..] == ct));
            c.decrypt_blocks(&mut blocks);
            assert!(blocks.iter().all(|b| b[..] == pt));
            c.decrypt_block(&mut block);
            assert_eq!(block[..], pt);

            key.copy_within(..key_len - 16, 16);
            key[..16].copy_from_slice(&pt);
            pt = ct;
        }
        assert_eq!(checked, expected.len());
    }

    #[test]
    fn ecb_tbl_128() {
        ecb_tbl_chain(
            16,
            &[
                (1, hex!("9F589F5CF6122C32B6BFEC2F2AE8C35A")),
                (2, hex!("D491DB16E7B1C39E86CB086B789F5419")),
                (3, hex!("019F9809DE1711858FAAC3A3BA20FBC3")),
                (4, hex!("6363977DE839486297E661C6C9D668EB")),
                (5, hex!("816D5BD0FAE35342BF2A7412C246F752")),
                (48, hex!("6B459286F3FFD28D49F15B1581B08E42")),
                (49, hex!("5D9D4EEFFA9151575524F115815A12E0")),
            ],
        );
    }

    #[test]
    fn ecb_tbl_192() {
        ecb_tbl_chain(
            24,
            &[
                (1, hex!("EFA71F788965BD4453F860178FC19101")),
                (2, hex!("88B2B2706B105E36B446BB6D731A1E88")),
                (3, hex!("39DA69D6BA4997D585B6DC073CA341B2")),
                (4, hex!("182B02D81497EA45F9DAACDC29193A65")),
                (5, hex!("7AFF7A70CA2FF28AC31DD8AE5DAAAB63")),
                (48, hex!("F0AB73301125FA21EF70BE5385FB76B6")),
                (49, hex!("E75449212BEEF9F4A390BD860A640941")),
            ],
        );
    }

    #[test]
    fn ecb_tbl_256() {
        ecb_tbl_chain(
            32,
            &[
                (1, hex!("57FF739D4DC92C1BD7FC01700CC8216F")),
                (2, hex!("D43BB7556EA32E46F2A282B7D45B4E0D")),
                (3, hex!("90AFE91BB288544F2C32DC239B2635E6")),
                (4, hex!("6CB4561C40BF0A9705931CB6D408E7FA")),
                (5, hex!("3059D6D61753B958D92F4781C8640E58")),
                (48, hex!("431058F4DBC7F734DA4F02F04CC4F459")),
                (49, hex!("37FE26FF1CF66175F5DDF4C33B97A205")),
            ],
        );
    }

    #[test]
    fn rejects_bad_key_lengths() {
        for len in [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 64] {
            assert!(Twofish::new_from_slice(&vec![0u8; len]).is_err(), "{len}");
        }
        for len in [16, 24, 32] {
            assert!(Twofish::new_from_slice(&vec![0u8; len]).is_ok(), "{len}");
        }
    }

    #[test]
    fn key_init_new_is_256_bit() {
        let key = hex!("0123456789ABCDEFFEDCBA987654321000112233445566778899AABBCCDDEEFF");
        let a = Twofish::new(&key.into());
        let b = Twofish::new_from_slice(&key).unwrap();
        let mut x = Block::<Twofish>::default();
        let mut y = Block::<Twofish>::default();
        a.encrypt_block(&mut x);
        b.encrypt_block(&mut y);
        assert_eq!(x, y);
        assert_eq!(x[..], hex!("37527BE0052334B89F0CFCCAE87CFA20"));
    }

    #[test]
    fn names() {
        struct Name;
        impl fmt::Display for Name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                Twofish::write_alg_name(f)
            }
        }
        assert_eq!(Name.to_string(), "Twofish");
        let c = Twofish::new_from_slice(&[7u8; 16]).unwrap();
        assert_eq!(format!("{c:?}"), "Twofish { ... }");
    }

    use crate::ciphers::test_support::XorShift;

    /// [`Twofish::cbc_encrypt`] against the generic CBC of
    /// [`crate::modes::BlockModes`] over the `twofish` crate: random keys,
    /// IVs and lengths (0 to 40 blocks), one call or split in two calls
    /// that must chain.
    #[test]
    fn cbc_encrypt_matches_generic_cbc() {
        crate::ciphers::test_support::check_cbc_encrypt(
            600,
            |_, iter| [16, 24, 32][iter % 3],
            |key| Twofish::new_from_slice(key).unwrap(),
            Twofish::cbc_encrypt,
            |key| Reference::new_from_slice(key).unwrap(),
        );
    }

    #[test]
    #[should_panic(expected = "multiple of the block size")]
    fn cbc_encrypt_rejects_partial_blocks() {
        let c = Twofish::new_from_slice(&[1u8; 16]).unwrap();
        c.cbc_encrypt(&mut [0u8; 16], &mut [0u8; 17]);
    }

    /// [`Twofish::cbc_decrypt`] on every backend this CPU runs against the
    /// generic CBC of [`crate::modes::BlockModes`] over the `twofish` crate:
    /// random keys, IVs and lengths across the batch boundaries (0 to 3 x
    /// [`PAR_BLOCKS`] + 1 blocks), one call or split in two that must chain.
    #[test]
    fn cbc_decrypt_matches_generic_cbc_every_backend() {
        let mut rng = XorShift(0x5EED_CBC0_DEC0_0001);
        for name in backends() {
            for iter in 0..300 {
                let key_len = [16, 24, 32][iter % 3];
                let (_, ours, reference) = random_key_on(&mut rng, key_len, name);
                let mut generic = crate::modes::BlockModes::new(reference);
                let blocks = rng.below(3 * PAR_BLOCKS + 2);
                let mut data = vec![0u8; 16 * blocks];
                rng.fill(&mut data);
                let mut iv = [0u8; 16];
                rng.fill(&mut iv);
                let (mut want, mut want_iv) = (data.clone(), iv);
                generic.cbc_decrypt(&mut want_iv, &mut want);
                let (mut got, mut got_iv) = (data.clone(), iv);
                ours.cbc_decrypt(&mut got_iv, &mut got);
                assert_eq!(got, want, "{name}, {key_len}-byte key, {blocks} blocks");
                assert_eq!(got_iv, want_iv, "{name}, {blocks} blocks");
                let split = 16 * rng.below(blocks + 1);
                let (mut got, mut got_iv) = (data, iv);
                let (a, b) = got.split_at_mut(split);
                ours.cbc_decrypt(&mut got_iv, a);
                ours.cbc_decrypt(&mut got_iv, b);
                assert_eq!(got, want, "{name}, {blocks} blocks split at {split}");
                assert_eq!(got_iv, want_iv);
            }
        }
    }

    #[test]
    #[should_panic(expected = "multiple of the block size")]
    fn cbc_decrypt_rejects_partial_blocks() {
        let c = Twofish::new_from_slice(&[1u8; 16]).unwrap();
        c.cbc_decrypt(&mut [0u8; 16], &mut [0u8; 33]);
    }

    /// The multi-block implementations this CPU can run (with the mask
    /// applied), a note printed for each it cannot.
    fn backends() -> Vec<&'static str> {
        let key = Twofish::new_from_slice(&[0u8; 16]).unwrap();
        Twofish::backends()
            .filter(|name| {
                let ok = key.with_backend(name).is_some();
                if !ok {
                    eprintln!("note: Twofish backend {name} skipped: not available on this CPU");
                }
                ok
            })
            .collect()
    }

    /// The known answers of `ECB_IVL.TXT` through every backend's
    /// multi-block path: every length up to two batches, each block the
    /// vector's plaintext (so every lane of a batch and every tail length
    /// must give the published ciphertext), both directions.
    #[test]
    fn known_answers_every_backend() {
        let cases: [(&[u8], [u8; 16]); 2] = [
            (&[0u8; 16], hex!("9F589F5CF6122C32B6BFEC2F2AE8C35A")),
            (
                &hex!("0123456789ABCDEFFEDCBA987654321000112233445566778899AABBCCDDEEFF"),
                hex!("37527BE0052334B89F0CFCCAE87CFA20"),
            ),
        ];
        for name in backends() {
            for (key, ct) in cases {
                let c = Twofish::new_from_slice(key)
                    .unwrap()
                    .with_backend(name)
                    .unwrap();
                assert_eq!(c.backend(), name);
                for n in 0..=2 * PAR_BLOCKS + 1 {
                    let mut data = vec![Block::<Twofish>::default(); n];
                    c.encrypt_blocks(&mut data);
                    assert!(data.iter().all(|b| b[..] == ct), "{name} encrypt n={n}");
                    c.decrypt_blocks(&mut data);
                    assert!(
                        data.iter().all(|b| b[..] == [0u8; 16]),
                        "{name} decrypt n={n}"
                    );
                }
            }
        }
    }

    /// Cross-check against the `twofish` crate on every backend: random keys
    /// of every size, single blocks and multi-block buffers of every length
    /// modulo `PAR_BLOCKS` (exercising the batches, the padded tails and the
    /// table rounds' tails), in place and buffer-to-buffer, both directions.
    #[test]
    fn matches_reference_crate() {
        for name in backends() {
            matches_reference_crate_on(name);
        }
    }

    /// A random `key_len`-byte key, ours on backend `name` and the `twofish`
    /// crate's under it.
    fn random_key_on(
        rng: &mut XorShift,
        key_len: usize,
        name: &str,
    ) -> (Vec<u8>, Twofish, Reference) {
        let mut key = vec![0u8; key_len];
        rng.fill(&mut key);
        let ours = Twofish::new_from_slice(&key)
            .unwrap()
            .with_backend(name)
            .unwrap();
        let reference = Reference::new_from_slice(&key).unwrap();
        (key, ours, reference)
    }

    fn matches_reference_crate_on(name: &str) {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut keys_checked = 0;
        for &key_len in &[16usize, 24, 32] {
            for iter in 0..1000 {
                let (key, ours, reference) = random_key_on(&mut rng, key_len, name);

                // Single block, both directions.
                let mut pt = Block::<Twofish>::default();
                rng.fill(&mut pt);
                let (mut a, mut b) = (pt, pt);
                ours.encrypt_block(&mut a);
                BlockCipherEncrypt::encrypt_block(&reference, &mut b);
                assert_eq!(a, b, "encrypt, key {}", hex::encode(key));
                ours.decrypt_block(&mut a);
                assert_eq!(a, pt);
                let mut ct = Block::<Twofish>::default();
                rng.fill(&mut ct);
                let (mut a, mut b) = (ct, ct);
                ours.decrypt_block(&mut a);
                BlockCipherDecrypt::decrypt_block(&reference, &mut b);
                assert_eq!(a, b, "decrypt, key {}", hex::encode(key));

                // Many blocks: lengths 0..=2*PAR_BLOCKS+1 in rotation, plus
                // an occasional longer buffer.
                let n = if iter % 50 == 0 {
                    67
                } else {
                    iter % (2 * PAR_BLOCKS + 2)
                };
                let mut data = vec![Block::<Twofish>::default(); n];
                for blk in &mut data {
                    rng.fill(blk);
                }
                let mut a = data.clone();
                let mut b = data.clone();
                ours.encrypt_blocks(&mut a);
                reference.encrypt_blocks(&mut b);
                assert_eq!(a, b, "{name} encrypt_blocks n={n}");
                let mut out = vec![Block::<Twofish>::default(); n];
                ours.encrypt_blocks_b2b(&data, &mut out).unwrap();
                assert_eq!(out, b, "encrypt_blocks_b2b n={n}");
                ours.decrypt_blocks(&mut a);
                assert_eq!(a, data, "round trip n={n}");

                let mut a = data.clone();
                let mut b = data.clone();
                ours.decrypt_blocks(&mut a);
                reference.decrypt_blocks(&mut b);
                assert_eq!(a, b, "{name} decrypt_blocks n={n}");
                ours.decrypt_blocks_b2b(&data, &mut out).unwrap();
                assert_eq!(out, b, "decrypt_blocks_b2b n={n}");
                keys_checked += 1;
            }
        }
        assert_eq!(keys_checked, 3000);
    }
}
