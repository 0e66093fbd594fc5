//! Writes every fixture construct through the generated writers and reads it
//! back through the generated decoders; also checks wire bytes where the
//! encoding matters (packed, keywords) and that hostile bytes never panic.

use protozero::{HeapWriter, MessageDecoder, MessageWriter, ProtoEnum};
use protozero_codegen_fixtures::fixture::alpha::{self, *};
use protozero_codegen_fixtures::fixture::beta::{self, Color, Other, OtherDecoder};

fn encode(f: impl FnOnce(&mut HeapWriter)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w);
    w.finish().unwrap()
}

#[test]
fn scalars_round_trip() {
    let bytes = encode(|w| {
        let mut s = Scalars::from_message(w.root());
        s.set_f_double(-1.5)
            .set_f_float(2.25)
            .set_f_int32(-7)
            .set_f_int64(i64::MIN)
            .set_f_uint32(u32::MAX)
            .set_f_uint64(u64::MAX)
            .set_f_sint32(-300)
            .set_f_sint64(i64::MIN + 1)
            .set_f_fixed32(0xDEAD_BEEF)
            .set_f_fixed64(0x0123_4567_89AB_CDEF)
            .set_f_sfixed32(-2)
            .set_f_sfixed64(-3)
            .set_f_bool(true)
            .set_f_string("héllo")
            .set_f_bytes(&[0, 255, 1])
            .set_far_away(99);
    });
    let d = ScalarsDecoder::new(&bytes);
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.f_double(), Some(-1.5));
    assert_eq!(d.f_float(), Some(2.25));
    assert_eq!(d.f_int32(), Some(-7));
    assert_eq!(d.f_int64(), Some(i64::MIN));
    assert_eq!(d.f_uint32(), Some(u32::MAX));
    assert_eq!(d.f_uint64(), Some(u64::MAX));
    assert_eq!(d.f_sint32(), Some(-300));
    assert_eq!(d.f_sint64(), Some(i64::MIN + 1));
    assert_eq!(d.f_fixed32(), Some(0xDEAD_BEEF));
    assert_eq!(d.f_fixed64(), Some(0x0123_4567_89AB_CDEF));
    assert_eq!(d.f_sfixed32(), Some(-2));
    assert_eq!(d.f_sfixed64(), Some(-3));
    assert_eq!(d.f_bool(), Some(true));
    assert_eq!(d.f_string(), Some("héllo"));
    assert_eq!(d.f_bytes(), Some(&[0, 255, 1][..]));
    // Field 1000 is beyond the dense table and is found by a scan.
    assert_eq!(d.far_away(), Some(99));
    assert!(d.has_far_away());
    // Negative int32 is sign-extended to 10 bytes, as protobuf requires.
    let neg = encode(|w| {
        Scalars::from_message(w.root()).set_f_int32(-1);
    });
    assert_eq!(neg.len(), 11);
}

#[test]
fn absent_and_malformed_fields_read_as_none() {
    let empty = ScalarsDecoder::new(&[]);
    assert_eq!(empty.f_uint64(), None);
    assert!(!empty.has_f_uint64());
    // f_uint64 (6) sent as fixed32: wrong wire type reads as absent (as
    // protobuf's parsers keep such a field among the unknown ones).
    let wrong = [0x35, 1, 0, 0, 0];
    let d = ScalarsDecoder::new(&wrong);
    assert!(!d.has_f_uint64());
    assert_eq!(d.f_uint64(), None);
    // The last occurrence decides: a good value after a bad one is read.
    let then_good = [0x35, 1, 0, 0, 0, 0x30, 7];
    assert_eq!(ScalarsDecoder::new(&then_good).f_uint64(), Some(7));
    let then_bad = [0x30, 7, 0x35, 1, 0, 0, 0];
    assert_eq!(ScalarsDecoder::new(&then_bad).f_uint64(), None);
    // Invalid UTF-8 in a string: accessor says None, raw bytes stay readable.
    let bad = [0x72, 1, 0xFF];
    let d = ScalarsDecoder::new(&bad);
    assert_eq!(d.f_string(), None);
    assert_eq!(d.f_string_bytes(), Some(&[0xFF][..]));
}

