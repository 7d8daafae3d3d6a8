//! `encrypt --cluster` and `decrypt --cluster`: the same engine, with chunks
//! spread over the ranks of an MPI job. Rank 0 reads, writes and coordinates;
//! the other ranks receive what to do (the transform, key included: run MPI on a
//! network you trust) and serve chunks on all their threads. The output is byte
//! for byte that of a local run.

#[cfg(not(feature = "mpi"))]
use crate::crypt::CryptArgs;
#[cfg(not(feature = "mpi"))]
use crate::error::CliError;
#[cfg(not(feature = "mpi"))]
use clustercrypt_engine::EncryptOptions;
#[cfg(not(feature = "mpi"))]
use clustercrypt_engine::raw::RawParams;

#[cfg(not(feature = "mpi"))]
fn unavailable() -> CliError {
    CliError::Usage(
        "this clustercrypt was built without MPI support; rebuild with \
         `cargo build --release --features mpi` (see README, Cluster mode)"
            .into(),
    )
}

/// `encrypt --cluster`.
#[cfg(not(feature = "mpi"))]
pub fn encrypt(_: &CryptArgs, _: &EncryptOptions) -> Result<(), CliError> {
    Err(unavailable())
}

/// `decrypt --cluster`.
#[cfg(not(feature = "mpi"))]
pub fn decrypt(_: &CryptArgs) -> Result<(), CliError> {
    Err(unavailable())
}

/// `--raw --cluster`.
#[cfg(not(feature = "mpi"))]
pub fn raw(_: &CryptArgs, _: &RawParams, _: bool) -> Result<(), CliError> {
    Err(unavailable())
}

/// `bench --cluster`.
#[cfg(not(feature = "mpi"))]
pub fn bench(
    _: &crate::cli::BenchArgs,
    _: &clustercrypt_bench::runner::Plan,
    _: clustercrypt_bench::export::Format,
) -> Result<(), CliError> {
    Err(unavailable())
}

/// `serve --cluster`.
#[cfg(not(feature = "mpi"))]
pub fn serve(_: clustercrypt_service::ServeConfig) -> Result<(), CliError> {
    Err(unavailable())
}

