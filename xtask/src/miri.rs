//! `cargo xtask miri`: the test suites that exercise `unsafe` code, run under
//! Miri with both of its aliasing models (Stacked Borrows and Tree Borrows).
//!
//! Miri interprets every memory access, so the run is limited to the tests
//! that reach the unsafe code (the stream writer, the delegates, the byte
//! copies, the shared memory views, the arbiter, the TraceWriter, the patch
//! list) and proptest cases are reduced. Decoder-only suites are left out:
//! the decoders contain no `unsafe`. So is `protozero/tests/all/patches.rs`,
//! whose prost comparisons over thousands of released test slices take more
//! than ten minutes under Miri even reduced; the patch paths it covers run
//! under Miri through `abandoned_patches`, `short_slots`, and the
//! TraceWriter suites. Tests that need the OS (mmap, memfd,
//! spawning the compiler) are ignored under `cfg(miri)` in their own files.
//! Most suites are modules of their package's combined test binary
//! (`tests/all/`, see `suites.rs`): Miri builds that binary and runs the
//! module's tests (`--test all -- name::`).
//! `short_slots` and `reassembly_proptest` (five to six minutes per model)
//! run only with `--full`, before an issue touching the writer closes. CI
//! runs every other target under Stacked Borrows (of zerotrace-core's and
//! the heap profiler's unit tests, those of the modules that hold `unsafe`
//! code), and under Tree Borrows the
//! ones whose unsafe code differs most between the models (raw views of
//! shared memory, handed-out slice pointers, leaked handles); `--full` runs
//! everything under both (the TraceWriter's `soundness` and `trace_writer`
//! suites, two minutes under Tree Borrows, are among what only `--full`
//! adds: CI's time went to the decode benchmark's build; so are protozero's
//! unit tests, 101 s under Tree Borrows, whose handed-out slices and
//! leaked writers `leaks_and_toggles` and `abandoned_patches` take through
//! the same unsafe code under both models in CI).

use std::path::Path;
use std::process::Command;

use crate::suites::Suite;

/// Which of the models CI's short run uses for a target.
#[derive(Clone, Copy, PartialEq)]
enum Ci {
    /// Stacked and Tree Borrows.
    Both,
    /// Stacked Borrows only (Tree Borrows with `--full`).
    Stacked,
    /// Neither (both with `--full`).
    Full,
}

/// Test suites run under Miri: (package, suite; of the lib's unit tests
/// CI's short run takes the modules below).
const TARGETS: &[(&str, Suite, Ci)] = &[
    ("protozero", Suite::Lib, Ci::Stacked),
    ("protozero", Suite::Module("abandoned_patches"), Ci::Both),
    ("protozero", Suite::Module("known_answers"), Ci::Stacked),
    ("protozero", Suite::Module("no_alloc"), Ci::Stacked),
    ("protozero", Suite::Module("short_slots"), Ci::Full),
    ("protozero", Suite::Module("groups"), Ci::Stacked),
    ("protozero", Suite::Module("leaks_and_toggles"), Ci::Both),
    ("zerotrace-core", Suite::Lib, Ci::Stacked),
    ("zerotrace-core", Suite::Module("soundness"), Ci::Stacked),
    ("zerotrace-core", Suite::Module("trace_writer"), Ci::Stacked),
    (
        "zerotrace-core",
        Suite::Module("reassembly_proptest"),
        Ci::Full,
    ),
    ("zerotrace-core", Suite::Module("hostile_smb"), Ci::Both),
    ("zerotrace-heap-profile", Suite::Lib, Ci::Stacked),
];

/// The suites [`TARGETS`] names (checked to exist by `crate::suites`).
#[cfg(test)]
pub fn suites() -> impl Iterator<Item = (&'static str, Suite)> {
    TARGETS.iter().map(|(p, s, _)| (*p, *s))
}

/// CI's short run of a library's unit tests takes only the modules that
/// hold `unsafe` code (a test name filter each; `--full` runs every unit
/// test): (package, its sources from the root, the modules). The rest of
/// zerotrace-core (the trace buffer, config, interning, the IPC framing,
/// the relay) is safe code whose tests took most of the lib's time under
/// Miri. `filters_name_every_unsafe_module` keeps the lists in step with
/// the sources.
pub const UNSAFE_MODULES: &[(&str, &str, &[&str])] = &[
    ("zerotrace-core", "tracing-core/src", CORE_UNSAFE_MODULES),
    (
        "zerotrace-heap-profile",
        "tracing-core/heap-profile/src",
        HEAP_UNSAFE_MODULES,
    ),
];

/// zerotrace-core's modules with `unsafe` code.
const CORE_UNSAFE_MODULES: &[&str] = &[
    "abi::",
    "shm::",
    "producer::",
    "service::commit",
    "service::core::producer_port",
    "peer_policy::consumer_access",
    "daemon::env",
    "daemon::output",
    "ipc::vsock",
    "platform::",
    "track_event::backend",
    "track_event::event_writer",
];

