//! The viewers of heap dumps (Perfetto's `android.heapprofd` packets, as
//! zerotrace's heap profiler writes them) as a user runs them: `zerotrace
//! flamegraph --heap`, `convert --format pprof` read back by Go's own
//! pprof (`go tool pprof -top -sample_index=...`; without Go the oracle
//! says so in one line and passes, unless `ZEROTRACE_REQUIRE_GO=1`), and
//! the heap dumps' lines of `stats` and `dump`.

use crate::heap_support;
use crate::perf_support;
use crate::support::{text, zerotrace};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use heap_support::{HeapSeq, header, hf};
use perf_support::Trace;
use zerotrace_heap_profile::ClientError;
use zerotrace_trace_processor::profile_view::{HeapValue, Profile, heap_folded};

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-heap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// pid 42's malloc heap dumped twice (continuous dumps: the second, at
/// 200, holds the whole profile), pid 43's rust heap once, with flags and
/// stats, and pid 44's heap naming a callstack its sequence never defined.
fn trace() -> Trace {
    let mut t = Trace::default();
    let (main, work, leak, churn, cache, parse) = (
        hf("main", 1),
        hf("work", 2),
        hf("leak", 3),
        hf("churn", 4),
        hf("cache", 5),
        hf("parse", 6),
    );
    let mut a = HeapSeq::new(1);
    a.dump(
        &mut t,
        &header(42, "libc.malloc", 100, 4096),
        &[(&[main.clone(), work.clone(), leak.clone()], 8192, 0, 8, 0)],
    );
    a.dump(
        &mut t,
        &header(42, "libc.malloc", 200, 4096),
        &[
            (
                &[main.clone(), work.clone(), leak.clone()],
                30_000,
                0,
                30,
                0,
            ),
            (
                &[main.clone(), work.clone(), churn],
                50_000,
                45_000,
                100,
                90,
            ),
            (&[main.clone(), cache], 15_000, 0, 3, 0),
        ],
    );
    let mut b = HeapSeq::new(2);
    let mut h = header(43, "rust", 150, 8192);
    h.orig_sampling_interval_bytes = 4096;
    h.hit_guardrail = true;
    h.client_error = ClientError::HitTimeout;
    h.stats.unwinding_errors = 2;
    h.stats.heap_samples = 1234;
    b.dump(&mut t, &h, &[(&[main.clone(), parse], 10_000, 0, 10, 0)]);
    let mut c = HeapSeq::new(3);
    c.start(&mut t);
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(3).set_timestamp(160);
        let mut pp = p.begin_profile_packet();
        {
            let mut d = pp.add_process_dumps();
            d.set_pid(44)
                .set_timestamp(160)
                .set_heap_name("libc.malloc");
            d.add_samples()
                .set_callstack_id(77)
                .set_self_allocated(999)
                .set_alloc_count(1);
        }
        pp.set_continued(true).set_index(0);
    });
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(3).set_timestamp(160);
        p.begin_profile_packet().set_index(1);
    });
    t
}

fn write_trace(d: &Path) -> PathBuf {
    let p = d.join("heap.pftrace");
    std::fs::write(&p, trace().bytes()).unwrap();
    p
}

