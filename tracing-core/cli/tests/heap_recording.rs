//! The heap viewers over a real recording: this test binary runs with
//! zerotrace's `HeapProfiler` as its global allocator, profiles a known
//! workload in exact mode (`sampling_interval_bytes: 1`) through an
//! in-process session with `android.heapprofd`, writes the trace, and
//! hands it to `zerotrace flamegraph --heap`, `stats` and `convert
//! --format pprof`: each workload function's bytes and allocations must
//! be what it allocated and kept, in the SVG, in stats, and in Go's own
//! pprof (`go tool pprof -top`; without Go it says so in one line and
//! passes, unless `ZEROTRACE_REQUIRE_GO=1`).
//! (Its own test binary, not a module of `all/`: the heap profiler is its
//! global allocator, and its in-process session registers TrackEvent,
//! once per process.)
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, RUST_HEAP, register};
use zerotrace_protos::protos::DataSourceConfig;
use zerotrace_trace_processor::Value;
use zerotrace_trace_processor::profile_view::Profile;

mod tp_support;

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
fn workload() -> Vec<Vec<u8>> {
    let kept: Vec<Vec<u8>> = (0..3).map(|_| keep_100k()).collect();
    for _ in 0..4 {
        churn_50k();
    }
    kept
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn zerotrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zerotrace"))
}

/// The workload profiled in exact mode, written to a trace file.
fn record(dir: &Path) -> PathBuf {
    let out = dir.join("heap.pftrace");
    let mut w = HeapWriter::new();
    {
        let mut c = DataSourceConfig::from_message(w.root());
        c.set_name("android.heapprofd");
        c.begin_heapprofd_config()
            .set_sampling_interval_bytes(1)
            .add_pid(u64::from(std::process::id()));
    }
    let cfg = InProcessConfig {
        data_source_configs: vec![w.finish().unwrap()],
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&[], cfg).expect("session");
    register(session.producer()).expect("registered");
    session
        .producer()
        .wait_for_start("android.heapprofd", Duration::from_secs(10))
        .expect("started");
    let kept = workload();
    session.stop(&out).expect("stopped");
    drop(kept);
    out
}

/// The `name (N unit, P%)` tooltip of the frame whose name ends with
/// `function`: N.
fn svg_value(svg: &str, function: &str, unit: &str) -> Option<u64> {
    let at = svg.find(&format!("{function} ("))?;
    let rest = &svg[at + function.len() + 2..];
    let n = rest.split(&format!(" {unit}")).next()?;
    n.replace(',', "").parse().ok()
}

#[test]
fn a_recorded_heap_profile_reads_the_same_in_every_viewer() {
    let dir = std::env::temp_dir().join(format!("zt-heap-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = record(&dir);

    let svg = |view: &str| {
        let out = dir.join(format!("{view}.svg"));
        let o = zerotrace()
            .arg("flamegraph")
            .arg(&trace)
            .args(["--heap", view, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read_to_string(out).unwrap()
    };
    let unreleased = svg("unreleased");
    assert_eq!(
        svg_value(&unreleased, "keep_100k", "bytes"),
        Some(300_000),
        "three blocks of 100,000 bytes, all live"
    );
    assert_eq!(
        svg_value(&unreleased, "churn_50k", "bytes"),
        None,
        "all freed: no frame"
    );
    let total = svg("total");
    assert_eq!(svg_value(&total, "keep_100k", "bytes"), Some(300_000));
    assert_eq!(svg_value(&total, "churn_50k", "bytes"), Some(200_000));
    let count = svg("count");
    assert_eq!(svg_value(&count, "keep_100k", "allocations"), Some(3));
    assert_eq!(svg_value(&count, "churn_50k", "allocations"), Some(4));

    let o = zerotrace().arg("stats").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stats = text(&o.stdout);
    let pid = std::process::id();
    assert!(
        stats.contains(&format!("  pid {pid} heap {RUST_HEAP} at ")),
        "{stats}"
    );
    assert!(stats.contains("interval 1 B"), "{stats}");
    assert!(
        stats.contains("callstacks that do not resolve: none"),
        "{stats}"
    );

    // The trace processor's heap_profile_allocation, against the profile
    // view's reading of the same dumps: the live bytes of each callstack
    // (allocation rows minus free rows), and the allocations.
    let bytes = std::fs::read(&trace).unwrap();
    let tp = tp_support::load(&bytes);
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    let mut tp_live: Vec<i64> = tp_support::rows(
        &tp,
        &format!(
            "SELECT SUM(a.size) FROM heap_profile_allocation a JOIN process p USING (upid) \
             WHERE p.pid = {pid} GROUP BY a.callsite_id HAVING SUM(a.size) != 0"
        ),
    )
    .into_iter()
    .map(|r| match r[0] {
        Value::Int(v) => v,
        ref v => panic!("{v:?}"),
    })
    .collect();
    tp_live.sort_unstable();
    let profile = Profile::from_trace(&bytes).unwrap();
    let mut by_stack: std::collections::BTreeMap<Vec<usize>, i64> = Default::default();
    for dump in profile.last_heap_dumps(Some(u64::from(pid))) {
        for sample in &dump.samples {
            *by_stack.entry(sample.stack.clone()).or_default() +=
                sample.allocated as i64 - sample.freed as i64;
        }
    }
    let mut view_live: Vec<i64> = by_stack.into_values().filter(|v| *v != 0).collect();
    view_live.sort_unstable();
    assert!(!tp_live.is_empty());
    assert_eq!(tp_live, view_live, "live bytes per callsite");
    assert!(
        tp_live.contains(&300_000),
        "keep_100k's three blocks: {tp_live:?}"
    );

    let pb = dir.join("heap.pb.gz");
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&trace)
        .arg("-o")
        .arg(&pb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let required = std::env::var("ZEROTRACE_REQUIRE_GO").is_ok_and(|v| v == "1");
    let go = Command::new("go").arg("version").output();
    if !go.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(!required, "ZEROTRACE_REQUIRE_GO=1 but `go` cannot be run");
        eprintln!("skipped: no `go` to read the pprof profile (apt-get install golang-go)");
        return;
    }
    // A function's cum value in `go tool pprof -top` (its row's 4th column).
    let cum = |index: &str, function: &str| -> Option<u64> {
        let o = Command::new("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-nodecount=1000",
                "-symbolize=none",
                "-unit=B",
            ])
            .arg(format!("-sample_index={index}"))
            .arg(&pb)
            .env("HOME", &dir)
            .env("PPROF_TMPDIR", &dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "go tool pprof: {}", text(&o.stderr));
        let top = text(&o.stdout);
        top.lines().find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() >= 6 && cols[5..].join(" ").ends_with(function))
                .then(|| cols[3].trim_end_matches('B').parse().ok())
                .flatten()
        })
    };
    assert_eq!(cum("inuse_space", "keep_100k"), Some(300_000));
    assert_eq!(cum("alloc_space", "churn_50k"), Some(200_000));
    assert_eq!(cum("alloc_objects", "churn_50k"), Some(4));
    assert_eq!(cum("inuse_objects", "keep_100k"), Some(3));
}
