//! Tests of the TrackEvent walk (`track_event_times.rs`): what it reads,
//! what it decodes for the parser and the parts it leaves, checked
//! against the generated decoder reading the whole event.

use super::*;
use protozero::Decoder;
use zerotrace_protos::protos::TrackEventDecoder;

fn event(f: impl FnOnce(&mut TrackEvent<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut e = TrackEvent::from_message(w.root());
        f(&mut e);
    }
    w.finish().unwrap_or_default()
}

#[test]
fn the_parser_gets_only_the_fields_read_nowhere_else() {
    let bytes = event(|e| {
        e.set_name("n");
        e.set_timestamp_absolute_us(5);
        e.set_type_raw(99);
        e.add_categories("c");
        e.set_type(Type::Counter);
        e.set_track_uuid(7);
        e.set_timestamp_delta_us(-3);
        e.set_thread_time_absolute_us(11);
        e.set_thread_instruction_count_delta(2);
        e.set_counter_value(4);
        e.set_double_counter_value(1.5);
        e.add_flow_ids(9);
        e.add_extra_counter_track_uuids(21);
        e.add_extra_counter_values(-8);
        e.add_extra_double_counter_track_uuids(22);
        e.add_extra_double_counter_values(0.25);
        e.message()
            .append_packed_varint(TrackEvent::FIELD_EXTRA_COUNTER_VALUES, [3u64, 6]);
    });
    let mut rest = Vec::new();
    let got = split(&bytes, &mut rest);

    // What was read here is what the generated decoder reads.
    let full = TrackEventDecoder::new(&bytes);
    assert_eq!(got.ty, full.type_raw());
    assert_eq!(got.has_type, full.has_type());
    assert_eq!(got.track_uuid, full.track_uuid());
    assert!(matches!(got.timestamp, Some(Stamp::Delta(-3))));
    assert_eq!(full.timestamp_delta_us(), Some(-3));
    assert!(matches!(got.thread_time, Some(Stamp::Absolute(11))));
    assert!(matches!(got.instruction_count, Some(Stamp::Delta(2))));
    assert_eq!(got.counter_value, full.double_counter_value());
    assert_eq!(
        got.extra_uuids,
        full.extra_counter_track_uuids().collect::<Vec<_>>()
    );
    let values: Vec<f64> = full.extra_counter_values().map(|v| v as f64).collect();
    assert_eq!(got.extra_values, values);
    assert_eq!(got.extra_values, [-8.0, 3.0, 6.0]);
    assert_eq!(got.extra_double_uuids, [22]);
    assert_eq!(got.extra_double_values, [0.25]);

    // The rest holds room for the facts' header (`tokenize` writes it
    // there), then the other fields as they were, and none of these.
    let (room, rest) = rest.split_at(TrackEventFacts::MAX_HEADER);
    assert!(room.iter().all(|&b| b == 0));
    let mut d = Decoder::new(rest);
    let mut ids = Vec::new();
    while let Some(Ok(f)) = d.read_field() {
        ids.push(f.id);
    }
    assert_eq!(
        ids,
        [
            TrackEvent::FIELD_CATEGORIES,
            TrackEvent::FIELD_FLOW_IDS,
            TrackEvent::FIELD_NAME
        ]
    );
    let rest = TrackEventDecoder::new(rest);
    assert_eq!(rest.name(), Some("n"));
    assert_eq!(rest.categories().collect::<Vec<_>>(), ["c"]);
    assert_eq!(rest.flow_ids().collect::<Vec<_>>(), [9]);
    assert_eq!(rest.type_raw(), None);
}

#[test]
fn the_fields_other_readers_take_go_last_in_their_order() {
    let bytes = event(|e| {
        e.message()
            .append_varint(TrackEvent::FIELD_SOURCE_LOCATION_IID, 5);
        e.set_name("n");
        e.message().append_bytes(1001, b"x");
        e.set_type(Type::SliceBegin);
        e.message()
            .append_varint(TrackEvent::FIELD_SOURCE_LOCATION_IID, 6);
        e.add_flow_ids(9);
    });
    let mut rest = Vec::new();
    let got = split(&bytes, &mut rest);
    let fields = |b: &[u8]| {
        Decoder::new(b)
            .map_while(Result::ok)
            .map(|f| (f.id, f.as_u64().ok()))
            .collect::<Vec<_>>()
    };
    let kept = &rest[TrackEventFacts::MAX_HEADER..];
    let facts = TrackEventFacts::new(None, None, false).with_extra(got.kinds, got.extra_len);
    let (main, last) = facts.parts(kept);
    let ids: Vec<u32> = fields(main).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, [TrackEvent::FIELD_FLOW_IDS, TrackEvent::FIELD_NAME]);
    assert_eq!(
        fields(last),
        [
            (TrackEvent::FIELD_SOURCE_LOCATION_IID, Some(5)),
            (1001, None),
            (TrackEvent::FIELD_SOURCE_LOCATION_IID, Some(6))
        ]
    );
    let kinds = facts.fields();
    assert!(kinds.contains(FieldKinds::TYPED));
    assert!(kinds.contains(FieldKinds::REFLECTED));
    assert!(kinds.contains(FieldKinds::EXTENSION));
    // More ranges than the walk keeps on the stack (each field apart from
    // the next of its part): none lost, none out of order.
    let many = event(|e| {
        for i in 0..20 {
            e.message()
                .append_varint(TrackEvent::FIELD_CORRELATION_ID, i);
            e.message().append_varint(999, 100 + i);
        }
        e.set_name("n");
    });
    let got = split(&many, &mut rest);
    let facts = TrackEventFacts::new(None, None, false).with_extra(got.kinds, got.extra_len);
    let (main, last) = facts.parts(&rest[TrackEventFacts::MAX_HEADER..]);
    let flows: Vec<_> = fields(main).into_iter().filter_map(|(_, v)| v).collect();
    assert_eq!(flows, (100..120).collect::<Vec<u64>>());
    assert_eq!(fields(main).last(), Some(&(TrackEvent::FIELD_NAME, None)));
    let ids: Vec<_> = fields(last).into_iter().filter_map(|(_, v)| v).collect();
    assert_eq!(ids, (0..20).collect::<Vec<u64>>());
    assert_eq!(facts.fields(), FieldKinds::TYPED);
}

