//! Facts about the machine a result was measured on.

use serde::{Deserialize, Serialize};

use clustercrypt_catalogue::cpu;

/// The machine: enough to tell results of different nodes apart and to explain them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Host name.
    pub hostname: String,
    /// CPU model (`model name` on x86, `Model` or `Hardware` on ARM boards).
    pub cpu_model: String,
    /// Logical CPUs this process may use.
    pub cores: usize,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// Crypto-relevant CPU features in use: found at run time minus those
    /// hidden by `CLUSTERCRYPT_DISABLE_HWF` (x86: aes, pclmulqdq, vaes,
    /// vpclmulqdq, avx2, avx512, sha_ni; ARM: aes, pmull, sha2, neon).
    pub cpu_features: Vec<String>,
    /// The features the CPU has, mask or not (empty in results older than the mask).
    #[serde(default)]
    pub cpu_features_detected: Vec<String>,
    /// The features the mask hid.
    #[serde(default)]
    pub cpu_features_disabled: Vec<String>,
    /// The tier the features in use reach (`avx512`, `vaes-avx2`, `aesni-avx2`,
    /// `portable`; ARM `ce`, `neon`, `portable`).
    #[serde(default)]
    pub cpu_tier: String,
    /// The clock cycles per byte are computed at (bench runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::platform::ClockRecord>,
    /// Whether the machine was idle before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<crate::platform::IdleRecord>,
    /// Temperature, cpufreq and throttling over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttling: Option<Throttling>,
    /// Core types (one on a homogeneous CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_types: Vec<crate::platform::CoreType>,
}

/// Time spent at one frequency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreqTime {
    /// Frequency, MHz.
    pub mhz: f64,
    /// Seconds at it during the run.
    pub seconds: f64,
}

/// Temperature, clock and throttling over a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throttling {
    /// Hottest thermal zone at the start, °C.
    #[serde(default)]
    pub temperature_start_c: Option<f64>,
    /// Hottest reading over the run (read around every row), °C.
    #[serde(default)]
    pub temperature_max_c: Option<f64>,
    /// cpufreq time_in_state differences over the run (all policies).
    #[serde(default)]
    pub time_in_state: Vec<FreqTime>,
    /// `vcgencmd get_throttled` bits at the end (Raspberry Pi).
    #[serde(default)]
    pub vcgencmd_throttled: Option<String>,
    /// Lowest clock seen over the run, MHz.
    #[serde(default)]
    pub clock_min_mhz: Option<f64>,
    /// Highest clock seen, MHz.
    #[serde(default)]
    pub clock_max_mhz: Option<f64>,
    /// Rows marked throttled.
    #[serde(default)]
    pub throttled_rows: usize,
}

fn names(f: cpu::CpuFeatures) -> Vec<String> {
    f.names().into_iter().map(String::from).collect()
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The CPU model from `/proc/cpuinfo` text.
pub fn cpu_model_from(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware", "cpu model", "Processor"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == key
                && !v.trim().is_empty()
            {
                return Some(v.trim().to_string());
            }
        }
    }
    None
}

/// Total memory in bytes from `/proc/meminfo` text.
pub fn memory_from(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Machine {
    /// Reads the facts of this machine (Linux `/proc`, with fallbacks elsewhere).
    pub fn detect() -> Machine {
        Machine {
            hostname: read("/proc/sys/kernel/hostname")
                .or_else(|| std::env::var("HOSTNAME").ok())
                .unwrap_or_else(|| "unknown".into()),
            cpu_model: read("/proc/cpuinfo")
                .and_then(|s| cpu_model_from(&s))
                .unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: read("/proc/meminfo")
                .and_then(|s| memory_from(&s))
                .unwrap_or(0),
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            arch: std::env::consts::ARCH.to_string(),
            cpu_features: names(cpu::features()),
            cpu_features_detected: names(cpu::detected()),
            cpu_features_disabled: names(cpu::detected().difference(cpu::features())),
            cpu_tier: cpu::Tier::current().name().to_string(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let x86 =
            "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n";
        assert_eq!(cpu_model_from(x86).as_deref(), Some("AMD EPYC"));
        let pi = "processor\t: 0\nBogoMIPS\t: 108.00\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(
            cpu_model_from(pi).as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(
            memory_from("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24576000 * 1024)
        );
        assert_eq!(memory_from("nothing"), None);
    }

    #[test]
    fn detects_something() {
        let m = Machine::detect();
        assert!(m.cores >= 1);
        assert!(!m.arch.is_empty());
    }
}
