//! CPU features that decide which implementation of a cipher runs, and the
//! mask that hides some of them.
//!
//! Detection happens at run time (never by `target-cpu=native` alone) so that one
//! binary runs on every CPU of its architecture and still uses AES-NI, VAES,
//! AVX2, AVX-512 or the ARMv8 crypto extensions where they exist.
//!
//! `CLUSTERCRYPT_DISABLE_HWF` (comma-separated feature names) makes features
//! count as absent, so that every tier (a Ryzen without VAES, a Raspberry Pi 4
//! without AES instructions) can be forced, tested and compared on a machine
//! that has more. [`features`] is what every dispatch decision reads: the
//! detected features minus the mask. Libraries that detect the CPU on their own
//! are told the mask where they can be (AWS-LC through `OPENSSL_ia32cap` /
//! `OPENSSL_armcap`, see [`library_env_missing`]) and are not called at tiers
//! they would not respect where they cannot (see `crate::dispatch`).

use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;

/// The environment variable that lists the features to treat as absent.
pub const MASK_ENV: &str = "CLUSTERCRYPT_DISABLE_HWF";

/// Crypto-relevant CPU features.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuFeatures {
    /// AES round instructions (x86 AES-NI, ARMv8 crypto extensions).
    pub aes: bool,
    /// Vector AES on 256/512-bit registers (x86 VAES).
    pub vaes: bool,
    /// Carry-less multiply (x86 PCLMULQDQ, ARM PMULL).
    pub pmull: bool,
    /// Vector carry-less multiply (x86 VPCLMULQDQ).
    pub vpclmul: bool,
    /// AVX2 (and AVX).
    pub avx2: bool,
    /// AVX-512 foundation, vector-length and byte/word extensions.
    pub avx512: bool,
    /// SHA instructions (x86 SHA-NI, ARMv8 SHA2).
    pub sha: bool,
    /// ARM NEON (Advanced SIMD).
    pub neon: bool,
}

/// The feature names the mask accepts, with the field each one clears.
/// Names of both architectures are accepted so that one mask can serve a
/// mixed cluster; each architecture has only the features that apply to it.
const NAMES: &[(&str, &str)] = &[
    ("aes", "aes"),
    ("pclmulqdq", "pmull"),
    ("pmull", "pmull"),
    ("vaes", "vaes"),
    ("vpclmulqdq", "vpclmul"),
    ("avx2", "avx2"),
    ("avx512", "avx512"),
    ("sha_ni", "sha"),
    ("sha2", "sha"),
    ("neon", "neon"),
];

/// A `CLUSTERCRYPT_DISABLE_HWF` value that names an unknown feature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{MASK_ENV}: unknown CPU feature '{name}' (known: aes, pclmulqdq, vaes, vpclmulqdq, avx2, \
     avx512, sha_ni on x86; aes, pmull, sha2, neon on ARM; or all)"
)]
pub struct MaskError {
    /// The name that was not understood.
    pub name: String,
}

impl CpuFeatures {
    /// No feature at all.
    pub const NONE: CpuFeatures = CpuFeatures {
        aes: false,
        vaes: false,
        pmull: false,
        vpclmul: false,
        avx2: false,
        avx512: false,
        sha: false,
        neon: false,
    };

    /// Every feature (as a mask: hide everything).
    pub const ALL: CpuFeatures = CpuFeatures {
        aes: true,
        vaes: true,
        pmull: true,
        vpclmul: true,
        avx2: true,
        avx512: true,
        sha: true,
        neon: true,
    };

