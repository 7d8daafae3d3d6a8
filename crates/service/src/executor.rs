//! Where a request's chunks are transformed: on this machine, or spread over
//! the ranks of a cluster (`serve --cluster`, rank 0 serving). The service
//! prepares the transform (header, keys) itself and hands only the chunk
//! pipeline to the executor, so both give byte-identical results.

use std::io::{Read, Write};

use clustercrypt_engine::{ChunkTransform, EngineError, Totals, pipeline};
use zeroize::Zeroizing;

/// Runs the chunk pipeline of one request.
pub trait Executor: Send + Sync + std::fmt::Debug {
    /// Transforms `input` into `output` with `transform` on `threads` threads
    /// of this machine (and, for a cluster, the other nodes, which rebuild the
    /// transform from `describe()`). `size` is the input's declared length.
    fn run(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        transform: &dyn ChunkTransform,
        describe: &dyn Fn() -> Zeroizing<Vec<u8>>,
        size: Option<u64>,
        threads: usize,
    ) -> Result<Totals, EngineError>;

    /// One line for the start-up log.
    fn describe(&self) -> String;
}

/// This machine only.
#[derive(Debug, Default, Clone, Copy)]
pub struct Local;

impl Executor for Local {
    fn run(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        transform: &dyn ChunkTransform,
        _describe: &dyn Fn() -> Zeroizing<Vec<u8>>,
        _size: Option<u64>,
        threads: usize,
    ) -> Result<Totals, EngineError> {
        pipeline::run(input, output, transform, threads, &|_| {})
    }

    fn describe(&self) -> String {
        "this machine".into()
    }
}
