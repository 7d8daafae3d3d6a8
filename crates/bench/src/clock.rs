//! Time sources. The benchmark reads time only through [`Clock`] so that its
//! byte and time accounting can be tested with a fake clock.

use std::time::{Duration, Instant};

/// A monotonic clock.
pub trait Clock: Sync {
    /// Time elapsed since an arbitrary fixed origin.
    fn now(&self) -> Duration;
}

/// The real monotonic clock (`CLOCK_MONOTONIC`, as cryptsetup uses).
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that moves forward by a fixed step every time it is read. For tests.
#[derive(Debug)]
pub struct StepClock {
    step_nanos: u64,
    ticks: std::sync::atomic::AtomicU64,
}

impl StepClock {
    /// A clock that advances `step` per reading, starting at zero.
    pub fn new(step: Duration) -> Self {
        StepClock {
            step_nanos: step.as_nanos() as u64,
            ticks: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl Clock for StepClock {
    fn now(&self) -> Duration {
        let t = self.ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Duration::from_nanos(t * self.step_nanos)
    }
}