    /// Detects the features of the CPU this process runs on, ignoring the mask.
    pub fn detect() -> CpuFeatures {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            CpuFeatures {
                aes: has!("aes"),
                vaes: has!("vaes"),
                pmull: has!("pclmulqdq"),
                vpclmul: has!("vpclmulqdq"),
                avx2: has!("avx2") && has!("avx"),
                avx512: has!("avx512f") && has!("avx512vl") && has!("avx512bw"),
                sha: has!("sha"),
                neon: false,
            }
            .consistent()
        }
        #[cfg(target_arch = "aarch64")]
        {
            use std::arch::is_aarch64_feature_detected as has;
            CpuFeatures {
                aes: has!("aes"),
                vaes: false,
                pmull: has!("pmull"),
                vpclmul: false,
                avx2: false,
                avx512: false,
                sha: has!("sha2"),
                neon: has!("neon"),
            }
            .consistent()
        }
        #[cfg(all(target_arch = "arm", target_os = "linux"))]
        {
            // The Rust detection macro for 32-bit ARM is unstable; the kernel's
            // auxiliary vector says the same (HWCAP_NEON, HWCAP2_AES/PMULL/SHA2).
            arm_hwcap::detect().consistent()
        }
        #[cfg(not(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            all(target_arch = "arm", target_os = "linux")
        )))]
        {
            CpuFeatures::NONE
        }
    }

    /// Applies the dependencies between features: the wide x86 units need AVX2,
    /// VAES needs AES, VPCLMULQDQ needs PCLMULQDQ, ARM's crypto extensions live
    /// in the NEON registers.
    #[must_use]
    pub fn consistent(mut self) -> CpuFeatures {
        if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            if !self.avx2 {
                self.vaes = false;
                self.vpclmul = false;
                self.avx512 = false;
            }
            if !self.aes {
                self.vaes = false;
            }
            if !self.pmull {
                self.vpclmul = false;
            }
        } else if !self.neon {
            self.aes = false;
            self.pmull = false;
            self.sha = false;
        }
        self
    }

    /// These features minus those in `mask`, dependencies applied.
    #[must_use]
    pub fn without(self, mask: CpuFeatures) -> CpuFeatures {
        CpuFeatures {
            aes: self.aes && !mask.aes,
            vaes: self.vaes && !mask.vaes,
            pmull: self.pmull && !mask.pmull,
            vpclmul: self.vpclmul && !mask.vpclmul,
            avx2: self.avx2 && !mask.avx2,
            avx512: self.avx512 && !mask.avx512,
            sha: self.sha && !mask.sha,
            neon: self.neon && !mask.neon,
        }
        .consistent()
    }

    /// The features here that `other` lacks, without applying dependencies
    /// (what a mask hid: detected minus in use).
    #[must_use]
    pub fn difference(self, other: CpuFeatures) -> CpuFeatures {
        CpuFeatures {
            aes: self.aes && !other.aes,
            vaes: self.vaes && !other.vaes,
            pmull: self.pmull && !other.pmull,
            vpclmul: self.vpclmul && !other.vpclmul,
            avx2: self.avx2 && !other.avx2,
            avx512: self.avx512 && !other.avx512,
            sha: self.sha && !other.sha,
            neon: self.neon && !other.neon,
        }
    }

    /// Whether every feature of `other` is here too.
    pub fn contains(self, other: CpuFeatures) -> bool {
        let implied = |want: bool, have: bool| !want || have;
        implied(other.aes, self.aes)
            && implied(other.vaes, self.vaes)
            && implied(other.pmull, self.pmull)
            && implied(other.vpclmul, self.vpclmul)
            && implied(other.avx2, self.avx2)
            && implied(other.avx512, self.avx512)
            && implied(other.sha, self.sha)
            && implied(other.neon, self.neon)
    }

    /// The features as this architecture names them, e.g. `aes vaes avx2 avx512 sha_ni`.
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
            add(self.pmull, "pclmulqdq");
            add(self.vaes, "vaes");
            add(self.vpclmul, "vpclmulqdq");
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

    /// The mask as [`MASK_ENV`] spells it (this architecture's names).
    pub fn mask_string(&self) -> String {
        self.names().join(",")
    }
}

impl fmt::Display for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(" "))
        }
    }
}

/// Parses a [`MASK_ENV`] value: feature names separated by commas (spaces
/// allowed, case ignored), or `all`. The result is the set of features to hide.
pub fn parse_mask(value: &str) -> Result<CpuFeatures, MaskError> {
    let mut mask = CpuFeatures::NONE;
    for raw in value.split(',') {
        let name = raw.trim().to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        if name == "all" {
            mask = CpuFeatures::ALL;
            continue;
        }
        let field = NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| MaskError {
                name: raw.trim().to_string(),
            })?;
        match field {
            "aes" => mask.aes = true,
            "pmull" => mask.pmull = true,
            "vaes" => mask.vaes = true,
            "vpclmul" => mask.vpclmul = true,
            "avx2" => mask.avx2 = true,
            "avx512" => mask.avx512 = true,
            "sha" => mask.sha = true,
            _ => mask.neon = true,
        }
    }
    Ok(mask)
}

/// The features this CPU has, ignoring the mask (detected once).
pub fn detected() -> CpuFeatures {
    static DETECTED: OnceLock<CpuFeatures> = OnceLock::new();
    *DETECTED.get_or_init(CpuFeatures::detect)
}

/// The mask in the environment, checked. Programs call this first (the CLI
/// exits with status 2 on an error) so that [`disabled`] never meets a bad value.
pub fn mask_from_env() -> Result<CpuFeatures, MaskError> {
    match std::env::var(MASK_ENV) {
        Ok(v) => parse_mask(&v),
        Err(_) => Ok(CpuFeatures::NONE),
    }
}

