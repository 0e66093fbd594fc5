//! Deterministic scenarios driving the sans-IO service core: no sockets, a
//! fake clock, producers writing through the real arbiter and TraceWriter
//! into heap SMBs the fake environment hands out.

mod service_support;

use service_support::*;
use zerotrace_core::service::{ConsumerCall, DataSourceState, ProducerCall, Reply, SessionState};
use zerotrace_protos::protos::{
    AttachResponseDecoder, CloneSessionResponseDecoder, EnableTracingResponseDecoder,
    GetAsyncCommandResponseDecoder, GetTraceStatsResponseDecoder, TracePacketDecoder,
};

/// Sequence id of the service's own packets.
const SERVICE_SEQ: u64 = 1;

fn data_packets(packets: &[Vec<u8>]) -> Vec<&Vec<u8>> {
    packets
        .iter()
        .filter(|p| varint(p, 10) != Some(SERVICE_SEQ))
        .collect()
}

fn write_packets(w: &mut zerotrace_core::producer::TraceWriter, from: u64, n: u64, size: usize) {
    for i in from..from + n {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &vec![(i % 251) as u8; size]);
        });
    }
}

/// The error an EnableTracing reply carries.
fn enable_error(
    h: &mut Harness,
    c: zerotrace_core::service::ConsumerId,
    r: zerotrace_core::service::RequestId,
) -> String {
    let replies = h.replies(c, r);
    EnableTracingResponseDecoder::new(ok_data(&replies[0]))
        .error()
        .expect("an error reply")
        .to_owned()
}

fn ok_data(reply: &Reply) -> &[u8] {
    match reply {
        Reply::Ok { data, .. } => data,
        Reply::Err(e) => panic!("error reply: {e}"),
    }
}

fn command_kinds(cmds: &[Vec<u8>]) -> Vec<&'static str> {
    cmds.iter()
        .map(|c| {
            let d = GetAsyncCommandResponseDecoder::new(c);
            if d.has_setup_tracing() {
                "setup_tracing"
            } else if d.has_setup_data_source() {
                "setup_data_source"
            } else if d.has_start_data_source() {
                "start_data_source"
            } else if d.has_stop_data_source() {
                "stop_data_source"
            } else if d.has_flush() {
                "flush"
            } else if d.has_clear_incremental_state() {
                "clear_incremental_state"
            } else {
                "?"
            }
        })
        .collect()
}

