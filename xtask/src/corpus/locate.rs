//! Finds where a corpus' `.proto` files live on this machine: in the sources
//! of a crate that cargo fetched (never built, listed under a
//! `cfg(any())` target so only `cargo metadata` downloads it), in the
//! include directory that `protoc-bin-vendored` ships, or in a Python
//! wheel that `pip download` fetches into `target/` and we unpack there.

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

/// The unpacked contents of wheel `package==version` under `dir`
/// (downloaded with `pip download --no-deps` on first use).
pub fn pypi_wheel(dir: &Path, package: &str, version: &str) -> Result<PathBuf, CorpusError> {
    let root = dir.join(format!("{package}-{version}"));
    let unpacked = root.join("unpacked");
    let done = root.join(".unpacked");
    if done.is_file() {
        return Ok(unpacked);
    }
    let wheels = root.join("wheels");
    run(Command::new(python())
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
            "-d",
        ])
        .arg(&wheels)
        .arg(format!("{package}=={version}")))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| CorpusError::Locate(format!("{}: {e}", wheels.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| CorpusError::Locate(format!("pip fetched no wheel of {package}")))?;
    if unpacked.exists() {
        std::fs::remove_dir_all(&unpacked)
            .map_err(|e| CorpusError::Locate(format!("{}: {e}", unpacked.display())))?;
    }
    run(Command::new(python())
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked))?;
    std::fs::write(&done, b"")
        .map_err(|e| CorpusError::Locate(format!("{}: {e}", done.display())))?;
    Ok(unpacked)
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn run(cmd: &mut Command) -> Result<(), CorpusError> {
    let status = cmd
        .status()
        .map_err(|e| CorpusError::Locate(format!("running {cmd:?}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(CorpusError::Locate(format!("{cmd:?} failed: {status}")))
    }
}
