//! `cargo xtask miri`: the test suites that exercise `unsafe` code, run under
//! Miri with both of its aliasing models (Stacked Borrows and Tree Borrows).
//!
//! Miri interprets every memory access, so the run is limited to the tests
//! that reach the unsafe code (the stream writer, the delegates, the byte
//! copies, the shared memory views, the arbiter, the TraceWriter, the patch
//! list) and proptest cases are reduced. Decoder-only suites are left out:
//! the decoders contain no `unsafe`. So is `protozero/tests/patches.rs`,
//! whose prost comparisons over thousands of released test slices take more
//! than ten minutes under Miri even reduced; the patch paths it covers run
//! under Miri through `abandoned_patches`, `short_slots`, and the
//! TraceWriter suites. Tests that need the OS (mmap, memfd,
//! spawning the compiler) are ignored under `cfg(miri)` in their own files.
//! `short_slots` and `reassembly_proptest` (five to six minutes per model)
//! run only with `--full`, before an issue touching the writer closes. CI
//! runs every other target under Stacked Borrows (of zerotrace-core's unit
//! tests, those of the modules that hold `unsafe` code), and under Tree Borrows the
//! ones whose unsafe code differs most between the models (raw views of
//! shared memory, handed-out slice pointers, leaked handles); `--full` runs
//! everything under both (the TraceWriter's `soundness` and `trace_writer`
//! suites, two minutes under Tree Borrows, are among what only `--full`
//! adds: CI's time went to the decode benchmark's build).

use std::path::Path;
use std::process::Command;

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

/// Test targets run under Miri: (package, target; `None` = the lib's unit
/// tests, what CI's short run includes of it).
const TARGETS: &[(&str, Option<&str>, Ci)] = &[
    ("protozero", None, Ci::Both),
    ("protozero", Some("abandoned_patches"), Ci::Both),
    ("protozero", Some("known_answers"), Ci::Stacked),
    ("protozero", Some("no_alloc"), Ci::Stacked),
    ("protozero", Some("short_slots"), Ci::Full),
    ("protozero", Some("groups"), Ci::Stacked),
    ("protozero", Some("leaks_and_toggles"), Ci::Both),
    ("zerotrace-core", None, Ci::Stacked),
    ("zerotrace-core", Some("soundness"), Ci::Stacked),
    ("zerotrace-core", Some("trace_writer"), Ci::Stacked),
    ("zerotrace-core", Some("reassembly_proptest"), Ci::Full),
    ("zerotrace-core", Some("hostile_smb"), Ci::Both),
];

/// CI's short run of zerotrace-core's unit tests takes only the modules
/// that hold `unsafe` code (a test name filter each; `--full` runs every
/// unit test). The rest (the trace buffer, config, interning, the IPC
/// framing, the relay) is safe code whose tests took most of the lib's
/// time under Miri. `core_filters_name_every_unsafe_module` keeps the list
/// in step with the sources.
const CORE_UNSAFE_MODULES: &[&str] = &[
    "abi::",
    "shm::",
    "producer::",
    "service::commit",
    "service::core::producer_port",
    "daemon::consumer_access",
    "daemon::env",
    "daemon::output",
    "heap_profile::allocator",
    "heap_profile::capture",
    "heap_profile::client",
    "heap_profile::forked",
    "heap_profile::guardian",
    "heap_profile::helper",
    "heap_profile::record_queue",
    "heap_profile::shared_ring",
    "heap_profile::spin_lock",
    "heap_profile::thread_hook",
    "ipc::vsock",
    "platform::",
    "track_event::event_writer",
];

/// Whether CI's short run takes a target of this kind under a model.
type InCi = fn(Ci) -> bool;

/// The two aliasing models: name, the flag that selects it, and whether CI
/// runs a target of the given kind under it.
const MODELS: &[(&str, &str, InCi)] = &[
    ("Stacked Borrows", "", |ci| ci != Ci::Full),
    ("Tree Borrows", "-Zmiri-tree-borrows", |ci| ci == Ci::Both),
];

/// Runs the targets (all of them with `full`, else CI's short list) under
/// every model; `cases` proptest cases each. Returns whether all passed, or
/// `None` when no nightly Miri is available.
pub fn run(root: &Path, cases: u32, full: bool) -> Result<Option<bool>, std::io::Error> {
    let available = Command::new("cargo")
        .args(["+nightly", "miri", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        return Ok(None);
    }
    let mut ok = true;
    for (model, flag, in_ci) in MODELS {
        for (package, target, ci) in TARGETS {
            if !full && !in_ci(*ci) {
                continue;
            }
            let what = format!("{package} {}", target.unwrap_or("(unit tests)"));
            println!("-- miri, {model}: {what}");
            let mut cmd = Command::new("cargo");
            cmd.args(["+nightly", "miri", "test", "-q", "-p", package]);
            match target {
                Some(t) => cmd.args(["--test", t]),
                None => cmd.arg("--lib"),
            };
            if !full && *package == "zerotrace-core" && target.is_none() {
                cmd.arg("--").args(CORE_UNSAFE_MODULES);
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
    use super::CORE_UNSAFE_MODULES;
    use std::path::{Path, PathBuf};

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

    /// Every source file of zerotrace-core that writes `unsafe` lies in a
    /// module CI's short Miri run selects.
    #[test]
    fn core_filters_name_every_unsafe_module() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tracing-core/src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
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
                CORE_UNSAFE_MODULES
                    .iter()
                    .any(|m| path.starts_with(m) || m.starts_with(&path)),
                "{} writes unsafe but no Miri filter selects {path}",
                f.display()
            );
        }
    }
}
