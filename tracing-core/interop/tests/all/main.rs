//! The interop tests, one module per former `tests/<name>.rs`, in one test
//! binary: Perfetto's amalgamation (the genuine service and trace buffers
//! of `build.rs`), our service and clients are linked once for all of them
//! rather than once per file. A new test file goes in this directory with
//! its `mod` line below (`cargo xtask`'s tests check that every file here
//! is one), unless it needs a process or the machine to itself. A module's
//! tests run alone with `cargo test -p zerotrace-interop --test all --
//! <module>::`; the genuine SDK programs are built once for the binary
//! (`zerotrace_interop::sdk::bins`).
//!
//! The files directly in `tests/` are binaries of their own:
//! - `track_event_genuine_service.rs` registers the TrackEvent backend,
//!   which a process does once;
//! - `perf_genuine_service.rs` samples a CPU-bound fixture at 1 kHz and
//!   `probes_genuine_service.rs` records ftrace from the kernel, as the
//!   probes' own live tests do: beside other tests' work the samplers
//!   starve, and an ftrace instance records every process's scheduling;
//! - `soak.rs` bounds one service's memory by the other's, measured one
//!   after the other while they serve the same load: other tests' work
//!   between the two runs would make the comparison unequal.

// The synthetic trace of `protos/examples/synthetic_trace`.
#[path = "../../../../protos/examples/synthetic_trace/scenarios.rs"]
mod scenarios;
// The startup workload, shared with `tracing-core/tests/all/startup_tracing.rs`.
#[path = "../../../tests/startup_support/mod.rs"]
mod startup_support;
// Loading traces into our trace processor and checking their stats.
#[path = "../tp_check/mod.rs"]
mod tp_check;

mod genuine_ipc;
mod genuine_trace_buffer;
mod genuine_traces_load;
mod protoc_decode_raw;
mod relay_genuine;
mod scale;
mod startup_tracing_genuine_service;
mod synthetic_trace;