/// The features hidden by [`MASK_ENV`] (read once).
///
/// # Panics
/// If the variable names an unknown feature and the program did not check it
/// with [`mask_from_env`] first.
pub fn disabled() -> CpuFeatures {
    static DISABLED: OnceLock<CpuFeatures> = OnceLock::new();
    *DISABLED.get_or_init(|| mask_from_env().unwrap_or_else(|e| panic!("{e}")))
}

/// The features in use: [`detected`] minus [`disabled`]. Every choice of
/// implementation reads this.
pub fn features() -> CpuFeatures {
    static IN_USE: OnceLock<CpuFeatures> = OnceLock::new();
    *IN_USE.get_or_init(|| detected().without(disabled()))
}

/// Whether this CPU has integer ALUs that the vector kernels leave idle,
/// enough for one more ChaCha block in general-purpose registers beside them
/// ([`crate::dispatch::ChaChaImpl::Avx2Scalar`]):
/// - AMD (and Hygon) from Zen on, whose integer and floating-point/vector
///   units have separate schedulers and pipes;
/// - Intel's P-cores from Golden Cove on (Alder Lake, Raptor Lake, Sapphire
///   and Emerald Rapids, Meteor Lake, Granite Rapids, Arrow and Lunar Lake:
///   [`GOLDEN_COVE_ON`]), which issue vector work to ports 0, 1 and 5 and
///   have two more integer ALUs (ports 6 and 10; Lion Cove splits integer
///   and vector ports as Zen does). On Emerald Rapids (`examples/chacha_kernels.rs`,
///   64 KiB requests) the ninth AVX2 block gained 5-6% and the fifth SSSE3
///   block 15-17%; the other models were not measured.
///
/// Skylake-family cores (Haswell to Rocket Lake, the studies' NUC) have one
/// integer-only ALU (port 6): there the extra block would take the vector
/// rounds' slots. Always false off x86-64. Not a feature the mask can hide:
/// it is what the CPU is, not what it may run.
pub fn integer_ports_spare() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static APART: OnceLock<bool> = OnceLock::new();
        *APART.get_or_init(|| {
            // CPUID leaf 1 exists on every x86-64 CPU.
            let l1 = core::arch::x86_64::__cpuid(1);
            let vendor = vendor();
            ports_spare(&vendor, family(l1.eax), model(l1.eax))
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU's vector gathers (`VPGATHERDD`) load at about the rate
/// of the load ports, so that table lookups for eight blocks are one
/// instruction ([`crate::dispatch::twofish`]): Intel's big cores from
/// Skylake on (display family 6, model 0x4E or later, without the Atom
/// models that have AVX2), unless the kernel reports the Gather Data
/// Sampling mitigation, whose microcode makes gathers several times slower
/// (Skylake to Tiger Lake with it loaded; the NUC of the studies is one).
/// libgcrypt makes the same choice for its Twofish (`HWF_INTEL_FAST_VPGATHER`).
/// Haswell's and Broadwell's gathers are slower; AMD's were not measured
/// with this code. Measured on Emerald Rapids (model 0xCF). Like
/// [`integer_ports_spare`], what the CPU is, not a feature the mask hides.
pub fn fast_gather() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static FAST: OnceLock<bool> = OnceLock::new();
        *FAST.get_or_init(|| {
            // CPUID leaf 1 exists on every x86-64 CPU.
            let l1 = core::arch::x86_64::__cpuid(1);
            let vendor = vendor();
            let gds = std::fs::read_to_string(
                "/sys/devices/system/cpu/vulnerabilities/gather_data_sampling",
            )
            .ok();
            gather_fast(&vendor, family(l1.eax), model(l1.eax), gds.as_deref())
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU runs 512-bit AES instructions on one port and the other
/// 512-bit vector instructions on the two left (Intel's big cores from Ice
/// Lake on: port 1 joins port 0 for 512-bit work, VAES on 512 bits issues on
/// port 0 alone, on 256 bits on ports 0 and 1: the same AES throughput).
/// There the 512-bit XTS kernel's tweak arithmetic takes AES's issue slots,
/// and the 256-bit one is faster ([`crate::dispatch::aes_xts`]): on Emerald
/// Rapids 1.05-1.12x. AMD's Zen 4 runs 512-bit vector instructions on all
/// four of its pipes (two for AES), and its 512-bit XTS is the faster. Like
/// [`integer_ports_spare`], what the CPU is, not a feature the mask hides.
pub fn zmm_aes_one_port() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ONE: OnceLock<bool> = OnceLock::new();
        *ONE.get_or_init(|| vendor() == *b"GenuineIntel")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU's integer shifts and carry additions (`sar`, `adc`) issue
/// on a port its vector AES instructions need, and so do most of its other
/// integer instructions: Intel's cores run shifts and flag readers on ports
/// 0 and 6, simple integer work on 0, 1, 5 and 6 (and 10 from Golden Cove),
/// VAES on 256 bits on ports 0 and 1. There the VAES-256 XTS kernel makes its
/// tweaks with vector instructions (four a register of two, three of them
/// shuffles and the multiplication on port 5) rather than with twelve integer
/// ones a register ([`crate::dispatch::aes_xts_tweaks`]): on Emerald
/// Rapids 1.05x (AES-128) and 1.03x (AES-256). AMD's Zen has separate integer
/// pipes, where the integer tweaks measured 1.03-1.08x an earlier vector loop
/// (Zen 3; the present vector loops were not measured on AMD).
/// Like [`zmm_aes_one_port`], what the CPU is, not a feature the mask hides.
pub fn integer_work_takes_aes_ports() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static SHARED: OnceLock<bool> = OnceLock::new();
        *SHARED.get_or_init(|| vendor() == *b"GenuineIntel")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// CPUID leaf 0's vendor string.
#[cfg(target_arch = "x86_64")]
fn vendor() -> [u8; 12] {
    // CPUID leaf 0 exists on every x86-64 CPU.
    let l0 = core::arch::x86_64::__cpuid(0);
    let mut vendor = [0u8; 12];
    for (i, r) in [l0.ebx, l0.edx, l0.ecx].into_iter().enumerate() {
        vendor[4 * i..4 * i + 4].copy_from_slice(&r.to_le_bytes());
    }
    vendor
}

/// Whether the CPU has GFNI and AVX-512 VBMI (Ice Lake, Zen 4 and later),
/// which the AVX-512 Twofish kernel needs beside the `avx512` features:
/// every CPU with VAES and AVX-512 that we know of has them, so the mask's
/// `avx512` hides them too (the kernel runs only where `avx512` is in use).
pub fn gfni_vbmi() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("gfni")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`fast_gather`] from the vendor string, display family and model, and the
/// kernel's Gather Data Sampling report (`None`: no such file, a kernel from
/// before 2023, which cannot say whether the microcode is loaded).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn gather_fast(vendor: &[u8; 12], family: u32, model: u32, gds: Option<&str>) -> bool {
    // Atom cores with AVX2: Gracemont (Alder Lake-N), Crestmont (Sierra
    // Forest, Grand Ridge).
    const ATOMS: [u32; 3] = [0xBE, 0xAF, 0xB6];
    let big_core = vendor == b"GenuineIntel" && family == 6 && model >= 0x4E;
    let gds_fast = gds.is_some_and(|g| !g.trim_start().starts_with("Mitigation"));
    big_core && !ATOMS.contains(&model) && gds_fast
}

/// The display model of CPUID leaf 1's EAX: the base model, plus the
/// extended model (times 16) for display families 6 and 15.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn model(eax: u32) -> u32 {
    let base = (eax >> 4) & 0xf;
    if matches!((eax >> 8) & 0xf, 6 | 0xf) {
        base | (((eax >> 16) & 0xf) << 4)
    } else {
        base
    }
}

/// Whether the ChaCha kernels run one more block on the integer units
/// ([`crate::dispatch::ChaChaImpl::Avx2Scalar`]): where the vector
/// kernels leave integer ALUs idle ([`integer_ports_spare`]) and no
/// second hardware thread shares the core ([`smt_active`]). The extra block
/// needs the core's full issue width (259 instructions a double round for 9
/// AVX2 blocks, against 134 for 8): with both threads of a core busy, as
/// under `--threads all` on a Ryzen with SMT, each gets about half of it,
/// and by instruction count the plain kernel would do about 1.2x the blocks.
/// On the Zen 4 VM the extra block's runs had phases at 0.65-0.7x of the
/// plain kernel, which that sharing (the host's other guests on a sibling
/// thread) would explain; not measured on a machine with SMT.
pub fn scalar_beside_vector() -> bool {
    integer_ports_spare() && !smt_active()
}

/// Whether a second hardware thread may share this core: Linux's
/// `/sys/devices/system/cpu/smt/active`, else CPU 0's thread siblings;
/// unknown counts as yes.
pub fn smt_active() -> bool {
    static SMT: OnceLock<bool> = OnceLock::new();
    *SMT.get_or_init(|| {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        smt_from(
            read("/sys/devices/system/cpu/smt/active").as_deref(),
            read("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").as_deref(),
        )
    })
}

/// [`smt_active`] from the two files' contents.
fn smt_from(active: Option<&str>, siblings: Option<&str>) -> bool {
    match (active.map(str::trim), siblings.map(str::trim)) {
        (Some("0"), _) => false,
        (Some("1"), _) => true,
        // "0" alone, or a list such as "0,8" or "0-1".
        (_, Some(list)) => list.contains([',', '-']),
        _ => true,
    }
}

/// The display family of CPUID leaf 1's EAX: the base family, plus the
/// extended family when the base is 15.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xf;
    if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    }
}

