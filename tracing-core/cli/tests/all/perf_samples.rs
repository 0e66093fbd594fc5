//! The viewers of CPU samples (Perfetto's `linux.perf` packets) as a user
//! runs them: `zerotrace flamegraph`, `convert --format pprof` read back by
//! Go's own pprof (`go tool pprof -top`, Debian's golang-go; without Go
//! the oracle says so in one line and passes, unless
//! `ZEROTRACE_REQUIRE_GO=1`, which CI sets), and the samples' lines of
//! `stats` and `dump`, over synthetic traces written with the generated
//! writers.

use crate::perf_support;
use crate::support::{flamegraph_svg, text, zerotrace};
use crate::tp_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use perf_support::{Fr, PerfSeq, Trace, app};
use zerotrace_protos::protos::perf_sample::SampleSkipReason;
use zerotrace_protos::protos::profiling::StackUnwindError;
use zerotrace_trace_processor::profile_view::{Filter, Profile, folded};

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-perf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Two processes on two sequences: pid 100 (threads 101, 102) sampled
/// by a cpu-clock period of 250 µs, pid 200 on another sequence, with an
/// unnamed frame in libc, symbols appended at the end for two unnamed
/// frames of `/bin/app` (one with an inlined function), and losses.
fn trace() -> Trace {
    let mut t = Trace::default();
    let mut a = PerfSeq::new(11);
    let mut b = PerfSeq::new(12);
    a.start(&mut t, Some(250_000));
    b.start(&mut t, Some(250_000));
    let libc = Fr {
        name: None,
        path: "/usr/lib/libc.so.6",
        build_id: b"\xcc\xdd",
        rel_pc: 0x9a0,
    };
    let anon = |pc| Fr {
        name: None,
        path: "/bin/app",
        build_id: b"\x01\x02\x03\x04",
        rel_pc: pc,
    };
    for ts in 0..6 {
        a.sample(
            &mut t,
            1000 + ts,
            100,
            101,
            &[app("main", 1), app("hot", 2)],
        );
    }
    for ts in 0..3 {
        a.sample(
            &mut t,
            2000 + ts,
            100,
            102,
            &[app("main", 1), app("cold", 3), libc],
        );
    }
    for ts in 0..4 {
        b.sample(&mut t, 3000 + ts, 200, 200, &[anon(0x40), anon(0x50)]);
    }
    a.raw_sample(&mut t, 4000, |p| {
        p.set_kernel_records_lost(17);
    });
    a.raw_sample(&mut t, 4001, |p| {
        p.set_pid(100)
            .set_sample_skipped_reason(SampleSkipReason::ProfilerSkipReadStage);
    });
    a.raw_sample(&mut t, 4002, |p| {
        p.set_pid(100)
            .set_tid(101)
            .set_unwind_error(StackUnwindError::UnwindErrorMemoryInvalid)
            .set_callstack_iid(4242);
    });
    t.module_symbols(
        "/bin/app",
        b"\x01\x02\x03\x04",
        &[
            (0x40, &["server_loop"]),
            (0x50, &["parse_inlined", "handle"]),
        ],
    );
    t
}

fn write_trace(d: &Path) -> PathBuf {
    let p = d.join("perf.pftrace");
    std::fs::write(&p, trace().bytes()).unwrap();
    p
}

