//! The pure front end (protox) and the protoc front end (the vendored
//! `protoc`, the oracle) agree: for every fixture set of this crate and
//! for the project's schemas (`protos/proto`), both compile the same
//! files to (a) the same descriptors, field for field, unknown fields (the
//! custom options) included, and (b) byte-identical generated code.
//!
//! Source info is cleared on both sides (neither front end asks for it),
//! and nothing else: `json_name`, `syntax`, defaults, options (the empty
//! options message protoc gives a method written with a body among them)
//! and the file order must match as they are.
//!
//! Both front ends see protoc's include directory (from
//! `protoc-bin-vendored`): its `descriptor.proto` (with one-number extension
//! ranges with options, a form the pure front end respells for protox), its
//! feature sets and well-known types. Left to themselves, each front end
//! brings its own copy and only the code generated for
//! `google/protobuf/*.proto` differs (`with_their_own_descriptor_proto_...`).
//! Editions files agree like the others; editions mistakes `protoc` refuses
//! are refused by the pure front end too, at their line.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};
use protobuf::{Message as _, MessageField, UnknownValueRef};
use protozero_codegen::model::{FieldDef, MessageDef, Presence, ProtoFile, Syntax};
use protozero_codegen::parse::{FrontEnd, Parsed, find_proto_files, parse_files};
use protozero_codegen::{CodegenError, DEFAULT_HEADER, GeneratedFile, generate_rust};

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// `protoc`'s include directory (from `protoc-bin-vendored`): its
/// `descriptor.proto`, feature sets and well-known types, which both front
/// ends then read.
fn shared_wkt() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| protoc_bin_vendored::include_path().unwrap())
}

fn compile(includes: &[PathBuf], inputs: &[PathBuf], front_end: FrontEnd) -> Parsed {
    parse_files(includes, inputs, &front_end)
        .unwrap_or_else(|e| panic!("{front_end:?} on {inputs:?}: {e}"))
}

/// A run's descriptors, decoded from the encoded set the API hands out.
fn descriptors(parsed: &Parsed) -> Vec<FileDescriptorProto> {
    let bytes = parsed.descriptors.to_bytes().unwrap();
    FileDescriptorSet::parse_from_bytes(&bytes).unwrap().file
}

/// The descriptors as compared: source info cleared.
fn normalised(files: &[FileDescriptorProto]) -> Vec<FileDescriptorProto> {
    let mut files = files.to_vec();
    for f in &mut files {
        f.source_code_info = MessageField::none();
    }
    files
}

/// A readable account of how two descriptors differ: the first differing
/// line of their text forms, with context.
fn first_difference(a: &FileDescriptorProto, b: &FileDescriptorProto) -> String {
    let (ta, tb) = (
        protobuf::text_format::print_to_string_pretty(a),
        protobuf::text_format::print_to_string_pretty(b),
    );
    let (la, lb): (Vec<&str>, Vec<&str>) = (ta.lines().collect(), tb.lines().collect());
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let from = at.saturating_sub(8);
    format!(
        "pure:\n{}\nprotoc:\n{}\n(unknown fields differ if the text is the same)",
        la[from..(at + 4).min(la.len())].join("\n"),
        lb[from..(at + 4).min(lb.len())].join("\n"),
    )
}

fn assert_same_descriptors(pure: &[FileDescriptorProto], protoc: &[FileDescriptorProto]) {
    let names = |fs: &[FileDescriptorProto]| -> Vec<String> {
        fs.iter().map(|f| f.name().to_owned()).collect()
    };
    assert_eq!(names(pure), names(protoc), "files or their order differ");
    for (a, b) in normalised(pure).iter().zip(&normalised(protoc)) {
        assert!(a == b, "{} differs:\n{}", a.name(), first_difference(a, b));
    }
}

fn generated(parsed: &Parsed) -> Vec<GeneratedFile> {
    generate_rust(
        &parsed.schema,
        DEFAULT_HEADER,
        "mod.rs",
        Some("descriptor_set.bin"),
    )
    .unwrap()
}

fn assert_same_code(pure: &Parsed, protoc: &Parsed) {
    let (a, b) = (generated(pure), generated(protoc));
    let paths =
        |g: &[GeneratedFile]| -> Vec<PathBuf> { g.iter().map(|f| f.path.clone()).collect() };
    assert_eq!(paths(&a), paths(&b));
    for (x, y) in a.iter().zip(&b) {
        assert!(
            x.contents == y.contents,
            "{} differs between the front ends",
            x.path.display()
        );
        let text = std::str::from_utf8(&x.contents).unwrap();
        syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", x.path.display()));
    }
}

/// Compiles `inputs` under `root` (after the shared `descriptor.proto`)
/// with both front ends and checks that they agree; the pure result.
fn agree(root: &Path, inputs: &[PathBuf]) -> Parsed {
    assert!(!inputs.is_empty());
    let includes = [shared_wkt().to_path_buf(), root.to_path_buf()];
    let pure = compile(&includes, inputs, FrontEnd::Pure);
    let protoc = compile(&includes, inputs, FrontEnd::Protoc(None));
    assert_same_descriptors(&descriptors(&pure), &descriptors(&protoc));
    assert_same_code(&pure, &protoc);
    pure
}

