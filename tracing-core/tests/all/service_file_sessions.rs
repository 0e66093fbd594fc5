//! Sessions that write into a file, through the sans-IO core: the core
//! decides which file a `write_into_file` session names (exactly one: a
//! passed descriptor or an `output_path`, as Perfetto's service rules),
//! waits for the driver to create an `output_path` without replacing an
//! existing file, drains the buffers into the file periodically until
//! `max_file_size_bytes` closes it and stops the session, and ends the
//! session with the reason when the driver reports that the file failed.

use crate::service_support;

use service_support::scenario::{command_kinds, data_packets, write_packets};
use service_support::*;
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::service::ProducerCall;
use zerotrace_core::service::{
    Action, ConsumerCall, ConsumerId, ProducerId, Reply, RequestId, SessionState, UNKNOWN_UID,
};
use zerotrace_protos::protos::{
    EnableTracingResponseDecoder, GetAsyncCommandResponseDecoder, TraceConfig,
};

/// EnableTracing from `c`, with or without a passed file descriptor.
fn enable_with(h: &mut Harness, c: ConsumerId, config: Vec<u8>, fd_passed: bool) -> RequestId {
    let r = h.request();
    h.svc.handle_consumer_call_with_fd(
        h.now,
        c,
        r,
        ConsumerCall::EnableTracing {
            config,
            attach_notification_only: false,
        },
        fd_passed,
    );
    h.drain();
    r
}

/// A producer serving `ds` (stopping at once), and a consumer.
/// A producer, and a consumer of the service's own uid (1000): only that
/// uid, or root, may have the service create an `output_path`.
fn setup(h: &mut Harness) -> (ProducerId, ConsumerId) {
    let p = h.producer("app", 2000);
    h.register(p, "ds", false, false);
    (p, h.consumer(1000))
}

