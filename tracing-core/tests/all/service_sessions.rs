//! A session from EnableTracing to the consumer's read, through the sans-IO
//! service core on a fake clock: the commands producers get and in which
//! order, which producers a data source reaches (name filters, no-flush,
//! notify-on-stop), configs passed through byte for byte, what the consumer
//! reads back (trusted fields, the service's packets in Perfetto's order,
//! deflate compression), and that two sessions never see each other's data.

use crate::service_support;

use service_support::scenario::*;
use service_support::*;
use zerotrace_core::service::{ConsumerCall, DataSourceState, ProducerCall, Reply, SessionState};
use zerotrace_protos::protos::{
    EnableTracingResponseDecoder, GetAsyncCommandResponseDecoder, ReadBuffersResponseDecoder,
    TracePacketDecoder,
};

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

/// The `service_event` field ids of the service packets among `packets`.
fn service_events(packets: &[Vec<u8>]) -> Vec<(u64, u32)> {
    packets
        .iter()
        .filter(|p| varint(p, 10) == Some(SERVICE_SEQ))
        .filter_map(|p| {
            let ev = bytes(p, 69)?;
            Some((varint(p, 8).unwrap_or(0), field_ids(&ev)[0]))
        })
        .collect()
}

/// `read_tracing_buffers_completed` (service event 4) is the trace
/// processor's safe point for its sort window, so Perfetto's service
/// writes it after every read that leaves nothing more to read, whether
/// the session runs or has stopped (`ReadBuffers` in upstream's
/// `tracing_service_impl.cc`), right before the trace stats; a read that
/// stops at its size threshold with more to read does not carry it.
#[test]
fn every_read_that_drains_the_buffers_ends_with_read_completed() {
    const READ_COMPLETED: u32 = 4;
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |_| {});
    let b = h.svc.sessions()[0].buffers[0].0.0;
    let mut w = h.writer(p, b);
    for round in 0..2u64 {
        write_packets(&mut w, round * 100, 100, 60);
        w.flush(None);
        h.pump(p);
        h.advance_ms(10);
        let packets = h.read(c);
        assert_eq!(data_packets(&packets).len(), 100, "round {round}");
        assert_eq!(h.svc.sessions()[0].state, SessionState::Started);
        let events = service_events(&packets);
        assert_eq!(
            events.last(),
            Some(&(h.now, READ_COMPLETED)),
            "round {round}: read completed, stamped at the read: {events:?}"
        );
        let last = packets.last().unwrap();
        assert!(field_ids(last).contains(&35), "trace stats last");
        let second_last = &packets[packets.len() - 2];
        assert_eq!(bytes(second_last, 69).map(|e| field_ids(&e)[0]), Some(4));
    }
    // More than one read step's worth (32 KiB): the first step stops at
    // the threshold with more to read, and only the step that drains the
    // buffers ends with the event.
    write_packets(&mut w, 200, 200, 400);
    w.flush(None);
    h.pump(p);
    h.advance_ms(10);
    let r = h.ccall(c, ConsumerCall::ReadBuffers);
    assert!(
        h.svc.has_pending_read(c),
        "the first step left more to read"
    );
    let mut first_step = Vec::new();
    let mut partial = Vec::new();
    for reply in h.replies(c, r) {
        let Reply::Ok { data, has_more, .. } = reply else {
            panic!("ReadBuffers failed: {reply:?}");
        };
        assert!(has_more);
        for s in ReadBuffersResponseDecoder::new(&data).slices() {
            partial.extend_from_slice(s.data().unwrap_or(&[]));
            if s.last_slice_for_packet().unwrap_or(false) {
                first_step.push(std::mem::take(&mut partial));
            }
        }
    }
    assert!(!data_packets(&first_step).is_empty());
    assert!(
        !service_events(&first_step)
            .iter()
            .any(|e| e.1 == READ_COMPLETED),
        "no read completed while more is left"
    );
    assert!(!first_step.iter().any(|p| field_ids(p).contains(&35)));
    h.finish_read(c);
    let rest = h.replies(c, r);
    assert!(matches!(
        rest.last(),
        Some(Reply::Ok {
            has_more: false,
            ..
        })
    ));
    let mut tail = Vec::new();
    for reply in &rest {
        for s in ReadBuffersResponseDecoder::new(ok_data(reply)).slices() {
            partial.extend_from_slice(s.data().unwrap_or(&[]));
            if s.last_slice_for_packet().unwrap_or(false) {
                tail.push(std::mem::take(&mut partial));
            }
        }
    }
    assert_eq!(
        data_packets(&first_step).len() + data_packets(&tail).len(),
        200
    );
    assert_eq!(
        service_events(&tail),
        [(h.now, READ_COMPLETED)],
        "the step that drains the buffers ends with it"
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
