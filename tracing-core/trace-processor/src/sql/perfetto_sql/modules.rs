//! The modules `INCLUDE PERFETTO MODULE` can name: each a name (`a.b.c`)
//! and the PerfettoSQL text we wrote for it, embedded in the binary, and
//! how a name written in an `INCLUDE` resolves to modules: its package is
//! its first component; `*` is every module, `a.*` every module whose name
//! starts with `a.`; an unknown package or module is an error naming it.
//! Running a module, once per engine, is `mod.rs`'s.

use super::error::PerfettoSqlError;

/// A module: its name and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Module {
    /// Its name.
    pub key: &'static str,
    /// Its PerfettoSQL text.
    pub sql: &'static str,
}

/// The [`Module`]s listed as `"a.b.c" => "a_b_c",`: module `a.b.c`, its
/// text the file `modules/a_b_c.sql`.
macro_rules! modules {
    ($($key:literal => $file:literal,)*) => {
        &[$(Module {
            key: $key,
            sql: include_str!(concat!("modules/", $file, ".sql")),
        }),*]
    };
}

/// Every module, sorted by name. None holds upstream's text: each is ours,
/// written from the documented meaning of its tables and functions.
pub(crate) const MODULES: &[Module] = modules![
    "android.aflags" => "android_aflags",
    "android.anrs" => "android_anrs",
    "android.app_process_starts" => "android_app_process_starts",
    "android.auto.multiuser" => "android_auto_multiuser",
    "android.battery" => "android_battery",
    "android.battery.charging_states" => "android_battery_charging_states",
    "android.battery.doze" => "android_battery_doze",
    "android.battery_stats" => "android_battery_stats",
    "android.binder" => "android_binder",
    "android.binder_breakdown" => "android_binder_breakdown",
    "android.bitmaps" => "android_bitmaps",
    "android.broadcasts" => "android_broadcasts",
    "android.cpu.cluster_type" => "android_cpu_cluster_type",
    "android.cpu.cpu_per_uid" => "android_cpu_cpu_per_uid",
    "android.critical_blocking_calls" => "android_critical_blocking_calls",
    "android.cujs.base" => "android_cujs_base",
    "android.cujs.boundaries" => "android_cujs_boundaries",
    "android.cujs.cuj_frame_counters" => "android_cujs_cuj_frame_counters",
    "android.cujs.frames" => "android_cujs_frames",
    "android.cujs.relevant_slices" => "android_cujs_relevant_slices",
    "android.cujs.slices" => "android_cujs_slices",
    "android.cujs.sysui_cujs" => "android_cujs_sysui_cujs",
    "android.cujs.threads" => "android_cujs_threads",
    "android.device" => "android_device",
    "android.dumpsys.show_map" => "android_dumpsys_show_map",
    "android.dvfs" => "android_dvfs",
    "android.entity_state_residency" => "android_entity_state_residency",
    "android.frame_blocking_calls.blocking_calls_aggregation" => "android_frame_blocking_calls_blocking_calls_aggregation",
    "android.frames.jank_type" => "android_frames_jank_type",
    "android.frames.per_frame_metrics" => "android_frames_per_frame_metrics",
    "android.frames.timeline" => "android_frames_timeline",
    "android.frames.timeline_maxsdk28" => "android_frames_timeline_maxsdk28",
    "android.freezer" => "android_freezer",
    "android.garbage_collection" => "android_garbage_collection",
    "android.gpu.frequency" => "android_gpu_frequency",
    "android.gpu.mali_power_state" => "android_gpu_mali_power_state",
    "android.gpu.memory" => "android_gpu_memory",
    "android.gpu.work_period" => "android_gpu_work_period",
    "android.input" => "android_input",
    "android.io" => "android_io",
    "android.job_scheduler" => "android_job_scheduler",
    "android.kernel_wakelocks" => "android_kernel_wakelocks",
    "android.memory.dmabuf" => "android_memory_dmabuf",
    "android.memory.dmabuf_spans" => "android_memory_dmabuf_spans",
    "android.memory.heap_graph.bitmap" => "android_memory_heap_graph_bitmap",
    "android.memory.heap_graph.class_relationship" => "android_memory_heap_graph_class_relationship",
    "android.memory.heap_graph.class_summary_tree" => "android_memory_heap_graph_class_summary_tree",
    "android.memory.heap_graph.class_tree" => "android_memory_heap_graph_class_tree",
    "android.memory.heap_graph.dominator_class_tree" => "android_memory_heap_graph_dominator_class_tree",
    "android.memory.heap_graph.dominator_tree" => "android_memory_heap_graph_dominator_tree",
    "android.memory.heap_graph.excluded_refs" => "android_memory_heap_graph_excluded_refs",
    "android.memory.heap_graph.experimental_flamegraph" => "android_memory_heap_graph_experimental_flamegraph",
    "android.memory.heap_graph.heap_graph_class_aggregation" => "android_memory_heap_graph_heap_graph_class_aggregation",
    "android.memory.heap_graph.heap_graph_stats" => "android_memory_heap_graph_heap_graph_stats",
    "android.memory.heap_graph.helpers" => "android_memory_heap_graph_helpers",
    "android.memory.heap_graph.object_tree" => "android_memory_heap_graph_object_tree",
    "android.memory.heap_graph.oome" => "android_memory_heap_graph_oome",
    "android.memory.heap_graph.raw_dominator_tree" => "android_memory_heap_graph_raw_dominator_tree",
    "android.memory.heap_profile.callstacks" => "android_memory_heap_profile_callstacks",
    "android.memory.heap_profile.intervals" => "android_memory_heap_profile_intervals",
    "android.memory.heap_profile.summary_tree" => "android_memory_heap_profile_summary_tree",
    "android.memory.lmk" => "android_memory_lmk",
    "android.memory.memory_breakdown" => "android_memory_memory_breakdown",
    "android.memory.process" => "android_memory_process",
    "android.monitor_contention" => "android_monitor_contention",
    "android.network_packets" => "android_network_packets",
    "android.oom_adjuster" => "android_oom_adjuster",
    "android.package_lookup" => "android_package_lookup",
    "android.power_rails" => "android_power_rails",
    "android.process_metadata" => "android_process_metadata",
    "android.profiling_manager.startup" => "android_profiling_manager_startup",
    "android.profiling_manager.util" => "android_profiling_manager_util",
    "android.render_thread" => "android_render_thread",
    "android.screen_state" => "android_screen_state",
    "android.screenshots" => "android_screenshots",
    "android.services" => "android_services",
    "android.slices" => "android_slices",
    "android.startup.startup_breakdowns" => "android_startup_startup_breakdowns",
    "android.startup.startup_events" => "android_startup_startup_events",
    "android.startup.startups" => "android_startup_startups",
    "android.startup.startups_maxsdk28" => "android_startup_startups_maxsdk28",
    "android.startup.startups_minsdk29" => "android_startup_startups_minsdk29",
    "android.startup.startups_minsdk33" => "android_startup_startups_minsdk33",
    "android.startup.time_to_display" => "android_startup_time_to_display",
    "android.statsd" => "android_statsd",
    "android.surfaceflinger" => "android_surfaceflinger",
    "android.suspend" => "android_suspend",
    "android.thread" => "android_thread",
    "android.user_list" => "android_user_list",
    "android.version" => "android_version",
    "android.wakeups" => "android_wakeups",
    "android.winscope.inputmethod" => "android_winscope_inputmethod",
    "android.winscope.rect" => "android_winscope_rect",
    "android.winscope.surfaceflinger" => "android_winscope_surfaceflinger",
    "android.winscope.transitions" => "android_winscope_transitions",
    "android.winscope.viewcapture" => "android_winscope_viewcapture",
    "android.winscope.windowmanager" => "android_winscope_windowmanager",
    "appleos.instruments.samples" => "appleos_instruments_samples",
    "callstacks.stack_profile" => "callstacks_stack_profile",
    "callstacks.symbolize" => "callstacks_symbolize",
    "chrome.android_input" => "chrome_android_input",
    "chrome.event_latency" => "chrome_event_latency",
    "chrome.event_latency_description" => "chrome_event_latency_description",
    "chrome.graphics_pipeline" => "chrome_graphics_pipeline",
    "chrome.histograms" => "chrome_histograms",
    "chrome.input" => "chrome_input",
    "chrome.interactions" => "chrome_interactions",
    "chrome.metadata" => "chrome_metadata",
    "chrome.page_loads" => "chrome_page_loads",
    "chrome.scroll_jank.predictor_error" => "chrome_scroll_jank_predictor_error",
    "chrome.scroll_jank.scroll_jank_cause_map" => "chrome_scroll_jank_scroll_jank_cause_map",
    "chrome.scroll_jank.scroll_jank_cause_utils" => "chrome_scroll_jank_scroll_jank_cause_utils",
    "chrome.scroll_jank.scroll_jank_v3" => "chrome_scroll_jank_scroll_jank_v3",
    "chrome.scroll_jank.scroll_jank_v3_cause" => "chrome_scroll_jank_scroll_jank_v3_cause",
    "chrome.scroll_jank.scroll_offsets" => "chrome_scroll_jank_scroll_offsets",
    "chrome.scroll_jank.utils" => "chrome_scroll_jank_utils",
    "chrome.speedometer" => "chrome_speedometer",
    "chrome.speedometer_2_1" => "chrome_speedometer_2_1",
    "chrome.speedometer_3" => "chrome_speedometer_3",
    "chrome.startups" => "chrome_startups",
    "chrome.vsync_intervals" => "chrome_vsync_intervals",
    "chrome.web_content_interactions" => "chrome_web_content_interactions",
    "counters.global_tracks" => "counters_global_tracks",
    "counters.intervals" => "counters_intervals",
    "graphs.dominator_tree" => "graphs_dominator_tree",
    "graphs.hierarchy" => "graphs_hierarchy",
    "graphs.partition" => "graphs_partition",
    "graphs.scan" => "graphs_scan",
    "graphs.search" => "graphs_search",
    "intervals.create_intervals" => "intervals_create_intervals",
    "intervals.fill_gaps" => "intervals_fill_gaps",
    "intervals.intersect" => "intervals_intersect",
    "intervals.mipmap" => "intervals_mipmap",
    "intervals.overlap" => "intervals_overlap",
    "linux.block_io" => "linux_block_io",
    "linux.cpu.frequency" => "linux_cpu_frequency",
    "linux.cpu.idle" => "linux_cpu_idle",
    "linux.cpu.idle_stats" => "linux_cpu_idle_stats",
    "linux.cpu.idle_time_in_state" => "linux_cpu_idle_time_in_state",
    "linux.cpu.utilization.general" => "linux_cpu_utilization_general",
    "linux.cpu.utilization.process" => "linux_cpu_utilization_process",
    "linux.cpu.utilization.slice" => "linux_cpu_utilization_slice",
    "linux.cpu.utilization.system" => "linux_cpu_utilization_system",
    "linux.cpu.utilization.thread" => "linux_cpu_utilization_thread",
    "linux.cpu.utilization.thread_cpu" => "linux_cpu_utilization_thread_cpu",
    "linux.devfreq" => "linux_devfreq",
    "linux.irqs" => "linux_irqs",
    "linux.memory.general" => "linux_memory_general",
    "linux.memory.high_watermark" => "linux_memory_high_watermark",
    "linux.memory.process" => "linux_memory_process",
    "linux.perf.counters" => "linux_perf_counters",
    "linux.perf.samples" => "linux_perf_samples",
    "linux.systemd_journald" => "linux_systemd_journald",
    "linux.threads" => "linux_threads",
    "pixel.camera" => "pixel_camera",
    "pixel.touch" => "pixel_touch",
    "pkvm.hypervisor" => "pkvm_hypervisor",
    "sched.latency" => "sched_latency",
    "sched.runnable" => "sched_runnable",
    "sched.states" => "sched_states",
    "sched.thread_executing_span" => "sched_thread_executing_span",
    "sched.thread_executing_span_with_slice" => "sched_thread_executing_span_with_slice",
    "sched.thread_level_parallelism" => "sched_thread_level_parallelism",
    "sched.thread_state_flattened" => "sched_thread_state_flattened",
    "sched.time_in_state" => "sched_time_in_state",
    "sched.with_context" => "sched_with_context",
    "slices.cpu_time" => "slices_cpu_time",
    "slices.flat_slices" => "slices_flat_slices",
    "slices.flow" => "slices_flow",
    "slices.hierarchy" => "slices_hierarchy",
    "slices.self_dur" => "slices_self_dur",
    "slices.stack" => "slices_stack",
    "slices.time_in_state" => "slices_time_in_state",
    "slices.with_context" => "slices_with_context",
    "stack_trace.jit" => "stack_trace_jit",
    "stacks.cpu_profiling" => "stacks_cpu_profiling",
    "stacks.symbolization_candidates" => "stacks_symbolization_candidates",
    "std.gpu.context" => "std_gpu_context",
    "std.metasql.unparenthesize" => "std_metasql_unparenthesize",
    "std.thread.with_context" => "std_thread_with_context",
    "std.traceinfo.metadata_for_primary_scope" => "std_traceinfo_metadata_for_primary_scope",
    "std.traceinfo.trace" => "std_traceinfo_trace",
    "std.trees.table_conversion" => "std_trees_table_conversion",
    "time.conversion" => "time_conversion",
    "traced.stats" => "traced_stats",
    "v8.jit" => "v8_jit",
    "viz.slices" => "viz_slices",
    "viz.summary.counters" => "viz_summary_counters",
    "viz.summary.processes" => "viz_summary_processes",
    "viz.summary.slices" => "viz_summary_slices",
    "viz.summary.threads" => "viz_summary_threads",
    "viz.summary.trace" => "viz_summary_trace",
    "viz.summary.track_event" => "viz_summary_track_event",
    "viz.threads" => "viz_threads",
    "viz.track_event_callstacks" => "viz_track_event_callstacks",
];

