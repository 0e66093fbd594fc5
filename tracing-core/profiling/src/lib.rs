//! The common ground of zerotrace's profilers, as Perfetto keeps
//! `src/profiling/common` for heapprofd and traced_perf: what the CPU
//! profiler (`linux.perf`, in `zerotrace-probes`) and the heap profiler
//! (`android.heapprofd`) both need, written once.
//!
//! * [`intern`]: a sequence's interned build ids, paths, function names,
//!   mappings, frames and callstacks, written as Perfetto's profilers write
//!   them.
//! * [`frame_desc`]: an unwound frame of `zerotrace-unwind` as the trace
//!   describes it, and upstream's synthetic `"ERROR <NAME>"` frame that
//!   ends a stack the unwinder could not finish.
//! * [`PacketSink`]: where a profiler writes its packets (a producer's
//!   `TraceWriter`, or a [`BufferSink`] of encoded packets).
//! * [`guardrail`]: the memory guardrail (a profile stops when what the
//!   profiler holds passes its limit) and the reading of a process's
//!   anonymous and swapped memory it and heapprofd's admission use.
//! * [`view`]: symbols for a recorded profile, from the binaries' debug
//!   information (`zerotrace symbolize`). Reading a trace's samples and
//!   heap dumps back for the viewers (flame graphs, pprof, `stats`,
//!   `dump`) is the trace processor's, the one reader of traces.
//!
//! It knows nothing of a data source's config or of the service: the
//! profilers are above it, the producer (`zerotrace-core` without its
//! `service` feature) and the unwinder below.

pub mod frame_desc;
pub mod guardrail;
pub mod intern;
mod packet_sink;
pub mod view;

pub use packet_sink::{BufferSink, PacketSink};
