//! The one harness of the three competitor rows (prost, quick-protobuf,
//! rust-protobuf), which all decode a whole packet into owned (or, for
//! quick-protobuf, borrowing) structs and then read the fields off them:
//! walking the packets, and the visit of every field the tasks read, so
//! that the three rows read the very same subtrees (and the floor's and
//! ours' rows are checked against them in `tests/agree.rs`).
//!
//! Each library implements the small trait [`Owned`] (its decoded packet
//! and how a packet is decoded) and spells its oneofs into the neutral
//! forms here ([`Value`], [`Data`], [`Located`], [`Annotated`], its enums'
//! numbers through [`EnumNumber`]); the visit itself is written once, in the
//! macro `visits!` of this module, over the
//! struct fields the three generators name alike, with the few spellings
//! that differ (a field named `str` or `type`, the oneof readers) given by
//! each library.

use crate::Checksum;

/// One library's decoded packets: what each library implements.
pub trait Owned {
    /// A decoded `TracePacket`, which may borrow the bytes.
    type Packet<'a>;

    /// Decodes one packet (the whole of `bytes`); `None` when the library
    /// refuses it.
    fn decode(bytes: &[u8]) -> Option<Self::Packet<'_>>;
}

/// The visits of one library's packets, which `visits!` implements from
/// the one copy of the visit.
pub trait Visit: Owned {
    /// The full task's visit of one packet (see the crate docs).
    fn full(c: &mut Checksum, packet: &Self::Packet<'_>);

    /// The lazy task's visit of one packet: its timestamp and its
    /// TrackEvent's name.
    fn lazy(c: &mut Checksum, packet: &Self::Packet<'_>);
}

/// The full task with library `O`: every packet decoded and visited; a
/// packet the library refuses adds nothing.
pub fn full<O: Visit>(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        if let Some(p) = O::decode(p) {
            O::full(&mut c, &p);
        }
    }
    c.0
}

/// The lazy task with library `O`: every packet decoded (none of the three
/// has a lazy path), then its timestamp and TrackEvent name read.
pub fn lazy<O: Visit>(packets: &[&[u8]]) -> u64 {
    let mut c = Checksum::default();
    for p in packets {
        if let Some(p) = O::decode(p) {
            O::lazy(&mut c, &p);
        }
    }
    c.0
}

/// An enum field's value as its number (`i32`), however the library keeps
/// it (prost: the number; rust-protobuf: `EnumOrUnknown`; quick-protobuf:
/// a Rust enum, unknown numbers already read as the default).
pub trait EnumNumber {
    /// The number.
    fn number(&self) -> i32;
}

/// The member of a oneof that is set, when it is a scalar, a string, bytes
/// or a message that is only counted as present.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// `uint64`, `fixed64`.
    U64(u64),
    /// `uint32`.
    U32(u32),
    /// `int64`.
    I64(i64),
    /// `int32` and enums.
    I32(i32),
    /// `double`.
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    Str(&'a str),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// A message counted as present, its fields not read.
    Message,
}

impl Value<'_> {
    /// Adds the value to `c` by the checksum rule.
    #[inline]
    pub fn add_to(self, c: &mut Checksum) {
        match self {
            Value::U64(v) => c.add(v),
            Value::U32(v) => c.add(v),
            Value::I64(v) => c.add(v),
            Value::I32(v) => c.add(v),
            Value::F64(v) => c.add(v),
            Value::Bool(v) => c.add(v),
            Value::Str(v) => c.add(v),
            Value::Bytes(v) => c.add(v),
            Value::Message => c.message(),
        }
    }
}

/// Adds the oneof member that is set, if any.
#[inline]
pub fn add_oneof(c: &mut Checksum, value: Option<Value<'_>>) {
    if let Some(v) = value {
        v.add_to(c);
    }
}

