//! Real-world constructs, checked against Google's `protoc` in both
//! directions: bytes our generated writers produce decode with
//! `protoc --decode` to the expected text, and bytes `protoc --encode`
//! produces from text decode with our generated decoders. Covers proto2
//! groups (wire types 3/4), extensions (scalar, packed, message, group,
//! nested scope), message sets, maps, editions features (implicit
//! presence, packed by default, expanded, delimited, closed enums), a
//! oneof group, json_name, keywords and a `has_x` field next to `x`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use protozero::{HeapWriter, MessageDecoder, MessageWriter};
use protozero_codegen_fixtures::real_world::fixture::delta::{Ed, EdDecoder, ed};
use protozero_codegen_fixtures::real_world::fixture::gamma::{
    Legacy, LegacyDecoder, LegacyLegacyDecoderExt, LegacyLegacyExt, Level, Set, SetDecoder,
    SetMember, holder, legacy, set_member,
};

const LEGACY: &str = "fixture/gamma/legacy.proto";
const EDITIONS: &str = "fixture/delta/editions.proto";

fn protoc(args: &[&str], input: &[u8], file: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures_protoc");
    let mut child = Command::new(protoc_bin_vendored::protoc_bin_path().unwrap())
        .arg(format!("-I{}", root.display()))
        .args(args)
        .arg(file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "protoc {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn decode_text(message: &str, file: &str, bytes: &[u8]) -> String {
    let text = protoc(&[&format!("--decode={message}")], bytes, file);
    String::from_utf8(text).unwrap()
}

fn encode_text(message: &str, file: &str, text: &str) -> Vec<u8> {
    protoc(&[&format!("--encode={message}")], text.as_bytes(), file)
}

fn write(f: impl FnOnce(&mut HeapWriter)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w);
    w.finish().unwrap()
}

