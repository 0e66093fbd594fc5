//! Editions files: read by both front ends alike, their mistakes refused
//! where they are, their features resolved as worked out by hand.

use super::*;

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
