//! Keeps the decode bench honest: every library must return the same
//! checksum for each task on each data set, the checksums must not be
//! trivially equal (non-zero, full differs from lazy), the recorded trace
//! must hold what the bench claims to measure (TrackEvents with debug
//! annotations of every kind, interned data, flows, counters, and the
//! probes' packets), Perfetto's synthetic trace must agree too, and a
//! synthetic trace setting every field the full task reads, including the
//! ones no data set has, must agree too.
//!
//! The recorded trace is the `recorded-small` data set of
//! `cargo xtask decode-data`; where it has not been recorded, the tests of
//! it say so in one line and pass, unless `ZEROTRACE_REQUIRE_DECODE_DATA=1`
//! (CI records it first and sets that).

use std::sync::OnceLock;

use protozero::HeapWriter;
use zerotrace_decode_bench::data::{self, RECORDED_SMALL, Recorded};
use zerotrace_decode_bench::{LIBRARIES, floor, ours, quick_protobuf_decode};
use zerotrace_protos::protos::{TracePacket, TracePacketDecoder, track_event};

/// The tests' recorded data set, read once per test process; `None`, after
/// saying that `test` did not run, where it has not been recorded and is
/// not required.
fn recorded(test: &str) -> Option<&'static Recorded> {
    static TRACE: OnceLock<Result<Recorded, String>> = OnceLock::new();
    match TRACE.get_or_init(|| data::recorded(RECORDED_SMALL).map_err(|e| e.to_string())) {
        Ok(recorded) => Some(recorded),
        Err(e) if std::env::var("ZEROTRACE_REQUIRE_DECODE_DATA").is_ok_and(|v| v == "1") => {
            panic!("ZEROTRACE_REQUIRE_DECODE_DATA=1: {e}")
        }
        Err(e) => {
            println!("{test} did not run: {e}");
            None
        }
    }
}

/// Asserts that all libraries agree on both tasks over `packets` and
/// returns the (full, lazy) checksums.
fn assert_agree(what: &str, packets: &[&[u8]]) -> (u64, u64) {
    let full: Vec<(&str, u64)> = LIBRARIES.iter().map(|(n, f, _)| (*n, f(packets))).collect();
    let lazy: Vec<(&str, u64)> = LIBRARIES.iter().map(|(n, _, l)| (*n, l(packets))).collect();
    for (task, sums) in [("full", &full), ("lazy", &lazy)] {
        let (_, expected) = sums[0];
        assert_ne!(expected, 0, "{what}/{task}: the floor's checksum is 0");
        for (name, sum) in sums.iter() {
            assert_eq!(
                *sum, expected,
                "{what}/{task}: {name} disagrees with the floor: {sums:?}"
            );
        }
    }
    assert_ne!(full[0].1, lazy[0].1, "{what}: full and lazy read the same");
    (full[0].1, lazy[0].1)
}

/// What the recorded trace holds, counted with our decoders.
#[derive(Debug, Default)]
struct Contents {
    track_events: usize,
    with_annotations: usize,
    annotations: usize,
    string_values: usize,
    double_values: usize,
    bool_values: usize,
    int_values: usize,
    uint_values: usize,
    pointer_values: usize,
    dicts: usize,
    arrays: usize,
    interned_data: usize,
    event_names: usize,
    annotation_names: usize,
    source_locations: usize,
    track_descriptors: usize,
    flows: usize,
    terminating_flows: usize,
    counters: usize,
    double_counters: usize,
}

fn contents(packets: &[&[u8]]) -> Contents {
    let mut c = Contents::default();
    for p in packets {
        let p = TracePacketDecoder::new(p);
        if let Some(e) = p.track_event() {
            c.track_events += 1;
            let mut any = false;
            for a in e.debug_annotations() {
                any = true;
                c.annotations += 1;
                c.string_values += usize::from(a.has_string_value());
                c.double_values += usize::from(a.has_double_value());
                c.bool_values += usize::from(a.has_bool_value());
                c.int_values += usize::from(a.has_int_value());
                c.uint_values += usize::from(a.has_uint_value());
                c.pointer_values += usize::from(a.has_pointer_value());
                c.dicts += usize::from(a.has_dict_entries());
                c.arrays += usize::from(a.has_array_values());
            }
            c.with_annotations += usize::from(any);
            c.flows += e.flow_ids().count();
            c.terminating_flows += e.terminating_flow_ids().count();
            c.counters += usize::from(e.has_counter_value());
            c.double_counters += usize::from(e.has_double_counter_value());
        }
        if let Some(d) = p.interned_data() {
            c.interned_data += 1;
            c.event_names += d.event_names().count();
            c.annotation_names += d.debug_annotation_names().count();
            c.source_locations += d.source_locations().count();
        }
        c.track_descriptors += usize::from(p.has_track_descriptor());
    }
    c
}

