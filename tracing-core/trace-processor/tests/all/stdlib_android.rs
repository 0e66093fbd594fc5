//! The standard library's `android.*` modules on traces built here, checked
//! against what the test wrote: CPU cluster kinds, device names, battery
//! states and events, DVFS residency, suspend intervals.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.cpu_info`.
const CPU_INFO: u32 = 67;

/// A trace whose `cpu_info` lists CPUs of the given top frequencies.
fn cpus(max_khz: &[u64]) -> TraceProcessor {
    let info = packet(|p| {
        let m = p.message();
        let mut info = m.begin_nested(CPU_INFO);
        for &max in max_khz {
            let mut cpu = info.begin_nested(1);
            cpu.append_string(1, "core");
            cpu.append_uint64(2, max);
        }
    });
    TraceProcessor::from_bytes(&trace(&[info])).expect("trace")
}

#[test]
fn cluster_kinds_follow_the_clusters_rank_among_the_devices_clusters() {
    let kinds = |tp: &TraceProcessor| {
        rows(
            tp,
            "INCLUDE PERFETTO MODULE android.cpu.cluster_type;
             SELECT cpu, cluster_type FROM android_cpu_cluster_mapping ORDER BY cpu",
        )
    };
    assert_eq!(
        kinds(&cpus(&[1000, 1000, 2000, 3000])),
        vec![
            vec![i(0), s("little")],
            vec![i(1), s("little")],
            vec![i(2), s("medium")],
            vec![i(3), s("big")],
        ]
    );
    assert_eq!(
        kinds(&cpus(&[1000, 2000])),
        vec![vec![i(0), s("little")], vec![i(1), s("big")]]
    );
    // One cluster: no kind is known.
    assert_eq!(kinds(&cpus(&[1000])), vec![vec![i(0), Value::Null]]);
}

#[test]
fn device_names_come_from_the_build_fingerprint() {
    let tp = cpus(&[]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.device;
             SELECT android_device_name_from_fingerprint(
               'google/raven/raven:14/AP1A/123:user/release-keys'),
               (SELECT count(*) FROM android_device_name)"
        ),
        vec![vec![s("raven"), i(0)]]
    );
}

#[test]
fn battery_stats_values_are_named_per_state() {
    let tp = cpus(&[]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.battery_stats;
             SELECT android_battery_stats_counter_to_string('battery_stats.audio', 1.0),
               android_battery_stats_counter_to_string('battery_stats.wifi_suppl', 8.0),
               android_battery_stats_counter_to_string('battery_stats.data_conn', 13.0),
               android_battery_stats_counter_to_string('battery_stats.phone_state', 7.5),
               android_battery_stats_counter_to_string('battery_stats.plugged', 2.0),
               (SELECT count(*) FROM android_battery_stats_state),
               (SELECT count(*) FROM android_battery_stats_event_slices)"
        ),
        vec![vec![
            s("active"),
            s("4-way-handshake"),
            s("4G (LTE)"),
            s("unknown"),
            Value::Real(2.0),
            i(0),
            i(0)
        ]]
    );
}

#[test]
fn oom_scores_and_lmk_reasons_are_named_as_android_names_them() {
    let tp = cpus(&[]);
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.lmk;
             SELECT android_oom_adj_score_to_bucket_name(250),
                    android_oom_adj_score_to_bucket_name(100),
                    android_oom_adj_score_to_bucket_name(-800),
                    android_oom_adj_score_to_detailed_bucket_name(955, 10001),
                    android_oom_adj_score_to_detailed_bucket_name(30, 10001),
                    _android_lmk_kill_reason_string(3),
                    _android_lmk_kill_reason_string(1500),
                    (SELECT count(*) FROM android_lmk_events)"
        ),
        vec![vec![
            s("background"),
            s("bfgs"),
            s("system"),
            s("cached_app_lmk_first"),
            s("unknown_app"),
            s("LOW_MEM_AND_SWAP"),
            s("VENDOR_REASON"),
            i(0)
        ]]
    );
}

/// Every module here includes on an empty trace, and each public table
/// reads.
#[test]
fn every_android_module_includes_on_an_empty_trace() {
    const TABLES: &[(&str, &str)] = &[
        ("android.battery", "android_battery_charge"),
        ("android.cpu.cluster_type", "android_cpu_cluster_mapping"),
        ("android.device", "android_device_name"),
        ("android.dvfs", "android_dvfs_counter_residency"),
        ("android.memory.dmabuf", "android_memory_cumulative_dmabuf"),
        ("android.memory.lmk", "android_lmk_events"),
        ("android.oom_adjuster", "android_oom_adj_intervals"),
        ("android.suspend", "android_suspend_state"),
    ];
    let tp = cpus(&[]);
    for (module, table) in TABLES {
        let got = tp.query(&format!(
            "INCLUDE PERFETTO MODULE {module}; SELECT count(*) FROM {table}"
        ));
        assert!(got.is_ok(), "{module}: {got:?}");
    }
}
