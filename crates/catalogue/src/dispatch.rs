//! The one place that decides which implementation runs.
//!
//! Every choice reads [`cpu::features`] (the detected features minus
//! `CLUSTERCRYPT_DISABLE_HWF`), so each tier can be forced and tested on a CPU
//! that has more. A new instruction set is a new backend module per cipher
//! family and one arm here. Libraries that detect the CPU on their own (the
//! `aes` and `chacha20` crates) are only chosen where their own choice is the
//! one the mask allows; AWS-LC is told the mask (see
//! [`cpu::library_env_missing`]).

use crate::cpu::{self, CpuFeatures};

/// Which AES implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AesImpl {
    /// VAES on 512-bit registers (AVX-512).
    Vaes512,
    /// VAES on 256-bit registers (AVX2).
    Vaes256,
    /// AES-NI on 128-bit registers.
    AesNi,
    /// ARMv8 crypto extensions (AESE/AESMC).
    ArmCe,
    /// Constant-time NEON without AES instructions.
    Neon,
    /// Constant-time SSSE3 without AES instructions (x86-64).
    Ssse3,
    /// Portable constant-time code.
    Soft,
}

impl AesImpl {
    /// The name rows report.
    pub fn name(self) -> &'static str {
        match self {
            AesImpl::Vaes512 => "vaes512",
            AesImpl::Vaes256 => "vaes256",
            AesImpl::AesNi => "aesni",
            AesImpl::ArmCe => "armv8-ce",
            AesImpl::Neon => "neon",
            AesImpl::Ssse3 => "ssse3",
            AesImpl::Soft => "soft",
        }
    }
}

/// The AES implementation for features `f`.
pub fn aes_for(f: CpuFeatures) -> AesImpl {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        match (f.aes, f.vaes, f.avx512) {
            (true, true, true) => AesImpl::Vaes512,
            // VAES-256's XTS multiplies its tweaks with VPCLMULQDQ, which
            // every CPU with VAES has; masked alone, AES-NI runs.
            (true, true, false) if f.vpclmul => AesImpl::Vaes256,
            (true, _, _) => AesImpl::AesNi,
            _ if ssse3() => AesImpl::Ssse3,
            _ => AesImpl::Soft,
        }
    } else if f.aes && cfg!(target_arch = "aarch64") {
        // The `aes` crate has AES-instruction code for aarch64 only; 32-bit ARM
        // with the crypto extensions runs our constant-time code.
        AesImpl::ArmCe
    } else if f.neon && cfg!(target_arch = "aarch64") {
        AesImpl::Neon
    } else {
        AesImpl::Soft
    }
}

/// Whether the x86-64 CPU has SSSE3. The mask has no name for it: SSSE3 is
/// older than every x86 feature the tiers mask, and OpenSSL and libgcrypt use
/// it at the same tier, so the portable tier keeps it.
fn ssse3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::aes::x86_ssse3::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The AES implementation that runs here.
pub fn aes() -> AesImpl {
    aes_for(cpu::features())
}

/// The AES implementation XTS runs for features `f`: [`aes_for`]'s, but
/// VAES-256 where that is VAES-512 on a CPU that runs 512-bit AES on one
/// port ([`cpu::zmm_aes_one_port`]; VAES-256's XTS needs VPCLMULQDQ).
pub fn aes_xts_for(f: CpuFeatures, zmm_aes_one_port: bool) -> AesImpl {
    match aes_for(f) {
        AesImpl::Vaes512 if zmm_aes_one_port && f.vpclmul => AesImpl::Vaes256,
        imp => imp,
    }
}

/// The AES implementation XTS runs here.
pub fn aes_xts() -> AesImpl {
    aes_xts_for(cpu::features(), cpu::zmm_aes_one_port())
}

/// How the VAES-256 XTS kernel makes the tweaks of its long requests. All
/// three are ours and tested on any CPU that can run them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XtsTweaks {
    /// On the integer pipes, into a ring in memory 7 batches ahead (AMD).
    Integer,
    /// With vector instructions (VPCLMULQDQ), two memory slots taking turns.
    Vector,
    /// With vector instructions in ymm16-31 (AVX-512VL): no ring, and the
    /// data's first XOR with its tweak and round key 0 one VPTERNLOGD (on
    /// Emerald Rapids 1.24x the integer ring for AES-128, 1.12x for AES-256).
    Evex,
}

/// The tweaks for features `f` on a CPU whose integer work shares the AES
/// ports or not ([`cpu::integer_work_takes_aes_ports`]).
pub fn aes_xts_tweaks_for(f: CpuFeatures, integer_work_takes_aes_ports: bool) -> XtsTweaks {
    match (integer_work_takes_aes_ports, f.avx512) {
        (false, _) => XtsTweaks::Integer,
        (true, false) => XtsTweaks::Vector,
        (true, true) => XtsTweaks::Evex,
    }
}

