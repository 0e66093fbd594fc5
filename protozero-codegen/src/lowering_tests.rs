//! The lowering's tests: editions files, respellings and refusals, each
//! against the text protox is given and the edits kept.

use super::*;

fn lowered(src: &str) -> Lowered {
    lower(src, &[], &[])
        .expect("lowers")
        .expect("an editions file")
}

#[test]
fn proto2_and_proto3_files_are_left_alone() {
    assert!(
        lower(
            "syntax = \"proto3\";\nmessage A { int32 a = 1; reserved \"x\"; }",
            &[],
            &[]
        )
        .unwrap()
        .is_none()
    );
    assert!(
        lower(
            "message A { optional int32 a = 1; required B b = 2; }",
            &[],
            &[]
        )
        .unwrap()
        .is_none()
    );
    assert!(
        lower(
            "message A { extensions 5 to 6 [declaration = {}]; }",
            &[],
            &[]
        )
        .unwrap()
        .is_none()
    );
}

#[test]
fn spellings_protox_does_not_read_are_respelled_in_any_syntax() {
    let l = lowered(
        "syntax = \"proto2\";\n\
             message A {\n  extensions 5 [declaration = { number: 5 }];\n\
             \x20 optional double d = 1 [default = inf, (x) = -inf];\n\
             \x20 optional double e = 2 [default = 123456789012345678901234567890];\n\
             }\noption (y) = inf;\n",
    );
    assert_eq!(l.edition, None);
    assert_eq!(
        l.text,
        "syntax = \"proto2\";\n\
             message A {\n  extensions 5 to 5 [declaration = { number: 5 }];\n\
             \x20 optional double d = 1 [default = inf, (x) = -1e999];\n\
             \x20 optional double e = 2 [default = 123456789012345678901234567890.0];\n\
             }\noption (y) = 1e999;\n"
    );
}

#[test]
fn extension_lists_ending_in_one_number_with_options_get_a_range() {
    let l = lowered(
        "message A {\n  extensions 1 to 4, 5 [verification = UNVERIFIED];\n\
         \x20 extensions 7, 9 to 9 [verification = UNVERIFIED];\n  extensions 10, 20;\n}\n",
    );
    assert_eq!(
        l.text,
        "message A {\n  extensions 1 to 4, 5 to 5 [verification = UNVERIFIED];\n\
         \x20 extensions 7, 9 to 9 [verification = UNVERIFIED];\n  extensions 10, 20;\n}\n"
    );
}

#[test]
fn nan_option_values_become_the_stand_in_but_not_defaults() {
    let l = lowered(
        "message A {\n  optional double d = 1 [default = nan, (x) = -nan];\n\
         \x20 option (y) = nan;\n}\n",
    );
    assert!(l.nan_stand_in);
    let s = crate::non_finite::NAN_STAND_IN;
    assert_eq!(
        l.text,
        format!(
            "message A {{\n  optional double d = 1 [default = nan, (x) = {s}];\n\
             \x20 option (y) = {s};\n}}\n"
        )
    );
    assert_eq!(l.respelled_values, [(58, 61), (80, 82)]);
    // Values found to be enum values are left alone where they are.
    let src = "enum E { nan = 0; inf = 1; }\noption (e) = nan;\noption (f) = inf;\n";
    let respelled = lower(src, &[], &[]).unwrap().unwrap();
    assert_eq!(respelled.respelled_values, [(42, 44), (60, 62)]);
    assert!(lower(src, &[], &[42, 60]).unwrap().is_none());
    let one = lower(src, &[], &[42]).unwrap().unwrap();
    assert!(one.text.contains("(e) = nan;") && one.text.contains("(f) = 1e999;"));
}

