//! Our probes as a producer of Perfetto's genuine service (read back by
//! the genuine SDK's consumer, and by ours), and of `zerotraced`: `zerotrace-probes`' data sources register, a session
//! asking for `linux.ftrace` (on a tracefs instance of the test's own),
//! `linux.process_stats`, `linux.sys_stats` and `linux.system_info` runs
//! for a moment, and the trace read back by a consumer holds, from either
//! service, the same: scheduling events with the ftrace stats around
//! them, the markers the test wrote, the process tree with this process,
//! a process started during the session described once ftrace saw it run,
//! meminfo counters and the CPUs; our trace processor loads it with no
//! error or data-loss stat and the same in its tables. Without tracefs (not root) the ftrace
//! part is checked to say so, unless `ZEROTRACE_REQUIRE_TRACEFS=1`.
//! (Its own test binary, not a module of `all/`: it records ftrace from
//! the kernel, which other tests' work beside it would disturb.)
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use protozero::{Decoder, HeapWriter, Message};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_interop::sdk::SdkProcess;
use zerotrace_interop::services::{Service, Which};
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};
use zerotrace_protos::protos::TraceConfig;
use zerotrace_protos::protos::{
    CpuInfoDecoder, FtraceConfig, FtraceEventBundleDecoder, FtraceStatsDecoder, ProcessStatsConfig,
    ProcessTreeDecoder, SysStatsConfig, SysStatsDecoder,
};
use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

#[path = "tp_check/mod.rs"]
mod tp_check;

const WAIT: Duration = Duration::from_secs(30);

/// Probe tests in this binary run one at a time (one tracefs instance
/// each, and the probes of one would otherwise register with the other's
/// service too).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A tracefs instance of the test's own; removed when dropped.
struct OwnInstance(PathBuf);

impl OwnInstance {
    fn create(name: &str) -> Result<OwnInstance, String> {
        let root = Path::new("/sys/kernel/tracing");
        if !root.join("events/header_page").exists() {
            let _ = std::process::Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .stderr(std::process::Stdio::null())
                .status();
        }
        let dir = root.join("instances").join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        Ok(OwnInstance(dir))
    }

    fn marker(&self, text: &str) {
        std::fs::write(self.0.join("trace_marker"), text).expect("trace_marker");
    }
}

impl Drop for OwnInstance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::write(self.0.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn data_source(c: &mut TraceConfig<'_>, name: &str, field: u32, f: impl FnOnce(Message<'_>)) {
    let mut ds = c.add_data_sources();
    let mut cfg = ds.begin_config();
    cfg.set_name(name);
    if field != 0 {
        f(cfg.message().begin_nested(field));
    }
}

fn config(instance: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(16 * 1024);
        data_source(
            &mut c,
            "linux.ftrace",
            data_source_field::FTRACE_CONFIG,
            |m| {
                let mut f = FtraceConfig::from_message(m);
                f.add_ftrace_events("sched/sched_switch")
                    .add_ftrace_events("sched/sched_waking")
                    .add_ftrace_events("sched/sched_process_exec")
                    .add_ftrace_events("task/task_rename")
                    .add_ftrace_events("ftrace/print")
                    .set_buffer_size_kb(2048)
                    .set_drain_period_ms(100)
                    .set_instance_name(instance);
            },
        );
        data_source(
            &mut c,
            "linux.process_stats",
            data_source_field::PROCESS_STATS_CONFIG,
            |m| {
                ProcessStatsConfig::from_message(m)
                    .set_scan_all_processes_on_start(true)
                    .set_record_thread_names(true);
            },
        );
        data_source(
            &mut c,
            "linux.sys_stats",
            data_source_field::SYS_STATS_CONFIG,
            |m| {
                SysStatsConfig::from_message(m).set_meminfo_period_ms(100);
            },
        );
        data_source(&mut c, "linux.system_info", 0, |_| {});
    }
    w.finish().expect("config")
}

/// Payloads of `field` in the trace's packets.
fn payloads(trace: &[u8], field: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in Decoder::new(trace) {
        let p = p.expect("trace decodes");
        if p.id != 1 {
            continue;
        }
        for f in Decoder::new(p.as_bytes().expect("packet")) {
            let f = f.expect("packet decodes");
            if f.id == field {
                out.push(f.as_bytes().expect("message").to_vec());
            }
        }
    }
    out
}