/// The tweaks VAES-256 XTS makes here.
pub fn aes_xts_tweaks() -> XtsTweaks {
    aes_xts_tweaks_for(cpu::features(), cpu::integer_work_takes_aes_ports())
}

/// Whether AES-CBC encryption runs AWS-LC's vector-permute AES
/// ([`crate::aes::aws_lc_cbc`]) rather than ours: at the SSSE3 tier (x86
/// without AES-NI), where our eight-block bitsliced code spends eight blocks'
/// work on each block of a chain, and only when AWS-LC has been told the
/// mask (otherwise it would run AES-NI the mask hides).
pub fn aes_cbc_encrypt_aws_lc() -> bool {
    cfg!(target_arch = "x86_64") && aes() == AesImpl::Ssse3 && cpu::libraries_configured()
}

/// What the `aes` crate runs on this hardware (it cannot be told the mask).
pub fn aes_crate_choice() -> AesImpl {
    aes_for(cpu::detected())
}

/// Which ChaCha implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaChaImpl {
    /// 16 blocks in 512-bit registers.
    Avx512,
    /// 8 blocks in 256-bit registers.
    Avx2,
    /// 8 blocks in 256-bit registers and a ninth in general-purpose
    /// registers, its rounds inside the vector steps (x86-64; chosen where
    /// [`cpu::scalar_beside_vector`]).
    Avx2Scalar,
    /// 4 blocks in 128-bit registers, byte-shuffle rotations.
    Ssse3,
    /// 4 blocks in 128-bit registers and a fifth in general-purpose
    /// registers, as [`ChaChaImpl::Avx2Scalar`] (x86-64).
    Ssse3Scalar,
    /// 4 blocks in 128-bit registers (the x86-64 baseline).
    Sse2,
    /// 4 blocks in NEON registers.
    Neon,
    /// Portable code.
    Soft,
}

impl ChaChaImpl {
    /// The name rows report.
    pub fn name(self) -> &'static str {
        match self {
            ChaChaImpl::Avx512 => "avx512",
            ChaChaImpl::Avx2 => "avx2",
            ChaChaImpl::Avx2Scalar => "avx2+scalar",
            ChaChaImpl::Ssse3 => "ssse3",
            ChaChaImpl::Ssse3Scalar => "ssse3+scalar",
            ChaChaImpl::Sse2 => "sse2",
            ChaChaImpl::Neon => "neon",
            ChaChaImpl::Soft => "soft",
        }
    }
}

/// The ChaCha implementation for features `f`.
pub fn chacha_for(f: CpuFeatures) -> ChaChaImpl {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        if f.avx512 {
            ChaChaImpl::Avx512
        } else if f.avx2 {
            // One more block on the integer units (false off x86-64). On
            // the 2-core Zen 4 VM, 64 KiB requests, `examples/chacha_kernels.rs`
            // (best of 101 rounds): AVX2 3,561 against 3,330 MiB/s, SSSE3
            // 2,013 against 1,702. On Emerald Rapids (Golden Cove's ports),
            // best of 9: AVX2 2,482 against 2,348, SSSE3 1,438 against 1,229.
            if cpu::scalar_beside_vector() {
                ChaChaImpl::Avx2Scalar
            } else {
                ChaChaImpl::Avx2
            }
        } else if ssse3() {
            if cpu::scalar_beside_vector() {
                ChaChaImpl::Ssse3Scalar
            } else {
                ChaChaImpl::Ssse3
            }
        } else {
            ChaChaImpl::Sse2
        }
    } else if f.neon && cfg!(target_arch = "aarch64") {
        ChaChaImpl::Neon
    } else {
        ChaChaImpl::Soft
    }
}

/// The ChaCha implementation that runs here (our own kernels in
/// [`crate::chacha`]; the `chacha20` crate, which cannot be told the mask, is
/// only the tests' oracle).
pub fn chacha() -> ChaChaImpl {
    chacha_for(cpu::features())
}

/// Which multi-block Serpent implementation runs: `"avx512"`, `"avx2"`,
/// `"sse2"` (the x86-64 baseline), `"neon"` or `"soft"`.
pub fn serpent() -> &'static str {
    let f = cpu::features();
    if cfg!(target_arch = "x86_64") {
        if f.avx512 {
            "avx512"
        } else if f.avx2 {
            "avx2"
        } else {
            "sse2"
        }
    } else if cfg!(target_arch = "aarch64") && f.neon {
        "neon"
    } else {
        "soft"
    }
}

