//! Round trips through the derives: every field shape written with
//! `ProtoWrite` reads back equal with `ProtoRead`, and the bytes are the
//! expected protobuf encoding.

use protozero::{ProtoRead, ProtoWrite};

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
enum Kind {
    Unset = 0,
    Slice = 1,
    Counter = 4,
    Negative = -2,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Inner<'a> {
    #[proto(tag = 1)]
    name: &'a str,
    #[proto(tag = 2)]
    value: Option<i64>,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
enum Choice<'a> {
    #[proto(tag = 20)]
    Text(&'a str),
    #[proto(tag = 21, sint)]
    Delta(i64),
    #[proto(tag = 22)]
    Nested(Inner<'a>),
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Outer<'a> {
    #[proto(tag = 1)]
    id: u64,
    #[proto(tag = 2, sint)]
    offset: i32,
    #[proto(tag = 3, fixed)]
    checksum: u32,
    #[proto(tag = 4)]
    ratio: f64,
    #[proto(tag = 5)]
    enabled: bool,
    #[proto(tag = 6)]
    label: &'a str,
    #[proto(tag = 7)]
    blob: &'a [u8],
    #[proto(tag = 8)]
    kind: Kind,
    #[proto(tag = 9)]
    inner: Option<Inner<'a>>,
    #[proto(tag = 10)]
    children: Vec<Inner<'a>>,
    #[proto(tag = 11, packed)]
    samples: Vec<u32>,
    #[proto(tag = 12)]
    names: Vec<&'a str>,
    #[proto(tag = 13, packed)]
    kinds: Vec<Kind>,
    #[proto(oneof)]
    choice: Option<Choice<'a>>,
    #[proto(skip)]
    cached: u32,
}

fn sample() -> Outer<'static> {
    Outer {
        id: 42,
        offset: -7,
        checksum: 0xDEAD_BEEF,
        ratio: 0.5,
        enabled: true,
        label: "hello",
        blob: &[1, 2, 3],
        kind: Kind::Counter,
        inner: Some(Inner {
            name: "in",
            value: Some(-1),
        }),
        children: vec![
            Inner {
                name: "a",
                value: None,
            },
            Inner {
                name: "b",
                value: Some(0),
            },
        ],
        samples: vec![1, 300, 70000],
        names: vec!["x", "", "z"],
        kinds: vec![Kind::Slice, Kind::Negative],
        choice: Some(Choice::Delta(-5)),
        cached: 0,
    }
}

#[test]
fn round_trip_all_shapes() {
    let v = sample();
    let bytes = v.write_to_vec().unwrap();
    let back = Outer::decode(&bytes).unwrap();
    assert_eq!(back, v);
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Small<'a> {
    #[proto(tag = 1)]
    a: u32,
    #[proto(tag = 2)]
    s: &'a str,
    #[proto(tag = 3, sint)]
    z: i32,
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Wrap<'a> {
    #[proto(tag = 1)]
    small: Small<'a>,
}

#[test]
fn known_bytes() {
    let small = Small {
        a: 150,
        s: "hi",
        z: -1,
    };
    let expected = [0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x18, 0x01];
    assert_eq!(small.write_to_vec().unwrap(), expected);
    let wrapped = Wrap { small }.write_to_vec().unwrap();
    assert_eq!(wrapped[..2], [0x0A, 9]);
    assert_eq!(wrapped[2..], expected);
}

#[test]
fn defaults_are_omitted_but_options_and_messages_are_not() {
    let empty = Small { a: 0, s: "", z: 0 };
    assert_eq!(empty.write_to_vec().unwrap(), Vec::<u8>::new());
    // A message-typed field is always present, even when empty.
    assert_eq!(Wrap { small: empty }.write_to_vec().unwrap(), [0x0A, 0]);
    let inner = Inner {
        name: "",
        value: Some(0),
    };
    assert_eq!(inner.write_to_vec().unwrap(), [0x10, 0]);
}

#[test]
fn decoded_strings_borrow_from_input() {
    let bytes = sample().write_to_vec().unwrap();
    let back = Outer::decode(&bytes).unwrap();
    let range = bytes.as_ptr_range();
    assert!(range.contains(&back.label.as_ptr()));
    assert!(range.contains(&back.blob.as_ptr()));
    assert!(range.contains(&back.children[1].name.as_ptr()));
}

#[test]
fn last_one_wins_repeated_appends_messages_merge() {
    let first = sample();
    let second = Outer {
        id: 7,
        label: "",
        inner: Some(Inner {
            name: "",
            value: Some(9),
        }),
        children: vec![Inner {
            name: "c",
            value: None,
        }],
        samples: vec![5],
        choice: Some(Choice::Text("t")),
        ..empty_outer()
    };
    let mut bytes = first.write_to_vec().unwrap();
    bytes.extend(second.write_to_vec().unwrap());
    let merged = Outer::decode(&bytes).unwrap();
    assert_eq!(merged.id, 7); // last one wins
    assert_eq!(merged.label, "hello"); // absent in the second piece
    // singular message: merged field by field
    assert_eq!(
        merged.inner,
        Some(Inner {
            name: "in",
            value: Some(9)
        })
    );
    assert_eq!(merged.children.len(), 3); // repeated: appended
    assert_eq!(merged.samples, [1, 300, 70000, 5]);
    assert_eq!(merged.choice, Some(Choice::Text("t"))); // another member replaces

    // merge_from over a second buffer does the same.
    let (b1, b2) = (
        first.write_to_vec().unwrap(),
        second.write_to_vec().unwrap(),
    );
    let mut m = Outer::decode(&b1).unwrap();
    m.merge_from(&b2).unwrap();
    assert_eq!(m, merged);
}

fn empty_outer() -> Outer<'static> {
    Outer::empty()
}

