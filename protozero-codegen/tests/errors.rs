//! Failures are typed and name the file and the construct at fault; the
//! write/check helpers report exactly the files that differ.

use std::fs;
use std::path::Path;

use protozero_codegen::{CodegenError, Config, FrontEnd};

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

/// The pure front end's error for `text` (file `name` in a fresh directory):
/// its `PureParse` fields, checked to be shown as `file:line:column: ...`.
fn pure_error(name: &str, text: &str) -> (String, u32, u32, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(dir.path(), name, text);
    match generate(dir.path(), &f) {
        Err(e @ CodegenError::PureParse { .. }) => {
            let shown = e.to_string();
            let CodegenError::PureParse {
                file,
                line,
                column,
                source_line,
                message,
            } = e
            else {
                unreachable!()
            };
            assert_eq!(Path::new(&file), f, "{shown}");
            assert!(
                shown.starts_with(&format!("{file}:{line}:{column}: ")),
                "{shown}"
            );
            assert!(shown.contains(&format!("`{source_line}`")), "{shown}");
            (file, line, column, source_line, message, shown)
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn syntax_errors_name_file_line_column_and_construct() {
    let (_, line, column, source_line, message, shown) =
        pure_error("broken.proto", "syntax = \"proto2\";\nmessage {\n");
    assert_eq!((line, column), (2, 9), "{shown}");
    assert_eq!(source_line, "message {");
    assert!(message.contains("expected"), "{shown}");
    assert!(message.contains("but found '{'"), "{shown}");
    // A syntax error may be a construct only protoc knows.
    assert!(shown.contains("protoc front end"), "{shown}");
}

#[test]
fn a_file_cut_short_is_an_error_at_its_end() {
    let (_, line, column, source_line, message, shown) = pure_error(
        "cut.proto",
        "syntax = \"proto2\";\nmessage M {\n  optional int32 x",
    );
    assert_eq!((line, column), (3, 19), "{shown}");
    assert_eq!(source_line, "optional int32 x");
    assert!(message.contains("end of file"), "{shown}");
}

/// An error protox finds in an editions file (which it reads lowered, with
/// labels inserted) points at the original text: line, column and line.
#[test]
fn errors_in_editions_files_point_at_the_original_text() {
    let (_, line, column, source_line, message, shown) = pure_error(
        "ed.proto",
        "edition = \"2023\";\npackage e;\nmessage M { int32 x = 1; Missing y = 2; }\n",
    );
    assert_eq!((line, column), (3, 26), "{shown}");
    assert_eq!(source_line, "message M { int32 x = 1; Missing y = 2; }");
    assert!(message.contains("'Missing' is not defined"), "{shown}");
    let (_, line, column, _, message, shown) = pure_error(
        "ed2.proto",
        "edition = \"2023\";\npackage e;\nmessage M {\n  int32 x = 1;\n  optional int32 y = 2;\n}\n",
    );
    assert_eq!((line, column), (5, 3), "{shown}");
    assert!(message.contains("`optional`"), "{shown}");
}

#[test]
fn unknown_types_point_at_the_type_name() {
    let (_, line, column, source_line, message, shown) = pure_error(
        "t.proto",
        "syntax = \"proto3\";\npackage t;\nmessage Foo {\n  Bar bar = 1;\n}\n",
    );
    assert_eq!((line, column), (4, 3), "{shown}");
    assert_eq!(source_line, "Bar bar = 1;");
    assert!(message.contains("'Bar' is not defined"), "{shown}");
    // A checking error, not a syntax one: protoc would refuse it too.
    assert!(!shown.contains("protoc front end"), "{shown}");
}

#[test]
fn invalid_options_name_the_option() {
    let (_, line, column, _, message, shown) = pure_error(
        "o.proto",
        "syntax = \"proto2\";\npackage o;\nimport \"google/protobuf/descriptor.proto\";\n\
         extend google.protobuf.FieldOptions { optional int32 n = 50000; }\n\
         message M {\n  optional int32 x = 1 [(n) = \"s\"];\n}\n",
    );
    assert_eq!((line, column), (6, 25), "{shown}");
    assert!(message.contains("'(n)'"), "{shown}");
}

#[test]
fn every_error_of_a_file_is_listed() {
    let (_, line, _, _, message, shown) = pure_error(
        "m.proto",
        "syntax = \"proto3\";\nmessage A {\n  Nope a = 1;\n  Nada b = 2;\n}\n",
    );
    assert_eq!(line, 3, "{shown}");
    assert!(message.contains("'Nope'"), "{shown}");
    assert!(
        message.contains("m.proto:4:3: name 'Nada' is not defined"),
        "{shown}"
    );
}

#[test]
fn missing_imports_point_at_the_import() {
    let (_, line, column, source_line, message, shown) = pure_error(
        "a.proto",
        "syntax = \"proto2\";\nimport \"missing.proto\";\nmessage A {}\n",
    );
    assert_eq!((line, column), (2, 1), "{shown}");
    assert_eq!(source_line, "import \"missing.proto\";");
    assert!(message.contains("missing.proto"), "{shown}");
}

#[test]
fn missing_inputs_are_parse_errors() {
    let dir = tempfile::tempdir().unwrap();
    match generate(dir.path(), &dir.path().join("absent.proto")) {
        Err(CodegenError::Parse { message }) => {
            assert!(message.contains("absent.proto"), "{message}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn protoc_errors_are_protocs_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "broken.proto",
        "syntax = \"proto2\";\nmessage {\n",
    );
    let result = Config::new()
        .front_end(FrontEnd::Protoc(None))
        .include(dir.path())
        .input(&f)
        .generate();
    match result {
        Err(CodegenError::Parse { message }) => {
            assert!(message.contains("broken.proto:2:9: "), "{message}")
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
    // protox, like protoc, refuses the second definition where it is.
    match result {
        Err(CodegenError::PureParse {
            file,
            line,
            column,
            message,
            ..
        }) => {
            assert!(file.ends_with("b.proto"), "{file}");
            assert_eq!((line, column), (3, 9));
            assert!(
                message.contains("'p.Dup' is already defined in file 'a.proto'"),
                "{message}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}