/// Which Twofish code runs on bulk data (ECB, CBC decryption, CTR, XTS) for
/// features `f`, on a CPU whose gathers are fast or not
/// ([`cpu::fast_gather`]) and that has GFNI and VBMI or not
/// ([`cpu::gfni_vbmi`]): `"avx512-gfni"` (32 blocks, S-boxes by byte
/// permutes in registers and the MDS product by GFNI; constant time),
/// `"avx2-gather"` (16 blocks, each round's table lookups as AVX2 gathers)
/// or `"table"` (four blocks interleaved, the lookups as loads). CBC
/// encryption and single blocks always take the table rounds.
pub fn twofish_for(f: CpuFeatures, fast_gather: bool, gfni_vbmi: bool) -> &'static str {
    if !cfg!(target_arch = "x86_64") {
        "table"
    } else if f.avx512 && gfni_vbmi {
        "avx512-gfni"
    } else if f.avx2 && fast_gather {
        "avx2-gather"
    } else {
        "table"
    }
}

/// The Twofish implementation that runs here.
pub fn twofish() -> &'static str {
    twofish_for(cpu::features(), cpu::fast_gather(), cpu::gfni_vbmi())
}

/// Which RC4 key-stream loop runs: `"x86-64-asm"` (the `asm!` kernel of
/// [`crate::ciphers::rc4`]; baseline x86-64 instructions, so every tier) or
/// `"soft"` (the portable Rust loop, on other architectures).
pub fn rc4() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "x86-64-asm"
    } else {
        "soft"
    }
}

/// Which Camellia implementation runs for features `f`: `"vaes-avx2"` (32
/// blocks byte-sliced in ymm registers, S-boxes with VAES; x86-64),
/// `"aesni-avx2"` (the same without VAES, S-boxes with AES-NI on each
/// 128-bit half; x86-64) or `"table"`. (`"aesni-avx"`, 16 blocks in xmm
/// registers, is what the 32-block kernels run on tails; `CpuFeatures`
/// folds AVX into `avx2`, so no tier chooses it for bulk.)
pub fn camellia_for(f: CpuFeatures) -> &'static str {
    match (cfg!(target_arch = "x86_64") && f.aes && f.avx2, f.vaes) {
        (true, true) => "vaes-avx2",
        (true, false) => "aesni-avx2",
        (false, _) => "table",
    }
}

/// The Camellia implementation that runs here.
pub fn camellia() -> &'static str {
    camellia_for(cpu::features())
}

/// Which code runs DES and Triple-DES on bulk data (ECB, CBC decryption,
/// CTR; single blocks always take the table rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesImpl {
    /// Bitsliced, 256 blocks in AVX2 registers (x86-64).
    Avx2,
    /// Bitsliced, 128 blocks in SSE2 registers (the x86-64 baseline).
    Sse2,
    /// Bitsliced, 128 blocks in NEON registers (aarch64).
    Neon,
    /// Table rounds only.
    Table,
}

impl DesImpl {
    /// The implementation's name in benchmark results.
    pub fn name(self) -> &'static str {
        match self {
            DesImpl::Avx2 => "bitslice-avx2",
            DesImpl::Sse2 => "bitslice-sse2",
            DesImpl::Neon => "bitslice-neon",
            DesImpl::Table => "table",
        }
    }

    /// Blocks per batch of the bitsliced code (0 for the table rounds).
    pub fn blocks(self) -> usize {
        match self {
            DesImpl::Avx2 => 256,
            DesImpl::Sse2 | DesImpl::Neon => 128,
            DesImpl::Table => 0,
        }
    }
}

/// The DES implementation for features `f`.
pub fn des_for(f: CpuFeatures) -> DesImpl {
    if cfg!(target_arch = "x86_64") {
        if f.avx2 { DesImpl::Avx2 } else { DesImpl::Sse2 }
    } else if cfg!(target_arch = "aarch64") && f.neon {
        DesImpl::Neon
    } else {
        DesImpl::Table
    }
}

/// The DES implementation that runs here.
pub fn des() -> DesImpl {
    des_for(cpu::features())
}

/// Whether POLYVAL (HCTR2) runs the `polyval` crate's carry-less multiply
/// code. The crate picks it from the hardware, so where the mask forbids
/// carry-less multiply the portable field arithmetic runs instead.
pub fn polyval_clmul() -> bool {
    cpu::features().pmull && cpu::detected().pmull
}

/// Which SIMD code the modes' helpers (XTS tweaks, CTR counters, XOR) use.
pub fn mode_simd() -> crate::backends::Simd {
    use crate::backends::Simd;
    let f = cpu::features();
    if cfg!(target_arch = "x86_64") {
        if f.avx512 && f.vpclmul {
            return Simd::Avx512;
        }
        if f.avx2 {
            return Simd::Avx2;
        }
    }
    Simd::Portable
}