/// Intel's display models (family 6) with Golden Cove or later P-cores:
/// Alder Lake (0x97, 0x9A), Raptor Lake (0xB7, 0xBA, 0xBF), Sapphire Rapids
/// (0x8F), Emerald Rapids (0xCF), Meteor Lake (0xAA, 0xAC), Granite Rapids
/// (0xAD, 0xAE), Arrow Lake (0xC5, 0xC6) and Lunar Lake (0xBD).
pub const GOLDEN_COVE_ON: [u32; 14] = [
    0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0x8F, 0xCF, 0xAA, 0xAC, 0xAD, 0xAE, 0xC5, 0xC6, 0xBD,
];

/// [`integer_ports_spare`] from the vendor string, the display family and
/// the display model: AMD or Hygon, family 0x17 (Zen, Zen 2) or later; Intel
/// family 6, a model of [`GOLDEN_COVE_ON`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn ports_spare(vendor: &[u8; 12], family: u32, model: u32) -> bool {
    match vendor {
        b"AuthenticAMD" | b"HygonGenuine" => family >= 0x17,
        b"GenuineIntel" => family == 6 && GOLDEN_COVE_ON.contains(&model),
        _ => false,
    }
}

/// A level of hardware support that users own, forced with the mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// x86-64 with VAES, VPCLMULQDQ and AVX-512 (Zen 4, Ice Lake and later).
    Avx512,
    /// x86-64 with VAES and VPCLMULQDQ on 256-bit registers (Zen 3, Alder Lake).
    VaesAvx2,
    /// x86-64 with AES-NI, PCLMULQDQ and AVX2 (the studies' NUC and Ryzen 7 2700).
    AesniAvx2,
    /// x86-64 without any of them: the portable code (SSE2 is the baseline).
    Portable,
    /// aarch64 with the crypto extensions (Raspberry Pi 5).
    ArmCe,
    /// aarch64 or armv7 with NEON but no crypto extensions (Raspberry Pi 3 and 4).
    ArmNeon,
    /// ARM without NEON: the portable code.
    ArmPortable,
}

