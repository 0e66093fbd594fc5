//! The cli's integration tests, one module per former `tests/<name>.rs`,
//! in one test binary: the service, the probes, the trace processor (with
//! SQLite, Arrow and Parquet) and the cli's own library are linked once for
//! all of them rather than once per file. A new test file goes in this
//! directory with its `mod` line below (`cargo xtask`'s tests check that
//! every file here is one), unless it needs a process or the machine to
//! itself. A module's tests run alone with `cargo test -p zerotrace-cli
//! --test all -- <module>::`; the binaries the tests run
//! (`CARGO_BIN_EXE_*`) are this package's, as before.
//!
//! The files directly in `tests/` are binaries of their own:
//! - `heap_recording.rs` makes the heap profiler the process's global
//!   allocator and records the process's own heap through an in-process
//!   session (the TrackEvent backend registers once per process);
//! - `websocket_hostile.rs` counts the process's threads while 10,000
//!   sockets are open in it, near the descriptor limit of a process;
//! - `perf_fixture_views.rs` samples a CPU-bound fixture at 1 kHz, which
//!   other tests' work beside it would starve of its samplers (as the
//!   probes' perf tests, whose fixture it shares).
//!
//! `websocket_hostile_matrix` runs this binary again as another user,
//! naming its test with [`test_name`].

#[path = "../heap_support/mod.rs"]
mod heap_support;
#[path = "../perf_support/mod.rs"]
mod perf_support;
mod support;
#[path = "../tp_support/mod.rs"]
mod tp_support;
#[path = "../uid_support/mod.rs"]
mod uid_support;
mod upstream;
#[path = "../websocket_support/mod.rs"]
mod websocket_support;

mod collapsed_input;
mod config_field_decisions;
mod heap_reader;
mod heap_views;
mod perf_samples;
mod pprof_input;
mod profile_reader;
mod relay;
mod relay_netns;
mod sql;
mod sql_budget;
mod sql_packages;
mod text_configs;
mod tp_httpd;
mod tp_httpd_guards;
mod tracing_chrome_input;
mod websocket;
mod websocket_browser;
mod websocket_hostile_matrix;
mod zerotrace;
mod zerotraced;

/// The harness's name for the test function `test` of the module whose
/// `module_path!()` is `module`: what a test that runs this binary again
/// as a child passes to `--exact` (the module without the crate's name).
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, m)) => format!("{m}::{test}"),
        None => test.to_owned(),
    }
}