/// What the parser reads of an event's name and categories, from the
/// walk's facts and parts, and from the whole event by the decoder:
/// the same, whichever way the fields came.
#[test]
fn names_categories_and_annotations_are_decoded_once_as_the_decoder_reads_them() {
    type Read = (
        Option<String>,
        Option<u64>,
        Vec<String>,
        Vec<u64>,
        Vec<Vec<u8>>,
    );
    let whole = |bytes: &[u8]| -> Read {
        let d = TrackEventDecoder::new(bytes);
        (
            d.name().map(str::to_owned),
            d.name_iid(),
            d.categories().map(str::to_owned).collect(),
            d.category_iids().collect(),
            d.debug_annotations_bytes().map(<[u8]>::to_vec).collect(),
        )
    };
    let walked = |bytes: &[u8]| -> (Read, Decoded, Vec<u32>) {
        let mut rest = Vec::new();
        let got = split(bytes, &mut rest);
        let facts = TrackEventFacts::new(None, None, false)
            .with_extra(got.kinds, got.extra_len)
            .with_decoded(got.decoded);
        let parts = facts.sections(&rest[TrackEventFacts::MAX_HEADER..]);
        let d = TrackEventDecoder::new(parts.fields);
        let mut annotations = Vec::new();
        let mut pos = 0;
        while let Some((id, value, next)) = field_at(parts.annotations, pos) {
            assert_eq!(id, TrackEvent::FIELD_DEBUG_ANNOTATIONS);
            if let FieldValue::Bytes(b) = value {
                annotations.push(b.to_vec());
            }
            pos = next;
        }
        let decoded = facts.decoded();
        let ids = Decoder::new(parts.fields)
            .map_while(Result::ok)
            .map(|f| f.id)
            .collect();
        let read = (
            d.name().map(str::to_owned),
            decoded.name_iid.or(d.name_iid()),
            d.categories().map(str::to_owned).collect(),
            decoded
                .category_iid
                .into_iter()
                .chain(d.category_iids())
                .collect(),
            annotations,
        );
        (read, decoded, ids)
    };
    let annotation = |e: &mut TrackEvent<'_>, v: u64| {
        let mut a = e.add_debug_annotations();
        a.set_name_iid(v);
        a.set_uint_value(v);
    };
    // The common event: interned name and category, annotations.
    let common = event(|e| {
        e.add_category_iids(7);
        e.set_type(Type::SliceBegin);
        e.set_name_iid(5);
        annotation(e, 1);
        e.add_flow_ids(9);
        annotation(e, 2);
    });
    let (read, decoded, ids) = walked(&common);
    assert_eq!(read, whole(&common));
    assert_eq!(
        decoded,
        Decoded {
            name_iid: Some(5),
            category_iid: Some(7),
            annotations_len: decoded.annotations_len,
        }
    );
    assert_eq!(read.4.len(), 2);
    assert_eq!(ids, [TrackEvent::FIELD_FLOW_IDS]);
    // A name replaced by a later member of its oneof is dropped.
    let renamed = event(|e| {
        e.set_name("old");
        e.set_name_iid(3);
    });
    let (read, decoded, ids) = walked(&renamed);
    assert_eq!(read, whole(&renamed));
    assert_eq!((decoded.name_iid, ids.len()), (Some(3), 0));
    let named = event(|e| {
        e.set_name_iid(3);
        e.set_name("new");
    });
    let (read, decoded, ids) = walked(&named);
    assert_eq!(read, whole(&named));
    assert_eq!(
        (decoded.name_iid, ids),
        (None, vec![TrackEvent::FIELD_NAME])
    );
    // More than one category: all left to the decoder, in order.
    for bytes in [
        event(|e| {
            e.add_category_iids(1);
            e.add_category_iids(2);
        }),
        event(|e| {
            e.add_category_iids(1);
            e.add_categories("c");
        }),
        event(|e| {
            e.add_categories("c");
            e.add_category_iids(1);
        }),
        event(|e| {
            e.message()
                .append_packed_varint(TrackEvent::FIELD_CATEGORY_IIDS, [4u64]);
        }),
        event(|e| {
            e.message()
                .append_bytes(TrackEvent::FIELD_NAME_IID, b"not a varint");
            e.message().append_varint(TrackEvent::FIELD_NAME, 1);
            e.message()
                .append_varint(TrackEvent::FIELD_DEBUG_ANNOTATIONS, 1);
        }),
    ] {
        let (read, decoded, _) = walked(&bytes);
        assert_eq!(read, whole(&bytes), "{bytes:02x?}");
        assert_eq!(decoded.category_iid, None);
        assert_eq!(decoded.name_iid, None);
    }
}

#[test]
fn an_unnamed_type_is_kept_raw_but_not_present() {
    let bytes = event(|e| {
        e.set_type_raw(99);
    });
    let got = split(&bytes, &mut Vec::new());
    assert_eq!(got.ty, Some(99));
    assert!(!got.has_type);
    let facts = TrackEventFacts::new(got.track_uuid, got.ty, got.has_type);
    assert_eq!(facts.type_raw(), Some(99));
    assert!(!facts.has_type());
    assert_eq!(facts.track_uuid(), None);
}