/// Which GHASH of ours AES-GCM runs with our AES kernels, for features `f`;
/// `None`: AWS-LC's AES-GCM. Ours where it measured faster: aarch64 with AES
/// and PMULL (fewer instructions per byte than AWS-LC and libgcrypt),
/// x86-64 with VAES and VPCLMULQDQ but no AVX-512 (AWS-LC runs its AES-NI
/// code there, about half our speed), and x86-64 with AES-NI, PCLMULQDQ and
/// AVX2 but no VAES (the `aesni-avx2` tier): AES-NI and PCLMULQDQ stitched
/// into one loop (`gcm::x86_aesni_stitched`). On the 2-core Zen 3 VM, 1 MiB
/// in 64 KiB requests, the fastest 1 MiB pass of ~3 s each (the machine was
/// shared), seal/open MiB/s: AES-128 ours 4444/4448, AWS-LC 4096/4102,
/// libgcrypt 1.10 (the same method) 4097/4099; AES-256 ours 3840/3865,
/// AWS-LC 3806/3820, libgcrypt 3507/3491 (`examples/gcm_versus_aws_lc.rs`;
/// unstitched, 8 KiB of CTR then GHASH, ours was 0.9x libgcrypt). With
/// AVX-512, AWS-LC's VAES-512 code runs; with AES-NI but no AVX2, AWS-LC
/// (not measured). Without AES-NI but with SSSE3 (the `portable` tier): our
/// bitsliced AES and the PSHUFB GHASH (`gcm::x86_pshufb`, constant time,
/// where OpenSSL's 4-bit tables are not): instructions per byte under QEMU
/// (`arm_count.py --arch x86_64 --tier portable`), seal/open, AES-128 ours
/// 32.86/32.83, OpenSSL 40.74, libgcrypt 52.85, AWS-LC (which ran there
/// before) 49.77; AES-256 40.52/40.48, 47.99, 63.61, 60.02. Wall clock on
/// the loaded 2-core Zen 3 VM, AES-128: ours 145-166 MiB/s, OpenSSL 107-122.
pub fn aes_gcm_for(f: CpuFeatures) -> Option<crate::gcm::GhashImpl> {
    if aes_for(f) == AesImpl::ArmCe && f.pmull {
        #[cfg(target_arch = "aarch64")]
        return Some(crate::gcm::GhashImpl::Pmull);
    }
    if aes_for(f) == AesImpl::Vaes256 && f.pmull && f.vpclmul && f.avx2 {
        #[cfg(target_arch = "x86_64")]
        return Some(crate::gcm::GhashImpl::Vpclmul256);
    }
    if aes_for(f) == AesImpl::AesNi && f.pmull && f.avx2 {
        #[cfg(target_arch = "x86_64")]
        return Some(crate::gcm::GhashImpl::Pclmul128);
    }
    if aes_for(f) == AesImpl::Ssse3 {
        #[cfg(target_arch = "x86_64")]
        return Some(crate::gcm::GhashImpl::Pshufb);
    }
    None
}

/// The AES-GCM that runs here (see [`aes_gcm_for`]).
pub fn aes_gcm() -> Option<crate::gcm::GhashImpl> {
    aes_gcm_for(cpu::features())
}

/// The shortest request AWS-LC's VAES-512 AES-GCM runs where
/// [`aes_gcm_short_for`] names ours for the shorter ones: its fixed cost per
/// request is higher than ours, its cost per byte lower. On the 2-core
/// Zen 4 VM (`examples/gcm_versus_aws_lc.rs --request N`, fastest pass of
/// 7 alternating rounds, seal/open MiB/s, ours on VAES-512 with VPCLMULQDQ
/// on 256-bit registers against AWS-LC), AES-256: 512 B 3627/3427 against
/// 2958/3061, 1 KiB 5033/4804 against 4475/4428, 2 KiB 6249/6079 against
/// 6292/6323, 3 KiB 6795/6638 against 7254/7254, 64 KiB 7612/8068 against
/// 10267/10260; AES-128 alike (1 KiB 5592/5352 against 4879/4749, 2 KiB
/// 7045/6871 against 7024/6970).
pub const AWS_LC_GCM_FROM: usize = 2048;

/// Our GHASH for the AES-GCM requests under [`AWS_LC_GCM_FROM`] bytes where
/// [`aes_gcm_for`] leaves AES-GCM to AWS-LC's VAES-512 code (the
/// `avx512` tier); `None` elsewhere (one implementation runs every length).
pub fn aes_gcm_short_for(f: CpuFeatures) -> Option<crate::gcm::GhashImpl> {
    if aes_gcm_for(f).is_none() && aes_for(f) == AesImpl::Vaes512 && f.pmull && f.vpclmul && f.avx2
    {
        #[cfg(target_arch = "x86_64")]
        return Some(crate::gcm::GhashImpl::Vpclmul256);
    }
    None
}