fn file_config(extra: impl FnOnce(&mut TraceConfig<'_>)) -> Vec<u8> {
    config(&[(256, false)], &[("ds", 0)], |c| {
        c.set_write_into_file(true);
        extra(c);
    })
}

/// The EnableTracing reply: (disabled, error).
fn end_of(h: &mut Harness, c: ConsumerId, r: RequestId) -> Option<(bool, Option<String>)> {
    let replies = h.replies(c, r);
    assert!(replies.len() <= 1, "one reply: {replies:?}");
    replies.first().map(|reply| match reply {
        Reply::Ok { data, .. } => {
            let d = EnableTracingResponseDecoder::new(data);
            (d.disabled().unwrap_or(false), d.error().map(str::to_owned))
        }
        Reply::Err(e) => panic!("rejected: {e}"),
    })
}

fn take_file_actions(h: &mut Harness) -> Vec<Action> {
    let mut out = Vec::new();
    h.log.retain(|a| match a {
        Action::CreateFile { .. } | Action::WriteFile { .. } | Action::CloseFile { .. } => {
            out.push(a.clone());
            false
        }
        _ => true,
    });
    out
}

#[test]
fn write_into_file_naming_no_file_is_refused() {
    let mut h = Harness::new();
    let (p, c) = setup(&mut h);
    let r = enable_with(&mut h, c, file_config(|_| {}), false);
    let (_, error) = end_of(&mut h, c, r).expect("answered at once");
    let error = error.expect("refused");
    assert!(error.contains("exactly one output file"), "{error}");
    assert!(h.svc.sessions().is_empty());
    assert!(h.take_commands(p).is_empty(), "no data source was set up");
}

#[test]
fn write_into_file_naming_two_files_is_refused() {
    let mut h = Harness::new();
    let (p, c) = setup(&mut h);
    let cfg = file_config(|c| {
        c.set_output_path("/traces/t.pftrace");
    });
    let r = enable_with(&mut h, c, cfg, true);
    let error = end_of(&mut h, c, r).and_then(|e| e.1).expect("refused");
    assert!(error.contains("not both"), "{error}");
    assert!(h.svc.sessions().is_empty());
    assert!(take_file_actions(&mut h).is_empty(), "no file is created");
    assert!(h.take_commands(p).is_empty());
}

#[test]
fn only_the_services_uid_or_root_may_name_an_output_path() {
    let mut h = Harness::new();
    let (_p, _) = setup(&mut h);
    for (uid, allowed) in [(1000, true), (0, true), (2000, false), (UNKNOWN_UID, false)] {
        let c = h.consumer(uid);
        let cfg = file_config(|c| {
            c.set_output_path(&format!("/traces/{uid}.pftrace"));
        });
        let r = enable_with(&mut h, c, cfg, false);
        let created = !take_file_actions(&mut h).is_empty();
        assert_eq!(created, allowed, "uid {uid}");
        if !allowed {
            let error = end_of(&mut h, c, r).and_then(|e| e.1).expect("refused");
            assert!(error.contains("output_path"), "{error}");
            assert!(h.svc.session_of(c).is_none());
        }
    }
}

#[test]
fn an_output_path_that_exists_is_not_replaced_and_the_session_is_refused() {
    let mut h = Harness::new();
    let (p, c) = setup(&mut h);
    let cfg = file_config(|c| {
        c.set_output_path("/traces/t.pftrace");
    });
    let r = enable_with(&mut h, c, cfg, false);
    let session = h.svc.sessions()[0].id;
    assert_eq!(
        take_file_actions(&mut h),
        [Action::CreateFile {
            session,
            path: "/traces/t.pftrace".into()
        }]
    );
    assert!(
        h.take_commands(p).is_empty(),
        "nothing starts before the file exists"
    );
    assert!(end_of(&mut h, c, r).is_none());
    h.svc
        .output_file_created(h.now, session, Err("File exists (os error 17)".into()));
    h.drain();
    let error = end_of(&mut h, c, r).and_then(|e| e.1).expect("refused");
    assert!(
        error.contains("cannot create the trace file /traces/t.pftrace")
            && error.contains("File exists"),
        "{error}"
    );
    assert!(h.svc.sessions().is_empty(), "the session is gone");
    assert!(h.svc.session_of(c).is_none());
    assert!(h.take_commands(p).is_empty(), "no producer saw it");
    // The consumer may try again with a new path.
    let cfg = file_config(|c| {
        c.set_output_path("/traces/t2.pftrace");
    });
    enable_with(&mut h, c, cfg, false);
    assert_eq!(h.svc.sessions().len(), 1);
}

#[test]
fn a_created_output_path_begins_the_session() {
    let mut h = Harness::new();
    let (p, c) = setup(&mut h);
    let cfg = file_config(|c| {
        c.set_output_path("/traces/t.pftrace");
        c.set_deferred_start(true);
    });
    enable_with(&mut h, c, cfg, false);
    let session = h.svc.sessions()[0].id;
    let start = h.ccall(c, ConsumerCall::StartTracing);
    assert!(
        matches!(h.replies(c, start).as_slice(), [Reply::Err(_)]),
        "no start before the file exists"
    );
    h.svc.output_file_created(h.now, session, Ok(()));
    h.drain();
    assert_eq!(
        command_kinds(&h.take_commands(p)),
        ["setup_tracing", "setup_data_source"]
    );
    let start = h.ccall(c, ConsumerCall::StartTracing);
    assert!(matches!(h.replies(c, start).as_slice(), [Reply::Ok { .. }]));
    assert_eq!(command_kinds(&h.take_commands(p)), ["start_data_source"]);
    assert_eq!(h.svc.sessions()[0].state, SessionState::Started);
}

#[test]
fn a_write_error_disables_the_session_and_tells_the_consumer() {
    let mut h = Harness::new();
    let (p, c) = setup(&mut h);
    let cfg = file_config(|c| {
        c.set_file_write_period_ms(1000);
    });
    let r = enable_with(&mut h, c, cfg, true);
    let session = h.svc.sessions()[0].id;
    let b = h.svc.sessions()[0].buffers[0].0.0;
    h.take_commands(p);
    let mut w = h.writer(p, b);
    w.packet(|p| {
        p.set_timestamp(1);
    });
    w.flush(None);
    h.pump(p);
    h.advance_ms(1000);
    let writes = take_file_actions(&mut h);
    assert!(
        matches!(writes.as_slice(), [Action::WriteFile { .. }]),
        "{writes:?}"
    );
    h.svc.output_file_closed(
        h.now,
        session,
        Some("No space left on device (os error 28)".into()),
    );
    h.drain();
    assert_eq!(
        command_kinds(&h.take_commands(p)),
        ["stop_data_source"],
        "the session is disabled"
    );
    assert_eq!(h.svc.sessions()[0].state, SessionState::Stopped);
    let (disabled, error) = end_of(&mut h, c, r).expect("the session ended");
    assert!(disabled);
    let error = error.expect("with the reason");
    assert!(
        error.contains("writing the trace file failed") && error.contains("No space left"),
        "{error}"
    );
    // Nothing more is written into (or truncates) the failed file.
    w.packet(|p| {
        p.set_timestamp(2);
    });
    w.flush(None);
    h.pump(p);
    h.advance_ms(5000);
    assert!(take_file_actions(&mut h).is_empty());
    // A consumer that attaches later learns it too.
    let again = h.ccall(
        c,
        ConsumerCall::EnableTracing {
            config: Vec::new(),
            attach_notification_only: true,
        },
    );
    let (_, error) = end_of(&mut h, c, again).expect("answered");
    assert!(error.is_some_and(|e| e.contains("No space left")));
}

#[test]
fn the_end_reply_waits_for_the_file_to_close_and_carries_a_last_write_error() {
    for last_write_fails in [false, true] {
        let mut h = Harness::new();
        let (_, c) = setup(&mut h);
        let r = enable_with(&mut h, c, file_config(|_| {}), true);
        let session = h.svc.sessions()[0].id;
        h.ccall(c, ConsumerCall::DisableTracing);
        let actions = take_file_actions(&mut h);
        assert!(
            matches!(
                actions.as_slice(),
                [Action::WriteFile { .. }, Action::CloseFile { .. }]
            ),
            "{actions:?}"
        );
        assert_eq!(h.svc.sessions()[0].state, SessionState::Stopped);
        assert!(
            end_of(&mut h, c, r).is_none(),
            "no reply before the file is closed"
        );
        let error = last_write_fails.then(|| "Broken pipe (os error 32)".to_owned());
        h.svc.output_file_closed(h.now, session, error);
        h.drain();
        let (disabled, error) = end_of(&mut h, c, r).expect("the session ended");
        assert!(disabled);
        assert_eq!(
            error.is_some_and(|e| e.contains("Broken pipe")),
            last_write_fails
        );
    }
}

#[test]
fn write_into_file_drains_periodically_and_respects_the_size_limit() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    h.register(p, "ds", true, false);
    let c = h.consumer(2000);
    let cfg = config(&[(256, false)], &[("ds", 0)], |cfg| {
        cfg.set_write_into_file(true);
        cfg.set_file_write_period_ms(1000);
        cfg.set_max_file_size_bytes(40_000);
        cfg.set_write_flush_mode_raw(2);
    });
    // The file: a descriptor passed with the call.
    let r = h.request();
    h.svc.handle_consumer_call_with_fd(
        h.now,
        c,
        r,
        ConsumerCall::EnableTracing {
            config: cfg,
            attach_notification_only: false,
        },
        true,
    );
    h.drain();
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let r = h.ccall(c, ConsumerCall::ReadBuffers);
    assert!(
        matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]),
        "file sessions are not read over IPC"
    );
    let mut w = h.writer(p, b);
    let mut file = Vec::new();
    let mut closed = false;
    for second in 0..20u64 {
        write_packets(&mut w, second * 10, 10, 200);
        w.flush(None);
        h.pump(p);
        h.advance_ms(1000);
        for a in std::mem::take(&mut h.log) {
            match a {
                zerotrace_core::service::Action::WriteFile { data, .. } => file.extend(data),
                zerotrace_core::service::Action::CloseFile { .. } => closed = true,
                _ => {}
            }
        }
    }
    assert!(closed, "the size limit closed the file");
    assert!(
        file.len() <= 40_000 && file.len() > 20_000,
        "{}",
        file.len()
    );
    assert_eq!(
        h.svc.sessions()[0].state,
        SessionState::Stopping,
        "and stopped the session"
    );
    let packets: Vec<Vec<u8>> = protozero::Decoder::new(&file)
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .collect();
    let ts: Vec<u64> = data_packets(&packets)
        .iter()
        .map(|p| varint(p, 8).unwrap())
        .collect();
    assert!(ts.len() > 50);
    assert!(
        ts.windows(2).all(|w| w[1] == w[0] + 1),
        "every packet once, in order"
    );
}