#[test]
fn oneof_same_message_member_merges() {
    let a = Outer {
        choice: Some(Choice::Nested(Inner {
            name: "x",
            value: None,
        })),
        ..empty_outer()
    };
    let b = Outer {
        choice: Some(Choice::Nested(Inner {
            name: "",
            value: Some(5),
        })),
        ..empty_outer()
    };
    let mut bytes = a.write_to_vec().unwrap();
    bytes.extend(b.write_to_vec().unwrap());
    let got = Outer::decode(&bytes).unwrap();
    assert_eq!(
        got.choice,
        Some(Choice::Nested(Inner {
            name: "x",
            value: Some(5)
        }))
    );
}

#[test]
fn oneof_default_member_is_still_written() {
    let v = Outer {
        choice: Some(Choice::Delta(0)),
        ..empty_outer()
    };
    let bytes = v.write_to_vec().unwrap();
    assert_eq!(bytes, [0xA8, 0x01, 0x00]);
    assert_eq!(
        Outer::decode(&bytes).unwrap().choice,
        Some(Choice::Delta(0))
    );
}

#[test]
fn unknown_fields_are_skipped() {
    let mut w = protozero::HeapWriter::new();
    {
        let mut root = w.root();
        root.append_uint32(500, 1);
        sample().write_fields(&mut root);
        root.append_string(501, "ignored");
        root.append_fixed64(502, 3);
        root.append_fixed32(503, 4);
        let mut unknown = root.begin_nested(504);
        unknown.append_string(1, "nested unknown");
    }
    let bytes = w.finish().unwrap();
    assert_eq!(Outer::decode(&bytes).unwrap(), sample());
}

#[test]
fn repeated_numbers_accept_packed_and_unpacked() {
    // samples (11) declared packed but sent unpacked, kinds (13) unpacked.
    let bytes = [0x58, 1, 0x58, 2, 0x68, 4, 0x6A, 2, 1, 4];
    let got = Outer::decode(&bytes).unwrap();
    assert_eq!(got.samples, [1, 2]);
    assert_eq!(got.kinds, [Kind::Counter, Kind::Slice, Kind::Counter]);
}