#[test]
fn groups_extensions_and_clashing_names_decode_with_protoc() {
    let bytes = write(|w| {
        let mut m = Legacy::from_message(w.root());
        m.set_a(1);
        m.begin_result().set_url("u").add_n(2).add_n(3);
        m.add_item().set_id(4);
        m.add_item().set_id(5);
        m.set_has_x(6)
            .set_x(7)
            .set_type("t")
            .set_self(true)
            .set_match(8);
        m.add_counts().set_key("k").set_value(9);
        m.begin_deep().begin_d().begin_d().set_v(10);
        m.begin_pick().set_p(11);
        m.set_ext_scalar(12);
        m.begin_ext_message().begin_d();
        m.set_ext_packed([13, 14]);
        m.begin_extgroup().set_g(15);
        holder::LegacyExt::set_nested_ext(&mut m, "n");
    });
    let text = decode_text("fixture.gamma.Legacy", LEGACY, &bytes);
    let expected = "\
a: 1
Result {
  url: \"u\"
  n: 2
  n: 3
}
Item {
  id: 4
}
Item {
  id: 5
}
has_x: 6
x: 7
type: \"t\"
self: true
match: 8
counts {
  key: \"k\"
  value: 9
}
deep {
  d {
    d {
      v: 10
    }
  }
}
Pick {
  p: 11
}
[fixture.gamma.ext_scalar]: 12
[fixture.gamma.ext_message] {
  d {
  }
}
[fixture.gamma.ext_packed]: 13
[fixture.gamma.ext_packed]: 14
[fixture.gamma.extgroup] {
  g: 15
}
[fixture.gamma.Holder.nested_ext]: \"n\"
";
    assert_eq!(text, expected);

    let d = LegacyDecoder::new(&bytes);
    assert_eq!(d.decode_error(), None);
    let result = d.result().unwrap();
    assert_eq!(result.url(), Some("u"));
    assert_eq!(result.n().collect::<Vec<_>>(), [2, 3]);
    let ids: Vec<_> = d.item().map(|i| i.id()).collect();
    assert_eq!(ids, [Some(4), Some(5)]);
    // `has_x` is a field; the presence check of `x` moved aside.
    assert_eq!(d.has_x(), Some(6));
    assert!(d.has_has_x());
    assert_eq!(d.x(), Some(7));
    assert!(d.has_x_());
    assert_eq!(d.r#type(), Some("t"));
    assert_eq!(d.self_(), Some(true));
    assert_eq!(d.r#match(), Some(8));
    let v = d
        .deep()
        .and_then(|x| x.d())
        .and_then(|x| x.d())
        .and_then(|x| x.v());
    assert_eq!(v, Some(10));
    assert!(matches!(d.which_choice(), Some(legacy::Choice::Pick(p)) if p.p() == Some(11)));
    assert_eq!(d.ext_scalar(), Some(12));
    assert_eq!(d.ext_packed().collect::<Vec<_>>(), [13, 14]);
    assert_eq!(d.extgroup().and_then(|g| g.g()), Some(15));
    assert_eq!(holder::LegacyDecoderExt::nested_ext(&d), Some("n"));
    // Debug: groups like messages, maps as entry lists; the extensions are
    // fields `Legacy` itself does not name, so the output ends with `..`.
    assert_eq!(
        format!("{d:?}"),
        "LegacyDecoder { a: 1, result: ResultDecoder { url: \"u\", n: [2, 3] }, \
         item: [ItemDecoder { id: 4 }, ItemDecoder { id: 5 }], has_x: 6, x: 7, \
         type: \"t\", self: true, match: 8, \
         counts: [CountsEntryDecoder { key: \"k\", value: 9 }], \
         deep: DeepDecoder { d: DeeperDecoder { d: DeepestDecoder { v: 10 } } }, \
         pick: PickDecoder { p: 11 }, .. }"
    );
}

#[test]
fn protoc_encoded_groups_and_extensions_decode() {
    let bytes = encode_text(
        "fixture.gamma.Legacy",
        LEGACY,
        "Result { url: \"x\" n: 1 n: 2 } \
         Item { id: 7 } Item { } Item { id: 9 } \
         Pick { p: 3 } \
         counts { key: \"a\" value: 1 } counts { key: \"b\" value: 2 } \
         [fixture.gamma.ext_packed]: 5 [fixture.gamma.ext_packed]: 6 \
         [fixture.gamma.extgroup] { g: -1 } \
         [fixture.gamma.ext_message] { d { d { v: 4 } } }",
    );
    let d = LegacyDecoder::new(&bytes);
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.result().unwrap().n().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(d.result_bytes().map(<[u8]>::len), Some(7));
    let ids: Vec<_> = d.item().map(|i| i.id()).collect();
    assert_eq!(ids, [Some(7), None, Some(9)]);
    assert!(matches!(d.which_choice(), Some(legacy::Choice::Pick(p)) if p.p() == Some(3)));
    let counts: Vec<_> = d.counts().map(|e| (e.key(), e.value())).collect();
    assert_eq!(counts, [(Some("a"), Some(1)), (Some("b"), Some(2))]);
    assert_eq!(d.ext_packed().collect::<Vec<_>>(), [5, 6]);
    assert_eq!(d.extgroup().and_then(|g| g.g()), Some(-1));
    let v = d
        .ext_message()
        .and_then(|m| m.d())
        .and_then(|m| m.d())
        .and_then(|m| m.v());
    assert_eq!(v, Some(4));
}

#[test]
fn message_set_items_round_trip_with_protoc() {
    let member = write(|w| {
        SetMember::from_message(w.root()).set_label("m");
    });
    let bytes = write(|w| {
        let mut s = Set::from_message(w.root());
        set_member::SetExt::set_member_raw(&mut s, &member);
    });
    // Item group 1 { type_id (2) = 1000, message (3) = member }.
    assert_eq!(bytes[..4], [0x0B, 0x10, 0xE8, 0x07]);
    let text = decode_text("fixture.gamma.Set", LEGACY, &bytes);
    // protoc prints message-set items by the extension's message type.
    assert_eq!(text, "[fixture.gamma.SetMember] {\n  label: \"m\"\n}\n");
    let from_protoc = encode_text(
        "fixture.gamma.Set",
        LEGACY,
        "[fixture.gamma.SetMember.member] { label: \"p\" }",
    );
    let d = SetDecoder::new(&from_protoc);
    assert_eq!(d.decode_error(), None);
    let m = set_member::SetDecoderExt::member(&d).unwrap();
    assert_eq!(m.label(), Some("p"));
}

#[test]
fn editions_features_shape_the_encoding() {
    let bytes = write(|w| {
        let mut e = Ed::from_message(w.root());
        e.set_implicit_field(3)
            .set_packed_default([1, 2])
            .add_expanded(4)
            .add_expanded(5);
        e.begin_delimited().set_v(6);
        e.set_closed(ed::Closed::One);
        e.begin_plain().set_v(7);
    });
    assert_eq!(
        bytes,
        [
            0x08, 3, // implicit_field
            0x12, 2, 1, 2, // packed_default: packed by default
            0x18, 4, 0x18, 5, // expanded: one tag per element
            0x23, 0x08, 6, 0x24, // delimited: group tags, no length
            0x28, 1, // closed
            0x32, 2, 0x08, 7, // plain: length-prefixed
        ]
    );
    let text = decode_text("fixture.delta.Ed", EDITIONS, &bytes);
    assert_eq!(
        text,
        "implicit_field: 3\npacked_default: 1\npacked_default: 2\nexpanded: 4\nexpanded: 5\n\
         delimited {\n  v: 6\n}\nclosed: CLOSED_ONE\nplain {\n  v: 7\n}\n"
    );
    let from_protoc = encode_text(
        "fixture.delta.Ed",
        EDITIONS,
        "packed_default: [7, 8] expanded: 9 delimited { v: 1 } closed: CLOSED_ZERO",
    );
    let d = EdDecoder::new(&from_protoc);
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.packed_default().collect::<Vec<_>>(), [7, 8]);
    assert_eq!(d.expanded().collect::<Vec<_>>(), [9]);
    assert_eq!(d.delimited().and_then(|i| i.v()), Some(1));
    assert_eq!(d.closed(), Some(ed::Closed::Zero));
    // Implicit presence: the zero value protoc does not write reads as absent.
    assert_eq!(d.implicit_field(), None);
    assert_eq!(<EdDecoder as MessageDecoder>::FULL_NAME, "fixture.delta.Ed");
}

#[test]
fn group_aware_decoders_survive_hostile_bytes() {
    // Unterminated group, mismatched end tag, deep nesting: no panic, and the
    // fields before the damage stay readable.
    let cases: [&[u8]; 3] = [
        &[0x08, 1, 0x13, 0x18, 1],
        &[0x08, 1, 0x13, 0x1C],
        &[0x08, 1, 0x13],
    ];
    for bytes in cases {
        let d = LegacyDecoder::new(bytes);
        assert_eq!(d.a(), Some(1));
        assert!(d.decode_error().is_some());
        assert!(d.result().is_none());
        assert_eq!(format!("{d:?}"), "LegacyDecoder { a: 1, .. }");
    }
    let mut deep = vec![0x13; 100];
    deep.extend([0x14; 100]);
    let d = LegacyDecoder::new(&deep);
    assert!(d.decode_error().is_some());
    assert_eq!(format!("{d:?}"), "LegacyDecoder { .. }");
    let _ = <Legacy<'_> as MessageWriter<'_>>::FULL_NAME;
}

/// A closed enum (proto2's, editions' `enum_type = CLOSED`) read as protoc's
/// C++ reads it: an occurrence with a number the enum does not name is an
/// unknown field, so the field (or the oneof) keeps what came before it.
/// An open enum's field takes any number.
#[test]
fn closed_enums_read_unnamed_numbers_as_unknown_fields_as_protoc_does() {
    // closed = ONE, closed = 7; open = 7; closed_list = [1, 9, 0];
    // pick_inner { v: 3 }, pick_closed = 9 (unnamed: the oneof stays inner).
    let bytes = [
        0x28, 1, 0x28, 7, // closed
        0x38, 7, // open
        0x40, 1, 0x40, 9, 0x40, 0, // closed_list, expanded
        0x52, 2, 0x08, 3, // pick_inner
        0x48, 9, // pick_closed, unnamed
    ];
    let text = decode_text("fixture.delta.Ed", EDITIONS, &bytes);
    assert_eq!(
        text,
        "closed: CLOSED_ONE\nopen: 7\nclosed_list: CLOSED_ONE\nclosed_list: CLOSED_ZERO\n\
         pick_inner {\n  v: 3\n}\n5: 7\n8: 9\n9: 9\n"
    );
    let d = EdDecoder::new(&bytes);
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.closed(), Some(ed::Closed::One));
    assert!(d.has_closed());
    assert_eq!(d.closed_raw(), Some(7), "`_raw` reads the wire");
    assert_eq!(d.open(), None, "an open enum's field holds the unnamed 7");
    assert_eq!(d.open_raw(), Some(7));
    assert_eq!(
        d.closed_list().collect::<Vec<_>>(),
        [ed::Closed::One, ed::Closed::Zero]
    );
    assert_eq!(d.closed_list_raw().collect::<Vec<_>>(), [1, 9, 0]);
    assert!(matches!(d.which_choice(), Some(ed::Choice::PickInner(i)) if i.v() == Some(3)));
    assert_eq!(d.pick_inner().and_then(|i| i.v()), Some(3));
    assert_eq!(d.pick_closed(), None);
    assert!(d.has_pick_inner() && !d.has_pick_closed());
    // `_raw` reads the wire, where the unnamed 9 is last.
    assert_eq!(d.pick_closed_raw(), Some(9));
    // Only unnamed numbers: absent, as to C++; `_raw` reads the wire.
    let only_unnamed = [0x28, 7];
    assert_eq!(
        decode_text("fixture.delta.Ed", EDITIONS, &only_unnamed),
        "5: 7\n"
    );
    let d = EdDecoder::new(&only_unnamed);
    assert_eq!((d.closed(), d.closed_raw()), (None, Some(7)));
    assert!(!d.has_closed());

    // proto2: the same for a field and for an extension (read by a scan).
    let bytes = [0x88, 0x01, 2, 0x88, 0x01, 5, 0xC8, 0x06, 1, 0xC8, 0x06, 3];
    assert_eq!(
        decode_text("fixture.gamma.Legacy", LEGACY, &bytes),
        "level: LEVEL_HIGH\n[fixture.gamma.ext_level]: LEVEL_LOW\n17: 5\n105: 3\n"
    );
    let d = LegacyDecoder::new(&bytes);
    assert_eq!(d.level(), Some(Level::High));
    assert_eq!(d.level_raw(), Some(5));
    assert_eq!(d.ext_level(), Some(Level::Low));
    assert_eq!(d.ext_level_raw(), Some(3));
}
