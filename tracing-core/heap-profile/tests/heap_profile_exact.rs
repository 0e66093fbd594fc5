//! The heap profiler end to end in a Rust program: `HeapProfiler` as the
//! global allocator, `android.heapprofd` registered with an in-process
//! session, known allocations in known functions (from several threads),
//! and the trace read back: in exact mode (`sampling_interval_bytes: 1`)
//! each function's callstacks hold exactly the bytes and blocks it
//! allocated and freed, as the design says and as valgrind's DHAT counts
//! them for the same workload (this binary run again under
//! `valgrind --tool=dhat`, in fixture mode: no session, so every
//! allocation goes straight to malloc, where DHAT sees it).
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, RUST_HEAP, register};
use zerotrace_protos::protos::{DataSourceConfig, TracePacketDecoder};

/// Per function: (bytes, blocks, bytes live at the end, blocks live).
type Totals = HashMap<&'static str, (u64, u64, u64, u64)>;
/// A dump's samples: (callstack, allocated, freed, allocs, frees).
type DumpRows = Vec<(u64, u64, u64, u64, u64)>;

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

#[inline(never)]
fn box_1000(v: u8) -> Box<[u8; 1000]> {
    std::hint::black_box(Box::new([v; 1000]))
}

// Each box is its own heap block: the allocations counted.
#[allow(clippy::vec_box)]
#[inline(never)]
fn thread_work(i: usize) -> Vec<Box<[u8; 1000]>> {
    let mut kept = Vec::new();
    for j in 0..(i + 1) * 10 {
        let b = box_1000(i as u8);
        if j % 2 == 0 {
            kept.push(b);
        }
    }
    kept
}

/// The allocations both runs compare, and what they keep to the end.
#[allow(clippy::type_complexity, clippy::vec_box)]
fn workload() -> (Vec<Vec<u8>>, Vec<u64>, Vec<Vec<Box<[u8; 1000]>>>) {
    let kept: Vec<Vec<u8>> = (0..3).map(|_| keep_100k()).collect();
    for _ in 0..4 {
        churn_50k();
    }
    let grown = grow_to_64k();
    let threads: Vec<_> = (0..3)
        .map(|i| std::thread::spawn(move || thread_work(i)))
        .collect();
    let from_threads = threads.into_iter().map(|t| t.join().unwrap()).collect();
    (kept, grown, from_threads)
}

/// The functions compared, and DHAT's spelling of each frame's name.
const FUNCTIONS: &[&str] = &[
    "keep_100k",
    "churn_50k",
    "grow_to_64k",
    "box_1000",
    "thread_work",
];

/// Set in the run under valgrind: do the workload only.
const FIXTURE_VAR: &str = "ZEROTRACE_HEAP_FIXTURE";

/// The workload's profile, taken once: a process has one in-process
/// session.
static PROFILE: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();

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
    let mut dumps: Vec<DumpRows> = vec![Vec::new()];
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
            // Unwound to the thread's start, with no error and none of the
            // profiler's own frames.
            assert!(
                names.iter().any(|n| n.ends_with("thread_start")),
                "{names:?}"
            );
            assert!(!names.iter().any(|n| n.starts_with("ERROR")), "{names:?}");
            assert!(
                !names.iter().any(|n| n.contains("zerotrace_heap_profile")),
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

/// The workload profiled in exact mode (once); the trace's packets.
fn profile_workload() -> &'static [Vec<u8>] {
    PROFILE.get_or_init(profile_once)
}

fn profile_once() -> Vec<Vec<u8>> {
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
    let kept = workload();
    session.stop(&out).expect("stopped");
    drop(kept);
    packets(&std::fs::read(&out).unwrap())
}

