//! `cargo xtask msrv`: the crates users depend on (`protozero`,
//! `protozero-codegen`, and `protozero-derive` under them) build with the
//! minimum supported Rust version (MSRV) their `rust-version` states, and
//! so does the code the generator emits.
//!
//! The check compiles with that very toolchain, fetched from Debian's
//! packages ([`debian`]) into `target/msrv/`, with its own cargo and the
//! versions of `Cargo.lock`:
//!
//! * the three libraries, with their default features and with all of
//!   them;
//! * every target of `protozero/user-example` (a user's `build.rs` running
//!   `protozero_codegen::Config`, and the generated writers and decoders)
//!   and of `protozero-codegen/tests/compile` (the code generated for every
//!   fixture: proto2, proto3, editions, groups, extensions, maps).
//!
//! Not checked: the crates' own tests and benches (their dev-dependencies,
//! criterion among them, need a newer Rust; users do not build them), and
//! dependency versions other than the locked ones (a user's resolver picks
//! versions for the user's toolchain). Where the toolchain cannot be had
//! (no Debian package tools, no such package), the task says so in one
//! line; with `ZEROTRACE_REQUIRE_MSRV=1` (CI) that is a failure.

mod debian;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The crates users depend on, whose MSRV is checked.
pub const CRATES: &[&str] = &["protozero", "protozero-codegen", "protozero-derive"];

/// Packages of the workspace whose every target is built with the MSRV:
/// generated code, as users compile it.
const GENERATED: &[&str] = &["protozero-user-example", "protozero-codegen-fixtures"];