#[test]
fn the_recorded_trace_holds_what_the_bench_measures() {
    let Some(recorded) = recorded("the_recorded_trace_holds_what_the_bench_measures") else {
        return;
    };
    let packets = data::packets(&recorded.trace).expect("the recording is a trace");
    let c = contents(&packets);
    let size = recorded.size;
    let frames = (size.workers * size.frames) as usize;
    // Per frame at least 8 slices with annotations (frame, update, 3
    // physics steps, render, cull, read).
    assert!(c.with_annotations > 8 * frames, "{c:?}");
    assert!(c.track_events > c.with_annotations, "{c:?}");
    for (kind, n) in [
        ("string", c.string_values),
        ("double", c.double_values),
        ("bool", c.bool_values),
        ("int", c.int_values),
        ("uint", c.uint_values),
        ("pointer", c.pointer_values),
    ] {
        assert!(n >= frames, "{n} {kind} annotations: {c:?}");
    }
    assert!(c.dicts > 0 && c.arrays > 0, "{c:?}");
    // Each worker's sequence and the handler's intern names.
    assert!(c.interned_data > size.workers as usize, "{c:?}");
    assert!(c.event_names >= 10, "{c:?}");
    assert!(c.annotation_names >= 20, "{c:?}");
    assert!(c.source_locations >= 10, "{c:?}");
    assert!(c.track_descriptors > size.workers as usize, "{c:?}");
    assert!(c.flows > 0 && c.flows == c.terminating_flows, "{c:?}");
    assert!(c.counters >= frames && c.double_counters >= frames, "{c:?}");
}

#[test]
fn all_libraries_agree_on_the_recorded_trace() {
    let Some(recorded) = recorded("all_libraries_agree_on_the_recorded_trace") else {
        return;
    };
    let packets = data::packets(&recorded.trace).expect("the recording is a trace");
    assert_agree("recorded", &packets);
}

#[test]
fn all_libraries_agree_on_the_genuine_trace() {
    let trace = data::genuine_trace().expect("reading the genuine trace");
    let packets = data::packets(&trace).expect("the genuine trace is a trace");
    let c = contents(&packets);
    assert!(c.with_annotations > 10 && c.interned_data > 0, "{c:?}");
    assert_agree("genuine", &packets);
}

/// How many packets of `packets` set top-level field `id`.
fn with_field(packets: &[&[u8]], id: u32) -> usize {
    packets
        .iter()
        .filter(|p| {
            protozero::Decoder::new(p)
                .map_while(Result::ok)
                .any(|f| f.id == id)
        })
        .count()
}

#[test]
fn the_recorded_trace_holds_the_probes_packets() {
    let Some(recorded) = recorded("the_recorded_trace_holds_the_probes_packets") else {
        return;
    };
    let packets = data::packets(&recorded.trace).expect("the recording is a trace");
    // TracePacket.process_tree 2, sys_stats 7, ftrace_events 1.
    assert!(with_field(&packets, 2) > 0, "no process_tree packet");
    assert!(with_field(&packets, 7) > 0, "no sys_stats packet");
    let ftrace = with_field(&packets, 1);
    if std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1") {
        assert!(
            ftrace > 0,
            "ZEROTRACE_REQUIRE_TRACEFS=1 but no ftrace_events packet"
        );
    } else if ftrace == 0 {
        println!("the recorded trace has no ftrace events here (root and tracefs needed)");
    }
}

#[test]
fn all_libraries_agree_on_perfettos_synthetic_trace() {
    let trace = data::synthetic_trace().expect("writing the synthetic trace");
    let packets = data::packets(&trace).expect("the synthetic trace is a trace");
    assert!(packets.len() > 10, "{}", packets.len());
    assert_agree("synthetic", &packets);
}

