//! Finds where a corpus' `.proto` files live on this machine: in the sources
//! of a crate that cargo fetched (never built, listed under a
//! `cfg(any())` target so only `cargo metadata` downloads it), or in the
//! include directory that `protoc-bin-vendored` ships.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::CorpusError;

/// The source directory of package `name` as resolved for `manifest`
/// (`cargo metadata` downloads it into the registry cache if needed).
pub fn crate_dir(manifest: &Path, name: &str) -> Result<PathBuf, CorpusError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| CorpusError::Locate(format!("running cargo metadata: {e}")))?;
    if !out.status.success() {
        return Err(CorpusError::Locate(format!(
            "cargo metadata --manifest-path {}: {}",
            manifest.display(),
            out.status
        )));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| CorpusError::Locate(format!("cargo metadata output: {e}")))?;
    let manifest_path = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or_else(|| {
            CorpusError::Locate(format!(
                "package `{name}` is not in the metadata of {}",
                manifest.display()
            ))
        })?;
    Path::new(manifest_path)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| CorpusError::Locate(format!("bad manifest path {manifest_path}")))
}

/// The include directory with Google's well-known types and
/// `descriptor.proto`, as shipped by `protoc-bin-vendored`.
pub fn protoc_include() -> Result<PathBuf, CorpusError> {
    protoc_bin_vendored::include_path()
        .map_err(|e| CorpusError::Locate(format!("protoc-bin-vendored include dir: {e}")))
}
