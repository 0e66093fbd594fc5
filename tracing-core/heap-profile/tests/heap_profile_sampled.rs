//! The heap profiler in sampled mode (`sampling_interval_bytes: 4096`, as
//! one runs it in production): three functions allocate 60, 30 and 10 per
//! cent of the small-block bytes, and one allocates blocks larger than the
//! interval. The bound tested: a callstack that allocated N bytes in
//! blocks smaller than the interval I is sampled Poisson(N/I) times and
//! estimated at I per sample, so its estimate has mean N and standard
//! deviation sqrt(N*I); each function's estimate must lie within 5 of
//! those (a false failure about once in 1.7 million runs), and blocks of at
//! least I bytes are counted exactly.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, register};
use zerotrace_protos::protos::{DataSourceConfig, TracePacketDecoder};

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

const INTERVAL: u64 = 4096;
const BLOCK: usize = 48;

#[inline(never)]
fn small_blocks_a(n: usize) {
    for _ in 0..n {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(BLOCK)));
    }
}

#[inline(never)]
fn small_blocks_b(n: usize) {
    for _ in 0..n {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(BLOCK)));
    }
}

#[inline(never)]
fn small_blocks_c(n: usize) {
    for _ in 0..n {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(BLOCK)));
    }
}

#[inline(never)]
fn large_blocks(out: &mut Vec<Vec<u8>>, n: usize) {
    for _ in 0..n {
        out.push(std::hint::black_box(Vec::<u8>::with_capacity(1 << 20)));
    }
}

fn config() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = DataSourceConfig::from_message(w.root());
        c.set_name("android.heapprofd");
        c.begin_heapprofd_config()
            .set_sampling_interval_bytes(INTERVAL)
            .add_pid(u64::from(std::process::id()))
            // Exact accounting needs every sample: wait for room rather
            // than stop the profile.
            .set_block_client(true);
    }
    w.finish().unwrap()
}

/// The last dump's (allocated, alloc_count) per function of `names`.
fn by_function(trace: &[u8], names: &[&str]) -> HashMap<String, (u64, u64)> {
    let packets: Vec<&[u8]> = protozero::Decoder::new(trace)
        .filter_map(|f| f.ok())
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok())
        .collect();
    let (mut fnames, mut frames, mut stacks) = (HashMap::new(), HashMap::new(), HashMap::new());
    let mut dumps: Vec<Vec<(u64, u64, u64)>> = vec![Vec::new()];
    for b in &packets {
        let p = TracePacketDecoder::new(b);
        if let Some(d) = p.interned_data() {
            for s in d.function_names() {
                fnames.insert(s.iid().unwrap(), s.str().unwrap_or(b"").to_vec());
            }
            for f in d.frames() {
                frames.insert(f.iid().unwrap(), f.function_name_id().unwrap_or(0));
            }
            for c in d.callstacks() {
                stacks.insert(c.iid().unwrap(), c.frame_ids().collect::<Vec<u64>>());
            }
        }
        if let Some(pp) = p.profile_packet() {
            for d in pp.process_dumps() {
                for s in d.samples() {
                    dumps.last_mut().unwrap().push((
                        s.callstack_id().unwrap(),
                        s.self_allocated().unwrap_or(0),
                        s.alloc_count().unwrap_or(0),
                    ));
                }
                assert_eq!(d.buffer_overran(), Some(false));
            }
            if !pp.continued().unwrap_or(false) {
                dumps.push(Vec::new());
            }
        }
    }
    dumps.retain(|d| !d.is_empty());
    let mut out = HashMap::new();
    for (iid, a, c) in dumps.last().expect("a dump") {
        if std::env::var_os("HEAP_PROFILE_DEBUG").is_some() && *a >= 1 << 20 {
            let named: Vec<String> = stacks[iid]
                .iter()
                .map(|f| {
                    String::from_utf8_lossy(fnames.get(&frames[f]).map_or(&b""[..], |v| v))
                        .into_owned()
                })
                .collect();
            eprintln!("{a} {c}: {named:?}");
        }
        for name in names {
            let through = stacks[iid].iter().any(|f| {
                fnames
                    .get(&frames[f])
                    .is_some_and(|n| String::from_utf8_lossy(n).contains(&format!("::{name}")))
            });
            if through {
                let e: &mut (u64, u64) = out.entry(name.to_string()).or_default();
                e.0 += a;
                e.1 += c;
            }
        }
    }
    out
}

#[test]
fn sampled_totals_lie_within_the_bound_the_interval_implies() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("heap_profile_sampled.pftrace");
    let session = InProcessSession::start(
        &[],
        InProcessConfig {
            data_source_configs: vec![config()],
            ..InProcessConfig::default()
        },
    )
    .expect("session");
    register(session.producer()).expect("registered");
    session
        .producer()
        .wait_for_start("android.heapprofd", Duration::from_secs(10))
        .expect("started");

    // 24, 12 and 4 MiB in 48-byte blocks; 8 blocks of 1 MiB.
    let unit = (4 << 20) / BLOCK;
    small_blocks_a(6 * unit);
    small_blocks_b(3 * unit);
    small_blocks_c(unit);
    let mut large = Vec::with_capacity(8);
    large_blocks(&mut large, 8);

    session.stop(&out).expect("stopped");
    drop(large);
    let got = by_function(
        &std::fs::read(&out).unwrap(),
        &[
            "small_blocks_a",
            "small_blocks_b",
            "small_blocks_c",
            "large_blocks",
        ],
    );
    for (name, units) in [
        ("small_blocks_a", 6),
        ("small_blocks_b", 3),
        ("small_blocks_c", 1),
    ] {
        let n = (units * unit * BLOCK) as f64;
        let sigma = (n * INTERVAL as f64).sqrt();
        let (est, _) = got.get(name).copied().unwrap_or_default();
        let z = (est as f64 - n) / sigma;
        assert!(
            z.abs() < 5.0,
            "{name}: estimated {est} bytes for {n}, {z:.2} standard deviations off"
        );
    }
    assert_eq!(
        got.get("large_blocks").copied(),
        Some((8 << 20, 8)),
        "exact"
    );
}