#[cfg(feature = "mpi")]
pub use with_mpi::{bench, decrypt, encrypt, raw, serve};

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::cell::Cell;
    use std::sync::{Arc, Mutex};

    use clustercrypt_service::executor::Executor;

    use clustercrypt_cluster::distributed::{
        DistributedTransform, Hello, hello, recv_spec, send_spec, serve as serve_chunks,
    };
    use clustercrypt_cluster::mpi_transport::MpiTransport;
    use clustercrypt_cluster::planning;
    use clustercrypt_cluster::transport::{ROOT, Transport};
    use clustercrypt_engine::raw::{self, RawParams};
    use clustercrypt_engine::stream::{open_header, prepare_encrypt, transform_from_description};
    use clustercrypt_engine::{ChunkTransform, EncryptOptions, EngineError, Randomness, pipeline};

    use crate::crypt::{CryptArgs, run};
    use crate::error::CliError;
    use crate::secrets::key_source;

    fn failed(e: impl std::error::Error + Send + Sync + 'static) -> CliError {
        CliError::Failed(anyhow::Error::new(e))
    }

    /// Joins the job; worker ranks serve and return, rank 0 runs `root` with a
    /// function that hands the transform to the workers. If `root` fails before
    /// handing it over, the workers are told to stop.
    fn job(
        threads: usize,
        root: impl FnOnce(
            &MpiTransport,
            &[Hello],
            &dyn Fn(&[u8]) -> Result<(), EngineError>,
        ) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let t = MpiTransport::init().map_err(failed)?;
        let me = Hello {
            version: env!("CARGO_PKG_VERSION").to_string(),
            host: clustercrypt_bench::machine::Machine::detect().hostname,
            threads,
            mpi: t.library_version(),
        };
        let all = hello(&t, &me).map_err(failed)?;
        if t.rank() != ROOT {
            let spec = recv_spec(&t).map_err(failed)?;
            if spec.is_empty() {
                return Ok(()); // rank 0 stopped before the work started
            }
            let inner = transform_from_description(&spec, threads).map_err(failed)?;
            planning::answer(&t, &*inner, threads).map_err(failed)?;
            return serve_chunks(&t, &*inner, threads).map_err(failed);
        }
        let sent = Cell::new(false);
        let send = |spec: &[u8]| {
            sent.set(true);
            send_spec(&t, spec).map_err(|e| EngineError::Input(e.to_string()))
        };
        let result = root(&t, &all, &send);
        if !sent.get() {
            let _ = send_spec(&t, &[]);
        }
        result
    }

    /// The input's size, when it is a file (stdin: assume a large input).
    fn input_size(args: &CryptArgs) -> u64 {
        std::fs::metadata(&args.input).map_or(1 << 30, |m| m.len())
    }

    /// How a distributed run reports.
    #[derive(Debug, Clone, Copy)]
    struct Verbosity {
        explain: bool,
        quiet: bool,
    }

    impl From<&CryptArgs> for Verbosity {
        fn from(args: &CryptArgs) -> Self {
            Verbosity {
                explain: args.explain,
                quiet: args.quiet,
            }
        }
    }

    /// Measures the ranks and the links, plans with the cost model, runs `inner`
    /// over the chosen ranks inside the pipeline (`threads` on rank 0), then
    /// releases the workers.
    #[allow(clippy::too_many_arguments, reason = "the pieces of one run")]
    fn distributed(
        t: &MpiTransport,
        all: &[Hello],
        inner: &dyn ChunkTransform,
        threads: usize,
        say: Verbosity,
        size: u64,
        input: &mut (dyn std::io::Read + Send),
        output: &mut dyn std::io::Write,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<clustercrypt_engine::Totals, EngineError> {
        let hosts: Vec<String> = all.iter().map(|h| h.host.clone()).collect();
        let as_engine = |e: clustercrypt_cluster::ClusterError| EngineError::Input(e.to_string());
        let m = planning::measure(t, inner, threads, size, &hosts, 0.0).map_err(as_engine)?;
        if say.explain {
            eprintln!("{}", m.explain());
        }
        // Two chunks in flight per remote thread, so sending overlaps computing.
        let per_rank: Vec<(usize, usize)> = m
            .plan
            .nodes
            .iter()
            .map(|&i| (i + 1, 2 * all[i + 1].threads.max(1)))
            .collect();
        let d = DistributedTransform::new(inner, t, threads, &per_rank, hosts);
        let start = std::time::Instant::now();
        let r = pipeline::run(input, output, &d, d.slots(), progress);
        d.stop_workers();
        if (say.explain || !say.quiet) && r.is_ok() {
            let used = if m.plan.nodes.is_empty() {
                "on rank 0 alone".to_string()
            } else {
                format!("on {} nodes", m.plan.nodes.len() + 1)
            };
            eprintln!(
                "clustercrypt: {used}: measured {:.2} s against {:.2} s predicted (local run predicted {:.2} s)",
                start.elapsed().as_secs_f64(),
                m.plan.seconds,
                m.plan.local_seconds
            );
        }
        r
    }

    /// `encrypt --cluster`.
    pub fn encrypt(args: &CryptArgs, options: &EncryptOptions) -> Result<(), CliError> {
        job(args.threads, |t, all, send| {
            let key = key_source(&args.key, true)?;
            let randomness = Randomness::generate().map_err(failed)?;
            let (head, sealer) = prepare_encrypt(&key, options, randomness).map_err(failed)?;
            run(args, |input, out, progress| {
                send(&sealer.describe())?;
                out.write_all(&head)
                    .map_err(EngineError::io("cannot write the output"))?;
                distributed(
                    t,
                    all,
                    &sealer,
                    args.threads,
                    args.into(),
                    input_size(args),
                    input,
                    out,
                    progress,
                )
            })
        })
    }

    /// `decrypt --cluster`.
    pub fn decrypt(args: &CryptArgs) -> Result<(), CliError> {
        job(args.threads, |t, all, send| {
            let key = key_source(&args.key, false)?;
            run(args, |input, out, progress| {
                let (_, opener) = open_header(input, &key)?;
                send(&opener.describe())?;
                distributed(
                    t,
                    all,
                    &opener,
                    args.threads,
                    args.into(),
                    input_size(args),
                    input,
                    out,
                    progress,
                )
            })
        })
    }

    /// `bench --cluster`: rank 0 prints the report; the other ranks print nothing.
    pub fn bench(
        args: &crate::cli::BenchArgs,
        plan: &clustercrypt_bench::runner::Plan,
        format: clustercrypt_bench::export::Format,
    ) -> Result<(), CliError> {
        use clustercrypt_bench::clock::MonotonicClock;
        use clustercrypt_bench::machine::Machine;
        use clustercrypt_bench::report::{Report, Settings};
        use clustercrypt_cluster::bench::{ClusterBench, NodeInfo};

        let t = MpiTransport::init().map_err(failed)?;
        let machine = Machine::detect();
        let me = Hello {
            version: env!("CARGO_PKG_VERSION").to_string(),
            host: machine.hostname.clone(),
            threads: plan.threads,
            mpi: t.library_version(),
        };
        hello(&t, &me).map_err(failed)?;
        let b = ClusterBench {
            specs: &plan.ciphers,
            threads: plan.threads,
            method: plan.method,
            sweep: args.sweep,
            me: NodeInfo {
                hostname: machine.hostname.clone(),
                cpu_model: machine.cpu_model.clone(),
            },
        };
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let summary = clustercrypt_cluster::bench::run(&t, &b, &MonotonicClock::default(), &cancel)
            .map_err(failed)?;
        let Some(summary) = summary else {
            return Ok(());
        };
        let mut report = Report::empty(machine, Settings::of(&plan.method, 1, plan.threads));
        report.cluster = Some(summary);
        crate::power::add_cluster_readings(&args.power, &mut report);
        crate::bench::write_output(args.output.as_deref(), &format.render(&report))?;
        Ok(())
    }

    /// Runs the chunks of each request of `serve --cluster` over the ranks,
    /// one request at a time (the workers serve one transform at a time).
    struct ClusterExecutor {
        t: Arc<MpiTransport>,
        all: Vec<Hello>,
        one_at_a_time: Mutex<()>,
    }

    impl std::fmt::Debug for ClusterExecutor {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.describe())
        }
    }

    impl Executor for ClusterExecutor {
        fn run(
            &self,
            input: &mut (dyn std::io::Read + Send),
            output: &mut dyn std::io::Write,
            transform: &dyn ChunkTransform,
            describe: &dyn Fn() -> zeroize::Zeroizing<Vec<u8>>,
            size: Option<u64>,
            threads: usize,
        ) -> Result<clustercrypt_engine::Totals, EngineError> {
            if transform.sequential() {
                // CBC encryption and RC4 gain nothing from other nodes.
                return pipeline::run(input, output, transform, threads, &|_| {});
            }
            let _turn = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
            send_spec(&*self.t, &describe()).map_err(|e| EngineError::Input(e.to_string()))?;
            let say = Verbosity {
                explain: false,
                quiet: false,
            };
            distributed(
                &self.t,
                &self.all,
                transform,
                threads,
                say,
                size.unwrap_or(1 << 30),
                input,
                output,
                &|_| {},
            )
        }

        fn describe(&self) -> String {
            let hosts: Vec<&str> = self.all.iter().map(|h| h.host.as_str()).collect();
            format!(
                "a cluster of {} ranks ({}), one request at a time",
                self.all.len(),
                hosts.join(", ")
            )
        }
    }

    /// `serve --cluster`: rank 0 serves HTTP and spreads each request's chunks
    /// over the ranks; the other ranks work on chunks until rank 0 shuts down.
    pub fn serve(mut config: clustercrypt_service::ServeConfig) -> Result<(), CliError> {
        let threads = config.threads;
        let t = Arc::new(MpiTransport::init().map_err(failed)?);
        let me = Hello {
            version: env!("CARGO_PKG_VERSION").to_string(),
            host: clustercrypt_bench::machine::Machine::detect().hostname,
            threads,
            mpi: t.library_version(),
        };
        let all = hello(&*t, &me).map_err(failed)?;
        if matches!(config.bench, clustercrypt_service::BenchSource::Measure) {
            // GET /v1/bench reports the cluster: every rank measures the
            // default table at once before rank 0 starts serving.
            if let Some(report) = cluster_quick_bench(&t, threads)? {
                config.bench = clustercrypt_service::BenchSource::Given(Box::new(report));
            }
        }
        if t.rank() != ROOT {
            // mpirun forwards SIGINT and SIGTERM to every rank: rank 0 shuts
            // down gracefully and then releases the workers, who must not die first.
            let _ = ctrlc::set_handler(|| {});
            loop {
                let spec = recv_spec(&*t).map_err(failed)?;
                if spec.is_empty() {
                    return Ok(());
                }
                let inner = transform_from_description(&spec, threads).map_err(failed)?;
                planning::answer(&*t, &*inner, threads).map_err(failed)?;
                serve_chunks(&*t, &*inner, threads).map_err(failed)?;
            }
        }
        let executor = ClusterExecutor {
            t: t.clone(),
            all,
            one_at_a_time: Mutex::new(()),
        };
        eprintln!("clustercrypt: chunks go to {}", executor.describe());
        config.executor = Arc::new(executor);
        let result = clustercrypt_service::run_blocking(config);
        // Release the workers whatever happened.
        let _ = send_spec(&*t, &[]);
        result.map_err(|e| {
            if e.is_usage() {
                CliError::Usage(e.to_string())
            } else {
                CliError::Failed(anyhow::Error::new(e))
            }
        })
    }

    /// The service's quick benchmark on every rank at once (as `bench
    /// --cluster`); rank 0 gets the report, the other ranks `None`.
    fn cluster_quick_bench(
        t: &MpiTransport,
        threads: usize,
    ) -> Result<Option<clustercrypt_bench::report::Report>, CliError> {
        use clustercrypt_bench::clock::MonotonicClock;
        use clustercrypt_bench::machine::Machine;
        use clustercrypt_bench::report::{Report, Settings};
        use clustercrypt_cluster::bench::{ClusterBench, NodeInfo};

        let plan = clustercrypt_service::benchmark::quick_plan();
        let machine = Machine::detect();
        let b = ClusterBench {
            specs: &plan.ciphers,
            threads,
            method: plan.method,
            sweep: false,
            me: NodeInfo {
                hostname: machine.hostname.clone(),
                cpu_model: machine.cpu_model.clone(),
            },
        };
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let summary = clustercrypt_cluster::bench::run(t, &b, &MonotonicClock::default(), &cancel)
            .map_err(failed)?;
        Ok(summary.map(|summary| {
            let mut report = Report::empty(machine, Settings::of(&plan.method, 1, threads));
            report.cluster = Some(summary);
            report
        }))
    }

    /// `--raw --cluster`: parallel raw modes spread over the ranks (the TEA
    /// study's hybrid build); sequential ones (CBC encryption, RC4) run on rank 0.
    pub fn raw(args: &CryptArgs, params: &RawParams, encrypt: bool) -> Result<(), CliError> {
        job(args.threads, |t, all, send| {
            crate::crypt::warn_raw(params, encrypt);
            let inner = raw::transform_for(params, encrypt).map_err(failed)?;
            run(args, |input, out, progress| {
                if raw::is_sequential(&params.spec, encrypt) {
                    return pipeline::run(input, out, &*inner, 1, progress);
                }
                send(&raw::describe(params, encrypt))?;
                distributed(
                    t,
                    all,
                    &*inner,
                    args.threads,
                    args.into(),
                    input_size(args),
                    input,
                    out,
                    progress,
                )
            })
        })
    }
}
