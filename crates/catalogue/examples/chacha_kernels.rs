//! Every ChaCha20 kernel this CPU runs, side by side: the figures behind
//! [`dispatch::chacha`]'s choice, among them the kernels with one more block
//! in scalar registers (`avx2+scalar`, `ssse3+scalar`) against the same
//! vector kernels without it.
//!
//! Measured like `clustercrypt bench`: a 1 MiB buffer in 64 KiB requests
//! (`--request BYTES`), one thread, MiB = 2^20 bytes. The kernels alternate
//! round by round, and each figure is the best of `--runs` rounds (default
//! 7) of `--time` seconds (default 0.3), with the median beside it.
//!
//! ```text
//! cargo run --release -p clustercrypt-catalogue --example chacha_kernels -- --runs 15 --time 0.2
//! ```

use std::time::Instant;

mod common;

use clustercrypt_catalogue::chacha::{implementations, runnable, xor_keystream_with};
use clustercrypt_catalogue::cpu;
use clustercrypt_catalogue::dispatch::{self, ChaChaImpl};

const BUFFER: usize = 1 << 20;

fn main() {
    let o =
        common::Options::from_args("chacha_kernels [--runs N] [--time SECONDS] [--request BYTES]");
    if let Err(e) = cpu::mask_from_env() {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let mut imps: Vec<ChaChaImpl> = Vec::new();
    for &imp in implementations() {
        if runnable(imp) {
            imps.push(imp);
        } else {
            println!("note: {} not measured: this CPU lacks it", imp.name());
        }
    }
    let key = [7u8; 32];
    let nonce = [9u8; 12];
    let mut buf = vec![0u8; BUFFER];
    let mut speeds = vec![Vec::new(); imps.len()];
    for _ in 0..o.runs {
        for (imp, s) in imps.iter().zip(&mut speeds) {
            let start = Instant::now();
            let mut bytes = 0usize;
            while start.elapsed() < o.time {
                for (i, req) in buf.chunks_mut(o.request).enumerate() {
                    let mut n = nonce;
                    n[..8].copy_from_slice(&(i as u64).to_le_bytes());
                    xor_keystream_with::<20>(*imp, &key, &n, 1, req).expect("in range");
                }
                bytes += buf.len();
            }
            s.push(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64());
        }
    }
    println!(
        "ChaCha20, {} B requests, best (median) of {} rounds of {:.1} s, MiB/s; dispatch: {}",
        o.request,
        o.runs,
        o.time.as_secs_f64(),
        dispatch::chacha().name()
    );
    for (imp, s) in imps.iter().zip(&mut speeds) {
        s.sort_by(f64::total_cmp);
        println!(
            "{:>14}  {:>8.0} ({:>6.0})",
            imp.name(),
            s[s.len() - 1],
            s[s.len() / 2]
        );
    }
}
