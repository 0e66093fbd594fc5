//! `cargo xtask valgrind`: the test binaries of the crates with `unsafe`
//! code (protozero, zerotrace-core, the heap profiler) under valgrind's
//! memcheck, with few proptest cases.
//!
//! CI runs the short list: the suites that drive the unsafe code itself
//! (the stream writer and its delegates, the shared memory views, the
//! arbiter and TraceWriter, real SMB mappings between processes and
//! threads; of zerotrace-core's and the heap profiler's unit tests, those
//! of the modules with `unsafe` code, as Miri's short run takes them).
//! `--full` runs every test binary of the three crates, as before
//! an issue touching that code closes. Most suites are modules of their
//! package's combined test binary (`tests/all/`, see `suites.rs`): that
//! binary runs once, with the modules' filters (with `--full`, whole but
//! for the modules never run). A failing binary's own output is shown (the
//! harness prints a panic on stdout).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::suites::{ALL, Suite};

/// Suites never run under valgrind: they compile code (trybuild), model
/// threads exhaustively (loom, stress), or are ThreadSanitizer's.
const NEVER: &[(&str, Suite)] = &[
    ("protozero", Suite::Module("compile_fail")),
    ("zerotrace-core", Suite::Module("stress")),
    ("zerotrace-loom", Suite::Test("loom_chunks")),
    ("zerotrace-loom", Suite::Test("loom_heap")),
    ("zerotrace-core", Suite::Test("in_process_scrape_race")),
];

/// CI's short list.
const SHORT: &[(&str, Suite)] = &[
    ("protozero", Suite::Lib),
    ("protozero", Suite::Module("known_answers")),
    ("protozero", Suite::Module("abandoned_patches")),
    ("protozero", Suite::Module("leaks_and_toggles")),
    ("protozero", Suite::Module("no_alloc")),
    ("zerotrace-core", Suite::Lib),
    ("zerotrace-core", Suite::Module("soundness")),
    ("zerotrace-core", Suite::Module("hostile_smb")),
    ("zerotrace-core", Suite::Module("hostile_smb_process")),
    ("zerotrace-core", Suite::Module("trace_writer")),
    ("zerotrace-core", Suite::Module("buffer_exhausted")),
    ("zerotrace-core", Suite::Module("daemon_end_to_end")),
    ("zerotrace-core", Suite::Module("startup_tracing")),
    ("zerotrace-core", Suite::Test("track_event_in_process")),
    ("zerotrace-core", Suite::Module("track_event_writer")),
    ("zerotrace-core", Suite::Test("tracing_layer_workload")),
    ("zerotrace-heap-profile", Suite::Lib),
];

/// The suites [`SHORT`] and [`NEVER`] name (checked to exist by
/// `crate::suites`).
#[cfg(test)]
pub fn suites() -> impl Iterator<Item = (&'static str, Suite)> {
    SHORT.iter().chain(NEVER).copied()
}

/// Builds the test binaries and runs them (the short list unless `full`)
/// under memcheck; whether all were clean.
pub fn run(root: &Path, full: bool) -> Result<bool, String> {
    if !Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        return Err("no valgrind here (apt-get install valgrind)".into());
    }
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        // The whole workspace, as the test command builds it: its test
        // binaries are there already (building two packages alone would
        // unify other features and build them all again).
        .args([
            "test",
            "--workspace",
            "--tests",
            "--no-run",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err("building the test binaries failed".into());
    }
    let mut bins = Vec::new();
    for line in out.stdout.split(|b| *b == b'\n') {
        let Ok(m) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        if m["reason"] != "compiler-artifact" || m["profile"]["test"] != true {
            continue;
        }
        let (Some(exe), Some(name)) = (m["executable"].as_str(), m["target"]["name"].as_str())
        else {
            continue;
        };
        let manifest = Path::new(m["manifest_path"].as_str().unwrap_or(""));
        let package = if manifest == root.join("protozero/Cargo.toml") {
            "protozero"
        } else if manifest == root.join("tracing-core/Cargo.toml") {
            "zerotrace-core"
        } else if manifest == root.join("tracing-core/heap-profile/Cargo.toml") {
            "zerotrace-heap-profile"
        } else {
            continue;
        };
        let kind = m["target"]["kind"][0].as_str().unwrap_or("");
        let target = if kind == "lib" { None } else { Some(name) };
        // The harness arguments that select what runs of this binary
        // (`None`: nothing of it).
        let args: Option<Vec<String>> = if target == Some(ALL) {
            if full {
                // All of it but the modules never run.
                Some(
                    NEVER
                        .iter()
                        .filter(|(p, _)| *p == package)
                        .filter_map(|(_, s)| s.filter())
                        .flat_map(|f| ["--skip".to_owned(), f])
                        .collect(),
                )
            } else {
                // The listed modules of it, one run.
                let filters: Vec<String> = SHORT
                    .iter()
                    .filter(|(p, s)| *p == package && s.target() == Some(ALL))
                    .filter_map(|(_, s)| s.filter())
                    .collect();
                (!filters.is_empty()).then_some(filters)
            }
        } else {
            // The lib's unit tests, or a binary of its own: all of it.
            let is_it = |s: &Suite| match s {
                Suite::Lib => target.is_none(),
                Suite::Test(t) => target == Some(*t),
                Suite::Module(_) => false,
            };
            let listed = SHORT.iter().any(|(p, s)| *p == package && is_it(s));
            let never = NEVER.iter().any(|(p, s)| *p == package && is_it(s));
            // The short run of a lib's unit tests takes the modules that
            // hold `unsafe` code, as Miri's does: the rest is safe code,
            // whose model tests took more than ten minutes under memcheck
            // unoptimised (the heap profiler's live_blocks).
            let unsafe_only = match (full, target) {
                (false, None) => crate::miri::UNSAFE_MODULES
                    .iter()
                    .find(|(p, _, _)| *p == package)
                    .map(|(_, _, modules)| modules.iter().map(|m| (*m).to_owned()).collect()),
                _ => None,
            };
            (!never && (full || listed)).then(|| unsafe_only.unwrap_or_default())
        };
        if let Some(args) = args {
            let what = format!("{package} {}", target.unwrap_or("lib"));
            bins.push((what, exe.to_owned(), args));
        }
    }
    let mut clean = true;
    for (what, exe, args) in &bins {
        let started = Instant::now();
        let o = Command::new("valgrind")
            .args(["-q", "--error-exitcode=97", exe, "--test-threads=2"])
            .args(args)
            .env("PROPTEST_CASES", "16")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("running valgrind: {e}"))?;
        println!("-- {what}: {:.0} s", started.elapsed().as_secs_f64());
        if !o.status.success() {
            clean = false;
            let text = String::from_utf8_lossy(&o.stdout);
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !(l.starts_with("test ") && l.ends_with(" ok")))
                .collect();
            let tail = &kept[kept.len().saturating_sub(80)..];
            eprintln!(
                "valgrind: {what} failed ({})\n{}",
                o.status,
                tail.join("\n")
            );
        }
    }
    println!(
        "valgrind: {} test binaries ({}), {}",
        bins.len(),
        if full { "all" } else { "CI's short list" },
        if clean { "clean" } else { "NOT clean" }
    );
    Ok(clean)
}
