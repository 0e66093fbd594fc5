//! The two tasks with quick-protobuf: each packet decoded into the types
//! pb-rs generated from `protos/proto` (see `build.rs`), which borrow their
//! strings and bytes from the packet (`Cow::Borrowed`) but own their
//! vectors and nested messages; then the fields are read off the structs by
//! the harness every owned decoder shares ([`crate::owned`]).
//! quick-protobuf checks UTF-8 of every `string` field of the packet while
//! decoding and refuses the packet on invalid UTF-8 or malformed bytes.

use quick_protobuf::{BytesReader, MessageRead};

use crate::generated::quick_protobuf::perfetto::protos::{
    DebugAnnotation, Frame, InternedData, InternedString, SourceLocation, TestEvent, TracePacket,
    TrackEvent,
    mod_DebugAnnotation::{self, NestedValue},
    mod_Frame,
    mod_TestEvent::{ProtoVmMessage, TestPayload},
    mod_TracePacket, mod_TrackEvent,
};
use crate::owned::{
    Annotated, AnnotationOneofs, Data, EnumNumber, Located, Owned, PacketOneofs, TrackEventOneofs,
    Value,
};

/// quick-protobuf's row.
pub struct QuickProtobuf;

impl Owned for QuickProtobuf {
    type Packet<'a> = TracePacket<'a>;

    fn decode(bytes: &[u8]) -> Option<TracePacket<'_>> {
        let mut reader = BytesReader::from_bytes(bytes);
        TracePacket::from_reader(&mut reader, bytes).ok()
    }
}

impl EnumNumber for mod_TrackEvent::Type {
    fn number(&self) -> i32 {
        *self as i32
    }
}

impl EnumNumber for mod_DebugAnnotation::mod_NestedValue::NestedType {
    fn number(&self) -> i32 {
        *self as i32
    }
}

fn packet_oneofs<'p, 'b>(
    p: &'p TracePacket<'b>,
) -> PacketOneofs<'p, TrackEvent<'b>, TestEvent<'b>> {
    use mod_TracePacket::{
        OneOfdata as D, OneOfoptional_trusted_packet_sequence_id as SequenceId,
        OneOfoptional_trusted_uid as Uid,
    };
    PacketOneofs {
        data: match &p.data {
            D::track_event(e) => Some(Data::TrackEvent(e)),
            D::for_testing(t) => Some(Data::ForTesting(t)),
            D::synchronization_marker(b)
            | D::compressed_packets(b)
            | D::zstd_compressed_packets(b) => Some(Data::Other(Value::Bytes(b))),
            D::None => None,
            _ => Some(Data::Other(Value::Message)),
        },
        trusted_uid: match p.optional_trusted_uid {
            Uid::trusted_uid(v) => Some(v),
            Uid::None => None,
        },
        trusted_packet_sequence_id: match p.optional_trusted_packet_sequence_id {
            SequenceId::trusted_packet_sequence_id(v) => Some(v),
            SequenceId::None => None,
        },
    }
}

