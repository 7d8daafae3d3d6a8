//! A chain of dependent integer adds whose cycle count is known, for measuring
//! the core's real clock the way libgcrypt's bench-slope "auto GHz" does: on
//! every out-of-order and in-order core we target, one dependent `add` retires
//! per cycle, so adds / seconds is the clock. The loop counter is a separate
//! dependency chain that runs beside the adds.
//!
//! Inline assembly because no Rust expression keeps a chain of adds: the
//! optimiser folds `x + 1 + 1 ...` into one add.

/// Dependent adds per loop iteration.
pub const ADDS_PER_ITERATION: u64 = 64;

/// Runs `iterations` x [`ADDS_PER_ITERATION`] dependent adds and returns how
/// many ran, or `None` on architectures without the assembly loop.
pub fn dependent_adds(iterations: u64) -> Option<u64> {
    let iterations = iterations.max(1);
    #[cfg(target_arch = "x86_64")]
    {
        let mut x: u64 = 0;
        let mut n = iterations;
        // The 1 comes from a register: Intel's cores from Golden Cove on fold
        // an immediate add into the register's rename, and a chain of
        // `add x, 1` ran at about six a cycle on Emerald Rapids (17.7 "GHz").
        // SAFETY: register-only arithmetic and a local backward branch; no
        // memory, stack or flags are observed afterwards (`nomem, nostack`).
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 64",
                "add {x}, {one}",
                ".endr",
                "sub {n}, 1",
                "jnz 2b",
                x = inout(reg) x,
                n = inout(reg) n,
                one = in(reg) 1u64,
                options(nomem, nostack),
            );
        }
        debug_assert_eq!(n, 0);
        Some(x)
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut x: u64 = 0;
        let mut n = iterations;
        // SAFETY: register-only arithmetic and a local backward branch.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 64",
                "add {x}, {x}, #1",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                x = inout(reg) x,
                n = inout(reg) n,
                options(nomem, nostack),
            );
        }
        debug_assert_eq!(n, 0);
        Some(x)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = iterations;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_add() {
        if let Some(n) = dependent_adds(1000) {
            assert_eq!(n, 1000 * ADDS_PER_ITERATION);
        }
        if let Some(n) = dependent_adds(0) {
            assert_eq!(n, ADDS_PER_ITERATION);
        }
    }
}