/// Starts a session of one producer ("app") with data source "ds".
fn simple_session(
    h: &mut Harness,
    extra: impl FnOnce(&mut zerotrace_protos::protos::TraceConfig<'_>),
) -> (
    zerotrace_core::service::ProducerId,
    zerotrace_core::service::ConsumerId,
    zerotrace_core::service::RequestId,
) {
    let p = h.producer("app", 2000);
    h.register(p, "ds", true, false);
    let c = h.consumer(2000);
    let r = h.enable(c, config(&[(256, false)], &[("ds", 0)], extra));
    (p, c, r)
}

#[test]
fn a_session_end_to_end() {
    let mut h = Harness::new();
    let (p, c, enable) = simple_session(&mut h, |_| {});
    let cmds = h.take_commands(p);
    assert_eq!(
        command_kinds(&cmds),
        ["setup_tracing", "setup_data_source", "start_data_source"]
    );
    let setup = GetAsyncCommandResponseDecoder::new(&cmds[1]);
    let cfg = setup.setup_data_source().unwrap().config().unwrap();
    let buffer = cfg.target_buffer().unwrap();
    assert_eq!(cfg.name(), Some("ds"));
    assert_ne!(buffer, 0, "the producer gets the global buffer id");
    let mut w = h.writer(p, buffer as u16);
    write_packets(&mut w, 0, 100, 60);
    w.flush(None);
    h.pump(p);
    assert!(
        h.replies(c, enable).is_empty(),
        "EnableTracing is answered when the session ends"
    );

    h.ccall(c, ConsumerCall::DisableTracing);
    let cmds = h.take_commands(p);
    assert_eq!(command_kinds(&cmds), ["stop_data_source"]);
    assert_eq!(
        h.svc.sessions()[0].state,
        SessionState::Stopping,
        "waits for notify-on-stop"
    );
    let instance = GetAsyncCommandResponseDecoder::new(&cmds[0])
        .stop_data_source()
        .unwrap()
        .instance_id()
        .unwrap();
    h.pcall(
        p,
        ProducerCall::NotifyDataSourceStopped {
            instance_id: instance,
        },
    );
    let replies = h.replies(c, enable);
    assert_eq!(replies.len(), 1);
    assert_eq!(
        EnableTracingResponseDecoder::new(ok_data(&replies[0])).disabled(),
        Some(true)
    );

    let packets = h.read(c);
    let data = data_packets(&packets);
    assert_eq!(data.len(), 100);
    for (i, p) in data.iter().enumerate() {
        let d = TracePacketDecoder::new(p);
        assert_eq!(d.timestamp(), Some(i as u64));
        assert_eq!(d.trusted_uid(), Some(2000), "uid from the connection");
        assert_eq!(d.trusted_pid(), Some(6000));
        assert_eq!(d.trusted_packet_sequence_id(), Some(2));
    }
    assert_eq!(
        varint(data[0], 42),
        Some(1),
        "the first packet of a sequence is flagged"
    );
    // Service packets: as the genuine service orders them.
    let service: Vec<Vec<u32>> = packets
        .iter()
        .filter(|p| varint(p, 10) == Some(SERVICE_SEQ))
        .map(|p| field_ids(p))
        .collect();
    let kinds: Vec<u32> = service
        .iter()
        .map(|ids| *ids.iter().find(|&&f| ![3, 10, 58, 8].contains(&f)).unwrap())
        .collect();
    assert_eq!(
        &kinds[..4],
        &[6, 33, 89, 6],
        "clock snapshot, config, uuid, snapshots"
    );
    assert!(kinds.contains(&36) && kinds.contains(&124) && kinds.contains(&45));
    assert_eq!(kinds.last(), Some(&35), "trace stats last");
    assert_eq!(
        kinds[kinds.len() - 2],
        69,
        "read completed just before the stats"
    );
}

#[test]
fn two_consumers_never_see_each_others_data() {
    let mut h = Harness::new();
    let p1 = h.producer("one", 2001);
    h.register(p1, "a", false, false);
    let p2 = h.producer("two", 2002);
    h.register(p2, "b", false, false);
    let c1 = h.consumer(3001);
    let c2 = h.consumer(3002);
    h.enable(c1, config(&[(128, false)], &[("a", 0)], |_| {}));
    h.enable(c2, config(&[(128, false)], &[("b", 0)], |_| {}));
    let sessions = h.svc.sessions();
    let (b1, b2) = (sessions[0].buffers[0].0.0, sessions[1].buffers[0].0.0);
    let mut w1 = h.writer(p1, b1);
    let mut w2 = h.writer(p2, b2);
    write_packets(&mut w1, 0, 10, 10);
    write_packets(&mut w2, 1000, 7, 10);
    // Producer 1 also tries to write into the other session's buffer.
    let mut rogue = h.writer(p1, b2);
    write_packets(&mut rogue, 5000, 3, 10);
    for w in [&mut w1, &mut w2, &mut rogue] {
        w.flush(None);
    }
    h.pump(p1);
    h.pump(p2);
    assert!(
        h.svc.stats().commit.chunks_discarded >= 1,
        "the ungranted commit is counted"
    );
    h.ccall(c1, ConsumerCall::DisableTracing);
    h.ccall(c2, ConsumerCall::DisableTracing);
    let t1 = h.read(c1);
    let t2 = h.read(c2);
    let ts = |t: &[Vec<u8>]| -> Vec<u64> {
        data_packets(t)
            .iter()
            .map(|p| varint(p, 8).unwrap())
            .collect()
    };
    assert_eq!(ts(&t1), (0..10).collect::<Vec<_>>());
    assert_eq!(ts(&t2), (1000..1007).collect::<Vec<_>>());
}

#[test]
fn ring_wrap_with_fragmented_packets_reports_the_loss() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    h.register(p, "ds", false, false);
    let c = h.consumer(2000);
    h.enable(c, config(&[(32, false)], &[("ds", 0)], |_| {}));
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    for round in 0..20u64 {
        write_packets(&mut w, round * 10, 10, 900);
        // A packet spanning several chunks.
        w.packet(|pk| {
            pk.set_timestamp(1_000_000 + round);
            pk.message().append_bytes(900, &[7u8; 9000]);
        });
        w.flush(None);
        h.pump(p);
    }
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let data = data_packets(&packets);
    assert!(
        !data.is_empty() && data.len() < 220,
        "the ring overwrote the oldest data"
    );
    assert_ne!(
        varint(data[0], 42).unwrap_or(0),
        0,
        "the first packet after the overwrite is flagged"
    );
    let mut last = None;
    for p in &data {
        let ts = varint(p, 8).unwrap();
        if ts >= 1_000_000 {
            assert_eq!(
                bytes(p, 900).unwrap().len(),
                9000,
                "fragmented packets come back whole"
            );
        }
        let order = if ts >= 1_000_000 {
            ((ts - 1_000_000) * 10 + 9) * 2 + 1
        } else {
            ts * 2
        };
        assert!(last.is_none_or(|l| order > l), "in order");
        last = Some(order);
    }
    let stats = h.ccall(c, ConsumerCall::GetTraceStats);
    let r = h.replies(c, stats);
    let st = GetTraceStatsResponseDecoder::new(ok_data(&r[0]))
        .trace_stats()
        .unwrap();
    let buf = st.buffer_stats().next().unwrap();
    assert!(buf.chunks_overwritten().unwrap() > 0);
    assert!(buf.write_wrap_count().unwrap() > 0);
}

