//! The viewers over a real recording: the probes' fixture program
//! (`tracing-core/probes/tests/perf_fixture`, 60/30/10 of its CPU time in
//! three leaves) sampled by `linux.perf`, written as a trace, then drawn by
//! `zerotrace flamegraph` and converted by `zerotrace convert --format
//! pprof`. Go's own pprof (`go tool pprof -top`) must find each leaf's share
//! as our samples have it, and the SVG must show the same frames and
//! shares. Root (perf events); without perf events, rustc or Go the test
//! says so in one line, and fails under `ZEROTRACE_REQUIRE_PERF=1` /
//! `ZEROTRACE_REQUIRE_GO=1` (CI).
//! (Its own test binary, not a module of `all/`: its samplers must not
//! share the CPUs with other tests' work.)

#[path = "../../probes/tests/perf_fixture/mod.rs"]
mod perf_fixture;

use std::collections::BTreeMap;
use std::process::Command;

use perf_fixture::{Ours, Running, fixture, leaf_shares, perf_config, read_back, trace_file};
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;

const LEAVES: [(&str, f64); 3] = [
    ("fixture::leaf_a", 60.0),
    ("fixture::leaf_b", 30.0),
    ("fixture::leaf_c", 10.0),
];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A 1 kHz CPU-clock config on `pid`, user frames by DWARF.
fn dwarf_config(pid: u32) -> Vec<u8> {
    perf_config(|c| {
        c.begin_timebase()
            .set_frequency(1000)
            .set_counter(Counter::SwCpuClock);
        let mut cs = c.begin_callstack_sampling();
        cs.set_user_frames(UnwindMode::UnwindDwarf);
        cs.begin_scope().add_target_pid(pid as i32);
    })
}

/// `function`'s share in inferno's SVG, from its tooltip
/// `function (N samples, P%)`.
fn svg_share(drawn: &str, function: &str) -> f64 {
    let tip = format!("<title>{function} (");
    let at = drawn
        .find(&tip)
        .unwrap_or_else(|| panic!("{function} not in the SVG"));
    let rest = &drawn[at + tip.len()..];
    rest.split(", ")
        .nth(1)
        .and_then(|p| p.split('%').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a share in {}", &rest[..rest.len().min(60)]))
}

/// Go's pprof, or why not (said in one line; a failure where required).
fn go_available() -> bool {
    let required = std::env::var("ZEROTRACE_REQUIRE_GO").is_ok_and(|v| v == "1");
    let go = Command::new("go").arg("version").output();
    if go.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    assert!(!required, "ZEROTRACE_REQUIRE_GO=1 but `go` cannot be run");
    println!("the pprof check did not run: no `go` (apt-get install golang-go)");
    false
}

#[test]
fn pprof_and_flamegraph_of_the_fixture_show_its_shares() {
    let test = "pprof_and_flamegraph_of_the_fixture_show_its_shares";
    if perf_fixture::unavailable(test).is_some() {
        return;
    }
    let bin = fixture(false);
    let run = Running::start(&bin, "cpu");
    let pid = run.pid();
    let config = dwarf_config(pid);
    let Some(mut ours) = Ours::start(test, &[config]) else {
        return;
    };
    ours.run_for(2000);
    let packets = ours.stop().remove(0);
    drop(run);
    let samples = read_back(&packets);
    let shares = leaf_shares(&samples, pid);
    let n = samples.iter().filter(|s| s.pid == pid).count();
    assert!(n >= 500, "{n} samples");
    for (leaf, design) in LEAVES {
        let s = shares.get(leaf).copied().unwrap_or(0.0);
        assert!(
            (s - design).abs() <= 10.0,
            "{leaf}: {s:.1}% of the samples, the fixture means {design}%: {shares:?}"
        );
    }

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_fixture_views");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let trace = dir.join("fixture.pftrace");
    std::fs::write(&trace, trace_file(&packets)).expect("the trace written");

    // The flamegraph: inferno's tooltips, `name (N samples, P%)`.
    let svg = dir.join("fixture.svg");
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("flamegraph")
        .arg(&trace)
        .arg("--pid")
        .arg(pid.to_string())
        .arg("-o")
        .arg(&svg)
        .output()
        .expect("zerotrace runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let drawn = std::fs::read_to_string(&svg).expect("an SVG");
    for (leaf, _) in LEAVES {
        let ours = shares.get(leaf).copied().unwrap_or(0.0);
        let pct = svg_share(&drawn, leaf);
        assert!(
            (pct - ours).abs() < 0.5,
            "{leaf}: {pct}% in the SVG, {ours:.2}% of our samples"
        );
    }
    assert!(
        drawn.contains("<title>fixture::main ("),
        "the callers drawn"
    );

    // pprof, read by Go's own tool.
    let pb = dir.join("fixture.pb.gz");
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .args(["convert", "--format", "pprof"])
        .arg(&trace)
        .arg("-o")
        .arg(&pb)
        .output()
        .expect("zerotrace runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    if !go_available() {
        return;
    }
    let o = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-top",
            "-nodecount=200",
            "-symbolize=none",
            "-sample_index=samples",
        ])
        .arg(&pb)
        .env("HOME", &dir)
        .env("PPROF_TMPDIR", &dir)
        .output()
        .expect("go runs");
    assert!(o.status.success(), "go tool pprof: {}", text(&o.stderr));
    let top = text(&o.stdout);
    // Rows: flat flat% sum% cum cum% name.
    let mut flat_pct: BTreeMap<String, f64> = BTreeMap::new();
    for line in top.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 6 || !cols[1].ends_with('%') {
            continue;
        }
        if let Ok(p) = cols[1].trim_end_matches('%').parse::<f64>() {
            flat_pct.insert(cols[5..].join(" "), p);
        }
    }
    // The three leaves are the top three, in order, at our shares.
    let mut ranked: Vec<(&String, &f64)> = flat_pct.iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(a.1));
    let top3: Vec<&str> = ranked.iter().take(3).map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        top3,
        ["fixture::leaf_a", "fixture::leaf_b", "fixture::leaf_c"],
        "{top}"
    );
    for (leaf, _) in LEAVES {
        // Go counts every sample of the profile (other processes none here).
        let ours = shares.get(leaf).copied().unwrap_or(0.0);
        let go = flat_pct.get(leaf).copied().unwrap_or(0.0);
        assert!(
            (go - ours).abs() < 0.5,
            "{leaf}: go tool pprof {go}%, ours {ours:.2}%\n{top}"
        );
    }
    println!("go tool pprof -top:\n{top}");
}