/// Packets that set every field the full task reads, each oneof member in
/// one of them, signed fields negative, strings of distinct lengths.
fn synthetic() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_timestamp(1_000_000_007);
        p.set_timestamp_clock_id(64);
        p.set_trusted_uid(-3);
        p.set_trusted_packet_sequence_id(9);
        p.set_trusted_pid(-1);
        p.set_sequence_flags(3);
        p.set_incremental_state_cleared(true);
        p.set_trace_packet_defaults_raw(&[]);
        p.set_previous_packet_dropped(1);
        p.set_first_packet_on_sequence(false);
        p.set_machine_id(77);
        {
            let mut e = p.begin_track_event();
            e.add_category_iids(1).add_category_iids(300);
            e.add_categories("cat").add_categories("second category");
            e.set_name("synthetic event");
            e.set_type(track_event::Type::Counter);
            e.set_track_uuid(u64::MAX - 5);
            e.set_counter_value(-12345);
            e.add_extra_counter_track_uuids(11)
                .add_extra_counter_track_uuids(12);
            e.add_extra_counter_values(-1)
                .add_extra_counter_values(i64::MIN);
            e.add_extra_double_counter_track_uuids(13);
            e.add_extra_double_counter_values(-0.0)
                .add_extra_double_counter_values(2.5e300);
            e.add_flow_ids_old(21);
            e.add_flow_ids(22).add_flow_ids(u64::MAX);
            e.add_terminating_flow_ids_old(23);
            e.add_terminating_flow_ids(24);
            e.set_correlation_id_str("correlation");
            e.begin_callstack().add_frames().set_function_name("f");
            e.set_callstack_weight(0.25);
            {
                let mut a = e.add_debug_annotations();
                a.set_name_iid(5);
                a.set_bool_value(true);
            }
            {
                let mut a = e.add_debug_annotations();
                a.set_name("uint");
                a.set_uint_value(1 << 40);
                a.set_proto_type_name("perfetto.protos.Foo");
                a.set_proto_value(&[1, 2, 3, 4, 5]);
            }
            {
                let mut a = e.add_debug_annotations();
                a.set_name("int");
                a.set_int_value(-77);
                a.set_proto_type_name_iid(8);
            }
            e.add_debug_annotations().set_double_value(-1.5);
            e.add_debug_annotations().set_pointer_value(0xdead_beef);
            e.add_debug_annotations().set_legacy_json_value("{\"a\":1}");
            e.add_debug_annotations().set_string_value_iid(31);
            {
                let mut a = e.add_debug_annotations();
                a.set_name("nested");
                let mut n = a.begin_nested_value();
                n.set_nested_type_raw(1);
                n.add_dict_keys("k1").add_dict_keys("key two");
                n.add_dict_values().set_int_value(-9);
                {
                    let mut v = n.add_dict_values();
                    v.set_nested_type_raw(2);
                    v.add_array_values().set_double_value(3.25);
                    v.add_array_values().set_bool_value(true);
                    v.add_array_values().set_string_value("deep");
                }
                n.set_int_value(4);
                n.set_double_value(0.5);
                n.set_bool_value(false);
                n.set_string_value("nested string");
            }
            {
                let mut a = e.add_debug_annotations();
                a.set_name("dict");
                {
                    let mut d = a.add_dict_entries();
                    d.set_name("x");
                    d.set_string_value("dict value");
                }
                let mut d = a.add_dict_entries();
                d.set_name("arr");
                d.add_array_values().set_int_value(1);
                d.add_array_values().set_string_value("");
            }
            e.begin_task_execution();
            e.begin_log_message();
            {
                let mut l = e.begin_source_location();
                l.set_iid(3);
                l.set_file_name("src/lib.rs");
                l.set_function_name("main");
                l.set_line_number(42);
            }
            e.set_timestamp_delta_us(-100);
            e.set_thread_time_absolute_us(555);
            e.set_thread_instruction_count_delta(-7);
            e.begin_legacy_event();
        }
        {
            let mut d = p.begin_interned_data();
            for (iid, name) in [(1, "cat"), (2, "other category")] {
                let mut m = d.add_event_categories();
                m.set_iid(iid);
                m.set_name(name);
            }
            {
                let mut m = d.add_event_names();
                m.set_iid(7);
                m.set_name("event");
            }
            {
                let mut m = d.add_debug_annotation_names();
                m.set_iid(5);
                m.set_name("flag");
            }
            {
                let mut m = d.add_debug_annotation_value_type_names();
                m.set_iid(8);
                m.set_name("perfetto.protos.Bar");
            }
            {
                let mut m = d.add_debug_annotation_string_values();
                m.set_iid(31);
                m.set_str(b"interned value");
            }
            d.add_correlation_id_str().set_str(b"c");
            d.add_build_ids().set_iid(1);
            d.add_mapping_paths().set_str(&[0xff, 0xfe]); // bytes: no UTF-8
            d.add_source_paths().set_str(b"a/b.c");
            d.add_function_names().set_str(b"fn");
            {
                let mut m = d.add_mappings();
                m.set_iid(1);
                m.set_build_id(2);
                m.set_exact_offset(3);
                m.set_start_offset(4);
                m.set_start(5);
                m.set_end(6);
                m.set_load_bias(7);
                m.add_path_string_ids(8).add_path_string_ids(9);
            }
            {
                let mut m = d.add_frames();
                m.set_iid(1);
                m.set_function_name_id(2);
                m.set_mapping_id(3);
                m.set_rel_pc(4);
                m.set_source_path_iid(5);
                m.set_line_number(6);
                m.set_kind_raw(2);
            }
            {
                let mut m = d.add_callstacks();
                m.set_iid(1);
                m.add_frame_ids(1).add_frame_ids(1);
            }
            {
                let mut m = d.add_source_locations();
                m.set_iid(9);
                m.set_file_name("x.rs");
            }
            {
                let mut m = d.add_unsymbolized_source_locations();
                m.set_iid(1);
                m.set_mapping_id(2);
                m.set_rel_pc(3);
            }
            {
                let mut m = d.add_log_message_body();
                m.set_iid(1);
                m.set_body("log body");
            }
            d.add_kernel_symbols().set_str(b"sym");
        }
    }
    out.push(w.finish().expect("packet 1"));

    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        let mut e = p.begin_track_event();
        e.set_name_iid(7);
        e.set_type_raw(99); // a number the enum does not name
        e.set_double_counter_value(-2.0);
        e.set_correlation_id(5);
        e.set_callstack_iid(6);
        e.set_source_location_iid(9);
        e.set_timestamp_absolute_us(-1);
        e.set_thread_time_delta_us(2);
        e.set_thread_instruction_count_absolute(3);
    }
    out.push(w.finish().expect("packet 2"));

    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.begin_track_event().set_correlation_id_str_iid(4);
        p.begin_interned_data().add_frames().set_kind_str("jit");
    }
    out.push(w.finish().expect("packet 3"));

    type Set = fn(&mut TracePacket<'_>);
    let members: [Set; 19] = [
        |p| {
            p.set_track_descriptor_raw(&[]);
        },
        |p| {
            p.set_clock_snapshot_raw(&[]);
        },
        |p| {
            p.set_trace_uuid_raw(&[]);
        },
        |p| {
            p.set_trace_config_raw(&[]);
        },
        |p| {
            p.set_trace_stats_raw(&[]);
        },
        |p| {
            p.set_system_info_raw(&[]);
        },
        |p| {
            p.set_trigger_raw(&[]);
        },
        |p| {
            p.set_service_event_raw(&[]);
        },
        |p| {
            p.set_trace_provenance_raw(&[]);
        },
        |p| {
            p.set_protovms_raw(&[]);
        },
        |p| {
            p.set_trace_attributes_raw(&[]);
        },
        |p| {
            p.set_process_descriptor_raw(&[]);
        },
        |p| {
            p.set_thread_descriptor_raw(&[]);
        },
        |p| {
            p.set_synchronization_marker(&[0x82; 16]);
        },
        |p| {
            p.set_compressed_packets(&[1, 2, 3]);
        },
        |p| {
            p.set_zstd_compressed_packets(&[4, 5]);
        },
        |p| {
            p.set_clone_snapshot_trigger_raw(&[]);
        },
        |p| {
            p.set_remote_clock_sync_raw(&[]);
        },
        |p| {
            for_testing(&mut p.begin_for_testing());
        },
    ];
    for (i, set) in members.iter().enumerate() {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_timestamp(i as u64);
            set(&mut p);
        }
        out.push(w.finish().expect("a data member packet"));
    }
    out
}

