//! The preload library on a C program of our own
//! (`tests/fixture/heap_fixture.c`, built here with the system's C
//! compiler): run under `LD_PRELOAD` against a tracing service of this
//! test's own, with `sampling_interval_bytes: 1` and a blocking init, its
//! profile must equal what valgrind's DHAT counts for the same program,
//! per function: total bytes and blocks, and bytes and blocks live at
//! exit (malloc, free, a realloc chain, calloc, posix_memalign, three
//! threads). The dump is the one written at exit (`disconnected`), from
//! the process's start (`from_startup`), and decodes with our decoders.
//! A second fixture (`tests/fixture/fork_fixture.c`) checks the split: the
//! program starts no thread, its fork child is not profiled, with no
//! service it runs unchanged; and adaptive sampling end to end.
#![cfg(target_os = "linux")]

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

use support::{Totals, fixture, library, profile, tmp};

const FUNCTIONS: &[&str] = &[
    "keep_100k",
    "churn_50k",
    "grow_to_16k",
    "zeroed_4000",
    "aligned_3000",
    "thread_box",
];

fn valgrind_present() -> bool {
    let required = std::env::var("ZEROTRACE_REQUIRE_VALGRIND").is_ok_and(|v| v == "1");
    let has = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !required,
            "valgrind is required here (ZEROTRACE_REQUIRE_VALGRIND=1)"
        );
        eprintln!("valgrind not installed: the preload's DHAT comparison did not run");
    }
    has
}

/// DHAT's (total bytes, total blocks, bytes at exit, blocks at exit) per
/// function.
fn dhat(bin: &Path) -> Totals {
    let out = tmp().join("heap_fixture.dhat.json");
    let run = Command::new("valgrind")
        .arg("--tool=dhat")
        .arg(format!("--dhat-out-file={}", out.display()))
        .arg(bin)
        .output()
        .expect("valgrind runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let ftbl: Vec<&str> = json["ftbl"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let mut totals = HashMap::new();
    for pp in json["pps"].as_array().unwrap() {
        let frames: Vec<&str> = pp["fs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| ftbl[i.as_u64().unwrap() as usize])
            .collect();
        for f in FUNCTIONS {
            let spelled = format!(": {f} (");
            if frames.iter().any(|fr| fr.contains(&spelled)) {
                let t: &mut (u64, u64, u64, u64) = totals.entry(*f).or_default();
                let n = |k: &str| pp[k].as_u64().unwrap();
                t.0 += n("tb");
                t.1 += n("tbk");
                t.2 += n("eb");
                t.3 += n("ebk");
            }
        }
    }
    totals
}

/// A session of `cmdline` in exact mode (at [`SAMPLED_INTERVAL`] for the
/// `sampled_fixture`), with adaptive sampling's (threshold, cap) when not
/// zero.
fn trace_config_with(cmdline: &str, adaptive: (u64, u64)) -> Vec<u8> {
    let interval = if cmdline.starts_with("sampled") {
        SAMPLED_INTERVAL
    } else {
        1
    };
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(32 * 1024);
        let mut ds = c.add_data_sources();
        let mut dc = ds.begin_config();
        dc.set_name("android.heapprofd");
        let mut h = dc.begin_heapprofd_config();
        // Whole profiles: the client waits for room rather than stop.
        h.set_sampling_interval_bytes(interval)
            .set_block_client(true)
            .add_process_cmdline(cmdline);
        if adaptive.0 > 0 {
            h.set_adaptive_sampling_shmem_threshold(adaptive.0)
                .set_adaptive_sampling_max_sampling_interval_bytes(adaptive.1);
        }
    }
    w.finish().unwrap()
}

/// The fixture run under the preload library into a session of a service
/// of our own; the trace and the fixture's standard output.
fn ours(bin: &Path) -> (Vec<u8>, String) {
    ours_with(bin, (0, 0))
}

/// As [`ours`], with adaptive sampling's (threshold, cap).
fn ours_with(bin: &Path, adaptive: (u64, u64)) -> (Vec<u8>, String) {
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let base = format!(
        "zerotrace-preload-test-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let service = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![Endpoint::Abstract(format!("{base}-p"))],
        consumer_socket: Endpoint::Abstract(format!("{base}-c")),
        log_level: 0,
        ..DaemonConfig::default()
    })
    .expect("service");
    let p_ep = service.producer_endpoints()[0].clone();
    let mut consumer = ConsumerClient::connect(service.consumer_endpoint()).expect("consumer");
    let session = consumer
        .enable_tracing(
            &trace_config_with(&bin.file_name().unwrap().to_string_lossy(), adaptive),
            None,
        )
        .expect("session");
    let run = Command::new(bin)
        .env("LD_PRELOAD", library())
        .env("PERFETTO_PRODUCER_SOCK_NAME", p_ep.to_string())
        .env("PERFETTO_HEAPPROFD_BLOCKING_INIT", "1")
        .output()
        .expect("the fixture runs");
    assert!(
        run.status.success(),
        "fixture: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    consumer.disable_tracing().expect("disable");
    consumer
        .wait_for_end(session, Some(Duration::from_secs(30)))
        .expect("end");
    let trace = consumer.read_trace().expect("trace");
    drop(service);
    (trace, String::from_utf8_lossy(&run.stdout).into_owned())
}

#[test]
fn a_c_programs_profile_equals_dhats_counts() {
    let bin = fixture("heap_fixture");
    let (trace, _) = ours(&bin);
    let (got, (from_startup, disconnected), _) = profile(&trace, FUNCTIONS);
    assert!(from_startup, "profiled from its start (blocking init)");
    assert!(disconnected, "the last dump is the one written at exit");
    // The design's own figures, whatever valgrind says.
    assert_eq!(got.get("keep_100k"), Some(&(300_000, 3, 300_000, 3)));
    assert_eq!(got.get("churn_50k"), Some(&(200_000, 4, 0, 0)));
    assert_eq!(got.get("zeroed_4000"), Some(&(4000, 1, 4000, 1)));
    assert_eq!(got.get("aligned_3000"), Some(&(3000, 1, 3000, 1)));
    assert_eq!(got.get("thread_box"), Some(&(60_000, 60, 30_000, 30)));
    if !valgrind_present() {
        return;
    }
    let want = dhat(&bin);
    for f in FUNCTIONS {
        assert_eq!(
            got.get(f),
            want.get(f),
            "{f}: ours (bytes, blocks, bytes live, blocks live) against DHAT's"
        );
    }
}

/// heapprofd's split: the profiled program starts no thread (its helper
/// is a process of its own), its fork child is not profiled, and the
/// profile is the parent's alone.
#[test]
fn the_program_starts_no_thread_and_its_fork_child_is_not_profiled() {
    let bin = fixture("fork_fixture");
    let (trace, stdout) = ours(&bin);
    assert!(stdout.contains("threads 1\n"), "{stdout}");
    assert!(stdout.contains("child 0\n"), "{stdout}");
    let functions = &["parent_before", "child_only", "parent_after"];
    let (got, (from_startup, disconnected), mut pids) = profile(&trace, functions);
    assert!(from_startup && disconnected);
    assert_eq!(got.get("parent_before"), Some(&(10_000, 10, 10_000, 10)));
    assert_eq!(got.get("parent_after"), Some(&(3500, 5, 3500, 5)));
    assert_eq!(
        got.get("child_only"),
        None,
        "the fork child is not profiled"
    );
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 1, "one process profiled: {pids:?}");
}