/// A stripped binary is sampled with its frames unnamed (mapping, build id
/// and `rel_pc` only); `zerotrace symbolize` finds the unstripped file by
/// its build id under `--symbol-path` (`.build-id/xx/rest.debug`), and the
/// flamegraph of the symbolized trace names the leaves again, at their
/// shares.
#[test]
fn symbolize_names_a_stripped_binary_from_its_debug_file() {
    let test = "symbolize_names_a_stripped_binary_from_its_debug_file";
    if perf_fixture::unavailable(test).is_some() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_symbolize");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let full = fixture(false);
    let stripped = dir.join("fixture_stripped");
    let st = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&full)
        .status()
        .expect("binutils' strip runs");
    assert!(st.success(), "strip");
    // The debug file where a build-id layout puts it.
    let build_id = zerotrace_profiling::view::build_id_of(&std::fs::read(&full).expect("read"))
        .expect("the fixture has a build id");
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let symbols = dir.join("symbols");
    let debug = symbols.join(".build-id").join(&hex[..2]);
    std::fs::create_dir_all(&debug).expect("a directory");
    std::fs::copy(&full, debug.join(format!("{}.debug", &hex[2..]))).expect("copied");

    let run = Running::start(&stripped, "cpu");
    let pid = run.pid();
    let config = dwarf_config(pid);
    let Some(mut ours) = Ours::start(test, &[config]) else {
        return;
    };
    ours.run_for(1500);
    let packets = ours.stop().remove(0);
    drop(run);
    // Unnamed where the binary is stripped (its leaves are "?").
    let before = leaf_shares(&read_back(&packets), pid);
    assert!(
        before.get("?").copied().unwrap_or(0.0) > 90.0,
        "the stripped leaves have no name: {before:?}"
    );
    let trace = dir.join("stripped.pftrace");
    std::fs::write(&trace, trace_file(&packets)).expect("the trace written");

    let symbolized = dir.join("symbolized.pftrace");
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("symbolize")
        .arg(&trace)
        .arg("-o")
        .arg(&symbolized)
        .arg("--symbol-path")
        .arg(&symbols)
        .arg("--no-local-files")
        .output()
        .expect("zerotrace runs");
    let said = text(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("fixture_stripped ("), "{said}");
    assert!(said.contains(".build-id/"), "found by build id: {said}");

    let svg = dir.join("symbolized.svg");
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("flamegraph")
        .arg(&symbolized)
        .arg("--pid")
        .arg(pid.to_string())
        .arg("-o")
        .arg(&svg)
        .output()
        .expect("zerotrace runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let drawn = std::fs::read_to_string(&svg).expect("an SVG");
    for (leaf, design) in LEAVES {
        let pct = svg_share(&drawn, leaf);
        assert!(
            (pct - design).abs() <= 10.0,
            "{leaf}: {pct}% after symbolize, the fixture means {design}%"
        );
    }
    // The callers too, from DWARF (with the file of the source).
    assert!(
        drawn.contains("<title>fixture::caller_b ("),
        "callers named"
    );
    // Nothing found: a clear error.
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("symbolize")
        .arg(&trace)
        .arg("-o")
        .arg(dir.join("none.pftrace"))
        .arg("--symbol-path")
        .arg(dir.join("nowhere"))
        .arg("--no-local-files")
        .output()
        .expect("zerotrace runs");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no binary or debug file found"));
}
