//! AEADs: AES-GCM from AWS-LC (`aws-lc-rs`) or ours ([`crate::gcm`]), as
//! [`dispatch::aes_gcm`] decides; ChaCha20-Poly1305 from AWS-LC or ours
//! ([`chacha20_poly1305`]), as [`dispatch::chacha20_poly1305`] decides.
//!
//! AWS-LC picks VAES/AVX-512, AES-NI+CLMUL or NEON+PMULL at run time; on the
//! Zen 4 it measured about 5x the `aes-gcm` crate. Nonces are 96 bits and
//! tags 128 bits (NIST SP 800-38D, RFC 8439).

pub mod chacha20_poly1305;

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};

use crate::dispatch::{self, ChaChaImpl, ChaChaPolyImpl};
pub use chacha20_poly1305::ChaCha20Poly1305;

/// Nonce length in bytes.
pub const NONCE_LEN: usize = 12;
/// Tag length in bytes.
pub const TAG_LEN: usize = 16;

/// Whether two tags are equal, in constant time: the XOR of the two as 128-bit
/// numbers, folded to 64 bits, compared with zero by `subtle`. `subtle`'s
/// slice comparison takes a byte and an optimisation barrier at a time, 17
/// ns of a 512-byte ChaCha20-Poly1305 opening's 330 on Zen 4.
pub(crate) fn tags_equal(a: &[u8; TAG_LEN], b: &[u8; TAG_LEN]) -> bool {
    use subtle::ConstantTimeEq;
    let d = u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(*b);
    bool::from((d as u64 | (d >> 64) as u64).ct_eq(&0))
}

/// Which AEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AeadAlgorithm {
    /// AES-GCM with a 128, 192 or 256-bit key.
    AesGcm,
    /// ChaCha20-Poly1305 (256-bit key).
    ChaCha20Poly1305,
}

/// A keyed AEAD.
pub struct Aead {
    inner: Inner,
    algorithm: AeadAlgorithm,
}

/// Whose code runs the AEAD.
enum Inner {
    AwsLc(LessSafeKey),
    Ours(ChaCha20Poly1305),
    Gcm(Box<crate::gcm::AesGcm>),
    /// AES-GCM by AWS-LC from [`dispatch::AWS_LC_GCM_FROM`] bytes of data,
    /// by ours below ([`dispatch::aes_gcm_short`]).
    GcmSplit {
        short: Box<crate::gcm::AesGcm>,
        long: LessSafeKey,
    },
}

/// The AEAD rejected a ciphertext: wrong key, or the data or tag was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("authentication failed")]
pub struct AuthError;

impl Aead {
    /// Keys an AEAD with the implementation the dispatch chose; `None` if the
    /// key length does not fit the algorithm.
    pub fn new(algorithm: AeadAlgorithm, key: &[u8]) -> Option<Aead> {
        Aead::with_impl(algorithm, key, dispatch::chacha20_poly1305())
    }

    /// Keys an AEAD; ChaCha20-Poly1305 runs `imp`, AES-GCM what
    /// [`dispatch::aes_gcm`] chose. `None` if the key length does not fit
    /// the algorithm.
    ///
    /// # Panics
    /// If `imp` names a ChaCha kernel (or stitched code) this CPU cannot
    /// run.
    pub fn with_impl(algorithm: AeadAlgorithm, key: &[u8], imp: ChaChaPolyImpl) -> Option<Aead> {
        if algorithm == AeadAlgorithm::ChaCha20Poly1305 {
            let ours = match imp {
                ChaChaPolyImpl::Ours(chacha) => {
                    Some(ChaCha20Poly1305::new(chacha, key.try_into().ok()?))
                }
                ChaChaPolyImpl::Avx2Stitched => Some(ChaCha20Poly1305::new_stitched(
                    ChaChaImpl::Avx2,
                    key.try_into().ok()?,
                )),
                ChaChaPolyImpl::Ssse3Stitched => Some(ChaCha20Poly1305::new_stitched(
                    ChaChaImpl::Ssse3,
                    key.try_into().ok()?,
                )),
                ChaChaPolyImpl::Avx512Ifma => {
                    Some(ChaCha20Poly1305::new_ifma(key.try_into().ok()?))
                }
                ChaChaPolyImpl::AwsLc => None,
            };
            if let Some(ours) = ours {
                return Some(Aead {
                    inner: Inner::Ours(ours),
                    algorithm,
                });
            }
        }
        if algorithm == AeadAlgorithm::AesGcm
            && let Some(ghash) = dispatch::aes_gcm()
            && let Some(gcm) = crate::gcm::AesGcm::new(key, ghash)
        {
            return Some(Aead {
                inner: Inner::Gcm(Box::new(gcm)),
                algorithm,
            });
        }
        let alg = match (algorithm, key.len()) {
            (AeadAlgorithm::AesGcm, 16) => &aead::AES_128_GCM,
            (AeadAlgorithm::AesGcm, 24) => &aead::AES_192_GCM,
            (AeadAlgorithm::AesGcm, 32) => &aead::AES_256_GCM,
            (AeadAlgorithm::ChaCha20Poly1305, 32) => &aead::CHACHA20_POLY1305,
            _ => return None,
        };
        let long = LessSafeKey::new(UnboundKey::new(alg, key).ok()?);
        let inner = match dispatch::aes_gcm_short() {
            Some(ghash) if algorithm == AeadAlgorithm::AesGcm => Inner::GcmSplit {
                short: Box::new(crate::gcm::AesGcm::new(key, ghash)?),
                long,
            },
            _ => Inner::AwsLc(long),
        };
        Some(Aead { inner, algorithm })
    }

