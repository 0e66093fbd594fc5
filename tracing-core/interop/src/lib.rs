//! Test support for checking zerotrace against the real thing.
//!
//! Self-consistency proves little for a wire format: these helpers find the
//! upstream Perfetto `.proto` files (shipped in the sources of the
//! `perfetto_protos` crate, fetched by cargo but never built or committed) and
//! a `protoc` binary (from `protoc-bin-vendored`), so tests can decode our
//! bytes with Google's own decoder and Perfetto's own schema.
//!
//! [`genuine`] wraps Perfetto's own service-side classes, compiled from the
//! amalgamated C++ source of the `perfetto-sdk-sys` crate (see `build.rs`):
//! its trace buffers and its whole tracing service on IPC sockets;
//! [`workload`] generates the chunk streams that compare the buffers with
//! ours. For the IPC interop tests, [`services`] runs `zerotraced` or the
//! genuine service on private sockets, [`sdk`] runs the genuine SDK clients
//! (package `zerotrace-genuine-sdk`) as child processes, [`sdk_workload`]
//! says what the genuine producer writes, [`trace_check`] reads traces back
//! event by event, and [`raw_client`] sees a session's replies in order.

pub mod genuine;
pub mod oracle;
pub mod raw_client;
pub mod sdk;
/// What `genuine-producer` writes: the very file its package compiles (this
/// package must not link the genuine SDK, so it includes the file instead).
#[path = "../genuine-sdk/src/workload.rs"]
pub mod sdk_workload;
pub mod services;
pub mod soak;
pub mod trace_check;
pub mod workload;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why an upstream tool or schema could not be used.
#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    /// `cargo metadata` failed or did not list the schema crate.
    #[error("cannot locate upstream Perfetto protos: {0}")]
    Locate(String),
    /// The vendored protoc binary is not available for this platform.
    #[error("protoc unavailable: {0}")]
    Protoc(String),
    /// protoc ran but rejected the input.
    #[error("protoc failed ({status}): {stderr}")]
    Decode {
        /// Exit status text.
        status: String,
        /// What protoc printed.
        stderr: String,
    },
    /// Spawning or talking to a process failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The directory holding upstream `protos/perfetto/...` (the include root for protoc).
pub fn upstream_proto_root() -> Result<PathBuf, InteropError> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(InteropError::Locate(format!(
            "cargo metadata: {}",
            out.status
        )));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| InteropError::Locate(e.to_string()))?;
    let packages = meta["packages"]
        .as_array()
        .ok_or_else(|| InteropError::Locate("no packages in metadata".into()))?;
    let pkg = packages
        .iter()
        .find(|p| p["name"] == "perfetto_protos")
        .ok_or_else(|| InteropError::Locate("perfetto_protos not in metadata".into()))?;
    let manifest_path = pkg["manifest_path"]
        .as_str()
        .ok_or_else(|| InteropError::Locate("no manifest_path".into()))?;
    let root = Path::new(manifest_path)
        .parent()
        .ok_or_else(|| InteropError::Locate("bad manifest_path".into()))?
        .to_path_buf();
    if root.join("protos/perfetto/trace/trace.proto").is_file() {
        Ok(root)
    } else {
        Err(InteropError::Locate(format!(
            "{} has no protos/perfetto/trace/trace.proto",
            root.display()
        )))
    }
}

/// Path of the vendored `protoc`.
pub fn protoc() -> Result<PathBuf, InteropError> {
    protoc_bin_vendored::protoc_bin_path().map_err(|e| InteropError::Protoc(e.to_string()))
}

/// Runs `protoc --decode=<message>` over `bytes` with the upstream schema file
/// `proto` (relative to the upstream root, e.g. `protos/perfetto/trace/trace.proto`)
/// and returns the text format.
pub fn protoc_decode(message: &str, proto: &str, bytes: &[u8]) -> Result<String, InteropError> {
    let root = upstream_proto_root()?;
    let mut child = Command::new(protoc()?)
        .arg(format!("-I{}", root.display()))
        .arg(format!("--decode={message}"))
        .arg(proto)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| InteropError::Protoc("no stdin".into()))?;
    let input = bytes.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output()?;
    feeder
        .join()
        .map_err(|_| InteropError::Protoc("stdin writer panicked".into()))??;
    if !out.status.success() {
        return Err(InteropError::Decode {
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