fn track_event_oneofs<'p, 'b>(e: &'p TrackEvent<'b>) -> TrackEventOneofs<'p, SourceLocation<'b>> {
    use mod_TrackEvent::{
        OneOfcallstack_field as CallstackField, OneOfcorrelation_id_field as CorrelationIdField,
        OneOfcounter_value_field as CounterValueField, OneOfname_field as NameField,
        OneOfsource_location_field as SourceLocationField,
        OneOfthread_instruction_count as ThreadInstructionCount, OneOfthread_time as ThreadTime,
        OneOftimestamp as Timestamp,
    };
    TrackEventOneofs {
        name: match &e.name_field {
            NameField::name_iid(v) => Some(Value::U64(*v)),
            NameField::name(s) => Some(Value::Str(s)),
            NameField::None => None,
        },
        counter_value: match e.counter_value_field {
            CounterValueField::counter_value(v) => Some(Value::I64(v)),
            CounterValueField::double_counter_value(v) => Some(Value::F64(v)),
            CounterValueField::None => None,
        },
        correlation_id: match &e.correlation_id_field {
            CorrelationIdField::correlation_id(v)
            | CorrelationIdField::correlation_id_str_iid(v) => Some(Value::U64(*v)),
            CorrelationIdField::correlation_id_str(s) => Some(Value::Str(s)),
            CorrelationIdField::None => None,
        },
        callstack: match &e.callstack_field {
            CallstackField::callstack(_) => Some(Value::Message),
            CallstackField::callstack_iid(v) => Some(Value::U64(*v)),
            CallstackField::None => None,
        },
        source_location: match &e.source_location_field {
            SourceLocationField::source_location(l) => Some(Located::Message(l)),
            SourceLocationField::source_location_iid(v) => Some(Located::Iid(*v)),
            SourceLocationField::None => None,
        },
        timestamp: match e.timestamp {
            Timestamp::timestamp_delta_us(v) | Timestamp::timestamp_absolute_us(v) => {
                Some(Value::I64(v))
            }
            Timestamp::None => None,
        },
        thread_time: match e.thread_time {
            ThreadTime::thread_time_delta_us(v) | ThreadTime::thread_time_absolute_us(v) => {
                Some(Value::I64(v))
            }
            ThreadTime::None => None,
        },
        thread_instruction_count: match e.thread_instruction_count {
            ThreadInstructionCount::thread_instruction_count_delta(v)
            | ThreadInstructionCount::thread_instruction_count_absolute(v) => Some(Value::I64(v)),
            ThreadInstructionCount::None => None,
        },
    }
}

fn annotation_oneofs<'p, 'b>(a: &'p DebugAnnotation<'b>) -> AnnotationOneofs<'p, NestedValue<'b>> {
    use mod_DebugAnnotation::{
        OneOfname_field as NameField, OneOfproto_type_descriptor as ProtoTypeDescriptor,
        OneOfvalue as V,
    };
    AnnotationOneofs {
        name: match &a.name_field {
            NameField::name_iid(v) => Some(Value::U64(*v)),
            NameField::name(s) => Some(Value::Str(s)),
            NameField::None => None,
        },
        value: match &a.value {
            V::nested_value(n) => Some(Annotated::Nested(n)),
            V::bool_value(v) => Some(Annotated::Value(Value::Bool(*v))),
            V::uint_value(v) | V::pointer_value(v) | V::string_value_iid(v) => {
                Some(Annotated::Value(Value::U64(*v)))
            }
            V::int_value(v) => Some(Annotated::Value(Value::I64(*v))),
            V::double_value(v) => Some(Annotated::Value(Value::F64(*v))),
            V::legacy_json_value(s) | V::string_value(s) => Some(Annotated::Value(Value::Str(s))),
            V::None => None,
        },
        proto_type: match &a.proto_type_descriptor {
            ProtoTypeDescriptor::proto_type_name(s) => Some(Value::Str(s)),
            ProtoTypeDescriptor::proto_type_name_iid(v) => Some(Value::U64(*v)),
            ProtoTypeDescriptor::None => None,
        },
    }
}

fn frame_kind<'p>(m: &'p Frame<'_>) -> Option<Value<'p>> {
    match &m.kind_field {
        mod_Frame::OneOfkind_field::kind(k) => Some(Value::I32(*k as i32)),
        mod_Frame::OneOfkind_field::kind_str(s) => Some(Value::Str(s)),
        mod_Frame::OneOfkind_field::None => None,
    }
}

crate::owned::visits! {
    row: QuickProtobuf,
    types: {
        TracePacket: TracePacket<'_>,
        TrackEvent: TrackEvent<'_>,
        DebugAnnotation: DebugAnnotation<'_>,
        NestedValue: NestedValue<'_>,
        SourceLocation: SourceLocation<'_>,
        InternedData: InternedData<'_>,
        InternedString: InternedString<'_>,
        TestEvent: TestEvent<'_>,
        TestPayload: TestPayload<'_>,
        ProtoVmMessage: ProtoVmMessage,
    },
    fields: { str: str_pb, type: type_pb },
    oneofs: {
        packet: packet_oneofs,
        track_event: track_event_oneofs,
        annotation: annotation_oneofs,
        frame_kind: frame_kind,
    },
}
