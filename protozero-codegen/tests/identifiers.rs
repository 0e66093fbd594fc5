//! Names the generator does not control (file names, packages, fields,
//! enum values, oneofs, services) always become valid Rust identifiers:
//! generation succeeds with parseable output or fails with a typed error,
//! and never panics.

use std::fs;
use std::path::{Path, PathBuf};

use protozero_codegen::{CodegenError, Config, Generated};

fn schema(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&path, text).unwrap();
    path
}

fn generate(dir: &Path, files: &[PathBuf]) -> Result<Generated, CodegenError> {
    Config::new().include(dir).inputs(files).generate()
}

/// Every generated `.rs` file parses as a Rust file.
fn assert_parses(g: &Generated) {
    for f in &g.files {
        if f.path.extension().is_some_and(|e| e == "rs") {
            let text = std::str::from_utf8(&f.contents).unwrap();
            if let Err(e) = syn::parse_file(text) {
                panic!("{} does not parse: {e}\n{text}", f.path.display());
            }
        }
    }
}

#[test]
fn extension_in_dotted_file_name_generates() {
    let dir = tempfile::tempdir().unwrap();
    let f = schema(
        dir.path(),
        "foo_base.client.proto",
        "syntax = \"proto2\";\npackage foo;\nimport \"google/protobuf/descriptor.proto\";\n\
         extend google.protobuf.MessageOptions { optional int32 x = 50001; }\n",
    );
    let g = generate(dir.path(), &[f]).expect("generation succeeds");
    assert_parses(&g);
    let text = String::from_utf8(g.file("foo_base.client.rs").unwrap().contents.clone()).unwrap();
    assert!(text.contains("FooBaseClientMessageOptionsExt"), "{text}");
}

/// Odd but valid protobuf names: Rust keywords (strict, reserved, and the
/// ones that cannot be raw), leading and trailing underscores, digits after
/// an underscore, acronyms, and names of generated methods and types.
const NAMES: &[&str] = &[
    "type",
    "self",
    "Self",
    "crate",
    "super",
    "match",
    "gen",
    "try",
    "async",
    "r",
    "_x",
    "__x",
    "x_",
    "x__y",
    "_1a",
    "_9",
    "a1",
    "HTTPServer",
    "httpServer",
    "HTTP",
    "XMLHttpRequest",
    "new",
    "Decoder",
    "FooDecoder",
    "Option",
    "Result",
    "Some",
    "None",
    "String",
    "u8",
    "Ext",
];

/// File names (without `.proto`) that are not identifiers.
const FILE_STEMS: &[&str] = &[
    "foo_base.client",
    "my-api",
    "my-api.v1-beta",
    "1st",
    "9.9",
    "type",
    "self",
    "Self",
    "crate",
    "a.b.c",
    "x-",
    "-x",
    "_1a",
    "HTTPServer",
    "with space",
    "sub.dir/x-y",
    "nested-dir/type/self",
];

/// A schema using `name` at the position `slot`; every other position gets
/// a plain name. `"*"` uses it at once wherever protobuf lets one name
/// stand: the package, the message, the fields and the method. (The nested
/// message, the oneof and the extensions share the message's scope, the
/// enum value the package's, with the message itself, as do the enum and
/// the service: `protoc` and the pure front end refuse such a file.)
fn template(slot: &str, name: &str) -> String {
    let at = |s: &str, plain: &str| {
        let shared = slot == "*" && !matches!(s, "nested" | "oneof" | "extension" | "value");
        if slot == s || shared {
            name.to_owned()
        } else {
            plain.to_owned()
        }
    };
    let (p, m, inner, n, e, v, o, s, r, x) = (
        at("package", "pkg"),
        at("message", "Msg"),
        at("nested", "Inner"),
        at("field", "val"),
        if slot == "enum" {
            name.to_owned()
        } else {
            "Kind".to_owned()
        },
        at("value", "FIRST"),
        at("oneof", "choice"),
        if slot == "service" {
            name.to_owned()
        } else {
            "Svc".to_owned()
        },
        at("method", "Call"),
        at("extension", "ext"),
    );
    format!(
        "syntax = \"proto2\";\n\
         package {p}.sub;\n\
         message {m} {{\n\
           oneof {o} {{ string {n} = 1; int32 other = 2; }}\n\
           optional {e} kind = 3;\n\
           message {inner} {{ optional int32 v = 1; }}\n\
           optional {inner} inner = 4;\n\
           repeated {inner} inners = 5;\n\
           extensions 100 to 199;\n\
           extend {m} {{ optional int32 {x} = 150; }}\n\
         }}\n\
         message Holder {{\n\
           optional int32 {n} = 1;\n\
           repeated {e} {n}_list = 2 [packed = true];\n\
           optional {m} {n}_msg = 3;\n\
           repeated string {n}_strs = 4;\n\
         }}\n\
         enum {e} {{ {v} = 0; SECOND = 1; }}\n\
         extend {m} {{ optional string {x} = 100; optional {m}.{inner} {x}_msg = 101; }}\n\
         service {s} {{ rpc {r}({m}) returns (Holder); }}\n"
    )
}

const SLOTS: &[&str] = &[
    "package",
    "message",
    "nested",
    "field",
    "enum",
    "value",
    "oneof",
    "service",
    "method",
    "extension",
    "*",
];

/// How one generation attempt ended.
#[derive(Debug)]
enum Outcome {
    Generated,
    /// Two schema elements map to one Rust name: a typed, explained error.
    Collision(String),
}

/// Generates `files` (relative name, text) in a fresh directory; panics
/// (failing the test) if the generator panics, emits unparseable Rust, or
/// fails with anything but a name collision.
fn attempt(files: &[(String, String)]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, text)| schema(dir.path(), name, text))
        .collect();
    let result = std::panic::catch_unwind(|| generate(dir.path(), &paths));
    let result = match result {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("generation panicked on {files:?}: {msg}");
        }
    };
    match result {
        Ok(g) => {
            assert_parses(&g);
            Outcome::Generated
        }
        Err(e @ CodegenError::NameCollision { .. }) => Outcome::Collision(e.to_string()),
        // Every schema here is valid protobuf: any other error is a bug.
        Err(e) => panic!("generation failed for {files:?}: {e}"),
    }
}

#[test]
fn odd_names_never_panic() {
    let mut rejected = Vec::new();
    let mut generated = 0;
    for slot in SLOTS {
        for name in NAMES {
            let files = [(format!("{slot}.proto"), template(slot, name))];
            match attempt(&files) {
                Outcome::Generated => generated += 1,
                Outcome::Collision(why) => rejected.push(format!("{slot}={name}: {why}")),
            }
        }
    }
    for stem in FILE_STEMS {
        let files = [(format!("{stem}.proto"), template("", ""))];
        match attempt(&files) {
            Outcome::Generated => generated += 1,
            Outcome::Collision(why) => rejected.push(format!("file {stem}: {why}")),
        }
    }
    // Collisions are fine (a message `_1a` with nested types gets both a
    // type and a module named `_1a`); print them to see what the set covers.
    eprintln!("{generated} generated, {} rejected:", rejected.len());
    for r in &rejected {
        eprintln!("  {r}");
    }
    assert!(generated > rejected.len(), "most odd names must generate");
}
