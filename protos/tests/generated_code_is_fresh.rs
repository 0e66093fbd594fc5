//! Stale generated code fails `cargo test`, not only the CI step
//! `cargo xtask codegen --check`: a schema edited without regenerating, a
//! generator changed without regenerating, or a hand-edited generated file
//! would otherwise go unnoticed until CI (as rust-analyzer's sourcegen tests).
//!
//! The test regenerates `protos/src/generated` from `protos/proto` in memory,
//! with the very configuration `cargo xtask codegen` uses (the shared
//! `protos/codegen_config.rs`), and compares it with the checked-in files
//! byte for byte. It never writes: the fix is to run `cargo xtask codegen`.

#[path = "../codegen_config.rs"]
mod codegen_config;

use std::path::{Path, PathBuf};

use codegen_config::{FIX_COMMAND, HEADER, OUT_DIR, extra_files, generate};

/// The workspace root (the parent of this package's directory).
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

#[test]
fn generated_code_is_fresh() {
    let root = workspace_root();
    let generated = generate(&root, false).expect("the schemas generate");
    let out = root.join(OUT_DIR);
    let stale = generated.stale_in(&out);
    let obsolete = extra_files(&out, &generated).expect("the generated directory is readable");
    if !stale.is_empty() || !obsolete.is_empty() {
        let mut report = format!(
            "generated code under {OUT_DIR} is stale; run `{FIX_COMMAND}` and commit the result:\n"
        );
        for p in &stale {
            report += &format!("  stale:    {OUT_DIR}/{}\n", p.display());
        }
        for p in &obsolete {
            report += &format!("  obsolete: {OUT_DIR}/{}\n", p.display());
        }
        panic!("{report}");
    }
    // The generated files open with the header that marks them generated.
    let first = generated.files[1].contents.split(|&b| b == b'\n').next();
    assert_eq!(first, Some(HEADER.as_bytes()));
}