/// Why the check could not be made (a finding is not an error: [`run`]
/// reports findings as [`Outcome::Failed`]).
#[derive(Debug, thiserror::Error)]
pub enum MsrvError {
    /// A command could not be started.
    #[error("running {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// A command failed.
    #[error("{command} failed:\n{stderr}")]
    Cargo {
        /// The command line.
        command: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A command printed something unexpected.
    #[error("unexpected output: {0}")]
    Output(String),
    /// A file or directory could not be handled.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What the check found.
pub enum Outcome {
    /// Everything built with the MSRV toolchain (its `rustc --version`).
    Passed(String),
    /// Something did not build, or the crates disagree on their MSRV.
    Failed,
    /// No MSRV toolchain here (why).
    Skipped(String),
}

/// The `rust-version` of each of [`CRATES`], from `cargo metadata`.
fn rust_versions(root: &Path) -> Result<Vec<(String, Option<String>)>, MsrvError> {
    let output = Command::new("cargo")
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .output()
        .map_err(|source| MsrvError::Spawn {
            command: "cargo metadata".to_owned(),
            source,
        })?;
    if !output.status.success() {
        return Err(MsrvError::Cargo {
            command: "cargo metadata".to_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    let json: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| MsrvError::Output(format!("cargo metadata: {e}")))?;
    let packages = json["packages"]
        .as_array()
        .ok_or_else(|| MsrvError::Output("cargo metadata: no packages".to_owned()))?;
    CRATES
        .iter()
        .map(|krate| {
            let p = packages
                .iter()
                .find(|p| p["name"] == *krate)
                .ok_or_else(|| MsrvError::Output(format!("{krate} is not a workspace package")))?;
            Ok((
                (*krate).to_owned(),
                p["rust_version"].as_str().map(str::to_owned),
            ))
        })
        .collect()
}

/// `1.85` of `1.85` or `1.85.1`: Debian packages one toolchain per minor
/// version (patch releases replace it).
fn major_minor(rust_version: &str) -> Option<String> {
    let mut parts = rust_version.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    (major.parse::<u64>().is_ok() && minor.parse::<u64>().is_ok())
        .then(|| format!("{major}.{minor}"))
}

/// Runs the check, printing what was built and every failure.
pub fn run(root: &Path) -> Result<Outcome, MsrvError> {
    let versions = rust_versions(root)?;
    let mut stated: Vec<&str> = versions.iter().filter_map(|(_, v)| v.as_deref()).collect();
    stated.dedup();
    let missing: Vec<&str> = versions
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k.as_str())
        .collect();
    if !missing.is_empty() || stated.len() != 1 {
        eprintln!(
            "msrv: {} must state one rust-version; they state {versions:?}",
            CRATES.join(", ")
        );
        return Ok(Outcome::Failed);
    }
    let msrv = stated[0];
    let Some(minor) = major_minor(msrv) else {
        return Err(MsrvError::Output(format!("rust-version `{msrv}`")));
    };
    let dir = root.join("target/msrv");
    let toolchain = match debian::toolchain(&dir.join(format!("rust-{minor}")), &minor)? {
        Ok(t) => t,
        Err(debian::Unavailable(why)) => return Ok(Outcome::Skipped(why)),
    };
    let version = toolchain
        .version()
        .ok_or_else(|| MsrvError::Output("the MSRV rustc does not run".to_owned()))?;
    let mut packages = Vec::new();
    for krate in CRATES {
        packages.extend(["-p", krate]);
    }
    let mut generated = Vec::new();
    for krate in GENERATED {
        generated.extend(["-p", krate]);
    }
    let runs: [(String, Vec<&str>); 3] = [
        (
            "the libraries, default features".to_owned(),
            [&packages[..], &["--lib"]].concat(),
        ),
        (
            "the libraries, all features".to_owned(),
            [&packages[..], &["--lib", "--all-features"]].concat(),
        ),
        (
            format!("every target of {}", GENERATED.join(", ")),
            [&generated[..], &["--all-targets"]].concat(),
        ),
    ];
    let mut ok = true;
    for (what, args) in &runs {
        let status = Command::new(toolchain.cargo())
            .current_dir(root)
            .args(["check", "--locked", "--quiet"])
            .args(crate::unoptimised::configs(root))
            .args(args)
            .env("RUSTC", toolchain.rustc())
            .env("RUSTDOC", toolchain.rustdoc())
            .env("LD_LIBRARY_PATH", toolchain.library_path())
            .env("CARGO_TARGET_DIR", dir.join("build"))
            .env_remove("CARGO")
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .status()
            .map_err(|source| MsrvError::Spawn {
                command: format!("{} check", toolchain.cargo().display()),
                source,
            })?;
        if status.success() {
            println!("msrv: {what}: built with {version}");
        } else {
            eprintln!("msrv: {what}: does not build with {version} (rust-version {msrv})");
            ok = false;
        }
    }
    Ok(if ok {
        Outcome::Passed(version)
    } else {
        Outcome::Failed
    })
}

#[cfg(test)]
mod tests {
    use super::debian::{depends, package_version};
    use super::major_minor;

    #[test]
    fn the_package_of_a_minor_version_is_found_in_madison_output() {
        let madison = "\
 rustc-web | 1.96.0+dfsg1-1~deb12u2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
 rustc-web | 1.85.0+dfsg3-1~deb12u3 | http://deb.debian.org/debian bookworm/main amd64 Packages
";
        assert_eq!(
            package_version(madison, "1.85").as_deref(),
            Some("1.85.0+dfsg3-1~deb12u3")
        );
        assert_eq!(
            package_version(madison, "1.96").as_deref(),
            Some("1.96.0+dfsg1-1~deb12u2")
        );
        // 1.8 is not 1.85's prefix.
        assert_eq!(package_version(madison, "1.8"), None);
        assert_eq!(package_version("", "1.85"), None);
    }

    #[test]
    fn depends_takes_the_first_alternative_without_constraints() {
        assert_eq!(
            depends(
                " libc6 (>= 2.34), libllvm19, gcc | clang, libstd-rust-web-dev (= 1.85.0), python3:any"
            ),
            [
                "libc6",
                "libllvm19",
                "gcc",
                "libstd-rust-web-dev",
                "python3"
            ]
        );
        assert!(depends("").is_empty());
    }

    #[test]
    fn debian_packages_one_toolchain_per_minor_version() {
        assert_eq!(major_minor("1.85").as_deref(), Some("1.85"));
        assert_eq!(major_minor("1.85.1").as_deref(), Some("1.85"));
        assert_eq!(major_minor("1"), None);
        assert_eq!(major_minor("1.x"), None);
    }
}
