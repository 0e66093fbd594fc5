//! What protox cannot read as written and the pure front end respells (or
//! refuses, at its line): both front ends agree on the respelled files.

use super::*;

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