fn agree_on_fixture_set(set: &str) -> Parsed {
    let root = tests_dir().join(set);
    let inputs: Vec<PathBuf> = find_proto_files(&root).unwrap().into_iter().collect();
    agree(&root, &inputs)
}

#[test]
fn fixtures() {
    agree_on_fixture_set("fixtures");
}

#[test]
fn fixtures_names() {
    agree_on_fixture_set("fixtures_names");
}

/// Recursion cycles and field enums whose usual name a type holds (issue
/// 47, DataFusion's `Union` next to its `UnionField`, reported with the
/// pure front end; the cause was the naming, which does not depend on the
/// front end): both give the same code, `XField_` where `XField` is taken.
#[test]
fn fixtures_cycles() {
    let parsed = agree_on_fixture_set("fixtures_cycles");
    let code = generated(&parsed);
    let datafusion = code
        .iter()
        .find(|f| f.path.ends_with("fixture/cycles/datafusion.rs"))
        .expect("datafusion.rs generated");
    let text = String::from_utf8_lossy(&datafusion.contents);
    assert!(text.contains("pub enum UnionField_<'a>"));
    assert!(text.contains("MessageFields<'a> for UnionDecoder<'a>"));
}

/// The real-world proto2 file of `fixtures_protoc` (groups, extensions,
/// message sets) and its editions files were protoc's alone before protox
/// and the editions lowering; they no longer are.
#[test]
fn fixtures_protoc() {
    let parsed = agree_on_fixture_set("fixtures_protoc");
    assert!(
        parsed
            .schema
            .files
            .iter()
            .any(|f| f.name == "fixture/gamma/legacy.proto")
    );
}

/// Extension declarations, custom options of every type on every element,
/// groups everywhere, `import public` (twice over) and `import weak`, and
/// defaults in every spelling.
#[test]
fn fixtures_front_ends() {
    let parsed = agree_on_fixture_set("fixtures_front_ends");
    let names: Vec<&str> = parsed
        .schema
        .files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    for want in [
        "google/protobuf/descriptor.proto",
        "fixture/front/custom_options.proto",
        "fixture/front/declarations.proto",
        "fixture/front/groups.proto",
        "fixture/front/imports.proto",
        "fixture/front/public_root.proto",
        "fixture/front/weak_dep.proto",
        "fixture/front/defaults.proto",
    ] {
        assert!(names.contains(&want), "{want} not among {names:?}");
    }
}

/// What protoc leaves out and the pure front end must leave out too:
/// source-retention options (custom ones, nested ones inside an option's
/// value, extension declarations), an options message emptied by that.
#[test]
fn source_retention_options_are_dropped_as_protoc_drops_them() {
    let parsed = agree_on_fixture_set("fixtures_front_ends");
    let files = descriptors(&parsed);
    let file = |name: &str| files.iter().find(|f| f.name() == name).unwrap();
    let declared = &file("fixture/front/declarations.proto").message_type[0];
    // `declaration` and `verification` both have source retention.
    for range in &declared.extension_range {
        assert!(range.options.is_none(), "{range:?}");
    }
    let annotated = &file("fixture/front/custom_options.proto").message_type[0];
    let options = annotated.options.as_ref().unwrap();
    let unknown = options.special_fields.unknown_fields();
    // (message_source_only) = 50006 is gone, (message_flag) = 50005 stays.
    assert!(unknown.get(50006).is_none());
    assert!(matches!(
        unknown.get(50005),
        Some(UnknownValueRef::Varint(1))
    ));
    // The second (message_list) lost its `note` (field 9): `number: 2` only.
    let list: Vec<_> = unknown
        .iter()
        .filter(|(n, _)| *n == 50003)
        .map(|(_, v)| v)
        .collect();
    assert!(
        list.contains(&UnknownValueRef::LengthDelimited(&[0x08, 2])),
        "{list:?}"
    );
}

#[test]
fn our_schemas() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../protos/proto");
    let inputs = find_proto_files(&root).unwrap();
    assert!(inputs.len() > 40, "{} files", inputs.len());
    agree(&root, &inputs);
}

/// With nothing shared, each front end compiles `descriptor.proto` from its
/// own copy (protox: prost-types' build of it; protoc: its include
/// directory): everything else agrees.
#[test]
fn with_their_own_descriptor_proto_only_its_code_differs() {
    let root = tests_dir().join("fixtures_names");
    let includes = [root.clone()];
    let inputs = find_proto_files(&root).unwrap();
    let pure = compile(&includes, &inputs, FrontEnd::Pure);
    let protoc = compile(&includes, &inputs, FrontEnd::Protoc(None));
    let own = |f: &FileDescriptorProto| !f.name().starts_with("google/protobuf/");
    let mine = |fs: &[FileDescriptorProto]| -> Vec<FileDescriptorProto> {
        fs.iter().filter(|f| own(f)).cloned().collect()
    };
    assert_same_descriptors(&mine(&descriptors(&pure)), &mine(&descriptors(&protoc)));
    let (a, b) = (generated(&pure), generated(&protoc));
    let differing: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.contents != y.contents)
        .map(|(x, _)| x.path.display().to_string())
        .collect();
    assert!(
        differing
            .iter()
            .all(|p| p == "google/protobuf/descriptor.rs"),
        "{differing:?}"
    );
}

