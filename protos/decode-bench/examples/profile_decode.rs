//! Runs one library's task over the recorded TrackEvent trace many times,
//! for a profiler (`perf record`, callgrind) to look at:
//! `cargo run --release -p zerotrace-decode-bench --example profile_decode -- ours full 50`.
//! The trace is the `recorded` data set of `cargo xtask decode-data`; a
//! fourth argument names another trace file to read instead. Under
//! callgrind only the decoding is counted with `--toggle-collect='*::full'`:
//! `valgrind --tool=callgrind --toggle-collect='*::full'
//! target/release/examples/profile_decode ours full 2`.

use std::hint::black_box;

use zerotrace_decode_bench::LIBRARIES;
use zerotrace_decode_bench::data::{RECORDED, packets, recorded};

fn main() {
    let mut args = std::env::args().skip(1);
    let lib = args.next().unwrap_or_else(|| "ours".into());
    let task = args.next().unwrap_or_else(|| "full".into());
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let read = match args.next() {
        Some(path) => std::fs::read(&path).map_err(|e| format!("reading {path}: {e}")),
        None => recorded(RECORDED)
            .map(|r| r.trace)
            .map_err(|e| e.to_string()),
    };
    let trace = read.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let packets = packets(&trace).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let Some((_, full, lazy)) = LIBRARIES.iter().find(|(name, _, _)| *name == lib) else {
        eprintln!("unknown library {lib}");
        std::process::exit(2);
    };
    let f = if task == "lazy" { lazy } else { full };
    let mut sum = 0u64;
    for _ in 0..rounds {
        sum = sum.wrapping_add(f(black_box(&packets)));
    }
    println!("{lib} {task} x{rounds}: {sum}");
}
