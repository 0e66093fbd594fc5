//! Which machine and which trace a `stats` or `metadata` row belongs to.
//! Upstream gives every stat and every metadata key a scope: the whole
//! session (global: no machine, no trace), a machine, a trace, or both;
//! the rows' `machine_id` and `trace_id` columns follow from it. We load
//! one trace of one machine into these tables, so a scoped row names the
//! host (machine 0) and the first trace (trace 0).
//!
//! The scope lists are facts of Perfetto's interface, from upstream's
//! stats and metadata headers of the snapshot the conformance cases were
//! made with: the stats that are global (every other stat is per machine
//! and trace) and each metadata key's scope (a key upstream does not list,
//! such as a Chrome metadata key, has neither).

/// The stats upstream counts for the whole session.
const GLOBAL_STATS: &[&str] = &[
    "deobfuscate_location_parse_error",
    "guess_trace_type_duration_ns",
    "invalid_clock_snapshots",
    "parse_trace_duration_ns",
    "clock_sync_cache_miss",
    "heap_graph_invalid_string_id",
    "heap_graph_malformed_packet",
    "heap_graph_missing_packet",
    "sorter_push_event_out_of_order",
    "trace_sorter_negative_timestamp_dropped",
    "heap_graph_non_finalized_graph",
    "extra_parsing_descriptors_error",
];

/// The metadata keys upstream keeps per trace.
const TRACE_METADATA: &[&str] = &[
    "android_profile_boot_classpath",
    "android_profile_system_server",
    "benchmark_description",
    "benchmark_had_failures",
    "benchmark_label",
    "benchmark_name",
    "benchmark_start_time_us",
    "benchmark_story_name",
    "benchmark_story_run_index",
    "benchmark_story_run_time_us",
    "benchmark_story_tags",
    "range_of_interest_start_us",
    "statsd_triggering_subscription_id",
    "trace_config_pbtxt",
    "trace_size_bytes",
    "trace_trigger",
    "trace_type",
    "trace_uuid",
    "unique_session_name",
    "ui_state",
];

/// The metadata keys upstream keeps per machine.
const MACHINE_METADATA: &[&str] = &[
    "android_build_fingerprint",
    "android_device_manufacturer",
    "android_guest_soc_model",
    "android_hardware_revision",
    "android_incremental_build",
    "android_ram_model",
    "android_sdk_version",
    "android_serial_console",
    "android_soc_model",
    "android_storage_model",
    "system_machine",
    "system_name",
    "system_ram_bytes",
    "system_ram_gb",
    "system_release",
    "system_version",
    "tracing_service_version",
    "timezone_off_mins",
];

/// The metadata keys upstream keeps per machine and trace.
const MACHINE_AND_TRACE_METADATA: &[&str] = &[
    "all_data_source_flushed_ns",
    "all_data_source_started_ns",
    "ftrace_latest_data_start_ns",
    "slow_start_data_source",
    "tracing_disabled_ns",
    "tracing_started_ns",
];

/// `(machine_id, trace_id)` of the `stats` row of stat `name`.
pub fn stat_ids(name: &str) -> (Option<u32>, Option<u32>) {
    if GLOBAL_STATS.contains(&name) {
        (None, None)
    } else {
        (Some(0), Some(0))
    }
}

/// `(machine_id, trace_id)` of a `metadata` row of key `name`.
pub fn metadata_ids(name: &str) -> (Option<u32>, Option<u32>) {
    if MACHINE_AND_TRACE_METADATA.contains(&name) {
        (Some(0), Some(0))
    } else if MACHINE_METADATA.contains(&name) {
        (Some(0), None)
    } else if TRACE_METADATA.contains(&name) {
        (None, Some(0))
    } else {
        (None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_give_the_host_and_the_first_trace() {
        assert_eq!(stat_ids("ftrace_cpu_entries_begin"), (Some(0), Some(0)));
        assert_eq!(stat_ids("clock_sync_cache_miss"), (None, None));
        assert_eq!(
            metadata_ids("ftrace_latest_data_start_ns"),
            (Some(0), Some(0))
        );
        assert_eq!(metadata_ids("system_name"), (Some(0), None));
        assert_eq!(metadata_ids("trace_type"), (None, Some(0)));
        assert_eq!(metadata_ids("cr-a-key"), (None, None));
        #[cfg(feature = "sql")]
        {
            use crate::Value;
            let tp = crate::TraceProcessor::from_storage(crate::storage::Storage::default())
                .expect("engine");
            let r = tp
                .query(
                    "SELECT machine_id, trace_id FROM stats \
                     WHERE name IN ('android_log_num_failed', 'clock_sync_cache_miss') ORDER BY name",
                )
                .expect("query");
            assert_eq!(
                r.rows,
                [
                    vec![Value::Int(0), Value::Int(0)],
                    vec![Value::Null, Value::Null]
                ]
            );
        }
        for name in GLOBAL_STATS {
            assert!(
                crate::stat_vocabulary::stat_index(name).is_some(),
                "{name} is no stat"
            );
        }
    }
}
