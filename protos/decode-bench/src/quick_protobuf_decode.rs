//! The two tasks with quick-protobuf: each packet decoded into the types
//! pb-rs generated from `protos/proto` (see `build.rs`), which borrow their
//! strings and bytes from the packet (`Cow::Borrowed`) but own their
//! vectors and nested messages; then the fields are read off the structs.
//! quick-protobuf checks UTF-8 of every `string` field of the packet while
//! decoding and refuses the packet on invalid UTF-8 or malformed bytes.

use quick_protobuf::{BytesReader, MessageRead};

use crate::Checksum;
use crate::generated::quick_protobuf::perfetto::protos::{
    DebugAnnotation, InternedData, InternedString, SourceLocation, TestEvent, TracePacket,
    TrackEvent,
    mod_DebugAnnotation::{self, NestedValue},
    mod_Frame,
    mod_TestEvent::{ProtoVmMessage, TestPayload},
    mod_TracePacket, mod_TrackEvent,
};

/// Decodes one packet (the whole of `bytes`).
fn decode(bytes: &[u8]) -> Option<TracePacket<'_>> {
    let mut reader = BytesReader::from_bytes(bytes);
    TracePacket::from_reader(&mut reader, bytes).ok()
}

/// The full task: every field of every packet (see the crate docs).
pub fn full(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        if let Some(p) = decode(p) {
            packet(&mut c, &p);
        }
    }
    c.0
}

/// The lazy task: each packet's timestamp and its TrackEvent's name.
pub fn lazy(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        let Some(p) = decode(p) else {
            continue;
        };
        c.opt(p.timestamp);
        if let mod_TracePacket::OneOfdata::track_event(e) = &p.data {
            match &e.name_field {
                mod_TrackEvent::OneOfname_field::name_iid(iid) => c.add(*iid),
                mod_TrackEvent::OneOfname_field::name(name) => c.add(name.as_ref()),
                mod_TrackEvent::OneOfname_field::None => {}
            }
        }
    }
    c.0
}

fn packet(c: &mut Checksum, p: &TracePacket<'_>) {
    use mod_TracePacket::OneOfdata as Data;
    c.opt(p.timestamp);
    c.opt(p.timestamp_clock_id);
    match &p.data {
        Data::track_event(e) => {
            c.message();
            track_event(c, e);
        }
        Data::synchronization_marker(b)
        | Data::compressed_packets(b)
        | Data::zstd_compressed_packets(b) => c.add(b.as_ref()),
        Data::for_testing(t) => {
            c.message();
            test_event(c, t);
        }
        Data::None => {}
        _ => c.message(),
    }
    if let mod_TracePacket::OneOfoptional_trusted_uid::trusted_uid(v) = p.optional_trusted_uid {
        c.add(v);
    }
    if let mod_TracePacket::OneOfoptional_trusted_packet_sequence_id::trusted_packet_sequence_id(
        v,
    ) = p.optional_trusted_packet_sequence_id
    {
        c.add(v);
    }
    c.opt(p.trusted_pid);
    if let Some(d) = &p.interned_data {
        c.message();
        interned_data(c, d);
    }
    c.opt(p.sequence_flags);
    c.opt(p.incremental_state_cleared);
    c.message_if(p.trace_packet_defaults.is_some());
    c.opt(p.previous_packet_dropped);
    c.opt(p.first_packet_on_sequence);
    c.opt(p.machine_id);
}