#[test]
fn reserved_fields_are_dropped_and_counted() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    for reserved in [3u32, 10, 33, 35, 36, 50, 69, 79, 98, 124, 125, 133] {
        w.packet(|pk| {
            pk.set_timestamp(reserved as u64);
            pk.message().append_varint(reserved, 1);
        });
    }
    write_packets(&mut w, 500, 1, 8);
    w.flush(None);
    h.pump(p);
    h.svc.producer_disconnected(h.now, p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let data = data_packets(&packets);
    assert_eq!(data.len(), 1, "only the clean packet survives");
    assert_eq!(varint(data[0], 8), Some(500));
    let stats = packets.iter().find(|p| bytes(p, 35).is_some()).unwrap();
    let st = TracePacketDecoder::new(stats).trace_stats().unwrap();
    assert_eq!(st.invalid_packets(), Some(12));
}

#[test]
fn flush_times_out_and_says_so() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    h.take_commands(p);
    let r = h.ccall(
        c,
        ConsumerCall::Flush {
            timeout_ms: 1000,
            flags: 0,
        },
    );
    assert_eq!(command_kinds(&h.take_commands(p)), ["flush"]);
    h.advance_ms(999);
    assert!(h.replies(c, r).is_empty());
    h.advance_ms(2);
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]));
    // An acknowledged flush succeeds.
    let r = h.ccall(
        c,
        ConsumerCall::Flush {
            timeout_ms: 1000,
            flags: 0,
        },
    );
    let cmd = h.take_commands(p);
    let id = GetAsyncCommandResponseDecoder::new(&cmd[0])
        .flush()
        .unwrap()
        .request_id()
        .unwrap();
    h.pcall(
        p,
        ProducerCall::CommitData(zerotrace_core::producer::CommitDataRequest {
            flush_request_id: Some(id),
            ..Default::default()
        }),
    );
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
}

#[test]
fn duration_stops_the_session_after_a_flush() {
    let mut h = Harness::new();
    let (p, c, enable) = simple_session(&mut h, |cfg| {
        cfg.set_duration_ms(2000);
    });
    h.take_commands(p);
    h.advance_ms(1999);
    assert!(h.take_commands(p).is_empty());
    h.advance_ms(1);
    assert_eq!(command_kinds(&h.take_commands(p)), ["flush"]);
    // The producer never acks: the flush times out (5 s), then stop.
    h.advance_ms(5000);
    assert_eq!(command_kinds(&h.take_commands(p)), ["stop_data_source"]);
    // It never notifies either: the stop times out (5 s).
    h.advance_ms(5000);
    let r = h.replies(c, enable);
    assert_eq!(
        EnableTracingResponseDecoder::new(ok_data(&r[0])).disabled(),
        Some(true)
    );
    assert_eq!(h.svc.sessions()[0].state, SessionState::Stopped);
}

#[test]
fn limits_are_error_replies_naming_the_limit() {
    let mut h = Harness::new();
    let mut errors = Vec::new();
    for i in 0..7 {
        let c = h.consumer(4000);
        let r = h.enable(c, config(&[(64, false)], &[], |_| {}));
        if let Some(reply) = h.replies(c, r).first() {
            errors.push((
                i,
                EnableTracingResponseDecoder::new(ok_data(reply))
                    .error()
                    .unwrap()
                    .to_owned(),
            ));
        }
    }
    assert_eq!(errors.len(), 2, "five sessions per uid");
    assert!(
        errors[0].1.contains("max_sessions_per_uid"),
        "{}",
        errors[0].1
    );
    let c = h.consumer(4001);
    let r = h.enable(c, config(&[(8 * 1024 * 1024, false)], &[], |_| {}));
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("max_session_buffer_bytes"), "{e}");
    let r = h.enable(
        c,
        config(&[(129 * 1024, false)], &[], |cfg| {
            cfg.set_enable_extra_guardrails(true);
        }),
    );
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("enable_extra_guardrails"), "{e}");
    let r = h.enable(
        c,
        config(&[(64, false)], &[], |cfg| {
            cfg.begin_compression().begin_zstd();
        }),
    );
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("compression.zstd"), "{e}");
    let many: Vec<(u32, bool)> = (0..129).map(|_| (4, false)).collect();
    let r = h.enable(c, config(&many, &[], |_| {}));
    let e = enable_error(&mut h, c, r);
    assert!(e.contains("max_buffers_per_session"), "{e}");
}