impl Tier {
    /// The tier's name, as `scripts/compare.py --tier` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Avx512 => "avx512",
            Tier::VaesAvx2 => "vaes-avx2",
            Tier::AesniAvx2 => "aesni-avx2",
            Tier::Portable | Tier::ArmPortable => "portable",
            Tier::ArmCe => "ce",
            Tier::ArmNeon => "neon",
        }
    }

    /// The [`MASK_ENV`] value that forces this tier on a CPU that has more.
    pub fn mask(self) -> &'static str {
        match self {
            Tier::Avx512 | Tier::ArmCe => "",
            Tier::VaesAvx2 => "avx512",
            Tier::AesniAvx2 => "vaes,vpclmulqdq,avx512",
            Tier::Portable => "aes,pclmulqdq,vaes,vpclmulqdq,avx2,avx512,sha_ni",
            Tier::ArmNeon => "aes,pmull,sha2",
            Tier::ArmPortable => "aes,pmull,sha2,neon",
        }
    }

    /// The features the tier needs.
    pub fn requires(self) -> CpuFeatures {
        let mut f = CpuFeatures::NONE;
        match self {
            Tier::Avx512 => {
                f = CpuFeatures {
                    neon: false,
                    sha: false,
                    ..CpuFeatures::ALL
                }
            }
            Tier::VaesAvx2 => {
                (f.aes, f.pmull, f.vaes, f.vpclmul, f.avx2) = (true, true, true, true, true)
            }
            Tier::AesniAvx2 => (f.aes, f.pmull, f.avx2) = (true, true, true),
            Tier::ArmCe => (f.neon, f.aes, f.pmull) = (true, true, true),
            Tier::ArmNeon => f.neon = true,
            Tier::Portable | Tier::ArmPortable => {}
        }
        f
    }

    /// The tiers of the architecture this binary was built for, fastest first.
    pub fn all_for_arch() -> &'static [Tier] {
        if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            &[
                Tier::Avx512,
                Tier::VaesAvx2,
                Tier::AesniAvx2,
                Tier::Portable,
            ]
        } else if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
            &[Tier::ArmCe, Tier::ArmNeon, Tier::ArmPortable]
        } else {
            &[Tier::Portable]
        }
    }

    /// The tier of this architecture called `name`.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::all_for_arch()
            .iter()
            .copied()
            .find(|t| t.name() == name)
    }

    /// Whether this CPU has what the tier needs (ignoring the mask).
    pub fn runnable(self) -> bool {
        detected().contains(self.requires())
    }

    /// The features this CPU lacks for the tier, for the note that says why it
    /// was skipped.
    pub fn missing(self) -> CpuFeatures {
        self.requires().difference(detected())
    }

    /// The fastest tier the features in use reach.
    pub fn current() -> Tier {
        let f = features();
        Tier::all_for_arch()
            .iter()
            .copied()
            .find(|t| f.contains(t.requires()))
            .unwrap_or(Tier::Portable)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `OPENSSL_ia32cap` value that hides `mask` from OpenSSL and AWS-LC (the
/// bits are CPUID's: leaf 1 EDX:ECX, then leaf 7 EBX:ECX), or `None` when
/// nothing is hidden.
pub fn openssl_ia32cap(mask: CpuFeatures) -> Option<String> {
    let (mut w01, mut w23) = (0u64, 0u64);
    if mask.aes {
        w01 |= 1 << (32 + 25);
    }
    if mask.pmull {
        w01 |= 1 << (32 + 1);
    }
    if mask.avx2 {
        w01 |= 1 << (32 + 28); // AVX: the libraries' AVX code paths go too
        w23 |= 1 << 5;
    }
    if mask.avx2 || mask.avx512 {
        // AVX-512 F, DQ, IFMA, CD, BW, VL (leaf 7 EBX) and VBMI, VBMI2, VNNI,
        // BITALG, VPOPCNTDQ (leaf 7 ECX).
        w23 |= (1 << 16) | (1 << 17) | (1 << 21) | (1 << 28) | (1 << 30) | (1 << 31);
        w23 |= ((1 << 1) | (1 << 6) | (1 << 11) | (1 << 12) | (1 << 14)) << 32;
    }
    if mask.vaes || mask.aes || mask.avx2 {
        w23 |= 1 << (32 + 9);
    }
    if mask.vpclmul || mask.pmull || mask.avx2 {
        w23 |= 1 << (32 + 10);
    }
    if mask.sha {
        w23 |= 1 << 29;
    }
    (w01 | w23 != 0).then(|| format!("~0x{w01:x}:~0x{w23:x}"))
}

/// The `OPENSSL_armcap` value that hides `mask` from AWS-LC on ARM, or `None`.
pub fn openssl_armcap(mask: CpuFeatures) -> Option<String> {
    let mut bits = 0u32;
    if mask.neon {
        bits |= 1; // ARMV7_NEON: everything below lives in NEON registers
        bits |= (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 11);
    }
    if mask.aes {
        bits |= 1 << 2;
    }
    if mask.pmull {
        bits |= 1 << 5;
    }
    if mask.sha {
        bits |= (1 << 3) | (1 << 4) | (1 << 6) | (1 << 11);
    }
    (bits != 0).then(|| format!("~0x{bits:x}"))
}

/// The environment variable and value that tell AWS-LC (and OpenSSL) the mask
/// on this architecture, if anything is hidden.
pub fn library_mask_env(mask: CpuFeatures) -> Option<(&'static str, String)> {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        openssl_ia32cap(mask).map(|v| ("OPENSSL_ia32cap", v))
    } else if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        openssl_armcap(mask).map(|v| ("OPENSSL_armcap", v))
    } else {
        None
    }
}

