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

/// Every module, sorted by name. None holds upstream's text: each is ours,
/// written from the documented meaning of its tables and functions.
pub(crate) const MODULES: &[Module] = &[
    Module {
        key: "android.aflags",
        sql: include_str!("modules/android_aflags.sql"),
    },
    Module {
        key: "android.anrs",
        sql: include_str!("modules/android_anrs.sql"),
    },
    Module {
        key: "android.auto.multiuser",
        sql: include_str!("modules/android_auto_multiuser.sql"),
    },
    Module {
        key: "android.battery",
        sql: include_str!("modules/android_battery.sql"),
    },
    Module {
        key: "android.battery_stats",
        sql: include_str!("modules/android_battery_stats.sql"),
    },
    Module {
        key: "android.binder",
        sql: include_str!("modules/android_binder.sql"),
    },
    Module {
        key: "android.binder_breakdown",
        sql: include_str!("modules/android_binder_breakdown.sql"),
    },
    Module {
        key: "android.cpu.cluster_type",
        sql: include_str!("modules/android_cpu_cluster_type.sql"),
    },
    Module {
        key: "android.critical_blocking_calls",
        sql: include_str!("modules/android_critical_blocking_calls.sql"),
    },
    Module {
        key: "android.cujs.base",
        sql: include_str!("modules/android_cujs_base.sql"),
    },
    Module {
        key: "android.cujs.boundaries",
        sql: include_str!("modules/android_cujs_boundaries.sql"),
    },
    Module {
        key: "android.cujs.cuj_frame_counters",
        sql: include_str!("modules/android_cujs_cuj_frame_counters.sql"),
    },
    Module {
        key: "android.cujs.frames",
        sql: include_str!("modules/android_cujs_frames.sql"),
    },
    Module {
        key: "android.cujs.relevant_slices",
        sql: include_str!("modules/android_cujs_relevant_slices.sql"),
    },
    Module {
        key: "android.cujs.sysui_cujs",
        sql: include_str!("modules/android_cujs_sysui_cujs.sql"),
    },
    Module {
        key: "android.cujs.threads",
        sql: include_str!("modules/android_cujs_threads.sql"),
    },
    Module {
        key: "android.device",
        sql: include_str!("modules/android_device.sql"),
    },
    Module {
        key: "android.dvfs",
        sql: include_str!("modules/android_dvfs.sql"),
    },
    Module {
        key: "android.entity_state_residency",
        sql: include_str!("modules/android_entity_state_residency.sql"),
    },
    Module {
        key: "android.frames.jank_type",
        sql: include_str!("modules/android_frames_jank_type.sql"),
    },
    Module {
        key: "android.frames.per_frame_metrics",
        sql: include_str!("modules/android_frames_per_frame_metrics.sql"),
    },
    Module {
        key: "android.frames.timeline",
        sql: include_str!("modules/android_frames_timeline.sql"),
    },
    Module {
        key: "android.frames.timeline_maxsdk28",
        sql: include_str!("modules/android_frames_timeline_maxsdk28.sql"),
    },
    Module {
        key: "android.garbage_collection",
        sql: include_str!("modules/android_garbage_collection.sql"),
    },
    Module {
        key: "android.gpu.frequency",
        sql: include_str!("modules/android_gpu_frequency.sql"),
    },
    Module {
        key: "android.gpu.mali_power_state",
        sql: include_str!("modules/android_gpu_mali_power_state.sql"),
    },
    Module {
        key: "android.gpu.memory",
        sql: include_str!("modules/android_gpu_memory.sql"),
    },
    Module {
        key: "android.gpu.work_period",
        sql: include_str!("modules/android_gpu_work_period.sql"),
    },
    Module {
        key: "android.input",
        sql: include_str!("modules/android_input.sql"),
    },
    Module {
        key: "android.kernel_wakelocks",
        sql: include_str!("modules/android_kernel_wakelocks.sql"),
    },
    Module {
        key: "android.memory.dmabuf",
        sql: include_str!("modules/android_memory_dmabuf.sql"),
    },
    Module {
        key: "android.memory.dmabuf_spans",
        sql: include_str!("modules/android_memory_dmabuf_spans.sql"),
    },
    Module {
        key: "android.memory.heap_graph.bitmap",
        sql: include_str!("modules/android_memory_heap_graph_bitmap.sql"),
    },
    Module {
        key: "android.memory.heap_graph.class_relationship",
        sql: include_str!("modules/android_memory_heap_graph_class_relationship.sql"),
    },
    Module {
        key: "android.memory.heap_graph.class_summary_tree",
        sql: include_str!("modules/android_memory_heap_graph_class_summary_tree.sql"),
    },
    Module {
        key: "android.memory.heap_graph.class_tree",
        sql: include_str!("modules/android_memory_heap_graph_class_tree.sql"),
    },
    Module {
        key: "android.memory.heap_graph.dominator_class_tree",
        sql: include_str!("modules/android_memory_heap_graph_dominator_class_tree.sql"),
    },
    Module {
        key: "android.memory.heap_graph.dominator_tree",
        sql: include_str!("modules/android_memory_heap_graph_dominator_tree.sql"),
    },
    Module {
        key: "android.memory.heap_graph.excluded_refs",
        sql: include_str!("modules/android_memory_heap_graph_excluded_refs.sql"),
    },
    Module {
        key: "android.memory.heap_graph.experimental_flamegraph",
        sql: include_str!("modules/android_memory_heap_graph_experimental_flamegraph.sql"),
    },
    Module {
        key: "android.memory.heap_graph.heap_graph_class_aggregation",
        sql: include_str!("modules/android_memory_heap_graph_heap_graph_class_aggregation.sql"),
    },
    Module {
        key: "android.memory.heap_graph.heap_graph_stats",
        sql: include_str!("modules/android_memory_heap_graph_heap_graph_stats.sql"),
    },
    Module {
        key: "android.memory.heap_graph.helpers",
        sql: include_str!("modules/android_memory_heap_graph_helpers.sql"),
    },
    Module {
        key: "android.memory.heap_graph.object_tree",
        sql: include_str!("modules/android_memory_heap_graph_object_tree.sql"),
    },
    Module {
        key: "android.memory.heap_graph.oome",
        sql: include_str!("modules/android_memory_heap_graph_oome.sql"),
    },
    Module {
        key: "android.memory.heap_graph.raw_dominator_tree",
        sql: include_str!("modules/android_memory_heap_graph_raw_dominator_tree.sql"),
    },
    Module {
        key: "android.memory.heap_profile.callstacks",
        sql: include_str!("modules/android_memory_heap_profile_callstacks.sql"),
    },
    Module {
        key: "android.memory.heap_profile.intervals",
        sql: include_str!("modules/android_memory_heap_profile_intervals.sql"),
    },
    Module {
        key: "android.memory.heap_profile.summary_tree",
        sql: include_str!("modules/android_memory_heap_profile_summary_tree.sql"),
    },
    Module {
        key: "android.memory.lmk",
        sql: include_str!("modules/android_memory_lmk.sql"),
    },
    Module {
        key: "android.memory.memory_breakdown",
        sql: include_str!("modules/android_memory_memory_breakdown.sql"),
    },
    Module {
        key: "android.memory.process",
        sql: include_str!("modules/android_memory_process.sql"),
    },
    Module {
        key: "android.network_packets",
        sql: include_str!("modules/android_network_packets.sql"),
    },
    Module {
        key: "android.oom_adjuster",
        sql: include_str!("modules/android_oom_adjuster.sql"),
    },
    Module {
        key: "android.package_lookup",
        sql: include_str!("modules/android_package_lookup.sql"),
    },
    Module {
        key: "android.power_rails",
        sql: include_str!("modules/android_power_rails.sql"),
    },
    Module {
        key: "android.process_metadata",
        sql: include_str!("modules/android_process_metadata.sql"),
    },
    Module {
        key: "android.render_thread",
        sql: include_str!("modules/android_render_thread.sql"),
    },
    Module {
        key: "android.slices",
        sql: include_str!("modules/android_slices.sql"),
    },
    Module {
        key: "android.startup.startup_events",
        sql: include_str!("modules/android_startup_startup_events.sql"),
    },
    Module {
        key: "android.startup.startups",
        sql: include_str!("modules/android_startup_startups.sql"),
    },
    Module {
        key: "android.startup.startups_maxsdk28",
        sql: include_str!("modules/android_startup_startups_maxsdk28.sql"),
    },
    Module {
        key: "android.startup.startups_minsdk29",
        sql: include_str!("modules/android_startup_startups_minsdk29.sql"),
    },
    Module {
        key: "android.startup.startups_minsdk33",
        sql: include_str!("modules/android_startup_startups_minsdk33.sql"),
    },
    Module {
        key: "android.surfaceflinger",
        sql: include_str!("modules/android_surfaceflinger.sql"),
    },
    Module {
        key: "android.suspend",
        sql: include_str!("modules/android_suspend.sql"),
    },
    Module {
        key: "android.user_list",
        sql: include_str!("modules/android_user_list.sql"),
    },
    Module {
        key: "android.version",
        sql: include_str!("modules/android_version.sql"),
    },
    Module {
        key: "android.winscope.inputmethod",
        sql: include_str!("modules/android_winscope_inputmethod.sql"),
    },
    Module {
        key: "android.winscope.rect",
        sql: include_str!("modules/android_winscope_rect.sql"),
    },
    Module {
        key: "android.winscope.surfaceflinger",
        sql: include_str!("modules/android_winscope_surfaceflinger.sql"),
    },
    Module {
        key: "android.winscope.transitions",
        sql: include_str!("modules/android_winscope_transitions.sql"),
    },
    Module {
        key: "android.winscope.viewcapture",
        sql: include_str!("modules/android_winscope_viewcapture.sql"),
    },
    Module {
        key: "android.winscope.windowmanager",
        sql: include_str!("modules/android_winscope_windowmanager.sql"),
    },
    Module {
        key: "appleos.instruments.samples",
        sql: include_str!("modules/appleos_instruments_samples.sql"),
    },
    Module {
        key: "callstacks.stack_profile",
        sql: include_str!("modules/callstacks_stack_profile.sql"),
    },
    Module {
        key: "callstacks.symbolize",
        sql: include_str!("modules/callstacks_symbolize.sql"),
    },
    Module {
        key: "chrome.event_latency_description",
        sql: include_str!("modules/chrome_event_latency_description.sql"),
    },
    Module {
        key: "chrome.scroll_jank.scroll_jank_cause_map",
        sql: include_str!("modules/chrome_scroll_jank_scroll_jank_cause_map.sql"),
    },
    Module {
        key: "counters.global_tracks",
        sql: include_str!("modules/counters_global_tracks.sql"),
    },
    Module {
        key: "counters.intervals",
        sql: include_str!("modules/counters_intervals.sql"),
    },
    Module {
        key: "graphs.dominator_tree",
        sql: include_str!("modules/graphs_dominator_tree.sql"),
    },
    Module {
        key: "graphs.hierarchy",
        sql: include_str!("modules/graphs_hierarchy.sql"),
    },
    Module {
        key: "graphs.partition",
        sql: include_str!("modules/graphs_partition.sql"),
    },
    Module {
        key: "graphs.scan",
        sql: include_str!("modules/graphs_scan.sql"),
    },
    Module {
        key: "graphs.search",
        sql: include_str!("modules/graphs_search.sql"),
    },
    Module {
        key: "intervals.create_intervals",
        sql: include_str!("modules/intervals_create_intervals.sql"),
    },
    Module {
        key: "intervals.fill_gaps",
        sql: include_str!("modules/intervals_fill_gaps.sql"),
    },
    Module {
        key: "intervals.intersect",
        sql: include_str!("modules/intervals_intersect.sql"),
    },
    Module {
        key: "intervals.mipmap",
        sql: include_str!("modules/intervals_mipmap.sql"),
    },
    Module {
        key: "intervals.overlap",
        sql: include_str!("modules/intervals_overlap.sql"),
    },
    Module {
        key: "linux.block_io",
        sql: include_str!("modules/linux_block_io.sql"),
    },
    Module {
        key: "linux.cpu.frequency",
        sql: include_str!("modules/linux_cpu_frequency.sql"),
    },
    Module {
        key: "linux.cpu.idle",
        sql: include_str!("modules/linux_cpu_idle.sql"),
    },
    Module {
        key: "linux.cpu.idle_stats",
        sql: include_str!("modules/linux_cpu_idle_stats.sql"),
    },
    Module {
        key: "linux.cpu.idle_time_in_state",
        sql: include_str!("modules/linux_cpu_idle_time_in_state.sql"),
    },
    Module {
        key: "linux.cpu.utilization.general",
        sql: include_str!("modules/linux_cpu_utilization_general.sql"),
    },
    Module {
        key: "linux.cpu.utilization.process",
        sql: include_str!("modules/linux_cpu_utilization_process.sql"),
    },
    Module {
        key: "linux.cpu.utilization.slice",
        sql: include_str!("modules/linux_cpu_utilization_slice.sql"),
    },
    Module {
        key: "linux.cpu.utilization.system",
        sql: include_str!("modules/linux_cpu_utilization_system.sql"),
    },
    Module {
        key: "linux.cpu.utilization.thread",
        sql: include_str!("modules/linux_cpu_utilization_thread.sql"),
    },
    Module {
        key: "linux.cpu.utilization.thread_cpu",
        sql: include_str!("modules/linux_cpu_utilization_thread_cpu.sql"),
    },
    Module {
        key: "linux.devfreq",
        sql: include_str!("modules/linux_devfreq.sql"),
    },
    Module {
        key: "linux.irqs",
        sql: include_str!("modules/linux_irqs.sql"),
    },
    Module {
        key: "linux.memory.general",
        sql: include_str!("modules/linux_memory_general.sql"),
    },
    Module {
        key: "linux.memory.high_watermark",
        sql: include_str!("modules/linux_memory_high_watermark.sql"),
    },
    Module {
        key: "linux.memory.process",
        sql: include_str!("modules/linux_memory_process.sql"),
    },
    Module {
        key: "linux.perf.counters",
        sql: include_str!("modules/linux_perf_counters.sql"),
    },
    Module {
        key: "linux.perf.samples",
        sql: include_str!("modules/linux_perf_samples.sql"),
    },
    Module {
        key: "linux.systemd_journald",
        sql: include_str!("modules/linux_systemd_journald.sql"),
    },
    Module {
        key: "linux.threads",
        sql: include_str!("modules/linux_threads.sql"),
    },
    Module {
        key: "pixel.camera",
        sql: include_str!("modules/pixel_camera.sql"),
    },
    Module {
        key: "pixel.touch",
        sql: include_str!("modules/pixel_touch.sql"),
    },
    Module {
        key: "pkvm.hypervisor",
        sql: include_str!("modules/pkvm_hypervisor.sql"),
    },
    Module {
        key: "sched.latency",
        sql: include_str!("modules/sched_latency.sql"),
    },
    Module {
        key: "sched.runnable",
        sql: include_str!("modules/sched_runnable.sql"),
    },
    Module {
        key: "sched.states",
        sql: include_str!("modules/sched_states.sql"),
    },
    Module {
        key: "sched.thread_executing_span",
        sql: include_str!("modules/sched_thread_executing_span.sql"),
    },
    Module {
        key: "sched.thread_executing_span_with_slice",
        sql: include_str!("modules/sched_thread_executing_span_with_slice.sql"),
    },
    Module {
        key: "sched.thread_level_parallelism",
        sql: include_str!("modules/sched_thread_level_parallelism.sql"),
    },
    Module {
        key: "sched.thread_state_flattened",
        sql: include_str!("modules/sched_thread_state_flattened.sql"),
    },
    Module {
        key: "sched.time_in_state",
        sql: include_str!("modules/sched_time_in_state.sql"),
    },
    Module {
        key: "sched.with_context",
        sql: include_str!("modules/sched_with_context.sql"),
    },
    Module {
        key: "slices.cpu_time",
        sql: include_str!("modules/slices_cpu_time.sql"),
    },
    Module {
        key: "slices.flat_slices",
        sql: include_str!("modules/slices_flat_slices.sql"),
    },
    Module {
        key: "slices.flow",
        sql: include_str!("modules/slices_flow.sql"),
    },
    Module {
        key: "slices.hierarchy",
        sql: include_str!("modules/slices_hierarchy.sql"),
    },
    Module {
        key: "slices.self_dur",
        sql: include_str!("modules/slices_self_dur.sql"),
    },
    Module {
        key: "slices.stack",
        sql: include_str!("modules/slices_stack.sql"),
    },
    Module {
        key: "slices.time_in_state",
        sql: include_str!("modules/slices_time_in_state.sql"),
    },
    Module {
        key: "slices.with_context",
        sql: include_str!("modules/slices_with_context.sql"),
    },
    Module {
        key: "stack_trace.jit",
        sql: include_str!("modules/stack_trace_jit.sql"),
    },
    Module {
        key: "stacks.cpu_profiling",
        sql: include_str!("modules/stacks_cpu_profiling.sql"),
    },
    Module {
        key: "stacks.symbolization_candidates",
        sql: include_str!("modules/stacks_symbolization_candidates.sql"),
    },
    Module {
        key: "std.gpu.context",
        sql: include_str!("modules/std_gpu_context.sql"),
    },
    Module {
        key: "std.metasql.unparenthesize",
        sql: include_str!("modules/std_metasql_unparenthesize.sql"),
    },
    Module {
        key: "std.thread.with_context",
        sql: include_str!("modules/std_thread_with_context.sql"),
    },
    Module {
        key: "std.traceinfo.metadata_for_primary_scope",
        sql: include_str!("modules/std_traceinfo_metadata_for_primary_scope.sql"),
    },
    Module {
        key: "std.traceinfo.trace",
        sql: include_str!("modules/std_traceinfo_trace.sql"),
    },
    Module {
        key: "std.trees.table_conversion",
        sql: include_str!("modules/std_trees_table_conversion.sql"),
    },
    Module {
        key: "time.conversion",
        sql: include_str!("modules/time_conversion.sql"),
    },
    Module {
        key: "traced.stats",
        sql: include_str!("modules/traced_stats.sql"),
    },
    Module {
        key: "v8.jit",
        sql: include_str!("modules/v8_jit.sql"),
    },
    Module {
        key: "viz.slices",
        sql: include_str!("modules/viz_slices.sql"),
    },
    Module {
        key: "viz.summary.counters",
        sql: include_str!("modules/viz_summary_counters.sql"),
    },
    Module {
        key: "viz.summary.processes",
        sql: include_str!("modules/viz_summary_processes.sql"),
    },
    Module {
        key: "viz.summary.slices",
        sql: include_str!("modules/viz_summary_slices.sql"),
    },
    Module {
        key: "viz.summary.threads",
        sql: include_str!("modules/viz_summary_threads.sql"),
    },
    Module {
        key: "viz.summary.trace",
        sql: include_str!("modules/viz_summary_trace.sql"),
    },
    Module {
        key: "viz.summary.track_event",
        sql: include_str!("modules/viz_summary_track_event.sql"),
    },
    Module {
        key: "viz.threads",
        sql: include_str!("modules/viz_threads.sql"),
    },
    Module {
        key: "viz.track_event_callstacks",
        sql: include_str!("modules/viz_track_event_callstacks.sql"),
    },
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
