//! CPU features that decide which implementation of a cipher runs.
//!
//! Detection happens at run time (never by `target-cpu=native` alone) so that one
//! binary runs on every CPU of its architecture and still uses AES-NI, VAES,
//! AVX2 or AVX-512 where they exist.

use serde::Serialize;

/// Crypto-relevant CPU features found at run time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuFeatures {
    /// AES round instructions (x86 AES-NI, ARMv8 crypto extensions).
    pub aes: bool,
    /// Vector AES (x86 VAES).
    pub vaes: bool,
    /// Carry-less multiply (x86 PCLMULQDQ, ARM PMULL).
    pub pmull: bool,
    /// AVX2.
    pub avx2: bool,
    /// AVX-512 foundation and vector-length extensions.
    pub avx512: bool,
    /// SHA instructions (x86 SHA-NI, ARMv8 SHA2).
    pub sha: bool,
    /// ARM NEON (Advanced SIMD).
    pub neon: bool,
}

impl CpuFeatures {
    /// Detects the features of the CPU this process runs on.
    pub fn detect() -> CpuFeatures {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        {
            CpuFeatures {
                aes: std::arch::is_x86_feature_detected!("aes"),
                vaes: std::arch::is_x86_feature_detected!("vaes"),
                pmull: std::arch::is_x86_feature_detected!("pclmulqdq"),
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                avx512: std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl"),
                sha: std::arch::is_x86_feature_detected!("sha"),
                neon: false,
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            CpuFeatures {
                aes: std::arch::is_aarch64_feature_detected!("aes"),
                vaes: false,
                pmull: std::arch::is_aarch64_feature_detected!("pmull"),
                avx2: false,
                avx512: false,
                sha: std::arch::is_aarch64_feature_detected!("sha2"),
                neon: std::arch::is_aarch64_feature_detected!("neon"),
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
        {
            CpuFeatures::default()
        }
    }

    /// The features as the architecture names them, e.g. `aes vaes avx2 avx512 sha_ni`.
    pub fn names(&self) -> Vec<&'static str> {
        let x86 = cfg!(any(target_arch = "x86_64", target_arch = "x86"));
        let mut out = Vec::new();
        let mut add = |on: bool, name: &'static str| {
            if on {
                out.push(name)
            }
        };
        if x86 {
            add(self.aes, "aes");
            add(self.vaes, "vaes");
            add(self.pmull, "pclmulqdq");
            add(self.avx2, "avx2");
            add(self.avx512, "avx512");
            add(self.sha, "sha_ni");
        } else {
            add(self.aes, "aes");
            add(self.pmull, "pmull");
            add(self.sha, "sha2");
            add(self.neon, "neon");
        }
        out
    }

    /// The implementation the `aes` crate picks on this CPU (it detects the same way).
    pub fn aes_backend(&self) -> &'static str {
        if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            match (self.aes, self.vaes, self.avx512) {
                (true, true, true) => "vaes512",
                (true, true, false) => "vaes256",
                (true, false, _) => "aesni",
                _ => "soft",
            }
        } else if self.aes {
            "armv8-ce"
        } else {
            "soft"
        }
    }

    /// The implementation the `chacha20` crate picks (AVX-512 is enabled by our build cfg).
    pub fn chacha_backend(&self) -> &'static str {
        if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            if self.avx512 && cfg!(chacha20_avx512) {
                "avx512"
            } else if self.avx2 {
                "avx2"
            } else {
                "sse2"
            }
        } else if self.neon {
            "neon"
        } else {
            "soft"
        }
    }
}

/// The features of this CPU, detected once.
pub fn features() -> CpuFeatures {
    static FEATURES: std::sync::OnceLock<CpuFeatures> = std::sync::OnceLock::new();
    *FEATURES.get_or_init(CpuFeatures::detect)
}
