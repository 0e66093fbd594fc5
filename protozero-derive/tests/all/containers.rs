//! The container and value types the derives accept besides `Vec` and
//! borrowed slices: arrays, boxed slices, custom collections marked
//! `repeated`, owned and `Cow` strings and bytes, tuple and unit structs, and
//! a renamed runtime crate.

use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};

use protozero::{ProtoRead, ProtoWrite};

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone)]
struct Point(#[proto(tag = 1, sint)] i32, #[proto(tag = 2, sint)] i32);

#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Marker;

/// Write-only shapes.
#[derive(ProtoWrite)]
struct Borrowed<'a> {
    #[proto(tag = 1)]
    points: &'a [Point],
    #[proto(tag = 2, packed)]
    rgb: [u32; 3],
    #[proto(tag = 3, packed, fixed)]
    stamps: Box<[u64]>,
    #[proto(tag = 4, repeated)]
    queue: VecDeque<u32>,
    #[proto(tag = 5, repeated, packed, fixed)]
    set: BTreeSet<i32>,
    #[proto(tag = 6)]
    name: Box<str>,
    #[proto(tag = 7)]
    magic: [u8; 4],
    #[proto(tag = 8)]
    marker: Marker,
}

/// Everything owned, in the collection types that can be decoded into.
#[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
struct Owned<'a> {
    #[proto(tag = 1)]
    points: Vec<Point>,
    #[proto(tag = 2, packed)]
    rgb: Vec<u32>,
    #[proto(tag = 3, packed, fixed)]
    stamps: Vec<u64>,
    #[proto(tag = 4, repeated)]
    queue: VecDeque<u32>,
    #[proto(tag = 5, repeated, packed, fixed)]
    set: BTreeSet<i32>,
    #[proto(tag = 6)]
    name: Cow<'a, str>,
    #[proto(tag = 7)]
    magic: Vec<u8>,
    #[proto(tag = 8)]
    marker: Marker,
    #[proto(tag = 9)]
    owned_name: String,
    #[proto(tag = 10)]
    raw: Cow<'a, [u8]>,
}

#[test]
fn every_container_writes_the_same_bytes() {
    let points = [Point(1, -1), Point(0, 0)];
    let borrowed = Borrowed {
        points: &points,
        rgb: [255, 128, 0],
        stamps: vec![1, u64::MAX].into_boxed_slice(),
        queue: VecDeque::from([3, 2, 1]),
        set: BTreeSet::from([-5, 7]),
        name: "box".into(),
        magic: *b"PZRS",
        marker: Marker,
    };
    let owned = Owned {
        points: points.to_vec(),
        rgb: vec![255, 128, 0],
        stamps: vec![1, u64::MAX],
        queue: VecDeque::from([3, 2, 1]),
        set: BTreeSet::from([-5, 7]),
        name: Cow::Borrowed("box"),
        magic: b"PZRS".to_vec(),
        marker: Marker,
        owned_name: String::new(),
        raw: Cow::Borrowed(&[]),
    };
    let bytes = borrowed.write_to_vec().unwrap();
    assert_eq!(bytes, owned.write_to_vec().unwrap());
    let back = Owned::decode(&bytes).unwrap();
    assert_eq!(back, owned);
    assert!(
        matches!(back.name, Cow::Borrowed(_)),
        "Cow decodes borrowed"
    );
}

#[test]
fn tuple_and_unit_structs() {
    assert_eq!(Point(-1, 1).write_to_vec().unwrap(), [0x08, 1, 0x10, 2]);
    assert_eq!(Point::decode(&[0x08, 1, 0x10, 2]).unwrap(), Point(-1, 1));
    assert_eq!(Marker.write_to_vec().unwrap(), Vec::<u8>::new());
    // A unit struct still skips unknown fields and rejects malformed input.
    assert_eq!(Marker::decode(&[0x08, 1]).unwrap(), Marker);
    assert!(Marker::decode(&[0x08]).is_err());
}

mod renamed {
    use ::protozero as pz;
    use pz::{ProtoRead, ProtoWrite};

    #[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
    #[proto(crate = "pz")]
    struct Renamed {
        #[proto(tag = 1)]
        v: u32,
    }

    #[test]
    fn crate_path_is_configurable() {
        let bytes = Renamed { v: 3 }.write_to_vec().unwrap();
        assert_eq!(Renamed::decode(&bytes).unwrap(), Renamed { v: 3 });
    }
}
