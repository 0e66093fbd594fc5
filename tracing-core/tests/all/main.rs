//! zerotrace-core's integration tests, one module per former
//! `tests/<name>.rs`, in one test binary: the crate and its
//! dev-dependencies are compiled and linked once for all of them rather
//! than once per file (the 42 binaries were most of what `cargo test` and
//! `cargo clippy --all-targets` spent on this crate's tests). A new test
//! file goes in this directory with its `mod` line below (`cargo xtask`'s
//! tests check that every file here is one), unless it needs a process to
//! itself. A module's tests run alone with `cargo test -p zerotrace-core
//! --test all -- <module>::`.
//!
//! The files directly in `tests/` are binaries of their own because they
//! do need their process to themselves:
//! - `track_event_*.rs`, `tracing_layer*.rs` and `in_process_scrape_race.rs`
//!   register the TrackEvent backend, which a process does once
//!   (`TrackEvent::register`, through `InProcessSession::start` in most),
//!   with the categories and session of that file (and `tracing_layer.rs`
//!   and `tracing_layer_workload.rs` install `log`'s one global logger);
//! - `hostile_producers.rs` reads the heap bytes the whole process holds
//!   (a flood must leave none behind), which other tests' allocations
//!   would move;
//! - `daemon_hostile_ipc.rs` counts the process's open descriptors (none
//!   may leak), which other tests' sockets and files would move.
//!
//! The tests here that run this binary again as a child (`buffer_exhausted`,
//! `hostile_smb_process`) name their test with [`test_name`].

mod common;
#[path = "../service_support/mod.rs"]
mod service_support;
#[path = "../startup_support/mod.rs"]
mod startup_support;

mod architecture_map;
mod buffer_exhausted;
mod daemon_end_to_end;
mod daemon_machines;
mod fuzz_regressions;
mod genuine_service_session;
mod genuine_trace_buffer;
mod hostile_smb;
mod hostile_smb_process;
mod ipc_vectors;
mod listeners_admit_through_policy;
mod producer_endpoint;
mod reassembly_proptest;
mod relay_port_client;
mod scrape_commit_race;
mod service_buffers;
mod service_config_fields;
mod service_consumers;
mod service_features;
mod service_file_sessions;
mod service_limits;
mod service_machines;
mod service_relay_port;
mod service_sessions;
mod service_start_stop;
mod soundness;
mod startup_tracing;
mod stress;
mod trace_buffer_model;
mod trace_writer;
mod track_event_synthetic;
mod track_event_writer;

/// The harness's name for the test function `test` of the module whose
/// `module_path!()` is `module`: what a test that runs this binary again
/// as a child passes to `--exact` (the module without the crate's name).
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, m)) => format!("{m}::{test}"),
        None => test.to_owned(),
    }
}
