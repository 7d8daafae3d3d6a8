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
         implementations: aes={} chacha20={} serpent={} twofish={} camellia={} aes-gcm={} chacha20-poly1305={}\n\
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
        dispatch::twofish(),
        dispatch::camellia(),
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
///
/// When that fails the program goes on with a warning: AWS-LC then keeps what
/// it detected, and the rows its code runs say so (`dispatch::aead_name`).
/// This happens under QEMU's user mode without binfmt_misc: QEMU answers
/// `/proc/self/exe` with the guest binary, which the host kernel cannot exec
/// (ENOEXEC).
pub fn tell_libraries_the_mask() {
    let Some((name, value)) = cpu::library_env_missing() else {
        return;
    };
    #[cfg(unix)]
    {
        let err = reexec_with(name, &value);
        // Still here: AWS-LC did not get the mask, and the rows must say so.
        // SAFETY: called at the start of `main`, before any other thread exists.
        unsafe { std::env::remove_var(name) };
        eprintln!(
            "clustercrypt: warning: cannot run again with {name}={value} ({err}); \
             AWS-LC keeps the CPU features it detected: set {name}={value} before \
             starting clustercrypt"
        );
    }
    #[cfg(not(unix))]
    {
        // Without exec the libraries keep what they detected; rows say so.
        let _ = (name, value);
    }
}

/// Replaces this process by itself with `name=value` added to the environment;
/// returns only the error. `execv`, not `Command::exec`: the latter's `execvp`
/// runs a file the kernel refuses with ENOEXEC through `/bin/sh`, which under
/// QEMU user mode (the guest binary, no binfmt_misc) feeds the ELF to the shell.
#[cfg(unix)]
fn reexec_with(name: &str, value: &str) -> std::io::Error {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return e,
    };
    let to_c = |s: &std::ffi::OsStr| CString::new(s.as_bytes()).ok();
    let (Some(path), Some(args)) = (
        to_c(exe.as_os_str()),
        std::env::args_os()
            .map(|a| to_c(&a))
            .collect::<Option<Vec<_>>>(),
    ) else {
        return std::io::Error::other("a NUL byte in the program path or its arguments");
    };
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: called at the start of `main`, before any other thread exists
    // (the environment is not read concurrently).
    unsafe { std::env::set_var(name, value) };
    // SAFETY: `path` and every `argv` entry are NUL-terminated strings that
    // outlive the call, and `argv` ends with a null pointer.
    unsafe { libc::execv(path.as_ptr(), argv.as_ptr()) };
    std::io::Error::last_os_error()
}
