//! The `zerotraced` binary: records a session from our clients, and on
//! SIGTERM stops cleanly, writing what a file session holds and removing
//! its sockets.

use std::process::{Command, Stdio};
use std::time::Duration;

use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{DataSourceSpec, ProducerClient, ProducerOptions};

#[test]
fn records_and_shuts_down_cleanly_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("ztd-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let producer_ep = Endpoint::Path(p.clone());
    let producer = ProducerClient::connect(
        &producer_ep,
        ProducerOptions {
            name: "bin-test".into(),
            ..Default::default()
        },
    )
    .unwrap();
    producer
        .register_data_source(
            DataSourceSpec {
                name: "d".into(),
                ..Default::default()
            },
            |_| {},
        )
        .unwrap();
    let mut consumer = None;
    for _ in 0..100 {
        if let Ok(cc) = ConsumerClient::connect(&Endpoint::Path(c.clone())) {
            consumer = Some(cc);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut consumer = consumer.expect("consumer socket");
    // A file session: the service writes the trace into this file.
    let out = dir.join("trace.pftrace");
    let file = std::fs::File::create(&out).unwrap();
    let mut w = protozero::HeapWriter::new();
    {
        let mut cfg = zerotrace_protos::protos::TraceConfig::from_message(w.root());
        cfg.add_buffers().set_size_kb(1024);
        cfg.add_data_sources().begin_config().set_name("d");
        cfg.set_write_into_file(true);
        cfg.set_file_write_period_ms(60_000);
    }
    consumer
        .enable_tracing(&w.finish().unwrap(), Some(&file))
        .unwrap();
    let inst = producer
        .wait_for_start("d", Duration::from_secs(10))
        .unwrap();
    let mut tw = producer.create_trace_writer(inst.target_buffer).unwrap();
    for i in 0..100u64 {
        tw.packet(|p| {
            p.set_timestamp(i);
        });
    }
    tw.flush(None);
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
    // SIGTERM: the file gets the data, the sockets go away.
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!p.exists() && !c.exists(), "socket files removed");
    let trace = std::fs::read(&out).unwrap();
    let packets: Vec<Vec<u8>> = protozero::Decoder::new(&trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .collect();
    let data = packets
        .iter()
        .filter(|p| {
            zerotrace_protos::protos::TracePacketDecoder::new(p).trusted_packet_sequence_id()
                != Some(1)
        })
        .count();
    assert_eq!(data, 100);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--version` names the program and version; `--background` returns once
/// the detached service listens and prints its pid; the consumer socket is
/// owner-only by default; SIGTERM ends the detached service and removes
/// its sockets.
#[test]
fn version_background_and_socket_modes() {
    use std::os::unix::fs::PermissionsExt;
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.trim(),
        format!("zerotraced {}", env!("CARGO_PKG_VERSION")),
        "{text}"
    );

    let dir = std::env::temp_dir().join(format!("ztd-bg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--background")
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // The foreground process has exited; the service listens on.
    let mut consumer = ConsumerClient::connect(&Endpoint::Path(c.clone())).unwrap();
    consumer.query_service_state().unwrap();
    let mode = |f: &std::path::Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&c), 0o600, "the consumer socket is owner-only");
    assert_eq!(mode(&p), 0o666);
    drop(consumer);

    let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while (c.exists() || p.exists()) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!c.exists() && !p.exists(), "SIGTERM removes the sockets");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn socket_permissions_as_perfettos_traced() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = std::env::temp_dir().join(format!("ztd-perm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    // Groups by number and by name (`root`: gid 0 in every user database).
    let own_gid = rustix::process::getgid().as_raw();
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--background")
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .arg("--set-socket-permissions")
        .arg(format!("{own_gid}:0640:root:0660"))
        .output()
        .unwrap();
    let is_root = rustix::process::geteuid().is_root();
    if !is_root && own_gid != 0 {
        // Not allowed to give a file a group we are not in: a clear error.
        assert!(!out.status.success());
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let meta = |f: &std::path::Path| std::fs::metadata(f).unwrap();
    assert_eq!(meta(&c).permissions().mode() & 0o777, 0o660);
    assert_eq!(meta(&c).gid(), 0);
    assert_eq!(meta(&p).permissions().mode() & 0o777, 0o640);
    assert_eq!(meta(&p).gid(), own_gid);
    let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while c.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // A malformed value is a usage error naming the option.
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--producer-socket")
        .arg(dir.join("p2"))
        .arg("--consumer-socket")
        .arg(dir.join("c2"))
        .arg("--set-socket-permissions")
        .arg("root:0660")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--set-socket-permissions"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `zerotraced --probes` on sockets in a fresh directory, with a consumer
/// connected once the probes have registered.
fn service_with_probes(tag: &str) -> (std::process::Child, ConsumerClient, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("ztd-probes-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (p, c) = (dir.join("p"), dir.join("c"));
    let child = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .arg("--probes")
        .arg("--producer-socket")
        .arg(&p)
        .arg("--consumer-socket")
        .arg(&c)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut consumer = None;
    for _ in 0..200 {
        if let Ok(cc) = ConsumerClient::connect(&Endpoint::Path(c.clone())) {
            consumer = Some(cc);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut consumer = consumer.expect("consumer socket");
    // The probes register with the service they run in.
    let names = [
        "linux.process_stats",
        "linux.sys_stats",
        "linux.system_info",
    ];
    for i in 0.. {
        let state = consumer.query_service_state().unwrap();
        if names
            .iter()
            .all(|n| state.windows(n.len()).any(|w| w == n.as_bytes()))
        {
            break;
        }
        assert!(i < 500, "the probes did not register");
        std::thread::sleep(Duration::from_millis(10));
    }
    (child, consumer, dir)
}

/// SIGTERM to `child`; its exit must be clean; returns its stderr.
fn terminate(child: std::process::Child) -> String {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The payloads of field `field` of the packets of `trace`.
fn payloads(trace: &[u8], field: u32) -> Vec<Vec<u8>> {
    protozero::Decoder::new(trace)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .filter_map(|p| {
            protozero::Decoder::new(&p)
                .map(|f| f.unwrap())
                .find(|f| f.id == field)
                .map(|f| f.as_bytes().unwrap().to_vec())
        })
        .collect()
}

/// `--probes`: the service serves the Linux probes from its own process; a
/// session of linux.process_stats, linux.sys_stats and linux.system_info
/// records the service's own process and threads, meminfo and the CPUs.
#[test]
fn probes_run_inside_the_service() {
    use zerotrace_protos::protos::{
        CpuInfoDecoder, ProcessStatsConfig, ProcessTreeDecoder, SysStatsConfig, SysStatsDecoder,
    };
    use zerotrace_protos::upstream_tables::{data_source_field, packet_field};
    let (child, mut consumer, dir) = service_with_probes("inside");
    let mut w = protozero::HeapWriter::new();
    {
        let mut cfg = zerotrace_protos::protos::TraceConfig::from_message(w.root());
        cfg.add_buffers().set_size_kb(4096);
        for name in [
            "linux.process_stats",
            "linux.sys_stats",
            "linux.system_info",
        ] {
            let mut ds = cfg.add_data_sources();
            let mut dc = ds.begin_config();
            dc.set_name(name);
            if name == "linux.process_stats" {
                ProcessStatsConfig::from_message(
                    dc.message()
                        .begin_nested(data_source_field::PROCESS_STATS_CONFIG),
                )
                .set_scan_all_processes_on_start(true)
                .set_record_thread_names(true);
            } else if name == "linux.sys_stats" {
                SysStatsConfig::from_message(
                    dc.message()
                        .begin_nested(data_source_field::SYS_STATS_CONFIG),
                )
                .set_meminfo_period_ms(100);
            }
        }
    }
    let session = consumer.enable_tracing(&w.finish().unwrap(), None).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    consumer.disable_tracing().unwrap();
    consumer
        .wait_for_end(session, Some(Duration::from_secs(30)))
        .unwrap();
    let trace = consumer.read_trace().unwrap();
    let service_pid = i32::try_from(child.id()).unwrap();
    let log = terminate(child);
    assert!(
        log.contains("zerotrace-probes: serving linux.ftrace, linux.process_stats"),
        "{log}"
    );
    let trees = payloads(&trace, packet_field::PROCESS_TREE);
    assert_eq!(trees.len(), 1);
    let tree = ProcessTreeDecoder::new(&trees[0]);
    // The service's process, with the probes' own thread named.
    assert!(tree.processes().any(|p| p.pid() == Some(service_pid)));
    assert!(
        tree.threads()
            .any(|t| t.tgid() == Some(service_pid) && t.name() == Some("zerotrace-probe")),
        "the probes' thread (its name cut to 15 bytes by the kernel)"
    );
    let sys = payloads(&trace, packet_field::SYS_STATS);
    assert!(sys.len() >= 2, "{}", sys.len());
    assert!(SysStatsDecoder::new(&sys[0]).meminfo().count() > 0);
    let infos = payloads(&trace, packet_field::CPU_INFO);
    assert_eq!(infos.len(), 1);
    assert!(CpuInfoDecoder::new(&infos[0]).cpus().count() >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tracefs instance of the test's own (the example's ftrace session is
/// pointed at it, never at the machine's top-level instance); removed when
/// dropped.
struct OwnInstance(std::path::PathBuf);

impl OwnInstance {
    fn create(name: &str) -> Result<OwnInstance, String> {
        let root = std::path::Path::new("/sys/kernel/tracing");
        if !root.join("events/header_page").exists() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .stderr(Stdio::null())
                .status();
        }
        let dir = root.join("instances").join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        Ok(OwnInstance(dir))
    }
}

impl Drop for OwnInstance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::write(self.0.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The README's two commands: `zerotraced --probes`, then `zerotrace
/// record` with the committed example config (its duration shortened, its
/// ftrace session on a tracefs instance of the test's own): the file holds
/// scheduling events from ftrace with the stats around them, the process
/// tree, process and system stats (only the meminfo counters the config
/// lists) and the CPUs. Without tracefs (not root) the ftrace stats say
/// that nothing could be recorded, unless `ZEROTRACE_REQUIRE_TRACEFS=1`.
#[test]
fn the_example_system_config_records_with_zerotrace_record() {
    use std::io::Write;
    use zerotrace_protos::protos::{
        CpuInfoDecoder, FtraceEventBundleDecoder, FtraceStatsDecoder, MeminfoCounters,
        ProcessTreeDecoder, SysStatsDecoder,
    };
    use zerotrace_protos::upstream_tables::packet_field;
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../probes/examples/system.pbtxt");
    let text = std::fs::read_to_string(&example).unwrap();
    assert!(text.contains("duration_ms: 10000"));
    let name = format!("zt-example-{}", std::process::id());
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    let instance = match OwnInstance::create(&name) {
        Ok(i) => Some(i),
        Err(why) => {
            assert!(!required, "ZEROTRACE_REQUIRE_TRACEFS=1 but: {why}");
            println!("the example's ftrace part did not record: {why}");
            None
        }
    };
    assert!(text.contains("      drain_period_ms: 250\n"));
    let text = text
        .replace("duration_ms: 10000", "duration_ms: 1500")
        .replace(": 1000\n", ": 250\n")
        .replace(
            "      drain_period_ms: 250\n",
            &format!("      drain_period_ms: 250\n      instance_name: \"{name}\"\n"),
        );
    let (child, _consumer, dir) = service_with_probes("example");
    let out = dir.join("system.pftrace");
    let mut record = Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .env("PERFETTO_CONSUMER_SOCK_NAME", dir.join("c"))
        .args(["record", "-c", "-", "--txt", "-o"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    record
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let recorded = record.wait_with_output().unwrap();
    assert!(recorded.status.success(), "{recorded:?}");
    terminate(child);
    let trace = std::fs::read(&out).unwrap();
    let trees = payloads(&trace, packet_field::PROCESS_TREE);
    // The start scan first; then the processes ftrace saw start running.
    assert!(!trees.is_empty());
    let me = i32::try_from(std::process::id()).unwrap();
    assert!(
        ProcessTreeDecoder::new(&trees[0])
            .processes()
            .any(|p| p.pid() == Some(me))
    );
    assert!(payloads(&trace, packet_field::PROCESS_STATS).len() >= 2);
    let sys = payloads(&trace, packet_field::SYS_STATS);
    assert!(sys.len() >= 2, "{}", sys.len());
    let keys: Vec<_> = SysStatsDecoder::new(&sys[0])
        .meminfo()
        .filter_map(|m| m.key())
        .collect();
    assert_eq!(
        keys,
        [
            MeminfoCounters::MeminfoMemTotal,
            MeminfoCounters::MeminfoMemFree,
            MeminfoCounters::MeminfoMemAvailable,
            MeminfoCounters::MeminfoCached
        ]
    );
    let infos = payloads(&trace, packet_field::CPU_INFO);
    assert_eq!(infos.len(), 1);
    assert!(CpuInfoDecoder::new(&infos[0]).cpus().count() >= 1);
    let stats = payloads(&trace, packet_field::FTRACE_STATS);
    let bundles = payloads(&trace, packet_field::FTRACE_EVENTS);
    if instance.is_some() {
        assert_eq!(stats.len(), 2, "ftrace_stats at the start and the end");
        assert!(!bundles.is_empty(), "no ftrace_events");
        let switches: usize = bundles
            .iter()
            .map(|b| {
                FtraceEventBundleDecoder::new(b)
                    .compact_sched()
                    .map_or(0, |c| c.switch_timestamp().count())
            })
            .sum();
        assert!(switches > 0, "no sched_switch in compact_sched");
    } else {
        assert_eq!(stats.len(), 1);
        assert!(
            FtraceStatsDecoder::new(&stats[0])
                .failed_ftrace_events()
                .any(|e| e == "sched/sched_switch")
        );
    }
    drop(instance);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An option that would be parsed and then ignored is a usage error:
/// `--http-additional-cors-origins` means nothing without `--websocket`.
#[test]
fn cors_origins_without_the_websocket_are_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_zerotraced"))
        .args(["--http-additional-cors-origins", "http://localhost:4242"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--websocket"), "{err}");
}
