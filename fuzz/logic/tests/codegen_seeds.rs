//! The `codegen_frontend` seeds cover every syntax the pure front end
//! reads: proto2, proto3 and editions 2023 and 2024 (with features, and
//! 2024's symbol visibility). The editions seeds must generate, not stop
//! at an error, or the fuzzer would start from nothing but refusals there.
//! (`tests/corpus.rs` replays every seed through the target itself.)

use std::path::{Path, PathBuf};

use protozero_codegen::Config;
use protozero_codegen::model::Syntax;

fn seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/codegen_frontend")
}

#[test]
fn every_syntax_has_a_seed_that_generates() {
    let mut syntaxes = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(seeds())
        .expect("fuzz/seeds/codegen_frontend")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("error-") {
            continue;
        }
        // Each seed alone in an include directory, as the target has it.
        let dir = tempfile_dir(name);
        let file = dir.join("fuzz.proto");
        std::fs::copy(&path, &file).expect("copy the seed");
        let schema = Config::new()
            .include(&dir)
            .input(&file)
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        Config::new()
            .include(&dir)
            .input(&file)
            .generate()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let input = schema
            .files
            .iter()
            .find(|f| f.name == "fuzz.proto")
            .expect("the seed's own file");
        syntaxes.push(input.syntax);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
    for want in [
        Syntax::Proto2,
        Syntax::Proto3,
        Syntax::Edition(2023),
        Syntax::Edition(2024),
    ] {
        assert!(
            syntaxes.contains(&want),
            "no seed in {want:?}: {syntaxes:?}"
        );
    }
}

/// A fresh directory under the system's temporary one.
fn tempfile_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "zerotrace-codegen-seed-{}-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