/// `TracePacket.data`, the member that is set.
#[derive(Debug)]
pub enum Data<'a, TrackEvent, TestEvent> {
    /// `track_event`, visited.
    TrackEvent(&'a TrackEvent),
    /// `for_testing`, visited.
    ForTesting(&'a TestEvent),
    /// `synchronization_marker`, `compressed_packets` and
    /// `zstd_compressed_packets` (bytes); any other member, counted as
    /// present ([`Value::Message`]).
    Other(Value<'a>),
}

/// A oneof of a message and its interning id (`TrackEvent`'s
/// `source_location` / `source_location_iid`).
#[derive(Debug)]
pub enum Located<'a, Message> {
    /// The message, visited.
    Message(&'a Message),
    /// The interning id.
    Iid(u64),
}

/// `DebugAnnotation.value`, the member that is set.
#[derive(Debug)]
pub enum Annotated<'a, NestedValue> {
    /// `nested_value`, visited.
    Nested(&'a NestedValue),
    /// Any scalar or string member.
    Value(Value<'a>),
}

/// The oneofs of a `TracePacket`, as one library spells them.
#[derive(Debug)]
pub struct PacketOneofs<'a, TrackEvent, TestEvent> {
    /// `data`.
    pub data: Option<Data<'a, TrackEvent, TestEvent>>,
    /// `optional_trusted_uid`.
    pub trusted_uid: Option<i32>,
    /// `optional_trusted_packet_sequence_id`.
    pub trusted_packet_sequence_id: Option<u32>,
}

/// The oneofs of a `TrackEvent`, as one library spells them.
#[derive(Debug)]
pub struct TrackEventOneofs<'a, SourceLocation> {
    /// `name_field`.
    pub name: Option<Value<'a>>,
    /// `counter_value_field`.
    pub counter_value: Option<Value<'a>>,
    /// `correlation_id_field`.
    pub correlation_id: Option<Value<'a>>,
    /// `callstack_field` (the message counted as present).
    pub callstack: Option<Value<'a>>,
    /// `source_location_field`.
    pub source_location: Option<Located<'a, SourceLocation>>,
    /// `timestamp`.
    pub timestamp: Option<Value<'a>>,
    /// `thread_time`.
    pub thread_time: Option<Value<'a>>,
    /// `thread_instruction_count`.
    pub thread_instruction_count: Option<Value<'a>>,
}

/// The oneofs of a `DebugAnnotation`, as one library spells them.
#[derive(Debug)]
pub struct AnnotationOneofs<'a, NestedValue> {
    /// `name_field`.
    pub name: Option<Value<'a>>,
    /// `value`.
    pub value: Option<Annotated<'a, NestedValue>>,
    /// `proto_type_descriptor`.
    pub proto_type: Option<Value<'a>>,
}