#[test]
fn exact_mode_counts_every_byte_and_block_of_each_callstack() {
    if std::env::var_os(FIXTURE_VAR).is_some() {
        return;
    }
    let packets = profile_workload();
    assert_eq!(
        totals_through(packets, "keep_100k"),
        (300_000, 0, 3, 0),
        "three blocks of 100,000 bytes, all live"
    );
    assert_eq!(
        totals_through(packets, "churn_50k"),
        (200_000, 200_000, 4, 4),
        "four blocks of 50,000 bytes, all freed"
    );
    // 1024 -> 2048 -> 4096 -> 8192 elements of 8 bytes: 8 + 16 + 32 + 64
    // KiB allocated, all but the last freed.
    assert_eq!(
        totals_through(packets, "grow_to_64k"),
        (122_880, 57_344, 4, 3)
    );
    // Threads 0, 1, 2: 10, 20, 30 boxes of 1000 bytes, every other one
    // kept.
    assert_eq!(
        totals_through(packets, "box_1000"),
        (60_000, 30_000, 60, 30)
    );
}

/// DHAT's totals per function of the workload run under valgrind: (total
/// bytes, total blocks, bytes live at the end, blocks live at the end).
fn dhat_totals() -> Option<Totals> {
    let required = std::env::var("ZEROTRACE_REQUIRE_VALGRIND").is_ok_and(|v| v == "1");
    let has = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            !required,
            "valgrind is required here (ZEROTRACE_REQUIRE_VALGRIND=1)"
        );
        eprintln!("valgrind not installed: the DHAT comparison did not run");
        return None;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("heap_profile_dhat.json");
    let run = std::process::Command::new("valgrind")
        .arg("--tool=dhat")
        .arg(format!("--dhat-out-file={}", out.display()))
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dhat_agrees_with_the_exact_profile",
            "--test-threads=1",
        ])
        .env(FIXTURE_VAR, "1")
        .output()
        .expect("valgrind runs");
    assert!(
        run.status.success(),
        "valgrind: {}",
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
            let spelled = format!("::{f} (");
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
    Some(totals)
}

#[test]
fn dhat_agrees_with_the_exact_profile() {
    if std::env::var_os(FIXTURE_VAR).is_some() {
        // Under valgrind: the workload alone, its kept blocks live at exit.
        std::mem::forget(workload());
        return;
    }
    let Some(dhat) = dhat_totals() else {
        return;
    };
    let packets = profile_workload();
    for f in FUNCTIONS {
        let (a, fr, ac, fc) = totals_through(packets, f);
        let ours = (a, ac, a - fr, ac - fc);
        assert_eq!(
            Some(&ours),
            dhat.get(f),
            "{f}: ours (bytes, blocks, bytes live, blocks live) against DHAT's"
        );
    }
}

/// The profile's packets decoded by Google's protoc with upstream's own
/// `trace.proto`: every field is one upstream declares.
#[test]
fn protoc_decodes_the_profile_with_upstreams_schema_and_no_unknown_field() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    if std::env::var_os(FIXTURE_VAR).is_some() {
        return;
    }
    let protoc =
        protoc_bin_vendored::protoc_bin_path().expect("a vendored protoc for this platform");
    let root = zerotrace_schema_pipeline::upstream_root().expect("the upstream schema");
    let mut w = HeapWriter::new();
    {
        let mut trace = w.root();
        // The heap profile's own packets (the service's, such as its
        // newer trace_provenance, are not ours to check here).
        for p in profile_workload() {
            let d = TracePacketDecoder::new(p);
            if d.profile_packet().is_some() || d.interned_data().is_some() {
                trace.append_bytes(1, p);
            }
        }
    }
    let bytes = w.finish().unwrap();
    let mut child = Command::new(&protoc)
        .arg(format!("-I{}", root.display()))
        .arg("--decode=perfetto.protos.Trace")
        .arg("protos/perfetto/trace/trace.proto")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn protoc");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().expect("protoc runs");
    feeder.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "protoc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // Unknown fields print as bare numbers (`74: ...`).
    let unknown: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(unknown.is_empty(), "unknown fields: {unknown:?}");
    for needle in [
        "profile_packet {",
        "process_dumps {",
        "heap_name: \"rust.global_alloc\"",
        "sampling_interval_bytes: 1",
        "self_allocated: 300000",
        "callstacks {",
        "frame_ids:",
        "function_names {",
        "continued: true",
        "sequence_flags: 1",
    ] {
        assert!(text.contains(needle), "{needle} not in the decoded trace");
    }
}