fn wait_registered(consumer: &mut ConsumerClient) {
    let deadline = Instant::now() + WAIT;
    loop {
        let state = consumer.query_service_state().expect("service state");
        let has = |n: &str| state.windows(n.len()).any(|w| w == n.as_bytes());
        if [
            "linux.ftrace",
            "linux.process_stats",
            "linux.sys_stats",
            "linux.system_info",
        ]
        .iter()
        .all(|n| has(n))
        {
            return;
        }
        assert!(Instant::now() < deadline, "the probes did not register");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn records_a_system_trace(which: Which, name: &str, genuine_consumer: bool) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    let instance_name = format!("zt-interop-{name}-{}", std::process::id());
    let instance = match OwnInstance::create(&instance_name) {
        Ok(i) => Some(i),
        Err(why) => {
            assert!(!required, "ZEROTRACE_REQUIRE_TRACEFS=1 but: {why}");
            println!("{name}: the ftrace part did not record: {why}");
            None
        }
    };
    let svc = Service::start(which, name);
    let probes = ProbesProducer::start(
        &svc.producer_endpoint(),
        Registry::standard(),
        ProbesOptions::default(),
    )
    .expect("the probes start");
    let mut consumer = ConsumerClient::connect(&svc.consumer_endpoint()).expect("consumer");
    wait_registered(&mut consumer);
    let config = config(&instance_name);
    // The genuine consumer records into a file; ours reads the buffers.
    let mut genuine = None;
    let mut session = None;
    let out = svc.dir.join("probes.pftrace");
    if genuine_consumer {
        let cfg = svc.dir.join("probes-config.pb");
        std::fs::write(&cfg, &config).expect("config file");
        let mut c = SdkProcess::consumer(&svc.producer, &svc.consumer, &cfg, &out);
        c.expect("started", WAIT);
        genuine = Some(c);
    } else {
        session = Some(consumer.enable_tracing(&config, None).expect("enable"));
    }
    std::thread::sleep(Duration::from_millis(300));
    // A process that starts after the start scan: described when ftrace
    // sees it run.
    let mut late = std::process::Command::new("sleep")
        .arg("0.8")
        .spawn()
        .expect("spawn sleep");
    if let Some(i) = &instance {
        for k in 0..5 {
            i.marker(&format!("zt-interop {k}"));
        }
    }
    std::thread::sleep(Duration::from_millis(400));
    let trace = match (genuine, session) {
        (Some(mut c), _) => {
            c.proceed();
            c.expect("written", WAIT);
            c.wait_success(WAIT);
            std::fs::read(&out).expect("the genuine consumer's trace")
        }
        (None, Some(session)) => {
            consumer.disable_tracing().expect("disable");
            assert_eq!(
                consumer.wait_for_end(session, Some(WAIT)).expect("end"),
                SessionEnd::Disabled
            );
            consumer.read_trace().expect("read")
        }
        (None, None) => unreachable!("one consumer records"),
    };
    drop(probes);
    let late_pid = i32::try_from(late.id()).expect("pid");
    let _ = late.wait();

    let me = i32::try_from(std::process::id()).expect("pid");
    let trees = payloads(&trace, packet_field::PROCESS_TREE);
    assert!(!trees.is_empty(), "{which:?}: no process_tree");
    assert!(
        trees.iter().any(|t| ProcessTreeDecoder::new(t)
            .processes()
            .any(|p| p.pid() == Some(me))),
        "{which:?}: this process is not in the tree"
    );
    let sys = payloads(&trace, packet_field::SYS_STATS);
    assert!(
        sys.iter()
            .any(|s| SysStatsDecoder::new(s).meminfo().count() > 0),
        "{which:?}: no meminfo"
    );
    let cpus = payloads(&trace, packet_field::CPU_INFO);
    assert_eq!(cpus.len(), 1, "{which:?}");
    assert!(CpuInfoDecoder::new(&cpus[0]).cpus().count() >= 1);

    // Our trace processor over the same trace: nothing lost or refused,
    // this process and the late one in the process table, meminfo
    // counters and the CPUs.
    let tp = tp_check::load(&trace);
    tp_check::assert_no_unexplained_stats(
        &tp,
        &[(
            "systrace_parse_failure",
            "the test's markers are plain text, not atrace's `B|pid|name` lines: \
             upstream counts each such print the same (checked below)",
        )],
    );
    assert_eq!(
        tp_check::int(
            &tp,
            "SELECT COALESCE(SUM(value), 0) FROM stats WHERE name = 'systrace_parse_failure'"
        ),
        if instance.is_some() { 5 } else { 0 },
        "{which:?}: one per marker"
    );
    assert_eq!(
        tp_check::int(
            &tp,
            &format!("SELECT count(*) FROM process WHERE pid = {me}")
        ),
        1,
        "{which:?}"
    );
    assert!(
        tp_check::int(
            &tp,
            "SELECT count(*) FROM counter c JOIN counter_track t \
             ON c.track_id = t.id WHERE t.type = 'meminfo'"
        ) > 0,
        "{which:?}: no meminfo counter"
    );
    assert!(
        tp_check::int(&tp, "SELECT count(*) FROM cpu") >= 1,
        "{which:?}"
    );

    let stats = payloads(&trace, packet_field::FTRACE_STATS);
    let bundles = payloads(&trace, packet_field::FTRACE_EVENTS);
    if instance.is_none() {
        assert_eq!(stats.len(), 1, "{which:?}");
        assert!(
            FtraceStatsDecoder::new(&stats[0])
                .failed_ftrace_events()
                .any(|e| e == "sched/sched_switch")
        );
        return;
    }
    assert_eq!(stats.len(), 2, "{which:?}: ftrace_stats at start and end");
    let mut switches = 0;
    let mut markers = Vec::new();
    for b in &bundles {
        let d = FtraceEventBundleDecoder::new(b);
        assert!(d.decode_error().is_none());
        if let Some(c) = d.compact_sched() {
            switches += c.switch_timestamp().count();
        }
        for ev in d.event() {
            if let Some(p) = ev.print() {
                let text = p.buf().unwrap_or("").trim_end().to_owned();
                markers.push((ev.timestamp().unwrap_or(0), text));
            }
        }
    }
    // Bundles are per CPU: markers of a thread that moved between CPUs come
    // in CPU order; the trace's order is their timestamps'.
    markers.sort();
    let markers: Vec<String> = markers.into_iter().map(|(_, t)| t).collect();
    assert!(switches > 0, "{which:?}: no sched_switch");
    let late_described = trees.iter().skip(1).any(|t| {
        ProcessTreeDecoder::new(t).processes().any(|p| {
            p.pid() == Some(late_pid) && p.cmdline().collect::<Vec<_>>() == ["sleep", "0.8"]
        })
    });
    assert!(
        late_described,
        "{which:?}: the process started during the session is not described"
    );
    let want: Vec<String> = (0..5).map(|k| format!("zt-interop {k}")).collect();
    assert_eq!(markers, want, "{which:?}");

    // The trace processor: the scheduling, the markers as `print` events
    // (not atrace's format, so no slice), the late process by its command.
    assert!(
        tp_check::int(&tp, "SELECT count(*) FROM sched WHERE utid != 0") > 0,
        "{which:?}: no sched slice"
    );
    assert_eq!(
        tp_check::rows(
            &tp,
            "SELECT extract_arg(arg_set_id, 'buf') FROM ftrace_event \
             WHERE name = 'print' ORDER BY ts"
        )
        .into_iter()
        .map(|b| b.trim_end().to_owned())
        .collect::<Vec<_>>(),
        want,
        "{which:?}"
    );
    assert_eq!(
        tp_check::rows(
            &tp,
            &format!("SELECT name, cmdline FROM process WHERE pid = {late_pid}")
        ),
        ["sleep|sleep 0.8"],
        "{which:?}"
    );
}

#[test]
fn the_probes_record_through_the_genuine_service_read_by_the_genuine_consumer() {
    records_a_system_trace(Which::Genuine, "probes-genuine", true);
}

#[test]
fn the_probes_record_through_the_genuine_service_read_by_ours() {
    records_a_system_trace(Which::Genuine, "probes-genuine-ours", false);
}

#[test]
fn the_probes_record_through_zerotraced() {
    records_a_system_trace(Which::Zerotraced, "probes-ours", false);
}
