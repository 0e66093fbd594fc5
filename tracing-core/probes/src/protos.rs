//! The upstream trace and config messages the procfs probes write and read,
//! as protozero writers and decoders generated from Perfetto's own `.proto`
//! files by the schema pipeline (`protos/pipeline`, which names the files;
//! `cargo xtask codegen` writes `src/generated`), so packets carry exactly
//! upstream's field numbers without this crate restating them.
//!
//! Generated: `ProcessTree`, `ProcessStats`, `SysStats`, `CpuInfo`,
//! `FtraceConfig`, `FtraceStats`, `PerfEventConfig`, the profiling packets
//! (`PerfSample`, `PerfSampleDefaults`, `ProfilePacket`, the interned
//! `Mapping`, `Frame`, `Callstack`, `InternedString`, `ModuleSymbols`), pprof's
//! `Profile` ([`pprof`]),
//! `ProcessStatsConfig`, `SysStatsConfig`, the `MeminfoCounters` /
//! `VmstatCounters` enums, and `FtraceEventBundle` with an `FtraceEvent`
//! cut down to the events the probes translate (plus `GenericFtraceEvent`
//! and the bundle's `CompactSched`); [`FTRACE_EVENT_MESSAGES`] lists those
//! events' fields as upstream declares them. `TracePacket` itself is not generated (its schema
//! imports most of Perfetto); the few of its fields the probes set are in
//! [`packet_field`], their numbers read from upstream by the pipeline,
//! as are the `DataSourceConfig` fields the data sources read their nested
//! configs from ([`data_source_field`]).

#[allow(
    missing_docs,
    clippy::all,
    clippy::pedantic,
    rustdoc::all,
    unreachable_pub
)]
#[rustfmt::skip]
mod generated {
    include!("generated/mod.rs");
}

pub use generated::perfetto::protos::*;

/// pprof's `profile.proto` (package `perftools.profiles` upstream; Perfetto
/// ships it as `perfetto.third_party.perftools.profiles`, the same wire format).
pub mod pprof {
    pub use super::generated::perfetto::third_party::perftools::profiles::*;
}

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

include!("generated/extra.rs");

/// The `VmstatCounters` number of a `/proc/vmstat` key, if upstream names
/// one (`nr_free_pages` → `VMSTAT_NR_FREE_PAGES`).
pub fn vmstat_counter(key: &str) -> Option<i32> {
    VMSTAT_KEYS
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .and_then(|i| VMSTAT_KEYS.get(i))
        .map(|&(_, n)| n)
}
