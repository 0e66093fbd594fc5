//! The two tasks with prost: each packet decoded into the owned types of
//! `zerotrace-protos-prost-check` (`String`, `Vec`, `Option`, oneofs as
//! enums), which prost-build generated from the same `protos/proto`; then
//! the fields are read off the structs by the harness every owned decoder
//! shares ([`crate::owned`]). prost checks UTF-8 of every `string` field of
//! the packet while decoding and refuses the packet on invalid UTF-8 or
//! malformed bytes.

use prost::Message as _;
use zerotrace_protos_prost_check::protos::{
    DebugAnnotation, Frame, InternedData, InternedString, SourceLocation, TestEvent, TracePacket,
    TrackEvent,
    debug_annotation::NestedValue,
    test_event::{ProtoVmMessage, TestPayload},
};

use crate::owned::{
    Annotated, AnnotationOneofs, Data, EnumNumber, Located, Owned, PacketOneofs, TrackEventOneofs,
    Value,
};

/// prost's row.
pub struct Prost;

impl Owned for Prost {
    type Packet<'a> = TracePacket;

    fn decode(bytes: &[u8]) -> Option<TracePacket> {
        TracePacket::decode(bytes).ok()
    }
}

/// prost keeps enum fields as their numbers.
impl EnumNumber for i32 {
    fn number(&self) -> i32 {
        *self
    }
}

fn packet_oneofs(p: &TracePacket) -> PacketOneofs<'_, TrackEvent, TestEvent> {
    use zerotrace_protos_prost_check::protos::trace_packet::{
        Data as D, OptionalTrustedPacketSequenceId, OptionalTrustedUid,
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
        trusted_uid: p
            .optional_trusted_uid
            .map(|OptionalTrustedUid::TrustedUid(v)| v),
        trusted_packet_sequence_id: p
            .optional_trusted_packet_sequence_id
            .map(|OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(v)| v),
    }
}

fn track_event_oneofs(e: &TrackEvent) -> TrackEventOneofs<'_, SourceLocation> {
    use zerotrace_protos_prost_check::protos::track_event::{
        CallstackField, CorrelationIdField, CounterValueField, NameField, SourceLocationField,
        ThreadInstructionCount, ThreadTime, Timestamp,
    };
    TrackEventOneofs {
        name: e.name_field.as_ref().map(|f| match f {
            NameField::NameIid(v) => Value::U64(*v),
            NameField::Name(s) => Value::Str(s),
        }),
        counter_value: e.counter_value_field.map(|f| match f {
            CounterValueField::CounterValue(v) => Value::I64(v),
            CounterValueField::DoubleCounterValue(v) => Value::F64(v),
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
        timestamp: e.timestamp.map(|f| match f {
            Timestamp::TimestampDeltaUs(v) | Timestamp::TimestampAbsoluteUs(v) => Value::I64(v),
        }),
        thread_time: e.thread_time.map(|f| match f {
            ThreadTime::ThreadTimeDeltaUs(v) | ThreadTime::ThreadTimeAbsoluteUs(v) => Value::I64(v),
        }),
        thread_instruction_count: e.thread_instruction_count.map(|f| match f {
            ThreadInstructionCount::ThreadInstructionCountDelta(v)
            | ThreadInstructionCount::ThreadInstructionCountAbsolute(v) => Value::I64(v),
        }),
    }
}

fn annotation_oneofs(a: &DebugAnnotation) -> AnnotationOneofs<'_, NestedValue> {
    use zerotrace_protos_prost_check::protos::debug_annotation::{
        NameField, ProtoTypeDescriptor, Value as V,
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
    use zerotrace_protos_prost_check::protos::frame::KindField;
    m.kind_field.as_ref().map(|f| match f {
        KindField::Kind(v) => Value::I32(*v),
        KindField::KindStr(s) => Value::Str(s),
    })
}

crate::owned::visits! {
    row: Prost,
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
    fields: { str: str, type: r#type },
    oneofs: {
        packet: packet_oneofs,
        track_event: track_event_oneofs,
        annotation: annotation_oneofs,
        frame_kind: frame_kind,
    },
}
