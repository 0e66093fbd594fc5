//! The one rule for every consumer endpoint, tried as a second user: what
//! `nobody` may do through the WebSocket bridge is exactly what it may do
//! on the consumer socket itself, capability by capability, for each way
//! the socket can be opened to it (owner only; to everyone; to a group it
//! is in). The service runs as root (this test) with the Linux probes, so
//! a hole shows: a user who may not connect to the consumer socket must
//! not record ftrace, perf callstacks or anything else through the bridge.
//!
//! Capabilities: EnableTracing with each data source the service offers
//! (and ReadBuffers of that session), QueryServiceState, Detach and Attach
//! (its own session and root's), CloneSession of root's session, lockdown
//! and output_path. The socket's answers are the oracle; the bridge's must
//! equal them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use protozero::{Decoder, HeapWriter};
use zerotrace_cli::websocket::{ALLOWED_ORIGINS, Limits, TRACED_PATH};
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::ipc::Endpoint;
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};
use zerotrace_protos::protos::{
    CloneSessionResponseDecoder, TraceConfig, TracingServiceStateDecoder,
};

use crate::{uid_support, websocket_support};
// `nobody` and `nogroup`.
use uid_support::{NOBODY as OTHER, dir_owned_by, root_or_say, run_as};
use websocket_support::{Setup, consumer_over, open};

const WAIT: Duration = Duration::from_secs(30);
const CHILD_ENV: &str = "ZT_WS_MATRIX_CHILD";
const ROOT_SESSION: &str = "zt-root-matrix";
const ROOT_KEY: &str = "zt-root-detached";
const SOURCES: [&str; 5] = [
    "linux.ftrace",
    "linux.process_stats",
    "linux.sys_stats",
    "linux.system_info",
    "linux.perf",
];

fn config(f: impl FnOnce(&mut TraceConfig<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(2048);
        f(&mut c);
    }
    w.finish().unwrap()
}

/// A short session of the data source `name` (ftrace into `instance`).
fn source_config(name: &str, instance: &str) -> Vec<u8> {
    config(|c| {
        c.set_duration_ms(300);
        let mut ds = c.add_data_sources();
        let mut dc = ds.begin_config();
        dc.set_name(name);
        if name == "linux.ftrace" {
            // DataSourceConfig.ftrace_config (100): FtraceConfig's
            // ftrace_events (1) and instance_name (25).
            let mut f = dc.message().begin_nested(100);
            f.append_string(1, "sched/sched_switch");
            f.append_string(25, instance);
        }
    })
}

