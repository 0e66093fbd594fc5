//! `linux.perf`: CPU profiling as Perfetto's `traced_perf` does it. The
//! kernel samples an event (a clock, a counter, a tracepoint) per CPU into
//! ring buffers; each sample's callstack is unwound and written as a
//! `PerfSample` packet with interned frames.
//!
//! * [`abi`]: the kernel's perf_event numbers.
//! * [`records`]: sample and loss records parsed from bytes.
//! * [`ring`]: the ring buffer's spans and record framing.
//! * [`compact`]: records copied out without the unfilled part of their stack copies.
//! * [`config`]: `PerfEventConfig` read into options.
//! * [`config_fields`]: what is done with each config field, checked against the schema.
//! * [`cpus`]: the CPUs sampled: online ones, narrowed to `target_cpu`.
//! * [`glob`]: `fnmatch`-style matching of command lines (the scope's patterns).
//! * [`event`]: the driver: perf events opened per CPU, ring buffers mapped.
//! * [`footprint`]: what the memory guardrail weighs of an instance.
//! * [`buffer`]: a CPU's ring buffer as the readers see it (a trait).
//! * [`drain`]: the thread that empties the ring buffers into a queue.
//! * [`intern`]: a sequence's interned mappings, frames and callstacks.
//! * [`kernel_frames`]: kernel IPs named from kallsyms, written with no address.
//! * [`packets`]: the packets written.
//! * [`unwind_queue`]: the bounded hand-over of samples to the unwinder's thread.
//! * [`unwind`]: user-space stack unwinding (DWARF CFI or the frame-pointer
//!   chain) over `/proc/PID/maps` and the process's ELF files, and symbols.

pub mod abi;
pub mod buffer;
pub mod compact;
pub mod config;
pub mod config_fields;
pub mod cpus;
pub mod drain;
pub mod event;
#[cfg(test)]
pub(crate) mod fake_buffer;
pub mod footprint;
pub mod glob;
pub mod intern;
pub mod kernel_frames;
pub mod packets;
pub mod records;
pub mod ring;
pub mod unwind_queue;
/// User-space unwinding and symbols (the `zerotrace-unwind` crate).
pub use zerotrace_unwind as unwind;
