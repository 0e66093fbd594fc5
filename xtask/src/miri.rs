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
//! run only with `--full`, before an issue touching the writer closes; CI
//! runs the rest.

use std::path::Path;
use std::process::Command;

/// Test targets run under Miri: (package, target; `None` = the lib's unit
/// tests, whether CI's short run includes it).
const TARGETS: &[(&str, Option<&str>, bool)] = &[
    ("protozero", None, true),
    ("protozero", Some("abandoned_patches"), true),
    ("protozero", Some("known_answers"), true),
    ("protozero", Some("no_alloc"), true),
    ("protozero", Some("short_slots"), false),
    ("protozero", Some("groups"), true),
    ("protozero", Some("leaks_and_toggles"), true),
    ("zerotrace-core", None, true),
    ("zerotrace-core", Some("soundness"), true),
    ("zerotrace-core", Some("trace_writer"), true),
    ("zerotrace-core", Some("reassembly_proptest"), false),
    ("zerotrace-core", Some("hostile_smb"), true),
];

/// The two aliasing models, by the flag that selects each.
const MODELS: &[(&str, &str)] = &[
    ("Stacked Borrows", ""),
    ("Tree Borrows", "-Zmiri-tree-borrows"),
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
    for (model, flag) in MODELS {
        for (package, target, in_ci) in TARGETS {
            if !full && !in_ci {
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
