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

/// Proto enums and oneof case enums are `#[non_exhaustive]` unless asked
/// not to be; nothing else changes.
#[test]
fn enums_are_non_exhaustive_unless_turned_off() {
    let root = fixtures();
    let with = |yes: bool| {
        let g = protozero_codegen::Config::new()
            .include(&root)
            .inputs_under(&root)
            .unwrap()
            .non_exhaustive_enums(yes)
            .generate()
            .unwrap();
        text(&g, "fixture/alpha/kitchen.rs")
    };
    let (on, off) = (with(true), with(false));
    // A proto enum (`#[repr(i32)]`) and a oneof's case enum.
    assert!(on.contains("#[repr(i32)]\n#[non_exhaustive]\npub enum Level {"));
    assert!(on.contains("#[non_exhaustive]\n    pub enum Value<'a> {"));
    // Field enums (`ChoiceField`) are non-exhaustive either way.
    assert!(off.contains("#[non_exhaustive]\npub enum ChoiceField<'a> {"));
    assert!(!off.contains("#[non_exhaustive]\npub enum Level {"));
    assert!(!off.contains("#[non_exhaustive]\n    pub enum Value<'a> {"));
    // Nothing else differs: the lines `on` adds are those attributes.
    let mut rest = off.lines().peekable();
    let mut added = 0;
    for line in on.lines() {
        if rest.peek() == Some(&line) {
            rest.next();
        } else {
            assert_eq!(line.trim(), "#[non_exhaustive]");
            added += 1;
        }
    }
    assert_eq!(rest.next(), None);
    // Level, Aliased, Keywords.Type; oneofs `value` and `small`.
    assert_eq!(added, 5);
}
