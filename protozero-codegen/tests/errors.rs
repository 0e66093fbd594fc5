//! Failures are typed and name the file and the construct at fault; the
//! write/check helpers report exactly the files that differ.

use std::fs;
use std::path::Path;

use protozero_codegen::{CodegenError, Config};

fn schema(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

fn generate(dir: &Path, file: &Path) -> Result<protozero_codegen::Generated, CodegenError> {
    Config::new().include(dir).input(file).generate()
}

#[test]
fn no_inputs_is_an_error() {
    assert!(matches!(
        Config::new().generate(),
        Err(CodegenError::NoInputs)
    ));
}

#[test]
fn syntax_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "broken.proto",
        "syntax = \"proto2\";\nmessage {\n",
    );
    match generate(dir.path(), &f) {
        Err(e @ CodegenError::PureParse { .. }) => {
            let CodegenError::PureParse {
                file,
                line,
                source_line,
                ..
            } = &e
            else {
                unreachable!()
            };
            assert!(file.ends_with("broken.proto"), "{file}");
            assert_eq!(*line, 2);
            assert_eq!(source_line, "message {");
            let text = e.to_string();
            assert!(text.contains("broken.proto:2:"), "{text}");
            assert!(text.contains("protoc front end"), "{text}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn pure_mode_names_unsupported_constructs_and_suggests_protoc() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "ed.proto",
        "edition = \"2023\";\npackage e;\nmessage M { int32 x = 1; }\n",
    );
    match generate(dir.path(), &f) {
        Err(e @ CodegenError::PureParse { .. }) => {
            let text = e.to_string();
            assert!(text.contains("ed.proto:1:"), "{text}");
            assert!(text.contains("edition = \"2023\";"), "{text}");
            assert!(text.contains("cargo xtask codegen --protoc"), "{text}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn missing_imports_are_parse_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "a.proto",
        "syntax = \"proto2\";\nimport \"missing.proto\";\nmessage A {}\n",
    );
    match generate(dir.path(), &f) {
        Err(CodegenError::Parse { message }) => {
            assert!(message.contains("missing.proto"), "{message}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn rust_name_collisions_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "c.proto",
        "syntax = \"proto2\";\npackage p;\nmessage FooBar {}\nmessage Foo_Bar {}\n",
    );
    match generate(dir.path(), &f) {
        Err(CodegenError::NameCollision {
            file,
            rust_name,
            first,
            second,
            ..
        }) => {
            assert_eq!(file, "c.proto");
            assert_eq!(rust_name, "FooBar");
            assert_eq!(first, "message p.FooBar");
            assert_eq!(second, "message p.Foo_Bar");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn write_and_staleness_report_only_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "w.proto",
        "syntax = \"proto3\";\npackage w;\nmessage M { uint32 x = 1; }\n",
    );
    let out = dir.path().join("out");
    let g = Config::new()
        .include(dir.path())
        .input(&f)
        .header("// test header")
        .generate()
        .unwrap();
    assert_eq!(g.stale_in(&out).len(), 2);
    assert_eq!(g.write_to(&out).unwrap().len(), 2);
    assert!(g.stale_in(&out).is_empty());
    assert!(g.write_to(&out).unwrap().is_empty());
    let text = fs::read_to_string(out.join("w.rs")).unwrap();
    assert!(text.starts_with("// test header\n"));
    fs::write(out.join("w.rs"), "changed").unwrap();
    assert_eq!(g.stale_in(&out), [Path::new("w.rs")]);
}

#[test]
fn duplicate_definitions_across_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let a = schema(
        dir.path(),
        "a.proto",
        "syntax = \"proto2\";\npackage p;\nmessage Dup {}\n",
    );
    let b = schema(
        dir.path(),
        "b.proto",
        "syntax = \"proto2\";\npackage p;\nmessage Dup {}\n",
    );
    let result = Config::new()
        .include(dir.path())
        .input(&a)
        .input(&b)
        .generate();
    match result {
        Err(CodegenError::NameCollision {
            file, rust_name, ..
        }) => {
            assert_eq!(file, "b.proto");
            assert_eq!(rust_name, "Dup");
        }
        other => panic!("unexpected {other:?}"),
    }
}
