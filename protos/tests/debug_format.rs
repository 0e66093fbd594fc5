//! The `Debug` output of generated decoders: the fields present, by their
//! `.proto` names in field-number order, nested messages through their own
//! decoders; and that hostile bytes neither panic nor recurse without bound.

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    DebugAnnotation, DebugAnnotationDecoder, TracePacket, TracePacketDecoder, track_event,
};

/// A slice-begin packet: timestamp, sequence id, and a track event with a
/// type, a track, categories, a name and three debug annotations.
fn slice_begin() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut packet = TracePacket::from_message(w.root());
        packet.set_timestamp(5).set_trusted_packet_sequence_id(1);
        let mut event = packet.begin_track_event();
        event
            .set_type(track_event::Type::SliceBegin)
            .set_track_uuid(42)
            .add_category_iids(1)
            .add_category_iids(2)
            .set_name("x");
        event
            .add_debug_annotations()
            .set_name("count")
            .set_int_value(-3);
        event
            .add_debug_annotations()
            .set_name("label")
            .set_string_value("hi \"there\"")
            .set_proto_value(&[1, 2, 255]);
        {
            let mut dict = event.add_debug_annotations();
            dict.set_name("dict");
            dict.add_dict_entries().set_name("on").set_bool_value(true);
        }
    }
    w.finish().expect("heap writes cannot fail")
}

const SLICE_BEGIN: &str = concat!(
    "TracePacketDecoder { timestamp: 5, trusted_packet_sequence_id: 1, ",
    "track_event: TrackEventDecoder { category_iids: [1, 2], debug_annotations: [",
    r#"DebugAnnotationDecoder { int_value: -3, name: "count" }, "#,
    r#"DebugAnnotationDecoder { string_value: "hi \"there\"", name: "label", proto_value: [1, 2, 255] }, "#,
    r#"DebugAnnotationDecoder { name: "dict", dict_entries: [DebugAnnotationDecoder { bool_value: true, name: "on" }] }"#,
    r#"], type: SliceBegin, track_uuid: 42, name: "x" } }"#,
);

#[test]
fn track_event_packet() {
    let bytes = slice_begin();
    let packet = TracePacketDecoder::new(&bytes);
    assert_eq!(format!("{packet:?}"), SLICE_BEGIN);
}

#[test]
fn pretty_output_nests() {
    let mut w = HeapWriter::new();
    {
        let mut packet = TracePacket::from_message(w.root());
        packet.set_timestamp(5);
        packet
            .begin_track_event()
            .set_type(track_event::Type::Instant)
            .set_name("x");
    }
    let bytes = w.finish().expect("heap writes cannot fail");
    let want = "\
TracePacketDecoder {
    timestamp: 5,
    track_event: TrackEventDecoder {
        type: Instant,
        name: \"x\",
    },
}";
    assert_eq!(format!("{:#?}", TracePacketDecoder::new(&bytes)), want);
}

#[test]
fn unknown_enum_numbers_print_as_numbers() {
    let mut w = HeapWriter::new();
    TracePacket::from_message(w.root())
        .begin_track_event()
        .set_type_raw(99);
    let bytes = w.finish().expect("heap writes cannot fail");
    let packet = TracePacketDecoder::new(&bytes);
    let event = packet.track_event().expect("track event");
    assert_eq!(event.r#type(), None);
    assert_eq!(event.type_raw(), Some(99));
    assert_eq!(
        format!("{packet:?}"),
        "TracePacketDecoder { track_event: TrackEventDecoder { type: 99 } }"
    );
}

#[test]
fn unknown_and_malformed_fields_end_with_dots() {
    // A field number TracePacket does not name.
    let mut w = HeapWriter::new();
    {
        let mut packet = TracePacket::from_message(w.root());
        packet.set_timestamp(5);
        packet.message().append_uint64(400_000, 7);
    }
    let bytes = w.finish().expect("heap writes cannot fail");
    assert_eq!(
        format!("{:?}", TracePacketDecoder::new(&bytes)),
        "TracePacketDecoder { timestamp: 5, .. }"
    );
    // timestamp (8) as a string: the wire type does not match the schema.
    let wrong_type = [0x42, 1, b'a'];
    assert_eq!(
        format!("{:?}", TracePacketDecoder::new(&wrong_type)),
        "TracePacketDecoder { .. }"
    );
    // Truncated after the timestamp.
    let truncated = [0x40, 5, 0x5A, 9, 0];
    assert_eq!(
        format!("{:?}", TracePacketDecoder::new(&truncated)),
        "TracePacketDecoder { timestamp: 5, .. }"
    );
}

fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `levels` debug annotations, each the only dict entry of the one around it.
fn nested_annotations(levels: usize) -> Vec<u8> {
    let tag = u64::from(DebugAnnotation::FIELD_DICT_ENTRIES << 3 | 2);
    let mut inner = Vec::new();
    for _ in 0..levels {
        let mut outer = Vec::with_capacity(inner.len() + 12);
        push_varint(&mut outer, tag);
        push_varint(&mut outer, inner.len() as u64);
        outer.extend_from_slice(&inner);
        inner = outer;
    }
    inner
}

#[test]
fn nesting_is_capped_at_64_levels() {
    let shallow = nested_annotations(2);
    assert_eq!(
        format!("{:?}", DebugAnnotationDecoder::new(&shallow)),
        "DebugAnnotationDecoder { dict_entries: [DebugAnnotationDecoder { \
         dict_entries: [DebugAnnotationDecoder] }] }"
    );
    for levels in [63, 64, 100, 20_000] {
        let bytes = nested_annotations(levels);
        let out = format!("{:?}", DebugAnnotationDecoder::new(&bytes));
        // The outermost decoder and up to 63 levels below it print in full;
        // the one 64 levels down prints as `{ .. }`, deeper ones not at all.
        let names = levels.min(64) + 1;
        assert_eq!(out.matches("DebugAnnotationDecoder").count(), names);
        assert_eq!(out.contains("DebugAnnotationDecoder { .. }"), levels >= 64);
    }
}

#[test]
fn hostile_bytes_never_panic() {
    let good = slice_begin();
    // Every truncation.
    for end in 0..good.len() {
        let _ = format!("{:?}", TracePacketDecoder::new(&good[..end]));
    }
    // Random byte flips (xorshift, fixed seed).
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..2_000 {
        let mut bytes = good.clone();
        for _ in 0..(next() % 4 + 1) {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = next() as u8;
        }
        let packet = TracePacketDecoder::new(&bytes);
        let _ = format!("{packet:?}");
        let _ = format!("{packet:#?}");
    }
}
