//! The trace processor's integration tests, one module per former
//! `tests/<name>.rs`, in one test binary: the processor (SQLite's C code
//! included) and the profilers' writers are linked once for all of them
//! rather than once per file. A new test file goes in this directory with
//! its `mod` line below (`cargo xtask`'s tests check that every file here is
//! one). A module's tests run alone with `cargo test -p
//! zerotrace-trace-processor --test all -- <module>::`.
//!
//! Every test loads traces it builds in memory: none needs a process to
//! itself.

mod common;
// The cli's synthetic `linux.perf` and heapprofd writers (`profile_view`).
#[path = "../../../cli/tests/heap_support/mod.rs"]
mod heap_support;
#[path = "../../../cli/tests/perf_support/mod.rs"]
mod perf_support;

mod android_aflags;
mod android_framework_track_event;
mod android_logs;
mod android_network;
mod android_power;
mod android_system;
mod archives;
mod chrome_threads;
mod crop_track_events;
mod data_loss;
mod deobfuscation;
mod etw;
mod ftrace_power_hyp;
mod ftrace_slices;
mod fuchsia_blobs;
mod gpu_events;
mod gpu_ftrace;
mod graphics;
mod heap_graph;
mod heap_graph_flamegraph_frames;
mod hostile_traces;
mod instruments_xml;
mod join_order;
mod legacy_event_phases;
mod loading;
mod machines;
mod memory_importers;
mod metadata;
mod metrics;
mod metrics_jank_cuj;
mod own_recordings;
mod packet_importers;
mod profile_view;
mod profiling;
mod protolog;
mod query_pushdown;
mod sched;
mod service_events;
mod shell_transitions;
mod sql_file_access;
mod stdlib_android;
mod stdlib_android_extra;
mod stdlib_android_journeys;
mod stdlib_android_locks;
mod stdlib_android_memory;
mod stdlib_android_system;
mod stdlib_chrome_descriptions;
mod stdlib_chrome_events;
mod stdlib_chrome_input;
mod stdlib_chrome_scroll;
mod stdlib_linux;
mod stdlib_linux_irqs;
mod stdlib_modules;
mod stdlib_symbolize;
mod stdlib_traced;
mod sys_stats;
mod systrace;
mod text_formats_gzip;
mod track_event_args;
mod track_event_callstacks;
mod track_event_tracks;
mod translation_tables;
mod v8_jit;
mod viewcapture;
mod what_users_are_told;
mod winscope;
mod winscope_layers;