// --- What protoc reads and protox 0.10 does not ----------------------------

/// Spellings protox 0.10 does not parse, which the lowering respells
/// (`nan` and `inf` option values, one-number extension ranges with
/// options, integers beyond 64 bits), non-finite numbers in message
/// literals, and proto2 JSON-name clashes `protoc` only warns about (which
/// protox refuses and the lowering gives stand-in names): both front ends
/// agree on them.
#[test]
fn respelled_protox_gaps_agree() {
    let head = "syntax = \"proto2\";\npackage gap;\nimport \"google/protobuf/descriptor.proto\";\n\
                extend google.protobuf.MessageOptions { optional double d = 50000; }\n\
                extend google.protobuf.FieldOptions { optional float f = 50001; }\n";
    for (what, body) in [
        (
            "a negative infinity as an option value",
            "message M { option (d) = -inf; }\n",
        ),
        (
            "an infinity as an option value",
            "message M { option (d) = inf; }\n",
        ),
        (
            "an infinity as a float field option",
            "message M { optional int32 a = 1 [(f) = inf]; }\n",
        ),
        (
            "one extension number with options",
            "message M {\n  extensions 5 [declaration = { number: 5, reserved: true }];\n}\n",
        ),
        (
            "an integer literal beyond 64 bits as a double default",
            "message M {\n  optional double x = 1 [default = 123456789012345678901234567890];\n}\n",
        ),
        (
            "an integer literal beyond 64 bits as an option value",
            "message M { option (d) = 123456789012345678901234567890; }\n",
        ),
        (
            "not-a-number as an option value",
            "message M { option (d) = nan; }\n",
        ),
        (
            "a negative not-a-number as an option value",
            "message M { option (d) = -nan; }\n",
        ),
        (
            "not-a-number as a float field option",
            "message M {\n  optional int32 a = 1 [(f) = nan];\n  optional int32 b = 2 [(f) = -nan, deprecated = true];\n}\n",
        ),
        (
            "not-a-number in a repeated option and a message option's field",
            "message A { optional double x = 1; optional float y = 2; }\n\
             extend google.protobuf.MessageOptions { repeated double r = 50002; optional A a = 50003; }\n\
             message M { option (r) = nan; option (r) = -nan; option (r) = 1.5; option (a).x = nan; option (a).y = -nan; }\n",
        ),
        (
            "an enum value named nan as an option value",
            "enum E { nan = 0; inf = 1; }\n\
             extend google.protobuf.MessageOptions { optional E e = 50002; }\n\
             message M { option (e) = nan; }\nmessage N { option (e) = inf; }\n",
        ),
        (
            "non-finite numbers in a message-literal option value",
            "message A { optional double x = 1; optional float y = 2; repeated double z = 3; }\n\
             extend google.protobuf.MessageOptions { optional A agg = 50002; }\n\
             message M { option (agg) = { x: inf y: -nan z: [nan, -inf] }; }\n\
             message N { option (agg) = { x: -inf, y: inf, z: nan }; }\n",
        ),
        (
            "a list of extension ranges with options",
            "message M {\n  extensions 1 to 4, 5 [verification = UNVERIFIED];\n  extensions 10, 20 to 30;\n}\n",
        ),
        (
            "two proto2 fields with one JSON name (protoc warns)",
            "message M {\n  optional int32 foo_bar = 1;\n  optional int32 fooBar = 2;\n}\n",
        ),
        (
            "proto2 JSON name clashes: custom with default, in oneofs, nested, with options",
            "message M {\n  optional int32 a = 1 [json_name = \"b\"];\n  optional int32 b = 2 [deprecated = true];\n\
             \x20 oneof o { int32 x_y = 3; string xY = 4 [default = \"q\"]; }\n\
             \x20 message N { repeated int32 p__q = 1; map<string, int32> pQ = 2; optional int32 p_q = 3; }\n\
             \x20 optional group Gg = 5 { optional int32 v_w = 1; optional int32 vW = 2; }\n  optional int32 other = 6 [json_name = \"gg\"];\n\
             \x20 extend M { optional int32 ext_one = 100; optional int32 extOne = 101; }\n\
             \x20 extensions 100 to 200;\n}\n",
        ),
    ] {
        eprintln!("{what}");
        let dir = snippet_dir(&[("gap.proto", &format!("{head}{body}"))]);
        agree(dir.path(), &[dir.path().join("gap.proto")]);
    }
}

