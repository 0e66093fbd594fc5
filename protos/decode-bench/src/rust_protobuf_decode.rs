//! The two tasks with rust-protobuf 3: each packet parsed
//! (`Message::parse_from_bytes`) into the owned types protobuf-codegen
//! generated from `protos/proto` with its pure-Rust parser (see
//! `build.rs`); then the fields are read off the structs by the harness
//! every owned decoder shares ([`crate::owned`]). rust-protobuf checks UTF-8
//! of every `string` field of the packet while parsing and refuses the
//! packet on invalid UTF-8 or malformed bytes.

use protobuf::Message as _;

use crate::generated::rust_protobuf::{
    debug_annotation::{DebugAnnotation, debug_annotation::NestedValue},
    interned_data::InternedData,
    profile_common::{Frame, InternedString},
    source_location::SourceLocation,
    test_event::{
        TestEvent,
        test_event::{ProtoVmMessage, TestPayload},
    },
    trace_packet::TracePacket,
    track_event::TrackEvent,
};
use crate::owned::{
    Annotated, AnnotationOneofs, Data, EnumNumber, Located, Owned, PacketOneofs, TrackEventOneofs,
    Value,
};

/// rust-protobuf's row.
pub struct RustProtobuf;

impl Owned for RustProtobuf {
    type Packet<'a> = TracePacket;

    fn decode(bytes: &[u8]) -> Option<TracePacket> {
        TracePacket::parse_from_bytes(bytes).ok()
    }
}

/// rust-protobuf keeps an enum field as `EnumOrUnknown`, its number kept
/// whether or not the enum names it.
impl<E: protobuf::Enum> EnumNumber for protobuf::EnumOrUnknown<E> {
    fn number(&self) -> i32 {
        self.value()
    }
}

fn packet_oneofs(p: &TracePacket) -> PacketOneofs<'_, TrackEvent, TestEvent> {
    use crate::generated::rust_protobuf::trace_packet::trace_packet::{
        Data as D, Optional_trusted_packet_sequence_id as SequenceId, Optional_trusted_uid as Uid,
    };
    PacketOneofs {
        data: p.data.as_ref().map(|d| match d {
            D::TrackEvent(e) => Data::TrackEvent(e),
            D::ForTesting(t) => Data::ForTesting(t),
            D::SynchronizationMarker(b) | D::CompressedPackets(b) | D::ZstdCompressedPackets(b) => {
                Data::Other(Value::Bytes(b))
            }
            _ => Data::Other(Value::Message),
        }),
        trusted_uid: p.optional_trusted_uid.as_ref().map(|Uid::TrustedUid(v)| *v),
        trusted_packet_sequence_id: p
            .optional_trusted_packet_sequence_id
            .as_ref()
            .map(|SequenceId::TrustedPacketSequenceId(v)| *v),
    }
}

fn track_event_oneofs(e: &TrackEvent) -> TrackEventOneofs<'_, SourceLocation> {
    use crate::generated::rust_protobuf::track_event::track_event::{
        Callstack_field as CallstackField, Correlation_id_field as CorrelationIdField,
        Counter_value_field as CounterValueField, Name_field as NameField,
        Source_location_field as SourceLocationField,
        Thread_instruction_count as ThreadInstructionCount, Thread_time as ThreadTime, Timestamp,
    };
    TrackEventOneofs {
        name: e.name_field.as_ref().map(|f| match f {
            NameField::NameIid(v) => Value::U64(*v),
            NameField::Name(s) => Value::Str(s),
        }),
        counter_value: e.counter_value_field.as_ref().map(|f| match f {
            CounterValueField::CounterValue(v) => Value::I64(*v),
            CounterValueField::DoubleCounterValue(v) => Value::F64(*v),
        }),
        correlation_id: e.correlation_id_field.as_ref().map(|f| match f {
            CorrelationIdField::CorrelationId(v) | CorrelationIdField::CorrelationIdStrIid(v) => {
                Value::U64(*v)
            }
            CorrelationIdField::CorrelationIdStr(s) => Value::Str(s),
        }),
        callstack: e.callstack_field.as_ref().map(|f| match f {
            CallstackField::Callstack(_) => Value::Message,
            CallstackField::CallstackIid(v) => Value::U64(*v),
        }),
        source_location: e.source_location_field.as_ref().map(|f| match f {
            SourceLocationField::SourceLocation(l) => Located::Message(l),
            SourceLocationField::SourceLocationIid(v) => Located::Iid(*v),
        }),
        timestamp: e.timestamp.as_ref().map(|f| match f {
            Timestamp::TimestampDeltaUs(v) | Timestamp::TimestampAbsoluteUs(v) => Value::I64(*v),
        }),
        thread_time: e.thread_time.as_ref().map(|f| match f {
            ThreadTime::ThreadTimeDeltaUs(v) | ThreadTime::ThreadTimeAbsoluteUs(v) => {
                Value::I64(*v)
            }
        }),
        thread_instruction_count: e.thread_instruction_count.as_ref().map(|f| match f {
            ThreadInstructionCount::ThreadInstructionCountDelta(v)
            | ThreadInstructionCount::ThreadInstructionCountAbsolute(v) => Value::I64(*v),
        }),
    }
}

fn annotation_oneofs(a: &DebugAnnotation) -> AnnotationOneofs<'_, NestedValue> {
    use crate::generated::rust_protobuf::debug_annotation::debug_annotation::{
        Name_field as NameField, Proto_type_descriptor as ProtoTypeDescriptor, Value as V,
    };
    AnnotationOneofs {
        name: a.name_field.as_ref().map(|f| match f {
            NameField::NameIid(v) => Value::U64(*v),
            NameField::Name(s) => Value::Str(s),
        }),
        value: a.value.as_ref().map(|v| match v {
            V::NestedValue(n) => Annotated::Nested(n),
            V::BoolValue(v) => Annotated::Value(Value::Bool(*v)),
            V::UintValue(v) | V::PointerValue(v) | V::StringValueIid(v) => {
                Annotated::Value(Value::U64(*v))
            }
            V::IntValue(v) => Annotated::Value(Value::I64(*v)),
            V::DoubleValue(v) => Annotated::Value(Value::F64(*v)),
            V::LegacyJsonValue(s) | V::StringValue(s) => Annotated::Value(Value::Str(s)),
        }),
        proto_type: a.proto_type_descriptor.as_ref().map(|f| match f {
            ProtoTypeDescriptor::ProtoTypeName(s) => Value::Str(s),
            ProtoTypeDescriptor::ProtoTypeNameIid(v) => Value::U64(*v),
        }),
    }
}

fn frame_kind(m: &Frame) -> Option<Value<'_>> {
    use crate::generated::rust_protobuf::profile_common::frame::Kind_field;
    m.kind_field.as_ref().map(|f| match f {
        Kind_field::Kind(v) => Value::I32(v.value()),
        Kind_field::KindStr(s) => Value::Str(s),
    })
}

crate::owned::visits! {
    row: RustProtobuf,
    types: {
        TracePacket: TracePacket,
        TrackEvent: TrackEvent,
        DebugAnnotation: DebugAnnotation,
        NestedValue: NestedValue,
        SourceLocation: SourceLocation,
        InternedData: InternedData,
        InternedString: InternedString,
        TestEvent: TestEvent,
        TestPayload: TestPayload,
        ProtoVmMessage: ProtoVmMessage,
    },
    fields: { str: str, type: type_ },
    oneofs: {
        packet: packet_oneofs,
        track_event: track_event_oneofs,
        annotation: annotation_oneofs,
        frame_kind: frame_kind,
    },
}
