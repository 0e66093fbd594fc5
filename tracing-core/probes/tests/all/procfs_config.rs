//! ProcessStatsConfig and SysStatsConfig read into the procfs probes'
//! options: implemented fields become values, every other field that is
//! set is named, periods below 10 ms are raised, bad bytes are an error.

use protozero::HeapWriter;
use zerotrace_probes::procfs::config::{
    MIN_PERIOD_MS, MIN_PROC_STATS_POLL_MS, ProcessStatsOptions, SysStatsOptions,
};
use zerotrace_probes::procfs::packets::Selection;
use zerotrace_protos::protos::process_stats_config::Quirks;
use zerotrace_protos::protos::{MeminfoCounters, ProcessStatsConfig, SysStatsConfig};

#[test]
fn process_stats_options() {
    let mut w = HeapWriter::new();
    {
        let mut c = ProcessStatsConfig::from_message(w.root());
        c.set_scan_all_processes_on_start(true)
            .set_record_thread_names(true)
            .set_proc_stats_poll_ms(5);
    }
    let bytes = w.finish().expect("writes");
    let o = ProcessStatsOptions::from_config(&bytes).expect("decodes");
    assert!(o.scan_all_processes_on_start && o.record_thread_names);
    assert!(o.on_demand, "describes the tasks ftrace sees by default");
    assert_eq!(o.proc_stats_poll_ms, Some(MIN_PROC_STATS_POLL_MS));
    assert!(o.not_implemented.is_empty());

    let mut w = HeapWriter::new();
    {
        let mut c = ProcessStatsConfig::from_message(w.root());
        c.add_quirks(Quirks::DisableOnDemand)
            .set_scan_smaps_rollup(true)
            .set_record_process_age(true)
            .set_record_process_runtime(true)
            .set_resolve_process_fds(true);
    }
    let bytes = w.finish().expect("writes");
    let o = ProcessStatsOptions::from_config(&bytes).expect("decodes");
    assert!(o.not_implemented.is_empty(), "{:?}", o.not_implemented);
    assert!(o.scan_smaps_rollup && o.resolve_process_fds);
    assert!(!o.on_demand, "DISABLE_ON_DEMAND");
    assert_eq!(o.proc_stats_poll_ms, None);
    assert!(o.record_process_age && o.record_process_runtime);
    assert!(ProcessStatsOptions::from_config(&[0x10]).is_err());
}

#[test]
fn sys_stats_options() {
    let mut w = HeapWriter::new();
    {
        let mut c = SysStatsConfig::from_message(w.root());
        c.set_meminfo_period_ms(1000)
            .add_meminfo_counters(MeminfoCounters::MeminfoMemFree)
            .set_stat_period_ms(0)
            .set_psi_period_ms(3)
            .set_thermal_period_ms(500)
            .set_buddyinfo_period_ms(100)
            .set_gpufreq_period_ms(100);
    }
    let bytes = w.finish().expect("writes");
    let o = SysStatsOptions::from_config(&bytes).expect("decodes");
    assert_eq!(o.meminfo_ms, Some(1000));
    assert_eq!(o.stat_ms, None, "0 means off");
    assert_eq!(o.psi_ms, Some(MIN_PERIOD_MS));
    assert_eq!(o.thermal_ms, Some(500));
    assert_eq!(
        (o.vmstat_ms, o.cpufreq_ms, o.diskstat_ms),
        (None, None, None)
    );
    assert_eq!(
        o.selection,
        Selection {
            meminfo: Some(vec![MeminfoCounters::MeminfoMemFree as i32]),
            vmstat: None,
            stat: None,
        }
    );
    assert_eq!(o.buddyinfo_ms, Some(100));
    assert_eq!(o.not_implemented, ["gpufreq_period_ms"]);
    assert!(SysStatsOptions::from_config(&[0x08, 0x80]).is_err());
}