/// `inf` and `nan` as option values where they may be enum values' names:
/// `protoc` reads them as numbers for a float option and as the enum value
/// for an enum option, whether the enum is declared in the file or imported.
/// The pure front end respells them as numbers, and keeps those an enum
/// option refuses as written. Both front ends agree.
#[test]
fn option_values_named_like_non_finite_numbers_agree() {
    let head = "syntax = \"proto2\";\npackage gap;\nimport \"google/protobuf/descriptor.proto\";\n";
    let options = "extend google.protobuf.MessageOptions { optional double d = 50000; optional E e = 50001; }\n\
                   extend google.protobuf.FieldOptions { optional float f = 50002; optional E fe = 50003; }\n";
    let enum_e = "enum E { nan = 0; inf = 1; other = 2; }\n";
    let uses = "message M { option (d) = nan; option (e) = nan; }\n\
                message N { option (e) = inf; option (d) = -inf; }\n\
                message O { option (d) = inf; option (e) = other; }\n\
                message P {\n  optional int32 a = 1 [(f) = nan, (fe) = inf];\n  \
                optional int32 b = 2 [(fe) = nan, (f) = -nan];\n}\n";
    let cases: Vec<(&str, Vec<(&str, String)>)> = vec![
        (
            "a not-a-number option value in a file with an enum value named nan",
            vec![(
                "gap.proto",
                format!(
                    "{head}extend google.protobuf.MessageOptions {{ optional double d = 50000; }}\n\
                     enum E {{ nan = 0; }}\nmessage M {{ option (d) = nan; }}\n"
                ),
            )],
        ),
        (
            "enum values named nan and inf next to float options, one file",
            vec![("gap.proto", format!("{head}{enum_e}{options}{uses}"))],
        ),
        (
            "an imported enum's values named nan and inf",
            vec![
                ("dep.proto", format!("{head}{enum_e}{options}")),
                (
                    "gap.proto",
                    format!("syntax = \"proto2\";\npackage gap;\nimport \"dep.proto\";\n{uses}"),
                ),
            ],
        ),
        (
            "an imported enum's value named nan, from another package",
            vec![
                (
                    "dep.proto",
                    "syntax = \"proto2\";\npackage dep;\nimport \"google/protobuf/descriptor.proto\";\n\
                     enum E { nan = 0; }\nextend google.protobuf.EnumValueOptions { optional E ev = 50000; }\n"
                        .to_owned(),
                ),
                (
                    "gap.proto",
                    "syntax = \"proto3\";\npackage gap;\nimport \"dep.proto\";\n\
                     enum F { A = 0 [(dep.ev) = nan]; B = 1; }\n"
                        .to_owned(),
                ),
            ],
        ),
    ];
    for (what, files) in &cases {
        eprintln!("{what}");
        let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let dir = snippet_dir(&files);
        agree(dir.path(), &[dir.path().join("gap.proto")]);
    }
}

/// `deprecated_legacy_json_field_conflicts = true` on a message turns
/// `protoc`'s JSON-name check off for that message (not for the messages
/// nested in it), in proto2 and proto3 alike: clashes of default and custom
/// names pass, and each field keeps its own JSON name. protox refuses them
/// all; the lowering gives them stand-ins. Both front ends agree.
#[test]
fn legacy_json_field_conflicts_agree() {
    let option = "option deprecated_legacy_json_field_conflicts = true;";
    for (syntax, body) in [
        ("proto3", "int32 foo_bar = 1;\n  int32 fooBar = 2;"),
        ("proto3", "int32 foo_bar = 1;\n  int32 FooBar = 2;"),
        (
            "proto3",
            "int32 a = 1 [json_name = \"x\"];\n  int32 b = 2 [deprecated = true, json_name = \"x\"];",
        ),
        ("proto3", "int32 a = 1 [json_name = \"b\"];\n  int32 b = 2;"),
        (
            "proto3",
            "int32 a = 1 [json_name = \"b\"];\n  int32 b = 2 [json_name = \"a\"];",
        ),
        (
            "proto3",
            "oneof o { int32 x_y = 3; string xY = 4; }\n  map<string, int32> p_q = 5;\n  \
             repeated int32 pQ = 6 [json_name = \"xY\"];\n  \
             message N { int32 a = 1; int32 b = 2 [json_name = \"c\"]; }",
        ),
        (
            "proto2",
            "optional int32 a = 1 [json_name = \"x\"];\n  optional int32 b = 2 [json_name = \"x\"];\n  \
             optional int32 c_d = 3;\n  optional int32 cD = 4;",
        ),
        (
            "proto3",
            "optional int32 foo_bar = 1;\n  optional int32 fooBar = 2;\n  int32 FOO_BAR = 3 [json_name = \"x\"];",
        ),
        // Custom names written with escapes, or in several literals, read
        // as protoc reads them.
        (
            "proto3",
            "int32 a = 1 [json_name = \"\\x41\"];\n  int32 b = 2 [json_name = \"A\"];",
        ),
        (
            "proto3",
            "int32 a = 1 [json_name = \"\\101\\u00e9\" 'z'];\n  int32 b = 2 [json_name = \"A\u{e9}z\"];\n  \
             int32 c = 3 [json_name = \"q\\\\\"];\n  int32 d = 4 [json_name = 'q\\\\'];",
        ),
        (
            "proto2",
            "optional int32 foo_bar = 1;\n  optional int32 b = 2 [json_name = \"foo\\x42ar\"];",
        ),
    ] {
        let text = format!(
            "syntax = \"{syntax}\";\npackage gap;\nmessage M {{\n  {option}\n  {body}\n}}\n"
        );
        eprintln!("{text}");
        let dir = snippet_dir(&[("gap.proto", &text)]);
        agree(dir.path(), &[dir.path().join("gap.proto")]);
    }
    // Without the option, a proto2 default name clashing with an escaped
    // custom one is only a warning for protoc.
    let text = "syntax = \"proto2\";\npackage gap;\nmessage M {\n  optional int32 foo_bar = 1;\n  \
                optional int32 b = 2 [json_name = \"foo\\x42ar\"];\n}\n";
    let dir = snippet_dir(&[("gap.proto", text)]);
    agree(dir.path(), &[dir.path().join("gap.proto")]);
    // Without the option, protoc compares JSON names alone (protox also
    // the names lower-cased without underscores).
    for body in [
        "int32 foo_bar = 1;\n  int32 FooBar = 2;",
        "optional int32 foo_bar = 1;\n  optional int32 FooBar = 2;\n  map<string, int32> Foobar = 3;\n  \
         message N { int32 a_b = 1; int32 AB = 2 [json_name = \"q\"]; }",
    ] {
        let text = format!("syntax = \"proto3\";\npackage gap;\nmessage M {{\n  {body}\n}}\n");
        eprintln!("{text}");
        let dir = snippet_dir(&[("gap.proto", &text)]);
        agree(dir.path(), &[dir.path().join("gap.proto")]);
    }
    // The option is the message's own: a nested message's clash is
    // refused by both, at its line.
    let text = format!(
        "syntax = \"proto3\";\npackage gap;\nmessage M {{\n  {option}\n  \
         message N {{\n    int32 x_y = 1;\n    int32 xY = 2;\n  }}\n}}\n"
    );
    let dir = snippet_dir(&[("gap.proto", &text)]);
    let includes = [dir.path().to_path_buf()];
    let inputs = [dir.path().join("gap.proto")];
    assert!(parse_files(&includes, &inputs, &FrontEnd::Protoc(None)).is_err());
    match parse_files(&includes, &inputs, &FrontEnd::Pure) {
        Err(CodegenError::PureParse { line, .. }) => assert!((6..=7).contains(&line), "{line}"),
        other => panic!("{other:?}"),
    }
}

