//! The decision on every upstream config field, in one table: implemented,
//! refused by name, or kept (read by someone else, or ignored as
//! Perfetto's own service ignores it on Linux). Tests check that the table
//! covers the schema, so no field is silently ignored.

/// How the service treats a config field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// The service does what the field asks (for DataSourceConfig: reads
    /// it, or sets it for the producer).
    Implemented,
    /// Refused with an error naming the field (when set to a non-default);
    /// a refused message is refused with all its fields.
    Refused,
    /// Read by someone else (the `perfetto` command, Android services, the
    /// producer for DataSourceConfig) or ignored by Perfetto's own service
    /// under Linux: kept in the config and the trace, not acted on; a kept
    /// message is kept with all its fields.
    Kept,
}

/// The decisions on the fields of one message: (number, name, handling).
pub type FieldDecisions = &'static [(u32, &'static str, Handling)];

/// Every TraceConfig field and what the service does with it; a test checks
/// that the table covers the schema, so no field is silently ignored.
pub const TRACE_CONFIG_FIELDS: &[(u32, &str, Handling)] = &[
    (1, "buffers", Handling::Implemented),
    (2, "data_sources", Handling::Implemented),
    (3, "duration_ms", Handling::Implemented),
    (4, "enable_extra_guardrails", Handling::Implemented),
    (5, "lockdown_mode", Handling::Implemented),
    (6, "producers", Handling::Implemented),
    (7, "statsd_metadata", Handling::Kept),
    (8, "write_into_file", Handling::Implemented),
    (9, "file_write_period_ms", Handling::Implemented),
    (10, "max_file_size_bytes", Handling::Implemented),
    (11, "guardrail_overrides", Handling::Implemented),
    (12, "deferred_start", Handling::Implemented),
    (13, "flush_period_ms", Handling::Implemented),
    (14, "flush_timeout_ms", Handling::Implemented),
    (16, "notify_traceur", Handling::Kept),
    (17, "trigger_config", Handling::Implemented),
    (18, "activate_triggers", Handling::Implemented),
    (19, "allow_user_build_tracing", Handling::Kept),
    (20, "builtin_data_sources", Handling::Implemented),
    (21, "incremental_state_config", Handling::Implemented),
    (22, "unique_session_name", Handling::Implemented),
    (23, "data_source_stop_timeout_ms", Handling::Implemented),
    (24, "compression_type", Handling::Implemented),
    (25, "incident_report_config", Handling::Kept),
    (27, "trace_uuid_msb", Handling::Implemented),
    (28, "trace_uuid_lsb", Handling::Implemented),
    (29, "output_path", Handling::Implemented),
    (30, "bugreport_score", Handling::Implemented),
    (31, "statsd_logging", Handling::Kept),
    (33, "trace_filter", Handling::Refused),
    (34, "android_report_config", Handling::Kept),
    (35, "cmd_trace_start_delay", Handling::Kept),
    (
        36,
        "prefer_suspend_clock_for_duration",
        Handling::Implemented,
    ),
    (38, "bugreport_filename", Handling::Implemented),
    (39, "session_semaphores", Handling::Implemented),
    (40, "priority_boost", Handling::Refused),
    (41, "exclusive_prio", Handling::Refused),
    (43, "trace_all_machines", Handling::Implemented),
    (44, "write_flush_mode", Handling::Implemented),
    (45, "fflush_post_write", Handling::Implemented),
    (47, "compression", Handling::Implemented),
    (48, "trace_attributes", Handling::Kept),
];

/// The fields of DataSourceConfig the service reads or sets; every other
/// field is a typed sub-config (or the producer's own setting) that goes to
/// the producer untouched. A test checks that every field missing here is
/// of a message type, so a new scalar cannot slip by.
pub const DATA_SOURCE_CONFIG_FIELDS: &[(u32, &str, Handling)] = &[
    (1, "name", Handling::Implemented),
    (2, "target_buffer", Handling::Implemented),
    (3, "trace_duration_ms", Handling::Implemented),
    (4, "tracing_session_id", Handling::Implemented),
    (6, "enable_extra_guardrails", Handling::Implemented),
    (7, "stop_timeout_ms", Handling::Implemented),
    (8, "session_initiator", Handling::Implemented),
    (9, "buffer_exhausted_policy", Handling::Kept),
    (10, "priority_boost", Handling::Kept),
    (11, "target_buffer_name", Handling::Implemented),
    (12, "protovm_config", Handling::Refused),
    (
        122,
        "prefer_suspend_clock_for_duration",
        Handling::Implemented,
    ),
    (1000, "legacy_config", Handling::Kept),
];