#[test]
fn proto2_json_name_clashes_with_a_default_name_get_stand_ins() {
    let l = lowered(
        "message A {\n  optional int32 foo_bar = 1;\n  optional int32 fooBar = 2 [deprecated = true];\n\
         \x20 optional int32 a = 3 [json_name = \"b\"];\n  optional int32 b = 4;\n\
         \x20 optional int32 c = 5 [json_name = \"q\"];\n  optional int32 d = 6 [json_name = \"q\"];\n\
         \x20 optional group G = 7 { optional int32 x_y = 1; optional int32 xY = 2; }\n\
         \x20 extend A { optional int32 e_f = 100; optional int32 eF = 101; }\n}\n",
    );
    assert!(
        l.text
            .contains("foo_bar = 1 [json_name = \"zerotrace lowered json name 0\"];")
    );
    assert!(l.text.contains(
        "fooBar = 2 [json_name = \"zerotrace lowered json name 1\", deprecated = true];"
    ));
    assert!(
        l.text
            .contains("b = 4 [json_name = \"zerotrace lowered json name 3\"];")
    );
    // Two custom names clash as in protoc (an error there too), extensions
    // have no JSON name of this kind.
    assert!(l.text.contains("d = 6 [json_name = \"q\"];"));
    assert!(l.text.contains("eF = 101;"));
    let named = |m: &[&str], f: &str| crate::lowered::StandIn {
        message: m.iter().map(|s| s.to_string()).collect(),
        read_as: f.to_owned(),
        name: f.to_owned(),
        json_name: crate::json_names::default_json_name(f),
    };
    assert_eq!(
        l.json_stand_ins,
        [
            named(&["A", "G"], "x_y"),
            named(&["A", "G"], "xY"),
            named(&["A"], "foo_bar"),
            named(&["A"], "fooBar"),
            named(&["A"], "b"),
        ]
    );
    // protoc refuses such clashes in proto3 as protox does: the JSON names
    // are left to clash (the second field is renamed for protox's check of
    // names, which protoc does not make, and writes its JSON name out).
    let proto3 = "syntax = \"proto3\";\nmessage A { int32 foo_bar = 1; int32 fooBar = 2; }\n";
    let l = lower(proto3, &[], &[]).unwrap().unwrap();
    assert!(l.text.contains(
        "int32 foo_bar = 1; int32 zerotrace_lowered_field_666f6f426172 = 2 [json_name = \"fooBar\"];"
    ));
    let proto3 = "syntax = \"proto3\";\nmessage A { int32 foo_bar = 1; int32 foo = 2; }\n";
    assert!(lower(proto3, &[], &[]).unwrap().is_none());
}

#[test]
fn singular_fields_get_the_optional_label() {
    let l = lowered(
        "edition = \"2023\";\n\
             message A {\n\
               int32 a = 1 [features.field_presence = IMPLICIT];\n\
               repeated B b = 2;\n\
               map<string, B> m = 3;\n\
               oneof o { string s = 4; B t = 5; }\n\
               message B { .pkg.C c = 1; }\n\
               option (x) = { a: 1 b { c: 2 } };\n\
               extend Foo { int32 e = 10; }\n\
             }\n\
             extend Foo { A ext = 11; }\n\
             service S { rpc M(A) returns (A) { option deprecated = true; } }\n",
    );
    assert_eq!(
        l.text,
        "syntax = \"proto2\";\n\
             message A {\n\
               optional int32 a = 1 [features.field_presence = IMPLICIT];\n\
               repeated B b = 2;\n\
               map<string, B> m = 3;\n\
               oneof o { string s = 4; B t = 5; }\n\
               message B { optional .pkg.C c = 1; }\n\
               option (x) = { a: 1 b { c: 2 } };\n\
               extend Foo { optional int32 e = 10; }\n\
             }\n\
             extend Foo { optional A ext = 11; }\n\
             service S { rpc M(A) returns (A) { option deprecated = true; } }\n"
    );
    assert_eq!(l.edition, Some(EDITION_2023));
    let names: Vec<_> = l.fields.iter().map(|f| f.1.as_str()).collect();
    assert_eq!(names, ["a", "b", "m", "s", "t", "c", "e", "ext"]);
}

#[test]
fn offsets_map_back_to_the_original() {
    let src = "edition = \"2023\";\nmessage A { int32 a = 1; int32 b = 2; }";
    let l = lowered(src);
    // `b` in the rewritten text (after two edits) and in the original.
    let new_b = l.text.find("b = 2").unwrap();
    assert_eq!(l.original_offset(new_b), src.find("b = 2").unwrap());
    // Inside an inserted label: the field's start.
    let new_label = l.text.find("optional int32 a").unwrap() + 3;
    assert_eq!(l.original_offset(new_label), src.find("int32 a").unwrap());
}

