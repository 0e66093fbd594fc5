//! `cargo xtask codegen [--check]`: the one generator run of the schema
//! pipeline (`protos/pipeline`, whose `lib.rs` names every schema used).
//! It rewrites the checked-in outputs (`protos/src/generated`: our schemas
//! and the upstream set as one schema; the command's descriptor set) or,
//! with `--check`,
//! fails when any of them is not exactly what the current schemas and
//! generator make. The staleness test `protos/tests/generated_code_is_fresh.rs`
//! runs the same pipeline, so `cargo test` catches stale code as this does.

use std::path::Path;
use std::process::ExitCode;

use zerotrace_schema_pipeline::{FIX_COMMAND, PipelineError, generate};

/// Runs the task; `Ok(FAILURE)` when `check` finds stale files.
pub fn run(root: &Path, check: bool, protoc: bool) -> Result<ExitCode, PipelineError> {
    let outputs = generate(root, protoc)?;
    if check {
        let stale = outputs.stale(root);
        let obsolete = outputs.obsolete(root)?;
        if stale.is_empty() && obsolete.is_empty() {
            println!("codegen: {} files up to date", outputs.len());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("codegen: generated code is stale; run `{FIX_COMMAND}`:");
        for p in &stale {
            eprintln!("  stale:    {}", p.display());
        }
        for p in &obsolete {
            eprintln!("  obsolete: {}", p.display());
        }
        return Ok(ExitCode::FAILURE);
    }
    let (written, removed) = outputs.write(root)?;
    println!(
        "codegen: {} files, {} rewritten, {} removed",
        outputs.len(),
        written.len(),
        removed.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use zerotrace_schema_pipeline::{
        OUR_OUT_DIR, OUR_PROTO_DIR, Outputs, WINSCOPE_NEWER_PROTO_DIR,
    };

    use super::*;

    /// The protoc front end yields the same Rust, for our schemas and for
    /// upstream's (our descriptor sets differ only where protoc gives a
    /// method written with a body, `rpc M(A) returns (B) {}`, an empty
    /// options message; see protozero-codegen's `tests/front_ends_agree/`).
    #[test]
    fn both_front_ends_generate_the_same_code() {
        let root = crate::workspace_root();
        let protoc = generate(&root, true).unwrap();
        let pure = generate(&root, false).unwrap();
        let rust = |g: &Outputs| -> Vec<(PathBuf, Vec<u8>)> {
            g.outputs
                .iter()
                .flat_map(|o| o.generated.files.iter().map(move |f| (o.dir, f)))
                .filter(|(_, f)| f.path.extension().is_some_and(|e| e == "rs"))
                .map(|(dir, f)| (Path::new(dir).join(&f.path), f.contents.clone()))
                .collect()
        };
        let (a, b) = (rust(&protoc), rust(&pure));
        assert_eq!(a.len(), b.len());
        assert!(a.len() > 60, "{} files", a.len());
        let differing: Vec<_> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, _)| x.0.display().to_string())
            .collect();
        assert!(differing.is_empty(), "differ: {differing:?}");
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
        // The pipeline's inputs in the repository: our protos and the
        // Winscope fields newer than upstream's v51.
        for dir in [OUR_PROTO_DIR, WINSCOPE_NEWER_PROTO_DIR] {
            copy_dir(&crate::workspace_root().join(dir), &root.path().join(dir));
        }
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::FAILURE);
        assert_eq!(run(root.path(), false, false).unwrap(), ExitCode::SUCCESS);
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::SUCCESS);
        let leftover = root.path().join(OUR_OUT_DIR).join("perfetto/old.rs");
        std::fs::write(&leftover, "// old").unwrap();
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::FAILURE);
        assert_eq!(run(root.path(), false, false).unwrap(), ExitCode::SUCCESS);
        assert!(!leftover.exists());
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::SUCCESS);
        // A hand edit of an upstream-derived output is stale too.
        let descriptor = root
            .path()
            .join(zerotrace_schema_pipeline::DESCRIPTOR_OUT_DIR)
            .join(zerotrace_schema_pipeline::DESCRIPTOR_FILE);
        std::fs::write(&descriptor, b"").unwrap();
        assert_eq!(run(root.path(), true, false).unwrap(), ExitCode::FAILURE);
    }
}
