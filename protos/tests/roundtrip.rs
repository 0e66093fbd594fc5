//! A realistic TracePacket — track event with categories, flows, debug
//! annotations and a counter; interned data; a track descriptor — written
//! with the generated writers and read back with the generated decoders.

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    self, Trace, TraceDecoder, TracePacket, TracePacketDecoder, debug_annotation, trace_packet,
    track_event,
};

fn slice_begin_packet() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut packet = TracePacket::from_message(w.root());
        packet
            .set_timestamp(1_000_000)
            .set_trusted_packet_sequence_id(7)
            .set_sequence_flags(trace_packet::SequenceFlags::SeqIncrementalStateCleared as u32);
        {
            let mut interned = packet.begin_interned_data();
            interned.add_event_categories().set_iid(1).set_name("cat");
            interned.add_event_names().set_iid(2).set_name("DoWork");
            interned
                .add_debug_annotation_names()
                .set_iid(3)
                .set_name("arg");
            interned
                .add_source_locations()
                .set_iid(4)
                .set_file_name("main.rs")
                .set_function_name("main")
                .set_line_number(42);
        }
        let mut event = packet.begin_track_event();
        event
            .set_type(track_event::Type::SliceBegin)
            .set_track_uuid(0xABCD)
            .add_category_iids(1)
            .set_name_iid(2)
            .add_flow_ids(11)
            .add_flow_ids(12)
            .add_extra_counter_values(-5)
            .set_source_location_iid(4);
        event
            .add_debug_annotations()
            .set_name_iid(3)
            .set_int_value(-17);
        {
            let mut dict = event.add_debug_annotations();
            dict.set_name("dict");
            dict.add_dict_entries().set_name("a").set_string_value("x");
            dict.add_dict_entries().set_name("b").set_bool_value(true);
        }
        event
            .add_debug_annotations()
            .set_name("ptr")
            .set_pointer_value(0xDEAD);
    }
    w.finish().unwrap()
}

