//! Linux system probes: what Perfetto's `traced_probes` records (ftrace
//! events from the kernel's ring buffers, the process tree and its memory,
//! system counters, CPU info), read from tracefs and `/proc` with every byte
//! bounds-checked, and written as the same trace packets.
//!
//! * [`ftrace`]: the kernel's raw ring-buffer pages, parsed by the layout
//!   the kernel itself describes (`header_page`, each event's `format`).
//! * [`procfs`]: `/proc` and `/sys` files parsed into typed values, and the
//!   `process_tree`, `process_stats`, `sys_stats` and `cpu_info` packets
//!   built from them.
//!
//! * [`perf`]: `linux.perf`'s user-space unwinding and symbolization.
//!
//! * [`producer`]: the data sources `linux.process_stats`,
//!   `linux.sys_stats` and `linux.system_info` and the producer that serves
//!   them to a tracing service (the `zerotrace-probes` binary, and
//!   `zerotraced --probes` in the service's own process).
//!
//! The messages they write and read are upstream's, generated once for
//! every crate in `zerotrace-protos` ([`zerotrace_protos::protos`]), with
//! what the schema pipeline reads from upstream's schema as data
//! ([`zerotrace_protos::upstream_tables`]: field numbers, field lists).

pub mod ftrace;
pub mod perf;
pub mod procfs;
pub mod producer;
