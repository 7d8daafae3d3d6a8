//! The report behind `GET /v1/bench`: a file given at start-up, or a short
//! benchmark of this node measured in the background.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use clustercrypt_bench::clock::MonotonicClock;
use clustercrypt_bench::kdf::Argon2Limits;
use clustercrypt_bench::machine::Machine;
use clustercrypt_bench::measure::Method;
use clustercrypt_bench::report::Report;
use clustercrypt_bench::runner::{self, Plan, Silent};
use clustercrypt_catalogue::cryptsetup_defaults;

use crate::ServiceError;
use crate::config::BenchSource;

/// Seconds per direction and row of the start-up benchmark.
const QUICK_ROW_SECONDS: f64 = 0.25;

/// Where the report stands.
#[derive(Debug, Clone)]
pub enum BenchState {
    /// Still measuring.
    Pending,
    /// The report as JSON.
    Ready(Arc<String>),
    /// The measurement failed.
    Failed(String),
}

/// The node's benchmark report, shared by the request handlers.
#[derive(Debug)]
pub struct Bench {
    state: RwLock<BenchState>,
    cancel: AtomicBool,
}

/// The start-up plan: the cryptsetup default table, one thread, no KDFs.
pub fn quick_plan() -> Plan {
    let machine = Machine::detect();
    Plan {
        ciphers: cryptsetup_defaults(),
        kdfs: Vec::new(),
        method: Method {
            min_time: Duration::from_secs_f64(QUICK_ROW_SECONDS),
            ..Method::default()
        },
        threads: 1,
        runs: 1,
        pbkdf2_time: Duration::from_millis(50),
        argon2: Argon2Limits::for_machine(machine.memory_bytes, machine.cores),
        probe: Default::default(),
    }
}

fn load(path: &Path) -> Result<String, ServiceError> {
    let bad = |m: String| ServiceError::Bench(format!("{}: {m}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let report: Report = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a clustercrypt bench report (JSON): {e}")))?;
    serde_json::to_string(&report).map_err(|e| bad(e.to_string()))
}

impl Bench {
    /// Loads the report file now (a bad file stops start-up), or starts the
    /// measurement on a thread of its own.
    pub fn start(source: &BenchSource) -> Result<Arc<Bench>, ServiceError> {
        match source {
            BenchSource::File(path) => Ok(Arc::new(Bench {
                state: RwLock::new(BenchState::Ready(Arc::new(load(path)?))),
                cancel: AtomicBool::new(false),
            })),
            BenchSource::Given(report) => {
                let text = serde_json::to_string(report)
                    .map_err(|e| ServiceError::Bench(e.to_string()))?;
                Ok(Arc::new(Bench {
                    state: RwLock::new(BenchState::Ready(Arc::new(text))),
                    cancel: AtomicBool::new(false),
                }))
            }
            BenchSource::Measure => {
                let bench = Arc::new(Bench {
                    state: RwLock::new(BenchState::Pending),
                    cancel: AtomicBool::new(false),
                });
                let b = Arc::clone(&bench);
                std::thread::Builder::new()
                    .name("clustercrypt-bench".into())
                    .spawn(move || b.measure())
                    .map_err(|e| ServiceError::Bench(format!("cannot start the benchmark: {e}")))?;
                Ok(bench)
            }
        }
    }

    fn measure(&self) {
        let clock = MonotonicClock::default();
        let result = runner::run(
            &quick_plan(),
            env!("CARGO_PKG_VERSION"),
            &clock,
            &self.cancel,
            &Silent,
        );
        let state = match result {
            Ok(r) if r.interrupted => return,
            Ok(r) => BenchState::Ready(Arc::new(
                serde_json::to_string(&r).expect("a report serialises"),
            )),
            Err(e) => BenchState::Failed(e.to_string()),
        };
        *self.state.write().expect("bench lock") = state;
    }

    /// The current state.
    pub fn state(&self) -> BenchState {
        self.state.read().expect("bench lock").clone()
    }

    /// Stops a measurement in progress (at shutdown).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}