/// A proto3 field renamed for protox (its name equals another's once
/// lower-cased without underscores) keeps working where an option value
/// names it: in an aggregate value (nested too, and in another file) and
/// in an option path.
#[test]
fn renamed_proto3_fields_named_in_option_values_agree() {
    let gap = "syntax = \"proto3\";\npackage gap;\nimport \"google/protobuf/descriptor.proto\";\n\
               message Opt {\n  int32 foo_bar = 1;\n  int32 FooBar = 2;\n  \
               message Inner { int32 x_y = 1; int32 XY = 2; }\n  Inner inner = 3;\n  \
               repeated Inner inners = 4;\n}\n\
               extend google.protobuf.MessageOptions { Opt opt = 50000; }\n\
               message M {\n  option (opt) = { FooBar: 1 foo_bar: 2 inner { XY: 3 x_y: 4 } \
               inners: [{ XY: 5 }, { x_y: 6 }] };\n}\n\
               message P {\n  option (opt).FooBar = 5;\n  option (opt).inner.XY = 6;\n}\n";
    let other = "syntax = \"proto3\";\npackage other;\nimport \"gap.proto\";\n\
                 message N { option (gap.opt) = { FooBar: 7 inner < XY: 8 > }; }\n";
    let dir = snippet_dir(&[("gap.proto", gap), ("other.proto", other)]);
    agree(
        dir.path(),
        &[dir.path().join("gap.proto"), dir.path().join("other.proto")],
    );
}

/// An extension of a message-set message in an option value (directly
/// and nested) is written as protoc writes it: a MessageSet item.
#[test]
fn message_set_option_values_agree() {
    let text = "syntax = \"proto2\";\npackage ms;\nimport \"google/protobuf/descriptor.proto\";\n\
                message Set { option message_set_wire_format = true; extensions 4 to max; }\n\
                message Element {\n  extend Set { optional Element ext = 15447542; }\n  \
                optional string s = 1;\n  optional Set inner = 2;\n}\n\
                message Holder { optional Set set = 1; repeated Set sets = 2; }\n\
                extend google.protobuf.FileOptions {\n  optional Set set_opt = 50000;\n  \
                optional Holder holder_opt = 50001;\n}\n\
                option (set_opt) = { [ms.Element.ext] { s: \"a\" inner { [ms.Element.ext] { s: \"c\" } } } };\n\
                option (holder_opt) = { set { [ms.Element.ext] { s: \"b\" } } sets {} };\n\
                message M { optional int32 x = 1; }\n";
    let dir = snippet_dir(&[("ms.proto", text)]);
    agree(dir.path(), &[dir.path().join("ms.proto")]);
}

