//! `--version`: the tool's version, what was compiled in, which CPU features
//! were found at run time, which `CLUSTERCRYPT_DISABLE_HWF` hides, and so which
//! implementations run.

use clustercrypt_catalogue::cpu::{self, Tier};
use clustercrypt_catalogue::dispatch;

/// `clustercrypt 0.1.0` plus the features and implementations.
pub fn long_version() -> String {
    let compiled = [std::env::consts::ARCH];
    let disabled = cpu::detected().difference(cpu::features());
    let asked = cpu::disabled();
    let mask = if asked == cpu::CpuFeatures::NONE {
        "none".to_string()
    } else {
        // What the mask names, in this architecture's names, and what it hid here.
        format!(
            "{} ({}={})",
            disabled,
            cpu::MASK_ENV,
            std::env::var(cpu::MASK_ENV).unwrap_or_default()
        )
    };
    let library = cpu::library_mask_env(cpu::disabled())
        .map_or_else(|| "none".to_string(), |(k, v)| format!("{k}={v}"));
    let tiers: Vec<String> = Tier::all_for_arch()
        .iter()
        .map(|t| format!("{}={}", t.name(), t.mask()))
        .collect();
    format!(
        "{}\ncpu features: {}\ncpu detected: {}\ncpu disabled: {}\ntier: {}\n\
         tiers: {}\nlibrary mask: {}\n\
         implementations: aes={} chacha20={} serpent={} aes-gcm={} chacha20-poly1305={}\n\
         compiled for: {}\n",
        env!("CARGO_PKG_VERSION"),
        cpu::features(),
        cpu::detected(),
        mask,
        Tier::current(),
        tiers.join(" "),
        library,
        dispatch::aes().name(),
        dispatch::chacha().name(),
        dispatch::serpent(),
        dispatch::aead_name(true),
        dispatch::aead_name(false),
        compiled.join(" ")
    )
}

/// The short version line, naming the CPU features in use.
pub fn short_version() -> String {
    format!("{} (cpu: {})", env!("CARGO_PKG_VERSION"), cpu::features())
}

/// AWS-LC reads its CPU mask (`OPENSSL_ia32cap`, `OPENSSL_armcap`) in a static
/// constructor, before `main`: when `CLUSTERCRYPT_DISABLE_HWF` hides features
/// and that variable does not say so yet, run this program again with it set.
/// Returns an exit code only when that fails.
pub fn tell_libraries_the_mask() -> Option<std::process::ExitCode> {
    let (name, value) = cpu::library_env_missing()?;
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_default();
        let err = std::env::current_exe()
            .map(|exe| {
                std::process::Command::new(exe)
                    .arg0(arg0)
                    .args(args)
                    .env(name, &value)
                    .exec()
            })
            .unwrap_or_else(|e| e);
        eprintln!("clustercrypt: error: cannot run again with {name}={value}: {err}");
        Some(std::process::ExitCode::FAILURE)
    }
    #[cfg(not(unix))]
    {
        // Without exec the libraries keep what they detected; rows say so.
        let _ = (name, value);
        None
    }
}
