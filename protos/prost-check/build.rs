//! Builds the reference prost types from `protos/proto` — the very schemas the
//! protozero code of `zerotrace-protos` is generated from — using protox, a
//! pure-Rust protobuf compiler, so no `protoc` is needed.

use std::error::Error;
use std::path::{Path, PathBuf};

/// Every `.proto` file under `dir`, as paths relative to `root`, sorted.
fn proto_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Box<dyn Error>> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            proto_files(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path.strip_prefix(root)?.to_path_buf());
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    proto_files(&root, &root, &mut files)?;
    files.sort();
    let descriptors = protox::compile(&files, [&root])?;
    prost_build::Config::new()
        // Schema comments would become doc comments (and doctests).
        .disable_comments(["."])
        .compile_fds(descriptors)?;
    Ok(())
}
