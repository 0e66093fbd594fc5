//! `cargo xtask tsan`: the tests where threads of one process share memory
//! with the embedded service (the in-process backend, its scrape race),
//! under ThreadSanitizer. Miri cannot run
//! them (they map memfds and spawn the service's threads), so the race
//! detector covers that path instead: any two accesses to one location from
//! two threads, one a plain write, not ordered by synchronisation, fail the
//! run. The sanitizer needs a nightly toolchain and the standard library
//! rebuilt with it (`-Zbuild-std`, the `rust-src` component); it builds in
//! its own target directory.

use std::path::Path;
use std::process::Command;

/// (package, test target) pairs run under the sanitizer.
const TARGETS: &[(&str, &str)] = &[
    ("zerotrace-core", "in_process_scrape_race"),
    ("zerotrace-core", "track_event_in_process"),
];

/// Runs the targets; `Ok(None)` when no nightly with `rust-src` is here.
pub fn run(root: &Path) -> Result<Option<()>, String> {
    let have = Command::new("rustup")
        .args(["+nightly", "component", "list", "--installed"])
        .output()
        .map(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("rust-src"))
        .unwrap_or(false);
    if !have {
        return Ok(None);
    }
    for (package, test) in TARGETS {
        println!("-- tsan: {package} --test {test}");
        let status = Command::new("cargo")
            .current_dir(root)
            .args([
                "+nightly",
                "test",
                "-q",
                "-Zbuild-std",
                "--target",
                "x86_64-unknown-linux-gnu",
                "-p",
                package,
                "--test",
                test,
            ])
            .env("RUSTFLAGS", "-Zsanitizer=thread")
            .env("RUSTDOCFLAGS", "-Zsanitizer=thread")
            .env("CARGO_TARGET_DIR", root.join("target/tsan"))
            .env("TSAN_OPTIONS", "halt_on_error=1")
            .env_remove("CARGO_INCREMENTAL")
            .status()
            .map_err(|e| format!("cargo: {e}"))?;
        if !status.success() {
            return Err(format!("ThreadSanitizer failed: {package} --test {test}"));
        }
    }
    Ok(Some(()))
}