/// Every config message the service looks into, below `perfetto.protos`,
/// with the decision on each of its fields: TraceConfig, the messages of its
/// implemented fields at every depth, and DataSourceConfig (whose typed
/// sub-configs pass through). Checked against the schema by a test.
pub const CONFIG_FIELDS: &[(&str, FieldDecisions)] = &[
    ("TraceConfig", TRACE_CONFIG_FIELDS),
    (
        "TraceConfig.BufferConfig",
        &[
            (1, "size_kb", Handling::Implemented),
            (4, "fill_policy", Handling::Implemented),
            (5, "transfer_on_clone", Handling::Implemented),
            (6, "clear_before_clone", Handling::Refused),
            (7, "name", Handling::Implemented),
            (8, "experimental_mode", Handling::Refused),
        ],
    ),
    (
        "TraceConfig.DataSource",
        &[
            (1, "config", Handling::Implemented),
            (2, "producer_name_filter", Handling::Implemented),
            (3, "producer_name_regex_filter", Handling::Implemented),
            (4, "machine_name_filter", Handling::Implemented),
        ],
    ),
    ("DataSourceConfig", DATA_SOURCE_CONFIG_FIELDS),
    (
        "TraceConfig.BuiltinDataSource",
        &[
            (1, "disable_clock_snapshotting", Handling::Implemented),
            (2, "disable_trace_config", Handling::Implemented),
            (3, "disable_system_info", Handling::Implemented),
            (4, "disable_service_events", Handling::Implemented),
            (5, "primary_trace_clock", Handling::Implemented),
            (6, "snapshot_interval_ms", Handling::Implemented),
            (
                7,
                "prefer_suspend_clock_for_snapshot",
                Handling::Implemented,
            ),
            (8, "disable_chunk_usage_histograms", Handling::Implemented),
            // Perfetto's service emits the extension descriptors it was
            // built with unless disabled; this one has none to emit.
            (9, "disable_extension_descriptors", Handling::Implemented),
            (10, "enable_concurrent_session_events", Handling::Refused),
        ],
    ),
    (
        "TraceConfig.ProducerConfig",
        &[
            (1, "producer_name", Handling::Implemented),
            (2, "shm_size_kb", Handling::Implemented),
            (3, "page_size_kb", Handling::Implemented),
        ],
    ),
    (
        "TraceConfig.GuardrailOverrides",
        &[
            // The `perfetto` command's upload quota.
            (1, "max_upload_per_day_bytes", Handling::Kept),
            (2, "max_tracing_buffer_size_kb", Handling::Implemented),
        ],
    ),
    (
        "TraceConfig.TriggerConfig",
        &[
            (1, "trigger_mode", Handling::Implemented),
            (2, "triggers", Handling::Implemented),
            (3, "trigger_timeout_ms", Handling::Implemented),
            (5, "use_clone_snapshot_if_available", Handling::Implemented),
        ],
    ),
    (
        "TraceConfig.TriggerConfig.Trigger",
        &[
            (1, "name", Handling::Implemented),
            (2, "producer_name_regex", Handling::Implemented),
            (3, "stop_delay_ms", Handling::Implemented),
            (4, "max_per_24_h", Handling::Implemented),
            (5, "skip_probability", Handling::Implemented),
        ],
    ),
    (
        "TraceConfig.IncrementalStateConfig",
        &[(1, "clear_period_ms", Handling::Implemented)],
    ),
    (
        "TraceConfig.SessionSemaphore",
        &[
            (1, "name", Handling::Implemented),
            (2, "max_other_session_count", Handling::Implemented),
        ],
    ),
    (
        "TraceConfig.CompressionConfig",
        &[
            (1, "deflate", Handling::Implemented),
            (2, "zstd", Handling::Refused),
        ],
    ),
    ("TraceConfig.CompressionConfig.Deflate", &[]),
];

#[cfg(test)]
mod field_table_tests {
    use super::super::{Limits, SessionConfig};
    use super::*;
    use protozero::{Decoder, HeapWriter};

    /// (name, number) of every field of `perfetto.protos.TraceConfig` in the
    /// descriptor set the protos crate was generated from.
    fn schema_fields() -> Vec<(String, u32)> {
        let set = zerotrace_protos::FILE_DESCRIPTOR_SET;
        let mut out = Vec::new();
        for file in Decoder::new(set)
            .filter_map(Result::ok)
            .filter(|f| f.id == 1)
        {
            let file = file.as_bytes().unwrap();
            for msg in Decoder::new(file)
                .filter_map(Result::ok)
                .filter(|f| f.id == 4)
            {
                let msg = msg.as_bytes().unwrap();
                let name = Decoder::new(msg).find_last(1).and_then(|f| f.as_str().ok());
                if name != Some("TraceConfig") {
                    continue;
                }
                for field in Decoder::new(msg)
                    .filter_map(Result::ok)
                    .filter(|f| f.id == 2)
                {
                    let d = Decoder::new(field.as_bytes().unwrap());
                    out.push((
                        d.find_last(1).unwrap().as_str().unwrap().to_owned(),
                        d.find_last(3).unwrap().as_u32().unwrap(),
                    ));
                }
            }
        }
        out
    }

    #[test]
    fn every_trace_config_field_has_a_decision() {
        let schema = schema_fields();
        assert!(schema.len() > 30, "the schema was found");
        for (name, number) in &schema {
            let entry = TRACE_CONFIG_FIELDS.iter().find(|(n, _, _)| n == number);
            assert_eq!(
                entry.map(|e| e.1),
                Some(name.as_str()),
                "field {number} {name}"
            );
        }
        assert_eq!(schema.len(), TRACE_CONFIG_FIELDS.len());
    }

    #[test]
    fn refused_fields_are_refused_by_name() {
        let limits = Limits::default();
        let base = |f: &dyn Fn(&mut protozero::Message<'_>)| {
            let mut w = HeapWriter::new();
            {
                let mut m = w.root();
                m.begin_nested(1).append_uint32(1, 64);
                f(&mut m);
            }
            w.finish().unwrap()
        };
        for (number, name, handling) in TRACE_CONFIG_FIELDS {
            if *handling != Handling::Refused {
                continue;
            }
            let cfg = base(&|m| match number {
                33 => m.append_bytes(33, &[0x0a, 0x00]),
                40 => m.append_bytes(40, &[]),
                _ => m.append_varint(*number, 1),
            });
            let err = SessionConfig::parse(&cfg, &limits).unwrap_err();
            assert!(err.to_string().contains(name), "{name}: {err}");
        }
        assert!(SessionConfig::parse(&base(&|_| {}), &limits).is_ok());
    }
}
