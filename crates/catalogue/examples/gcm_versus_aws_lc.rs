//! Our AES-GCM on every GHASH backend this CPU runs (with the AES backend the
//! dispatch picks under `CLUSTERCRYPT_DISABLE_HWF`), our AES-CTR alone (the
//! floor of the unstitched design) and AWS-LC's AES-GCM, side by side: the
//! figures behind [`dispatch::aes_gcm`] on x86-64, where a shared machine
//! makes single timings noisy.
//!
//! Measured like `clustercrypt bench`: a 1 MiB buffer sealed (then opened) in
//! 64 KiB requests (`--request BYTES` for other sizes), one thread, MiB =
//! 2^20 bytes. The implementations alternate round by round, `--runs`
//! rounds (default 7) of `--time` seconds (default 0.3) each, and each figure
//! is the fastest single pass of all.
//!
//! ```text
//! CLUSTERCRYPT_DISABLE_HWF=vaes,vpclmulqdq,avx512 \
//!   cargo run --release -p clustercrypt-catalogue --example gcm_versus_aws_lc -- --runs 9
//! ```

use std::time::{Duration, Instant};

mod common;

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use clustercrypt_catalogue::aes::AesModes;
use clustercrypt_catalogue::dispatch;
use clustercrypt_catalogue::gcm::{AesGcm, GhashImpl};

const BUFFER: usize = 1 << 20;

/// One contender: seals (`false`) or opens (`true`) a request with nonce `i`.
type Op<'a> = Box<dyn FnMut(bool, usize, &mut [u8], &mut [u8; 16]) + 'a>;

/// MiB/s of sealing and of opening `buf` with `op`: the fastest single pass
/// over the buffer in about `time` (a pass is short enough that many run
/// undisturbed on a shared machine).
///
/// CTR is its own inverse: sealing ciphertext X gives Y = X + keystream,
/// and opening Y gives X back. So the opening passes alternate between X
/// and Y, each with the tags its sealing gave, and every tag verifies.
fn speed(op: &mut Op, buf: &mut [u8], request: usize, time: Duration) -> (f64, f64) {
    let n = BUFFER.div_ceil(request);
    let mut tags = [vec![[0u8; 16]; n], vec![[0u8; 16]; n]];
    let mib = BUFFER as f64 / (1 << 20) as f64;
    let mut best = [f64::MAX; 2];
    for open in [false, true] {
        let start = Instant::now();
        let mut which = 1;
        if open {
            // The buffer is X (tags[0]); one more sealing pass makes Y (tags[1]).
            for (i, req) in buf.chunks_mut(request).enumerate() {
                op(false, i, req, &mut tags[1][i]);
            }
        }
        while start.elapsed() < time {
            let t = Instant::now();
            for (i, req) in buf.chunks_mut(request).enumerate() {
                op(open, i, req, &mut tags[if open { which } else { 0 }][i]);
            }
            best[usize::from(open)] = best[usize::from(open)].min(t.elapsed().as_secs_f64());
            which ^= 1;
        }
    }
    (mib / best[0], mib / best[1])
}

fn nonce(i: usize) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[..8].copy_from_slice(&(i as u64).to_le_bytes());
    n
}

fn main() {
    let common::Options {
        runs,
        time,
        request,
    } = common::Options::from_args(
        "gcm_versus_aws_lc [--runs N] [--time SECONDS] [--request BYTES]",
    );
    for bits in [128, 256] {
        let key = vec![7u8; bits / 8];
        let mut names = Vec::new();
        let mut ops: Vec<Op> = Vec::new();
        for &g in GhashImpl::ALL.iter().filter(|g| g.runnable()) {
            let Some(gcm) = AesGcm::new(&key, g) else {
                continue;
            };
            names.push(gcm.name());
            ops.push(Box::new(move |open, i, req, tag| {
                if open {
                    gcm.open(&nonce(i), &[], req, tag).expect("opens");
                } else {
                    *tag = gcm.seal(&nonce(i), &[], req);
                }
            }));
        }
        if let Some(aes) = AesModes::new(&key) {
            names.push(format!("{} ctr alone", aes.backend().name()));
            ops.push(Box::new(move |_, i, req, _| {
                let mut c = [0u8; 16];
                c[..12].copy_from_slice(&nonce(i));
                c[15] = 2;
                aes.ctr_apply(&mut c, req);
            }));
        }
        let alg = if bits == 128 {
            &aead::AES_128_GCM
        } else {
            &aead::AES_256_GCM
        };
        let aws = LessSafeKey::new(UnboundKey::new(alg, &key).unwrap());
        names.push(dispatch::aws_lc_aead_name(true).to_string());
        ops.push(Box::new(move |open, i, req, tag| {
            let n = Nonce::assume_unique_for_key(nonce(i));
            if open {
                aws.open_in_place_separate_tag(n, Aad::empty(), tag, req)
                    .expect("opens");
            } else {
                let t = aws
                    .seal_in_place_separate_tag(n, Aad::empty(), req)
                    .unwrap();
                tag.copy_from_slice(t.as_ref());
            }
        }));
        let mut best = vec![(0f64, 0f64); ops.len()];
        let mut buf = vec![0u8; BUFFER];
        for _ in 0..runs {
            for (op, b) in ops.iter_mut().zip(&mut best) {
                let (e, d) = speed(op, &mut buf, request, time);
                *b = (b.0.max(e), b.1.max(d));
            }
        }
        for (n, (e, d)) in names.iter().zip(&best) {
            println!(
                "aes-gcm:{bits} {request}-byte requests {n:<28} seal {e:8.1} open {d:8.1} MiB/s"
            );
        }
    }
}
