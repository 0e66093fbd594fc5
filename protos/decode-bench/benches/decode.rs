//! How fast each library decodes real traces, side by side: criterion
//! groups `full/<dataset>` and `lazy/<dataset>` (the tasks of the crate
//! docs) over the trace of TrackEvent and the system probes that
//! `cargo xtask decode-data` records (`recorded`, a few MB; the bench stops
//! with that command's name when it is missing), the genuine Perfetto SDK trace
//! (`genuine`) and Perfetto's synthetic TrackEvent trace (`synthetic`),
//! each with functions `floor`, `ours` (the random-access `FooDecoder`),
//! `ours_fields` (the field enums, `FooField::read`), `prost`,
//! `quick_protobuf` and `rust_protobuf`, throughput in packet bytes.
//!
//! Before timing anything it asserts that all six return the same
//! checksum for each task and data set. `benches/decode_ratios.py` turns
//! criterion's results into a table of MB/s and ratios to the floor.
//! Like protozero's encode bench it measures this thread's CPU time on
//! 64-bit Linux (`BENCH_CLOCK=wall` for wall time).

#[path = "../../encode-bench/benches/support/clock.rs"]
mod clock;

use std::hint::black_box;
use std::time::Duration;

use clock::BenchClock;
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use zerotrace_decode_bench::{LIBRARIES, TaskFn, data};

/// The data sets by the names the groups carry.
fn datasets() -> Vec<(&'static str, Vec<u8>)> {
    let recorded = match data::recorded(data::RECORDED) {
        Ok(recorded) => recorded.trace,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "the recorded TrackEvent and probes trace: {} bytes",
        recorded.len()
    );
    let genuine = data::genuine_trace().expect("reading the genuine trace");
    let synthetic = data::synthetic_trace().expect("writing the synthetic trace");
    vec![
        ("recorded", recorded),
        ("genuine", genuine),
        ("synthetic", synthetic),
    ]
}

fn decode(c: &mut Criterion<BenchClock>) {
    for (dataset, trace) in datasets() {
        let packets = data::packets(&trace).expect("the data set is a trace");
        let bytes = data::total_bytes(&packets);
        for task in ["full", "lazy"] {
            let fns: Vec<(&str, TaskFn)> = LIBRARIES
                .iter()
                .map(|&(name, full, lazy)| (name, if task == "full" { full } else { lazy }))
                .collect();
            let sums: Vec<(&str, u64)> = fns.iter().map(|(n, f)| (*n, f(&packets))).collect();
            assert!(
                sums[0].1 != 0 && sums.iter().all(|(_, s)| *s == sums[0].1),
                "{task}/{dataset}: the libraries disagree: {sums:?}"
            );
            eprintln!(
                "{task}/{dataset}: {} packets, {bytes} bytes, checksum {:#018x} (all agree)",
                packets.len(),
                sums[0].1
            );
            let mut g = c.benchmark_group(format!("{task}/{dataset}"));
            g.throughput(Throughput::Bytes(bytes));
            if bytes > 1 << 20 {
                // Tens of ms per iteration for the owned decoders: equal
                // iteration counts per sample keep the run short.
                g.sampling_mode(SamplingMode::Flat).sample_size(30);
            }
            for &(name, f) in &fns {
                g.bench_function(name, |b| b.iter(|| f(black_box(&packets))));
            }
            g.finish();
        }
    }
}

fn config() -> Criterion<BenchClock> {
    let clock = BenchClock::from_env();
    eprintln!(
        "measuring {} (BENCH_CLOCK=wall for wall time)",
        clock.name()
    );
    Criterion::default()
        .with_measurement(clock)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = decode
}
criterion_main!(benches);
