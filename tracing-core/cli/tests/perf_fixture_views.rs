//! The viewers over a real recording: the probes' fixture program
//! (`tracing-core/probes/tests/perf_fixture`, 60/30/10 of its CPU time in
//! three leaves) sampled by `linux.perf`, written as a trace, then drawn by
//! `zerotrace flamegraph` and converted by `zerotrace convert --format
//! pprof`. Go's own pprof (`go tool pprof -top`) must find each leaf's share
//! as our samples have it, and the SVG must show the same frames and
//! shares. Root (perf events); without perf events, rustc or Go the test
//! says so in one line, and fails under `ZEROTRACE_REQUIRE_PERF=1` /
//! `ZEROTRACE_REQUIRE_GO=1` (CI).
//! `perf script` text of the same program, recorded by `perf record -g`,
//! is read as a trace too (told by its content): its samples must be those
//! the text holds, counted here apart from the reader, at the shares
//! `perf report` gives, and the viewers must draw and convert it.
//! (Its own test binary, not a module of `all/`: its samplers must not
//! share the CPUs with other tests' work.)

#[path = "../../probes/tests/perf_fixture/mod.rs"]
mod perf_fixture;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

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

/// Each sample's leaf function in `perf script` text, read here apart from
/// the trace processor: samples are blocks ended by an empty line, the
/// first line the sample's, the next its frames leaf first
/// (`address symbol+offset (mapping)`); a block without frames is none.
fn leaves_of_perf_script(script: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for block in script.split("\n\n") {
        let mut lines = block.lines().filter(|l| !l.trim().is_empty());
        if lines.next().is_none() {
            continue;
        }
        let Some(leaf) = lines.next() else { continue };
        let rest = leaf.trim().split_once(' ').map_or("", |(_, r)| r);
        let sym = rest.rfind(" (").map_or(rest, |i| &rest[..i]);
        *out.entry(perf_fixture::normalize(sym.trim())).or_default() += 1;
    }
    out
}

/// The share of `perf script` text's samples with `function` anywhere in
/// their stack (what a flame graph's boxes of it add up to).
fn inclusive_share(script: &str, function: &str) -> f64 {
    let (mut with, mut all) = (0u64, 0u64);
    for block in script.split("\n\n") {
        let mut lines = block.lines().filter(|l| !l.trim().is_empty());
        if lines.next().is_none() {
            continue;
        }
        let frames: Vec<String> = lines
            .map(|l| {
                let rest = l.trim().split_once(' ').map_or("", |(_, r)| r);
                let sym = rest.rfind(" (").map_or(rest, |i| &rest[..i]);
                perf_fixture::normalize(sym.trim())
            })
            .collect();
        if frames.is_empty() {
            continue;
        }
        all += 1;
        if frames.iter().any(|f| f == function) {
            with += 1;
        }
    }
    100.0 * with as f64 / all.max(1) as f64
}

/// `perf report`'s share of each symbol (by period; the period is fixed).
fn perf_report_shares(data: &std::path::Path) -> BTreeMap<String, f64> {
    let o = Command::new("perf")
        .args([
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "sym",
            "-g",
            "none",
        ])
        .args(["--percent-limit", "0", "-i"])
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .expect("perf report runs");
    assert!(o.status.success(), "perf report: {}", o.status);
    let mut out = BTreeMap::new();
    for line in text(&o.stdout).lines() {
        // `    60.12%  [.] fixture::leaf_a`
        let line = line.trim();
        let Some((pct, rest)) = line.split_once('%') else {
            continue;
        };
        let (Ok(pct), Some(sym)) = (pct.parse::<f64>(), rest.trim().get(4..)) else {
            continue;
        };
        *out.entry(perf_fixture::normalize(sym.trim())).or_default() += pct;
    }
    out
}

/// Each sample's leaf frame name as the trace processor read it.
fn leaves_loaded(script: &[u8]) -> BTreeMap<String, u64> {
    let mut l = zerotrace_trace_processor::Loader::new();
    l.push(script).expect("the text loads");
    let st = l.finish().expect("the text loads");
    let p = &st.profiling;
    let mut out = BTreeMap::new();
    for s in &p.samples {
        assert_eq!(st.strings.get(s.source), Some("perf_text"));
        let cs = &p.callsites[s.callsite_id.expect("a callsite") as usize];
        let name = st
            .strings
            .get(p.frames[cs.frame_id as usize].name)
            .unwrap_or("");
        *out.entry(perf_fixture::normalize(name)).or_default() += 1;
    }
    out
}