/// The package of a module name: its first component.
fn package(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

/// The modules `key` names, in order, out of `modules`.
pub(crate) fn resolve<'m>(
    modules: &'m [Module],
    key: &str,
) -> Result<Vec<&'m Module>, PerfettoSqlError> {
    if key == "*" {
        return Ok(modules.iter().collect());
    }
    let pkg = package(key);
    if !modules.iter().any(|m| package(m.key) == pkg) {
        return Err(PerfettoSqlError::UnknownPackage {
            key: key.to_owned(),
        });
    }
    if let Some(prefix) = key.strip_suffix('*') {
        return Ok(modules
            .iter()
            .filter(|m| m.key.starts_with(prefix))
            .collect());
    }
    modules
        .iter()
        .find(|m| m.key == key)
        .map(|m| vec![m])
        .ok_or_else(|| PerfettoSqlError::UnknownModule {
            key: key.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[Module] = &[
        Module {
            key: "a.one",
            sql: "",
        },
        Module {
            key: "a.two.x",
            sql: "",
        },
        Module { key: "b", sql: "" },
    ];

    fn keys(key: &str) -> Result<Vec<&'static str>, PerfettoSqlError> {
        resolve(FIXTURE, key).map(|v| v.iter().map(|m| m.key).collect())
    }

    #[test]
    fn names_resolve_exactly_by_wildcard_or_to_an_error_naming_them() {
        assert_eq!(keys("a.one").unwrap(), ["a.one"]);
        assert_eq!(keys("a.*").unwrap(), ["a.one", "a.two.x"]);
        assert_eq!(keys("a.two.*").unwrap(), ["a.two.x"]);
        assert_eq!(keys("*").unwrap(), ["a.one", "a.two.x", "b"]);
        assert_eq!(keys("b").unwrap(), ["b"]);
        assert_eq!(keys("a.nothing.*").unwrap(), [] as [&str; 0]);
        assert_eq!(
            keys("a.three").unwrap_err().to_string(),
            "INCLUDE: unknown module 'a.three'"
        );
        assert_eq!(
            keys("zz.top").unwrap_err().to_string(),
            "INCLUDE: Package 'zz.top' not found"
        );
        // The shipped modules are sorted and unique.
        assert!(MODULES.windows(2).all(|w| w[0].key < w[1].key));
    }
}