/// Whether AWS-LC sees the mask: nothing is hidden, or its variable carries
/// exactly the value [`library_mask_env`] gives.
pub fn libraries_configured() -> bool {
    match library_mask_env(disabled()) {
        None => true,
        Some((name, value)) => std::env::var(name).is_ok_and(|v| v == value),
    }
}

/// The variable and value AWS-LC still needs to see the mask, if any: AWS-LC
/// reads `OPENSSL_ia32cap` / `OPENSSL_armcap` in a static constructor, before
/// `main`, so a program that finds this `Some` runs itself again with it set
/// (the CLI does, see its `main`).
pub fn library_env_missing() -> Option<(&'static str, String)> {
    if libraries_configured() {
        None
    } else {
        library_mask_env(disabled())
    }
}

#[cfg(all(target_arch = "arm", target_os = "linux"))]
mod arm_hwcap {
    //! 32-bit ARM feature bits from the auxiliary vector (`/proc/self/auxv`).
    use super::CpuFeatures;

    const AT_HWCAP: u32 = 16;
    const AT_HWCAP2: u32 = 26;
    const HWCAP_NEON: u32 = 1 << 12;
    const HWCAP2_AES: u32 = 1 << 0;
    const HWCAP2_PMULL: u32 = 1 << 1;
    const HWCAP2_SHA2: u32 = 1 << 3;

