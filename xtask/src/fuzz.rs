//! `cargo xtask fuzz`: builds the cargo-fuzz targets and runs each for a
//! while, seeded from its committed corpus (`fuzz/seeds/<target>/` and the
//! regression inputs in `fuzz/regressions/<target>/`), reporting executions
//! and findings per target. Uses nightly with the address sanitizer where a
//! nightly toolchain exists, else stable without a sanitizer. The targets'
//! logic is the `zerotrace-fuzz-logic` crate (`fuzz/logic/`); its
//! `tests/corpus.rs` replays the same inputs, and any crash files a run
//! leaves in `fuzz/artifacts/<target>/`, under a plain `cargo test`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::fuzz_build::Build;

/// Result of one target's run.
pub struct Outcome {
    /// The target's name.
    pub target: String,
    /// Inputs libFuzzer ran (its final stats).
    pub executions: u64,
    /// Whether the run failed (a crash, leak, timeout or out-of-memory).
    pub crashed: bool,
    /// Wall time of its run (the shared build before the runs is timed apart).
    pub seconds: f64,
}

fn has_nightly() -> bool {
    Command::new("cargo")
        .args(["+nightly", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Every target (the `[[bin]]`s of fuzz/Cargo.toml, in order) with the
/// features of the fuzz package it needs (its `required-features`; none
/// for the smoke run's targets).
pub fn targets_with_features(root: &Path) -> Result<Vec<(String, Vec<String>)>, String> {
    let toml = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).map_err(|e| e.to_string())?;
    Ok(toml
        .split("[[bin]]")
        .skip(1)
        .filter_map(|section| {
            let value = |key: &str| {
                section
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(key).map(str::trim))
            };
            let name = value("name = \"")?.strip_suffix('"')?.to_owned();
            let features = value("required-features = [")
                .and_then(|r| r.strip_suffix(']'))
                .map(|list| {
                    list.split(',')
                        .map(|f| f.trim().trim_matches('"').to_owned())
                        .filter(|f| !f.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            Some((name, features))
        })
        .collect())
}

/// Which targets a run builds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Every target (the fuzz package's default features).
    All,
    /// The targets that need no feature of the fuzz package (CI's smoke
    /// run: the code with `unsafe` in it and the wire protocols'
    /// endpoints), built without its default features, so that neither
    /// Perfetto's whole generated schema nor the trace processor, the
    /// command line and the code generator are built under the sanitizers.
    /// `cargo test --workspace` replays every target's corpus.
    Smoke,
}

/// Runs `only` (or every target of `selection`) for `seconds` each; `dev`:
/// built unoptimised with debug assertions and overflow checks, else
/// `--release`.
pub fn run(
    root: &Path,
    seconds: u64,
    only: &[String],
    dev: bool,
    selection: Selection,
) -> Result<Vec<Outcome>, String> {
    let nightly = has_nightly();
    let sanitizer = if nightly { "address" } else { "none" };
    let how = Build {
        nightly,
        dev,
        triple: crate::fuzz_build::host_triple(),
    };
    println!(
        "fuzz: {} toolchain, sanitizer {sanitizer}, {} build",
        if nightly { "nightly" } else { "stable" },
        if dev { "dev" } else { "release" }
    );
    let fuzz_dir = root.join("fuzz");
    // The fuzz package is its own workspace with its own (uncommitted) lock
    // file: start it from the main workspace's, so the fuzzed code builds
    // with the dependency versions the workspace is tested with.
    let lock = fuzz_dir.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(root.join("Cargo.lock"), &lock).map_err(|e| e.to_string())?;
    }
    // Beside the workspace's own builds (the sanitizer flags rebuild
    // everything): under $CARGO_TARGET_DIR when that is set.
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let known = targets_with_features(root)?;
    let mut all: Vec<String> = known.iter().map(|(name, _)| name.clone()).collect();
    if let Some(unknown) = only.iter().find(|t| !all.contains(t)) {
        return Err(format!(
            "no fuzz target {unknown} (targets: {})",
            all.join(", ")
        ));
    }
    let features: &[&str] = match selection {
        Selection::All => &[],
        Selection::Smoke => {
            let heavy: Vec<&(String, Vec<String>)> =
                known.iter().filter(|(_, f)| !f.is_empty()).collect();
            if let Some((name, f)) = heavy.iter().find(|(name, _)| only.contains(name)) {
                return Err(format!(
                    "{name} needs the fuzz package's feature {}: drop --smoke",
                    f.join(", ")
                ));
            }
            all.retain(|t| !heavy.iter().any(|(name, _)| name == t));
            println!(
                "fuzz: the smoke run's {} targets; {} others not built (--smoke), \
                 `cargo test -p zerotrace-fuzz-logic` replays their corpora",
                all.len(),
                heavy.len()
            );
            &["--no-default-features"]
        }
    };
    // One build of every selected target first: cargo compiles the
    // sanitized dependencies once and links the targets in parallel, where
    // a `cargo fuzz run` per target would link them one after another.
    let build_started = Instant::now();
    let build_dir = target_dir.join("fuzz-build");
    let selected: &[String] = if only.len() == 1 { only } else { &[] };
    let built = how
        .command(&fuzz_dir, &build_dir, features, selected)
        .status()
        .map_err(|e| e.to_string())?;
    if !built.success() {
        return Err("the fuzz targets' build failed".into());
    }
    println!(
        "fuzz: built in {:.0} s",
        build_started.elapsed().as_secs_f64()
    );
    let mut out = Vec::new();
    for target in all {
        if !only.is_empty() && !only.contains(&target) {
            continue;
        }
        // The committed seeds and regression inputs, copied into the corpus
        // the run grows: fuzz/corpus/<target> (uncommitted; cargo-fuzz's place),
        // which the logic crate's corpus test replays too.
        let corpus = fuzz_dir.join("corpus").join(&target);
        std::fs::create_dir_all(&corpus).map_err(|e| e.to_string())?;
        for dir in ["seeds", "regressions"] {
            if let Ok(entries) = std::fs::read_dir(fuzz_dir.join(dir).join(&target)) {
                for e in entries.flatten() {
                    let _ = std::fs::copy(e.path(), corpus.join(e.file_name()));
                }
            }
        }
        let start = Instant::now();
        let artifacts = fuzz_dir.join("artifacts").join(&target);
        std::fs::create_dir_all(&artifacts).map_err(|e| e.to_string())?;
        let o = how
            .run_command(&build_dir, &target, &corpus, &artifacts, seconds)
            .current_dir(&fuzz_dir)
            .output()
            .map_err(|e| format!("{target}: {e}"))?;
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
                "fuzz: {target} FAILED\n{}\nfuzz: the input is in fuzz/artifacts/{target}/ \
                 (`cargo test -p zerotrace-fuzz-logic --test corpus {target}` replays it); \
                 minimise it (`target/fuzz-build/*/*/{target} -minimize_crash=1 -runs=10000 FILE`) and commit it under \
                 fuzz/regressions/{target}/",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_targets_are_the_bins_of_the_fuzz_package() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let t: Vec<String> = targets_with_features(&root)
            .expect("fuzz/Cargo.toml")
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(t.first().map(String::as_str), Some("decoder"));
        for new in [
            "text_config",
            "codegen_frontend",
            "derive_decoders",
            "trace_file",
        ] {
            assert!(t.iter().any(|n| n == new), "{new} in {t:?}");
        }
        assert!(
            !t.iter().any(|n| n.contains('-')),
            "no package names: {t:?}"
        );
    }

    #[test]
    fn the_smoke_run_leaves_out_the_targets_of_the_heavy_features() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let t = targets_with_features(&root).expect("fuzz/Cargo.toml");
        let features = |name: &str| {
            t.iter()
                .find(|(n, _)| n == name)
                .map(|(_, f)| f.clone())
                .unwrap_or_else(|| panic!("{name} in {t:?}"))
        };
        assert_eq!(features("trace_full_schema"), ["full-schema"]);
        assert_eq!(features("trace_processor_time"), ["cli"]);
        assert_eq!(features("codegen_frontend"), ["codegen"]);
        for smoke in [
            "decoder",
            "smb_abi",
            "trace_buffer",
            "producer_port",
            "perf_records",
        ] {
            assert!(features(smoke).is_empty(), "{smoke} in the smoke run");
        }
    }
}