#[test]
fn unique_session_name_collides() {
    let mut h = Harness::new();
    let named = |cfg: &mut zerotrace_protos::protos::TraceConfig<'_>| {
        cfg.set_unique_session_name("nightly");
    };
    let c1 = h.consumer(1);
    let r1 = h.enable(c1, config(&[(64, false)], &[], named));
    assert!(h.replies(c1, r1).is_empty());
    let c2 = h.consumer(2);
    let r2 = h.enable(c2, config(&[(64, false)], &[], named));
    let e = enable_error(&mut h, c2, r2);
    assert!(e.contains("unique_session_name"), "{e}");
}

#[test]
fn detach_and_attach_need_the_exact_key() {
    let mut h = Harness::new();
    let (_, c, _) = simple_session(&mut h, |_| {});
    let r = h.ccall(c, ConsumerCall::Detach { key: String::new() });
    assert!(
        matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]),
        "empty key refused"
    );
    let r = h.ccall(c, ConsumerCall::Detach { key: "k1".into() });
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
    h.svc.consumer_disconnected(h.now, c);
    assert_eq!(
        h.svc.sessions().len(),
        1,
        "a detached session outlives its consumer"
    );

    let other_uid = h.consumer(9999);
    let r = h.ccall(other_uid, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(other_uid, r).as_slice(), [Reply::Err(_)]),
        "another uid cannot attach"
    );
    let c2 = h.consumer(2000);
    for bad in ["", "k2", "k"] {
        let r = h.ccall(c2, ConsumerCall::Attach { key: bad.into() });
        assert!(
            matches!(h.replies(c2, r).as_slice(), [Reply::Err(_)]),
            "key {bad:?}"
        );
    }
    let r = h.ccall(c2, ConsumerCall::Attach { key: "k1".into() });
    let replies = h.replies(c2, r);
    let cfg = AttachResponseDecoder::new(ok_data(&replies[0]))
        .trace_config_bytes()
        .unwrap()
        .to_vec();
    assert_eq!(cfg, config(&[(256, false)], &[("ds", 0)], |_| {}));
    let r = h.ccall(c2, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(c2, r).as_slice(), [Reply::Err(_)]),
        "attached sessions cannot be taken over"
    );
    // A second consumer of the same uid racing for the same key loses too.
    let c3 = h.consumer(2000);
    let r = h.ccall(c3, ConsumerCall::Attach { key: "k1".into() });
    assert!(
        matches!(h.replies(c3, r).as_slice(), [Reply::Err(_)]),
        "the session went to the first attach"
    );
}

/// After FreeBuffers a consumer's ReadBuffers is refused ("no tracing
/// session") and FreeBuffers and DisableTracing are harmless no-ops:
/// nothing is read, nothing breaks.
#[test]
fn calls_after_free_buffers_read_nothing() {
    let mut h = Harness::new();
    let (_, c, _) = simple_session(&mut h, |_| {});
    let r = h.ccall(c, ConsumerCall::DisableTracing);
    h.replies(c, r);
    let r = h.ccall(c, ConsumerCall::FreeBuffers);
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
    for call in [
        ConsumerCall::ReadBuffers,
        ConsumerCall::FreeBuffers,
        ConsumerCall::DisableTracing,
    ] {
        let r = h.ccall(c, call);
        let replies = h.replies(c, r);
        let ok = match replies.as_slice() {
            [Reply::Err(e)] => e.contains("no tracing session"),
            [
                Reply::Ok {
                    data,
                    has_more: false,
                    ..
                },
            ] => data.is_empty(),
            _ => false,
        };
        assert!(ok, "after FreeBuffers: {replies:?}");
    }
    assert!(h.svc.sessions().is_empty(), "the session is gone");
}