#[test]
fn unknown_enum_numbers_are_skipped() {
    // kind = Slice, then kind = 99 (unknown): keeps Slice.
    let got = Outer::decode(&[0x40, 1, 0x40, 99]).unwrap();
    assert_eq!(got.kind, Kind::Slice);
    // packed kinds [1, 99, -2]: 99 dropped; -2 is a 10-byte varint.
    let mut bytes = vec![0x6A, 12, 1, 99];
    bytes.extend([0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
    let got = Outer::decode(&bytes).unwrap();
    assert_eq!(got.kinds, [Kind::Slice, Kind::Negative]);
}

#[test]
fn malformed_input_is_a_typed_error_with_a_path() {
    use protozero::{DecodeError, ReadErrorKind};
    // label (6) claims 5 bytes, 1 remains.
    let e = Outer::decode(&[0x32, 5, b'a']).unwrap_err();
    assert!(matches!(
        e.decode_error(),
        Some(DecodeError::LengthOutOfBounds { id: 6, .. })
    ));
    assert_eq!(e.path().count(), 0);
    // inner (9) . name (1) is not UTF-8.
    let e = Outer::decode(&[0x4A, 3, 0x0A, 1, 0xFF]).unwrap_err();
    assert_eq!(
        e.kind(),
        ReadErrorKind::Decode(DecodeError::InvalidUtf8 { id: 1 })
    );
    let path: Vec<_> = e.path().map(|s| (s.name, s.id)).collect();
    assert_eq!(path, [("inner", 9), ("name", 1)]);
    assert_eq!(
        e.to_string(),
        "in `inner#9.name#1`: field 1 is not valid UTF-8"
    );
    // id (1) sent as fixed32.
    let e = Outer::decode(&[0x0D, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(
        e.decode_error(),
        Some(DecodeError::WrongWireType { id: 1, .. })
    ));
    assert_eq!(e.path().next().map(|s| s.name), Some("id"));
    // truncated packed varint in samples (11).
    let e = Outer::decode(&[0x5A, 1, 0x80]).unwrap_err();
    assert_eq!(e.decode_error(), Some(DecodeError::TruncatedVarint));
    // a group (wire type 3) is rejected, not skipped.
    assert!(Outer::decode(&[0x0B, 0x0C]).is_err());
    // a oneof member with the wrong wire type, reported under the variant.
    // Delta (21) is a sint64 varint; send it length-delimited.
    let e = Outer::decode(&[0xAA, 0x01, 0]).unwrap_err();
    assert!(matches!(
        e.decode_error(),
        Some(DecodeError::WrongWireType { id: 21, .. })
    ));
    let path: Vec<_> = e.path().map(|s| (s.name, s.id)).collect();
    assert_eq!(path, [("Delta", 21)]);
}

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Node {
    #[proto(tag = 1)]
    child: Option<Box<Node>>,
    #[proto(tag = 2)]
    level: u32,
}

fn chain(levels: u32) -> Node {
    let mut node = Node {
        child: None,
        level: levels,
    };
    for level in (0..levels).rev() {
        node = Node {
            child: Some(Box::new(node)),
            level,
        };
    }
    node
}

#[test]
fn recursion_is_bounded() {
    use protozero::RECURSION_LIMIT;
    use protozero::ReadErrorKind;
    let ok = chain(RECURSION_LIMIT).write_to_vec().unwrap();
    assert_eq!(Node::decode(&ok).unwrap(), chain(RECURSION_LIMIT));
    let deep = chain(RECURSION_LIMIT + 1).write_to_vec().unwrap();
    let e = Node::decode(&deep).unwrap_err();
    assert_eq!(
        e.kind(),
        ReadErrorKind::RecursionLimit {
            limit: RECURSION_LIMIT
        }
    );
    assert!(e.path_truncated());
}