#[test]
fn perf_script_text_of_the_fixture_loads_with_perfs_own_counts() {
    let test = "perf_script_text_of_the_fixture_loads_with_perfs_own_counts";
    if perf_fixture::unavailable(test).is_some() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("perf_script_text");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let bin = fixture(true);
    let run = Running::start(&bin, "cpu");
    let data = dir.join("perf.data");
    // A fixed period (1 ms of CPU clock): perf report's shares by period
    // are shares of samples.
    let mut rec = Command::new("perf")
        .args(["record", "-g", "-e", "cpu-clock", "-c", "1000000", "-p"])
        .arg(run.pid().to_string())
        .arg("-o")
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perf record starts");
    std::thread::sleep(Duration::from_millis(2000));
    if let Ok(Some(status)) = rec.try_wait() {
        assert!(
            !perf_fixture::required(),
            "ZEROTRACE_REQUIRE_PERF=1 but perf record ended: {status}"
        );
        println!("{test} did not run: perf record ended at once ({status}), perf events closed?");
        return;
    }
    let _ = Command::new("kill")
        .args(["-INT", &rec.id().to_string()])
        .status();
    let status = rec.wait().expect("perf record ends");
    drop(run);
    assert!(
        status.success() || status.code() == Some(130) || status.code().is_none(),
        "perf record: {status}"
    );

    // The default text, and with the pid (`pid/tid`) in each sample line.
    for (name, extra) in [("perf.txt", None), ("perf_pid.txt", Some("+pid"))] {
        let mut script = Command::new("perf");
        script.args(["script", "--no-inline", "-i"]).arg(&data);
        if let Some(fields) = extra {
            script.args(["-F", fields]);
        }
        let o = script
            .stderr(Stdio::null())
            .output()
            .expect("perf script runs");
        assert!(o.status.success(), "perf script: {}", o.status);
        let path = dir.join(name);
        std::fs::write(&path, &o.stdout).expect("the text written");

        let script_text = text(&o.stdout);
        let theirs = leaves_of_perf_script(&script_text);
        let ours = leaves_loaded(&o.stdout);
        let n: u64 = ours.values().sum();
        assert!(n >= 200, "{name}: {n} samples");
        assert_eq!(
            ours, theirs,
            "{name}: each leaf as often as the text has it"
        );

        let report = perf_report_shares(&data);
        for (leaf, _) in LEAVES {
            let share = 100.0 * ours.get(leaf).copied().unwrap_or(0) as f64 / n as f64;
            let perf = report.get(leaf).copied().unwrap_or(0.0);
            println!("{name}: {leaf}: {share:.2}% of {n} samples, perf report {perf:.2}%");
            assert!(
                (share - perf).abs() < 0.5,
                "{name}: {leaf} {share:.2}%, perf report {perf:.2}%\n{report:?}"
            );
        }

        // The viewers read the text as they read a trace.
        let svg = dir.join(format!("{name}.svg"));
        let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
            .arg("flamegraph")
            .arg(&path)
            .arg("-o")
            .arg(&svg)
            .output()
            .expect("zerotrace runs");
        assert!(o.status.success(), "{}", text(&o.stderr));
        let drawn = std::fs::read_to_string(&svg).expect("an SVG");
        // A leaf drawn under several callers: its boxes' shares add up (to
        // the samples with it in their stack: kernel frames may sit on it).
        let drawn_share = |leaf: &str| -> f64 {
            drawn
                .split("<title>")
                .skip(1)
                .filter_map(|t| {
                    let (function, rest) = t.split_once(" (")?;
                    (perf_fixture::normalize(function) == leaf).then_some(rest)
                })
                .filter_map(|rest| {
                    rest.split(", ")
                        .nth(1)?
                        .split('%')
                        .next()?
                        .parse::<f64>()
                        .ok()
                })
                .sum()
        };
        for (leaf, _) in LEAVES {
            let share = inclusive_share(&script_text, leaf);
            let pct = drawn_share(leaf);
            assert!(
                (pct - share).abs() < 0.5,
                "{name}: {leaf} {pct}% in the SVG, {share:.2}% of the samples"
            );
        }
        let pb = dir.join(format!("{name}.pb.gz"));
        let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
            .args(["convert", "--format", "pprof"])
            .arg(&path)
            .arg("-o")
            .arg(&pb)
            .output()
            .expect("zerotrace runs");
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(std::fs::metadata(&pb).map(|m| m.len()).unwrap_or(0) > 0);
    }
}