#[test]
fn clone_while_writing_is_a_read_only_snapshot() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    h.take_commands(p);
    let mut w = h.writer(p, b);
    write_packets(&mut w, 0, 20, 30);
    w.flush(None);
    h.pump(p);
    let cloner = h.consumer(2000);
    let sid = h.svc.sessions()[0].id.0;
    let r = h.ccall(
        cloner,
        ConsumerCall::CloneSession(zerotrace_core::service::CloneArgs {
            session_id: Some(sid),
            ..Default::default()
        }),
    );
    // The clone flushes first.
    let cmd = h.take_commands(p);
    assert_eq!(command_kinds(&cmd), ["flush"]);
    write_packets(&mut w, 20, 5, 30);
    let id = GetAsyncCommandResponseDecoder::new(&cmd[0])
        .flush()
        .unwrap()
        .request_id()
        .unwrap();
    w.flush(None);
    h.pump(p);
    h.pcall(
        p,
        ProducerCall::CommitData(zerotrace_core::producer::CommitDataRequest {
            flush_request_id: Some(id),
            ..Default::default()
        }),
    );
    let resp = h.replies(cloner, r);
    assert_eq!(
        CloneSessionResponseDecoder::new(ok_data(&resp[0])).success(),
        Some(true)
    );
    write_packets(&mut w, 25, 5, 30);
    w.flush(None);
    h.pump(p);
    let cloned = h.read(cloner);
    assert_eq!(
        data_packets(&cloned).len(),
        25,
        "the snapshot holds what was flushed"
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    let original = h.read(c);
    assert_eq!(data_packets(&original).len(), 30, "the original goes on");
    let r = h.ccall(
        cloner,
        ConsumerCall::Flush {
            timeout_ms: 10,
            flags: 0,
        },
    );
    assert!(
        matches!(h.replies(cloner, r).as_slice(), [Reply::Err(_)]),
        "clones are stopped"
    );
}

#[test]
fn configs_pass_through_byte_for_byte() {
    let mut h = Harness::new();
    let p = h.producer("traced_probes", 0);
    h.register(p, "linux.ftrace", false, false);
    let c = h.consumer(0);
    let mut w = protozero::HeapWriter::new();
    {
        let mut m = w.root();
        m.append_string(1, "linux.ftrace");
        m.append_bytes(100, b"\x0a\x0csched_switch\x0a\x0bsched_wakeup");
        m.append_bytes(4242, b"my own field");
    }
    let ds_config = w.finish().unwrap();
    let cfg = config(&[(64, false)], &[], |c| {
        c.add_data_sources().set_config_raw(&ds_config);
        c.message().append_bytes(9999, b"newer than our schema");
    });
    h.enable(c, cfg.clone());
    let cmds = h.take_commands(p);
    let setup = GetAsyncCommandResponseDecoder::new(&cmds[1]);
    let got = setup
        .setup_data_source()
        .unwrap()
        .config_bytes()
        .unwrap()
        .to_vec();
    assert!(
        got.starts_with(&ds_config),
        "the consumer's fields come first, unchanged"
    );
    assert_eq!(field_ids(&got), [1, 100, 4242, 2, 3, 4, 6, 7, 8]);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let config_packet = packets.iter().find(|p| bytes(p, 33).is_some()).unwrap();
    assert_eq!(
        bytes(config_packet, 33).unwrap(),
        cfg,
        "trace_config is the consumer's bytes"
    );
}

#[test]
fn routing_follows_filters_no_flush_and_notify_on_stop() {
    let mut h = Harness::new();
    let a = h.producer("com.example.a", 1);
    let b = h.producer("com.example.b", 1);
    let other = h.producer("other", 1);
    for p in [a, b, other] {
        h.register(p, "ds", false, false);
    }
    h.register(a, "quiet", true, true);
    let c = h.consumer(1);
    h.enable(
        c,
        config(&[(64, false)], &[], |cfg| {
            {
                let mut ds = cfg.add_data_sources();
                ds.begin_config().set_name("ds");
                ds.add_producer_name_regex_filter("com\\.example\\..*");
            }
            let mut q = cfg.add_data_sources();
            q.begin_config().set_name("quiet");
            q.add_producer_name_filter("com.example.a");
        }),
    );
    assert_eq!(
        command_kinds(&h.take_commands(a)).len(),
        5,
        "setup_tracing + 2×(setup, start)"
    );
    assert_eq!(command_kinds(&h.take_commands(b)).len(), 3);
    assert!(h.take_commands(other).is_empty(), "the regex is anchored");
    let r = h.ccall(
        c,
        ConsumerCall::Flush {
            timeout_ms: 100,
            flags: 0,
        },
    );
    let fa = h.take_commands(a);
    let ids: Vec<u64> = GetAsyncCommandResponseDecoder::new(&fa[0])
        .flush()
        .unwrap()
        .data_source_ids()
        .collect();
    assert_eq!(ids.len(), 1, "no_flush data sources are not flushed");
    h.take_commands(b);
    h.advance_ms(200);
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]));
    h.ccall(c, ConsumerCall::DisableTracing);
    let states = h.svc.data_source_states(h.svc.sessions()[0].id);
    let stopping = states
        .iter()
        .filter(|(_, s)| *s == DataSourceState::Stopping)
        .count();
    assert_eq!(
        stopping, 1,
        "only the notify-on-stop data source holds the stop"
    );
}

