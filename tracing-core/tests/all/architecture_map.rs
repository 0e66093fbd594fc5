//! ARCHITECTURE.md is the map of the repository: every file or folder it
//! names in backquotes must exist, so a rename or a deletion that forgets
//! the map fails here. A name with a slash must be the tail of a path in
//! the tree (the map leaves off `tracing-core/src/` and the like where it
//! is obvious); a bare file name must be a file somewhere in the tree.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Every file and folder under `root` (as `/`-joined paths relative to it),
/// leaving out build output and version control.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // Build output, version control, and cargo-fuzz's own
            // uncommitted `fuzz/corpus` and `fuzz/artifacts`.
            let fuzz_output =
                rel == Path::new("fuzz") && matches!(name.as_str(), "corpus" | "artifacts");
            if matches!(name.as_str(), "target" | ".git") || fuzz_output {
                continue;
            }
            let path = rel.join(&name);
            out.push(path.to_string_lossy().replace('\\', "/"));
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    out
}

/// The backquoted words of `text` that name a file or folder: a slash in
/// them, or a file name ending in one of the repository's extensions.
fn named_paths(text: &str) -> Vec<String> {
    const EXTS: &[&str] = &[
        ".rs", ".md", ".toml", ".proto", ".py", ".cc", ".h", ".svg", ".pbtxt",
    ];
    let mut out = Vec::new();
    for (i, chunk) in text.split('`').enumerate() {
        if i % 2 == 0 || chunk.is_empty() || chunk.contains(char::is_whitespace) {
            continue;
        }
        // Code, not paths: calls, generics, paths of items, globs.
        if chunk.contains(['(', '<', '*', '{', '=', '$', ':', '#', '"', ','])
            || chunk.starts_with('-')
        {
            continue;
        }
        // Comment markers and bare extensions are not paths.
        if !chunk.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let word = chunk.trim_end_matches('/');
        let looks_like_file = EXTS.iter().any(|e| word.ends_with(e));
        if chunk.contains('/') || looks_like_file {
            out.push(word.to_owned());
        }
    }
    out
}

#[test]
fn every_path_the_architecture_map_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let tree = tree(&root);
    let names: HashSet<&str> = tree
        .iter()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .collect();
    let mut missing = Vec::new();
    let named = named_paths(&map);
    assert!(named.len() > 100, "the map names {} paths", named.len());
    for p in &named {
        // `cli/` stands for `tracing-core/cli/`; URLs and system paths are
        // not the repository's.
        if p.starts_with("http")
            || p.starts_with("/proc")
            || p.starts_with("/sys")
            || p.starts_with("/dev")
        {
            continue;
        }
        let found = if p.contains('/') {
            let tail = format!("/{p}");
            tree.iter().any(|t| t == p || t.ends_with(&tail))
        } else {
            names.contains(p.as_str())
        };
        if !found {
            missing.push(p.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:#?}"
    );
}

#[test]
fn the_path_finder_sees_paths_and_passes_over_code() {
    let text =
        "see `service/core/mod.rs`, `Foo::bar()`, `cli/`, `a b`, `x.rs`, `Vec<u8>`, `--flag`";
    assert_eq!(named_paths(text), ["service/core/mod.rs", "cli", "x.rs"]);
}
