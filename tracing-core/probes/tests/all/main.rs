//! The probes' integration tests that share a process well, one module per
//! former `tests/<name>.rs`, in one test binary: the probes, the service
//! and the trace processor are compiled and linked once for all of them
//! rather than once per file. A new test file goes in this directory with
//! its `mod` line below (`cargo xtask`'s tests check that every file here
//! is one), unless it needs the machine to itself. A module's tests run
//! alone with `cargo test -p zerotrace-probes --test all -- <module>::`.
//!
//! The files directly in `tests/` are binaries of their own: they record
//! or sample the running kernel and compare what they got with the kernel's
//! own account (`ftrace_live.rs`, `ftrace_source_live/`,
//! `ftrace_tracefs.rs`, `producer_live.rs`) or with `perf` (`perf_live.rs`,
//! `perf_oracle.rs`, `perf_restart.rs`), and keep their recordings apart
//! within their binary (`ONE_AT_A_TIME`, `perf_fixture::serial`): a
//! CPU-bound fixture sampled at 1 kHz beside other CPU-bound work starves
//! the samplers, and an ftrace instance records every process's scheduling.
//! Here they would run beside the other modules' tests and one another's.
//!
//! The live tests here (`procfs_live`) read `/proc` of children that sit
//! idle, so other tests running beside them change nothing they compare.
//! `procfs_live` runs this binary again as a child, naming its helper
//! test with [`test_name`].

/// Counts each thread's allocations for `ftrace_no_alloc` (forwarding
/// everything to the system allocator, so the other modules only pay for
/// the count).
#[global_allocator]
static GLOBAL: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

#[path = "../ftrace_common/mod.rs"]
mod ftrace_common;
#[path = "../producer_common/mod.rs"]
mod producer_common;
mod support;

mod ftrace_fixture;
mod ftrace_hostile;
mod ftrace_no_alloc;
mod ftrace_trace_processor;
mod ftrace_tracecmd;
mod ftrace_translate;
mod perf_unwind_self;
mod procfs_config;
mod procfs_live;
mod procfs_packets;
mod procfs_parsers;
mod producer_probes;

/// The harness's name for the test function `test` of the module whose
/// `module_path!()` is `module`: what a test that runs this binary again
/// as a child passes to `--exact` (the module without the crate's name).
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, m)) => format!("{m}::{test}"),
        None => test.to_owned(),
    }
}
