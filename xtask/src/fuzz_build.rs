//! The fuzz targets' build and run without the `cargo fuzz` subcommand:
//! cargo-fuzz is a thin driver over cargo and libFuzzer, and installing it
//! compiles it from source (about two and a half minutes of a CI run on
//! two cores, every run, for a handful of flags). These are the flags and
//! options its `build` and `run` pass (cargo-fuzz 0.13: the sanitizer
//! coverage passes libFuzzer feeds on, `--cfg fuzzing`, the sanitizer,
//! the explicit target triple that keeps them off build scripts, and the
//! address sanitizer's options), so a target built here is the binary
//! `cargo fuzz build` makes, and `cargo fuzz run` in `fuzz/` still works
//! for a developer who has it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The host's target triple (`rustc -vV`), which the targets are built
/// for: given to cargo explicitly, as cargo-fuzz does, so that RUSTFLAGS
/// reach the targets' code but not the build scripts.
pub fn host_triple() -> String {
    Command::new("rustc")
        .arg("-vV")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        })
        .unwrap_or_else(|| "x86_64-unknown-linux-gnu".to_owned())
}

/// How the targets are built.
#[derive(Clone, Debug)]
pub struct Build {
    /// Nightly with the address sanitizer; else stable without one.
    pub nightly: bool,
    /// Unoptimised with debug assertions (`--dev`); else `--release`.
    pub dev: bool,
    /// The target triple ([`host_triple`]).
    pub triple: String,
}

impl Build {
    /// The RUSTFLAGS cargo-fuzz's `build` sets for these options.
    pub fn rustflags(&self) -> String {
        let mut flags = vec![
            "-Cpasses=sancov-module",
            "-Cllvm-args=-sanitizer-coverage-level=4",
            "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
            "-Cllvm-args=-sanitizer-coverage-pc-table",
            "-Cllvm-args=-sanitizer-coverage-trace-compares",
            "--cfg",
            "fuzzing",
            "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
        ];
        if self.nightly {
            flags.push("-Zsanitizer=address");
        }
        if self.triple.contains("-linux-") {
            flags.push("-Cllvm-args=-sanitizer-coverage-stack-depth");
        }
        if self.dev {
            flags.push("-Cdebug-assertions");
        } else {
            flags.push("-Ccodegen-units=1");
        }
        let mut flags = flags.join(" ");
        // The caller's own come last, so that they win, as with cargo-fuzz.
        if let Ok(own) = std::env::var("RUSTFLAGS") {
            flags.push(' ');
            flags.push_str(&own);
        }
        flags
    }

    /// `cargo build` of the fuzz package's `bins` (all of them when
    /// empty), with `features` (cargo's feature arguments), into
    /// `target_dir`.
    pub fn command(
        &self,
        fuzz_dir: &Path,
        target_dir: &Path,
        features: &[&str],
        bins: &[String],
    ) -> Command {
        let mut cmd = Command::new("cargo");
        if self.nightly {
            cmd.arg("+nightly");
        }
        cmd.args(["build", "--manifest-path"])
            .arg(fuzz_dir.join("Cargo.toml"))
            .args(["--target", &self.triple]);
        if !self.dev {
            cmd.args([
                "--release",
                "--config",
                "profile.release.debug=\"line-tables-only\"",
            ]);
        }
        cmd.args(features);
        if bins.is_empty() {
            cmd.arg("--bins");
        }
        for bin in bins {
            cmd.args(["--bin", bin]);
        }
        cmd.env("RUSTFLAGS", self.rustflags())
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(fuzz_dir);
        cmd
    }

    /// Where [`Build::command`] puts `target`'s binary.
    pub fn binary(&self, target_dir: &Path, target: &str) -> PathBuf {
        target_dir
            .join(&self.triple)
            .join(if self.dev { "debug" } else { "release" })
            .join(target)
    }

    /// The binary of `target` run over `corpus` for `seconds`, its crash
    /// inputs written under `artifacts` (a directory), as `cargo fuzz run`
    /// runs it.
    pub fn run_command(
        &self,
        target_dir: &Path,
        target: &str,
        corpus: &Path,
        artifacts: &Path,
        seconds: u64,
    ) -> Command {
        let mut cmd = Command::new(self.binary(target_dir, target));
        let mut prefix = OsString::from("-artifact_prefix=");
        prefix.push(artifacts.as_os_str());
        prefix.push("/");
        cmd.arg(prefix)
            .arg(corpus)
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1");
        if self.nightly {
            // cargo-fuzz's default for the address sanitizer (its ODR
            // check reports Rust's duplicated symbols), after the caller's.
            let mut opts = std::env::var("ASAN_OPTIONS").unwrap_or_default();
            if !opts.is_empty() {
                opts.push(':');
            }
            opts.push_str("detect_odr_violation=0");
            cmd.env("ASAN_OPTIONS", opts);
        }
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags cargo-fuzz 0.13 passes for `build --dev -s address` and
    /// `build --release -s none` (read from its `project.rs`).
    #[test]
    fn the_flags_are_cargo_fuzzs() {
        let linux = || "x86_64-unknown-linux-gnu".to_owned();
        let dev = Build {
            nightly: true,
            dev: true,
            triple: linux(),
        }
        .rustflags();
        for f in [
            "-Cpasses=sancov-module",
            "-Cllvm-args=-sanitizer-coverage-level=4",
            "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
            "-Cllvm-args=-sanitizer-coverage-pc-table",
            "-Cllvm-args=-sanitizer-coverage-trace-compares",
            "--cfg fuzzing",
            "-Zsanitizer=address",
            "-Cdebug-assertions",
            "-Cllvm-args=-sanitizer-coverage-stack-depth",
        ] {
            assert!(dev.contains(f), "{f} in {dev}");
        }
        let release = Build {
            nightly: false,
            dev: false,
            triple: linux(),
        }
        .rustflags();
        assert!(!release.contains("sanitizer="), "{release}");
        assert!(!release.contains("debug-assertions"), "{release}");
        assert!(release.contains("-Ccodegen-units=1"), "{release}");
        let b = Build {
            nightly: false,
            dev: true,
            triple: linux(),
        };
        assert_eq!(
            b.binary(Path::new("/t"), "decoder"),
            Path::new("/t/x86_64-unknown-linux-gnu/debug/decoder")
        );
    }
}