/// samply, or why not (said in one line; a failure where required):
/// `ZEROTRACE_SAMPLY` names the binary, else `samply` on the PATH.
fn samply() -> Option<std::path::PathBuf> {
    let required = std::env::var("ZEROTRACE_REQUIRE_SAMPLY").is_ok_and(|v| v == "1");
    let bin = std::env::var_os("ZEROTRACE_SAMPLY").map_or_else(|| "samply".into(), Into::into);
    let ok = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(bin);
    }
    assert!(
        !required,
        "ZEROTRACE_REQUIRE_SAMPLY=1 but {} cannot be run",
        std::path::Path::new(&bin).display()
    );
    println!(
        "the samply check did not run: no `samply` (cargo install samply --locked, or set ZEROTRACE_SAMPLY)"
    );
    None
}

/// Records `pid` with samply for about `ms` into `out` (its JSON).
/// samply refuses to start while `perf_event_paranoid` is above 1, even
/// for root; rather than lower the machine's setting, the recorder runs in
/// a mount namespace of its own where a file saying 1 is bound over it.
fn samply_record(samply: &std::path::Path, pid: u32, out: &std::path::Path, ms: u64) {
    let dir = out.parent().expect("a directory");
    let paranoid = dir.join("perf_event_paranoid");
    std::fs::write(&paranoid, "1\n").expect("written");
    let script = format!(
        "mount --bind '{}' /proc/sys/kernel/perf_event_paranoid && exec '{}' record --save-only -o '{}' -p {pid}",
        paranoid.display(),
        samply.display(),
        out.display()
    );
    let mut child = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare runs");
    std::thread::sleep(Duration::from_millis(ms));
    // The shell exec'd samply: the child is samply, which saves on SIGINT.
    let child_pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a pid");
    let _ = rustix::process::kill_process(child_pid, rustix::process::Signal::INT);
    let mut waited = 0;
    while child.try_wait().expect("waits").is_none() {
        assert!(waited < 600, "samply did not stop within 60 s of SIGINT");
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let o = child.wait_with_output().expect("its output");
    assert!(
        out.exists(),
        "samply wrote no profile: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

/// A real samply profile of the fixture (its frames unsymbolicated
/// addresses, as samply saves them) is named by `zerotrace symbolize` from
/// the fixture's own binary, and `zerotrace flamegraph` of it ranks the
/// same three leaves as `zerotrace flamegraph` of a `linux.perf` trace of
/// the same running program, at shares within the noise of two recordings.
#[test]
fn a_samply_profile_of_the_fixture_ranks_the_leaves_as_linux_perf_does() {
    let test = "a_samply_profile_of_the_fixture_ranks_the_leaves_as_linux_perf_does";
    if perf_fixture::unavailable(test).is_some() {
        return;
    }
    let Some(samply) = samply() else {
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("samply_fixture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let bin = fixture(false);
    let run = Running::start(&bin, "cpu");
    let pid = run.pid();

    // linux.perf first, then samply, on the same process.
    let Some(mut ours) = Ours::start(test, &[dwarf_config(pid)]) else {
        return;
    };
    ours.run_for(2000);
    let packets = ours.stop().remove(0);
    let trace = dir.join("fixture.pftrace");
    std::fs::write(&trace, trace_file(&packets)).expect("the trace written");
    let raw = dir.join("profile.json");
    samply_record(&samply, pid, &raw, 2500);
    drop(run);

    let flamegraph = |input: &std::path::Path, svg: &str| -> String {
        let svg = dir.join(svg);
        let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
            .arg("flamegraph")
            .arg(input)
            .arg("-o")
            .arg(&svg)
            .output()
            .expect("zerotrace runs");
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read_to_string(&svg).expect("an SVG")
    };
    // As samply saved it, the leaves have no names.
    let unnamed = flamegraph(&raw, "raw.svg");
    assert!(!unnamed.contains("fixture::leaf_a"), "samply saved names");

    let named = dir.join("named.json");
    let o = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("symbolize")
        .arg(&raw)
        .arg("-o")
        .arg(&named)
        .output()
        .expect("zerotrace runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(said.contains("native frames named"), "{said}");

    let from_perf = flamegraph(&trace, "perf.svg");
    let from_samply = flamegraph(&named, "samply.svg");
    let mut ranked = Vec::new();
    for (leaf, design) in LEAVES {
        let p = svg_share(&from_perf, leaf);
        let s = svg_share(&from_samply, leaf);
        assert!(
            (p - s).abs() <= 10.0 && (s - design).abs() <= 12.0,
            "{leaf}: {s:.1}% from samply, {p:.1}% from linux.perf (the fixture means {design}%)"
        );
        ranked.push((leaf, s));
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(
        ranked.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        ["fixture::leaf_a", "fixture::leaf_b", "fixture::leaf_c"],
        "samply's leaves in order: {ranked:?}"
    );
    assert!(
        from_samply.contains("<title>fixture::main ("),
        "the callers named too"
    );
}
