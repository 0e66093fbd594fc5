//! `cargo xtask private-deps`: no type of a private dependency in the public
//! API of the crates users depend on (`protozero`, `protozero-codegen`).
//! A dependency's type in our signatures, public fields, trait impls or
//! re-exports would make each of its breaking releases one of ours, and
//! tie users to its version.
//!
//! rustc's `exported_private_dependencies` lint finds them, but only on
//! nightly, where `-Zpublic-dependency` makes every dependency private
//! unless its manifest entry says `public = true`; none of ours does (stable
//! cargo warns about the key on every run). So the lint runs with a
//! nightly, as an error, on the two libraries alone (`cargo rustc`, so the
//! dependencies' own builds are untouched), and the task says in one line
//! that it skipped where there is no nightly. `protozero` is checked with
//! its default features: its `derive` feature re-exports the macros of
//! `protozero-derive`, our own crate released with it, on purpose.

use std::path::Path;
use std::process::Command;

/// The crates whose public API is checked (`protozero-derive`, a
/// proc-macro crate, exports only its macros).
const CRATES: &[&str] = &["protozero", "protozero-codegen"];

/// Features each crate is checked with (see the module doc).
fn features(krate: &str) -> &'static [&'static str] {
    if krate == "protozero" {
        &[]
    } else {
        &["--all-features"]
    }
}

/// Checks each crate; `Ok(None)` when no nightly toolchain is installed,
/// else whether every crate passed.
pub fn run(root: &Path) -> Result<Option<bool>, std::io::Error> {
    let nightly = Command::new("cargo")
        .args(["+nightly", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        return Ok(None);
    }
    let mut ok = true;
    for krate in CRATES {
        println!("-- private-deps: {krate}");
        let status = Command::new("cargo")
            .current_dir(root)
            .args([
                "+nightly",
                "-Zpublic-dependency",
                "rustc",
                "--quiet",
                "-p",
                krate,
                "--lib",
                "--profile",
                "check",
            ])
            .args(features(krate))
            .args(["--", "-D", "exported_private_dependencies"])
            .status()?;
        ok &= status.success();
    }
    Ok(Some(ok))
}
