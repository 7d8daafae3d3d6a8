//! Our ChaCha20-Poly1305 on every ChaCha kernel this CPU runs (and stitched
//! on AVX2 and SSSE3 where they run) against
//! AWS-LC's, side by side: the figures behind [`dispatch::chacha20_poly1305`]
//! on x86-64, where a shared machine makes single timings noisy.
//!
//! Measured like `clustercrypt bench`: a 1 MiB buffer sealed (then opened) in
//! 64 KiB requests (`--request BYTES` for dm-crypt's sectors or packets), one
//! thread, MiB = 2^20 bytes. The implementations
//! alternate round by round, and each figure is the best of `--runs` rounds
//! (default 7) of `--time` seconds (default 0.3) each.
//!
//! ```text
//! cargo run --release -p clustercrypt-catalogue --example chacha_poly_versus_aws_lc -- --runs 9
//! ```

use std::time::{Duration, Instant};

mod common;

use clustercrypt_catalogue::aead::chacha20_poly1305::{ifma_runnable, stitched_implementations};
use clustercrypt_catalogue::aead::{Aead, AeadAlgorithm, TAG_LEN};
use clustercrypt_catalogue::chacha::{implementations, runnable};
use clustercrypt_catalogue::cpu;
use clustercrypt_catalogue::dispatch::{self, ChaChaPolyImpl};

const BUFFER: usize = 1 << 20;
/// MiB/s of sealing and of opening `buf` in requests of `request` bytes with
/// `aead` for about `time`.
fn speed(aead: &Aead, buf: &mut [u8], request: usize, time: Duration) -> (f64, f64) {
    let nonce = |i: usize| {
        let mut n = [0u8; 12];
        n[..8].copy_from_slice(&(i as u64).to_le_bytes());
        n
    };
    // Sealing C as if it were plaintext gives P back (a key-stream XOR), so
    // the tags of both states let every opening pass verify a real tag:
    // `tags[i].0` is the tag of the state request `i` is in, `.1` the other.
    let chunks = BUFFER.div_ceil(request);
    let mut tags = vec![([0u8; TAG_LEN], [0u8; TAG_LEN]); chunks];
    let run = |open: bool, buf: &mut [u8], tags: &mut [([u8; TAG_LEN], [u8; TAG_LEN])]| {
        let start = Instant::now();
        let mut bytes = 0usize;
        while start.elapsed() < time {
            for (i, req) in buf.chunks_mut(request).enumerate() {
                if open {
                    let (now, other) = tags[i];
                    aead.open(&nonce(i), &[], req, &now).expect("opens");
                    tags[i] = (other, now);
                } else {
                    tags[i].0 = aead.seal(&nonce(i), &[], req);
                }
            }
            bytes += buf.len();
        }
        bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64()
    };
    let seal = run(false, buf, &mut tags);
    // The buffer now holds C with its tags in `.0`; seal once more for the
    // tags of P (the buffer back to P), then open from P.
    for (i, req) in buf.chunks_mut(request).enumerate() {
        let tag_p = aead.seal(&nonce(i), &[], req);
        tags[i] = (tag_p, tags[i].0);
    }
    let open = run(true, buf, &mut tags);
    (seal, open)
}

fn main() {
    // AWS-LC reads its CPU mask before `main`: under CLUSTERCRYPT_DISABLE_HWF
    // run again with it set (as the CLI does), or AWS-LC would run the code
    // the mask hides (its AVX2 code at the portable tier).
    if let Some((name, value)) = cpu::library_env_missing() {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args_os().skip(1))
            .env(name, value)
            .status()
            .expect("run again with the library mask");
        std::process::exit(status.code().unwrap_or(1));
    }
    let common::Options {
        runs,
        time,
        request,
    } = common::Options::from_args(
        "chacha_poly_versus_aws_lc [--runs N] [--time SECONDS] [--request BYTES]",
    );
    let key = [0x42u8; 32];
    let mut imps = vec![ChaChaPolyImpl::AwsLc];
    imps.extend(
        implementations()
            .iter()
            .filter(|&&i| runnable(i))
            .map(|&i| ChaChaPolyImpl::Ours(i)),
    );
    imps.extend(stitched_implementations());
    if ifma_runnable() {
        imps.push(ChaChaPolyImpl::Avx512Ifma);
    }
    let aeads: Vec<_> = imps
        .iter()
        .map(|&i| Aead::with_impl(AeadAlgorithm::ChaCha20Poly1305, &key, i).expect("key"))
        .collect();
    let mut buf = vec![0x5au8; BUFFER];
    let mut best = vec![(0f64, 0f64); imps.len()];
    for _ in 0..runs {
        for (b, aead) in best.iter_mut().zip(&aeads) {
            let (s, o) = speed(aead, &mut buf, request, time);
            *b = (b.0.max(s), b.1.max(o));
        }
    }
    println!(
        "# dispatch chooses {}; {request}-byte requests, best of {runs} rounds, MiB/s",
        dispatch::chacha20_poly1305().name()
    );
    println!("# implementation seal open");
    for (aead, (s, o)) in aeads.iter().zip(best) {
        println!("{} {s:.0} {o:.0}", aead.backend());
    }
}
