//! Snapshot tests of the generated code for the fixture schemas in
//! `tests/fixtures`, which exercise every construct the generator supports.
//! A change to the output shows up as a reviewable `.snap` diff.

use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn generate() -> protozero_codegen::Generated {
    let root = fixtures();
    protozero_codegen::Config::new()
        .include(&root)
        .inputs_under(&root)
        .unwrap()
        .descriptor_set("descriptor_set.bin")
        .generate()
        .unwrap()
}

fn text(g: &protozero_codegen::Generated, path: &str) -> String {
    let f = g
        .file(path)
        .unwrap_or_else(|| panic!("{path} not generated"));
    String::from_utf8(f.contents.clone()).unwrap()
}

#[test]
fn generated_file_list() {
    let g = generate();
    let names: Vec<String> = g
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "mod.rs",
            "fixture/beta/other.rs",
            "fixture/alpha/kitchen.rs",
            "descriptor_set.bin"
        ]
    );
}

#[test]
fn snapshot_root_module() {
    insta::assert_snapshot!("root_mod", text(&generate(), "mod.rs"));
}

#[test]
fn snapshot_kitchen() {
    insta::assert_snapshot!("kitchen", text(&generate(), "fixture/alpha/kitchen.rs"));
}

#[test]
fn snapshot_other() {
    insta::assert_snapshot!("other", text(&generate(), "fixture/beta/other.rs"));
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(generate(), generate());
}
