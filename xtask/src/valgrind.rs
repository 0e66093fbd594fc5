//! `cargo xtask valgrind`: the test binaries of the crates with `unsafe`
//! code (protozero, zerotrace-core, the heap profiler) under valgrind's
//! memcheck, with few proptest cases.
//!
//! CI runs the short list: the suites that drive the unsafe code itself
//! (the stream writer and its delegates, the shared memory views, the
//! arbiter and TraceWriter, real SMB mappings between processes and
//! threads; the heap profiler's unit tests). `--full` runs every test binary of the three crates, as before
//! an issue touching that code closes. A failing binary's own output is
//! shown (the harness prints a panic on stdout).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Test targets never run under valgrind: they compile code (trybuild),
/// model threads exhaustively (loom, stress), or are ThreadSanitizer's.
const NEVER: &[&str] = &[
    "compile_fail",
    "stress",
    "loom_chunks",
    "loom_heap",
    "in_process_scrape_race",
];

/// CI's short list: (package, target; "lib" for the unit tests).
const SHORT: &[(&str, &str)] = &[
    ("protozero", "lib"),
    ("protozero", "known_answers"),
    ("protozero", "abandoned_patches"),
    ("protozero", "leaks_and_toggles"),
    ("protozero", "no_alloc"),
    ("zerotrace-core", "lib"),
    ("zerotrace-core", "soundness"),
    ("zerotrace-core", "hostile_smb"),
    ("zerotrace-core", "hostile_smb_process"),
    ("zerotrace-core", "trace_writer"),
    ("zerotrace-core", "buffer_exhausted"),
    ("zerotrace-core", "daemon_end_to_end"),
    ("zerotrace-core", "startup_tracing"),
    ("zerotrace-core", "track_event_in_process"),
    ("zerotrace-core", "track_event_writer"),
    ("zerotrace-core", "tracing_layer_workload"),
    ("zerotrace-heap-profile", "lib"),
];

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
        let target = if kind == "lib" { "lib" } else { name };
        if NEVER.contains(&target) {
            continue;
        }
        if full || SHORT.contains(&(package, target)) {
            bins.push((format!("{package} {target}"), exe.to_owned()));
        }
    }
    let mut clean = true;
    for (what, exe) in &bins {
        let started = Instant::now();
        let o = Command::new("valgrind")
            .args(["-q", "--error-exitcode=97", exe, "--test-threads=2"])
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
