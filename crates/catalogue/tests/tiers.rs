//! Every CPU tier this machine can run, forced through `CLUSTERCRYPT_DISABLE_HWF`:
//! the official vectors of every cipher (the tests of `kat.rs`, included here)
//! pass at each tier, and each row runs an implementation the tier allows.
//!
//! The mask is read once per process, so each tier runs in a child process:
//! this test binary again, with the tier's mask, AWS-LC's mask
//! (`OPENSSL_ia32cap` / `OPENSSL_armcap`) and a marker variable. Tiers this CPU
//! lacks are skipped with a note on stderr (not captured by the test harness).

#[path = "kat.rs"]
#[allow(dead_code)]
mod kat;

#[path = "wide.rs"]
#[allow(dead_code)]
mod wide;

use std::io::Write;
use std::process::Command;

use clustercrypt_catalogue::cpu::{self, Tier};
use clustercrypt_catalogue::{build, catalogue};

/// Set in the child processes: the tier they run at.
const CHILD: &str = "CLUSTERCRYPT_TIER_CHILD";

/// The command that runs this test binary again: directly, or under QEMU
/// through Cargo's target runner when the tests run cross-built (an aarch64 or
/// armv7 binary cannot exec itself on an x86 host without binfmt_misc).
fn relaunch() -> Command {
    let exe = std::env::current_exe().expect("test binary path");
    let arch = match std::env::consts::ARCH {
        "aarch64" => Some("AARCH64"),
        "arm" => Some("ARMV7"),
        _ => None,
    };
    let runner = arch.and_then(|a| {
        std::env::vars().find_map(|(k, v)| {
            (k.starts_with(&format!("CARGO_TARGET_{a}")) && k.ends_with("_RUNNER")).then_some(v)
        })
    });
    let mut words = runner.as_deref().unwrap_or("").split_whitespace();
    match words.next() {
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words).arg(exe);
            cmd
        }
        None => Command::new(exe),
    }
}

fn note(msg: &str) {
    // Straight to stderr: the harness captures `eprintln!` of passing tests.
    let _ = writeln!(std::io::stderr(), "{msg}");
}

#[test]
fn every_tier_passes_the_official_vectors() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let mut ran = 0;
    for &tier in Tier::all_for_arch() {
        if !tier.runnable() {
            note(&format!(
                "note: tier {tier} skipped: this CPU lacks {}",
                tier.missing()
            ));
            continue;
        }
        let mask = cpu::parse_mask(tier.mask()).expect("tier masks parse");
        let mut cmd = relaunch();
        cmd.args(["--test-threads", "2", "--quiet"])
            .env(cpu::MASK_ENV, tier.mask())
            .env(CHILD, tier.name());
        if let Some((name, value)) = cpu::library_mask_env(mask) {
            cmd.env(name, value);
        }
        let out = cmd.output().expect("run the test binary again");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "tier {tier} failed:\n{text}");
        // The child must really have run the vectors and the tier check.
        assert!(text.contains("test result: ok"), "tier {tier}:\n{text}");
        note(&format!(
            "tier {tier}: official vectors and implementations ok"
        ));
        ran += 1;
    }
    assert!(ran >= 1, "at least the portable tier runs everywhere");
}

/// In a child: the features in use are the tier's, and every row of the
/// catalogue runs an implementation the tier allows.
#[test]
fn child_rows_use_the_tier() {
    let Some(name) = std::env::var_os(CHILD) else {
        return;
    };
    let tier = Tier::from_name(name.to_str().unwrap()).expect("a tier of this architecture");
    assert_eq!(
        Tier::current(),
        tier,
        "features in use: {}",
        cpu::features()
    );
    assert!(cpu::libraries_configured(), "AWS-LC was told the mask");
    // Names of implementations that need what the tier hides.
    let forbidden: &[&str] = match tier {
        Tier::Avx512 | Tier::ArmCe => &["unmasked"],
        Tier::VaesAvx2 => &["unmasked", "512"],
        Tier::AesniAvx2 => &["unmasked", "512", "vaes"],
        Tier::Portable => &["unmasked", "512", "vaes", "aesni", "avx", "clmul"],
        Tier::ArmNeon => &["unmasked", "ce"],
        Tier::ArmPortable => &["unmasked", "ce", "neon"],
    };
    for spec in catalogue() {
        let key = vec![7u8; spec.key_len()];
        let op = build(&spec, &key).expect("every row builds");
        // Without AES-NI the AES-CBC rows encrypt with AWS-LC's vector-permute
        // AES, told the mask: the official vectors above ran through it.
        if tier == Tier::Portable
            && cfg!(target_arch = "x86_64")
            && spec.label().starts_with("aes-cbc")
        {
            assert_eq!(
                op.backend(),
                "ssse3+aws-lc:vpaes-cbc-enc",
                "{}",
                spec.label()
            );
        }
        // Composed rows (Adiantum: `avx2+nh+vaes512`) are checked part by part.
        // "ce" (the ARM crypto extensions, `armv8-ce`) is matched as a whole
        // word: `bitslice-neon` does not use them.
        let runs = |part: &str, bad: &str| {
            if bad == "ce" {
                part.split(['-', ':']).any(|word| word == bad)
            } else {
                part.contains(bad)
            }
        };
        for part in op.backend().split('+') {
            for bad in forbidden {
                assert!(
                    !runs(part, bad),
                    "tier {tier}: {} runs {}",
                    spec.label(),
                    op.backend()
                );
            }
        }
    }
}