/// [`aes_gcm_short_for`] here.
pub fn aes_gcm_short() -> Option<crate::gcm::GhashImpl> {
    aes_gcm_short_for(cpu::features())
}

/// Which ChaCha20-Poly1305 implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaChaPolyImpl {
    /// AWS-LC's.
    AwsLc,
    /// Ours ([`crate::aead::chacha20_poly1305`]) on this ChaCha kernel.
    Ours(ChaChaImpl),
    /// Ours with ChaCha20 on AVX2 and Poly1305 stitched into one pass
    /// ([`crate::aead::ChaCha20Poly1305::new_stitched`]).
    Avx2Stitched,
    /// Ours with ChaCha20 on SSSE3 and Poly1305 stitched into one pass.
    Ssse3Stitched,
    /// Ours with ChaCha20 on AVX-512 and Poly1305 on AVX-512 IFMA, eight
    /// blocks a vector ([`crate::aead::ChaCha20Poly1305::new_ifma`]).
    Avx512Ifma,
}

impl ChaChaPolyImpl {
    /// The stitched code on ChaCha kernel `imp`: [`ChaChaPolyImpl::Avx2Stitched`]
    /// for AVX2, [`ChaChaPolyImpl::Ssse3Stitched`] for any other (the only
    /// other stitched kernel).
    pub fn stitched(imp: ChaChaImpl) -> Self {
        if imp == ChaChaImpl::Avx2 {
            ChaChaPolyImpl::Avx2Stitched
        } else {
            ChaChaPolyImpl::Ssse3Stitched
        }
    }

    /// The name rows report: ours as `<chacha kernel>+poly1305`, the
    /// stitched code as `avx2+poly1305-stitched` or `ssse3+poly1305-stitched`.
    pub fn name(self) -> &'static str {
        match self {
            ChaChaPolyImpl::AwsLc => aws_lc_aead_name(false),
            ChaChaPolyImpl::Avx2Stitched => "avx2+poly1305-stitched",
            ChaChaPolyImpl::Ssse3Stitched => "ssse3+poly1305-stitched",
            ChaChaPolyImpl::Avx512Ifma => "avx512+poly1305-ifma",
            ChaChaPolyImpl::Ours(c) => match c {
                ChaChaImpl::Avx512 => "avx512+poly1305",
                ChaChaImpl::Avx2 => "avx2+poly1305",
                ChaChaImpl::Avx2Scalar => "avx2+scalar+poly1305",
                ChaChaImpl::Ssse3 => "ssse3+poly1305",
                ChaChaImpl::Ssse3Scalar => "ssse3+scalar+poly1305",
                ChaChaImpl::Sse2 => "sse2+poly1305",
                ChaChaImpl::Neon => "neon+poly1305",
                ChaChaImpl::Soft => "soft+poly1305",
            },
        }
    }
}