/// Files `protoc` compiles that the pure front end refuses, each with a
/// located error that suggests the protoc front end. A protox release that
/// reads one of them fails this test: the file then belongs with the
/// agreeing ones.
#[test]
fn protox_gaps_are_located_errors_that_suggest_protoc() {
    let what = "an option value naming a field renamed for protox and, in the same option, \
                another message's field of that name";
    let text = "syntax = \"proto3\";\npackage gap;\nimport \"google/protobuf/descriptor.proto\";\n\
                message Plain { int32 FooBar = 1; }\n\
                message Opt { int32 foo_bar = 1; int32 FooBar = 2; Plain plain = 3; }\n\
                extend google.protobuf.MessageOptions { Opt opt = 50000; }\n\
                message M {\n  option (opt) = { FooBar: 1 plain { FooBar: 2 } };\n}\n";
    let line = 8;
    let dir = snippet_dir(&[("gap.proto", text)]);
    let includes = [dir.path().to_path_buf()];
    let inputs = [dir.path().join("gap.proto")];
    parse_files(&includes, &inputs, &FrontEnd::Protoc(None))
        .unwrap_or_else(|e| panic!("protoc refuses {what}: {e}"));
    match parse_files(&includes, &inputs, &FrontEnd::Pure) {
        Err(e @ CodegenError::PureParse { .. }) => {
            let shown = e.to_string();
            let CodegenError::PureParse { line: at, .. } = e else {
                unreachable!()
            };
            assert_eq!(at, line, "{what}: {shown}");
            assert!(shown.contains("protoc front end"), "{what}: {shown}");
        }
        other => panic!("{what}: {other:?}"),
    }
}

// --- Editions ------------------------------------------------------------------

const EDITIONS: &[(&str, u32)] = &[
    ("fixture/delta/editions.proto", 2023),
    ("fixture/epsilon/features2023.proto", 2023),
    ("fixture/epsilon/features2024.proto", 2024),
];

/// The editions fixtures compile with both front ends to the same
/// descriptors and code (checked by `fixtures_protoc`); here: both say
/// `editions` and the edition.
#[test]
fn editions_fixtures_are_read_by_both_front_ends() {
    let root = tests_dir().join("fixtures_protoc");
    for (name, year) in EDITIONS {
        let pure = agree(&root, &[root.join(name)]);
        let file = pure.schema.files.iter().find(|f| f.name == *name).unwrap();
        assert_eq!(file.syntax, Syntax::Edition(*year), "{name}");
    }
}

/// Writes `files` (name, text) into a fresh include directory.
fn snippet_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

/// Editions files beyond the fixtures, each accepted by protoc: both front
/// ends agree on them.
#[test]
fn editions_snippets_agree() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "file-wide features, every field kind, nested scopes",
            &[(
                "s.proto",
                "edition = \"2023\";\npackage s;\n\
                 option features.field_presence = IMPLICIT;\n\
                 option features.utf8_validation = NONE;\n\
                 option features.repeated_field_encoding = EXPANDED;\n\
                 message M {\n  int32 a = 1;\n  M m = 2;\n  repeated string r = 3;\n\
                 \x20 map<string, M> map = 4 [features.utf8_validation = VERIFY];\n\
                 \x20 oneof o { int64 x = 5; M y = 6 [features.message_encoding = DELIMITED]; }\n\
                 \x20 int32 d = 7 [features.field_presence = EXPLICIT, default = 7];\n\
                 \x20 M req = 8 [features.field_presence = LEGACY_REQUIRED];\n\
                 \x20 repeated sint32 p = 9 [features.repeated_field_encoding = PACKED];\n\
                 \x20 message N { option features.json_format = LEGACY_BEST_EFFORT; int32 n = 1; }\n\
                 \x20 enum E { option features.enum_type = CLOSED; ONE = 1; }\n\
                 \x20 E e = 10 [features.field_presence = EXPLICIT];\n\
                 \x20 extensions 100 to 200;\n\
                 \x20 reserved 50 to 60;\n\
                 \x20 reserved foo, bar;\n\
                 }\n\
                 extend M { repeated int32 ext = 100; M.E ext_e = 101; }\n\
                 service S { rpc Go(M) returns (stream M) { option deprecated = true; } }\n",
            )],
        ),
        (
            "edition 2024: visibility and an option import",
            &[
                (
                    "opts.proto",
                    "edition = \"2024\";\npackage opts;\nimport \"google/protobuf/descriptor.proto\";\n\
                     extend google.protobuf.MessageOptions { int32 tag = 50000; }\n",
                ),
                (
                    "v.proto",
                    "edition = \"2024\";\npackage v;\nimport option \"opts.proto\";\n\
                     export message M {\n  option (opts.tag) = 3;\n  local message N { int32 a = 1; }\n\
                     \x20 export enum E { E_ZERO = 0; }\n  N n = 1;\n}\n\
                     local enum L { L_ZERO = 0; }\nmessage Q { M.N n = 1; L l = 2; }\n",
                ),
            ],
        ),
        (
            "an editions file importing proto2 and proto3 files, and imported by them",
            &[
                (
                    "two.proto",
                    "syntax = \"proto2\";\npackage two;\nenum Closed { C_ONE = 1; }\n\
                     message T { optional int32 a = 1; }\n",
                ),
                (
                    "ed.proto",
                    "edition = \"2023\";\npackage ed;\nimport \"two.proto\";\n\
                     message U { two.Closed c = 1; two.T t = 2 [features.message_encoding = DELIMITED]; }\n",
                ),
                (
                    "three.proto",
                    "syntax = \"proto3\";\npackage three;\nimport \"ed.proto\";\n\
                     message V { ed.U u = 1; }\n",
                ),
            ],
        ),
    ];
    for (what, files) in cases {
        let dir = snippet_dir(files);
        let root = dir.path().to_path_buf();
        let inputs: Vec<PathBuf> = files.iter().map(|(n, _)| root.join(n)).collect();
        eprintln!("{what}");
        agree(&root, &inputs);
    }
}