#[test]
fn repeated_fields_keep_order() {
    let bytes = encode(|w| {
        let mut r = Repeated::from_message(w.root());
        r.add_r_uint64(1).add_r_uint64(2).add_r_uint64(u64::MAX);
        r.add_r_sint32(-1).add_r_sint32(5);
        r.add_r_fixed64(7);
        r.add_r_string("a").add_r_string("b");
        r.add_r_bytes(b"xy");
        r.add_r_level(Level::High).add_r_level_raw(42);
        r.add_r_scalars().set_f_uint32(10);
        r.add_r_scalars().set_f_uint32(20);
        r.add_r_double(0.5);
    });
    let d = RepeatedDecoder::new(&bytes);
    assert_eq!(d.r_uint64().collect::<Vec<_>>(), [1, 2, u64::MAX]);
    assert_eq!(d.r_sint32().collect::<Vec<_>>(), [-1, 5]);
    assert_eq!(d.r_fixed64().collect::<Vec<_>>(), [7]);
    assert_eq!(d.r_string().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(d.r_bytes().collect::<Vec<_>>(), [b"xy"]);
    // Unknown numbers are skipped by the typed iterator, kept by the raw one.
    assert_eq!(d.r_level().collect::<Vec<_>>(), [Level::High]);
    assert_eq!(d.r_level_raw().collect::<Vec<_>>(), [2, 42]);
    let nested: Vec<_> = d.r_scalars().map(|s| s.f_uint32()).collect();
    assert_eq!(nested, [Some(10), Some(20)]);
    assert_eq!(d.r_double().collect::<Vec<_>>(), [0.5]);
    assert!(d.has_r_string());
    assert_eq!(
        format!("{d:?}"),
        "RepeatedDecoder { r_uint64: [1, 2, 18446744073709551615], r_sint32: [-1, 5], \
         r_fixed64: [7], r_string: [\"a\", \"b\"], r_bytes: [[120, 121]], \
         r_level: [High, 42], \
         r_scalars: [ScalarsDecoder { f_uint32: 10 }, ScalarsDecoder { f_uint32: 20 }], \
         r_double: [0.5] }"
    );
}

#[test]
fn packed_fields_round_trip_and_are_packed() {
    let bytes = encode(|w| {
        let mut p = Packed::from_message(w.root());
        p.set_p_int32([-1, 0, 1])
            .set_p_int64([i64::MIN, 5])
            .set_p_uint32([1, 300])
            .set_p_uint64([u64::MAX])
            .set_p_sint32([-2, 2])
            .set_p_sint64([-3])
            .set_p_bool([true, false])
            .set_p_fixed32(&[1, 2])
            .set_p_fixed64(&[3])
            .set_p_sfixed32(&[-4])
            .set_p_sfixed64(&[-5])
            .set_p_float(&[1.5])
            .set_p_double(&[2.5, -0.0])
            .set_p_level([Level::Low, Level::Negative])
            .set_p_level_raw([77]);
    });
    let d = PackedDecoder::new(&bytes);
    assert_eq!(d.decode_error(), None);
    assert_eq!(d.p_int32().collect::<Vec<_>>(), [-1, 0, 1]);
    assert_eq!(d.p_int64().collect::<Vec<_>>(), [i64::MIN, 5]);
    assert_eq!(d.p_uint32().collect::<Vec<_>>(), [1, 300]);
    assert_eq!(d.p_uint64().collect::<Vec<_>>(), [u64::MAX]);
    assert_eq!(d.p_sint32().collect::<Vec<_>>(), [-2, 2]);
    assert_eq!(d.p_sint64().collect::<Vec<_>>(), [-3]);
    assert_eq!(d.p_bool().collect::<Vec<_>>(), [true, false]);
    assert_eq!(d.p_fixed32().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(d.p_fixed64().collect::<Vec<_>>(), [3]);
    assert_eq!(d.p_sfixed32().collect::<Vec<_>>(), [-4]);
    assert_eq!(d.p_sfixed64().collect::<Vec<_>>(), [-5]);
    assert_eq!(d.p_float().collect::<Vec<_>>(), [1.5]);
    assert_eq!(d.p_double().collect::<Vec<_>>(), [2.5, -0.0]);
    assert_eq!(
        d.p_level().collect::<Vec<_>>(),
        [Level::Low, Level::Negative]
    );
    assert_eq!(
        d.p_level_raw().collect::<Vec<_>>(),
        [Level::Low as i32, Level::Negative as i32, 77]
    );
    // One length-delimited field per packed setter call: tag 0x0A for field 1.
    let first = [
        0x0A, 12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 1,
    ];
    assert_eq!(bytes[..first.len()], first);
}

#[test]
fn packed_decoders_accept_unpacked_input() {
    // p_uint32 (3) sent unpacked twice, then packed.
    let bytes = [0x18, 4, 0x18, 5, 0x1A, 2, 6, 7];
    let d = PackedDecoder::new(&bytes);
    assert_eq!(d.p_uint32().collect::<Vec<_>>(), [4, 5, 6, 7]);
}

#[test]
fn keywords_nested_types_and_enums() {
    let bytes = encode(|w| {
        let mut k = Keywords::from_message(w.root());
        k.set_type(keywords::Type::Self_)
            .set_self(3)
            .set_fn("f")
            .set_crate(true)
            .set_error(-6)
            .set_new(7);
        let mut m = k.begin_match();
        m.set_fn("inner fn");
        m.begin_inner().set_type(keywords::Type::Type3d);
    });
    let d = KeywordsDecoder::new(&bytes);
    assert_eq!(d.r#type(), Some(keywords::Type::Self_));
    assert_eq!(d.type_raw(), Some(1));
    assert_eq!(d.self_(), Some(3));
    assert_eq!(d.r#fn(), Some("f"));
    assert_eq!(d.crate_(), Some(true));
    assert_eq!(d.error(), Some(-6));
    assert_eq!(d.new_(), Some(7));
    let m = d.r#match().unwrap();
    assert_eq!(m.r#fn(), Some("inner fn"));
    let inner = m.inner().unwrap();
    assert_eq!(inner.r#type(), Some(keywords::Type::Type3d));
    assert_eq!(Keywords::FIELD_SELF, 3);
    assert_eq!(keywords::r#match::Inner::FIELD_TYPE, 1);
}

#[test]
fn enum_helpers() {
    assert_eq!(Level::from_i32(-3), Some(Level::Negative));
    assert_eq!(Level::from_i32(9), None);
    assert_eq!(Level::Negative.as_i32(), -3);
    assert_eq!(Level::High.as_str_name(), "LEVEL_HIGH");
    assert_eq!(Level::from_str_name("LEVEL_LOW"), Some(Level::Low));
    assert_eq!(Level::default(), Level::Unknown);
    assert_eq!(Level::try_from(5), Err(5));
    assert_eq!(i32::from(Level::High), 2);
    assert_eq!(<Level as ProtoEnum>::from_i32(1), Some(Level::Low));
    // Aliases share the first variant.
    assert_eq!(Aliased::ALIASED_SAME, Aliased::First);
    assert_eq!(Aliased::from_str_name("ALIASED_SAME"), Some(Aliased::First));
    assert_eq!(Aliased::from_i32(1), Some(Aliased::First));
    assert_eq!(Color::Green.as_i32(), 2);
}

#[test]
fn oneof_last_member_wins() {
    let bytes = encode(|w| {
        let mut c = Choice::from_message(w.root());
        c.set_before(1)
            .set_int_value(5)
            .set_text_value("last")
            .set_flag(true);
    });
    let d = ChoiceDecoder::new(&bytes);
    assert!(matches!(
        d.which_value(),
        Some(choice::Value::TextValue("last"))
    ));
    assert!(matches!(d.which_small(), Some(choice::Small::Flag(true))));
    // A later member clears the earlier ones, as in protobuf's parsers.
    assert_eq!(d.int_value(), None);
    assert!(!d.has_int_value());
    assert_eq!(d.text_value(), Some("last"));

    let bytes = encode(|w| {
        let mut c = Choice::from_message(w.root());
        c.set_level_value(Level::High);
        c.begin_message_value().set_f_int32(-9);
        c.set_delta(-4);
    });
    let d = ChoiceDecoder::new(&bytes);
    match d.which_value() {
        Some(choice::Value::MessageValue(m)) => assert_eq!(m.f_int32(), Some(-9)),
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(d.which_small(), Some(choice::Small::Delta(-4))));
    let only_enum = encode(|w| {
        Choice::from_message(w.root()).set_level_value_raw(12);
    });
    // A proto2 enum is closed: a member with a number the enum does not name
    // is an unknown field to protoc's C++, so it sets no member; `_raw`
    // reads the wire.
    let only_enum = ChoiceDecoder::new(&only_enum);
    assert!(only_enum.which_value().is_none());
    assert_eq!(only_enum.level_value(), None);
    assert_eq!(only_enum.level_value_raw(), Some(12));
    assert!(!only_enum.has_level_value());
    let known_then_unknown = encode(|w| {
        let mut c = Choice::from_message(w.root());
        c.begin_message_value().set_f_int32(5);
        c.set_level_value(Level::High).set_level_value_raw(12);
    });
    // The unnamed number leaves the oneof as it was: `High`.
    let d = ChoiceDecoder::new(&known_then_unknown);
    assert!(matches!(
        d.which_value(),
        Some(choice::Value::LevelValue(Level::High))
    ));
    assert_eq!(d.level_value(), Some(Level::High));
    assert_eq!(d.level_value_raw(), Some(12));
    assert_eq!(d.message_value().map(|m| m.f_int32()), None);
    let message_then_unknown = encode(|w| {
        let mut c = Choice::from_message(w.root());
        c.begin_message_value().set_f_int32(5);
        c.set_level_value_raw(12);
    });
    // ... and here the message member.
    let d = ChoiceDecoder::new(&message_then_unknown);
    assert!(matches!(
        d.which_value(),
        Some(choice::Value::MessageValue(m)) if m.f_int32() == Some(5)
    ));
    assert_eq!(d.message_value().and_then(|m| m.f_int32()), Some(5));
    assert_eq!(d.level_value(), None);
    assert!(d.has_message_value() && !d.has_level_value());
    assert!(ChoiceDecoder::new(&[]).which_value().is_none());
}

#[test]
fn cross_package_types_and_proto3() {
    let bytes = encode(|w| {
        let mut c = CrossPackage::from_message(w.root());
        c.begin_other()
            .set_label("o")
            .set_numbers([1, -2])
            .add_loose(3)
            .add_loose(4)
            .set_maybe(0)
            .set_color(Color::Red)
            .set_colors([Color::Green, Color::Red]);
        c.set_color(Color::Green);
        c.add_others().set_label("x");
        c.add_others().set_label("y");
        let mut entry = c.add_counts();
        entry.set_key("k").set_value(3);
    });
    let d = CrossPackageDecoder::new(&bytes);
    let o: OtherDecoder<'_> = d.other().unwrap();
    assert_eq!(o.label(), Some("o"));
    assert_eq!(o.numbers().collect::<Vec<_>>(), [1, -2]);
    assert_eq!(o.loose().collect::<Vec<_>>(), [3, 4]);
    // proto3 `optional`: presence is visible even for the zero value.
    assert_eq!(o.maybe(), Some(0));
    assert_eq!(o.color(), Some(Color::Red));
    assert_eq!(o.colors().collect::<Vec<_>>(), [Color::Green, Color::Red]);
    assert_eq!(d.color(), Some(beta::Color::Green));
    let labels: Vec<_> = d.others().map(|o| o.label()).collect();
    assert_eq!(labels, [Some("x"), Some("y")]);
    let entry = d.counts().next().unwrap();
    assert_eq!((entry.key(), entry.value()), (Some("k"), Some(3)));
}

#[test]
fn proto3_repeated_numbers_are_packed_by_default() {
    let bytes = encode(|w| {
        Other::from_message(w.root()).set_numbers([1, 2]);
    });
    assert_eq!(bytes, [0x12, 2, 1, 2]);
}

#[test]
fn raw_message_setter_embeds_encoded_bytes() {
    let inner = encode(|w| {
        Scalars::from_message(w.root()).set_f_uint32(8);
    });
    let bytes = encode(|w| {
        Choice::from_message(w.root()).set_message_value_raw(&inner);
    });
    let d = ChoiceDecoder::new(&bytes);
    assert_eq!(d.message_value().and_then(|m| m.f_uint32()), Some(8));
    assert_eq!(d.message_value_bytes(), Some(&inner[..]));
}

#[test]
fn traits_name_the_messages() {
    assert_eq!(
        <Scalars<'_> as MessageWriter<'_>>::FULL_NAME,
        "fixture.alpha.Scalars"
    );
    assert_eq!(
        <OtherDecoder<'_> as MessageDecoder<'_>>::FULL_NAME,
        "fixture.beta.Other"
    );
    let d = <EmptyDecoder<'_> as MessageDecoder<'_>>::decode(&[0x08]);
    assert!(d.decode_error().is_some());
}

#[test]
fn service_table_lists_methods_in_order() {
    let s = alpha::KITCHEN;
    assert_eq!(s.full_name, "fixture.alpha.Kitchen");
    let names: Vec<_> = s.methods.iter().map(|m| (m.id, m.name)).collect();
    assert_eq!(names, [(1, "Cook"), (2, "Watch"), (3, "Upload")]);
    let watch = s.method("Watch").unwrap();
    assert_eq!(watch.output_type, "fixture.beta.Other");
    assert!(watch.server_streaming && !watch.client_streaming);
    let upload = s.method_by_id(3).unwrap();
    assert!(upload.client_streaming && !upload.server_streaming);
    assert_eq!(upload.input_type, "fixture.alpha.Packed");
}

#[test]
fn descriptor_set_lists_both_files() {
    let set = protozero_codegen_fixtures::FILE_DESCRIPTOR_SET;
    let names: Vec<&str> = protozero::Decoder::new(set)
        .map(|f| f.unwrap())
        .filter(|f| f.id == 1)
        .map(|f| {
            let file = f.as_message().unwrap();
            file.map(|g| g.unwrap())
                .find(|g| g.id == 1)
                .unwrap()
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        names,
        ["fixture/beta/other.proto", "fixture/alpha/kitchen.proto"]
    );
}

/// Deterministic xorshift so the hostile-input test needs no extra crates.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn touch_everything(buf: &[u8]) -> usize {
    let mut n = 0;
    let s = ScalarsDecoder::new(buf);
    n += usize::from(s.f_string().is_some()) + usize::from(s.far_away().is_some());
    let r = RepeatedDecoder::new(buf);
    n += r.r_uint64().count() + r.r_string().count() + r.r_level().count();
    n += r
        .r_scalars()
        .map(|s| usize::from(s.f_double().is_some()))
        .sum::<usize>();
    let p = PackedDecoder::new(buf);
    n += p.p_int32().count() + p.p_fixed64().count() + p.p_double().count() + p.p_level().count();
    let c = ChoiceDecoder::new(buf);
    n += usize::from(c.which_value().is_some()) + usize::from(c.which_small().is_some());
    let x = CrossPackageDecoder::new(buf);
    n += x
        .others()
        .map(|o| o.numbers().count() + o.colors().count())
        .sum::<usize>();
    n
}

#[test]
fn hostile_bytes_never_panic() {
    let valid = encode(|w| {
        let mut r = Repeated::from_message(w.root());
        r.add_r_uint64(300).add_r_string("abc");
        r.add_r_scalars().set_f_double(1.0).set_f_string("nested");
        let mut p = Packed::from_message(r.into_message());
        p.set_p_int32([1, -1]).set_p_double(&[1.0]);
    });
    // Every truncation of valid input.
    for len in 0..=valid.len() {
        touch_everything(&valid[..len]);
    }
    // Random bytes and random single-byte corruptions.
    let mut state = 0x9E37_79B9_7F4A_7C15;
    for round in 0..2000 {
        let len = (next(&mut state) % 64) as usize;
        let buf: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
        touch_everything(&buf);
        let mut corrupt = valid.clone();
        let at = round % corrupt.len();
        corrupt[at] = next(&mut state) as u8;
        touch_everything(&corrupt);
    }
}
