//! AES-CTR with and without the cached first round, side by side, on every
//! AES backend this CPU runs: the figures behind
//! `x86_modes::first_round_pays`, which decides where the cache runs (where
//! it does not, both columns run the same code).
//!
//! Measured like `clustercrypt bench`: a 1 MiB buffer in 64 KiB requests
//! (`--request BYTES`), one thread, MiB = 2^20 bytes. The two alternate
//! round by round, and each figure is the best of `--runs` rounds (default
//! 7) of `--time` seconds (default 0.3), with the median beside it.
//!
//! ```text
//! cargo run --release -p clustercrypt-catalogue --example aes_ctr_first_round -- --runs 15 --time 0.1
//! ```

use std::time::Instant;

mod common;

use clustercrypt_catalogue::aes::{AesModes, Backend};
use clustercrypt_catalogue::cpu;

const BUFFER: usize = 1 << 20;

fn main() {
    let o = common::Options::from_args(
        "aes_ctr_first_round [--runs N] [--time SECONDS] [--request BYTES]",
    );
    if let Err(e) = cpu::mask_from_env() {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let mut backends = Vec::new();
    for &b in Backend::ALL {
        if b.runnable() {
            backends.push(b);
        } else {
            println!("note: {} not measured: this CPU lacks it", b.name());
        }
    }
    println!(
        "AES-CTR, {} B requests, best (median) of {} rounds of {:.1} s, MiB/s",
        o.request,
        o.runs,
        o.time.as_secs_f64()
    );
    let mut buf = vec![0u8; BUFFER];
    for key_len in [16usize, 32] {
        for &b in &backends {
            let aes = AesModes::with_backend(&vec![7u8; key_len], b).expect("runnable");
            let mut speeds = [Vec::new(), Vec::new()];
            for _ in 0..o.runs {
                for (first_round, s) in [false, true].into_iter().zip(&mut speeds) {
                    let start = Instant::now();
                    let mut bytes = 0usize;
                    while start.elapsed() < o.time {
                        for (i, req) in buf.chunks_mut(o.request).enumerate() {
                            let mut iv = [3u8; 16];
                            iv[..8].copy_from_slice(&(i as u64).to_le_bytes());
                            aes.ctr_apply_with(&mut iv, req, first_round);
                        }
                        bytes += buf.len();
                    }
                    s.push(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64());
                }
            }
            let [plain, cached] = speeds.map(|mut s| {
                s.sort_by(f64::total_cmp);
                (s[s.len() - 1], s[s.len() / 2])
            });
            println!(
                "AES-{} {:>8}  without {:>6.0} ({:>6.0})  cached {:>6.0} ({:>6.0})  {:.3}x ({:.3}x)",
                key_len * 8,
                b.name(),
                plain.0,
                plain.1,
                cached.0,
                cached.1,
                cached.0 / plain.0,
                cached.1 / plain.1
            );
        }
    }
}
