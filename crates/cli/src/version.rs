//! `--version`: the tool's version, what was compiled in, and which CPU
//! features were found at run time (they decide which implementations run).

use clustercrypt_catalogue::cpu;

/// `clustercrypt 0.1.0` plus the features line.
pub fn long_version() -> String {
    let found = cpu::features().names().join(" ");
    let mut compiled = vec![std::env::consts::ARCH];
    if cfg!(chacha20_avx512) {
        compiled.push("chacha20-avx512");
    }
    format!(
        "{}\ncpu features: {}\ncompiled for: {}\n",
        env!("CARGO_PKG_VERSION"),
        if found.is_empty() { "none" } else { &found },
        compiled.join(" ")
    )
}

/// The short version line, naming the detected CPU features.
pub fn short_version() -> String {
    let found = cpu::features().names().join(" ");
    format!(
        "{} (cpu: {})",
        env!("CARGO_PKG_VERSION"),
        if found.is_empty() { "none" } else { &found }
    )
}