    pub(super) fn detect() -> CpuFeatures {
        let (mut hwcap, mut hwcap2) = (0u32, 0u32);
        if let Ok(auxv) = std::fs::read("/proc/self/auxv") {
            for pair in auxv.chunks_exact(8) {
                let key = u32::from_ne_bytes(pair[..4].try_into().expect("4 bytes"));
                let val = u32::from_ne_bytes(pair[4..].try_into().expect("4 bytes"));
                match key {
                    AT_HWCAP => hwcap = val,
                    AT_HWCAP2 => hwcap2 = val,
                    _ => {}
                }
            }
        }
        CpuFeatures {
            neon: hwcap & HWCAP_NEON != 0,
            aes: hwcap2 & HWCAP2_AES != 0,
            pmull: hwcap2 & HWCAP2_PMULL != 0,
            sha: hwcap2 & HWCAP2_SHA2 != 0,
            ..CpuFeatures::NONE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_from_sysfs() {
        assert!(!smt_from(Some("0\n"), Some("0,8")));
        assert!(smt_from(Some("1\n"), None));
        assert!(smt_from(None, Some("0,8\n")));
        assert!(smt_from(None, Some("0-1")));
        assert!(!smt_from(None, Some("0\n")));
        assert!(smt_from(None, None));
    }

    /// CPUID signatures of real CPUs: Zen 2/3/4 and Hygon apart; Intel
    /// (Coffee Lake, Raptor Lake) and AMD Bulldozer (family 0x15, not
    /// measured) not.
    /// CPUID signatures of real CPUs: Emerald Rapids 0x000C06F2 (model 0xCF),
    /// Coffee Lake 0x000906EA (0x9E), Haswell 0x000306C3 (0x3C), Zen 4
    /// 0x00A10F11 (family 0x19, model 0x11); and the kernel's GDS reports.
    #[test]
    fn gathers_fast_on_intel_big_cores_without_gds_microcode() {
        assert_eq!((family(0x000C_06F2), model(0x000C_06F2)), (6, 0xCF));
        assert_eq!(model(0x0009_06EA), 0x9E);
        assert_eq!(model(0x0003_06C3), 0x3C);
        assert_eq!((family(0x00A1_0F11), model(0x00A1_0F11)), (0x19, 0x11));
        let intel = b"GenuineIntel";
        let na = Some("Not affected\n");
        assert!(gather_fast(intel, 6, 0xCF, na));
        assert!(gather_fast(
            intel,
            6,
            0x9E,
            Some("Vulnerable: No microcode")
        ));
        assert!(!gather_fast(intel, 6, 0x9E, Some("Mitigation: Microcode")));
        assert!(!gather_fast(intel, 6, 0xCF, None));
        assert!(!gather_fast(intel, 6, 0x3C, na));
        assert!(!gather_fast(intel, 6, 0xBE, na));
        assert!(!gather_fast(b"AuthenticAMD", 0x19, 0x11, na));
    }

    #[test]
    fn integer_ports_spare_on_zen_and_golden_cove_on() {
        assert_eq!(family(0x0083_0F10), 0x17); // Zen 2 (Ryzen 3000)
        assert_eq!(family(0x00A2_0F10), 0x19); // Zen 3
        assert_eq!(family(0x00A1_0F11), 0x19); // Zen 4 (EPYC 9004)
        assert_eq!(family(0x0009_06EA), 6); // Coffee Lake (Core i5-8500T)
        assert_eq!(model(0x0009_06EA), 0x9E);
        assert_eq!(model(0x000C_06F2), 0xCF); // Emerald Rapids
        assert_eq!(model(0x0009_0672), 0x97); // Alder Lake-S
        let intel = b"GenuineIntel";
        assert!(ports_spare(b"AuthenticAMD", 0x17, 0x01));
        assert!(ports_spare(b"AuthenticAMD", 0x19, 0x11));
        assert!(ports_spare(b"HygonGenuine", 0x18, 0x00));
        assert!(!ports_spare(b"AuthenticAMD", 0x15, 0x02));
        assert!(ports_spare(intel, 6, 0xCF));
        assert!(ports_spare(intel, 6, 0x97));
        assert!(ports_spare(intel, 6, 0x8F));
        // Skylake-family cores: one integer-only ALU.
        assert!(!ports_spare(intel, 6, 0x9E)); // Coffee Lake
        assert!(!ports_spare(intel, 6, 0x55)); // Skylake-SP
        assert!(!ports_spare(intel, 6, 0x6A)); // Ice Lake-SP
        assert!(!ports_spare(intel, 6, 0xBE)); // Alder Lake-N (Gracemont only)
        assert!(!ports_spare(intel, 0x19, 0x11));
        assert!(!ports_spare(b"CentaurHauls", 6, 0xCF));
        // What this CPU is, as /proc/cpuinfo says it (Linux x86-64).
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
            let field = |name: &str| {
                info.lines()
                    .find(|l| l.starts_with(name))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|v| v.trim().to_string())
            };
            if let (Some(v), Some(f), Some(m)) =
                (field("vendor_id"), field("cpu family"), field("model"))
            {
                let (f, m) = (f.parse::<u32>().unwrap(), m.parse::<u32>().unwrap());
                let want = match v.as_str() {
                    "AuthenticAMD" | "HygonGenuine" => f >= 0x17,
                    "GenuineIntel" => f == 6 && GOLDEN_COVE_ON.contains(&m),
                    _ => false,
                };
                assert_eq!(integer_ports_spare(), want, "{v} family {f} model {m}");
            }
        }
    }