#[test]
fn refusals_point_at_the_construct() {
    let src = "edition = \"2023\";\nmessage A { optional int32 a = 1; }";
    assert_eq!(
        lower(src, &[], &[]).unwrap_err().offset,
        src.find("optional").unwrap()
    );
    let src = "edition = \"2023\";\nmessage A { required int32 a = 1; }";
    assert!(
        lower(src, &[], &[])
            .unwrap_err()
            .message
            .contains("LEGACY_REQUIRED")
    );
    let src = "edition = \"2023\";\nmessage A { repeated group G = 1 { } }";
    assert_eq!(
        lower(src, &[], &[]).unwrap_err().offset,
        src.find("group").unwrap()
    );
    let src = "edition = \"2030\";";
    assert!(lower(src, &[], &[]).unwrap_err().message.contains("2030"));
}

#[test]
fn edition_2024_visibility_and_option_imports() {
    let l = lowered(
        "edition = \"2024\";\n\
             import option \"o.proto\";\n\
             export message M { local enum E { Z = 0; } }\n\
             local message N {}\n",
    );
    assert_eq!(l.edition, Some(EDITION_2024));
    assert!(l.text.contains("import        \"o.proto\";"));
    assert!(l.text.contains("       message M {       enum E"));
    assert_eq!(l.option_imports, ["o.proto"]);
    assert_eq!(
        l.visibility,
        [
            (vec!["M".to_owned()], false, true),
            (vec!["M".to_owned(), "E".to_owned()], true, false),
            (vec!["N".to_owned()], false, false),
        ]
    );
}

#[test]
fn reserved_names_become_strings() {
    let l = lowered(
        "edition = \"2023\";\nmessage A { reserved foo, bar; reserved 1 to max; }\n\
             enum E { reserved ZAP; Z = 0; }",
    );
    assert!(
        l.text
            .contains("reserved \"foo\", \"bar\"; reserved 1 to max;")
    );
    assert!(l.text.contains("enum E { reserved \"ZAP\"; Z = 0; }"));
}

#[test]
fn type_references_are_whole_names_outside_strings() {
    let src = "message A { a.b.C x = 1; map<string, a.b.C> m = 2; // a.b.C\n\
                   string s = 3 [default = \"a.b.C\"]; x.a.b.C y = 4; a.b.C.D z = 5; }";
    let found = type_references(src, "a.b.C");
    assert_eq!(found.len(), 2);
    assert!(
        found
            .iter()
            .all(|&at| src[at..].starts_with("a.b.C ") || src[at..].starts_with("a.b.C>"))
    );
}

#[test]
fn a_qualified_name_and_an_inserted_label_at_one_place() {
    let src = "edition = \"2023\";\nmessage A { b.C c = 1; }";
    let at = src.find("b.C").unwrap();
    let l = lower(src, &[(at, 3, ".x.b.C".to_owned())], &[])
        .unwrap()
        .unwrap();
    assert!(
        l.text.contains("message A { optional .x.b.C c = 1; }"),
        "{}",
        l.text
    );
}

#[test]
fn any_text_lowers_without_panicking() {
    for src in [
        "edition = \"2023\"; message { \"\\é",
        "edition = \"2023\";\nmessage A { /* é",
        "edition = \"2023\"; message A { extensions 5 [",
        "edition = \"2023\"; message A { reserved é, \"",
        "syntax = \"proto2\"; option (x) = - inf; 99999999999999999999999",
        "edition",
        "edition = \"2023\"; export",
        "édition = 1; } } {{ [[ ((",
    ] {
        let _ = lower(
            src,
            &[(3, 100, "x".to_owned()), (1, 0, "y".to_owned())],
            &[],
        );
    }
}

#[test]
fn comments_and_strings_hide_keywords() {
    let l = lowered(
        "// leading\nedition = \"2023\"; /* optional */\n\
             message A { // required\n string s = 1 [default = \"optional ; }\"]; }",
    );
    assert!(
        l.text
            .contains("optional string s = 1 [default = \"optional ; }\"]; }")
    );
}