/// Our own numbers: per function, samples where it is the leaf (flat) and
/// samples whose stack holds it (cum).
fn our_flat_and_cum() -> BTreeMap<String, (u64, u64)> {
    let t = trace();
    let p = Profile::from_trace(t.bytes()).unwrap();
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (stack, n) in folded(&p, &Filter::default()).stacks {
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
fn flamegraph_draws_the_expected_frames_with_their_counts() {
    let d = dir("flame");
    let trace = write_trace(&d);
    let svg = d.join("cpu.svg");
    let o = zerotrace()
        .arg("flamegraph")
        .arg(&trace)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("13 samples drawn; 1 without a callstack"),
        "{}",
        text(&o.stderr)
    );
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<?xml"), "an SVG");
    assert!(s.contains("<script"), "interactive");
    // inferno's tooltips: `name (N samples, P%)` of the 13 samples drawn.
    for want in [
        "main (9 samples, 69.23%)",
        "hot (6 samples, 46.15%)",
        "cold (3 samples, 23.08%)",
        "libc.so.6+0x9a0 (3 samples, 23.08%)",
        "server_loop (4 samples, 30.77%)",
        "handle (4 samples, 30.77%)",
        "parse_inlined (4 samples, 30.77%)",
        "all (13 samples, 100%)",
    ] {
        assert!(s.contains(want), "{want} not in the SVG");
    }

    // One process, one thread, a time window.
    let only = |args: &[&str]| flamegraph_svg(&trace, &d.join("only.svg"), args);
    let pid = only(&["--pid", "200"]);
    assert!(pid.contains("server_loop (4 samples, 100.00%)"));
    assert!(!pid.contains("main ("));
    let tid = only(&["--tid", "102"]);
    assert!(tid.contains("cold (3 samples, 100.00%)") && !tid.contains("hot ("));
    let window = only(&["--from", "1004", "--to", "2000"]);
    assert!(window.contains("all (3 samples, 100%)"), "1004, 1005, 2000");
    assert!(window.contains("hot (2 samples"));

    // Nothing to draw: a clear error.
    let o = zerotrace()
        .arg("flamegraph")
        .arg(&trace)
        .args(["--pid", "999", "-o"])
        .arg(d.join("none.svg"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("nothing to draw"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn pprof_profile_reads_the_same_in_go_tool_pprof() {
    let d = dir("pprof");
    let trace = write_trace(&d);
    let out = d.join("cpu.pb.gz");
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&trace)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let gz = std::fs::read(&out).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip");

    let required = std::env::var("ZEROTRACE_REQUIRE_GO").is_ok_and(|v| v == "1");
    let go = Command::new("go").arg("version").output();
    if !go.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(!required, "ZEROTRACE_REQUIRE_GO=1 but `go` cannot be run");
        eprintln!("skipped: no `go` to read the pprof profile (apt-get install golang-go)");
        return;
    }
    let pprof = |index: &str| {
        let o = Command::new("go")
            .args(["tool", "pprof", "-top", "-nodecount=100", "-symbolize=none"])
            .arg(format!("-sample_index={index}"))
            .arg(&out)
            .env("HOME", &d)
            .env("PPROF_TMPDIR", &d)
            .output()
            .unwrap();
        assert!(o.status.success(), "go tool pprof: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let top = pprof("samples");
    // Rows: flat flat% sum% cum cum% name.
    let mut theirs: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut inlined_seen = Vec::new();
    for line in top.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 6 || !cols[1].ends_with('%') || !cols[4].ends_with('%') {
            continue;
        }
        let (Ok(flat), Ok(cum)) = (cols[0].parse(), cols[3].parse()) else {
            continue;
        };
        // Go marks a function inlined into its caller so.
        let name = cols[5..].join(" ");
        if let Some(inlined) = name.strip_suffix(" (inline)") {
            inlined_seen.push(inlined.to_owned());
        }
        let name = name.trim_end_matches(" (inline)").to_owned();
        theirs.insert(name, (flat, cum));
    }
    let ours = our_flat_and_cum();
    assert_eq!(theirs, ours, "go tool pprof -top:\n{top}");
    // Known answers, so that both readers cannot agree on nothing.
    assert_eq!(ours["hot"], (6, 6));
    assert_eq!(ours["main"], (0, 9));
    assert_eq!(ours["libc.so.6+0x9a0"], (3, 3));
    assert_eq!(ours["parse_inlined"], (4, 4));
    assert_eq!(ours["handle"], (0, 4));
    assert!(top.contains("of 13 total"), "{top}");
    assert_eq!(
        inlined_seen,
        ["parse_inlined"],
        "the one inlined function, as such"
    );
    // The cpu-clock period: 13 samples of 250 µs.
    let cpu = pprof("cpu");
    assert!(cpu.contains("of 3250us total"), "{cpu}");
}

#[test]
fn stats_and_dump_show_the_samples() {
    let d = dir("stats");
    let trace = write_trace(&d);
    let o = zerotrace().arg("stats").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    for want in [
        "cpu samples (linux.perf): 14, 1 whose callstack does not resolve (by the first id that does not: callstack 1)",
        "(2 processes)",
        "(3 threads)",
        "kernel records lost: 17",
        "skipped samples: 1 (PROFILER_SKIP_READ_STAGE 1)",
        "unwind errors: 1 (UNWIND_ERROR_MEMORY_INVALID 1)",
    ] {
        assert!(s.contains(want), "{want:?} not in:\n{s}");
    }
    let row = |label: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("{label} in\n{s}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("pid 100")[2], "10", "9 stacks and the unwind error");
    assert_eq!(row("pid 200")[2], "4");
    assert_eq!(row("tid 101 (pid 100)")[4], "7");

    let o = zerotrace().arg("dump").arg(&trace).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dump = text(&o.stdout);
    assert!(
        dump.contains(
            "# perf_sample: pid 100 tid 102 cpu 1 MODE_USER; callstack (3 frames, root first): \
             main > cold > libc.so.6+0x9a0"
        ),
        "{dump}"
    );
    assert!(
        dump.contains("callstack (3 frames, root first): server_loop > handle > parse_inlined"),
        "symbols appended at the end name the samples before them"
    );
    assert!(dump.contains(
        "UNWIND_ERROR_MEMORY_INVALID; callstack does not resolve: callstack iid 4242 is not interned"
    ));
}

#[test]
fn a_trace_without_samples_says_so() {
    let d = dir("none");
    let p = d.join("empty.pftrace");
    let mut t = Trace::default();
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(3);
    });
    std::fs::write(&p, t.bytes()).unwrap();
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&p)
        .arg("-o")
        .arg(d.join("x.pb.gz"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("holds no CPU samples"),
        "{}",
        text(&o.stderr)
    );
    let o = zerotrace().arg("stats").arg(&p).output().unwrap();
    assert!(text(&o.stdout).contains("cpu samples (linux.perf): none"));
}

#[test]
fn the_trace_processor_counts_the_same_samples_per_function() {
    let t = trace();
    let tp = tp_support::load(t.bytes());
    // The trace records on purpose 17 kernel records lost and a sample
    // whose callstack iid 4242 is not interned (see `trace()`).
    tp_support::assert_no_unexplained_stats(
        &tp,
        &["perf_cpu_lost_records", "stackprofile_invalid_callstack_id"],
    );
    assert_eq!(
        tp_support::rows(
            &tp,
            "SELECT SUM(value) FROM stats WHERE name = 'perf_cpu_lost_records'"
        ),
        vec![vec![zerotrace_trace_processor::Value::Int(17)]]
    );
    // Samples per leaf function: the frame's name, else its first symbol.
    let tp_flat: BTreeMap<String, u64> = tp_support::rows(
        &tp,
        "SELECT COALESCE(NULLIF(f.name, ''), (SELECT s.name FROM stack_profile_symbol s \
           WHERE s.symbol_set_id = f.symbol_set_id ORDER BY s.id LIMIT 1)) AS fn, COUNT(*) \
         FROM perf_sample ps JOIN stack_profile_callsite c ON ps.callsite_id = c.id \
         JOIN stack_profile_frame f ON c.frame_id = f.id GROUP BY fn",
    )
    .into_iter()
    .filter_map(|r| match (&r[0], &r[1]) {
        (zerotrace_trace_processor::Value::Text(n), zerotrace_trace_processor::Value::Int(c)) => {
            Some((n.clone(), *c as u64))
        }
        _ => None,
    })
    .collect();
    let ours: BTreeMap<String, u64> = our_flat_and_cum()
        .into_iter()
        .filter(|(_, (flat, _))| *flat > 0)
        .map(|(name, (flat, _))| (name, flat))
        .collect();
    assert_eq!(tp_flat.get("hot"), Some(&6));
    assert_eq!(
        tp_flat.get("parse_inlined"),
        Some(&4),
        "named by its symbols"
    );
    for (name, n) in &tp_flat {
        assert_eq!(
            ours.get(name),
            Some(n),
            "{name}: {tp_flat:?} against {ours:?}"
        );
    }
    let total: u64 = ours.values().sum();
    assert_eq!(
        tp_support::rows(
            &tp,
            "SELECT COUNT(*) FROM perf_sample WHERE callsite_id IS NOT NULL"
        ),
        vec![vec![zerotrace_trace_processor::Value::Int(total as i64)]]
    );
}

/// A Firefox profiler (samply) profile is no protobuf trace: `flamegraph`
/// and `convert --format pprof` read its samples through the trace
/// processor all the same (they refused it as "not a protobuf trace").
#[test]
fn flamegraph_and_pprof_read_a_firefox_profile() {
    let d = dir("gecko");
    let p = d.join("profile.json");
    std::fs::write(
        &p,
        r#"{"meta": {"categories": []}, "threads": [{"name": "app", "tid": 7, "pid": 7,
          "stringArray": ["main (in /bin/app)", "hot (in /bin/app)"],
          "frameTable": {"func": [0, 1]}, "funcTable": {"name": [0, 1]},
          "stackTable": {"prefix": [null, 0], "frame": [0, 1]},
          "samples": {"stack": [1, 1, 0], "time": [1.0, 2.0, 3.0]}}]}"#,
    )
    .unwrap();
    let s = flamegraph_svg(&p, &d.join("cpu.svg"), &[]);
    assert!(s.contains("hot (2 samples, 66.67%)"), "{s}");
    let gz = d.join("cpu.pb.gz");
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&p)
        .arg("-o")
        .arg(&gz)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::metadata(&gz).unwrap().len() > 0);
}