/// Every field of `TestEvent` and of the messages under it, signed ones
/// negative, strings of distinct lengths.
fn for_testing(t: &mut zerotrace_protos::protos::TestEvent<'_>) {
    t.set_str("test event").set_seq_value(7).set_counter(9);
    t.set_is_last(true);
    {
        let mut payload = t.begin_payload();
        payload.add_str("a").add_str("bc").set_single_string("def");
        payload
            .set_single_int(-3)
            .add_repeated_ints(-4)
            .add_repeated_ints(5);
        payload.set_remaining_nesting_depth(2);
        {
            let mut nested = payload.add_nested();
            nested.set_single_int(6).add_str("ghij");
            nested.add_nested().set_remaining_nesting_depth(0);
        }
        let mut a = payload.add_debug_annotations();
        a.set_name("klmno").set_int_value(-8);
    }
    {
        let mut patch = t.begin_protovm_patch();
        patch.set_string_to_merge("merge").set_int_to_merge(-9);
        {
            let mut m = patch.begin_single_message();
            m.set_id(10);
            m.begin_submessage().set_single_int(11);
        }
        patch.add_messages().set_id(12);
        patch.add_delete_message_ids(13).add_delete_message_ids(14);
    }
    let mut state = t.begin_protovm_incremental_state();
    state.set_string_merged("merged!").set_int_merged(-15);
    state.begin_single_message().set_id(16);
    state.add_messages().begin_submessage().set_single_int(17);
}