/// The ChaCha20-Poly1305 implementation for features `f`: ours where it was
/// measured faster than AWS-LC.
///
/// * aarch64 with NEON: ours. Instructions per byte under QEMU, seal/open
///   (`scripts/arm_count.py --rows chacha20-poly1305:256`, tiers neon and
///   ce alike): ours 6.59/6.58, AWS-LC 6.94/6.95, libgcrypt 6.72/6.71.
/// * aarch64 without NEON: AWS-LC (not measured).
/// * x86-64 with AVX2 and BMI2 (no AVX-512): ours, ChaCha20 and Poly1305
///   stitched into one pass (`crate::chacha::x86_avx2_poly1305`). On the
///   2-core Zen 3 VM, 64 KiB requests, seal/open MiB/s, the best of 3000
///   timed requests each (the machine was shared, so longer rounds were
///   noise): stitched 2823/2856, AWS-LC 2338/2335, ours unstitched
///   1583/1581, libgcrypt 1.10 (the same method, in C) 3121/3164; our
///   ChaCha20 alone 3005. `examples/chacha_poly_versus_aws_lc.rs` (best of 7
///   alternating rounds) agreed in direction at both AVX2 tiers: stitched
///   1173/2578 and 1343/2130 against AWS-LC 1007/1161 and 1172/1736.
/// * x86-64 with AVX-512 and IFMA: ours, ChaCha20 on AVX-512 (two 16-block
///   batches interleaved) and then Poly1305 over each 16 KiB on IFMA, 16
///   blocks a step (`crate::wide::poly1305_ifma`). On the 2-core Zen 4 VM,
///   1 MiB in 64 KiB requests, best of 7 alternating runs, seal/open MiB/s:
///   ours 3747/3787, AWS-LC (its AVX2 code) 2483/2536; in the same
///   comparison OpenSSL 3.0 (AVX-512 ChaCha20, then Poly1305) 3516/3509,
///   libgcrypt 1.10 3234/3268. Data under 4 KiB (sealing) or 8 KiB
///   (opening) takes the stitched AVX2 pass instead (its fixed costs are
///   lower; see `IFMA_SEAL_FROM` in [`crate::aead::chacha20_poly1305`]).
///   With AVX-512 but no IFMA (Skylake-X to Cascade Lake): AWS-LC (not
///   measured; no such machine).
/// * x86-64 below AVX2 with SSSE3: ours, ChaCha20 on SSSE3 and Poly1305
///   (`mulx` where the CPU has BMI2, else plain `mul`) stitched into one
///   pass (`crate::chacha::x86_ssse3_poly1305`). Instructions per byte
///   under QEMU (`-cpu max`, so `mulx`) at the portable tier, seal/open:
///   stitched 8.10/8.07 (with `mul` 8.61/8.59), AWS-LC 10.29/10.27,
///   OpenSSL 9.42, libgcrypt 9.20. On the same VM with the mask and
///   AWS-LC's `OPENSSL_ia32cap`, the fastest of 3000 alternating 64 KiB
///   requests, seal/open MiB/s (the load was about 5 on 2 cores, so the
///   minimum is the stable figure): stitched 1600/1610 (the same with
///   `mul` forced), AWS-LC 1300/1306, ours unstitched 1095/1084.
///   `examples/chacha_poly_versus_aws_lc.rs` (best of 9 rounds, throughput)
///   was dominated by the load: stitched 574-740 sealing, AWS-LC 589-616.
/// * x86-64 without SSSE3: AWS-LC. (Before the stitched code, AVX2: AWS-LC
///   2125/2268, ours 1513/1789.)
pub fn chacha20_poly1305_for(f: CpuFeatures) -> ChaChaPolyImpl {
    match chacha_for(f) {
        ChaChaImpl::Neon if cfg!(target_arch = "aarch64") => ChaChaPolyImpl::Ours(ChaChaImpl::Neon),
        ChaChaImpl::Avx512 if crate::aead::chacha20_poly1305::ifma_runnable() => {
            ChaChaPolyImpl::Avx512Ifma
        }
        // The stitched pass's integer units run Poly1305, so no ninth block.
        ChaChaImpl::Avx2 | ChaChaImpl::Avx2Scalar
            if crate::aead::chacha20_poly1305::stitched_runnable(ChaChaImpl::Avx2) =>
        {
            ChaChaPolyImpl::Avx2Stitched
        }
        ChaChaImpl::Ssse3 | ChaChaImpl::Ssse3Scalar
            if crate::aead::chacha20_poly1305::stitched_runnable(ChaChaImpl::Ssse3) =>
        {
            ChaChaPolyImpl::Ssse3Stitched
        }
        _ => ChaChaPolyImpl::AwsLc,
    }
}

/// The ChaCha20-Poly1305 implementation that runs here.
pub fn chacha20_poly1305() -> ChaChaPolyImpl {
    chacha20_poly1305_for(cpu::features())
}

/// Our AES-GCM's name: AES backend and GHASH backend.
pub fn gcm_name(g: crate::gcm::GhashImpl) -> &'static str {
    match (aes().name(), g.name()) {
        ("armv8-ce", "pmull") => "armv8-ce+pmull",
        ("vaes256", "vpclmul256") => "vaes256+vpclmul256",
        ("vaes512", "vpclmul256") => "vaes512+vpclmul256",
        ("aesni", "pclmul128") => "aesni+pclmul128",
        ("ssse3", "pshufb") => "ssse3+pshufb",
        _ => "ours",
    }
}

/// The AEAD implementation that runs, as rows report it: AES-GCM
/// [`aes_gcm`]'s (ours or AWS-LC's), ChaCha20-Poly1305
/// [`chacha20_poly1305`]'s.
pub fn aead_name(aes_gcm: bool) -> &'static str {
    match (aes_gcm, self::aes_gcm()) {
        (true, Some(g)) => gcm_name(g),
        (true, None) => aws_lc_aead_name(true),
        (false, _) => chacha20_poly1305().name(),
    }
}

