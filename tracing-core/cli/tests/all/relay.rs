//! `zerotrace relay` against `zerotraced` with its relay endpoint on, both
//! in this process (the machines really apart are the netns test's):
//! producers of the "remote" machine connect to the relay's socket and
//! record into the central service beside a local producer; their packets
//! carry the machine id the service derives from the relay's hint, the
//! trace holds the machine's SystemInfo and clock exchanges; one producer's
//! disconnect leaves the other's connection alone; a central service that
//! goes away is reconnected to, and the relay's producers see the
//! disconnect and come back.

use crate::tp_support;

use zerotrace_trace_processor::Value;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use protozero::Decoder;
use zerotrace_cli::relay::{Relay, RelayConfig};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread, machine_id_from_hint};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{
    DataSourceSpec, ProducerClient, ProducerOptions, StartupTracingOptions,
};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

const WAIT: Duration = Duration::from_secs(20);
const PAYLOAD_FIELD: u32 = 900;
const HINT: &str = "relay-test-boot-id";
const DS: &str = "zt.relayed";

/// The central service on a thread: a unix producer socket for local
/// producers, a TCP one (with RelayPort) for the relay.
struct Central {
    consumer: Endpoint,
    local_producer: Endpoint,
    tcp: std::net::SocketAddr,
    daemon: Option<DaemonThread>,
}

impl Central {
    fn start(dir: &std::path::Path, port: u16) -> Central {
        Central::start_with(dir, port, true)
    }

    /// With `relay_endpoint` false the service does not serve RelayPort.
    fn start_with(dir: &std::path::Path, port: u16, relay_endpoint: bool) -> Central {
        let (local_producer, consumer) = (
            Endpoint::Path(dir.join("central-producer")),
            Endpoint::Path(dir.join("central-consumer")),
        );
        let daemon = DaemonThread::spawn(DaemonConfig {
            producer_sockets: vec![
                local_producer.clone(),
                Endpoint::Tcp(format!("127.0.0.1:{port}")),
            ],
            consumer_socket: consumer.clone(),
            log_level: 0,
            relay_endpoint,
            ..DaemonConfig::default()
        })
        .unwrap();
        let tcp = daemon.producer_tcp_addr().unwrap();
        Central {
            consumer,
            local_producer,
            tcp,
            daemon: Some(daemon),
        }
    }

    fn stop(&mut self) {
        if let Some(d) = self.daemon.take() {
            let _ = d.stop();
        }
    }
}

fn dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("zt-relay-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn relay(dir: &std::path::Path, central: std::net::SocketAddr) -> (Relay, Endpoint) {
    let listen = Endpoint::Path(dir.join("relay-producer"));
    let r = Relay::start(RelayConfig {
        listen: listen.clone(),
        listen_mode: None,
        central: Endpoint::Tcp(central.to_string()),
        machine_id_hint: HINT.into(),
        machine_name: "vm1".into(),
    })
    .unwrap();
    (r, listen)
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn producer(at: &Endpoint, name: &str) -> ProducerClient {
    producer_with(at, name, None)
}

fn producer_with(
    at: &Endpoint,
    name: &str,
    startup_tracing: Option<StartupTracingOptions>,
) -> ProducerClient {
    let p = ProducerClient::start(
        at,
        ProducerOptions {
            name: name.into(),
            startup_tracing,
            ..Default::default()
        },
    )
    .unwrap();
    p.register_data_source(
        DataSourceSpec {
            name: DS.into(),
            ..Default::default()
        },
        |_| {},
    )
    .unwrap();
    p.wait_connected(WAIT).unwrap();
    p
}

fn config() -> Vec<u8> {
    config_kb(1024)
}

fn config_kb(size_kb: u32) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(size_kb);
        c.add_data_sources().begin_config().set_name(DS);
        c.set_trace_all_machines(true);
    }
    w.finish().unwrap()
}

