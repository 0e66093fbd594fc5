//! The upstream trace and config messages the procfs probes write and read,
//! as protozero writers and decoders generated at build time from
//! Perfetto's own `.proto` files (see `build.rs`), so packets carry exactly
//! upstream's field numbers without this crate restating them.
//!
//! Generated: `ProcessTree`, `ProcessStats`, `SysStats`, `CpuInfo`,
//! `FtraceConfig`, `FtraceStats`,
//! `ProcessStatsConfig`, `SysStatsConfig` and the `MeminfoCounters` /
//! `VmstatCounters` enums. `TracePacket` itself is not generated (its schema
//! imports most of Perfetto); the few of its fields the probes set are in
//! [`packet_field`], their numbers read from upstream by the build script,
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
    include!(concat!(env!("OUT_DIR"), "/protos/mod.rs"));
}

pub use generated::perfetto::protos::*;

include!(concat!(env!("OUT_DIR"), "/protos/extra.rs"));

/// The `VmstatCounters` number of a `/proc/vmstat` key, if upstream names
/// one (`nr_free_pages` → `VMSTAT_NR_FREE_PAGES`).
pub fn vmstat_counter(key: &str) -> Option<i32> {
    VMSTAT_KEYS
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .and_then(|i| VMSTAT_KEYS.get(i))
        .map(|&(_, n)| n)
}
