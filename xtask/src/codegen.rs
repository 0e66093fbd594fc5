//! `cargo xtask codegen [--check]`: regenerates the Rust code checked in under
//! `protos/src/generated` from the schemas in `protos/proto`, or (with
//! `--check`) verifies that the checked-in code is exactly what the current
//! schemas and generator produce, so a stale file fails CI. The generator's
//! configuration lives in `protos/codegen_config.rs`, which the `protos`
//! package's staleness test (`protos/tests/generated_code_is_fresh.rs`)
//! includes too, so `cargo test` catches stale code as this check does.

use std::path::Path;
use std::process::ExitCode;

use protozero_codegen::CodegenError;

// The generator's configuration, shared with the staleness test in
// `protos/tests/generated_code_is_fresh.rs` (see the included file's `//!`).
#[path = "../../protos/codegen_config.rs"]
mod config;

use config::{FIX_COMMAND, OUT_DIR, extra_files, generate};

/// Runs the task; `Ok(FAILURE)` when `check` finds stale files.
pub fn run(root: &Path, check: bool, protoc: bool) -> Result<ExitCode, CodegenError> {
    let generated = generate(root, protoc)?;
    let out = root.join(OUT_DIR);
    let extra = extra_files(&out, &generated)?;
    if check {
        let stale = generated.stale_in(&out);
        if stale.is_empty() && extra.is_empty() {
            println!("codegen: {} files up to date", generated.files.len());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("codegen: generated code is stale; run `{FIX_COMMAND}`:");
        for p in &stale {
            eprintln!("  stale:    {OUT_DIR}/{}", p.display());
        }
        for p in &extra {
            eprintln!("  obsolete: {OUT_DIR}/{}", p.display());
        }
        return Ok(ExitCode::FAILURE);
    }
    let written = generated.write_to(&out)?;
    for p in &extra {
        let path = out.join(p);
        std::fs::remove_file(&path).map_err(|source| CodegenError::Io { path, source })?;
    }
    println!(
        "codegen: {} files, {} rewritten, {} removed",
        generated.files.len(),
        written.len(),
        extra.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use protozero_codegen::Generated;

    use super::config::PROTO_DIR;
    use super::*;

    /// The protoc front end yields the same Rust (the descriptor sets
    /// differ: protoc fills in `json_name` and keeps source order details).
    #[test]
    fn both_front_ends_generate_the_same_code() {
        let root = crate::workspace_root();
        let protoc = generate(&root, true).unwrap();
        let pure = generate(&root, false).unwrap();
        let rust = |g: &Generated| -> Vec<(PathBuf, Vec<u8>)> {
            g.files
                .iter()
                .filter(|f| f.path.extension().is_some_and(|e| e == "rs"))
                .map(|f| (f.path.clone(), f.contents.clone()))
                .collect()
        };
        let (a, b) = (rust(&protoc), rust(&pure));
        assert_eq!(a.len(), b.len());
        let differing: Vec<_> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, _)| x.0.display().to_string())
            .collect();
        assert!(differing.is_empty(), "differ: {differing:?}");
    }

    #[test]
    fn leftover_files_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let generated = Generated {
            files: vec![protozero_codegen::GeneratedFile {
                path: PathBuf::from("a/keep.rs"),
                contents: b"x".to_vec(),
            }],
        };
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/keep.rs"), "x").unwrap();
        std::fs::write(dir.path().join("a/b/old.rs"), "y").unwrap();
        assert_eq!(
            extra_files(dir.path(), &generated).unwrap(),
            [PathBuf::from("a/b/old.rs")]
        );
        assert!(
            extra_files(&dir.path().join("missing"), &generated)
                .unwrap()
                .is_empty()
        );
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    #[test]
    fn check_fails_until_regenerated() {
        let root = tempfile::tempdir().unwrap();
        copy_dir(
            &crate::workspace_root().join(PROTO_DIR),
            &root.path().join(PROTO_DIR),
        );
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::FAILURE);
        assert_eq!(run(root.path(), false, false).unwrap(), ExitCode::SUCCESS);
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::SUCCESS);
        let leftover = root.path().join(OUT_DIR).join("perfetto/old.rs");
        std::fs::write(&leftover, "// old").unwrap();
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::FAILURE);
        assert_eq!(run(root.path(), false, false).unwrap(), ExitCode::SUCCESS);
        assert!(!leftover.exists());
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::SUCCESS);
    }
}