/// `write_flush_mode`, by upstream's rule (`src/tracing/service/
/// tracing_service_impl.cc`, where EnableTracing reads the mode): AUTO
/// (and UNSPECIFIED) flushes every 5 s when the file is written at least
/// that often, else before every write; ENABLED flushes before every
/// write; both ignore `flush_period_ms`, which DISABLED keeps. A write that
/// follows a flush waits for the flush to end.
#[test]
fn write_flush_mode_flushes_as_upstream_and_keeps_flush_period_ms_where_it_applies() {
    // (write_flush_mode, file_write_period_ms, flush_period_ms) -> the
    // times of the flushes in the first 12 s, and whether writes wait.
    let cases: [(i32, u32, u32, &[u64], bool); 7] = [
        (1, 1000, 300, &[5000, 10000], false),
        (0, 1000, 0, &[5000, 10000], false),
        (0, 5000, 700, &[5000, 10000], false),
        (1, 6000, 300, &[6000, 12000], true),
        (3, 4000, 300, &[4000, 8000, 12000], true),
        (2, 2000, 3000, &[3000, 6000, 9000, 12000], false),
        (2, 2000, 0, &[], false),
    ];
    for (mode, period, flush_period, want, waits) in cases {
        let what =
            format!("mode {mode}, file_write_period_ms {period}, flush_period_ms {flush_period}");
        let mut h = Harness::new();
        let (p, c) = setup(&mut h);
        let cfg = file_config(|cfg| {
            cfg.set_write_flush_mode_raw(mode);
            cfg.set_file_write_period_ms(period);
            if flush_period > 0 {
                cfg.set_flush_period_ms(flush_period);
            }
        });
        enable_with(&mut h, c, cfg, true);
        h.take_commands(p);
        take_file_actions(&mut h);
        let mut flushes = Vec::new();
        for step in 1..=120u64 {
            h.advance_ms(100);
            let at = step * 100;
            let ids: Vec<u64> = h
                .take_commands(p)
                .iter()
                .filter_map(|cmd| {
                    GetAsyncCommandResponseDecoder::new(cmd)
                        .flush()
                        .map(|f| f.request_id().unwrap_or(0))
                })
                .collect();
            let writes_before = take_file_actions(&mut h)
                .iter()
                .filter(|a| matches!(a, Action::WriteFile { .. }))
                .count();
            for id in ids {
                flushes.push(at);
                if waits {
                    assert_eq!(writes_before, 0, "{what}: the write waits for the flush");
                }
                h.pcall(
                    p,
                    ProducerCall::CommitData(CommitDataRequest {
                        flush_request_id: Some(id),
                        ..Default::default()
                    }),
                );
                let writes_after = take_file_actions(&mut h)
                    .iter()
                    .filter(|a| matches!(a, Action::WriteFile { .. }))
                    .count();
                if waits && at == want[0] {
                    // The first write holds the service's own packets.
                    assert_eq!(writes_after, 1, "{what}: the flush's end writes the file");
                }
            }
        }
        assert_eq!(flushes, want, "{what}");
    }
}