/// Editions files protoc refuses: the pure front end refuses each too, at
/// the line of the construct at fault.
#[test]
fn editions_mistakes_are_refused_where_they_are() {
    let head = "edition = \"2023\";\npackage p;\n";
    for (what, body, line) in [
        (
            "an optional label",
            "message M {\n  optional int32 a = 1;\n}\n",
            4,
        ),
        (
            "a required label",
            "message M {\n  required int32 a = 1;\n}\n",
            4,
        ),
        ("a group", "message M {\n  repeated group G = 1 { }\n}\n", 4),
        ("an unknown edition", "", 1),
        (
            "presence on a repeated field",
            "message M {\n  repeated int32 a = 1 [features.field_presence = EXPLICIT];\n}\n",
            4,
        ),
        (
            "presence on a oneof member",
            "message M {\n  oneof o {\n    int32 a = 1 [features.field_presence = EXPLICIT];\n  }\n}\n",
            5,
        ),
        (
            "presence on an extension",
            "message M { extensions 10 to 20; }\nextend M {\n  int32 e = 10 [features.field_presence = EXPLICIT];\n}\n",
            5,
        ),
        (
            "a required extension",
            "message M { extensions 10 to 20; }\nextend M {\n  int32 e = 10 [features.field_presence = LEGACY_REQUIRED];\n}\n",
            5,
        ),
        (
            "implicit presence on a message field",
            "message M {\n  M m = 1 [features.field_presence = IMPLICIT];\n}\n",
            4,
        ),
        (
            "a default with implicit presence from the file",
            "option features.field_presence = IMPLICIT;\nmessage M {\n  int32 x = 2 [default = 3];\n}\n",
            5,
        ),
        (
            "a closed enum with implicit presence",
            "enum E { option features.enum_type = CLOSED; Z = 0; }\nmessage M {\n  E e = 1 [features.field_presence = IMPLICIT];\n}\n",
            5,
        ),
        (
            "a packed singular field",
            "message M {\n  int32 a = 1 [features.repeated_field_encoding = PACKED];\n}\n",
            4,
        ),
        (
            "packed strings",
            "message M {\n  repeated string a = 1 [features.repeated_field_encoding = PACKED];\n}\n",
            4,
        ),
        (
            "a delimited scalar",
            "message M {\n  int32 a = 1 [features.message_encoding = DELIMITED];\n}\n",
            4,
        ),
        (
            "a delimited map",
            "message M {\n  map<int32, M> a = 1 [features.message_encoding = DELIMITED];\n}\n",
            4,
        ),
        (
            "UTF-8 validation of an integer",
            "message M {\n  int32 a = 1 [features.utf8_validation = NONE];\n}\n",
            4,
        ),
        (
            "the packed option",
            "message M {\n  repeated int32 a = 1 [packed = true];\n}\n",
            4,
        ),
        (
            "an open enum starting at one",
            "enum E {\n  ONE = 1;\n}\n",
            3,
        ),
        (
            "presence on a message",
            "message M {\n  option features.field_presence = IMPLICIT;\n  int32 a = 1;\n}\n",
            3,
        ),
        (
            "enum openness on a field",
            "message M {\n  int32 a = 1 [features.enum_type = CLOSED];\n}\n",
            4,
        ),
        (
            "required presence as the file's default",
            "option features.field_presence = LEGACY_REQUIRED;\nmessage M { int32 a = 1; }\n",
            1,
        ),
        (
            "two fields with one JSON name",
            "message M {\n  int32 foo_bar = 1;\n  int32 fooBar = 2;\n}\n",
            5,
        ),
        (
            "a custom JSON name that is another field's",
            "message M {\n  int32 a = 1 [json_name = \"b\"];\n  int32 b = 2;\n}\n",
            5,
        ),
    ] {
        let text = if what == "an unknown edition" {
            "edition = \"2077\";\n".to_owned()
        } else {
            format!("{head}{body}")
        };
        let dir = snippet_dir(&[("x.proto", &text)]);
        let includes = [dir.path().to_path_buf()];
        let inputs = [dir.path().join("x.proto")];
        assert!(
            parse_files(&includes, &inputs, &FrontEnd::Protoc(None)).is_err(),
            "protoc accepts {what}"
        );
        match parse_files(&includes, &inputs, &FrontEnd::Pure) {
            Err(e @ CodegenError::PureParse { .. }) => {
                let shown = e.to_string();
                let CodegenError::PureParse { line: at, .. } = e else {
                    unreachable!()
                };
                assert_eq!(at, line, "{what}: {shown}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

/// The model of `name` (under `fixtures_protoc`) from the protoc front
/// end, with `(message.field, utf8_validation)` read from the descriptors
/// (the model has no use for it).
fn protoc_file(name: &str) -> (ProtoFile, Vec<(String, u64)>) {
    let root = tests_dir().join("fixtures_protoc");
    let parsed = compile(
        std::slice::from_ref(&root),
        &[root.join(name)],
        FrontEnd::Protoc(None),
    );
    let utf8 = descriptors(&parsed)
        .iter()
        .find(|f| f.name() == name)
        .map(utf8_validations)
        .unwrap();
    let file = parsed
        .schema
        .files
        .into_iter()
        .find(|f| f.name == name)
        .unwrap();
    (file, utf8)
}

/// `(message.field, utf8_validation)` for every field whose own `features`
/// set `utf8_validation` (`FeatureSet` field 4: 2 = VERIFY, 3 = NONE).
fn utf8_validations(f: &FileDescriptorProto) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for m in &f.message_type {
        for field in &m.field {
            let Some(o) = field.options.as_ref() else {
                continue;
            };
            // `FieldOptions.features` = 21.
            if let Some(UnknownValueRef::LengthDelimited(set)) =
                o.special_fields.unknown_fields().get(21)
            {
                let mut i = 0;
                while i + 1 < set.len() {
                    if set[i] == 4 << 3 {
                        out.push((
                            format!("{}.{}", m.name(), field.name()),
                            u64::from(set[i + 1]),
                        ));
                    }
                    i += 2;
                }
            }
        }
    }
    out
}

fn message<'f>(file: &'f ProtoFile, name: &str) -> &'f MessageDef {
    file.messages.iter().find(|m| m.name == name).unwrap()
}

fn nested<'m>(m: &'m MessageDef, name: &str) -> &'m MessageDef {
    m.messages.iter().find(|n| n.name == name).unwrap()
}

