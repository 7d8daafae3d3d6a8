//! temp
use std::sync::atomic::Ordering;
use std::time::Instant;
mod common;
use clustercrypt_catalogue::aes::{AesModes, Backend, XX_CACHE};

fn main() {
    let o = common::Options::from_args("xx");
    let mut buf = vec![0u8; 1 << 20];
    for klen in [16usize, 32] {
        for &b in Backend::ALL {
            if !b.runnable() {
                continue;
            }
            let key = vec![7u8; klen];
            let aes = AesModes::with_backend(&key, b).unwrap();
            let mut sp = vec![Vec::new(); 2];
            for _ in 0..o.runs {
                for (v, s) in sp.iter_mut().enumerate() {
                    XX_CACHE.store(v == 1, Ordering::Relaxed);
                    let start = Instant::now();
                    let mut bytes = 0usize;
                    while start.elapsed() < o.time {
                        for (i, req) in buf.chunks_mut(o.request).enumerate() {
                            let mut iv = [3u8; 16];
                            iv[..8].copy_from_slice(&(i as u64).to_le_bytes());
                            aes.ctr_apply(&mut iv, req);
                        }
                        bytes += buf.len();
                    }
                    s.push(bytes as f64 / (1 << 20) as f64 / start.elapsed().as_secs_f64());
                }
            }
            for s in sp.iter_mut() {
                s.sort_by(f64::total_cmp);
            }
            let best = |i: usize| sp[i][sp[i].len() - 1];
            let med = |i: usize| sp[i][sp[i].len() / 2];
            println!(
                "AES-{} {:>10} plain {:>8.0} ({:>6.0}) cached {:>8.0} ({:>6.0})  ratio {:.3} ({:.3})",
                klen * 8,
                b.name(),
                best(0),
                med(0),
                best(1),
                med(1),
                best(1) / best(0),
                med(1) / med(0)
            );
        }
    }
}