/// A packet of a timestamp and a filled `for_testing`, and one whose
/// `for_testing` is empty.
fn for_testing_packets() -> (Vec<u8>, Vec<u8>) {
    let mut full = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(full.root());
        p.set_timestamp(1);
        for_testing(&mut p.begin_for_testing());
    }
    let mut empty = HeapWriter::new();
    TracePacket::from_message(empty.root())
        .set_timestamp(1)
        .set_for_testing_raw(&[]);
    (
        full.finish().expect("a for_testing packet"),
        empty.finish().expect("an empty for_testing packet"),
    )
}

/// prost decodes `for_testing` whole, so every row descends into it (the
/// floor and ours once only counted it as present).
#[test]
fn every_library_decodes_for_testing() {
    let (full, empty) = for_testing_packets();
    let (with, without) = (
        assert_agree("for_testing", &[full.as_slice()]),
        assert_agree("empty for_testing", &[empty.as_slice()]),
    );
    // The timestamp (1 + 1) and the message (1); then TestEvent's four
    // scalars (1 + value each: the string's 10 bytes, 7, 9, true), and
    // more for what is nested.
    assert_eq!(without, (3, 2));
    let scalars = (1 + 10) + (1 + 7) + (1 + 9) + (1 + 1);
    assert!(with.0 > without.0 + scalars, "{with:?}");
}

#[test]
fn all_libraries_agree_on_every_field() {
    let packets = synthetic();
    let packets: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
    // Each packet on its own, so a disagreement names its packet (packet
    // 2 only has an unnamed enum number, on which quick-protobuf differs).
    for (i, p) in packets.iter().enumerate() {
        let one = [*p];
        let full: Vec<(&str, u64)> = LIBRARIES
            .iter()
            .filter(|(n, _, _)| i != 1 || *n != "quick_protobuf")
            .map(|(n, f, _)| (*n, f(&one)))
            .collect();
        assert!(
            full.iter().all(|(_, s)| *s == full[0].1),
            "packet {i}: {full:?}"
        );
    }
    let without_2: Vec<&[u8]> = packets
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, p)| *p)
        .collect();
    assert_agree("synthetic", &without_2);
}

#[test]
fn quick_protobuf_reads_unnamed_enum_numbers_as_the_default() {
    let packets = synthetic();
    let one = [packets[1].as_slice()];
    // type 99 reads as 0 (TYPE_UNSPECIFIED): 99 less in the checksum.
    assert_eq!(
        quick_protobuf_decode::full(&one),
        floor::full(&one).wrapping_sub(99)
    );
    assert_eq!(ours::full(&one), floor::full(&one));
}

/// A TrackEvent whose `category_iids` (declared unpacked, like every
/// repeated scalar of these proto2 schemas) are written packed.
fn packed_category_iids() -> Vec<u8> {
    let mut payload = Vec::new();
    for v in [1u64, 200, 70_000] {
        let mut v = v;
        while v >= 0x80 {
            payload.push((v as u8) | 0x80);
            v >>= 7;
        }
        payload.push(v as u8);
    }
    let mut w = HeapWriter::new();
    {
        let mut p = w.root();
        p.append_varint(8, 5);
        let mut e = p.begin_nested(11);
        e.append_bytes(3, &payload);
        e.append_varint(10, 1);
    }
    w.finish().expect("packed packet")
}

#[test]
fn quick_protobuf_skips_packed_encodings_of_unpacked_fields() {
    let packet = packed_category_iids();
    let one = [packet.as_slice()];
    let expected = floor::full(&one);
    for (name, full, _) in LIBRARIES {
        if name != "quick_protobuf" {
            assert_eq!(full(&one), expected, "{name}");
        }
    }
    // Three values fewer: (1 + 1) + (1 + 200) + (1 + 70000).
    assert_eq!(
        quick_protobuf_decode::full(&one),
        expected.wrapping_sub(2 + 201 + 70_001)
    );
}