    /// AWS-LC's key for `len` bytes of data, or ours if ours runs them.
    fn key_for(&self, len: usize) -> Result<&LessSafeKey, Ours<'_>> {
        match &self.inner {
            Inner::Ours(c) => Err(Ours::ChaCha(c)),
            Inner::Gcm(g) => Err(Ours::Gcm(g)),
            Inner::GcmSplit { short, .. } if len < dispatch::AWS_LC_GCM_FROM => {
                Err(Ours::Gcm(short))
            }
            Inner::GcmSplit { long, .. } | Inner::AwsLc(long) => Ok(long),
        }
    }

    /// Encrypts `data` in place and returns the tag.
    ///
    /// # Panics
    /// If `data` is longer than the algorithm allows (for ChaCha20-Poly1305
    /// [`chacha20_poly1305::MAX_DATA_LEN`], about 256 GiB).
    pub fn seal(&self, nonce: &[u8; NONCE_LEN], aad: &[u8], data: &mut [u8]) -> [u8; TAG_LEN] {
        let key = match self.key_for(data.len()) {
            Err(Ours::ChaCha(c)) => return c.seal(nonce, aad, data),
            Err(Ours::Gcm(g)) => return g.seal(nonce, aad, data),
            Ok(key) => key,
        };
        let tag = key
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*nonce), Aad::from(aad), data)
            .expect("AEAD sealing cannot fail for in-range lengths");
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(tag.as_ref());
        out
    }

    /// Verifies `tag` and decrypts `data` in place. On failure `data` holds no
    /// plaintext of use and must be discarded.
    pub fn open(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), AuthError> {
        let key = match self.key_for(data.len()) {
            Err(Ours::ChaCha(c)) => return c.open(nonce, aad, data, tag),
            Err(Ours::Gcm(g)) => return g.open(nonce, aad, data, tag),
            Ok(key) => key,
        };
        key.open_in_place_separate_tag(
            Nonce::assume_unique_for_key(*nonce),
            Aad::from(aad),
            tag,
            data,
        )
        .map(|_| ())
        .map_err(|_| AuthError)
    }

    /// Which implementation runs, as rows report it: ours names its ChaCha
    /// kernel (`"neon+poly1305"`), AWS-LC's what it runs on this CPU.
    pub fn backend(&self) -> &'static str {
        self.backend_for(usize::MAX)
    }

    /// Which implementation runs `len` bytes of data, as rows report it
    /// ([`Aead::backend`] names the one for long data).
    // On 32-bit ARM `GhashImpl` has no variant, so the GCM arm is unreachable.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unreachable_code)
    )]
    pub fn backend_for(&self, len: usize) -> &'static str {
        match self.key_for(len) {
            Err(Ours::ChaCha(c)) => c.name_for(len),
            Err(Ours::Gcm(g)) => dispatch::gcm_name(g.ghash()),
            Ok(_) => dispatch::aws_lc_aead_name(self.algorithm == AeadAlgorithm::AesGcm),
        }
    }
}