/// With no service at all, the program runs as it would without the
/// library: same output, same exit status, and its output's pipe closes
/// when it exits (the helper holds none of the program's descriptors).
#[test]
fn with_no_service_the_program_runs_unchanged() {
    let bin = fixture("fork_fixture");
    let started = std::time::Instant::now();
    let run = Command::new(&bin)
        .env("LD_PRELOAD", library())
        .env(
            "PERFETTO_PRODUCER_SOCK_NAME",
            format!("@zerotrace-preload-nothing-{}", std::process::id()),
        )
        .output()
        .expect("the fixture runs");
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "threads 1\nchild 0\n");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the output's pipes closed with the program"
    );
}

/// The sampled fixture's interval, as one runs the profiler in production.
const SAMPLED_INTERVAL: u64 = 4096;

/// Sampled mode (4096 bytes) on a C program: a callstack that allocated N
/// bytes in blocks smaller than the interval I is sampled Poisson(N/I)
/// times and estimated at I per sample, so its estimate has mean N and
/// standard deviation sqrt(N*I); each function's estimate must lie within
/// 5 of those (a false failure about once in 1.7 million runs), and blocks
/// of at least I bytes are counted exactly.
#[test]
fn sampled_totals_lie_within_the_bound_the_interval_implies() {
    let bin = fixture("sampled_fixture");
    let (trace, _) = ours(&bin);
    let functions = &["small_a", "small_b", "small_c", "large"];
    let (got, _, _) = profile(&trace, functions);
    let total = 400_000.0 * 48.0;
    for (f, share) in [("small_a", 0.6), ("small_b", 0.3), ("small_c", 0.1)] {
        let n = total * share;
        let est = got.get(f).map_or(0, |t| t.0) as f64;
        let z = (est - n) / (n * SAMPLED_INTERVAL as f64).sqrt();
        assert!(
            z.abs() < 5.0,
            "{f}: estimated {est} of {n} bytes (z = {z:.2})"
        );
    }
    assert_eq!(
        got.get("large"),
        Some(&(819_200, 100, 819_200, 100)),
        "blocks above the interval, exactly"
    );
}

/// Adaptive sampling, end to end: with the pending records above the
/// threshold, the client doubles the interval up to the cap, and the
/// dumps say so (the interval in force, the original one).
#[test]
fn adaptive_sampling_raises_the_interval_up_to_its_cap() {
    let bin = fixture("fork_fixture");
    let (trace, _) = ours_with(&bin, (1024, 64));
    let mut intervals = Vec::new();
    for f in protozero::Decoder::new(&trace).filter_map(Result::ok) {
        let Ok(b) = f.as_bytes() else { continue };
        if f.id != 1 {
            continue;
        }
        if let Some(pp) = TracePacketDecoder::new(b).profile_packet() {
            for d in pp.process_dumps() {
                intervals.push((
                    d.sampling_interval_bytes().unwrap_or(0),
                    d.orig_sampling_interval_bytes().unwrap_or(0),
                ));
            }
        }
    }
    assert_eq!(
        intervals.last(),
        Some(&(64, 1)),
        "raised from 1 to the cap: {intervals:?}"
    );
}