#[test]
fn track_event_packet_round_trips() {
    let bytes = slice_begin_packet();
    let packet = TracePacketDecoder::new(&bytes);
    assert_eq!(packet.decode_error(), None);
    assert_eq!(packet.timestamp(), Some(1_000_000));
    assert_eq!(packet.trusted_packet_sequence_id(), Some(7));
    assert_eq!(packet.sequence_flags(), Some(1));

    let interned = packet.interned_data().unwrap();
    let cats: Vec<_> = interned
        .event_categories()
        .map(|c| (c.iid(), c.name()))
        .collect();
    assert_eq!(cats, [(Some(1), Some("cat"))]);
    let names: Vec<_> = interned
        .event_names()
        .map(|n| (n.iid(), n.name()))
        .collect();
    assert_eq!(names, [(Some(2), Some("DoWork"))]);
    let arg_names: Vec<_> = interned
        .debug_annotation_names()
        .map(|n| n.name())
        .collect();
    assert_eq!(arg_names, [Some("arg")]);
    let loc = interned.source_locations().next().unwrap();
    assert_eq!(loc.file_name(), Some("main.rs"));
    assert_eq!(loc.function_name(), Some("main"));
    assert_eq!(loc.line_number(), Some(42));

    let event = packet.track_event().unwrap();
    assert_eq!(event.r#type(), Some(track_event::Type::SliceBegin));
    assert_eq!(event.type_raw(), Some(track_event::Type::SliceBegin as i32));
    assert_eq!(event.track_uuid(), Some(0xABCD));
    assert_eq!(event.category_iids().collect::<Vec<_>>(), [1]);
    assert_eq!(event.name_iid(), Some(2));
    assert!(matches!(
        event.which_name_field(),
        Some(track_event::NameField::NameIid(2))
    ));
    assert_eq!(event.flow_ids().collect::<Vec<_>>(), [11, 12]);
    assert_eq!(event.extra_counter_values().collect::<Vec<_>>(), [-5]);
    assert_eq!(event.source_location_iid(), Some(4));

    let args: Vec<_> = event.debug_annotations().collect();
    assert_eq!(args.len(), 3);
    assert_eq!(args[0].name_iid(), Some(3));
    assert!(matches!(
        args[0].which_value(),
        Some(debug_annotation::Value::IntValue(-17))
    ));
    assert_eq!(args[1].name(), Some("dict"));
    let entries: Vec<_> = args[1]
        .dict_entries()
        .map(|e| (e.name(), e.string_value(), e.bool_value()))
        .collect();
    assert_eq!(
        entries,
        [(Some("a"), Some("x"), None), (Some("b"), None, Some(true))]
    );
    assert_eq!(args[2].pointer_value(), Some(0xDEAD));

    match packet.which_data() {
        Some(trace_packet::Data::TrackEvent(e)) => assert_eq!(e.track_uuid(), Some(0xABCD)),
        other => panic!("expected a track event, got {other:?}"),
    }
}

#[test]
fn trace_of_several_packets() {
    let mut w = HeapWriter::new();
    {
        let mut trace = Trace::from_message(w.root());
        {
            let mut p = trace.add_packet();
            p.set_timestamp(1);
            let mut desc = p.begin_track_descriptor();
            desc.set_uuid(0xABCD).set_name("my track");
            desc.begin_thread().set_pid(10).set_tid(11);
        }
        trace.add_packet_raw(&slice_begin_packet());
        {
            let mut p = trace.add_packet();
            p.set_timestamp(3);
            p.begin_track_event()
                .set_type(track_event::Type::SliceEnd)
                .set_track_uuid(0xABCD);
        }
    }
    let bytes = w.finish().unwrap();
    let trace = TraceDecoder::new(&bytes);
    let packets: Vec<_> = trace.packet().collect();
    assert_eq!(packets.len(), 3);
    let desc = packets[0].track_descriptor().unwrap();
    assert_eq!(desc.uuid(), Some(0xABCD));
    assert_eq!(desc.name(), Some("my track"));
    let thread = desc.thread().unwrap();
    assert_eq!((thread.pid(), thread.tid()), (Some(10), Some(11)));
    assert_eq!(packets[1].timestamp(), Some(1_000_000));
    let end = packets[2].track_event().unwrap();
    assert_eq!(end.r#type(), Some(track_event::Type::SliceEnd));
}

#[test]
fn ipc_service_tables_follow_declaration_order() {
    let producer = protos::PRODUCER_PORT;
    assert_eq!(producer.full_name, "perfetto.protos.ProducerPort");
    let first = producer.method_by_id(1).unwrap();
    assert_eq!(first.name, "InitializeConnection");
    assert_eq!(
        first.input_type,
        "perfetto.protos.InitializeConnectionRequest"
    );
    let get_async = producer.method("GetAsyncCommand").unwrap();
    assert!(get_async.server_streaming);
    for (i, m) in producer.methods.iter().enumerate() {
        assert_eq!(m.id as usize, i + 1);
    }
    let consumer = protos::CONSUMER_PORT;
    assert_eq!(consumer.methods[0].name, "EnableTracing");
}

#[test]
fn descriptor_set_is_embedded() {
    // FileDescriptorSet.file (1) entries, each with a name (1).
    let names: Vec<&str> = protozero::Decoder::new(zerotrace_protos::FILE_DESCRIPTOR_SET)
        .map(|f| f.unwrap())
        .map(|f| {
            protozero::TypedDecoder::<'_, 2>::new(f.as_bytes().unwrap())
                .get(1)
                .unwrap()
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(names.contains(&"perfetto/trace/trace_packet.proto"));
    assert!(names.contains(&"perfetto/ipc/producer_port.proto"));
    assert!(names.contains(&"perfetto/trace_processor/trace_processor.proto"));
    assert_eq!(names.len(), 54);
}

#[test]
fn generated_writer_matches_hand_written_calls() {
    assert_eq!(
        size_of::<TracePacket<'_>>(),
        size_of::<protozero::Message<'_>>()
    );
    let mut generated = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(generated.root());
        p.set_timestamp(42).set_trusted_packet_sequence_id(1);
        let mut e = p.begin_track_event();
        e.set_type(track_event::Type::SliceBegin)
            .set_track_uuid(9)
            .add_category_iids(1)
            .set_name("slice");
    }
    let mut manual = HeapWriter::new();
    {
        let mut p = manual.root();
        p.append_uint64(8, 42);
        p.append_uint32(10, 1);
        let mut e = p.begin_nested(11);
        e.append_enum(9, 1);
        e.append_uint64(11, 9);
        e.append_uint64(3, 1);
        e.append_string(23, "slice");
    }
    assert_eq!(generated.finish().unwrap(), manual.finish().unwrap());
}