/// An AEAD key of ours ([`Aead::key_for`]).
enum Ours<'a> {
    ChaCha(&'a ChaCha20Poly1305),
    Gcm(&'a crate::gcm::AesGcm),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chacha::{implementations, runnable};

    /// Equal tags compare equal; a flip of any one bit, or of two bits in
    /// different halves, does not.
    #[test]
    fn tags_equal_sees_every_bit() {
        let a: [u8; TAG_LEN] = core::array::from_fn(|i| (i * 37 + 5) as u8);
        assert!(tags_equal(&a, &a));
        for bit in 0..128 {
            let mut b = a;
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(!tags_equal(&a, &b), "bit {bit}");
            b[(bit / 8 + 8) % 16] ^= 1 << (bit % 8);
            assert!(!tags_equal(&a, &b), "bits {bit} and {}", (bit + 64) % 128);
        }
    }

    /// Ours, on every ChaCha kernel this CPU runs, and AWS-LC open each
    /// other's messages, and the rows name what ran.
    #[test]
    fn ours_and_aws_lc_open_each_others_messages() {
        let key = [0x24u8; 32];
        let aws =
            Aead::with_impl(AeadAlgorithm::ChaCha20Poly1305, &key, ChaChaPolyImpl::AwsLc).unwrap();
        assert!(aws.backend().starts_with("aws-lc:"), "{}", aws.backend());
        let mut imps: Vec<_> = implementations()
            .iter()
            .filter(|&&i| runnable(i))
            .map(|&i| ChaChaPolyImpl::Ours(i))
            .collect();
        imps.extend(chacha20_poly1305::stitched_implementations());
        if chacha20_poly1305::ifma_runnable() {
            imps.push(ChaChaPolyImpl::Avx512Ifma);
        }
        for imp in imps {
            let ours = Aead::with_impl(AeadAlgorithm::ChaCha20Poly1305, &key, imp).unwrap();
            assert_eq!(ours.backend(), imp.name());
            if let ChaChaPolyImpl::Ours(c) = imp {
                assert_eq!(imp.name(), format!("{}+poly1305", c.name()));
            }
            for len in [0, 1, 100, 5000, 40_000] {
                let pt: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
                let nonce = [len as u8; NONCE_LEN];
                let aad = [9u8; 13];
                let (mut a, mut b) = (pt.clone(), pt.clone());
                let tag_ours = ours.seal(&nonce, &aad, &mut a);
                let tag_aws = aws.seal(&nonce, &aad, &mut b);
                assert_eq!((&a, tag_ours), (&b, tag_aws), "{imp:?} {len}");
                aws.open(&nonce, &aad, &mut a, &tag_ours).unwrap();
                ours.open(&nonce, &aad, &mut b, &tag_aws).unwrap();
                assert!(a == pt && b == pt, "{imp:?} {len}");
            }
        }
        assert!(
            Aead::with_impl(
                AeadAlgorithm::ChaCha20Poly1305,
                &[0; 16],
                ChaChaPolyImpl::AwsLc
            )
            .is_none()
        );
        let short = Aead::with_impl(
            AeadAlgorithm::ChaCha20Poly1305,
            &[0; 31],
            ChaChaPolyImpl::Ours(ChaChaImpl::Soft),
        );
        assert!(short.is_none());
    }

    /// AES-GCM as the dispatch keys it, on both sides of
    /// [`dispatch::AWS_LC_GCM_FROM`] (ours below it where AWS-LC's VAES-512
    /// code runs the rest): the same ciphertext and tag as AWS-LC alone,
    /// each opens the other's, a changed tag fails, and rows name what ran.
    #[test]
    fn aes_gcm_either_side_of_the_split_agrees_with_aws_lc() {
        let from = dispatch::AWS_LC_GCM_FROM;
        if dispatch::aes_gcm_short().is_none() {
            eprintln!("note: AES-GCM runs one implementation at every length at this tier");
        }
        for (alg, key_len) in [(&aead::AES_128_GCM, 16), (&aead::AES_256_GCM, 32)] {
            let key: Vec<u8> = (0..key_len).map(|i| (i * 29 + 3) as u8).collect();
            let ours = Aead::new(AeadAlgorithm::AesGcm, &key).unwrap();
            let aws = LessSafeKey::new(UnboundKey::new(alg, &key).unwrap());
            for len in [0, 1, 16, 511, 512, from - 1, from, from + 17, 3 * from] {
                let name = match (dispatch::aes_gcm(), dispatch::aes_gcm_short()) {
                    (Some(g), _) => dispatch::gcm_name(g),
                    (None, Some(g)) if len < from => dispatch::gcm_name(g),
                    (None, _) => dispatch::aws_lc_aead_name(true),
                };
                assert_eq!(ours.backend_for(len), name, "{len}");
                let pt: Vec<u8> = (0..len).map(|i| (i * 13 + len) as u8).collect();
                let nonce = [len as u8 ^ 0x5a; NONCE_LEN];
                let aad = [7u8; 20];
                let (mut a, mut b) = (pt.clone(), pt.clone());
                let tag = ours.seal(&nonce, &aad, &mut a);
                let theirs = aws
                    .seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(&aad[..]),
                        &mut b,
                    )
                    .unwrap();
                assert_eq!(
                    (&a[..], &tag[..]),
                    (&b[..], theirs.as_ref()),
                    "{name} {len}"
                );
                let mut bad = tag;
                bad[15] ^= 0x80;
                assert!(
                    ours.open(&nonce, &aad, &mut a.clone(), &bad).is_err(),
                    "{len}"
                );
                ours.open(&nonce, &aad, &mut b, &tag).unwrap();
                aws.open_in_place_separate_tag(
                    Nonce::assume_unique_for_key(nonce),
                    Aad::from(&aad[..]),
                    &tag,
                    &mut a,
                )
                .unwrap();
                assert!(a == pt && b == pt, "{name} {len}");
            }
        }
    }

    #[test]
    fn the_dispatched_implementation_is_named() {
        let aead = Aead::new(AeadAlgorithm::ChaCha20Poly1305, &[1; 32]).unwrap();
        assert_eq!(aead.backend(), dispatch::aead_name(false));
        assert_eq!(aead.backend(), dispatch::chacha20_poly1305().name());
        // Ours runs wherever NEON does (the tier masks only the crypto
        // extensions, or NEON as well).
        if cfg!(target_arch = "aarch64") && crate::cpu::features().neon {
            assert_eq!(aead.backend(), "neon+poly1305");
        }
    }
}
