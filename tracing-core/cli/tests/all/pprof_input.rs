//! pprof profiles as input, checked against Go's own reading: a CPU
//! profile that Go's `runtime/pprof` writes (a tiny Go program the test
//! writes, builds and runs) reads in our trace processor to the same
//! functions with the same flat and cumulative sample counts, and the
//! same total, as `go tool pprof -top` prints for the file (Debian's
//! golang-go; without Go the check says so in one line and passes,
//! unless `ZEROTRACE_REQUIRE_GO=1`, which CI sets); `zerotrace sql`,
//! `flamegraph` and `convert --format pprof` read it. And the round trip:
//! our own `convert --format pprof` output loads back to the samples it
//! was written from.

use crate::perf_support::{Fr, PerfSeq, Trace, app};
use crate::support::{flamegraph_svg, text, zerotrace};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use zerotrace_trace_processor::profile_view::{Filter, Profile, folded};

/// A private directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zt-pprof-in-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Per function: samples where it is the leaf (flat) and samples whose
/// stack holds it (cum), from our reading of the profile in `bytes`;
/// and the samples in all.
fn our_flat_and_cum(bytes: &[u8]) -> (BTreeMap<String, (u64, u64)>, u64) {
    let p = Profile::from_trace(bytes).unwrap();
    let f = folded(&p, &Filter::default());
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (stack, n) in &f.stacks {
        let names: Vec<&str> = stack.split(';').collect();
        let mut seen = BTreeSet::new();
        for name in &names {
            if seen.insert(*name) {
                out.entry((*name).to_owned()).or_default().1 += n;
            }
        }
        out.entry((*names.last().unwrap()).to_owned())
            .or_default()
            .0 += n;
    }
    (out, f.samples())
}

/// Whether Go can be run; `false` (said on stderr) when it cannot and
/// CI does not require it.
fn have_go() -> bool {
    let required = std::env::var("ZEROTRACE_REQUIRE_GO").is_ok_and(|v| v == "1");
    let go = Command::new("go").arg("version").output();
    if !go.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(!required, "ZEROTRACE_REQUIRE_GO=1 but `go` cannot be run");
        eprintln!("skipped: no `go` to make or read a pprof profile (apt-get install golang-go)");
        return false;
    }
    true
}

/// `go` with its caches and home in `d`.
fn go(d: &Path) -> Command {
    let mut c = Command::new("go");
    c.env("HOME", d)
        .env("GOCACHE", d.join("gocache"))
        .env("GOPATH", d.join("gopath"))
        .env("PPROF_TMPDIR", d)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "")
        .current_dir(d);
    c
}

/// A Go program that profiles itself with `runtime/pprof` while two
/// functions burn CPU, a third inlined into one of them, and writes the
/// (gzip-compressed) profile to its first argument.
const PROGRAM: &str = r#"package main