#[test]
fn every_endpoint_lends_what_the_consumer_socket_would() {
    if let Ok(args) = std::env::var(CHILD_ENV) {
        return child(&args);
    }
    if !root_or_say("every_endpoint_lends_what_the_consumer_socket_would") {
        return;
    }
    let instance = format!("zt-matrix-{}", std::process::id());
    let tracefs = zerotrace_probes::ftrace::tracefs::find_or_mount().ok();
    let instance_dir = tracefs.map(|t| t.join("instances").join(&instance));
    let have_ftrace = instance_dir
        .as_ref()
        .is_some_and(|d| std::fs::create_dir(d).is_ok());
    if !have_ftrace {
        let msg = "every_endpoint_lends_what_the_consumer_socket_would: no tracefs instance";
        assert!(
            std::env::var_os("ZEROTRACE_REQUIRE_TRACEFS").is_none(),
            "{msg}"
        );
        println!("{msg}: linux.ftrace answers are compared, not required to record");
    }
    // Owner only (root); everyone; root's group with `nogroup` in it.
    let cases: [(&str, u32, Option<u32>); 3] = [
        ("owner-only", 0o600, None),
        ("everyone", 0o666, None),
        ("group", 0o660, Some(OTHER)),
    ];
    let mut failures = Vec::new();
    for (label, mode, group) in cases {
        let s = Setup::start_full(
            "127.0.0.1:0",
            &format!("matrix-{label}"),
            Limits::default(),
            mode,
            group,
        );
        let probes =
            ProbesProducer::start(&s.producer, Registry::standard(), ProbesOptions::default())
                .unwrap();
        probes.wait_connected(Duration::from_secs(10)).unwrap();
        // Root's sessions: one running, one detached.
        let mut root = ConsumerClient::connect(&s.consumer).unwrap();
        let _running = root
            .enable_tracing(
                &config(|c| {
                    c.set_unique_session_name(ROOT_SESSION);
                    c.set_bugreport_score(10);
                    c.add_data_sources()
                        .begin_config()
                        .set_name("linux.system_info");
                }),
                None,
            )
            .unwrap();
        let mut root2 = ConsumerClient::connect(&s.consumer).unwrap();
        let _detached = root2.enable_tracing(&config(|_| {}), None).unwrap();
        root2.detach(ROOT_KEY).unwrap();

        let child_dir =
            std::env::temp_dir().join(format!("zt-matrix-{label}-{}", std::process::id()));
        dir_owned_by(&child_dir, OTHER);
        let out = run_as(
            OTHER,
            &crate::test_name(
                module_path!(),
                "every_endpoint_lends_what_the_consumer_socket_would",
            ),
            CHILD_ENV,
            &format!(
                "{}|{}|{}|{}",
                s.addr(),
                child_dir.display(),
                match &s.consumer {
                    Endpoint::Path(p) => p.display().to_string(),
                    other => panic!("{other:?}"),
                },
                instance
            ),
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{label}: the other user's process: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let answers = |endpoint: &str| -> Vec<(String, String)> {
            stdout
                .lines()
                .filter_map(|l| l.split_once("ANSWER ").map(|(_, a)| a))
                .filter_map(|l| {
                    let mut p = l.splitn(3, ' ');
                    (p.next()? == endpoint).then(|| {
                        (
                            p.next().unwrap().to_owned(),
                            p.next().unwrap_or("").to_owned(),
                        )
                    })
                })
                .collect()
        };
        let socket = answers("socket");
        let bridge = answers("bridge");
        assert_eq!(socket.len(), 6 + SOURCES.len(), "{label}: {stdout}");
        for ((cap, want), (cap2, got)) in socket.iter().zip(&bridge) {
            assert_eq!(cap, cap2);
            if want != got {
                failures.push(format!("{label}: {cap}: socket {want:?}, bridge {got:?}"));
            }
        }
        assert_eq!(socket.len(), bridge.len(), "{label}");
        let answer = |cap: &str| {
            socket
                .iter()
                .find(|(c, _)| c == cap)
                .map(|(_, a)| a.as_str())
        };
        match label {
            // The oracle itself: the socket refuses nobody.
            "owner-only" => assert!(
                socket.iter().all(|(_, a)| a == "no connection"),
                "{label}: {socket:?}"
            ),
            _ => {
                // Let in, as itself: its own things, never root's.
                assert_eq!(
                    answer("query"),
                    Some("ok, sees 0 sessions of others"),
                    "{label}"
                );
                assert_eq!(answer("attach-own"), Some("ok"), "{label}");
                assert_eq!(answer("attach-root"), Some("refused"), "{label}");
                assert_eq!(answer("clone-root"), Some("refused"), "{label}");
                assert!(
                    answer("lockdown").unwrap().contains("lockdown_mode"),
                    "{label}"
                );
                assert!(
                    answer("output_path").unwrap().contains("output_path"),
                    "{label}"
                );
                if have_ftrace {
                    assert_eq!(
                        answer("enable+read:linux.ftrace"),
                        Some("recorded, with its packets"),
                        "{label}: the socket lets it record ftrace, so the bridge must too"
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&child_dir);
        drop(root);
        drop(root2);
        drop(probes);
        drop(s);
    }
    if let Some(d) = instance_dir.filter(|_| have_ftrace) {
        let _ = std::fs::remove_dir(d);
    }
    assert!(
        failures.is_empty(),
        "the bridge differs from the socket:\n{}",
        failures.join("\n")
    );
}

/// The packet field each data source writes its data in, where one is
/// sure to appear within the session.
fn own_field(source: &str) -> Option<u32> {
    match source {
        "linux.ftrace" => Some(1),
        "linux.system_info" => Some(45),
        _ => None,
    }
}

/// The other user's process: every capability through the consumer
/// socket, then through the bridge, one answer line each.
fn child(args: &str) {
    let parts: Vec<&str> = args.split('|').collect();
    let (addr, dir, socket, instance) = (
        parts[0].parse().unwrap(),
        PathBuf::from(parts[1]),
        PathBuf::from(parts[2]),
        parts[3].to_owned(),
    );
    assert_eq!(rustix::process::getuid().as_raw(), OTHER);
    let mut n = 0;
    let mut through_socket = || -> Option<ConsumerClient> {
        ConsumerClient::connect(&Endpoint::Path(socket.clone())).ok()
    };
    capabilities("socket", &mut through_socket, &dir, &instance);
    let mut through_bridge = || -> Option<ConsumerClient> {
        n += 1;
        let ws = open(addr, TRACED_PATH, Some(ALLOWED_ORIGINS[0])).ok()?;
        Some(consumer_over(ws, &dir, &format!("ws-{n}")))
    };
    capabilities("bridge", &mut through_bridge, &dir, &instance);
}

fn capabilities(
    endpoint: &str,
    connect: &mut dyn FnMut() -> Option<ConsumerClient>,
    dir: &Path,
    instance: &str,
) {
    let say = |cap: &str, answer: String| println!("ANSWER {endpoint} {cap} {answer}");
    let none = || "no connection".to_owned();

    say(
        "query",
        match connect() {
            None => none(),
            Some(mut c) => match c.query_service_state() {
                Err(e) => format!("error {e}"),
                Ok(state) => {
                    let own = OTHER as i32;
                    let others = TracingServiceStateDecoder::new(&state)
                        .tracing_sessions()
                        .filter(|t| t.consumer_uid() != Some(own))
                        .count();
                    format!("ok, sees {others} sessions of others")
                }
            },
        },
    );

    for source in SOURCES {
        let answer = match connect() {
            None => none(),
            Some(mut c) => {
                let req = c
                    .enable_tracing(&source_config(source, instance), None)
                    .unwrap();
                match c.wait_for_end(req, Some(WAIT)) {
                    Ok(SessionEnd::Error(e)) => format!("refused: {e}"),
                    Err(e) => format!("error {e}"),
                    Ok(SessionEnd::Disabled) => match c.read_trace() {
                        Err(e) => format!("read error {e}"),
                        Ok(trace) => {
                            let has = own_field(source).map(|id| {
                                Decoder::new(&trace).any(|f| {
                                    f.ok()
                                        .and_then(|f| f.as_bytes().ok())
                                        .is_some_and(|p| Decoder::new(p).find_last(id).is_some())
                                })
                            });
                            match has {
                                Some(true) => "recorded, with its packets".to_owned(),
                                Some(false) => "recorded, without its packets".to_owned(),
                                None => "recorded".to_owned(),
                            }
                        }
                    },
                }
            }
        };
        say(&format!("enable+read:{source}"), answer);
    }

    // Detach its own session, attach to it again; attach to root's.
    let key = format!("zt-own-{endpoint}");
    let answer = match connect() {
        None => none(),
        Some(mut c) => {
            let _ = c.enable_tracing(&config(|_| {}), None).unwrap();
            match c.detach(&key) {
                Err(e) => format!("detach error {e}"),
                Ok(()) => match connect() {
                    None => none(),
                    Some(mut c2) => match c2.attach(&key) {
                        Ok(_) => {
                            let _ = c2.disable_tracing();
                            "ok".to_owned()
                        }
                        Err(_) => "refused".to_owned(),
                    },
                },
            }
        }
    };
    say("attach-own", answer);
    say(
        "attach-root",
        match connect() {
            None => none(),
            Some(mut c) => match c.attach(ROOT_KEY) {
                Ok(_) => "ok".to_owned(),
                Err(_) => "refused".to_owned(),
            },
        },
    );
    say(
        "clone-root",
        match connect() {
            None => none(),
            Some(mut c) => match c.clone_session(None, Some(ROOT_SESSION)) {
                Err(_) => "refused".to_owned(),
                Ok(reply) if CloneSessionResponseDecoder::new(&reply).success() == Some(true) => {
                    "ok".to_owned()
                }
                Ok(_) => "refused".to_owned(),
            },
        },
    );
    let mut session_error = |cfg: Vec<u8>| match connect() {
        None => none(),
        Some(mut c) => {
            let req = c.enable_tracing(&cfg, None).unwrap();
            match c.wait_for_end(req, Some(WAIT)) {
                Ok(SessionEnd::Error(e)) => format!("refused: {e}"),
                Ok(SessionEnd::Disabled) => "ok".to_owned(),
                Err(e) => format!("error {e}"),
            }
        }
    };
    say(
        "lockdown",
        session_error(config(|c| {
            c.set_duration_ms(100);
            c.set_lockdown_mode_raw(2);
        })),
    );
    let target = dir.join(format!("from-{endpoint}.pftrace"));
    say(
        "output_path",
        session_error(config(|c| {
            c.set_duration_ms(100);
            c.set_write_into_file(true);
            c.set_output_path(&target.display().to_string());
        })),
    );
}
