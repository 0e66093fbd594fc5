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
