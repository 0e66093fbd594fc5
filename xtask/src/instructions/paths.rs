//! What `cargo xtask instructions` counts: each hot path (its program,
//! arguments, counted function and iteration counts), the genuine C SDK's
//! paths of `--genuine`, and the issues' goals and printed ratios over them.

/// One measured path.
pub(super) struct HotPath {
    /// Its key in the budget file.
    pub(super) name: &'static str,
    /// What one iteration is.
    pub(super) what: &'static str,
    /// The program (a binary of `zerotrace-hot-paths`).
    pub(super) bin: &'static str,
    /// Its arguments after the iteration count.
    pub(super) args: &'static [&'static str],
    /// The function(s) counted (callgrind's `--toggle-collect`).
    pub(super) toggle: &'static str,
    /// The two iteration counts.
    pub(super) counts: (u64, u64),
    /// Runs at each count, the smallest total kept (1 where the count is
    /// exact).
    pub(super) runs: u32,
    /// Its own tolerance, where the count moves from run to run.
    pub(super) tolerance: Option<f64>,
}

/// Every path, in the table's order.
pub(super) const PATHS: &[HotPath] = &[
    HotPath {
        name: "trace_event_no_args",
        what: "TRACE_EVENT slice begin + end, in-process session recording",
        bin: "trace_event_loop",
        args: &["no_args"],
        toggle: "trace_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "trace_event_floor_no_args",
        what: "its floor: two clock reads, both packets encoded by hand",
        bin: "trace_event_loop",
        args: &["floor_no_args"],
        toggle: "trace_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "trace_event_two_args",
        what: "TRACE_EVENT slice with an int and a string annotation",
        bin: "trace_event_loop",
        args: &["two_args"],
        toggle: "trace_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "trace_event_floor_two_args",
        what: "its floor, the two annotations included",
        bin: "trace_event_loop",
        args: &["floor_two_args"],
        toggle: "trace_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "layer_span",
        what: "a `tracing` span (two fields) created, entered, exited, closed through PerfettoLayer",
        bin: "trace_event_loop",
        args: &["span_layer"],
        toggle: "trace_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "layer_baseline",
        what: "the same span through a registry with a layer that does nothing",
        // A binary of its own: the registry's generic code, instantiated
        // in the program, is split and inlined there whatever the Layer's
        // code is (in trace_event_loop it moved by 4% with the Layer's).
        bin: "span_registry_loop",
        args: &[],
        toggle: "span_registry_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "smb_write",
        what: "a slice-begin packet through a TraceWriter into shared memory",
        bin: "smb_packets",
        args: &[],
        toggle: "smb_packets::run_*",
        counts: (5000, 10000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "smb_heap",
        what: "the same packet into a reused heap buffer",
        bin: "smb_packets",
        args: &["heap"],
        toggle: "smb_packets::run_*",
        counts: (5000, 10000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "decoders",
        what: "the generated decoders over a slice begin, an end and an interned-data packet",
        bin: "decode_loop",
        args: &[],
        toggle: "decode_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "heap_sample",
        what: "a sampled allocation and its free in the heap profiler's hook",
        bin: "heap_sample_loop",
        args: &[],
        toggle: "heap_sample_loop::run_*",
        counts: (16, 48),
        // The profiler's thread hands the stack buffers back at a pace the
        // scheduler sets, and a sample that finds none allocates one: the
        // smallest of three runs, within 8%.
        runs: 3,
        tolerance: Some(0.08),
    },
];

/// The genuine C SDK's paths (`--genuine`): a reference, not ours, so
/// no budget (their count moves with the C++ compiler).
pub(super) const GENUINE_PATHS: &[HotPath] = &[
    HotPath {
        name: "c_sdk_no_args",
        what: "the C SDK's PERFETTO_TE slice begin + end, in-process session recording",
        bin: "c_sdk_track_event_loop",
        args: &["no_args"],
        toggle: "c_sdk_track_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "c_sdk_two_args",
        what: "the same with PERFETTO_TE_ARG_INT64 and PERFETTO_TE_ARG_STRING",
        bin: "c_sdk_track_event_loop",
        args: &["two_args"],
        toggle: "c_sdk_track_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "c_sdk_rust_no_args",
        what: "the C SDK's slice through upstream's Rust binding (perfetto-sdk), as the criterion bench",
        bin: "c_sdk_track_event_loop",
        args: &["rust_no_args"],
        toggle: "c_sdk_track_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
    HotPath {
        name: "c_sdk_rust_two_args",
        what: "the same with the two annotations",
        bin: "c_sdk_track_event_loop",
        args: &["rust_two_args"],
        toggle: "c_sdk_track_event_loop::run_*",
        counts: (2000, 4000),
        runs: 1,
        tolerance: None,
    },
];

/// A goal of the issues: `path` costs at most `goal` times `over`.
pub(super) struct Goal {
    pub(super) path: &'static str,
    pub(super) over: &'static str,
    pub(super) goal: f64,
}

/// The goals checked (issue 61: the Layer ≤ 3× a registry with a no-op
/// layer, TRACE_EVENT ≤ 1.5× its floor).
pub(super) const GOALS: &[Goal] = &[
    Goal {
        path: "trace_event_no_args",
        over: "trace_event_floor_no_args",
        goal: 1.5,
    },
    Goal {
        path: "trace_event_two_args",
        over: "trace_event_floor_two_args",
        goal: 1.5,
    },
    Goal {
        path: "layer_span",
        over: "layer_baseline",
        goal: 3.0,
    },
];

/// The goals `--genuine` checks (issue 61: TRACE_EVENT ≤ 0.2× the genuine
/// C SDK, as its C macros expand).
pub(super) const GENUINE_GOALS: &[Goal] = &[
    Goal {
        path: "trace_event_no_args",
        over: "c_sdk_no_args",
        goal: 0.2,
    },
    Goal {
        path: "trace_event_two_args",
        over: "c_sdk_two_args",
        goal: 0.2,
    },
];

/// Ratios printed without a goal.
pub(super) const RATIOS: &[(&str, &str)] = &[
    ("smb_write", "smb_heap"),
    ("trace_event_no_args", "c_sdk_rust_no_args"),
    ("trace_event_two_args", "c_sdk_rust_two_args"),
];