/// The AEAD implementation AWS-LC runs, as rows report it. AWS-LC follows the
/// mask when the program told it ([`cpu::libraries_configured`]); otherwise it
/// runs what the hardware has, and the name says so.
pub fn aws_lc_aead_name(aes_gcm: bool) -> &'static str {
    let f = if cpu::libraries_configured() {
        cpu::features()
    } else {
        cpu::detected()
    };
    let x86 = cfg!(any(target_arch = "x86_64", target_arch = "x86"));
    match aes_gcm {
        // AWS-LC's VAES GCM needs AVX-512; with VAES on 256-bit registers only it
        // runs its AES-NI code (aesni-gcm-x86_64).
        true if x86 && f.vaes && f.vpclmul && f.avx512 => "aws-lc:vaes512",
        true if f.aes && f.pmull => {
            if x86 {
                "aws-lc:aesni"
            } else {
                "aws-lc:armv8-ce"
            }
        }
        true if f.neon => "aws-lc:neon",
        // Without AES-NI and PCLMULQDQ, AWS-LC's vector-permute AES (vpaes)
        // and its SSSE3 GHASH.
        true if x86 && ssse3() => "aws-lc:ssse3",
        true => "aws-lc:soft",
        false if x86 && f.avx2 => "aws-lc:avx2",
        false if x86 => "aws-lc:ssse3",
        false if f.neon => "aws-lc:neon",
        false => "aws-lc:soft",
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;

    /// XTS at each x86 tier: VAES-256 where 512-bit AES has one port, its
    /// tweaks on the integer pipes unless integer work takes AES's ports, and
    /// then in the AVX-512 registers where the tier has them.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_x86_tier_has_its_xts() {
        use crate::cpu::{Tier, parse_mask};
        let full = CpuFeatures {
            neon: false,
            ..CpuFeatures::ALL
        };
        let at = |t: Tier| full.without(parse_mask(t.mask()).unwrap());
        assert_eq!(aes_xts_for(at(Tier::Avx512), false), AesImpl::Vaes512);
        assert_eq!(aes_xts_for(at(Tier::Avx512), true), AesImpl::Vaes256);
        assert_eq!(aes_xts_for(at(Tier::VaesAvx2), true), AesImpl::Vaes256);
        assert_eq!(aes_xts_for(at(Tier::AesniAvx2), true), AesImpl::AesNi);
        assert_eq!(aes_xts_tweaks_for(at(Tier::Avx512), true), XtsTweaks::Evex);
        assert_eq!(
            aes_xts_tweaks_for(at(Tier::VaesAvx2), true),
            XtsTweaks::Vector
        );
        assert_eq!(
            aes_xts_tweaks_for(at(Tier::Avx512), false),
            XtsTweaks::Integer
        );
        assert_eq!(
            aes_xts_tweaks_for(at(Tier::VaesAvx2), false),
            XtsTweaks::Integer
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_x86_tier_has_its_aes_gcm() {
        use crate::cpu::{Tier, parse_mask};
        use crate::gcm::GhashImpl;
        let full = CpuFeatures {
            neon: false,
            ..CpuFeatures::ALL
        };
        let at = |t: Tier| full.without(parse_mask(t.mask()).unwrap());
        // AWS-LC's VAES-512 code with AVX-512, ours on VAES-256 and on AES-NI
        // with PCLMULQDQ, AWS-LC below.
        assert_eq!(aes_gcm_for(at(Tier::Avx512)), None);
        assert_eq!(aes_gcm_for(at(Tier::VaesAvx2)), Some(GhashImpl::Vpclmul256));
        assert_eq!(aes_gcm_for(at(Tier::AesniAvx2)), Some(GhashImpl::Pclmul128));
        assert_eq!(aes_gcm_for(at(Tier::Portable)), Some(GhashImpl::Pshufb));
        // Under AWS-LC's VAES-512 code, short requests run ours; where ours
        // runs every length, nothing is split.
        assert_eq!(
            aes_gcm_short_for(at(Tier::Avx512)),
            Some(GhashImpl::Vpclmul256)
        );
        for t in [Tier::VaesAvx2, Tier::AesniAvx2, Tier::Portable] {
            assert_eq!(aes_gcm_short_for(at(t)), None, "{t:?}");
        }
        assert_eq!(
            aes_gcm_for(at(Tier::AesniAvx2).without(parse_mask("pclmulqdq").unwrap())),
            None
        );
        assert_eq!(
            aes_gcm_for(at(Tier::AesniAvx2).without(parse_mask("avx2").unwrap())),
            None
        );
        // VAES without VPCLMULQDQ runs the AES-NI backend, so its GCM.
        assert_eq!(
            aes_gcm_for(at(Tier::VaesAvx2).without(parse_mask("vpclmulqdq").unwrap())),
            Some(GhashImpl::Pclmul128)
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_x86_tier_has_its_aes_and_chacha() {
        use crate::cpu::{Tier, parse_mask};
        let full = CpuFeatures {
            neon: false,
            ..CpuFeatures::ALL
        };
        let at = |t: Tier| full.without(parse_mask(t.mask()).unwrap());
        assert_eq!(aes_for(at(Tier::Avx512)), AesImpl::Vaes512);
        assert_eq!(aes_for(at(Tier::VaesAvx2)), AesImpl::Vaes256);
        assert_eq!(aes_for(at(Tier::AesniAvx2)), AesImpl::AesNi);
        // VAES-256's XTS needs VPCLMULQDQ: masked alone, AES-NI runs.
        assert_eq!(
            aes_for(at(Tier::VaesAvx2).without(parse_mask("vpclmulqdq").unwrap())),
            AesImpl::AesNi
        );
        let no_aes = if ssse3() {
            AesImpl::Ssse3
        } else {
            AesImpl::Soft
        };
        assert_eq!(aes_for(at(Tier::Portable)), no_aes);
        let avx2 = if cpu::scalar_beside_vector() {
            ChaChaImpl::Avx2Scalar
        } else {
            ChaChaImpl::Avx2
        };
        assert_eq!(chacha_for(at(Tier::AesniAvx2)), avx2);
        assert_eq!(chacha_for(at(Tier::VaesAvx2)), avx2);
        assert_eq!(camellia_for(at(Tier::VaesAvx2)), "vaes-avx2");
        assert_eq!(camellia_for(at(Tier::AesniAvx2)), "aesni-avx2");
        assert_eq!(camellia_for(at(Tier::Portable)), "table");
        assert_eq!(
            camellia_for(full.without(parse_mask("vaes").unwrap())),
            "aesni-avx2"
        );
        let no_avx = if ssse3() {
            ChaChaImpl::Ssse3
        } else {
            ChaChaImpl::Sse2
        };
        let apart = cpu::scalar_beside_vector();
        assert_eq!(
            chacha_for(at(Tier::Portable)),
            if apart && no_avx == ChaChaImpl::Ssse3 {
                ChaChaImpl::Ssse3Scalar
            } else {
                no_avx
            }
        );
        // Our stitched code at the AVX2 tiers (where the CPU has BMI2 too),
        // ours on AVX-512 IFMA where the CPU has it (else AWS-LC's), and
        // below AVX2.
        let stitched_or_aws_lc = |imp| {
            if crate::aead::chacha20_poly1305::stitched_runnable(imp) {
                ChaChaPolyImpl::stitched(imp)
            } else {
                ChaChaPolyImpl::AwsLc
            }
        };
        let avx2 = stitched_or_aws_lc(ChaChaImpl::Avx2);
        assert_eq!(chacha20_poly1305_for(at(Tier::VaesAvx2)), avx2);
        assert_eq!(chacha20_poly1305_for(at(Tier::AesniAvx2)), avx2);
        assert_eq!(
            chacha20_poly1305_for(at(Tier::Avx512)),
            if crate::aead::chacha20_poly1305::ifma_runnable() {
                ChaChaPolyImpl::Avx512Ifma
            } else {
                ChaChaPolyImpl::AwsLc
            }
        );
        // Below AVX2, our SSSE3 stitched code; on a CPU without SSSE3, AWS-LC.
        assert_eq!(
            chacha20_poly1305_for(at(Tier::Portable)),
            stitched_or_aws_lc(no_avx)
        );
        assert_eq!(
            aes_for(full.without(parse_mask("avx2").unwrap())),
            AesImpl::AesNi
        );
    }

    #[cfg(target_arch = "aarch64")]
    #[test]
    fn every_arm_tier_has_its_aes() {
        use crate::cpu::{Tier, parse_mask};
        let full = CpuFeatures {
            vaes: false,
            vpclmul: false,
            avx2: false,
            avx512: false,
            ..CpuFeatures::ALL
        };
        let at = |t: Tier| full.without(parse_mask(t.mask()).unwrap());
        assert_eq!(aes_for(at(Tier::ArmCe)), AesImpl::ArmCe);
        assert_eq!(aes_for(at(Tier::ArmNeon)), AesImpl::Neon);
        assert_eq!(aes_for(at(Tier::ArmPortable)), AesImpl::Soft);
        assert_eq!(
            aes_gcm_for(at(Tier::ArmCe)),
            Some(crate::gcm::GhashImpl::Pmull)
        );
        assert_eq!(aes_gcm_for(at(Tier::ArmNeon)), None);
    }

    /// DES bitslices on the widest SIMD registers a tier has; only ARM
    /// without NEON keeps the table rounds.
    #[test]
    fn every_tier_has_its_des() {
        use crate::cpu::{Tier, parse_mask};
        let tiers: &[(Tier, DesImpl)] = if cfg!(target_arch = "x86_64") {
            &[
                (Tier::Avx512, DesImpl::Avx2),
                (Tier::AesniAvx2, DesImpl::Avx2),
                (Tier::Portable, DesImpl::Sse2),
            ]
        } else {
            &[
                (Tier::ArmCe, DesImpl::Neon),
                (Tier::ArmNeon, DesImpl::Neon),
                (Tier::ArmPortable, DesImpl::Table),
            ]
        };
        for &(t, want) in tiers {
            let f = t.requires().without(parse_mask(t.mask()).unwrap());
            assert_eq!(des_for(f), want, "{t:?}");
        }
    }
}