import (
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

func mix(s uint64, i int) uint64 { return s*31 + uint64(i) }

//go:noinline
func hot(n int) uint64 {
	s := uint64(1)
	for i := 0; i < n; i++ {
		s = mix(s, i)
	}
	return s
}

//go:noinline
func cold(n int) uint64 {
	s := uint64(7)
	for i := 0; i < n; i++ {
		s ^= s<<13 + uint64(i)
	}
	return s
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	start := time.Now()
	for time.Since(start) < 600*time.Millisecond {
		sink += hot(3000000)
		sink += cold(1000000)
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
"#;

/// `go tool pprof -top` of `file` by sample count: per function (flat,
/// cum), the total, and the functions marked inlined.
fn go_top(d: &Path, file: &Path) -> (BTreeMap<String, (u64, u64)>, u64, String) {
    let o = go(d)
        .args([
            "tool",
            "pprof",
            "-top",
            "-nodecount=100000",
            "-nodefraction=0",
            "-edgefraction=0",
            "-symbolize=none",
            "-sample_index=samples",
        ])
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "go tool pprof: {}", text(&o.stderr));
    let top = text(&o.stdout);
    let mut rows = BTreeMap::new();
    let mut total = None;
    for line in top.lines() {
        if let Some((_, rest)) = line.split_once("% of ") {
            total = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok());
        }
        // Rows: flat flat% sum% cum cum% name.
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 6 || !cols[1].ends_with('%') || !cols[4].ends_with('%') {
            continue;
        }
        let (Ok(flat), Ok(cum)) = (cols[0].parse(), cols[3].parse()) else {
            continue;
        };
        let name = cols[5..].join(" ");
        let name = name.trim_end_matches(" (inline)").to_owned();
        rows.insert(name, (flat, cum));
    }
    (rows, total.unwrap_or(0), top)
}

/// A real Go CPU profile reads as Go reads it: the same functions with
/// the same flat and cumulative sample counts and the same total; SQL
/// sees its sample types and samples; `flamegraph` draws it and `convert
/// --format pprof` writes it again with the same samples.
#[test]
fn a_go_cpu_profile_reads_as_go_tool_pprof_reads_it() {
    if !have_go() {
        return;
    }
    let d = dir("go");
    std::fs::write(d.join("main.go"), PROGRAM).unwrap();
    let o = go(&d)
        .args(["build", "-o", "burn", "main.go"])
        .output()
        .unwrap();
    assert!(o.status.success(), "go build: {}", text(&o.stderr));
    let prof = d.join("cpu.pprof");
    let o = Command::new(d.join("burn")).arg(&prof).output().unwrap();
    assert!(o.status.success(), "the Go program: {}", text(&o.stderr));
    let bytes = std::fs::read(&prof).unwrap();
    assert_eq!(
        &bytes[..2],
        &[0x1f, 0x8b],
        "Go writes pprof gzip-compressed"
    );

    let (theirs, their_total, top) = go_top(&d, &prof);
    let (ours, our_total) = our_flat_and_cum(&bytes);
    assert!(our_total > 0, "the profile holds samples:\n{top}");
    assert_eq!(our_total, their_total, "{top}");
    assert_eq!(ours, theirs, "go tool pprof -top:\n{top}");
    assert!(ours.contains_key("main.hot"), "{top}");

    // SQL: the sample types as Go names them, a value of each per sample.
    let o = zerotrace()
        .arg("sql")
        .arg(&prof)
        .args([
            "-Q",
            "SELECT scope, name, sample_type_type, sample_type_unit \
             FROM __intrinsic_aggregate_profile ORDER BY id; \
             SELECT CAST(SUM(s.value) AS INT) AS n FROM __intrinsic_aggregate_sample s \
             JOIN __intrinsic_aggregate_profile p ON s.aggregate_profile_id = p.id \
             WHERE p.sample_type_type = 'samples'",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), format!("\"n\"\n{their_total}\n"));
    let o = zerotrace()
        .arg("sql")
        .arg(&prof)
        .args([
            "-Q",
            "SELECT scope, name, sample_type_type, sample_type_unit \
             FROM __intrinsic_aggregate_profile ORDER BY id",
        ])
        .output()
        .unwrap();
    assert_eq!(
        text(&o.stdout),
        "\"scope\",\"name\",\"sample_type_type\",\"sample_type_unit\"\n\
         \"pprof_file\",\"pprof samples\",\"samples\",\"count\"\n\
         \"pprof_file\",\"pprof cpu\",\"cpu\",\"nanoseconds\"\n"
    );

    // flamegraph: main.hot with its cumulative count.
    let s = flamegraph_svg(&prof, &d.join("cpu.svg"), &[]);
    let hot = theirs["main.hot"].1;
    let want = format!("main.hot ({hot} sample");
    assert!(s.contains(&want), "{want} not in the SVG");

    // convert --format pprof: the same samples, read by Go again.
    let again = d.join("again.pb.gz");
    let o = zerotrace()
        .args(["convert", "--format", "pprof"])
        .arg(&prof)
        .arg("-o")
        .arg(&again)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (rewritten, total, top) = go_top(&d, &again);
    assert_eq!((rewritten, total), (theirs, their_total), "{top}");
}

/// Two processes' samples with a cpu-clock period of 250 µs, one frame
/// unnamed, as `linux.perf` records them.
fn perf_trace() -> Trace {
    let mut t = Trace::default();
    let mut a = PerfSeq::new(11);
    a.start(&mut t, Some(250_000));
    let libc = Fr {
        name: None,
        path: "/usr/lib/libc.so.6",
        build_id: b"\xcc\xdd",
        rel_pc: 0x9a0,
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
            200,
            201,
            &[app("main", 1), app("cold", 3), libc],
        );
    }
    t
}

/// Our `convert --format pprof` output loads back to the samples it was
/// written from (the same stacks with the same counts, the same CPU time
/// per sample), and `flamegraph` draws the pprof file as it draws the
/// trace, raw or gzip-compressed.
#[test]
fn our_pprof_output_loads_back_to_the_same_samples() {
    let d = dir("round");
    let trace = d.join("perf.pftrace");
    let t = perf_trace();
    std::fs::write(&trace, t.bytes()).unwrap();
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
    let original = Profile::from_trace(t.bytes()).unwrap();
    let loaded = Profile::from_trace(&gz).unwrap();
    let want = folded(&original, &Filter::default());
    assert_eq!(want.samples(), 9);
    assert_eq!(folded(&loaded, &Filter::default()), want);
    assert_eq!(loaded.cpu_ns_per_sample(), Some(250_000));

    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw).unwrap();
    let raw_path = d.join("cpu.pb");
    std::fs::write(&raw_path, &raw).unwrap();
    for input in [&out, &raw_path] {
        let s = flamegraph_svg(input, &d.join("cpu.svg"), &[]);
        for want in [
            "main (9 samples, 100.00%)",
            "hot (6 samples, 66.67%)",
            "libc.so.6+0x9a0 (3 samples, 33.33%)",
        ] {
            assert!(s.contains(want), "{want} not in the SVG of {input:?}");
        }
    }
}
