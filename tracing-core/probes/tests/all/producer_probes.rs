//! The probes' data sources on the fixture tree with a fake clock: which
//! packets each writes at start, at each poll and at stop, stamped with
//! the `now` they were given, with no sleeping and no service.

use crate::producer_common;
use crate::support::fixtures;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use producer_common::{ds_config, payload, process_stats_config, sys_stats_config};
use zerotrace_probes::procfs::ProcRoot;
use zerotrace_probes::producer::{
    BufferSink, DataSource, ProbeContext, ProbeError, Registry, process_stats::ProcessStatsSource,
    sys_stats::SysStatsSource, system_info::SystemInfo,
};
use zerotrace_protos::protos::{
    CpuInfoDecoder, MeminfoCounters, ProcessStatsConfig, ProcessStatsDecoder, ProcessTreeDecoder,
    SysStatsDecoder,
};
use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

const MS: u64 = 1_000_000;
const T0: u64 = 5_000 * MS;

struct Fake {
    ctx: ProbeContext,
    clock: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<String>>>,
}

fn fake(root: ProcRoot) -> Fake {
    let clock = Arc::new(AtomicU64::new(T0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (c, l) = (clock.clone(), log.clone());
    Fake {
        ctx: ProbeContext {
            root,
            clock: Arc::new(move || c.load(Ordering::Relaxed)),
            log: Arc::new(move |line| l.lock().unwrap().push(line.to_owned())),
            wake: zerotrace_probes::producer::no_waker(),
        },
        clock,
        log,
    }
}

/// The field of each packet's payload and its timestamp.
fn kinds(sink: &BufferSink) -> Vec<(u32, u64)> {
    let fields = [
        packet_field::PROCESS_TREE,
        packet_field::PROCESS_STATS,
        packet_field::SYS_STATS,
        packet_field::CPU_INFO,
    ];
    sink.packets
        .iter()
        .map(|p| {
            fields
                .iter()
                .find_map(|&f| payload(p, f).map(|(ts, _)| (f, ts.expect("stamped"))))
                .expect("a probes packet")
        })
        .collect()
}

#[test]
fn process_stats_scans_at_start_and_polls_on_its_period() {
    let f = fake(fixtures());
    let mut probe = ProcessStatsSource
        .create(&process_stats_config(100), &f.ctx)
        .expect("config");
    let mut sink = BufferSink::default();
    probe.start(T0, &mut sink);
    let (tree, stats) = (packet_field::PROCESS_TREE, packet_field::PROCESS_STATS);
    assert_eq!(kinds(&sink), [(tree, T0), (stats, T0)]);
    let (_, bytes) = payload(&sink.packets[0], tree).unwrap();
    let t = ProcessTreeDecoder::new(&bytes);
    let pids: Vec<_> = t.processes().map(|p| p.pid()).collect();
    assert_eq!(pids, [Some(1), Some(2), Some(42)]);
    let names: Vec<_> = t.threads().map(|t| t.name().map(str::to_owned)).collect();
    assert_eq!(
        names,
        [Some("worker one".to_owned()), Some("io".to_owned())]
    );
    assert_eq!(t.collection_end_timestamp(), Some(T0));

    assert_eq!(probe.next_deadline(), Some(T0 + 100 * MS));
    probe.poll(T0 + 99 * MS, &mut sink);
    assert_eq!(sink.packets.len(), 2, "not due yet");
    f.clock.store(T0 + 101 * MS, Ordering::Relaxed);
    probe.poll(T0 + 100 * MS, &mut sink);
    assert_eq!(kinds(&sink)[2], (stats, T0 + 100 * MS));
    let (_, bytes) = payload(&sink.packets[2], stats).unwrap();
    let s = ProcessStatsDecoder::new(&bytes);
    // Kernel threads (no memory) are left out.
    let pids: Vec<_> = s.processes().map(|p| p.pid()).collect();
    assert_eq!(pids, [Some(1), Some(42)]);
    assert_eq!(s.collection_end_timestamp(), Some(T0 + 101 * MS));

    // A stop before the next slot writes nothing more; at it, one more.
    probe.stop(T0 + 150 * MS, &mut sink);
    assert_eq!(sink.packets.len(), 3);
    probe.stop(T0 + 200 * MS, &mut sink);
    assert_eq!(kinds(&sink)[3], (stats, T0 + 200 * MS));
    let st = probe.stats();
    assert_eq!((st.packets, st.read_errors, st.skipped_polls), (4, 0, 0));
}

#[test]
fn process_stats_without_options_writes_nothing() {
    let f = fake(fixtures());
    let mut probe = ProcessStatsSource
        .create(&ds_config("linux.process_stats", |_| {}), &f.ctx)
        .unwrap();
    let mut sink = BufferSink::default();
    probe.start(T0, &mut sink);
    assert!(sink.packets.is_empty());
    assert_eq!(probe.next_deadline(), None);
}

#[test]
fn sys_stats_polls_each_source_on_its_own_period() {
    let f = fake(fixtures());
    let mut probe = SysStatsSource
        .create(&sys_stats_config(100, 250), &f.ctx)
        .unwrap();
    let mut sink = BufferSink::default();
    let counts = |sink: &BufferSink, i: usize| {
        let (ts, bytes) = payload(&sink.packets[i], packet_field::SYS_STATS).unwrap();
        let s = SysStatsDecoder::new(&bytes);
        (ts.unwrap(), s.meminfo().count(), s.cpu_stat().count())
    };
    probe.start(T0, &mut sink);
    let (ts, meminfo, cpus) = counts(&sink, 0);
    assert_eq!(ts, T0);
    assert!(meminfo > 10, "{meminfo}");
    assert_eq!(cpus, 2);
    let (_, bytes) = payload(&sink.packets[0], packet_field::SYS_STATS).unwrap();
    let total = SysStatsDecoder::new(&bytes)
        .meminfo()
        .find(|m| m.key() == Some(MeminfoCounters::MeminfoMemTotal))
        .and_then(|m| m.value());
    assert_eq!(total, Some(24_683_656));

    let mut now = T0;
    let mut seen = Vec::new();
    while now < T0 + 500 * MS {
        now = probe.next_deadline().expect("periodic");
        probe.poll(now, &mut sink);
        let (ts, meminfo, cpus) = counts(&sink, sink.packets.len() - 1);
        seen.push(((ts - T0) / MS, meminfo > 0, cpus > 0));
    }
    assert_eq!(
        seen,
        [
            (100, true, false),
            (200, true, false),
            (250, false, true),
            (300, true, false),
            (400, true, false),
            (500, true, true),
        ]
    );
    assert_eq!(probe.stats().read_errors, 0);
}

#[test]
fn system_info_writes_cpu_info_once() {
    let f = fake(fixtures());
    let mut probe = SystemInfo
        .create(&ds_config("linux.system_info", |_| {}), &f.ctx)
        .unwrap();
    let mut sink = BufferSink::default();
    probe.start(T0, &mut sink);
    assert_eq!(kinds(&sink), [(packet_field::CPU_INFO, T0)]);
    let (_, bytes) = payload(&sink.packets[0], packet_field::CPU_INFO).unwrap();
    assert_eq!(CpuInfoDecoder::new(&bytes).cpus().count(), 2);
    assert_eq!(probe.next_deadline(), None);
    probe.stop(T0 + MS, &mut sink);
    assert_eq!(sink.packets.len(), 1);
}

#[test]
fn read_errors_are_counted_and_logged_never_fatal() {
    let empty = std::env::temp_dir().join(format!("zt-probes-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let f = fake(ProcRoot::at(&empty));
    let mut sink = BufferSink::default();
    let mut procs = ProcessStatsSource
        .create(&process_stats_config(100), &f.ctx)
        .unwrap();
    procs.start(T0, &mut sink);
    for i in 1..=10 {
        procs.poll(T0 + i * 100 * MS, &mut sink);
    }
    let mut sys = SysStatsSource
        .create(&sys_stats_config(10, 10), &f.ctx)
        .unwrap();
    sys.start(T0, &mut sink);
    let mut info = SystemInfo.create(&[], &f.ctx).unwrap();
    info.start(T0, &mut sink);
    // No /proc: the scan and 11 polls fail; sys_stats writes its (empty)
    // packet with both reads failed; no cpu_info.
    assert_eq!(procs.stats().read_errors, 12);
    assert_eq!(sys.stats().read_errors, 2);
    assert_eq!(info.stats().read_errors, 1);
    assert_eq!(kinds(&sink), [(packet_field::SYS_STATS, T0)]);
    let log = f.log.lock().unwrap().clone();
    let procs_lines = log
        .iter()
        .filter(|l| l.starts_with("linux.process_stats: "))
        .count();
    // The first five in full, then one line saying the rest are counted.
    assert_eq!(procs_lines, 6, "{log:#?}");
    assert!(
        log.iter()
            .any(|l| l.starts_with("linux.sys_stats: reading "))
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("linux.system_info: reading "))
    );
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn configs_that_do_not_decode_or_ask_for_the_unimplemented_are_said_so() {
    let f = fake(fixtures());
    // process_stats_config (103) claims 9 bytes and has 1.
    let bad = [0x0a, 1, b'x', 0xba, 0x06, 9, 0x08];
    assert!(matches!(
        ProcessStatsSource.create(&bad, &f.ctx),
        Err(ProbeError::DataSourceConfig(_))
    ));
    let smaps = ds_config("linux.process_stats", |m| {
        ProcessStatsConfig::from_message(m.begin_nested(data_source_field::PROCESS_STATS_CONFIG))
            .set_proc_stats_cache_ttl_ms(1000)
            .set_scan_smaps_rollup(true);
    });
    assert!(ProcessStatsSource.create(&smaps, &f.ctx).is_ok());
    // Every ProcessStatsConfig field is implemented: nothing to say.
    let log = f.log.lock().unwrap().clone();
    assert!(log.is_empty(), "{log:?}");
    // sys_stats' gpufreq is not.
    let gpu = ds_config("linux.sys_stats", |m| {
        zerotrace_protos::protos::SysStatsConfig::from_message(
            m.begin_nested(data_source_field::SYS_STATS_CONFIG),
        )
        .set_gpufreq_period_ms(100);
    });
    assert!(SysStatsSource.create(&gpu, &f.ctx).is_ok());
    let log = f.log.lock().unwrap().clone();
    assert_eq!(
        log,
        ["linux.sys_stats: not implemented, ignored: gpufreq_period_ms"]
    );
}

#[test]
fn the_registry_serves_traced_probes_names_and_takes_more() {
    let mut r = Registry::standard();
    assert_eq!(
        r.names(),
        [
            "linux.ftrace",
            "linux.process_stats",
            "linux.sys_stats",
            "linux.system_info",
            "linux.perf"
        ]
    );
    // A further source is one line; one of the same name replaces it.
    r.add(SystemInfo);
    assert_eq!(r.names().len(), 5);
}

/// The tasks the session's ftrace saw are described as they come (a
/// `process_tree` of their processes), unless the `DISABLE_ON_DEMAND`
/// quirk turns that off, as upstream.
#[test]
fn tasks_seen_are_described_unless_disable_on_demand() {
    for disabled in [false, true] {
        let f = fake(fixtures());
        let cfg = ds_config("linux.process_stats", |m| {
            let mut c = ProcessStatsConfig::from_message(
                m.begin_nested(data_source_field::PROCESS_STATS_CONFIG),
            );
            if disabled {
                c.add_quirks(
                    zerotrace_protos::protos::process_stats_config::Quirks::DisableOnDemand,
                );
            }
        });
        let mut probe = ProcessStatsSource.create(&cfg, &f.ctx).unwrap();
        let mut sink = BufferSink::default();
        probe.start(T0, &mut sink);
        let before = sink.packets.len();
        probe.on_pids(T0 + MS, &[42], &mut sink);
        let trees = sink.packets[before..]
            .iter()
            .filter(|p| payload(p, packet_field::PROCESS_TREE).is_some())
            .count();
        assert_eq!(trees, usize::from(!disabled), "disabled: {disabled}");
    }
}
