//! The heap profiler end to end in a Rust program: `HeapProfiler` as the
//! global allocator, `android.heapprofd` registered with an in-process
//! session, known allocations in known functions, and the trace read back:
//! in exact mode (`sampling_interval_bytes: 1`) each function's callstacks
//! hold exactly the bytes and blocks it allocated and freed.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::heap_profile::{HeapProfiler, RUST_HEAP, register};
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_protos::protos::{DataSourceConfig, TracePacketDecoder};

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

#[inline(never)]
fn keep_100k() -> Vec<u8> {
    std::hint::black_box(vec![7u8; 100_000])
}

#[inline(never)]
fn churn_50k() {
    let v = std::hint::black_box(vec![1u8; 50_000]);
    drop(v);
}

#[inline(never)]
fn grow_to_64k() -> Vec<u64> {
    // A realloc chain: each step a free of the old block and an
    // allocation of the new one.
    let mut v: Vec<u64> = Vec::with_capacity(1024);
    for i in 0..8192u64 {
        v.push(std::hint::black_box(i));
    }
    v
}

fn heapprofd_config(f: impl FnOnce(&mut zerotrace_protos::protos::HeapprofdConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = DataSourceConfig::from_message(w.root());
        c.set_name("android.heapprofd");
        let mut h = c.begin_heapprofd_config();
        f(&mut h);
    }
    w.finish().unwrap()
}

/// Every callstack of the trace by iid, as function names leaf first.
fn callstacks(packets: &[Vec<u8>]) -> HashMap<u64, Vec<String>> {
    let mut names = HashMap::new();
    let mut frames = HashMap::new();
    let mut stacks = HashMap::new();
    for b in packets {
        let Some(d) = TracePacketDecoder::new(b).interned_data() else {
            continue;
        };
        for s in d.function_names() {
            names.insert(
                s.iid().unwrap(),
                String::from_utf8_lossy(s.str().unwrap_or(b"")).into_owned(),
            );
        }
        for f in d.frames() {
            frames.insert(f.iid().unwrap(), f.function_name_id().unwrap_or(0));
        }
        for c in d.callstacks() {
            stacks.insert(c.iid().unwrap(), c.frame_ids().collect::<Vec<u64>>());
        }
    }
    stacks
        .into_iter()
        .map(|(iid, ids)| {
            let mut named: Vec<String> = ids
                .iter()
                .map(|f| names.get(&frames[f]).cloned().unwrap_or_default())
                .collect();
            named.reverse();
            (iid, named)
        })
        .collect()
}

fn packets(trace: &[u8]) -> Vec<Vec<u8>> {
    protozero::Decoder::new(trace)
        .filter_map(|f| f.ok())
        .filter(|f| f.id == 1)
        .filter_map(|f| f.as_bytes().ok().map(<[u8]>::to_vec))
        .collect()
}

/// (allocated, freed, alloc_count, free_count) summed over the last
/// dump's callstacks that pass through `function`.
fn totals_through(packets: &[Vec<u8>], function: &str) -> (u64, u64, u64, u64) {
    let stacks = callstacks(packets);
    // The last dump: the samples after the last closing packet but one.
    let mut dumps: Vec<Vec<(u64, u64, u64, u64, u64)>> = vec![Vec::new()];
    for b in packets {
        let p = TracePacketDecoder::new(b);
        let Some(pp) = p.profile_packet() else {
            continue;
        };
        for d in pp.process_dumps() {
            assert_eq!(d.heap_name(), Some(RUST_HEAP));
            assert_eq!(d.sampling_interval_bytes(), Some(1));
            for s in d.samples() {
                dumps.last_mut().unwrap().push((
                    s.callstack_id().unwrap(),
                    s.self_allocated().unwrap_or(0),
                    s.self_freed().unwrap_or(0),
                    s.alloc_count().unwrap_or(0),
                    s.free_count().unwrap_or(0),
                ));
            }
        }
        if !pp.continued().unwrap_or(false) {
            dumps.push(Vec::new());
        }
    }
    dumps.retain(|d| !d.is_empty());
    let last = dumps.last().expect("a dump");
    let mut t = (0, 0, 0, 0);
    for (iid, a, f, ac, fc) in last {
        let names = &stacks[iid];
        if names.iter().any(|n| n.ends_with(function)) {
            if std::env::var_os("HEAP_PROFILE_DEBUG").is_some() {
                eprintln!("{function}: {a} {f} {ac} {fc}: {names:?}");
            }
            // Unwound to the thread's start, no error, and the leaf is the
            // allocator's entry, not the profiler's own frames.
            assert!(
                names.iter().any(|n| n.ends_with("thread_start")),
                "{names:?}"
            );
            assert!(!names.iter().any(|n| n.starts_with("ERROR")), "{names:?}");
            assert!(
                names[0].contains("__rust_alloc") || names[0].contains("__rust_realloc"),
                "{names:?}"
            );
            t.0 += a;
            t.1 += f;
            t.2 += ac;
            t.3 += fc;
        }
    }
    t
}

#[test]
fn exact_mode_counts_every_byte_and_block_of_each_callstack() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("heap_profile_exact.pftrace");
    let cfg = InProcessConfig {
        data_source_configs: vec![heapprofd_config(|h| {
            h.set_sampling_interval_bytes(1)
                .add_pid(u64::from(std::process::id()));
        })],
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&[], cfg).expect("session");
    register(session.producer()).expect("registered");
    session
        .producer()
        .wait_for_start("android.heapprofd", Duration::from_secs(10))
        .expect("started");

    let kept: Vec<Vec<u8>> = (0..3).map(|_| keep_100k()).collect();
    for _ in 0..4 {
        churn_50k();
    }
    let grown = grow_to_64k();

    session.stop(&out).expect("stopped");
    let trace = std::fs::read(&out).unwrap();
    let packets = packets(&trace);

    assert_eq!(
        totals_through(&packets, "keep_100k"),
        (300_000, 0, 3, 0),
        "three blocks of 100,000 bytes, all live"
    );
    assert_eq!(
        totals_through(&packets, "churn_50k"),
        (200_000, 200_000, 4, 4),
        "four blocks of 50,000 bytes, all freed"
    );
    // 1024 -> 2048 -> 4096 -> 8192 elements of 8 bytes: 8 + 16 + 32 + 64
    // KiB allocated, all but the last freed.
    let (a, f, ac, fc) = totals_through(&packets, "grow_to_64k");
    assert_eq!((a, f, ac, fc), (122_880, 57_344, 4, 3));
    drop((kept, grown));
}