fn flamegraph(trace: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    zerotrace()
        .arg("flamegraph")
        .arg(trace)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn flamegraph_heap_draws_the_last_dumps_with_their_shares() {
    let d = dir("flame");
    let trace = write_trace(&d);
    let svg = d.join("heap.svg");
    let o = flamegraph(&trace, &svg, &["--heap", "unreleased"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("60000 bytes drawn; 1 samples with a value without a callstack"),
        "{}",
        text(&o.stderr)
    );
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<?xml") && s.contains("<script"));
    assert!(s.contains("Heap profile of"), "the title");
    assert!(s.contains("unreleased bytes"), "the title says what");
    // Of the last dumps: leak 30000, churn 50000-45000, cache 15000, and
    // pid 43's parse 10000; pid 42's first dump is not added in.
    for want in [
        "all (60,000 bytes, 100%)",
        "main (60,000 bytes, 100.00%)",
        "work (35,000 bytes, 58.33%)",
        "leak (30,000 bytes, 50.00%)",
        "churn (5,000 bytes, 8.33%)",
        "cache (15,000 bytes, 25.00%)",
        "parse (10,000 bytes, 16.67%)",
    ] {
        assert!(s.contains(want), "{want} not in the SVG");
    }

    let total = d.join("total.svg");
    let o = flamegraph(&trace, &total, &["--heap", "total", "--pid", "42"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = std::fs::read_to_string(&total).unwrap();
    assert!(s.contains("all (95,000 bytes, 100%)"), "30000+50000+15000");
    assert!(s.contains("churn (50,000 bytes, 52.63%)"));
    assert!(!s.contains("parse ("), "pid 43 left out");

    let count = d.join("count.svg");
    let o = flamegraph(&trace, &count, &["--heap", "count"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = std::fs::read_to_string(&count).unwrap();
    assert!(s.contains("all (143 allocations, 100%)"), "30+100+3+10");
    assert!(s.contains("churn (100 allocations, 69.93%)"));

    // Without --heap, a trace of heap dumps only says what to do.
    let o = flamegraph(&trace, &d.join("cpu.svg"), &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("holds no CPU samples but 4 heap dumps") && err.contains("--heap"),
        "{err}"
    );
    // --tid and a time window are the CPU samples'.
    let o = flamegraph(&trace, &d.join("x.svg"), &["--heap", "total", "--tid", "1"]);
    assert_eq!(o.status.code(), Some(2), "clap's usage error");
    // A pid without dumps: nothing to draw.
    let o = flamegraph(&trace, &d.join("x.svg"), &["--heap", "total", "--pid", "7"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("nothing to draw"));
}

/// Our own numbers for `value`: per function, the value where it is the
/// leaf (flat) and where the stack holds it (cum).
fn our_flat_and_cum(value: HeapValue) -> BTreeMap<String, (u64, u64)> {
    let t = trace();
    let p = Profile::from_trace(t.bytes()).unwrap();
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (stack, n) in heap_folded(&p, None, value).stacks {
        let names: Vec<&str> = stack.split(';').collect();
        let mut seen = std::collections::BTreeSet::new();
        for name in &names {
            if seen.insert(*name) {
                out.entry((*name).to_owned()).or_default().1 += n;
            }
        }
        out.entry((*names.last().unwrap()).to_owned())
            .or_default()
            .0 += n;
    }
    out
}

#[test]
fn heap_pprof_reads_the_same_in_go_tool_pprof() {
    let d = dir("pprof");
    let trace = write_trace(&d);
    let out = d.join("heap.pb.gz");
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&trace)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("1 heap samples of the last dumps left out"),
        "{}",
        text(&o.stderr)
    );
    let gz = std::fs::read(&out).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip");
    // --heap is pprof's only.
    let o = zerotrace()
        .args(["convert", "--heap"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));

    let required = std::env::var("ZEROTRACE_REQUIRE_GO").is_ok_and(|v| v == "1");
    let go = Command::new("go").arg("version").output();
    if !go.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(!required, "ZEROTRACE_REQUIRE_GO=1 but `go` cannot be run");
        eprintln!("skipped: no `go` to read the pprof profile (apt-get install golang-go)");
        return;
    }
    let pprof = |index: Option<&str>| {
        let mut c = Command::new("go");
        c.args([
            "tool",
            "pprof",
            "-top",
            "-nodecount=100",
            "-symbolize=none",
            "-unit=B",
        ]);
        if let Some(i) = index {
            c.arg(format!("-sample_index={i}"));
        }
        let o = c
            .arg(&out)
            .env("HOME", &d)
            .env("PPROF_TMPDIR", &d)
            .output()
            .unwrap();
        assert!(o.status.success(), "go tool pprof: {}", text(&o.stderr));
        text(&o.stdout)
    };
    // Rows: flat flat% sum% cum cum% name; byte values end in B.
    let rows = |top: &str| {
        let mut theirs: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for line in top.lines() {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 6 || !cols[1].ends_with('%') || !cols[4].ends_with('%') {
                continue;
            }
            let num = |s: &str| s.trim_end_matches('B').parse::<u64>();
            let (Ok(flat), Ok(cum)) = (num(cols[0]), num(cols[3])) else {
                continue;
            };
            theirs.insert(cols[5..].join(" "), (flat, cum));
        }
        theirs
    };
    let by_default = pprof(None);
    let inuse = pprof(Some("inuse_space"));
    assert_eq!(
        rows(&by_default),
        rows(&inuse),
        "inuse_space is the default"
    );
    let ours = our_flat_and_cum(HeapValue::Unreleased);
    assert_eq!(rows(&inuse), ours, "go tool pprof -top:\n{inuse}");
    // Known answers, so that both readers cannot agree on nothing.
    assert_eq!(ours["leak"], (30_000, 30_000));
    assert_eq!(ours["work"], (0, 35_000));
    assert_eq!(ours["main"], (0, 60_000));
    assert!(inuse.contains("of 60000B total"), "{inuse}");

    let alloc = pprof(Some("alloc_space"));
    assert_eq!(rows(&alloc), our_flat_and_cum(HeapValue::Total), "{alloc}");
    let objects = pprof(Some("alloc_objects"));
    assert_eq!(
        rows(&objects),
        our_flat_and_cum(HeapValue::Count),
        "{objects}"
    );
}

#[test]
fn stats_and_dump_show_the_heap_dumps() {
    let d = dir("stats");
    let trace = write_trace(&d);
    let o = zerotrace().arg("stats").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    for want in [
        "cpu samples (linux.perf): none",
        "heap dumps (android.heapprofd): 4 of 3 processes' heaps, 6 callstack lines",
        "  pid 42 heap libc.malloc at 100 (sequence 1): interval 4096 B, 1 callstacks",
        "    allocated 8192 B in 8 allocations, freed 0 B in 0 frees, live 8192 B in 8 allocations",
        "  pid 42 heap libc.malloc at 200 (sequence 1): interval 4096 B, 3 callstacks",
        "    allocated 95000 B in 133 allocations, freed 45000 B in 90 frees, live 50000 B in 43 allocations",
        "  pid 43 heap rust at 150 (sequence 2): interval 8192 B (configured 4096 B), 1 callstacks",
        "    flags: hit_guardrail, client_error CLIENT_ERROR_HIT_TIMEOUT; stats: unwinding_errors 2, heap_samples 1234",
        "  pid 44 heap libc.malloc at 160 (sequence 3)",
        "    flags: none; stats: none",
        "  callstacks that do not resolve: 1 samples (by the first id that does not: callstack 1)",
    ] {
        assert!(s.contains(want), "{want:?} not in:\n{s}");
    }

    let o = zerotrace().arg("dump").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dump = text(&o.stdout);
    assert!(
        dump.contains(
            "# heap sample: callstack_id 2, allocated 50000 freed 45000 (100 allocations, 90 frees); \
             callstack (3 frames, root first): main > work > churn"
        ),
        "{dump}"
    );
    assert!(dump.contains(
        "# heap sample: callstack_id 77, allocated 999 freed 0 (1 allocations, 0 frees); \
         callstack does not resolve: callstack iid 77 is not interned"
    ));
}
