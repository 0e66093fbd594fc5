//! The `protozero` crate docs walk through this example: every code block
//! of their "A schema of your own" section must still be in the example's
//! files (each line, in order, white space at either end aside; a block may
//! leave lines out), so that the docs cannot drift from code that builds
//! and runs here.

use std::path::Path;

/// The fenced code blocks of the section of `protozero/src/lib.rs` that
/// walks through this example.
fn doc_blocks() -> Vec<Vec<String>> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("protozero/src/lib.rs");
    let docs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .skip_while(|l| !l.starts_with("# A schema of your own"))
        .take_while(|l| !l.starts_with("# How it works"))
        .collect();
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in docs {
        if line.starts_with("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some(Vec::new()),
            }
        } else if let Some(block) = current.as_mut() {
            block.push(line.to_owned());
        }
    }
    blocks
}

/// Whether the non-blank lines of `block` appear in `file`, in order.
fn is_in(block: &[String], file: &str) -> bool {
    let mut lines = file.lines().map(str::trim);
    block
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .all(|want| lines.any(|have| have == want))
}

#[test]
fn every_block_of_the_crate_docs_is_in_the_example() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<(String, String)> = [
        "proto/shop/order.proto",
        "build.rs",
        "src/lib.rs",
        "src/main.rs",
    ]
    .iter()
    .map(|f| {
        let text = std::fs::read_to_string(dir.join(f)).expect("an example file");
        ((*f).to_owned(), text)
    })
    .collect();
    let blocks = doc_blocks();
    assert!(blocks.len() >= 5, "{} blocks", blocks.len());
    let mut shown = Vec::new();
    for block in &blocks {
        let Some((name, _)) = files.iter().find(|(_, text)| is_in(block, text)) else {
            panic!(
                "this block of protozero's crate docs is not in the example:\n{}",
                block.join("\n")
            );
        };
        shown.push(name.as_str());
    }
    // The schema whole, the build script, writing, reading.
    assert_eq!(blocks[0].join("\n").trim(), files[0].1.trim());
    for f in [
        "proto/shop/order.proto",
        "build.rs",
        "src/lib.rs",
        "src/main.rs",
    ] {
        assert!(shown.contains(&f), "no block shows {f}: {shown:?}");
    }
}

#[test]
fn a_changed_line_is_noticed() {
    let file = "a\n  b\nc\n";
    assert!(is_in(&["a".into(), "c".into()], file));
    assert!(!is_in(&["c".into(), "a".into()], file));
    assert!(!is_in(&["b2".into()], file));
}
