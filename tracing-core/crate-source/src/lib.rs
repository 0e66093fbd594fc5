//! Where cargo unpacked a pinned crate's sources, for build scripts that
//! read files shipped in a crate they never build.
//!
//! The schema pipeline (`protos/pipeline`) reads Perfetto's upstream
//! `.proto` files (crate `perfetto_protos`) and `zerotrace-interop`'s build
//! script compiles Perfetto's amalgamated C++ (crate `perfetto-sdk-sys`). Each declares its
//! crate for a `cfg(any())` target, so cargo resolves and downloads it but
//! never builds it, and then needs the directory cargo unpacked it into.
//! Both asked `cargo metadata` the same way, each with its own copy of the
//! code; this crate is that lookup, once (a dependency of both).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a crate's source directory could not be found.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// `cargo metadata` could not be started.
    #[error("running cargo metadata: {0}")]
    Spawn(#[source] std::io::Error),
    /// `cargo metadata` ran and failed (it printed why on stderr).
    #[error("cargo metadata failed: {0}")]
    Failed(std::process::ExitStatus),
    /// Its output was not the JSON expected.
    #[error("cargo metadata output: {0}")]
    Json(String),
    /// The resolved packages hold no such name and version.
    #[error("cargo metadata lists no {name} {version}")]
    NotListed {
        /// The crate's name.
        name: String,
        /// Its version.
        version: String,
    },
}

/// The source directory of crate `name` at exactly `version`, as resolved
/// for the package whose directory is `manifest_dir` (in a build script,
/// `CARGO_MANIFEST_DIR`), unless the environment variable `override_var`
/// names a directory, which is then returned as is. `cargo metadata`
/// downloads the crate into cargo's registry cache when it is not there yet.
///
/// Build scripts should print `cargo:rerun-if-env-changed=<override_var>`.
pub fn crate_source_dir(
    override_var: &str,
    manifest_dir: &Path,
    name: &str,
    version: &str,
) -> Result<PathBuf, LocateError> {
    if let Some(dir) = std::env::var_os(override_var) {
        return Ok(PathBuf::from(dir));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(manifest_dir.join("Cargo.toml"))
        .stderr(Stdio::inherit())
        .output()
        .map_err(LocateError::Spawn)?;
    if !out.status.success() {
        return Err(LocateError::Failed(out.status));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| LocateError::Json(e.to_string()))?;
    let packages = meta["packages"]
        .as_array()
        .ok_or_else(|| LocateError::Json("no `packages` array".into()))?;
    let pkg = packages
        .iter()
        .find(|p| p["name"] == name && p["version"] == version)
        .ok_or_else(|| LocateError::NotListed {
            name: name.to_owned(),
            version: version.to_owned(),
        })?;
    let manifest_path = pkg["manifest_path"]
        .as_str()
        .ok_or_else(|| LocateError::Json(format!("{name} has no `manifest_path`")))?;
    Path::new(manifest_path)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| LocateError::Json(format!("manifest path {manifest_path} has no parent")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNSET: &str = "ZEROTRACE_CRATE_SOURCE_TEST_UNSET";

    fn here() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// This very package is in its own metadata, so the lookup must land
    /// on this directory.
    #[test]
    fn finds_a_listed_package() {
        let dir = crate_source_dir(
            UNSET,
            here(),
            "zerotrace-crate-source",
            env!("CARGO_PKG_VERSION"),
        )
        .unwrap();
        assert_eq!(dir.canonicalize().unwrap(), here().canonicalize().unwrap());
    }

    #[test]
    fn a_version_not_resolved_is_not_listed() {
        let err =
            crate_source_dir(UNSET, here(), "zerotrace-crate-source", "0.0.0-none").unwrap_err();
        assert!(matches!(err, LocateError::NotListed { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "cargo metadata lists no zerotrace-crate-source 0.0.0-none"
        );
    }

    /// The override wins without asking cargo (the manifest does not exist).
    #[test]
    fn the_override_variable_wins() {
        // CARGO_MANIFEST_DIR is always set for tests; any set variable does.
        let dir =
            crate_source_dir("CARGO_MANIFEST_DIR", Path::new("/nonexistent"), "x", "1").unwrap();
        assert_eq!(dir, here());
    }
}