#[test]
fn producer_disconnecting_mid_packet_keeps_what_it_wrote() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    write_packets(&mut w, 0, 5, 40);
    w.flush(None);
    h.pump(p);
    // Complete packets never committed, then a half-written one.
    write_packets(&mut w, 5, 3, 40);
    {
        let mut handle = w.new_trace_packet();
        handle.packet().set_timestamp(99);
        h.disconnect_producer(p);
    }
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let ts: Vec<u64> = data_packets(&packets)
        .iter()
        .map(|p| varint(p, 8).unwrap())
        .collect();
    assert_eq!(
        ts,
        (0..8).collect::<Vec<_>>(),
        "salvaged by scraping; the torn packet is not returned"
    );
}

#[test]
fn deferred_start_and_triggers() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |cfg| {
        cfg.set_deferred_start(true);
    });
    assert_eq!(
        command_kinds(&h.take_commands(p)),
        ["setup_tracing", "setup_data_source"]
    );
    h.ccall(c, ConsumerCall::StartTracing);
    assert_eq!(command_kinds(&h.take_commands(p)), ["start_data_source"]);

    let mut h = Harness::new();
    let (p, _, _) = simple_session(&mut h, |cfg| {
        let mut t = cfg.begin_trigger_config();
        t.set_trigger_mode_raw(1);
        t.set_trigger_timeout_ms(10_000);
        t.add_triggers().set_name("go");
    });
    assert_eq!(
        command_kinds(&h.take_commands(p)),
        ["setup_tracing", "setup_data_source"]
    );
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["nope".into()],
        },
    );
    assert!(h.take_commands(p).is_empty());
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["go".into()],
        },
    );
    assert_eq!(command_kinds(&h.take_commands(p)), ["start_data_source"]);

    let mut h = Harness::new();
    let (p, c, enable) = simple_session(&mut h, |cfg| {
        let mut t = cfg.begin_trigger_config();
        t.set_trigger_mode_raw(2);
        t.set_trigger_timeout_ms(60_000);
        t.add_triggers().set_name("stop").set_stop_delay_ms(500);
    });
    h.take_commands(p);
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["stop".into()],
        },
    );
    h.advance_ms(499);
    assert!(h.take_commands(p).is_empty());
    h.advance_ms(1);
    assert_eq!(command_kinds(&h.take_commands(p)), ["flush"]);
    h.advance_ms(20_000);
    assert_eq!(
        h.replies(c, enable).len(),
        1,
        "the stop trigger ended the session"
    );
    let packets = h.read(c);
    assert!(
        packets.iter().any(|p| bytes(p, 46).is_some()),
        "the trigger is in the trace"
    );
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

#[test]
fn deflate_compresses_as_perfetto_does() {
    use std::io::Read;
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |cfg| {
        cfg.begin_compression().begin_deflate();
    });
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    write_packets(&mut w, 0, 50, 100);
    w.flush(None);
    h.pump(p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    assert!(
        packets.iter().all(|p| field_ids(p) == [50]),
        "only compressed_packets"
    );
    let mut inner = Vec::new();
    for p in &packets {
        let compressed = bytes(p, 50).unwrap();
        let mut z = flate2::read::ZlibDecoder::new(&compressed[..]);
        let mut records = Vec::new();
        z.read_to_end(&mut records).unwrap();
        inner.extend(
            protozero::Decoder::new(&records).map(|f| f.unwrap().as_bytes().unwrap().to_vec()),
        );
    }
    assert_eq!(data_packets(&inner).len(), 50);
}

#[test]
fn protocol_violations_are_refused_not_fatal() {
    let mut h = Harness::new();
    let p = h.producer("app", 5);
    // A second InitializeConnection.
    let r = h.pcall_raw(p, "InitializeConnection", &[]);
    assert!(matches!(
        h.producer_replies(p, r).as_slice(),
        [Reply::Err(_)]
    ));
    // Calls before InitializeConnection.
    let fresh = h
        .svc
        .producer_connected(
            h.now,
            Default::default(),
            zerotrace_core::service::ProducerTransport { can_pass_fds: true },
        )
        .unwrap();
    let r = h.request();
    h.svc
        .handle_producer_call(h.now, fresh, r, ProducerCall::Sync, None);
    h.drain();
    assert!(matches!(
        h.producer_replies(fresh, r).as_slice(),
        [Reply::Err(_)]
    ));
    // Unknown methods and garbage arguments do not decode.
    assert!(ProducerCall::decode("Frobnicate", &[]).is_err());
    assert!(ProducerCall::decode("RegisterDataSource", &[0x0a, 0xff]).is_err());
    assert!(
        zerotrace_core::service::ConsumerCall::decode("EnableTracing", &[0x0a, 0x05, 1]).is_err()
    );
    // Commits naming pages past the SMB, unknown buffers, forged writers.
    h.pcall_raw(
        p,
        "CommitData",
        &[0x0a, 0x07, 0x08, 0x8f, 0x4e, 0x10, 0x00, 0x18, 0x01],
    );
    h.pcall_raw(
        p,
        "CommitData",
        &[0x12, 0x06, 0x08, 0x07, 0x10, 0x00, 0x18, 0x01],
    );
    assert!(h.svc.stats().commit.chunks_discarded + h.svc.stats().commit.patches_discarded >= 1);
}