    #[test]
    fn mask_names_parse_and_unknown_names_fail() {
        let m = parse_mask("aes, VAES,,avx512").unwrap();
        assert!(m.aes && m.vaes && m.avx512 && !m.avx2 && !m.pmull);
        assert_eq!(parse_mask("").unwrap(), CpuFeatures::NONE);
        assert_eq!(parse_mask("all").unwrap(), CpuFeatures::ALL);
        let m = parse_mask("pmull,sha2,neon").unwrap();
        assert!(m.pmull && m.sha && m.neon && !m.aes);
        assert_eq!(
            parse_mask("pclmulqdq").unwrap(),
            parse_mask("pmull").unwrap()
        );
        let e = parse_mask("aes,avx1024").unwrap_err();
        assert_eq!(e.name, "avx1024");
        assert!(e.to_string().contains("unknown CPU feature 'avx1024'"));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_dependencies_follow_the_mask() {
        let all = CpuFeatures {
            neon: false,
            ..CpuFeatures::ALL
        };
        let no_avx2 = all.without(parse_mask("avx2").unwrap());
        assert!(no_avx2.aes && no_avx2.pmull && no_avx2.sha);
        assert!(!no_avx2.vaes && !no_avx2.vpclmul && !no_avx2.avx512);
        let no_aes = all.without(parse_mask("aes").unwrap());
        assert!(!no_aes.aes && !no_aes.vaes && no_aes.vpclmul && no_aes.avx512);
        assert_eq!(
            all.without(parse_mask(Tier::Portable.mask()).unwrap()),
            CpuFeatures::NONE
        );
        let aesni = all.without(parse_mask(Tier::AesniAvx2.mask()).unwrap());
        assert_eq!(
            aesni,
            CpuFeatures {
                sha: true,
                ..Tier::AesniAvx2.requires()
            }
        );
        assert!(all.contains(Tier::Avx512.requires()));
        assert!(!aesni.contains(Tier::VaesAvx2.requires()));
        let vaes_only = Tier::VaesAvx2.requires();
        assert!(!Tier::AesniAvx2.requires().contains(vaes_only));
        assert_eq!(
            all.difference(all.without(parse_mask("avx512").unwrap())),
            parse_mask("avx512").unwrap()
        );
        assert!(aesni.contains(Tier::AesniAvx2.requires()));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tiers_mask_down_to_themselves() {
        // Masking a full CPU with a tier's mask leaves exactly that tier.
        let full = CpuFeatures {
            neon: false,
            ..CpuFeatures::ALL
        };
        for &tier in Tier::all_for_arch() {
            let left = full.without(parse_mask(tier.mask()).unwrap());
            let reached = Tier::all_for_arch()
                .iter()
                .copied()
                .find(|t| left.contains(t.requires()))
                .unwrap();
            assert_eq!(reached, tier, "{tier}");
            assert_eq!(Tier::from_name(tier.name()), Some(tier));
        }
        assert_eq!(Tier::from_name("ce"), None);
    }

    #[test]
    fn library_masks() {
        assert_eq!(openssl_ia32cap(CpuFeatures::NONE), None);
        let aes = openssl_ia32cap(parse_mask("aes").unwrap()).unwrap();
        // AES-NI is CPUID.1:ECX bit 25; VAES (leaf 7 ECX bit 9) goes with it.
        assert_eq!(aes, "~0x200000000000000:~0x20000000000");
        let avx512 = openssl_ia32cap(parse_mask("avx512").unwrap()).unwrap();
        assert!(avx512.starts_with("~0x0:~0x"), "{avx512}");
        assert_eq!(
            openssl_armcap(parse_mask("aes,pmull").unwrap()).unwrap(),
            "~0x24"
        );
        assert_eq!(openssl_armcap(CpuFeatures::NONE), None);
    }

    #[test]
    fn in_use_is_detected_minus_mask() {
        assert!(detected().contains(features()));
        assert_eq!(features(), detected().without(disabled()));
        assert!(Tier::current().runnable());
    }
}
