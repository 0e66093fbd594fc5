//! Runs one library's task over the recorded TrackEvent trace many times,
//! for a profiler (`perf record`, callgrind) to look at:
//! `cargo run --release -p zerotrace-decode-bench --example profile_decode -- ours full 50`.
//! A fourth argument names a trace file to read instead of recording one
//! (written by the `record_trace` example), so that under callgrind only the
//! decoding runs: `valgrind --tool=callgrind --toggle-collect='*::full'
//! target/release/examples/profile_decode ours full 2 rec.pftrace`.

use std::hint::black_box;

use zerotrace_decode_bench::LIBRARIES;
use zerotrace_decode_bench::data::{packets, track_event_trace};

fn main() {
    let mut args = std::env::args().skip(1);
    let lib = args.next().unwrap_or_else(|| "ours".into());
    let task = args.next().unwrap_or_else(|| "full".into());
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let trace = match args.next() {
        Some(path) => std::fs::read(&path).unwrap_or_else(|e| {
            eprintln!("reading {path}: {e}");
            std::process::exit(2);
        }),
        None => track_event_trace().expect("recording"),
    };
    let packets = packets(&trace).expect("a trace");
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