fn field<'m>(m: &'m MessageDef, name: &str) -> &'m FieldDef {
    m.fields.iter().find(|f| f.name == name).unwrap()
}

/// (presence, packed, delimited) of `message.field`.
fn shape(file: &ProtoFile, message_name: &str, field_name: &str) -> (Presence, bool, bool) {
    let f = field(message(file, message_name), field_name);
    (f.presence, f.packed, f.delimited)
}

fn closed(file: &ProtoFile, enum_name: &str) -> bool {
    file.enums
        .iter()
        .find(|e| e.name == enum_name)
        .unwrap()
        .closed
}

#[test]
fn edition_2023_features_resolve_as_worked_out_by_hand() {
    use Presence::{Explicit, Implicit, Required};
    let (f, utf8) = protoc_file("fixture/epsilon/features2023.proto");
    assert_eq!(f.syntax, Syntax::Edition(2023));
    for (m, field, want) in [
        ("Presence", "implicit", (Implicit, false, false)),
        ("Presence", "explicit", (Explicit, false, false)),
        ("Presence", "required", (Required, false, false)),
        ("Presence", "by_default", (Explicit, false, false)),
        ("Presence", "child", (Explicit, false, false)),
        ("Encoding", "packed", (Explicit, true, false)),
        // The file's EXPANDED, and a field's own.
        ("Encoding", "expanded", (Explicit, false, false)),
        ("Encoding", "inherited", (Explicit, false, false)),
        ("Encoding", "delimited", (Explicit, false, true)),
        ("Encoding", "length_prefixed", (Explicit, false, false)),
        ("Encoding", "delimited_list", (Explicit, false, true)),
        ("Encoding", "verified", (Explicit, false, false)),
        ("Oneofs", "in_oneof", (Explicit, false, false)),
        ("Oneofs", "delimited_in_oneof", (Explicit, false, true)),
        ("Oneofs", "map", (Explicit, false, false)),
        ("Enums", "closed", (Explicit, false, false)),
        ("Enums", "closed_list", (Explicit, true, false)),
    ] {
        assert_eq!(shape(&f, m, field), want, "{m}.{field}");
    }
    assert!(field(message(&f, "Oneofs"), "in_oneof").oneof.is_some());
    assert!(closed(&f, "Closed"));
    assert!(!closed(&f, "Open"));
    assert!(!closed(&f, "OpenByDefault"));
    assert_eq!(
        utf8,
        [
            ("Encoding.verified".to_owned(), 2),
            ("Encoding.unverified".to_owned(), 3)
        ]
    );
}

#[test]
fn edition_2024_features_resolve_as_worked_out_by_hand() {
    use Presence::{Explicit, Implicit, Required};
    let (f, utf8) = protoc_file("fixture/epsilon/features2024.proto");
    assert_eq!(f.syntax, Syntax::Edition(2024));
    // The file says IMPLICIT; messages keep presence.
    for (m, field, want) in [
        ("Presence", "implicit", (Implicit, false, false)),
        ("Presence", "explicit", (Explicit, false, false)),
        ("Presence", "required", (Required, false, false)),
        ("Presence", "child", (Explicit, false, false)),
        ("Encoding", "packed", (Implicit, true, false)),
        ("Encoding", "expanded", (Implicit, false, false)),
        ("Encoding", "delimited", (Explicit, false, true)),
        ("Encoding", "length_prefixed", (Explicit, false, false)),
        ("Encoding", "verified", (Implicit, false, false)),
        ("Enums", "closed", (Explicit, false, false)),
        ("Enums", "open", (Implicit, false, false)),
    ] {
        assert_eq!(shape(&f, m, field), want, "{m}.{field}");
    }
    let inner = nested(message(&f, "Encoding"), "Inner");
    assert_eq!(field(inner, "v").presence, Implicit);
    assert!(closed(&f, "Closed"));
    assert!(!closed(&f, "Open"));
    assert_eq!(utf8, [("Encoding.unverified".to_owned(), 3)]);
}
