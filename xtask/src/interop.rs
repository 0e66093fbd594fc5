//! `cargo xtask interop`: the checks against genuine Perfetto in one go.
//!
//! Builds the genuine SDK clients (`zerotrace-genuine-sdk`: its first build
//! compiles Perfetto's C SDK, once per target directory), then runs the
//! tests of `zerotrace-interop` (genuine service and trace buffers from the
//! amalgamation compiled into `cpp/service_shim.cc`, the SDK clients as
//! child processes, protoc over the upstream schemas) and of the SDK
//! package. `--bench` also runs the end-to-end benchmark (zerotraced vs
//! the genuine service) and the TrackEvent benchmark (our API and Layer vs
//! the genuine C SDK and the other `tracing` layers), and prints the
//! latter's ratios.

use std::path::Path;
use std::process::Command;

fn cargo(root: &Path, args: &[&str]) -> Result<bool, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    println!("== cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .current_dir(root)
        .args(args)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    Ok(status.success())
}

/// Runs the interop checks; `Ok(false)` when one failed.
pub fn run(root: &Path, bench: bool) -> Result<bool, String> {
    let steps: &[&[&str]] = &[
        &["build", "-p", "zerotrace-genuine-sdk", "--bins"],
        &[
            "test",
            "-p",
            "zerotrace-interop",
            "-p",
            "zerotrace-genuine-sdk",
        ],
    ];
    for step in steps {
        if !cargo(root, step)? {
            return Ok(false);
        }
    }
    if bench {
        let benches: &[&[&str]] = &[
            &["bench", "-p", "zerotrace-interop", "--bench", "end_to_end"],
            &[
                "bench",
                "-p",
                "zerotrace-genuine-sdk",
                "--bench",
                "track_event",
            ],
        ];
        for step in benches {
            if !cargo(root, step)? {
                return Ok(false);
            }
        }
        let script = root.join("tracing-core/interop/genuine-sdk/benches/track_event_ratios.py");
        let status = Command::new("python3")
            .arg(script)
            .current_dir(root)
            .status()
            .map_err(|e| format!("running python3: {e}"))?;
        return Ok(status.success());
    }
    Ok(true)
}
