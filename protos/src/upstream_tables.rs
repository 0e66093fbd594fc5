//! What zerotrace reads from Perfetto's upstream schema as data rather than
//! as generated types, emitted by the schema pipeline
//! (`protos/pipeline/src/tables.rs`) into `generated/upstream_tables.rs`:
//!
//! * field numbers of messages whose upstream declaration is not generated
//!   whole (`TracePacket`, `DataSourceConfig`, `InternedData`,
//!   `TracePacketDefaults` import most of Perfetto; our smaller
//!   declarations in `protos/proto` lack the fields the probes and the
//!   profilers write): [`packet_field`], [`data_source_field`],
//!   [`interned_data_field`], [`packet_defaults_field`],
//!   [`interned_string_field`];
//! * the `/proc/vmstat` keys of `VmstatCounters` ([`vmstat_counter`]);
//! * every field of `FtraceConfig` and of `PerfEventConfig`'s messages
//!   ([`FTRACE_CONFIG_SCHEMA`], [`PERF_EVENT_CONFIG_SCHEMA`], ...), so a
//!   data source's table of decided fields can be checked against the
//!   schema;
//! * the typed ftrace events kept in the generated `FtraceEvent`, with
//!   their fields as upstream declares them ([`FTRACE_EVENT_MESSAGES`]);
//! * every ftrace event upstream declares, kept or not, with the arg type
//!   each field is stored as ([`FTRACE_EVENT_SCHEMA`]), so a reader can
//!   decode any event without its generated type.

/// The scalar type upstream declares for a field of a typed ftrace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoType {
    /// `string`.
    String,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint32`.
    Uint32,
    /// `uint64`.
    Uint64,
    /// `repeated uint64` (unpacked, proto2).
    RepeatedUint64,
}

/// One field of a typed ftrace event message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtoField {
    /// The field's name, which is also the kernel format's field name.
    pub name: &'static str,
    /// Its number in the event message.
    pub number: u32,
    /// Its declared type.
    pub ty: ProtoType,
}

/// A typed ftrace event message as upstream declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventMessage {
    /// The kernel event's name (`sched_switch`), also the `FtraceEvent`
    /// field's name.
    pub name: &'static str,
    /// The `FtraceEvent` field number the message is written under.
    pub field: u32,
    /// Its fields in declaration order.
    pub fields: &'static [ProtoField],
}

/// How a field of an ftrace event is stored as an arg (upstream's trace
/// processor reads the declared type so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// Signed: `int32`, `int64`, `sfixed*`, `bool`, enums.
    Int,
    /// Zigzag-encoded signed: `sint32`, `sint64`.
    Sint,
    /// Unsigned: `uint32`, `uint64`, `fixed*`.
    Uint,
    /// `string` or `bytes`.
    String,
    /// `double`.
    Double,
    /// `float`.
    Float,
    /// A message or group (not stored as an arg).
    Other,
}

/// One field of an ftrace event message, in [`FTRACE_EVENT_SCHEMA`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaField {
    /// The field's name (the kernel format's).
    pub name: &'static str,
    /// Its number in the event message.
    pub number: u32,
    /// How it is stored as an arg.
    pub ty: ArgType,
}

/// An ftrace event upstream declares, in [`FTRACE_EVENT_SCHEMA`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaEvent {
    /// The event's name (the `FtraceEvent` field's).
    pub name: &'static str,
    /// Its `FtraceEvent` field number.
    pub field: u32,
    /// Its message's fields in declaration order.
    pub fields: &'static [SchemaField],
}

/// The event upstream declares at `FtraceEvent` field `field`.
pub fn ftrace_event_schema(field: u32) -> Option<&'static SchemaEvent> {
    FTRACE_EVENT_SCHEMA
        .binary_search_by_key(&field, |e| e.field)
        .ok()
        .and_then(|i| FTRACE_EVENT_SCHEMA.get(i))
}

include!("generated/upstream_tables.rs");

/// The `VmstatCounters` number of a `/proc/vmstat` key, if upstream names
/// one (`nr_free_pages` → `VMSTAT_NR_FREE_PAGES`).
pub fn vmstat_counter(key: &str) -> Option<i32> {
    VMSTAT_KEYS
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .and_then(|i| VMSTAT_KEYS.get(i))
        .map(|&(_, n)| n)
}
