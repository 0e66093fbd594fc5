//! `cargo xtask fuzz`: builds the cargo-fuzz targets and runs each for a
//! while, seeded from its committed corpus, reporting executions and
//! findings per target. Uses nightly with the address sanitizer where a
//! nightly toolchain exists, else stable without a sanitizer.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Result of one target's run.
pub struct Outcome {
    pub target: String,
    pub executions: u64,
    pub crashed: bool,
    pub seconds: f64,
}

fn has_nightly() -> bool {
    Command::new("cargo")
        .args(["+nightly", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ensure_cargo_fuzz() -> Result<(), String> {
    let ok = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Ok(());
    }
    println!("fuzz: installing cargo-fuzz");
    let st = Command::new("cargo")
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .map_err(|e| e.to_string())?;
    if st.success() {
        Ok(())
    } else {
        Err("cargo install cargo-fuzz failed".into())
    }
}

/// Every target named in fuzz/Cargo.toml.
pub fn targets(root: &Path) -> Result<Vec<String>, String> {
    let toml = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).map_err(|e| e.to_string())?;
    Ok(toml
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("name = \"")
                .and_then(|r| r.strip_suffix('"'))
        })
        .filter(|n| *n != "zerotrace-fuzz" && *n != "zerotrace_fuzz")
        .map(str::to_owned)
        .collect())
}

/// Runs `only` (or every target) for `seconds` each.
pub fn run(root: &Path, seconds: u64, only: &[String]) -> Result<Vec<Outcome>, String> {
    ensure_cargo_fuzz()?;
    let nightly = has_nightly();
    let (toolchain, sanitizer): (&[&str], &str) = if nightly {
        (&["+nightly"], "address")
    } else {
        (&[], "none")
    };
    println!(
        "fuzz: {} toolchain, sanitizer {sanitizer}",
        if nightly { "nightly" } else { "stable" }
    );
    let fuzz_dir = root.join("fuzz");
    let mut out = Vec::new();
    for target in targets(root)? {
        if !only.is_empty() && !only.contains(&target) {
            continue;
        }
        // The committed seeds, copied into a scratch corpus the run may grow.
        let seeds = fuzz_dir.join("seeds").join(&target);
        let corpus = root.join("target/fuzz-corpus").join(&target);
        std::fs::create_dir_all(&corpus).map_err(|e| e.to_string())?;
        if let Ok(entries) = std::fs::read_dir(&seeds) {
            for e in entries.flatten() {
                let _ = std::fs::copy(e.path(), corpus.join(e.file_name()));
            }
        }
        let start = Instant::now();
        let o = Command::new("cargo")
            .args(toolchain)
            .args([
                "fuzz",
                "run",
                "--sanitizer",
                sanitizer,
                "--release",
                &target,
            ])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1")
            .current_dir(&fuzz_dir)
            .env("CARGO_TARGET_DIR", root.join("target/fuzz-build"))
            .output()
            .map_err(|e| e.to_string())?;
        let log = String::from_utf8_lossy(&o.stderr);
        let executions = log
            .lines()
            .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let crashed = !o.status.success();
        if crashed {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!(
                "fuzz: {target} FAILED\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "fuzz: {target}: {executions} executions in {seconds:.0} s{}",
            if crashed { ", CRASH" } else { "" }
        );
        out.push(Outcome {
            target,
            executions,
            crashed,
            seconds,
        });
    }
    Ok(out)
}