/// The visit of every message the tasks read, written once for the three
/// libraries: `visits!` expands, in a library's module, to the visit over
/// that library's types, [`Visit`] for its row (which implements
/// [`Owned`]), and the module's task functions `full` and `lazy`. Its
/// arguments name them:
///
/// - `row`: the type that implements [`Owned`] for the library;
/// - `types`: the library's `TracePacket`, `TrackEvent`, `DebugAnnotation`,
///   `NestedValue`, `SourceLocation`, `InternedData`, `InternedString`,
///   `TestEvent`, `TestPayload` and `ProtoVmMessage` (with `<'_>` where they
///   borrow);
/// - `fields`: the Rust names of the fields `str` (of `InternedString`,
///   `TestEvent`, `TestPayload`) and `type` (of `TrackEvent`);
/// - `oneofs`: the library's readers of the oneofs into this module's
///   neutral forms, `packet(&TracePacket) -> PacketOneofs`,
///   `track_event(&TrackEvent) -> TrackEventOneofs`,
///   `annotation(&DebugAnnotation) -> AnnotationOneofs`,
///   `frame_kind(&Frame) -> Option<Value>`.
///
/// The visit's functions are in a module `visit` of the library's module
/// (which sees the library's names through `use super::*`); enum fields are
/// read through [`EnumNumber`], which the library implements for its enums.
/// Message fields are read with `.as_ref()` (prost's and quick-protobuf's
/// `Option<T>` and `Option<Box<T>>`, rust-protobuf's `MessageField<T>`),
/// strings and bytes with `AsRef` (`String`, `Vec<u8>`, `Cow`).
macro_rules! visits {
    (
        row: $row:ty,
        types: {
            TracePacket: $packet:ty,
            TrackEvent: $track_event:ty,
            DebugAnnotation: $annotation:ty,
            NestedValue: $nested:ty,
            SourceLocation: $location:ty,
            InternedData: $interned:ty,
            InternedString: $interned_string:ty,
            TestEvent: $test_event:ty,
            TestPayload: $test_payload:ty,
            ProtoVmMessage: $vm_message:ty $(,)?
        },
        fields: { str: $str:ident, type: $type:ident $(,)? },
        oneofs: {
            packet: $packet_oneofs:path,
            track_event: $track_event_oneofs:path,
            annotation: $annotation_oneofs:path,
            frame_kind: $frame_kind:path $(,)?
        } $(,)?
    ) => {
        impl $crate::owned::Visit for $row {
            fn full(c: &mut $crate::Checksum, packet: &<$row as $crate::owned::Owned>::Packet<'_>) {
                visit::full_packet(c, packet);
            }

            fn lazy(c: &mut $crate::Checksum, packet: &<$row as $crate::owned::Owned>::Packet<'_>) {
                visit::lazy_packet(c, packet);
            }
        }

        /// The full task: every field of every packet (see the crate docs).
        pub fn full(packets: &[&[u8]]) -> u64 {
            $crate::owned::full::<$row>(packets)
        }

        /// The lazy task: each packet's timestamp and its TrackEvent's name.
        pub fn lazy(packets: &[&[u8]]) -> u64 {
            $crate::owned::lazy::<$row>(packets)
        }

        /// The visit of every message the tasks read, over this library's
        /// types (`crate::owned::visits!`).
        mod visit {
            use super::*;
            use $crate::Checksum;
            use $crate::owned::{Annotated, Data, EnumNumber, Located, add_oneof};

            /// The full task's visit of one packet.
            pub(super) fn full_packet(c: &mut Checksum, p: &$packet) {
                c.opt(p.timestamp);
                c.opt(p.timestamp_clock_id);
                let oneofs = $packet_oneofs(p);
                match oneofs.data {
                    Some(Data::TrackEvent(e)) => {
                        c.message();
                        track_event(c, e);
                    }
                    Some(Data::ForTesting(t)) => {
                        c.message();
                        test_event(c, t);
                    }
                    Some(Data::Other(v)) => v.add_to(c),
                    None => {}
                }
                c.opt(oneofs.trusted_uid);
                c.opt(oneofs.trusted_packet_sequence_id);
                c.opt(p.trusted_pid);
                if let Some(d) = p.interned_data.as_ref() {
                    c.message();
                    interned_data(c, d);
                }
                c.opt(p.sequence_flags);
                c.opt(p.incremental_state_cleared);
                c.message_if(p.trace_packet_defaults.as_ref().is_some());
                c.opt(p.previous_packet_dropped);
                c.opt(p.first_packet_on_sequence);
                c.opt(p.machine_id);
            }

            /// The lazy task's visit of one packet: its timestamp and its
            /// TrackEvent's name.
            pub(super) fn lazy_packet(c: &mut Checksum, p: &$packet) {
                c.opt(p.timestamp);
                if let Some(Data::TrackEvent(e)) = $packet_oneofs(p).data {
                    add_oneof(c, $track_event_oneofs(e).name);
                }
            }

            #[allow(deprecated)] // flow_ids_old and terminating_flow_ids_old
            fn track_event(c: &mut Checksum, e: &$track_event) {
                let oneofs = $track_event_oneofs(e);
                c.all(e.category_iids.iter().copied());
                c.all(e.categories.iter().map(AsRef::<str>::as_ref));
                add_oneof(c, oneofs.name);
                c.opt(e.$type.as_ref().map(EnumNumber::number));
                c.opt(e.track_uuid);
                add_oneof(c, oneofs.counter_value);
                c.all(e.extra_counter_track_uuids.iter().copied());
                c.all(e.extra_counter_values.iter().copied());
                c.all(e.extra_double_counter_track_uuids.iter().copied());
                c.all(e.extra_double_counter_values.iter().copied());
                c.all(e.flow_ids_old.iter().copied());
                c.all(e.flow_ids.iter().copied());
                c.all(e.terminating_flow_ids_old.iter().copied());
                c.all(e.terminating_flow_ids.iter().copied());
                add_oneof(c, oneofs.correlation_id);
                add_oneof(c, oneofs.callstack);
                c.opt(e.callstack_weight);
                for a in &e.debug_annotations {
                    debug_annotation(c, a);
                }
                c.message_if(e.task_execution.as_ref().is_some());
                c.message_if(e.log_message.as_ref().is_some());
                match oneofs.source_location {
                    Some(Located::Message(l)) => source_location(c, l),
                    Some(Located::Iid(v)) => c.add(v),
                    None => {}
                }
                add_oneof(c, oneofs.timestamp);
                add_oneof(c, oneofs.thread_time);
                add_oneof(c, oneofs.thread_instruction_count);
                c.message_if(e.legacy_event.as_ref().is_some());
            }

            fn debug_annotation(c: &mut Checksum, a: &$annotation) {
                let oneofs = $annotation_oneofs(a);
                c.message();
                add_oneof(c, oneofs.name);
                match oneofs.value {
                    Some(Annotated::Nested(n)) => nested_value(c, n),
                    Some(Annotated::Value(v)) => v.add_to(c),
                    None => {}
                }
                add_oneof(c, oneofs.proto_type);
                c.opt(a.proto_value.as_deref());
                for d in &a.dict_entries {
                    debug_annotation(c, d);
                }
                for v in &a.array_values {
                    debug_annotation(c, v);
                }
            }

            fn nested_value(c: &mut Checksum, n: &$nested) {
                c.message();
                c.opt(n.nested_type.as_ref().map(EnumNumber::number));
                c.all(n.dict_keys.iter().map(AsRef::<str>::as_ref));
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

            fn source_location(c: &mut Checksum, l: &$location) {
                c.message();
                c.opt(l.iid);
                c.opt(l.file_name.as_deref());
                c.opt(l.function_name.as_deref());
                c.opt(l.line_number);
            }

            fn interned_string(c: &mut Checksum, s: &$interned_string) {
                c.message();
                c.opt(s.iid);
                c.opt(s.$str.as_deref());
            }

            /// An interning table entry made of an iid and a name.
            fn iid_name(c: &mut Checksum, iid: Option<u64>, name: Option<&str>) {
                c.message();
                c.opt(iid);
                c.opt(name);
            }

            fn interned_data(c: &mut Checksum, d: &$interned) {
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
                    add_oneof(c, $frame_kind(m));
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

            fn test_event(c: &mut Checksum, t: &$test_event) {
                c.opt(t.$str.as_deref());
                c.opt(t.seq_value);
                c.opt(t.counter);
                c.opt(t.is_last);
                if let Some(p) = t.payload.as_ref() {
                    test_payload(c, p);
                }
                if let Some(p) = t.protovm_patch.as_ref() {
                    c.message();
                    c.opt(p.string_to_merge.as_deref());
                    c.opt(p.int_to_merge);
                    if let Some(m) = p.single_message.as_ref() {
                        vm_message(c, m);
                    }
                    for m in &p.messages {
                        vm_message(c, m);
                    }
                    c.all(p.delete_message_ids.iter().copied());
                }
                if let Some(s) = t.protovm_incremental_state.as_ref() {
                    c.message();
                    c.opt(s.string_merged.as_deref());
                    c.opt(s.int_merged);
                    if let Some(m) = s.single_message.as_ref() {
                        vm_message(c, m);
                    }
                    for m in &s.messages {
                        vm_message(c, m);
                    }
                }
            }

            fn test_payload(c: &mut Checksum, p: &$test_payload) {
                c.message();
                c.all(p.$str.iter().map(AsRef::<str>::as_ref));
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

            fn vm_message(c: &mut Checksum, m: &$vm_message) {
                c.message();
                c.opt(m.id);
                if let Some(s) = m.submessage.as_ref() {
                    c.message();
                    c.opt(s.single_int);
                }
            }
        }
    };
}

pub(crate) use visits;