/// An SMB-emulation producer (no fd passing) sends chunks inline; a chunk
/// whose size awaits a patch is overwritten by the ring before the patch
/// comes: the patch fails (counted), the packet is lost, and the loss is
/// flagged on the sequence's next packet.
#[test]
fn inline_chunks_and_a_patch_after_its_chunk_was_overwritten() {
    use zerotrace_core::producer::{ChunkToMove, ChunkToPatch, CommitDataRequest, PatchData};
    let mut h = Harness::new();
    let p = h
        .svc
        .producer_connected(
            h.now,
            zerotrace_core::service::PeerIdentity {
                uid: 7,
                pid: None,
                machine_id: Some(3),
            },
            zerotrace_core::service::ProducerTransport {
                can_pass_fds: false,
            },
        )
        .unwrap();
    h.producers.insert(
        p,
        SimProducer {
            id: p,
            name: "remote".into(),
            async_request: zerotrace_core::service::RequestId(u64::MAX),
            arbiter: None,
            rx: None,
            commands: Vec::new(),
        },
    );
    let init = h.pcall(
        p,
        ProducerCall::InitializeConnection {
            page_size_hint: 0,
            smb_size_hint: 0,
            name: "remote".into(),
            smb_scraping_mode: 0,
            producer_provided_shmem: false,
            sdk_version: String::new(),
        },
    );
    let reply = h.producer_replies(p, init);
    let resp =
        zerotrace_protos::protos::InitializeConnectionResponseDecoder::new(ok_data(&reply[0]));
    assert_eq!(resp.use_shmem_emulation(), Some(true));
    let r = h.request();
    h.producers.get_mut(&p).unwrap().async_request = r;
    h.svc
        .handle_producer_call(h.now, p, r, ProducerCall::GetAsyncCommand, None);
    h.drain();
    h.register(p, "ds", false, false);
    let c = h.consumer(7);
    // A producer of another machine gets data sources only when asked.
    h.enable(
        c,
        config(&[(8, false)], &[("ds", 0)], |c| {
            c.set_trace_all_machines(true);
        }),
    );
    let b = h.svc.sessions()[0].buffers[0].0.0 as u32;
    let chunk = |id: u32, fragments: &[&[u8]], flags: u8| {
        let mut v = Vec::new();
        v.extend_from_slice(&id.to_le_bytes());
        v.extend_from_slice(&1u16.to_le_bytes());
        let packets = fragments.len() as u16 | (flags as u16) << 10;
        v.extend_from_slice(&packets.to_le_bytes());
        for f in fragments {
            v.extend_from_slice(&protozero::varint::redundant_varint4(f.len() as u32));
            v.extend_from_slice(f);
        }
        v.resize(1024, 0);
        v
    };
    let packet = |ts: u8| vec![0x40, ts, 0xa2, 0x38, 0x02, 0xaa, 0xbb];
    let send = |h: &mut Harness, chunks: Vec<Vec<u8>>, patches: Vec<ChunkToPatch>| {
        let req = CommitDataRequest {
            chunks_to_move: chunks
                .into_iter()
                .map(|data| ChunkToMove {
                    page: 0,
                    chunk: 0,
                    target_buffer: b,
                    data: Some(data),
                    chunk_incomplete: false,
                })
                .collect(),
            chunks_to_patch: patches,
            flush_request_id: None,
        };
        h.pcall(p, ProducerCall::CommitData(req));
    };
    // Chunk 0: a packet, then the head of a packet whose size is unknown yet
    // (written as 0, the chunk flagged as needing a patch).
    let mut c0 = chunk(0, &[&packet(1), &[0x40, 2]], 2 | 4);
    let blank = 4 + 8 + packet(1).len();
    c0[blank..blank + 4].copy_from_slice(&protozero::varint::redundant_varint4(0));
    send(&mut h, vec![c0], vec![]);
    // Enough chunks (with whole packets) to wrap the 8 KiB ring.
    for id in 1..12u32 {
        let flags = if id == 1 { 1 } else { 0 };
        let first: &[u8] = if id == 1 { &[0xa2, 0x38, 0x00] } else { &[] };
        let p1 = packet(id as u8 + 10);
        let frags: Vec<&[u8]> = if id == 1 { vec![first, &p1] } else { vec![&p1] };
        send(&mut h, vec![chunk(id, &frags, flags)], vec![]);
    }
    // The patch for chunk 0 comes too late.
    send(
        &mut h,
        vec![],
        vec![ChunkToPatch {
            target_buffer: b,
            writer_id: 1,
            chunk_id: 0,
            patches: vec![PatchData {
                offset: (8 + packet(1).len()) as u32,
                data: protozero::varint::redundant_varint4(2 + 3),
            }],
            has_more_patches: false,
        }],
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    let stats = packets.iter().find(|p| bytes(p, 35).is_some()).unwrap();
    let st = TracePacketDecoder::new(stats).trace_stats().unwrap();
    let buf = st.buffer_stats().next().unwrap();
    assert!(buf.chunks_overwritten().unwrap() > 0);
    assert_eq!(buf.patches_failed(), Some(1));
    let data = data_packets(&packets);
    assert!(!data.is_empty());
    assert_ne!(varint(data[0], 42).unwrap_or(0), 0, "the loss is flagged");
    for d in &data {
        let t = TracePacketDecoder::new(d);
        assert_eq!(t.trusted_uid(), Some(7));
        assert_eq!(t.trusted_pid(), None, "no pid over this transport");
        assert_eq!(
            varint(d, 98),
            Some(3),
            "a remote producer's packets carry its machine id"
        );
    }
}

/// The SMB is sized at the first data-source setup: the config's
/// `producers` entry first, then the producer's hints, then the defaults;
/// invalid sizes fall back to the defaults.
#[test]
fn the_smb_is_sized_by_config_then_hints_then_defaults() {
    use zerotrace_core::shm::SharedMemoryRegion;
    /// (config's producers entry in KiB, the producer's hints, expected SMB size and page KiB)
    type Case = (Option<(u32, u32)>, (u32, u32), (usize, u32));
    let cases: [Case; 7] = [
        (Some((512, 8)), (0, 0), (512 * 1024, 8)),
        (None, (128 * 1024, 16 * 1024), (128 * 1024, 16)),
        (None, (0, 0), (256 * 1024, 4)),
        (Some((100, 3)), (0, 0), (256 * 1024, 4)),
        // Absurd requests: an invalid page gets the defaults, a huge size
        // hint the 32 MiB cap (as Perfetto clamps it), never more.
        (None, (u32::MAX, u32::MAX), (256 * 1024, 4)),
        (None, (1 << 30, 4096), (32 * 1024 * 1024, 4)),
        (Some((u32::MAX, u32::MAX)), (0, 0), (256 * 1024, 4)),
    ];
    for (from_config, (size_hint, page_hint), (size, page_kb)) in cases {
        let mut h = Harness::new();
        let p = h
            .svc
            .producer_connected(
                h.now,
                Default::default(),
                zerotrace_core::service::ProducerTransport { can_pass_fds: true },
            )
            .unwrap();
        h.producers.insert(
            p,
            SimProducer {
                id: p,
                name: "sized".into(),
                async_request: zerotrace_core::service::RequestId(u64::MAX),
                arbiter: None,
                rx: None,
                commands: Vec::new(),
            },
        );
        h.pcall(
            p,
            ProducerCall::InitializeConnection {
                page_size_hint: page_hint,
                smb_size_hint: size_hint,
                name: "sized".into(),
                smb_scraping_mode: 0,
                producer_provided_shmem: false,
                sdk_version: String::new(),
            },
        );
        let r = h.request();
        h.producers.get_mut(&p).unwrap().async_request = r;
        h.svc
            .handle_producer_call(h.now, p, r, ProducerCall::GetAsyncCommand, None);
        h.drain();
        h.register(p, "ds", false, false);
        let c = h.consumer(0);
        h.enable(
            c,
            config(&[(64, false)], &[("ds", 0)], |cfg| {
                if let Some((kb, page)) = from_config {
                    cfg.add_producers()
                        .set_producer_name("sized")
                        .set_shm_size_kb(kb)
                        .set_page_size_kb(page);
                }
            }),
        );
        let cmds = h.take_commands(p);
        let setup = GetAsyncCommandResponseDecoder::new(&cmds[0])
            .setup_tracing()
            .unwrap();
        assert_eq!(
            setup.shared_buffer_page_size_kb(),
            Some(page_kb),
            "{from_config:?} {size_hint}"
        );
        assert_eq!(
            h.shared.borrow().smbs[&p].size(),
            size,
            "{from_config:?} {size_hint}"
        );
    }
}
