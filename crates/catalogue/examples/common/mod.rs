//! What the side-by-side examples share: their command line.

use std::time::Duration;

/// `--runs N` (default 7), `--time SECONDS` per round (default 0.3) and
/// `--request BYTES` (default 64 KiB, `cryptsetup benchmark`'s).
pub struct Options {
    pub runs: usize,
    pub time: Duration,
    pub request: usize,
}

impl Options {
    /// Parses the program's arguments; panics with `usage` on anything else.
    pub fn from_args(usage: &str) -> Options {
        let mut o = Options {
            runs: 7,
            time: Duration::from_millis(300),
            request: 64 << 10,
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut value = |what: &str| {
                args.next()
                    .unwrap_or_else(|| panic!("{a} needs {what}; usage: {usage}"))
            };
            match a.as_str() {
                "--runs" => o.runs = value("N").parse().expect("--runs N"),
                "--time" => {
                    o.time =
                        Duration::from_secs_f64(value("SECONDS").parse().expect("--time SECONDS"))
                }
                "--request" => {
                    o.request = value("BYTES")
                        .parse()
                        .ok()
                        .filter(|&r| r > 0)
                        .expect("--request BYTES")
                }
                _ => panic!("unknown argument {a}; usage: {usage}"),
            }
        }
        o
    }
}
