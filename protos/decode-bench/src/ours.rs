//! The two tasks with zerotrace's generated zero-copy decoders
//! (`zerotrace_protos::protos::*Decoder`), written as a user would: only
//! the public API (`new`, field accessors, `has_*`, the iterators of
//! repeated fields), so this keeps compiling whatever the decoders'
//! internals become. A decoder never fails: a malformed field reads as
//! absent, a string that is not UTF-8 as `None`.

use zerotrace_protos::protos::{
    CallstackDecoder, DebugAnnotationDecoder, DebugAnnotationNameDecoder,
    DebugAnnotationValueTypeNameDecoder, EventCategoryDecoder, EventNameDecoder, FrameDecoder,
    InternedDataDecoder, InternedStringDecoder, LogMessageBodyDecoder, MappingDecoder,
    SourceLocationDecoder, TestEventDecoder, TracePacketDecoder, TrackEventDecoder,
    UnsymbolizedSourceLocationDecoder,
    debug_annotation::NestedValueDecoder,
    test_event::{
        ProtoVmMessageDecoder, TestPayloadDecoder, proto_vm_message::ProtoVmSubmessageDecoder,
    },
};

use crate::Checksum;

/// The full task: every field of every packet (see the crate docs).
pub fn full(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        packet(&mut c, &TracePacketDecoder::new(p));
    }
    c.0
}

/// The lazy task: each packet's timestamp and its TrackEvent's name.
pub fn lazy(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        let p = TracePacketDecoder::new(p);
        c.opt(p.timestamp());
        if let Some(e) = p.track_event() {
            match e.name_iid() {
                Some(iid) => c.add(iid),
                None => c.opt(e.name()),
            }
        }
    }
    c.0
}

fn packet(c: &mut Checksum, p: &TracePacketDecoder<'_>) {
    c.opt(p.timestamp());
    c.opt(p.timestamp_clock_id());
    if let Some(e) = p.track_event() {
        c.message();
        track_event(c, &e);
    }
    c.message_if(p.has_track_descriptor());
    c.message_if(p.has_clock_snapshot());
    c.message_if(p.has_trace_uuid());
    c.message_if(p.has_trace_config());
    c.message_if(p.has_trace_stats());
    c.message_if(p.has_system_info());
    c.message_if(p.has_trigger());
    c.message_if(p.has_service_event());
    c.message_if(p.has_trace_provenance());
    c.message_if(p.has_protovms());
    c.message_if(p.has_trace_attributes());
    c.message_if(p.has_process_descriptor());
    c.message_if(p.has_thread_descriptor());
    c.opt(p.synchronization_marker());
    c.opt(p.compressed_packets());
    c.opt(p.zstd_compressed_packets());
    c.message_if(p.has_clone_snapshot_trigger());
    c.message_if(p.has_remote_clock_sync());
    if let Some(t) = p.for_testing() {
        c.message();
        test_event(c, &t);
    }
    c.opt(p.trusted_uid());
    c.opt(p.trusted_packet_sequence_id());
    c.opt(p.trusted_pid());
    if let Some(d) = p.interned_data() {
        c.message();
        interned_data(c, &d);
    }
    c.opt(p.sequence_flags());
    c.opt(p.incremental_state_cleared());
    c.message_if(p.has_trace_packet_defaults());
    c.opt(p.previous_packet_dropped());
    c.opt(p.first_packet_on_sequence());
    c.opt(p.machine_id());
}

fn track_event(c: &mut Checksum, e: &TrackEventDecoder<'_>) {
    c.all(e.category_iids());
    c.all(e.categories());
    c.opt(e.name_iid());
    c.opt(e.name());
    c.opt(e.type_raw());
    c.opt(e.track_uuid());
    c.opt(e.counter_value());
    c.opt(e.double_counter_value());
    c.all(e.extra_counter_track_uuids());
    c.all(e.extra_counter_values());
    c.all(e.extra_double_counter_track_uuids());
    c.all(e.extra_double_counter_values());
    c.all(e.flow_ids_old());
    c.all(e.flow_ids());
    c.all(e.terminating_flow_ids_old());
    c.all(e.terminating_flow_ids());
    c.opt(e.correlation_id());
    c.opt(e.correlation_id_str());
    c.opt(e.correlation_id_str_iid());
    c.message_if(e.has_callstack());
    c.opt(e.callstack_iid());
    c.opt(e.callstack_weight());
    for a in e.debug_annotations() {
        debug_annotation(c, &a);
    }
    c.message_if(e.has_task_execution());
    c.message_if(e.has_log_message());
    if let Some(l) = e.source_location() {
        source_location(c, &l);
    }
    c.opt(e.source_location_iid());
    c.opt(e.timestamp_delta_us());
    c.opt(e.timestamp_absolute_us());
    c.opt(e.thread_time_delta_us());
    c.opt(e.thread_time_absolute_us());
    c.opt(e.thread_instruction_count_delta());
    c.opt(e.thread_instruction_count_absolute());
    c.message_if(e.has_legacy_event());
}