#[allow(deprecated)] // flow_ids_old and terminating_flow_ids_old
fn track_event(c: &mut Checksum, e: &TrackEvent<'_>) {
    use mod_TrackEvent::{
        OneOfcallstack_field as CallstackField, OneOfcorrelation_id_field as CorrelationIdField,
        OneOfcounter_value_field as CounterValueField, OneOfname_field as NameField,
        OneOfsource_location_field as SourceLocationField,
        OneOfthread_instruction_count as ThreadInstructionCount, OneOfthread_time as ThreadTime,
        OneOftimestamp as Timestamp,
    };
    c.all(e.category_iids.iter().copied());
    c.all(e.categories.iter().map(AsRef::as_ref));
    match &e.name_field {
        NameField::name_iid(v) => c.add(*v),
        NameField::name(s) => c.add(s.as_ref()),
        NameField::None => {}
    }
    c.opt(e.type_pb.map(|t| t as i32));
    c.opt(e.track_uuid);
    match e.counter_value_field {
        CounterValueField::counter_value(v) => c.add(v),
        CounterValueField::double_counter_value(v) => c.add(v),
        CounterValueField::None => {}
    }
    c.all(e.extra_counter_track_uuids.iter().copied());
    c.all(e.extra_counter_values.iter().copied());
    c.all(e.extra_double_counter_track_uuids.iter().copied());
    c.all(e.extra_double_counter_values.iter().copied());
    c.all(e.flow_ids_old.iter().copied());
    c.all(e.flow_ids.iter().copied());
    c.all(e.terminating_flow_ids_old.iter().copied());
    c.all(e.terminating_flow_ids.iter().copied());
    match &e.correlation_id_field {
        CorrelationIdField::correlation_id(v) | CorrelationIdField::correlation_id_str_iid(v) => {
            c.add(*v)
        }
        CorrelationIdField::correlation_id_str(s) => c.add(s.as_ref()),
        CorrelationIdField::None => {}
    }
    match &e.callstack_field {
        CallstackField::callstack(_) => c.message(),
        CallstackField::callstack_iid(v) => c.add(*v),
        CallstackField::None => {}
    }
    c.opt(e.callstack_weight);
    for a in &e.debug_annotations {
        debug_annotation(c, a);
    }
    c.message_if(e.task_execution.is_some());
    c.message_if(e.log_message.is_some());
    match &e.source_location_field {
        SourceLocationField::source_location(l) => source_location(c, l),
        SourceLocationField::source_location_iid(v) => c.add(*v),
        SourceLocationField::None => {}
    }
    match e.timestamp {
        Timestamp::timestamp_delta_us(v) | Timestamp::timestamp_absolute_us(v) => c.add(v),
        Timestamp::None => {}
    }
    match e.thread_time {
        ThreadTime::thread_time_delta_us(v) | ThreadTime::thread_time_absolute_us(v) => c.add(v),
        ThreadTime::None => {}
    }
    match e.thread_instruction_count {
        ThreadInstructionCount::thread_instruction_count_delta(v)
        | ThreadInstructionCount::thread_instruction_count_absolute(v) => c.add(v),
        ThreadInstructionCount::None => {}
    }
    c.message_if(e.legacy_event.is_some());
}

fn debug_annotation(c: &mut Checksum, a: &DebugAnnotation<'_>) {
    use mod_DebugAnnotation::{
        OneOfname_field as NameField, OneOfproto_type_descriptor as ProtoTypeDescriptor,
        OneOfvalue as Value,
    };
    c.message();
    match &a.name_field {
        NameField::name_iid(v) => c.add(*v),
        NameField::name(s) => c.add(s.as_ref()),
        NameField::None => {}
    }
    match &a.value {
        Value::bool_value(v) => c.add(*v),
        Value::uint_value(v) | Value::pointer_value(v) | Value::string_value_iid(v) => c.add(*v),
        Value::int_value(v) => c.add(*v),
        Value::double_value(v) => c.add(*v),
        Value::nested_value(n) => nested_value(c, n),
        Value::legacy_json_value(s) | Value::string_value(s) => c.add(s.as_ref()),
        Value::None => {}
    }
    match &a.proto_type_descriptor {
        ProtoTypeDescriptor::proto_type_name(s) => c.add(s.as_ref()),
        ProtoTypeDescriptor::proto_type_name_iid(v) => c.add(*v),
        ProtoTypeDescriptor::None => {}
    }
    c.opt(a.proto_value.as_deref());
    for d in &a.dict_entries {
        debug_annotation(c, d);
    }
    for v in &a.array_values {
        debug_annotation(c, v);
    }
}

fn nested_value(c: &mut Checksum, n: &NestedValue<'_>) {
    c.message();
    c.opt(n.nested_type.map(|t| t as i32));
    c.all(n.dict_keys.iter().map(AsRef::as_ref));
    for v in &n.dict_values {
        nested_value(c, v);
    }
    for v in &n.array_values {
        nested_value(c, v);
    }
    c.opt(n.int_value);
    c.opt(n.double_value);
    c.opt(n.bool_value);
    c.opt(n.string_value.as_deref());
}

fn source_location(c: &mut Checksum, l: &SourceLocation<'_>) {
    c.message();
    c.opt(l.iid);
    c.opt(l.file_name.as_deref());
    c.opt(l.function_name.as_deref());
    c.opt(l.line_number);
}

