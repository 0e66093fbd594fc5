//! The generated decoders' strict paths and their fast pass, on the fixture
//! schema: `try_new` and `try_read` refuse a declared field of another wire
//! type and a string that is not UTF-8 where `new` and `read` read on;
//! `try_x` tells an invalid string from an absent one; `x_all` yields every
//! occurrence of a singular message field; and the pass's fast path (whole
//! tags matched first) leaves the slots as the generic path would, also
//! when an occurrence of another wire type follows or precedes a good one.

use protozero::{DecodeError, HeapWriter, Message, TypedDecoder};
use protozero_codegen_fixtures::fixture::alpha::*;

fn encode(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w.root());
    w.finish().unwrap()
}

#[test]
fn the_fast_path_reads_as_the_generic_path() {
    let bytes = encode(|m| {
        m.append_double(1, -1.5);
        m.append_float(2, 2.5);
        m.append_int32(3, -3);
        m.append_int64(4, -4);
        m.append_uint32(5, 5);
        m.append_uint64(6, u64::MAX);
        m.append_sint32(7, -7);
        m.append_sint64(8, -8);
        m.append_fixed32(9, 9);
        m.append_fixed64(10, 10);
        m.append_sfixed32(11, -11);
        m.append_sfixed64(12, -12);
        m.append_bool(13, false);
        m.append_string(14, "fourteen");
        m.append_bytes(15, &[15]);
        m.append_uint64(1000, 1000);
    });
    let d = ScalarsDecoder::new(&bytes);
    let t = TypedDecoder::<16>::new(&bytes);
    let field = |id| t.get(id).unwrap();
    assert_eq!(d.f_double(), field(1).as_f64().ok());
    assert_eq!(d.f_float(), field(2).as_f32().ok());
    assert_eq!(d.f_int32(), field(3).as_i32().ok());
    assert_eq!(d.f_int64(), field(4).as_i64().ok());
    assert_eq!(d.f_uint32(), field(5).as_u32().ok());
    assert_eq!(d.f_uint64(), Some(u64::MAX));
    assert_eq!(d.f_sint32(), Some(-7));
    assert_eq!(d.f_sint64(), Some(-8));
    assert_eq!(d.f_fixed32(), Some(9));
    assert_eq!(d.f_fixed64(), Some(10));
    assert_eq!(d.f_sfixed32(), Some(-11));
    assert_eq!(d.f_sfixed64(), Some(-12));
    assert_eq!(d.f_bool(), Some(false));
    assert_eq!(d.f_string(), Some("fourteen"));
    assert_eq!(d.f_bytes(), Some(&[15][..]));
    assert_eq!(d.far_away(), Some(1000));
    assert!(ScalarsDecoder::try_new(&bytes).is_ok());

    // Another wire type after a good occurrence: the field reads as absent
    // (the last occurrence, unreadable), before one: the good one counts.
    let after = encode(|m| {
        m.append_uint64(6, 5);
        m.append_fixed64(6, 6);
    });
    assert_eq!(ScalarsDecoder::new(&after).f_uint64(), None);
    let before = encode(|m| {
        m.append_fixed64(6, 6);
        m.append_uint64(6, 5);
    });
    assert_eq!(ScalarsDecoder::new(&before).f_uint64(), Some(5));
    let wrong = DecodeError::WrongWireType {
        id: 6,
        expected: 0,
        found: 1,
    };
    for bytes in [&after, &before] {
        assert_eq!(ScalarsDecoder::try_new(bytes).err(), Some(wrong));
        let visited: Vec<_> = ScalarsField::try_read(bytes).collect();
        assert!(visited.iter().any(|f| matches!(f, Err(e) if *e == wrong)));
    }
}

#[test]
fn strings_that_are_not_utf8_are_errors_on_the_strict_paths() {
    let bytes = encode(|m| {
        m.append_uint32(1, 1);
        m.append_bytes(3, &[0xc3, 0x28]);
    });
    let bad = DecodeError::InvalidUtf8 { id: 3 };
    let d = ChoiceDecoder::new(&bytes);
    assert_eq!(d.text_value(), None);
    assert_eq!(d.try_text_value(), Err(bad));
    assert_eq!(d.before(), Some(1));
    assert_eq!(ChoiceDecoder::try_new(&bytes).err(), Some(bad));
    let visited: Vec<_> = ChoiceField::try_read(&bytes).collect();
    assert!(matches!(
        visited.as_slice(),
        [Ok(ChoiceField::Before(1)), Err(e)] if *e == bad
    ));

    let repeated = encode(|m| {
        m.append_string(4, "fine");
        m.append_bytes(4, &[0xff]);
    });
    assert_eq!(RepeatedDecoder::new(&repeated).r_string().count(), 1);
    assert_eq!(
        RepeatedDecoder::try_new(&repeated).err(),
        Some(DecodeError::InvalidUtf8 { id: 4 })
    );

    // A oneof member's last occurrence wins on the fast path too.
    let oneof = encode(|m| {
        m.append_string(3, "text");
        m.append_uint64(2, 7);
    });
    let d = ChoiceDecoder::try_new(&oneof).unwrap();
    assert!(matches!(d.which_value(), Some(choice::Value::IntValue(7))));
    assert_eq!(d.try_text_value(), Ok(None));
}

#[test]
fn every_occurrence_of_a_singular_message_and_its_strict_read() {
    let bytes = encode(|m| {
        m.begin_nested(1).append_string(1, "first");
        m.begin_nested(1).append_string(1, "second");
    });
    let d = CrossPackageDecoder::new(&bytes);
    assert_eq!(d.other().and_then(|o| o.label()), Some("second"));
    let labels: Vec<_> = d.other_all().filter_map(|o| o.label()).collect();
    assert_eq!(labels, ["first", "second"]);
    assert!(d.try_other().unwrap().is_some());

    let nested_bad = encode(|m| {
        m.begin_nested(1).append_bytes(1, &[0xff]);
    });
    let d = CrossPackageDecoder::try_new(&nested_bad).expect("its own fields are fine");
    assert_eq!(
        d.try_other().err(),
        Some(DecodeError::InvalidUtf8 { id: 1 })
    );
    assert!(CrossPackageDecoder::new(&[]).try_other().unwrap().is_none());
}

#[test]
fn packed_and_unpacked_runs_pass_the_strict_read() {
    let bytes = encode(|m| {
        m.append_int32(1, -1);
        m.append_bytes(1, &[2, 3]);
    });
    let d = PackedDecoder::try_new(&bytes).unwrap();
    assert_eq!(d.p_int32().collect::<Vec<_>>(), [-1, 2, 3]);
    let wrong = encode(|m| m.append_fixed32(1, 1));
    assert!(matches!(
        PackedDecoder::try_new(&wrong),
        Err(DecodeError::WrongWireType { id: 1, .. })
    ));
}