fn debug_annotation(c: &mut Checksum, a: &DebugAnnotationDecoder<'_>) {
    c.message();
    c.opt(a.name_iid());
    c.opt(a.name());
    c.opt(a.bool_value());
    c.opt(a.uint_value());
    c.opt(a.int_value());
    c.opt(a.double_value());
    c.opt(a.pointer_value());
    if let Some(n) = a.nested_value() {
        nested_value(c, &n);
    }
    c.opt(a.legacy_json_value());
    c.opt(a.string_value());
    c.opt(a.string_value_iid());
    c.opt(a.proto_type_name());
    c.opt(a.proto_type_name_iid());
    c.opt(a.proto_value());
    for d in a.dict_entries() {
        debug_annotation(c, &d);
    }
    for v in a.array_values() {
        debug_annotation(c, &v);
    }
}

fn nested_value(c: &mut Checksum, n: &NestedValueDecoder<'_>) {
    c.message();
    c.opt(n.nested_type_raw());
    c.all(n.dict_keys());
    for v in n.dict_values() {
        nested_value(c, &v);
    }
    for v in n.array_values() {
        nested_value(c, &v);
    }
    c.opt(n.int_value());
    c.opt(n.double_value());
    c.opt(n.bool_value());
    c.opt(n.string_value());
}

fn source_location(c: &mut Checksum, l: &SourceLocationDecoder<'_>) {
    c.message();
    c.opt(l.iid());
    c.opt(l.file_name());
    c.opt(l.function_name());
    c.opt(l.line_number());
}

fn interned_string(c: &mut Checksum, s: &InternedStringDecoder<'_>) {
    c.message();
    c.opt(s.iid());
    c.opt(s.str());
}

fn interned_data(c: &mut Checksum, d: &InternedDataDecoder<'_>) {
    for m in d.event_categories() {
        let m: EventCategoryDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.name());
    }
    for m in d.event_names() {
        let m: EventNameDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.name());
    }
    for m in d.debug_annotation_names() {
        let m: DebugAnnotationNameDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.name());
    }
    for m in d.debug_annotation_value_type_names() {
        let m: DebugAnnotationValueTypeNameDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.name());
    }
    for s in d.debug_annotation_string_values() {
        interned_string(c, &s);
    }
    for s in d.correlation_id_str() {
        interned_string(c, &s);
    }
    for s in d.build_ids() {
        interned_string(c, &s);
    }
    for s in d.mapping_paths() {
        interned_string(c, &s);
    }
    for s in d.source_paths() {
        interned_string(c, &s);
    }
    for s in d.function_names() {
        interned_string(c, &s);
    }
    for m in d.mappings() {
        let m: MappingDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.build_id());
        c.opt(m.exact_offset());
        c.opt(m.start_offset());
        c.opt(m.start());
        c.opt(m.end());
        c.opt(m.load_bias());
        c.all(m.path_string_ids());
    }
    for m in d.frames() {
        let m: FrameDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.function_name_id());
        c.opt(m.mapping_id());
        c.opt(m.rel_pc());
        c.opt(m.source_path_iid());
        c.opt(m.line_number());
        c.opt(m.kind_raw());
        c.opt(m.kind_str());
    }
    for m in d.callstacks() {
        let m: CallstackDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.all(m.frame_ids());
    }
    for l in d.source_locations() {
        source_location(c, &l);
    }
    for m in d.unsymbolized_source_locations() {
        let m: UnsymbolizedSourceLocationDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.mapping_id());
        c.opt(m.rel_pc());
    }
    for m in d.log_message_body() {
        let m: LogMessageBodyDecoder<'_> = m;
        c.message();
        c.opt(m.iid());
        c.opt(m.body());
    }
    for s in d.kernel_symbols() {
        interned_string(c, &s);
    }
}

fn test_event(c: &mut Checksum, t: &TestEventDecoder<'_>) {
    c.opt(t.str());
    c.opt(t.seq_value());
    c.opt(t.counter());
    c.opt(t.is_last());
    if let Some(p) = t.payload() {
        test_payload(c, &p);
    }
    if let Some(p) = t.protovm_patch() {
        c.message();
        c.opt(p.string_to_merge());
        c.opt(p.int_to_merge());
        if let Some(m) = p.single_message() {
            vm_message(c, &m);
        }
        for m in p.messages() {
            vm_message(c, &m);
        }
        c.all(p.delete_message_ids());
    }
    if let Some(s) = t.protovm_incremental_state() {
        c.message();
        c.opt(s.string_merged());
        c.opt(s.int_merged());
        if let Some(m) = s.single_message() {
            vm_message(c, &m);
        }
        for m in s.messages() {
            vm_message(c, &m);
        }
    }
}

fn test_payload(c: &mut Checksum, p: &TestPayloadDecoder<'_>) {
    c.message();
    c.all(p.str());
    for n in p.nested() {
        test_payload(c, &n);
    }
    c.opt(p.remaining_nesting_depth());
    c.opt(p.single_string());
    c.opt(p.single_int());
    c.all(p.repeated_ints());
    for a in p.debug_annotations() {
        debug_annotation(c, &a);
    }
}

fn vm_message(c: &mut Checksum, m: &ProtoVmMessageDecoder<'_>) {
    c.message();
    c.opt(m.id());
    if let Some(s) = m.submessage() {
        let s: ProtoVmSubmessageDecoder<'_> = s;
        c.message();
        c.opt(s.single_int());
    }
}
