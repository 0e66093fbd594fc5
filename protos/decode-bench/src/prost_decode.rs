//! The two tasks with prost: each packet decoded into the owned types of
//! `zerotrace-protos-prost-check` (`String`, `Vec`, `Option`, oneofs as
//! enums), which prost-build generated from the same `protos/proto`; then
//! the fields are read off the structs. prost checks UTF-8 of every
//! `string` field of the packet while decoding and refuses the packet on
//! invalid UTF-8 or malformed bytes.

use prost::Message as _;
use zerotrace_protos_prost_check::protos::{
    DebugAnnotation, InternedData, InternedString, SourceLocation, TestEvent, TracePacket,
    TrackEvent,
    debug_annotation::{self, NestedValue},
    frame,
    test_event::{ProtoVmMessage, TestPayload},
    trace_packet, track_event,
};

use crate::Checksum;

/// The full task: every field of every packet (see the crate docs).
pub fn full(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        if let Ok(p) = TracePacket::decode(*p) {
            packet(&mut c, &p);
        }
    }
    c.0
}

/// The lazy task: each packet's timestamp and its TrackEvent's name.
pub fn lazy(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        let Ok(p) = TracePacket::decode(*p) else {
            continue;
        };
        c.opt(p.timestamp);
        if let Some(trace_packet::Data::TrackEvent(e)) = &p.data {
            match &e.name_field {
                Some(track_event::NameField::NameIid(iid)) => c.add(*iid),
                Some(track_event::NameField::Name(name)) => c.add(name.as_str()),
                None => {}
            }
        }
    }
    c.0
}

fn packet(c: &mut Checksum, p: &TracePacket) {
    use trace_packet::Data;
    c.opt(p.timestamp);
    c.opt(p.timestamp_clock_id);
    match &p.data {
        Some(Data::TrackEvent(e)) => {
            c.message();
            track_event(c, e);
        }
        Some(
            Data::SynchronizationMarker(b)
            | Data::CompressedPackets(b)
            | Data::ZstdCompressedPackets(b),
        ) => c.add(b.as_slice()),
        Some(Data::ForTesting(t)) => {
            c.message();
            test_event(c, t);
        }
        Some(_) => c.message(),
        None => {}
    }
    if let Some(trace_packet::OptionalTrustedUid::TrustedUid(v)) = p.optional_trusted_uid {
        c.add(v);
    }
    if let Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(v)) =
        p.optional_trusted_packet_sequence_id
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
fn track_event(c: &mut Checksum, e: &TrackEvent) {
    use track_event::{
        CallstackField, CorrelationIdField, CounterValueField, NameField, SourceLocationField,
        ThreadInstructionCount, ThreadTime, Timestamp,
    };
    c.all(e.category_iids.iter().copied());
    c.all(e.categories.iter().map(String::as_str));
    match &e.name_field {
        Some(NameField::NameIid(v)) => c.add(*v),
        Some(NameField::Name(s)) => c.add(s.as_str()),
        None => {}
    }
    c.opt(e.r#type);
    c.opt(e.track_uuid);
    match e.counter_value_field {
        Some(CounterValueField::CounterValue(v)) => c.add(v),
        Some(CounterValueField::DoubleCounterValue(v)) => c.add(v),
        None => {}
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
        Some(CorrelationIdField::CorrelationId(v) | CorrelationIdField::CorrelationIdStrIid(v)) => {
            c.add(*v)
        }
        Some(CorrelationIdField::CorrelationIdStr(s)) => c.add(s.as_str()),
        None => {}
    }
    match &e.callstack_field {
        Some(CallstackField::Callstack(_)) => c.message(),
        Some(CallstackField::CallstackIid(v)) => c.add(*v),
        None => {}
    }
    c.opt(e.callstack_weight);
    for a in &e.debug_annotations {
        debug_annotation(c, a);
    }
    c.message_if(e.task_execution.is_some());
    c.message_if(e.log_message.is_some());
    match &e.source_location_field {
        Some(SourceLocationField::SourceLocation(l)) => source_location(c, l),
        Some(SourceLocationField::SourceLocationIid(v)) => c.add(*v),
        None => {}
    }
    match e.timestamp {
        Some(Timestamp::TimestampDeltaUs(v) | Timestamp::TimestampAbsoluteUs(v)) => c.add(v),
        None => {}
    }
    match e.thread_time {
        Some(ThreadTime::ThreadTimeDeltaUs(v) | ThreadTime::ThreadTimeAbsoluteUs(v)) => c.add(v),
        None => {}
    }
    match e.thread_instruction_count {
        Some(
            ThreadInstructionCount::ThreadInstructionCountDelta(v)
            | ThreadInstructionCount::ThreadInstructionCountAbsolute(v),
        ) => c.add(v),
        None => {}
    }
    c.message_if(e.legacy_event.is_some());
}

fn debug_annotation(c: &mut Checksum, a: &DebugAnnotation) {
    use debug_annotation::{NameField, ProtoTypeDescriptor, Value};
    c.message();
    match &a.name_field {
        Some(NameField::NameIid(v)) => c.add(*v),
        Some(NameField::Name(s)) => c.add(s.as_str()),
        None => {}
    }
    match &a.value {
        Some(Value::BoolValue(v)) => c.add(*v),
        Some(Value::UintValue(v) | Value::PointerValue(v) | Value::StringValueIid(v)) => c.add(*v),
        Some(Value::IntValue(v)) => c.add(*v),
        Some(Value::DoubleValue(v)) => c.add(*v),
        Some(Value::NestedValue(n)) => nested_value(c, n),
        Some(Value::LegacyJsonValue(s) | Value::StringValue(s)) => c.add(s.as_str()),
        None => {}
    }
    match &a.proto_type_descriptor {
        Some(ProtoTypeDescriptor::ProtoTypeName(s)) => c.add(s.as_str()),
        Some(ProtoTypeDescriptor::ProtoTypeNameIid(v)) => c.add(*v),
        None => {}
    }
    c.opt(a.proto_value.as_deref());
    for d in &a.dict_entries {
        debug_annotation(c, d);
    }
    for v in &a.array_values {
        debug_annotation(c, v);
    }
}

fn nested_value(c: &mut Checksum, n: &NestedValue) {
    c.message();
    c.opt(n.nested_type);
    c.all(n.dict_keys.iter().map(String::as_str));
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

fn source_location(c: &mut Checksum, l: &SourceLocation) {
    c.message();
    c.opt(l.iid);
    c.opt(l.file_name.as_deref());
    c.opt(l.function_name.as_deref());
    c.opt(l.line_number);
}

fn interned_string(c: &mut Checksum, s: &InternedString) {
    c.message();
    c.opt(s.iid);
    c.opt(s.str.as_deref());
}

/// An interning table entry made of an iid and a name.
fn iid_name(c: &mut Checksum, iid: Option<u64>, name: Option<&str>) {
    c.message();
    c.opt(iid);
    c.opt(name);
}

fn interned_data(c: &mut Checksum, d: &InternedData) {
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
            Some(frame::KindField::Kind(v)) => c.add(*v),
            Some(frame::KindField::KindStr(s)) => c.add(s.as_str()),
            None => {}
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

fn test_event(c: &mut Checksum, t: &TestEvent) {
    c.opt(t.str.as_deref());
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

fn test_payload(c: &mut Checksum, p: &TestPayload) {
    c.message();
    c.all(p.str.iter().map(String::as_str));
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
