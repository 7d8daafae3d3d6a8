//! The cipher catalogue of clustercrypt.
//!
//! Every algorithm, mode and key size that `clustercrypt` measures or uses is
//! reached through this crate: [`CipherSpec`] names a row the way cryptsetup
//! does (`aes-xts-plain64`, 512 bits), and [`build`] keys it into a
//! [`CipherOp`] that encrypts and decrypts requests in place with the fastest
//! implementation this CPU allows, chosen at run time. The benchmark, the file
//! engine, the cluster runner and the service all go through here; none of them
//! has a cipher loop of its own.

pub mod aead;
pub mod aes;
pub mod algorithm;
pub mod backends;
pub mod chacha;
pub mod ciphers;
pub mod cpu;
pub mod cycles;
pub mod dispatch;
pub mod gcm;
pub mod modes;
pub mod op;
pub mod spec;
pub mod wide;

pub use algorithm::{Algorithm, KeySizes, Kind};
pub use op::{
    BuildOptions, CipherError, CipherModes, CipherOp, block_modes, build, build_wide, build_with,
};
pub use spec::{CipherSpec, IvGen, Mode, SpecError};

/// Every row `bench --all` measures, in table order.
pub fn catalogue() -> Vec<CipherSpec> {
    let mut rows = Vec::new();
    for &alg in Algorithm::ALL {
        let modes: &[Mode] = match alg.kind() {
            Kind::Stream => &[Mode::Stream],
            Kind::Block(16) => &[Mode::Ecb, Mode::Cbc, Mode::Ctr, Mode::Xts],
            Kind::Block(_) => &[Mode::Ecb, Mode::Cbc, Mode::Ctr],
        };
        for &mode in modes {
            for &bits in alg.catalogue_key_bits() {
                let (iv, key_bits) = match mode {
                    Mode::Ecb | Mode::Stream => (IvGen::None, bits),
                    Mode::Xts => (IvGen::Plain64, 2 * bits),
                    _ => (IvGen::Plain64, bits),
                };
                if let Ok(spec) = CipherSpec::new(alg, mode, iv, key_bits) {
                    rows.push(spec);
                }
            }
        }
    }
    for bits in [128, 192, 256] {
        rows.push(CipherSpec::new(Algorithm::Aes, Mode::Gcm, IvGen::Random, bits).expect("valid"));
    }
    rows.push(
        CipherSpec::new(Algorithm::ChaCha20, Mode::Poly1305, IvGen::Random, 256).expect("valid"),
    );
    for mode in [
        Mode::AdiantumXChaCha12,
        Mode::AdiantumXChaCha20,
        Mode::Hctr2,
    ] {
        rows.push(CipherSpec::new(Algorithm::Aes, mode, IvGen::Plain64, 256).expect("valid"));
    }
    rows
}

/// The rows `cryptsetup benchmark` prints by default, in its order.
pub fn cryptsetup_defaults() -> Vec<CipherSpec> {
    let mut rows = Vec::new();
    for (mode, bits) in [
        (Mode::Cbc, 128),
        (Mode::Cbc, 256),
        (Mode::Xts, 256),
        (Mode::Xts, 512),
    ] {
        for alg in [Algorithm::Aes, Algorithm::Serpent, Algorithm::Twofish] {
            let iv = IvGen::Plain64;
            rows.push(CipherSpec::new(alg, mode, iv, bits).expect("valid default row"));
        }
    }
    rows
}
