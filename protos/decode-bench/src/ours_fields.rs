//! The two tasks with zerotrace's generated field enums (`TracePacketField`,
//! `TrackEventField`, ...): each message visited in one scan, its fields
//! handed over typed in wire order and matched, nested messages read only
//! where the task reads them. The same values as `ours.rs` reaches through
//! the decoders' accessors, so the checksums agree.

use zerotrace_protos::protos::debug_annotation::{NestedValueDecoder, NestedValueField};
use zerotrace_protos::protos::test_event::proto_vm_message::ProtoVmSubmessageField;
use zerotrace_protos::protos::test_event::{
    ProtoVmIncrementalStateField, ProtoVmMessageDecoder, ProtoVmMessageField, ProtoVmPatchField,
    TestPayloadDecoder, TestPayloadField,
};
use zerotrace_protos::protos::{
    CallstackField, DebugAnnotationDecoder, DebugAnnotationField, DebugAnnotationNameField,
    DebugAnnotationValueTypeNameField, EventCategoryField, EventNameField, FrameField,
    InternedDataDecoder, InternedDataField, InternedStringDecoder, InternedStringField,
    LogMessageBodyField, MappingField, SourceLocationDecoder, SourceLocationField,
    TestEventDecoder, TestEventField, TracePacketField, TrackEventDecoder, TrackEventField,
    UnsymbolizedSourceLocationField,
};

use crate::Checksum;
use protozero::Lazy;

/// The full task: every field of every packet (see the crate docs).
pub fn full(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        packet(&mut c, p);
    }
    c.0
}

/// The lazy task: each packet's timestamp and its TrackEvent's name.
pub fn lazy(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        for f in TracePacketField::read(p) {
            match f {
                TracePacketField::Timestamp(t) => c.add(t),
                TracePacketField::TrackEvent(e) => {
                    let (mut iid, mut name) = (None, None);
                    for f in e.fields() {
                        match f {
                            TrackEventField::NameIid(v) => iid = Some(v),
                            TrackEventField::Name(v) => name = Some(v),
                            _ => {}
                        }
                    }
                    match iid {
                        Some(iid) => c.add(iid),
                        None => c.opt(name),
                    }
                }
                _ => {}
            }
        }
    }
    c.0
}

fn packet(c: &mut Checksum, bytes: &[u8]) {
    use TracePacketField as F;
    for f in TracePacketField::read(bytes) {
        match f {
            F::Timestamp(v) => c.add(v),
            F::TimestampClockId(v) => c.add(v),
            F::TrackEvent(e) => {
                c.message();
                track_event(c, e);
            }
            F::InternedData(d) => {
                c.message();
                interned_data(c, d);
            }
            F::TrackDescriptor(_)
            | F::ClockSnapshot(_)
            | F::TraceUuid(_)
            | F::TraceConfig(_)
            | F::TraceStats(_)
            | F::SystemInfo(_)
            | F::Trigger(_)
            | F::ServiceEvent(_)
            | F::TraceProvenance(_)
            | F::Protovms(_)
            | F::TraceAttributes(_)
            | F::ProcessDescriptor(_)
            | F::ThreadDescriptor(_)
            | F::CloneSnapshotTrigger(_)
            | F::RemoteClockSync(_)
            | F::TracePacketDefaults(_) => c.message(),
            F::ForTesting(t) => {
                c.message();
                test_event(c, t);
            }
            F::SynchronizationMarker(v) | F::CompressedPackets(v) | F::ZstdCompressedPackets(v) => {
                c.add(v)
            }
            F::TrustedUid(v) | F::TrustedPid(v) => c.add(v),
            F::TrustedPacketSequenceId(v)
            | F::SequenceFlags(v)
            | F::PreviousPacketDropped(v)
            | F::MachineId(v) => c.add(v),
            F::IncrementalStateCleared(v) | F::FirstPacketOnSequence(v) => c.add(v),
            _ => {}
        }
    }
}