/// The heap profiler's modules with `unsafe` code (its hook, the stack
/// capture, the ring the preload client shares with its helper).
const HEAP_UNSAFE_MODULES: &[&str] = &[
    "allocator::",
    "capture::",
    "client::",
    "forked::",
    "guardian::",
    "helper::",
    "record_queue::",
    "shared_ring::",
    "spin_lock::",
    "thread_hook::",
];

/// Whether CI's short run takes a target of this kind under a model.
type InCi = fn(Ci) -> bool;

/// The two aliasing models: name, the flag that selects it, and whether CI
/// runs a target of the given kind under it.
const MODELS: &[(&str, &str, InCi)] = &[
    ("Stacked Borrows", "", |ci| ci != Ci::Full),
    ("Tree Borrows", "-Zmiri-tree-borrows", |ci| ci == Ci::Both),
];

/// The variable that makes a missing Miri an error (`.ci/run` exports
/// it; `CI` set does the same: `crate::required`).
pub const REQUIRE_VAR: &str = "ZEROTRACE_REQUIRE_MIRI";

/// What a run without a nightly Miri gives: `None` (skipped, said in one
/// line by the caller), or an error when the run is `required`.
fn without_miri(required: bool) -> Result<Option<bool>, std::io::Error> {
    if required {
        return Err(std::io::Error::other(format!(
            "no nightly toolchain with Miri here, and {REQUIRE_VAR}=1 or CI says Miri must run \
             (rustup component add --toolchain nightly miri rust-src)"
        )));
    }
    Ok(None)
}

/// Runs the targets (all of them with `full`, else CI's short list) under
/// every model; `cases` proptest cases each. Returns whether all passed, or
/// `None` when no nightly Miri is available (an error instead under CI or
/// with [`REQUIRE_VAR`]` = 1`).
pub fn run(root: &Path, cases: u32, full: bool) -> Result<Option<bool>, std::io::Error> {
    let available = Command::new("cargo")
        .args(["+nightly", "miri", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        return without_miri(crate::required::required(REQUIRE_VAR));
    }
    let mut ok = true;
    for (model, flag, in_ci) in MODELS {
        for (package, suite, ci) in TARGETS {
            if !full && !in_ci(*ci) {
                continue;
            }
            let what = format!("{package} {}", suite.name());
            println!("-- miri, {model}: {what}");
            let mut cmd = Command::new("cargo");
            cmd.args(["+nightly", "miri", "test", "-q", "-p", package]);
            cmd.args(crate::unoptimised::configs(root));
            match suite.target() {
                Some(t) => cmd.args(["--test", t]),
                None => cmd.arg("--lib"),
            };
            let filters = UNSAFE_MODULES.iter().find(|(p, _, _)| p == package);
            if let Some(filter) = suite.filter() {
                cmd.args(["--", &filter]);
            } else if let (false, Suite::Lib, Some((_, _, modules))) = (full, suite, filters) {
                cmd.arg("--").args(*modules);
            }
            let started = std::time::Instant::now();
            let status = cmd
                .current_dir(root)
                .env("MIRIFLAGS", format!("-Zmiri-disable-isolation {flag}"))
                .env("PROPTEST_CASES", cases.to_string())
                .status()?;
            println!("   {:.0} s", started.elapsed().as_secs_f64());
            if !status.success() {
                eprintln!("miri failed ({model}): {what}");
                ok = false;
            }
        }
    }
    Ok(Some(ok))
}

#[cfg(test)]
mod tests {
    use super::{REQUIRE_VAR, UNSAFE_MODULES, without_miri};
    use std::path::{Path, PathBuf};

    /// Without Miri, a run is skipped only where nothing requires it: under
    /// CI, or with ZEROTRACE_REQUIRE_MIRI=1, it is an error.
    #[test]
    fn a_missing_miri_fails_where_required() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let run = |vars| without_miri(crate::required::required_in(REQUIRE_VAR, env(vars)));
        assert!(matches!(run(&[]), Ok(None)));
        assert!(run(&[("CI", "true")]).is_err());
        assert!(run(&[(REQUIRE_VAR, "1")]).is_err());
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// Every source file of a listed library that writes `unsafe` lies in
    /// a module CI's short Miri run selects.
    #[test]
    fn filters_name_every_unsafe_module() {
        for (package, dir, modules) in UNSAFE_MODULES {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
            let mut files = Vec::new();
            rust_files(&src, &mut files);
            assert!(!files.is_empty(), "{package}: no sources in {dir}");
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                if !text.contains("unsafe ") && !text.contains("unsafe{") {
                    continue;
                }
                let rel = f.strip_prefix(&src).unwrap().with_extension("");
                let mut path = rel
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .filter(|c| c != "mod" && c != "lib")
                    .collect::<Vec<_>>()
                    .join("::");
                path.push_str("::");
                assert!(
                    modules
                        .iter()
                        .any(|m| path.starts_with(m) || m.starts_with(&path)),
                    "{} writes unsafe but no Miri filter of {package} selects {path}",
                    f.display()
                );
            }
        }
    }
}
