//! `cargo xtask heap-cost`: issue #40's overhead of the heap profiler next
//! to dhat-rs and heaptrack. Builds the preload library and its examples
//! (release) and runs `examples/heap_cost.rs`, which times an
//! allocation-heavy Rust and C workload plain, with the profiler idle and
//! profiled at 4096 bytes, and under the other profilers, in rotated
//! rounds, and prints medians, ratios and the goals; first issue #51's
//! allocation-heavy C program (5 M malloc/free pairs) plain, preload idle,
//! lossless at 4096 bytes and under heaptrack (`--churn-only`: that alone). Needs `cc`;
//! heaptrack where installed (Debian package `heaptrack`).

use std::path::Path;
use std::process::Command;

/// Builds and runs the comparison with `rounds` rounds of the table and
/// `work` rounds of the workload (`churn_only`: issue #51's
/// allocation-heavy table alone); `Ok(false)` when a step failed.
pub fn run(root: &Path, rounds: u32, work: u32, churn_only: bool) -> Result<bool, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(&cargo)
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "zerotrace-heapprofd-preload",
            "--lib",
            "--examples",
        ])
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !build.success() {
        return Ok(false);
    }
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let exe = root.join(target).join("release/examples/heap_cost");
    let status = Command::new(&exe)
        .args([rounds.to_string(), work.to_string()])
        .args(churn_only.then_some("churn"))
        .status()
        .map_err(|e| format!("running {}: {e}", exe.display()))?;
    Ok(status.success())
}