fn track_event(c: &mut Checksum, e: Lazy<'_, TrackEventDecoder<'_>>) {
    use TrackEventField as F;
    for f in e.fields() {
        match f {
            F::CategoryIids(v)
            | F::ExtraCounterTrackUuids(v)
            | F::ExtraDoubleCounterTrackUuids(v)
            | F::FlowIdsOld(v)
            | F::TerminatingFlowIdsOld(v) => c.all(v),
            F::FlowIds(v) | F::TerminatingFlowIds(v) => c.all(v),
            F::ExtraCounterValues(v) => c.all(v),
            F::ExtraDoubleCounterValues(v) => c.all(v),
            F::Categories(v) | F::Name(v) | F::CorrelationIdStr(v) => c.add(v),
            F::NameIid(v)
            | F::TrackUuid(v)
            | F::CorrelationId(v)
            | F::CorrelationIdStrIid(v)
            | F::CallstackIid(v)
            | F::SourceLocationIid(v) => c.add(v),
            F::Type(v) => c.add(v.raw()),
            F::CounterValue(v)
            | F::TimestampDeltaUs(v)
            | F::TimestampAbsoluteUs(v)
            | F::ThreadTimeDeltaUs(v)
            | F::ThreadTimeAbsoluteUs(v)
            | F::ThreadInstructionCountDelta(v)
            | F::ThreadInstructionCountAbsolute(v) => c.add(v),
            F::DoubleCounterValue(v) | F::CallstackWeight(v) => c.add(v),
            F::Callstack(_) | F::TaskExecution(_) | F::LogMessage(_) | F::LegacyEvent(_) => {
                c.message()
            }
            F::DebugAnnotations(a) => debug_annotation(c, a),
            F::SourceLocation(l) => source_location(c, l),
            _ => {}
        }
    }
}

fn debug_annotation(c: &mut Checksum, a: Lazy<'_, DebugAnnotationDecoder<'_>>) {
    use DebugAnnotationField as F;
    c.message();
    for f in a.fields() {
        match f {
            F::NameIid(v) | F::UintValue(v) | F::PointerValue(v) => c.add(v),
            F::StringValueIid(v) | F::ProtoTypeNameIid(v) => c.add(v),
            F::Name(v) | F::LegacyJsonValue(v) | F::StringValue(v) | F::ProtoTypeName(v) => {
                c.add(v)
            }
            F::BoolValue(v) => c.add(v),
            F::IntValue(v) => c.add(v),
            F::DoubleValue(v) => c.add(v),
            F::ProtoValue(v) => c.add(v),
            F::NestedValue(n) => nested_value(c, n),
            F::DictEntries(d) | F::ArrayValues(d) => debug_annotation(c, d),
            _ => {}
        }
    }
}

fn nested_value(c: &mut Checksum, n: Lazy<'_, NestedValueDecoder<'_>>) {
    use NestedValueField as F;
    c.message();
    for f in n.fields() {
        match f {
            F::NestedType(v) => c.add(v.raw()),
            F::DictKeys(v) | F::StringValue(v) => c.add(v),
            F::DictValues(v) | F::ArrayValues(v) => nested_value(c, v),
            F::IntValue(v) => c.add(v),
            F::DoubleValue(v) => c.add(v),
            F::BoolValue(v) => c.add(v),
            _ => {}
        }
    }
}

fn source_location(c: &mut Checksum, l: Lazy<'_, SourceLocationDecoder<'_>>) {
    use SourceLocationField as F;
    c.message();
    for f in l.fields() {
        match f {
            F::Iid(v) => c.add(v),
            F::FileName(v) | F::FunctionName(v) => c.add(v),
            F::LineNumber(v) => c.add(v),
            _ => {}
        }
    }
}

fn interned_string(c: &mut Checksum, s: Lazy<'_, InternedStringDecoder<'_>>) {
    c.message();
    for f in s.fields() {
        match f {
            InternedStringField::Iid(v) => c.add(v),
            InternedStringField::Str(v) => c.add(v),
            _ => {}
        }
    }
}

/// The `iid` + `name` messages of InternedData, one arm each.
macro_rules! iid_name {
    ($c:expr, $m:expr, $field:ident) => {{
        $c.message();
        for f in $m.fields() {
            match f {
                $field::Iid(v) => $c.add(v),
                $field::Name(v) => $c.add(v),
                _ => {}
            }
        }
    }};
}