/// Records one session: each producer writes `tag-N` packets.
fn record(consumer: &Endpoint, producers: &[(&ProducerClient, &str)]) -> Vec<u8> {
    let mut c = ConsumerClient::connect(consumer).unwrap();
    let session = c.enable_tracing(&config(), None).unwrap();
    for (p, tag) in producers {
        let instance = p.wait_for_start(DS, WAIT).unwrap();
        let mut w = p.create_trace_writer_for(&instance).unwrap();
        for i in 0..50 {
            w.packet(|m| {
                m.message()
                    .append_bytes(PAYLOAD_FIELD, format!("{tag}-{i}").as_bytes());
            });
        }
        w.flush(None);
        p.flush_blocking(WAIT).unwrap();
    }
    assert!(c.flush(5000).unwrap());
    c.disable_tracing().unwrap();
    assert_eq!(
        c.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    c.read_trace().unwrap()
}

/// (payload, machine id) of the producers' packets; the machine ids of the
/// service's system_info and remote_clock_sync packets.
struct Seen {
    payloads: Vec<(String, Option<u32>)>,
    system_info_machines: Vec<Option<u32>>,
    clock_sync_machines: Vec<u32>,
}

fn seen(trace: &[u8]) -> Seen {
    let mut s = Seen {
        payloads: Vec::new(),
        system_info_machines: Vec::new(),
        clock_sync_machines: Vec::new(),
    };
    for f in Decoder::new(trace) {
        let p = f.unwrap().as_bytes().unwrap().to_vec();
        let machine = Decoder::new(&p).find_last(98).map(|f| f.as_u32().unwrap());
        if let Some(f) = Decoder::new(&p).find_last(PAYLOAD_FIELD) {
            let text = String::from_utf8(f.as_bytes().unwrap().to_vec()).unwrap();
            s.payloads.push((text, machine));
        }
        if TracePacketDecoder::new(&p).has_system_info() {
            s.system_info_machines.push(machine);
        }
        if Decoder::new(&p).find_last(107).is_some() {
            s.clock_sync_machines.push(machine.expect("stamped"));
        }
    }
    s
}

fn tags(s: &Seen, tag: &str) -> (usize, Vec<Option<u32>>) {
    let mine: Vec<&(String, Option<u32>)> = s
        .payloads
        .iter()
        .filter(|(t, _)| t.starts_with(&format!("{tag}-")))
        .collect();
    let mut machines: Vec<Option<u32>> = mine.iter().map(|(_, m)| *m).collect();
    machines.dedup();
    (mine.len(), machines)
}

#[test]
fn remote_producers_record_through_the_relay_beside_local_ones() {
    let d = dir("record");
    let central = Central::start(&d, 0);
    let (relay, relay_socket) = relay(&d, central.tcp);
    wait_until("a clock round", || {
        relay.counters().clock_rounds.load(Ordering::Relaxed) >= 1
    });
    let machine = machine_id_from_hint(HINT.as_bytes());
    let remote_a = producer(&relay_socket, "remote-a");
    let remote_b = producer(&relay_socket, "remote-b");
    let local = producer(&central.local_producer, "local");
    // A producer that offers its own buffer (startup tracing): the fd does
    // not cross the relay, the service declines the offer, and the producer
    // writes through SMB emulation like the others.
    let offering = producer_with(
        &relay_socket,
        "remote-offering",
        Some(StartupTracingOptions::default()),
    );
    assert!(!offering.uses_own_smb(), "the buffer cannot cross machines");
    let trace = record(
        &central.consumer,
        &[
            (&remote_a, "a"),
            (&remote_b, "b"),
            (&local, "l"),
            (&offering, "o"),
        ],
    );
    let s = seen(&trace);
    assert_eq!(tags(&s, "o"), (50, vec![Some(machine)]));
    assert_eq!(tags(&s, "a"), (50, vec![Some(machine)]));
    assert_eq!(tags(&s, "b"), (50, vec![Some(machine)]));
    assert_eq!(tags(&s, "l"), (50, vec![None]));
    assert!(
        s.system_info_machines.contains(&None) && s.system_info_machines.contains(&Some(machine)),
        "this machine's and the relay's system_info: {:?}",
        s.system_info_machines
    );
    assert_eq!(s.clock_sync_machines, [machine]);
    // The trace processor sees both machines, each with its system info,
    // the relay's packets on the relay's machine, and nothing lost.
    let tp = tp_support::load(&trace);
    assert_eq!(
        tp_support::rows(
            &tp,
            "SELECT raw_id, sysname IS NOT NULL, label_index FROM machine ORDER BY id"
        ),
        vec![
            vec![Value::Int(0), Value::Int(1), Value::Int(0)],
            vec![Value::Int(i64::from(machine)), Value::Int(1), Value::Int(1)],
        ]
    );
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    // `zerotrace stats` and `dump` name the machines.
    let file = d.join("trace.pftrace");
    std::fs::write(&file, &trace).unwrap();
    let stats = std::process::Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("stats")
        .arg(&file)
        .output()
        .unwrap();
    let stats = String::from_utf8(stats.stdout).unwrap();
    assert!(stats.contains("this machine ("), "{stats}");
    assert!(stats.contains(&format!("machine {machine} (")), "{stats}");
    assert!(stats.contains(&format!("@m{machine}")), "{stats}");
    let dump = std::process::Command::new(env!("CARGO_BIN_EXE_zerotrace"))
        .arg("dump")
        .arg(&file)
        .output()
        .unwrap();
    let dump = String::from_utf8(dump.stdout).unwrap();
    assert!(
        dump.starts_with("# machines:"),
        "{}",
        &dump[..200.min(dump.len())]
    );
    assert!(dump.contains(&format!(", machine {machine}, ")));

    // One remote producer goes away: the other's connection stays.
    drop(remote_a);
    let trace = record(&central.consumer, &[(&remote_b, "b2")]);
    assert_eq!(tags(&seen(&trace), "b2"), (50, vec![Some(machine)]));
    assert_eq!(remote_b.reconnects(), 0, "its connection was left alone");
    relay.stop();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_lost_central_service_is_reconnected_and_producers_come_back() {
    let d = dir("restart");
    let mut central = Central::start(&d, 0);
    let port = central.tcp.port();
    let (relay, relay_socket) = relay(&d, central.tcp);
    let remote = producer(&relay_socket, "remote");
    wait_until("the relay port", || {
        relay.counters().relay_port_bound.load(Ordering::Relaxed)
    });
    central.stop();
    // The relay's producers see the disconnect a service that went away
    // gives them, and the relay's own connection is lost too.
    wait_until("the producer's disconnect", || !remote.is_connected());
    wait_until("the relay port's loss", || {
        relay
            .counters()
            .relay_port_disconnects
            .load(Ordering::Relaxed)
            >= 1
    });
    let central = Central::start(&d, port);
    remote.wait_reconnected(1, WAIT).unwrap();
    wait_until("the relay port again", || {
        relay.counters().relay_port_bound.load(Ordering::Relaxed)
    });
    let machine = machine_id_from_hint(HINT.as_bytes());
    let trace = record(&central.consumer, &[(&remote, "r")]);
    let s = seen(&trace);
    assert_eq!(tags(&s, "r"), (50, vec![Some(machine)]));
    assert!(s.system_info_machines.contains(&Some(machine)));
    relay.stop();
    drop(central);
    let _ = std::fs::remove_dir_all(&d);
}

/// A central service that does not serve RelayPort: the relay says so
/// (once, with the reason), counts no clock round, and still relays its
/// producers. One of them writes more than the relay holds toward the
/// central service (its 1 MiB per direction) and hangs up at once: the
/// central trace holds every packet.
#[test]
fn a_refusing_central_is_reported_and_a_producers_last_writes_arrive() {
    let d = dir("refusing");
    let central = Central::start_with(&d, 0, false);
    let (relay, relay_socket) = relay(&d, central.tcp);
    wait_until("the refusal", || {
        relay
            .counters()
            .last_refusal()
            .is_some_and(|r| r.contains("does not serve RelayPort"))
    });
    assert_eq!(relay.counters().clock_rounds.load(Ordering::Relaxed), 0);
    assert!(!relay.counters().relay_port_bound.load(Ordering::Relaxed));

    let remote = producer(&relay_socket, "burst");
    let mut c = ConsumerClient::connect(&central.consumer).unwrap();
    let session = c.enable_tracing(&config_kb(16 * 1024), None).unwrap();
    let instance = remote.wait_for_start(DS, WAIT).unwrap();
    let mut w = remote.create_trace_writer_for(&instance).unwrap();
    const PACKETS: usize = 3000;
    let pad = "x".repeat(1000);
    for i in 0..PACKETS {
        w.packet(|m| {
            m.message()
                .append_bytes(PAYLOAD_FIELD, format!("b-{i}-{pad}").as_bytes());
        });
    }
    w.flush(None);
    drop(w);
    // Hangs up with about 3 MB on its way.
    drop(remote);
    // The relay closes the producer's central connection only once it has
    // handed over all it had: when the service no longer lists the
    // producer, every byte it sent has been taken in.
    let mut q = ConsumerClient::connect(&central.consumer).unwrap();
    wait_until("the producer's hang-up at the central service", || {
        let state = q.query_service_state().unwrap();
        !zerotrace_protos::protos::TracingServiceStateDecoder::new(&state)
            .producers()
            .any(|p| p.name() == Some("burst"))
    });
    c.disable_tracing().unwrap();
    assert_eq!(
        c.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let trace = c.read_trace().unwrap();
    let s = seen(&trace);
    let mut ids: Vec<usize> = s
        .payloads
        .iter()
        .filter_map(|(t, _)| t.strip_prefix("b-")?.split('-').next()?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), PACKETS, "packets lost at the relay");
    relay.stop();
    drop(central);
    let _ = std::fs::remove_dir_all(&d);
}

/// The command line: Perfetto's variables, and the flags over them.
#[test]
fn the_command_line_takes_perfettos_variables_and_flags() {
    use clap::Parser;
    use zerotrace_cli::commands::{Cli, Command, relay_config};
    let parse = |args: &[&str]| match Cli::parse_from(args).command {
        Command::Relay(a) => relay_config(a),
        c => panic!("{c:?}"),
    };
    let cfg = parse(&[
        "zerotrace",
        "relay",
        "--relay-socket",
        "10.0.0.1:2000",
        "--producer-socket",
        "@local-relay",
        "--machine-id-hint",
        "h1",
        "--machine-name",
        "board",
    ])
    .unwrap();
    assert_eq!(cfg.central, Endpoint::Tcp("10.0.0.1:2000".into()));
    assert_eq!(cfg.listen, Endpoint::Abstract("local-relay".into()));
    assert_eq!(
        (cfg.machine_id_hint.as_str(), cfg.machine_name.as_str()),
        ("h1", "board")
    );
    // Without a central service it says what to do.
    let missing = parse(&["zerotrace", "relay", "--producer-socket", "@x"]);
    if std::env::var_os("PERFETTO_RELAY_SOCK_NAME").is_none() {
        assert!(
            missing
                .unwrap_err()
                .to_string()
                .contains("PERFETTO_RELAY_SOCK_NAME")
        );
    }
    // The hint defaults to the kernel's boot id.
    let cfg = parse(&[
        "zerotrace",
        "relay",
        "--relay-socket",
        "10.0.0.1:2000",
        "--producer-socket",
        "@x",
    ])
    .unwrap();
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert_eq!(cfg.machine_id_hint, boot_id.trim_end());
    // Listening where it forwards to is refused.
    assert!(
        parse(&[
            "zerotrace",
            "relay",
            "--relay-socket",
            "127.0.0.1:9",
            "--producer-socket",
            "127.0.0.1:9",
        ])
        .is_err()
    );
}