/// The `AdoptPassedOutput` actions in the log, in order.
fn adoptions(h: &Harness) -> Vec<Action> {
    h.log
        .iter()
        .filter(|a| matches!(a, Action::AdoptPassedOutput { .. }))
        .cloned()
        .collect()
}

#[test]
fn the_core_adopts_a_passed_descriptor_only_as_the_one_file_of_a_new_file_session() {
    // Adopted: a write_into_file session naming no output_path, with a
    // passed descriptor, before anything is written into it.
    let mut h = Harness::new();
    let (_, c) = setup(&mut h);
    h.advance_ms(10);
    enable_with(&mut h, c, file_config(|_| {}), true);
    let session = h.svc.sessions()[0].id;
    assert_eq!(
        adoptions(&h),
        [Action::AdoptPassedOutput {
            consumer: c,
            session
        }]
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    let order: Vec<_> = h
        .log
        .iter()
        .filter(|a| {
            matches!(
                a,
                Action::AdoptPassedOutput { .. } | Action::WriteFile { .. }
            )
        })
        .collect();
    assert!(
        matches!(
            order.as_slice(),
            [Action::AdoptPassedOutput { .. }, Action::WriteFile { .. }]
        ),
        "adopted before the first write: {order:?}"
    );
    // A second EnableTracing with a descriptor from the same consumer is
    // refused, and its descriptor is not taken for the first session's.
    h.log.clear();
    let r = enable_with(&mut h, c, file_config(|_| {}), true);
    assert!(end_of(&mut h, c, r).and_then(|e| e.1).is_some(), "refused");
    assert!(adoptions(&h).is_empty(), "{:?}", h.log);

    // Not adopted otherwise: a session that does not write into a file,
    // one naming an output_path too (refused), one naming no file at all
    // (refused), an output_path alone (created by the driver), and an
    // attach with a descriptor.
    let cases: [(Vec<u8>, bool); 4] = [
        (config(&[(256, false)], &[("ds", 0)], |_| {}), true),
        (
            file_config(|c| {
                c.set_output_path("/traces/t.pftrace");
            }),
            true,
        ),
        (file_config(|_| {}), false),
        (
            file_config(|c| {
                c.set_output_path("/traces/t.pftrace");
            }),
            false,
        ),
    ];
    for (i, (cfg, fd_passed)) in cases.into_iter().enumerate() {
        let mut h = Harness::new();
        let (_, c) = setup(&mut h);
        enable_with(&mut h, c, cfg, fd_passed);
        assert!(adoptions(&h).is_empty(), "case {i}: {:?}", h.log);
    }
    let mut h = Harness::new();
    let (_, c) = setup(&mut h);
    enable_with(
        &mut h,
        c,
        config(&[(256, false)], &[("ds", 0)], |_| {}),
        false,
    );
    let r = h.request();
    h.svc.handle_consumer_call_with_fd(
        h.now,
        c,
        r,
        ConsumerCall::EnableTracing {
            config: file_config(|_| {}),
            attach_notification_only: true,
        },
        true,
    );
    h.drain();
    assert!(adoptions(&h).is_empty(), "attach: {:?}", h.log);
}

/// The same rules through `zerotraced`'s driver, with real files.
#[cfg(target_os = "linux")]
mod driver {
    use std::fs::File;
    use std::io::Read;
    use std::path::PathBuf;
    use std::time::Duration;

    use super::service_support::DaemonThread;
    use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
    use zerotrace_core::daemon::DaemonConfig;
    use zerotrace_core::ipc::Endpoint;
    use zerotrace_protos::protos::TraceConfig;

    fn start(name: &str) -> (DaemonThread, Endpoint, PathBuf) {
        let dir = std::env::temp_dir().join(format!("zt-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let consumer = Endpoint::Path(dir.join("consumer"));
        let daemon = DaemonThread::spawn(DaemonConfig {
            producer_sockets: vec![Endpoint::Path(dir.join("producer"))],
            consumer_socket: consumer.clone(),
            log_level: 0,
            ..DaemonConfig::default()
        })
        .unwrap();
        (daemon, consumer, dir)
    }

    fn file_config(extra: impl FnOnce(&mut TraceConfig<'_>)) -> Vec<u8> {
        super::service_support::config(&[(256, false)], &[("ds", 0)], |c| {
            c.set_write_into_file(true);
            extra(c);
        })
    }

    fn end(c: &mut ConsumerClient, file: Option<&File>, config: &[u8]) -> SessionEnd {
        let req = c.enable_tracing(config, file).unwrap();
        c.wait_for_end(req, Some(Duration::from_secs(30))).unwrap()
    }

    #[test]
    fn a_full_disk_ends_the_session_and_the_consumer_hears_why() {
        let (_daemon, ep, _) = start("full");
        let mut c = ConsumerClient::connect(&ep).unwrap();
        let full = File::options().write(true).open("/dev/full").unwrap();
        let cfg = file_config(|c| {
            c.set_duration_ms(200);
        });
        match end(&mut c, Some(&full), &cfg) {
            SessionEnd::Error(e) => assert!(
                e.contains("writing the trace file failed") && e.contains("No space left"),
                "{e}"
            ),
            SessionEnd::Disabled => panic!("the failed write went unreported"),
        }
    }

    #[test]
    fn a_pipe_whose_reader_left_keeps_what_was_written_and_ends_the_session() {
        let (_daemon, ep, _) = start("pipe");
        let mut c = ConsumerClient::connect(&ep).unwrap();
        let (mut reader, writer) = std::io::pipe().unwrap();
        let writer = File::from(std::os::fd::OwnedFd::from(writer));
        let cfg = file_config(|c| {
            c.set_file_write_period_ms(100);
        });
        let req = c.enable_tracing(&cfg, Some(&writer)).unwrap();
        drop(writer);
        // The first periodic write: whole packets.
        let mut first = vec![0u8; 1 << 16];
        let n = reader.read(&mut first).unwrap();
        first.truncate(n);
        assert!(n > 0);
        let records: Vec<_> = protozero::Decoder::new(&first).collect();
        assert!(
            records.iter().all(|r| r.as_ref().is_ok_and(|f| f.id == 1)),
            "whole Trace.packet records"
        );
        drop(reader);
        c.disable_tracing().unwrap();
        match c.wait_for_end(req, Some(Duration::from_secs(30))).unwrap() {
            SessionEnd::Error(e) => assert!(e.contains("Broken pipe"), "{e}"),
            SessionEnd::Disabled => panic!("the failed write went unreported"),
        }
    }

    #[test]
    fn an_existing_output_path_is_neither_replaced_nor_truncated() {
        let (_daemon, ep, dir) = start("exists");
        let mut c = ConsumerClient::connect(&ep).unwrap();
        let path = dir.join("existing.pftrace");
        std::fs::write(&path, b"keep").unwrap();
        let cfg = file_config(|c| {
            c.set_duration_ms(100);
            c.set_output_path(path.to_str().unwrap());
        });
        match end(&mut c, None, &cfg) {
            SessionEnd::Error(e) => assert!(e.contains("cannot create the trace file"), "{e}"),
            SessionEnd::Disabled => panic!("an existing file was accepted"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
        // A new path is created and written.
        let fresh = dir.join("fresh.pftrace");
        let cfg = file_config(|c| {
            c.set_duration_ms(100);
            c.set_output_path(fresh.to_str().unwrap());
        });
        let mut c = ConsumerClient::connect(&ep).unwrap();
        assert_eq!(end(&mut c, None, &cfg), SessionEnd::Disabled);
        assert!(std::fs::metadata(&fresh).unwrap().len() > 0);
        // Neither a passed file nor an output_path: refused.
        let mut c = ConsumerClient::connect(&ep).unwrap();
        let cfg = file_config(|c| {
            c.set_duration_ms(100);
        });
        match end(&mut c, None, &cfg) {
            SessionEnd::Error(e) => assert!(e.contains("exactly one output file"), "{e}"),
            SessionEnd::Disabled => panic!("a session writing into nothing was accepted"),
        }
    }
}