fn interned_data(c: &mut Checksum, d: Lazy<'_, InternedDataDecoder<'_>>) {
    use InternedDataField as F;
    for f in d.fields() {
        match f {
            F::EventCategories(m) => iid_name!(c, m, EventCategoryField),
            F::EventNames(m) => iid_name!(c, m, EventNameField),
            F::DebugAnnotationNames(m) => iid_name!(c, m, DebugAnnotationNameField),
            F::DebugAnnotationValueTypeNames(m) => {
                iid_name!(c, m, DebugAnnotationValueTypeNameField)
            }
            F::DebugAnnotationStringValues(s)
            | F::CorrelationIdStr(s)
            | F::BuildIds(s)
            | F::MappingPaths(s)
            | F::SourcePaths(s)
            | F::FunctionNames(s)
            | F::KernelSymbols(s) => interned_string(c, s),
            F::Mappings(m) => {
                c.message();
                for f in m.fields() {
                    match f {
                        MappingField::Iid(v)
                        | MappingField::BuildId(v)
                        | MappingField::ExactOffset(v)
                        | MappingField::StartOffset(v)
                        | MappingField::Start(v)
                        | MappingField::End(v)
                        | MappingField::LoadBias(v) => c.add(v),
                        MappingField::PathStringIds(v) => c.all(v),
                        _ => {}
                    }
                }
            }
            F::Frames(m) => {
                c.message();
                for f in m.fields() {
                    match f {
                        FrameField::Iid(v)
                        | FrameField::FunctionNameId(v)
                        | FrameField::MappingId(v)
                        | FrameField::RelPc(v)
                        | FrameField::SourcePathIid(v) => c.add(v),
                        FrameField::LineNumber(v) => c.add(v),
                        FrameField::Kind(v) => c.add(v.raw()),
                        FrameField::KindStr(v) => c.add(v),
                        _ => {}
                    }
                }
            }
            F::Callstacks(m) => {
                c.message();
                for f in m.fields() {
                    match f {
                        CallstackField::Iid(v) => c.add(v),
                        CallstackField::FrameIds(v) => c.all(v),
                        _ => {}
                    }
                }
            }
            F::SourceLocations(l) => source_location(c, l),
            F::UnsymbolizedSourceLocations(m) => {
                c.message();
                for f in m.fields() {
                    match f {
                        UnsymbolizedSourceLocationField::Iid(v)
                        | UnsymbolizedSourceLocationField::MappingId(v)
                        | UnsymbolizedSourceLocationField::RelPc(v) => c.add(v),
                        _ => {}
                    }
                }
            }
            F::LogMessageBody(m) => {
                c.message();
                for f in m.fields() {
                    match f {
                        LogMessageBodyField::Iid(v) => c.add(v),
                        LogMessageBodyField::Body(v) => c.add(v),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

fn test_event(c: &mut Checksum, t: Lazy<'_, TestEventDecoder<'_>>) {
    use TestEventField as F;
    for f in t.fields() {
        match f {
            F::Str(v) => c.add(v),
            F::SeqValue(v) => c.add(v),
            F::Counter(v) => c.add(v),
            F::IsLast(v) => c.add(v),
            F::Payload(p) => test_payload(c, p),
            F::ProtovmPatch(p) => {
                c.message();
                for f in p.fields() {
                    match f {
                        ProtoVmPatchField::StringToMerge(v) => c.add(v),
                        ProtoVmPatchField::IntToMerge(v) => c.add(v),
                        ProtoVmPatchField::SingleMessage(m) | ProtoVmPatchField::Messages(m) => {
                            vm_message(c, m)
                        }
                        ProtoVmPatchField::DeleteMessageIds(v) => c.all(v),
                        _ => {}
                    }
                }
            }
            F::ProtovmIncrementalState(s) => {
                use ProtoVmIncrementalStateField as S;
                c.message();
                for f in s.fields() {
                    match f {
                        S::StringMerged(v) => c.add(v),
                        S::IntMerged(v) => c.add(v),
                        S::SingleMessage(m) | S::Messages(m) => vm_message(c, m),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

fn test_payload(c: &mut Checksum, p: Lazy<'_, TestPayloadDecoder<'_>>) {
    use TestPayloadField as F;
    c.message();
    for f in p.fields() {
        match f {
            F::Str(v) | F::SingleString(v) => c.add(v),
            F::Nested(n) => test_payload(c, n),
            F::RemainingNestingDepth(v) => c.add(v),
            F::SingleInt(v) => c.add(v),
            F::RepeatedInts(v) => c.all(v),
            F::DebugAnnotations(a) => debug_annotation(c, a),
            _ => {}
        }
    }
}

fn vm_message(c: &mut Checksum, m: Lazy<'_, ProtoVmMessageDecoder<'_>>) {
    c.message();
    for f in m.fields() {
        match f {
            ProtoVmMessageField::Id(v) => c.add(v),
            ProtoVmMessageField::Submessage(s) => {
                c.message();
                for f in s.fields() {
                    if let ProtoVmSubmessageField::SingleInt(v) = f {
                        c.add(v);
                    }
                }
            }
            _ => {}
        }
    }
}