fn interned_string(c: &mut Checksum, s: &InternedString<'_>) {
    c.message();
    c.opt(s.iid);
    c.opt(s.str_pb.as_deref());
}

/// An interning table entry made of an iid and a name.
fn iid_name(c: &mut Checksum, iid: Option<u64>, name: Option<&str>) {
    c.message();
    c.opt(iid);
    c.opt(name);
}

fn interned_data(c: &mut Checksum, d: &InternedData<'_>) {
    for m in &d.event_categories {
        iid_name(c, m.iid, m.name.as_deref());
    }
    for m in &d.event_names {
        iid_name(c, m.iid, m.name.as_deref());
    }
    for m in &d.debug_annotation_names {
        iid_name(c, m.iid, m.name.as_deref());
    }
    for m in &d.debug_annotation_value_type_names {
        iid_name(c, m.iid, m.name.as_deref());
    }
    for table in [
        &d.debug_annotation_string_values,
        &d.correlation_id_str,
        &d.build_ids,
        &d.mapping_paths,
        &d.source_paths,
        &d.function_names,
    ] {
        for s in table {
            interned_string(c, s);
        }
    }
    for m in &d.mappings {
        c.message();
        c.opt(m.iid);
        c.opt(m.build_id);
        c.opt(m.exact_offset);
        c.opt(m.start_offset);
        c.opt(m.start);
        c.opt(m.end);
        c.opt(m.load_bias);
        c.all(m.path_string_ids.iter().copied());
    }
    for m in &d.frames {
        c.message();
        c.opt(m.iid);
        c.opt(m.function_name_id);
        c.opt(m.mapping_id);
        c.opt(m.rel_pc);
        c.opt(m.source_path_iid);
        c.opt(m.line_number);
        match &m.kind_field {
            mod_Frame::OneOfkind_field::kind(k) => c.add(*k as i32),
            mod_Frame::OneOfkind_field::kind_str(s) => c.add(s.as_ref()),
            mod_Frame::OneOfkind_field::None => {}
        }
    }
    for m in &d.callstacks {
        c.message();
        c.opt(m.iid);
        c.all(m.frame_ids.iter().copied());
    }
    for l in &d.source_locations {
        source_location(c, l);
    }
    for m in &d.unsymbolized_source_locations {
        c.message();
        c.opt(m.iid);
        c.opt(m.mapping_id);
        c.opt(m.rel_pc);
    }
    for m in &d.log_message_body {
        iid_name(c, m.iid, m.body.as_deref());
    }
    for s in &d.kernel_symbols {
        interned_string(c, s);
    }
}

fn test_event(c: &mut Checksum, t: &TestEvent<'_>) {
    c.opt(t.str_pb.as_deref());
    c.opt(t.seq_value);
    c.opt(t.counter);
    c.opt(t.is_last);
    if let Some(p) = &t.payload {
        test_payload(c, p);
    }
    if let Some(p) = &t.protovm_patch {
        c.message();
        c.opt(p.string_to_merge.as_deref());
        c.opt(p.int_to_merge);
        if let Some(m) = &p.single_message {
            vm_message(c, m);
        }
        for m in &p.messages {
            vm_message(c, m);
        }
        c.all(p.delete_message_ids.iter().copied());
    }
    if let Some(s) = &t.protovm_incremental_state {
        c.message();
        c.opt(s.string_merged.as_deref());
        c.opt(s.int_merged);
        if let Some(m) = &s.single_message {
            vm_message(c, m);
        }
        for m in &s.messages {
            vm_message(c, m);
        }
    }
}

fn test_payload(c: &mut Checksum, p: &TestPayload<'_>) {
    c.message();
    c.all(p.str_pb.iter().map(|s| s.as_ref()));
    for n in &p.nested {
        test_payload(c, n);
    }
    c.opt(p.remaining_nesting_depth);
    c.opt(p.single_string.as_deref());
    c.opt(p.single_int);
    c.all(p.repeated_ints.iter().copied());
    for a in &p.debug_annotations {
        debug_annotation(c, a);
    }
}

fn vm_message(c: &mut Checksum, m: &ProtoVmMessage) {
    c.message();
    c.opt(m.id);
    if let Some(s) = &m.submessage {
        c.message();
        c.opt(s.single_int);
    }
}
