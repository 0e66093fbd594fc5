//! The upstream Perfetto schema for the tests: where `cargo metadata`
//! unpacked it (as build.rs finds it) and `protoc --encode` over it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const UPSTREAM_CRATE: &str = "perfetto_protos";
const UPSTREAM_VERSION: &str = "0.51.1";

/// The root of the unpacked upstream crate (holding `protos/perfetto/...`):
/// `ZEROTRACE_PERFETTO_PROTOS_DIR`, else `cargo metadata` (run once).
pub fn upstream_root() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(find_upstream_root).clone()
}

fn find_upstream_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZEROTRACE_PERFETTO_PROTOS_DIR") {
        return PathBuf::from(dir);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", out.status);
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let pkg = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == UPSTREAM_CRATE && p["version"] == UPSTREAM_VERSION)
        .unwrap_or_else(|| panic!("cargo metadata lists no {UPSTREAM_CRATE} {UPSTREAM_VERSION}"));
    let manifest = pkg["manifest_path"].as_str().expect("manifest_path");
    Path::new(manifest)
        .parent()
        .expect("its directory")
        .to_path_buf()
}

/// `protoc --encode=<message> -I<root> <proto>` of `text`: the encoding,
/// or protoc's complaint.
pub fn protoc_encode(
    root: &Path,
    proto: &str,
    message: &str,
    text: &str,
) -> Result<Vec<u8>, String> {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("the vendored protoc");
    let mut child = Command::new(protoc)
        .current_dir(root)
        .arg(format!("--encode={message}"))
        .arg("-I.")
        .arg(proto)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run protoc");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to protoc");
    let out = child.wait_with_output().expect("wait for protoc");
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
