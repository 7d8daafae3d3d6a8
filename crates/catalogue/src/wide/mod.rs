//! Length-preserving wide-block disk ciphers: Adiantum and HCTR2, the two
//! that Linux and `cryptsetup` offer for boards without AES instructions
//! (`xchacha12,aes-adiantum-plain64`) and with them (`aes-hctr2-plain64`).
//!
//! Each sector is one wide block: a change of any bit changes the whole
//! sector, unlike XTS, where it changes one 16-byte block. The tweak is the
//! dm-crypt IV of the sector, 32 bytes (`plain64`: the sector number as a
//! 64-bit little-endian number, then zeros). Requests are cut into sectors of
//! [`SECTOR_BYTES`] and each is enciphered with its own sector number, as
//! dm-crypt does with LUKS2's 4096-byte sectors.

pub mod adiantum;
pub mod hctr2;
pub mod nh;
pub mod poly1305;
#[cfg(target_arch = "x86_64")]
pub(crate) mod poly1305_ifma;

use cipher::consts::U16;
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};

pub use adiantum::{Adiantum, XChaChaRounds};
pub use hctr2::Hctr2;

use crate::op::{CipherError, CipherOp};
use crate::{CipherSpec, IvGen};

/// The sector size the catalogue rows encipher (LUKS2's default for disks
/// with 4096-byte physical sectors; `cryptsetup --sector-size 4096`).
pub const SECTOR_BYTES: usize = 4096;
/// The tweak length of both ciphers in the kernel and dm-crypt.
pub const TWEAK_BYTES: usize = 32;

/// A wide-block cipher with a tweak.
pub trait WideBlock: Send {
    /// Encrypts `data` (at least 16 bytes) in place.
    fn encrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]);
    /// Decrypts `data` (at least 16 bytes) in place.
    fn decrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]);
}

impl<C> WideBlock for Adiantum<C>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send,
{
    fn encrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]) {
        Adiantum::encrypt(self, tweak, data)
    }
    fn decrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]) {
        Adiantum::decrypt(self, tweak, data)
    }
}

impl<C> WideBlock for Hctr2<C>
where
    C: KeyInit + BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt + Send,
{
    fn encrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]) {
        Hctr2::encrypt(self, tweak, data)
    }
    fn decrypt(&self, tweak: &[u8; TWEAK_BYTES], data: &mut [u8]) {
        Hctr2::decrypt(self, tweak, data)
    }
}

/// dm-crypt's 32-byte IV of `sector`: `plain` (32-bit little-endian),
/// `plain64` (64-bit little-endian), `plain64be` (64-bit big-endian at the
/// end), `null` (zeros).
pub fn sector_tweak(iv: IvGen, sector: u64) -> [u8; TWEAK_BYTES] {
    let mut t = [0u8; TWEAK_BYTES];
    match iv {
        IvGen::Plain => t[..4].copy_from_slice(&(sector as u32).to_le_bytes()),
        IvGen::Plain64 => t[..8].copy_from_slice(&sector.to_le_bytes()),
        IvGen::Plain64Be => t[TWEAK_BYTES - 8..].copy_from_slice(&sector.to_be_bytes()),
        _ => {}
    }
    t
}

/// A catalogue row of a wide-block cipher: requests cut into sectors.
pub struct WideOp {
    spec: CipherSpec,
    cipher: Box<dyn WideBlock>,
    backend: &'static str,
    sector_bytes: usize,
}

impl WideOp {
    /// Wraps a keyed cipher; `sector_bytes` is the data unit (512 or 4096).
    pub fn new(
        spec: CipherSpec,
        cipher: Box<dyn WideBlock>,
        backend: &'static str,
        sector_bytes: usize,
    ) -> Self {
        WideOp {
            spec,
            cipher,
            backend,
            sector_bytes,
        }
    }

    /// Cuts `data` into sectors numbered from `sector` and runs `f` on each.
    fn each(
        &self,
        data: &mut [u8],
        sector: u64,
        f: impl Fn(&dyn WideBlock, &[u8; TWEAK_BYTES], &mut [u8]),
    ) -> Result<(), CipherError> {
        let last = data.len() % self.sector_bytes;
        if data.len() < 16 || (last != 0 && last < 16) {
            return Err(CipherError::WideLength {
                len: data.len(),
                sector: self.sector_bytes,
                mode: self.spec.mode.name(),
            });
        }
        for (i, s) in data.chunks_mut(self.sector_bytes).enumerate() {
            let tweak = sector_tweak(self.spec.iv, sector.wrapping_add(i as u64));
            f(&*self.cipher, &tweak, s);
        }
        Ok(())
    }
}

impl CipherOp for WideOp {
    fn spec(&self) -> &CipherSpec {
        &self.spec
    }

    fn backend(&self) -> &'static str {
        self.backend
    }

    fn encrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        self.each(data, sector, |c, t, s| c.encrypt(t, s))
    }

    fn decrypt(&mut self, data: &mut [u8], sector: u64) -> Result<(), CipherError> {
        self.each(data, sector, |c, t, s| c.decrypt(t, s))
    }
}
