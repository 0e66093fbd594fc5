//! What these probes will not do of a data source's config, said the same
//! way wherever the user looks: `zerotrace record` before it starts the
//! session, `zerotrace stats` from the trace's own `trace_config`, and (for
//! `linux.ftrace`) the trace's `ftrace_stats`, whose `failed_ftrace_events`
//! carry the same lines. Perfetto's producers have no call that reports a
//! data source's error to the service; upstream's probes log it and, for
//! ftrace, name it in `ftrace_stats`.

use super::ds_config;
use crate::ftrace::config::{FtraceOptions, refusal};
use crate::procfs::config::{ProcessStatsOptions, SysStatsOptions};
use zerotrace_protos::upstream_tables::data_source_field;

/// The lines that say which fields of data source `name`'s config
/// (`DataSourceConfig`, encoded) these probes refuse or cannot read; the
/// data source records without them. Empty for a data source the probes
/// do not serve.
pub fn config_refusals(name: &str, ds_config: &[u8]) -> Vec<String> {
    let nested = |field| ds_config::nested(ds_config, field);
    match name {
        super::ftrace::NAME => match nested(data_source_field::FTRACE_CONFIG) {
            Ok(b) => match FtraceOptions::from_config(b) {
                Ok(o) => o.refused.iter().map(|f| refusal(f)).collect(),
                Err(e) => vec![format!("{name}: {e}")],
            },
            Err(e) => vec![format!("{name}: {e}")],
        },
        super::process_stats::NAME => match nested(data_source_field::PROCESS_STATS_CONFIG) {
            Ok(b) => match ProcessStatsOptions::from_config(b) {
                Ok(o) => lines("ProcessStatsConfig", &o.not_implemented),
                Err(e) => vec![format!("{name}: {e}")],
            },
            Err(e) => vec![format!("{name}: {e}")],
        },
        super::perf::NAME => match nested(data_source_field::PERF_EVENT_CONFIG) {
            Ok(b) => match crate::perf::config::PerfOptions::from_config(b) {
                Ok(o) => o.refusal_lines(),
                Err(e) => vec![format!("{name}: {e}")],
            },
            Err(e) => vec![format!("{name}: {e}")],
        },
        super::sys_stats::NAME => match nested(data_source_field::SYS_STATS_CONFIG) {
            Ok(b) => match SysStatsOptions::from_config(b) {
                Ok(o) => lines("SysStatsConfig", &o.not_implemented),
                Err(e) => vec![format!("{name}: {e}")],
            },
            Err(e) => vec![format!("{name}: {e}")],
        },
        // The heap profiler runs in the profiled process (the
        // `HeapProfiler` allocator or the preload library), not in the
        // probes; what it refuses is said here all the same.
        zerotrace_heap_profile::HEAPPROFD_DATA_SOURCE => {
            zerotrace_heap_profile::config_refusals(ds_config)
        }
        _ => Vec::new(),
    }
}

fn lines(message: &str, fields: &[&str]) -> Vec<String> {
    fields
        .iter()
        .map(|f| format!("{message}.{f}: not supported by these probes, recorded without it"))
        .collect()
}

#[cfg(test)]
mod tests {
    use protozero::HeapWriter;

    use super::*;
    use zerotrace_protos::protos::{FtraceConfig, ProcessStatsConfig, SysStatsConfig};

    fn ds(f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            f(&mut m);
        }
        w.finish().unwrap()
    }

    #[test]
    fn the_heap_profilers_refusals_are_said_too() {
        // heapprofd_config (105) { sampling_interval_bytes: 4096,
        // stream_allocations: true }.
        let refused = ds(|m| {
            let mut h = m.begin_nested(105);
            h.append_varint(1, 4096);
            h.append_varint(23, 1);
        });
        assert_eq!(
            config_refusals("android.heapprofd", &refused),
            [
                "HeapprofdConfig.stream_allocations: not supported by this profiler, recorded without it"
            ]
        );
        // No interval: the profiler cannot run, and says why.
        let unusable = ds(|m| {
            m.begin_nested(105);
        });
        let lines = config_refusals("android.heapprofd", &unusable);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("sampling interval is 0"), "{lines:?}");
    }

    #[test]
    fn each_data_source_names_what_it_refuses() {
        let ftrace = ds(|m| {
            FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG))
                .set_enable_function_graph(true)
                .add_ftrace_events("sched/sched_switch");
        });
        assert_eq!(
            config_refusals("linux.ftrace", &ftrace),
            [refusal("enable_function_graph")]
        );
        // Every ProcessStatsConfig field is implemented.
        let ps = ds(|m| {
            ProcessStatsConfig::from_message(
                m.begin_nested(data_source_field::PROCESS_STATS_CONFIG),
            )
            .set_proc_stats_cache_ttl_ms(1000)
            .set_scan_smaps_rollup(true)
            .set_proc_stats_poll_ms(100);
        });
        assert!(config_refusals("linux.process_stats", &ps).is_empty());
        let ss = ds(|m| {
            SysStatsConfig::from_message(m.begin_nested(data_source_field::SYS_STATS_CONFIG))
                .set_gpufreq_period_ms(100);
        });
        let got = config_refusals("linux.sys_stats", &ss);
        assert!(
            got[0].starts_with("SysStatsConfig.gpufreq_period_ms: "),
            "{got:?}"
        );
        assert!(config_refusals("track_event", &ss).is_empty());
    }

    /// A ring buffer past the cap does not start the data source, and the
    /// consumer is told why before the session starts; the cap itself is
    /// taken.
    #[test]
    fn a_ring_buffer_past_the_cap_is_refused_with_its_reason() {
        let perf = |pages: u32| {
            ds(|m| {
                zerotrace_protos::protos::PerfEventConfig::from_message(
                    m.begin_nested(data_source_field::PERF_EVENT_CONFIG),
                )
                .set_ring_buffer_pages(pages);
            })
        };
        assert!(config_refusals("linux.perf", &perf(1 << 15)).is_empty());
        let got = config_refusals("linux.perf", &perf(1 << 16));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("linux.perf: PerfEventConfig.ring_buffer_pages: 65536 "),
            "{got:?}"
        );
        assert!(got[0].contains("32768"), "names the cap: {got:?}");
    }
}
