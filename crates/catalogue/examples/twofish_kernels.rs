//! Every Twofish multi-block kernel this CPU runs, side by side: the figures
//! behind [`dispatch::twofish`]'s choice.
//!
//! Measured like `clustercrypt bench` (ECB, the kernels alone): a 1 MiB
//! buffer in 64 KiB requests (`--request BYTES`), one thread, MiB = 2^20
//! bytes, a 256-bit key. The kernels alternate round by round, and each
//! figure is the best of `--runs` rounds (default 7) of `--time` seconds
//! (default 0.3), with the median beside it.
//!
//! ```text
//! cargo run --release -p clustercrypt-catalogue --example twofish_kernels -- --runs 15 --time 0.2
//! ```

use std::time::Instant;

mod common;

use cipher::{Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use clustercrypt_catalogue::ciphers::twofish::Twofish;
use clustercrypt_catalogue::{cpu, dispatch};

const BUFFER: usize = 1 << 20;

fn main() {
    let o =
        common::Options::from_args("twofish_kernels [--runs N] [--time SECONDS] [--request BYTES]");
    if let Err(e) = cpu::mask_from_env() {
        eprintln!("{e}");
        std::process::exit(2);
    }
    if !o.request.is_multiple_of(16) {
        eprintln!("--request must be a multiple of 16 bytes");
        std::process::exit(2);
    }
    let key = Twofish::new_from_slice(&[7u8; 32]).expect("a 32-byte key");
    let mut kernels = Vec::new();
    for name in Twofish::backends() {
        match key.with_backend(name) {
            Some(c) => kernels.push((name, c)),
            None => println!("note: {name} not measured: this CPU lacks it"),
        }
    }
    let mut buf = vec![Block::<Twofish>::default(); BUFFER / 16];
    let mut speeds = vec![(Vec::new(), Vec::new()); kernels.len()];
    let blocks = o.request / 16;
    for _ in 0..o.runs {
        for ((_, c), (enc, dec)) in kernels.iter().zip(&mut speeds) {
            for (decrypt, out) in [(false, &mut *enc), (true, &mut *dec)] {
                let start = Instant::now();
                let mut bytes = 0usize;
                while start.elapsed() < o.time {
                    for req in buf.chunks_mut(blocks) {
                        if decrypt {
                            c.decrypt_blocks(req);
                        } else {
                            c.encrypt_blocks(req);
                        }
                    }
                    bytes += BUFFER;
                }
                out.push(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64());
            }
        }
    }
    println!(
        "Twofish-256 ECB, {} B requests, best (median) of {} rounds of {:.1} s, MiB/s; dispatch: {}",
        o.request,
        o.runs,
        o.time.as_secs_f64(),
        dispatch::twofish()
    );
    println!("{:>20}  {:>16}  {:>16}", "kernel", "encrypt", "decrypt");
    for ((name, _), (enc, dec)) in kernels.iter().zip(&mut speeds) {
        let fig = |s: &mut Vec<f64>| {
            s.sort_by(f64::total_cmp);
            format!("{:>6.0} ({:>6.0})", s[s.len() - 1], s[s.len() / 2])
        };
        println!("{:>20}  {:>16}  {:>16}", name, fig(enc), fig(dec));
    }
}
