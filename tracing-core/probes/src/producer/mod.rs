//! The probes as data sources of a tracing service: `linux.process_stats`,
//! `linux.sys_stats` and `linux.system_info` under the names, configs and
//! packets of Perfetto's `traced_probes`, served by a producer that
//! connects to any service on Perfetto's producer socket.
//!
//! * [`probe`]: what a data source is to the runtime ([`DataSource`]
//!   makes a [`Probe`] per instance; a probe is told `now` and writes into
//!   a [`PacketSink`]).
//! * [`schedule`]: the periodic timers, computed from `now` alone.
//! * [`ftrace`](mod@ftrace), [`process_stats`], [`sys_stats`],
//!   [`system_info`]: the data sources.
//! * [`runtime`]: the producer connection and the thread that runs the
//!   probes ([`ProbesProducer`]); [`Registry`] lists what it serves, so a
//!   further data source (`linux.ftrace`) is one [`Registry::add`].

pub mod ds_config;
pub mod ftrace;
pub mod perf;
mod perf_scope;
mod perf_unwinder;
mod perf_user_stacks;
pub mod probe;
pub mod process_stats;
pub mod refusals;
pub mod runtime;
pub mod schedule;
pub mod stats_cache;
pub mod sys_stats;
pub mod system_info;

pub use probe::{
    BufferSink, Clock, DataSource, Logger, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats,
    Waker, no_waker,
};
pub use runtime::{ProbesOptions, ProbesProducer, Registry, RuntimeStats};
pub use schedule::Schedule;
