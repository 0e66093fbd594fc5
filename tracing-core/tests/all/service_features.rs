//! Service features the README lists that had no scenario of their own, one
//! test each through the sans-IO core on a fake clock: session semaphores
//! counted across sessions, `transfer_on_clone`, lockdown mode, a
//! CLONE_SNAPSHOT trigger answered by the consumer's clone, the clone of the
//! session with the highest bugreport score, and the periodic clear of
//! incremental state. Each checks what Perfetto's service does in the same
//! situation (`tracing_service_impl.cc`).

use crate::service_support;

use protozero::HeapWriter;
use service_support::*;
use zerotrace_core::producer::TraceWriter;
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::service::{
    CloneArgs, CloneTrigger, ConsumerCall, ConsumerId, DataSourceDescriptor, Limits, PeerIdentity,
    ProducerCall, ProducerId, ProducerTransport, Reply, ServiceOptions, SessionState,
};
use zerotrace_protos::protos::{
    CloneSessionRequest, CloneSessionResponseDecoder, EnableTracingResponseDecoder,
    GetAsyncCommandResponseDecoder, ObserveEventsResponseDecoder, TraceConfig, TracePacketDecoder,
};

/// Sequence id of the service's own packets.
const SERVICE_SEQ: u64 = 1;

/// Timestamps of the producers' packets, in order.
fn data_timestamps(packets: &[Vec<u8>]) -> Vec<u64> {
    packets
        .iter()
        .filter(|p| varint(p, 10) != Some(SERVICE_SEQ))
        .filter_map(|p| TracePacketDecoder::new(p).timestamp())
        .collect()
}

/// Writes packets with timestamps `from..to`, flushes and delivers them.
fn write(h: &mut Harness, p: ProducerId, w: &mut TraceWriter, from: u64, to: u64) {
    for ts in from..to {
        w.packet(|packet| {
            packet.set_timestamp(ts);
            packet.message().append_bytes(900, &[ts as u8; 24]);
        });
    }
    w.flush(None);
    h.pump(p);
}

/// Registers data source `name` on `p`, handling incremental state clears
/// or not.
fn register(h: &mut Harness, p: ProducerId, name: &str, handles_clear: bool) {
    let mut w = HeapWriter::new();
    {
        let mut m = w.root();
        m.append_string(1, name);
        m.append_bool(4, handles_clear);
    }
    let raw = w.finish().unwrap();
    let d = DataSourceDescriptor::decode(&raw, "RegisterDataSource").unwrap();
    h.pcall(p, ProducerCall::RegisterDataSource(d));
}

/// Answers every flush request producer `p` received (its data is already
/// committed), and drops its other commands.
fn answer_flushes(h: &mut Harness, p: ProducerId) {
    for cmd in h.take_commands(p) {
        let flush = GetAsyncCommandResponseDecoder::new(&cmd)
            .flush()
            .and_then(|f| f.request_id());
        if let Some(id) = flush {
            h.pcall(
                p,
                ProducerCall::CommitData(CommitDataRequest {
                    flush_request_id: Some(id),
                    ..Default::default()
                }),
            );
        }
    }
}

/// EnableTracing of `c`: `Ok` while the session runs (its reply comes at
/// its end), the error a refusal names otherwise.
fn try_enable(h: &mut Harness, c: ConsumerId, cfg: Vec<u8>) -> Result<(), String> {
    let r = h.enable(c, cfg);
    match h.replies(c, r).as_slice() {
        [] => Ok(()),
        [Reply::Ok { data, .. }] => Err(EnableTracingResponseDecoder::new(data)
            .error()
            .unwrap_or("(no error: the session ended at once)")
            .to_owned()),
        other => panic!("unexpected EnableTracing replies {other:?}"),
    }
}

/// CloneSession of `cloner` with `args`; answers the clone's flush on
/// `producers` and returns whether it succeeded (with the error if not).
fn clone(
    h: &mut Harness,
    cloner: ConsumerId,
    args: CloneArgs,
    producers: &[ProducerId],
) -> Result<(), String> {
    let r = h.ccall(cloner, ConsumerCall::CloneSession(args));
    for &p in producers {
        answer_flushes(h, p);
    }
    let replies = h.replies(cloner, r);
    let [Reply::Ok { data, .. }] = replies.as_slice() else {
        panic!("unexpected CloneSession replies {replies:?}");
    };
    let d = CloneSessionResponseDecoder::new(data);
    if d.success() == Some(true) {
        Ok(())
    } else {
        Err(d.error().unwrap_or("").to_owned())
    }
}

/// The global buffer ids of session `index` (in `sessions()` order).
fn buffers_of(h: &Harness, index: usize) -> Vec<u16> {
    h.svc.sessions()[index]
        .buffers
        .iter()
        .map(|b| b.0.0)
        .collect()
}

/// A config of one 64 KiB buffer for data source `ds`, holding the session
/// semaphores `sems` (name, max_other_session_count).
fn semaphore_config(sems: &[(&str, u64)]) -> Vec<u8> {
    config(&[(64, false)], &[("ds", 0)], |c| {
        for &(name, max) in sems {
            c.add_session_semaphores()
                .set_name(name)
                .set_max_other_session_count(max);
        }
    })
}

#[test]
fn session_semaphores_are_counted_across_sessions() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "ds", false);

    // Up to one other session may hold "sem", whatever its uid.
    let c1 = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, c1, semaphore_config(&[("sem", 1)])),
        Ok(())
    );
    let c2 = h.consumer(3000);
    assert_eq!(
        try_enable(&mut h, c2, semaphore_config(&[("sem", 1)])),
        Ok(())
    );
    let c3 = h.consumer(2000);
    let refused = try_enable(&mut h, c3, semaphore_config(&[("sem", 1)])).unwrap_err();
    assert!(refused.contains("\"sem\""), "{refused}");
    assert_eq!(
        h.svc.sessions().len(),
        2,
        "the refused session was not made"
    );
    // Another semaphore is another count.
    let c4 = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, c4, semaphore_config(&[("other", 0), ("sem2", 0)])),
        Ok(())
    );

    // The strictest holder's limit counts: a session holding "excl" with no
    // other session allowed keeps out one that would allow five.
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "ds", false);
    let holder = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, holder, semaphore_config(&[("excl", 0)])),
        Ok(())
    );
    let late = h.consumer(2000);
    let refused = try_enable(&mut h, late, semaphore_config(&[("excl", 5)])).unwrap_err();
    assert!(refused.contains("\"excl\""), "{refused}");
    // A session that ended holds nothing, though its buffers are still
    // there to read.
    h.ccall(holder, ConsumerCall::DisableTracing);
    h.advance_ms(10);
    assert_eq!(h.svc.sessions()[0].state, SessionState::Stopped);
    let later = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, later, semaphore_config(&[("excl", 5)])),
        Ok(())
    );
    // And a clone of the session that holds it now holds nothing either.
    let cloner = h.consumer(2000);
    let sid = h.svc.sessions()[1].id.0;
    assert_eq!(
        clone(
            &mut h,
            cloner,
            CloneArgs {
                session_id: Some(sid),
                ..Default::default()
            },
            &[p]
        ),
        Ok(())
    );
    let last = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, last, semaphore_config(&[("excl", 1)])),
        Ok(()),
        "one running holder, one other allowed"
    );
}

#[test]
fn transfer_on_clone_moves_the_buffer_to_the_clone() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "keep", false);
    register(&mut h, p, "move", false);
    let c = h.consumer(2000);
    let mut w = HeapWriter::new();
    {
        let mut cfg = TraceConfig::from_message(w.root());
        cfg.add_buffers().set_size_kb(64).set_fill_policy_raw(1);
        cfg.add_buffers()
            .set_size_kb(64)
            .set_fill_policy_raw(1)
            .set_transfer_on_clone(true);
        for (name, buffer) in [("keep", 0), ("move", 1)] {
            cfg.add_data_sources()
                .begin_config()
                .set_name(name)
                .set_target_buffer(buffer);
        }
    }
    assert_eq!(try_enable(&mut h, c, w.finish().unwrap()), Ok(()));
    let sid = h.svc.sessions()[0].id.0;
    let [keep, moved] = buffers_of(&h, 0)[..] else {
        panic!("two buffers");
    };
    h.take_commands(p);
    let mut wk = h.writer(p, keep);
    let mut wm = h.writer(p, moved);
    write(&mut h, p, &mut wk, 0, 10);
    write(&mut h, p, &mut wm, 1000, 1010);

    let args = CloneArgs {
        session_id: Some(sid),
        ..Default::default()
    };
    let first = h.consumer(2000);
    assert_eq!(clone(&mut h, first, args.clone(), &[p]), Ok(()));
    let ts = data_timestamps(&h.read(first));
    assert_eq!(
        ts,
        (0..10).chain(1000..1010).collect::<Vec<_>>(),
        "the first clone has both buffers"
    );

    write(&mut h, p, &mut wk, 10, 15);
    write(&mut h, p, &mut wm, 1010, 1015);
    let second = h.consumer(2000);
    assert_eq!(clone(&mut h, second, args, &[p]), Ok(()));
    assert_eq!(
        data_timestamps(&h.read(second)),
        (0..15).chain(1010..1015).collect::<Vec<_>>(),
        "the transferred buffer starts again empty at each clone; the other is copied"
    );

    h.ccall(c, ConsumerCall::DisableTracing);
    h.advance_ms(10);
    assert_eq!(
        data_timestamps(&h.read(c)),
        (0..15).collect::<Vec<_>>(),
        "the original lost what its clones took"
    );
}

#[test]
fn lockdown_keeps_other_uids_out() {
    // The service runs as uid 1000.
    let mut h = Harness::new();
    let own = h.producer("own", 1000);
    register(&mut h, own, "ds", false);
    let other = h.producer("other", 2000);
    register(&mut h, other, "ds", false);
    let refused_before = h.svc.stats().producers_refused;

    let c = h.consumer(1000);
    let set = config(&[(64, false)], &[("ds", 0)], |cfg| {
        cfg.set_lockdown_mode_raw(2); // LOCKDOWN_SET
    });
    assert_eq!(try_enable(&mut h, c, set), Ok(()));
    assert_eq!(
        h.take_commands(own).len(),
        3,
        "setup_tracing, setup and start of the service uid's producer"
    );
    assert!(
        h.take_commands(other).is_empty(),
        "a producer of another uid, though connected before, gets nothing"
    );
    let identity = |uid| PeerIdentity {
        uid,
        pid: Some(77),
        machine_id: None,
    };
    let transport = ProducerTransport { can_pass_fds: true };
    assert!(
        h.svc
            .producer_connected(h.now, identity(3000), transport)
            .is_none(),
        "a new producer of another uid is refused"
    );
    assert_eq!(h.svc.stats().producers_refused, refused_before + 1);
    assert!(
        h.svc
            .producer_connected(h.now, identity(1000), transport)
            .is_some(),
        "the service's own uid still connects"
    );

    // A session with LOCKDOWN_CLEAR lifts it.
    let c2 = h.consumer(1000);
    let clear = config(&[(64, false)], &[("ds", 0)], |cfg| {
        cfg.set_lockdown_mode_raw(1); // LOCKDOWN_CLEAR
    });
    assert_eq!(try_enable(&mut h, c2, clear), Ok(()));
    let cmds = h.take_commands(other);
    assert!(
        cmds.iter()
            .any(|c| GetAsyncCommandResponseDecoder::new(c).has_setup_data_source()),
        "the other uid's producer serves the new session"
    );
    assert!(
        h.svc
            .producer_connected(h.now, identity(3000), transport)
            .is_some()
    );
}

/// The `clone_trigger_hit` events among `replies` to an ObserveEvents
/// stream: (session id, trigger, producer, uid, boot time, delay).
fn clone_hits(replies: &[Reply]) -> Vec<(i64, String, String, u32, u64, u64)> {
    replies
        .iter()
        .filter_map(|r| match r {
            Reply::Ok { data, .. } => ObserveEventsResponseDecoder::new(data)
                .events()
                .and_then(|e| e.clone_trigger_hit()),
            Reply::Err(e) => panic!("{e}"),
        })
        .map(|hit| {
            (
                hit.tracing_session_id().unwrap(),
                hit.trigger_name().unwrap().to_owned(),
                hit.producer_name().unwrap().to_owned(),
                hit.producer_uid().unwrap(),
                hit.boot_time_ns().unwrap(),
                hit.trigger_delay_ms().unwrap(),
            )
        })
        .collect()
}

#[test]
fn clone_snapshot_trigger_then_the_consumers_clone() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "ds", false);
    let c = h.consumer(2000);
    // TYPE_CLONE_TRIGGER_HIT.
    let events = h.ccall(c, ConsumerCall::ObserveEvents { types: vec![4] });
    let cfg = config(&[(256, false)], &[("ds", 0)], |cfg| {
        let mut t = cfg.begin_trigger_config();
        t.set_trigger_mode_raw(4); // CLONE_SNAPSHOT
        t.set_trigger_timeout_ms(600_000);
        t.add_triggers().set_name("snap").set_stop_delay_ms(200);
    });
    assert_eq!(try_enable(&mut h, c, cfg), Ok(()));
    let sid = h.svc.sessions()[0].id.0;
    let buffer = buffers_of(&h, 0)[0];
    h.take_commands(p);
    let mut w = h.writer(p, buffer);
    write(&mut h, p, &mut w, 0, 10);
    h.advance_ms(10);

    let trigger_at = h.now;
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["snap".into()],
        },
    );
    // Written while the trigger's delay runs: the snapshot takes it too.
    write(&mut h, p, &mut w, 10, 15);
    h.advance_ms(199);
    assert!(
        clone_hits(&h.replies(c, events)).is_empty(),
        "the consumer hears of the trigger once its stop_delay_ms has passed"
    );
    h.advance_ms(1);
    let hits = clone_hits(&h.replies(c, events));
    assert_eq!(
        hits,
        [(
            sid as i64,
            "snap".to_owned(),
            "app".to_owned(),
            2000,
            trigger_at,
            200
        )]
    );

    // The consumer clones as `perfetto` does on that event: on a connection
    // of its own, naming the trigger (decoded from the wire format, so the
    // request's clone_trigger_* fields are read).
    let (_, name, producer, uid, boot_time, delay) = hits[0].clone();
    let mut req = HeapWriter::new();
    {
        let mut r = CloneSessionRequest::from_message(req.root());
        r.set_session_id(sid)
            .set_clone_trigger_name(&name)
            .set_clone_trigger_producer_name(&producer)
            .set_clone_trigger_trusted_producer_uid(uid as i32)
            .set_clone_trigger_boot_time_ns(boot_time)
            .set_clone_trigger_delay_ms(delay);
    }
    let ConsumerCall::CloneSession(args) =
        ConsumerCall::decode("CloneSession", &req.finish().unwrap()).unwrap()
    else {
        panic!("a CloneSession call");
    };
    assert_eq!(
        args.clone_trigger,
        Some(CloneTrigger {
            name: "snap".into(),
            producer_name: "app".into(),
            producer_uid: 2000,
            boot_time_ns: trigger_at,
            delay_ms: 200,
        })
    );
    let cloner = h.consumer(2000);
    assert_eq!(clone(&mut h, cloner, args, &[p]), Ok(()));
    let snapshot = h.read(cloner);
    assert_eq!(data_timestamps(&snapshot), (0..15).collect::<Vec<_>>());
    let cut: Vec<_> = snapshot
        .iter()
        .filter_map(|p| {
            let d = TracePacketDecoder::new(p);
            let t = d.clone_snapshot_trigger()?;
            Some((
                d.timestamp(),
                t.trigger_name().map(str::to_owned),
                t.producer_name().map(str::to_owned),
                t.trusted_producer_uid(),
                t.stop_delay_ms(),
            ))
        })
        .collect();
    assert_eq!(
        cut,
        [(
            Some(trigger_at),
            Some("snap".to_owned()),
            Some("app".to_owned()),
            Some(2000),
            Some(200)
        )],
        "the clone says which trigger cut it"
    );
    let triggers = |packets: &[Vec<u8>]| -> Vec<String> {
        packets
            .iter()
            .filter_map(|p| TracePacketDecoder::new(p).trigger())
            .map(|t| t.trigger_name().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(
        triggers(&snapshot),
        ["snap"],
        "the trigger went with the snapshot"
    );

    // The session goes on recording and can be snapshotted again.
    assert_eq!(h.svc.sessions()[0].state, SessionState::Started);
    write(&mut h, p, &mut w, 15, 20);
    h.pcall(
        p,
        ProducerCall::ActivateTriggers {
            names: vec!["snap".into()],
        },
    );
    h.advance_ms(200);
    assert_eq!(clone_hits(&h.replies(c, events)).len(), 1);
    h.ccall(c, ConsumerCall::DisableTracing);
    h.advance_ms(10);
    let original = h.read(c);
    assert_eq!(data_timestamps(&original), (0..20).collect::<Vec<_>>());
    assert_eq!(
        triggers(&original),
        ["snap"],
        "the session keeps only the trigger no clone took (the second)"
    );
}

#[test]
fn clone_for_bugreport_takes_the_highest_score() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    // (data source, bugreport score, started); each session writes
    // timestamps of its own hundred.
    let sessions = [
        ("a", 10, true),
        ("b", 30, true),
        ("c", 0, true),
        ("d", 50, false),
        ("e", 30, true),
    ];
    let mut writers = Vec::new();
    for (i, &(ds, score, started)) in sessions.iter().enumerate() {
        register(&mut h, p, ds, false);
        let c = h.consumer(2000);
        let cfg = config(&[(64, false)], &[(ds, 0)], |cfg| {
            cfg.set_bugreport_score(score);
            cfg.set_deferred_start(!started);
        });
        assert_eq!(try_enable(&mut h, c, cfg), Ok(()));
        h.take_commands(p);
        if started {
            let mut w = h.writer(p, buffers_of(&h, i)[0]);
            let base = 100 * (i as u64 + 1);
            write(&mut h, p, &mut w, base, base + 5);
            writers.push(w);
        }
    }
    let bugreport = CloneArgs {
        session_id: Some(u64::MAX),
        for_bugreport: true,
        ..Default::default()
    };
    let cloner = h.consumer(2000);
    assert_eq!(clone(&mut h, cloner, bugreport.clone(), &[p]), Ok(()));
    assert_eq!(
        data_timestamps(&h.read(cloner)),
        (200..205).collect::<Vec<_>>(),
        "\"b\": the highest score among started sessions, the older of two equals"
    );

    // The best session belongs to another uid: refused, not passed over.
    register(&mut h, p, "f", false);
    let stranger = h.consumer(4000);
    let cfg = config(&[(64, false)], &[("f", 0)], |cfg| {
        cfg.set_bugreport_score(90);
    });
    assert_eq!(try_enable(&mut h, stranger, cfg), Ok(()));
    let cloner = h.consumer(2000);
    assert!(clone(&mut h, cloner, bugreport.clone(), &[p]).is_err());

    // No session with a positive score that runs: nothing to clone.
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "ds", false);
    let c = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, c, config(&[(64, false)], &[("ds", 0)], |_| {})),
        Ok(())
    );
    let cloner = h.consumer(2000);
    let refused = clone(&mut h, cloner, bugreport, &[p]).unwrap_err();
    assert!(refused.contains("bugreport"), "{refused}");
}

#[test]
fn incremental_state_is_cleared_periodically() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "interning", true);
    register(&mut h, p, "plain", false);
    let c = h.consumer(2000);
    let cfg = config(&[(64, false)], &[("interning", 0), ("plain", 0)], |cfg| {
        cfg.begin_incremental_state_config()
            .set_clear_period_ms(100);
    });
    assert_eq!(try_enable(&mut h, c, cfg), Ok(()));
    // The instance of the data source that handles clears.
    let interning: Vec<u64> = h
        .take_commands(p)
        .iter()
        .filter_map(|cmd| {
            let setup = GetAsyncCommandResponseDecoder::new(cmd).setup_data_source()?;
            (setup.config()?.name() == Some("interning")).then(|| setup.new_instance_id())?
        })
        .collect();
    assert_eq!(interning.len(), 1);
    let clears = |h: &mut Harness| -> Vec<Vec<u64>> {
        h.take_commands(p)
            .iter()
            .filter_map(|cmd| {
                GetAsyncCommandResponseDecoder::new(cmd)
                    .clear_incremental_state()
                    .map(|c| c.data_source_ids().collect())
            })
            .collect()
    };

    h.advance_ms(99);
    assert!(clears(&mut h).is_empty());
    h.advance_ms(1);
    assert_eq!(
        clears(&mut h),
        [interning.as_slice()],
        "only the instance that handles clears"
    );
    h.advance_ms(250);
    assert_eq!(
        clears(&mut h),
        [interning.as_slice(), interning.as_slice()],
        "again every 100 ms"
    );
    h.ccall(c, ConsumerCall::DisableTracing);
    h.advance_ms(1000);
    assert!(clears(&mut h).is_empty(), "not after the session stopped");
}

#[test]
fn only_the_service_uid_or_root_throws_lockdown() {
    // The service runs as uid 1000; uid 2000 and an unvouched peer may
    // neither set nor clear lockdown, and their session is refused with a
    // reason that names the field.
    let mut h = Harness::new();
    let other = h.producer("other", 2000);
    register(&mut h, other, "ds", false);
    let transport = ProducerTransport { can_pass_fds: true };
    let identity = |uid| PeerIdentity {
        uid,
        pid: Some(77),
        machine_id: None,
    };
    for uid in [2000, zerotrace_core::service::UNKNOWN_UID] {
        for mode in [2, 1] {
            let c = h.consumer(uid);
            let cfg = config(&[(64, false)], &[("ds", 0)], |cfg| {
                cfg.set_lockdown_mode_raw(mode);
            });
            let e = try_enable(&mut h, c, cfg).expect_err("refused");
            assert!(e.contains("lockdown_mode"), "{e}");
        }
    }
    assert!(
        h.svc
            .producer_connected(h.now, identity(3000), transport)
            .is_some(),
        "no lockdown was set"
    );
    // Root may.
    let c = h.consumer(0);
    let set = config(&[(64, false)], &[("ds", 0)], |cfg| {
        cfg.set_lockdown_mode_raw(2);
    });
    assert_eq!(try_enable(&mut h, c, set), Ok(()));
    assert!(
        h.svc
            .producer_connected(h.now, identity(3000), transport)
            .is_none(),
        "root set lockdown"
    );
    // And another uid may not clear it.
    let c = h.consumer(2000);
    let clear = config(&[(64, false)], &[("ds", 0)], |cfg| {
        cfg.set_lockdown_mode_raw(1);
    });
    assert!(try_enable(&mut h, c, clear).is_err());
    assert!(
        h.svc
            .producer_connected(h.now, identity(3000), transport)
            .is_none(),
        "lockdown holds"
    );
}

#[test]
fn one_uid_cannot_take_the_whole_buffer_budget() {
    let mut h = Harness::with_options(ServiceOptions {
        service_uid: 1000,
        machine_name: "testbox".into(),
        limits: Limits {
            max_total_buffer_bytes: 4 << 20,
            max_buffer_bytes_per_uid: 2 << 20,
            ..Limits::default()
        },
        ..ServiceOptions::default()
    });
    // uid 2000 takes its share in two sessions, and no more.
    let a = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, a, config(&[(1024, false)], &[], |_| {})),
        Ok(())
    );
    let b = h.consumer(2000);
    assert_eq!(
        try_enable(&mut h, b, config(&[(1024, false)], &[], |_| {})),
        Ok(())
    );
    let c = h.consumer(2000);
    let e = try_enable(&mut h, c, config(&[(4, false)], &[], |_| {})).expect_err("over");
    assert!(e.contains("max_buffer_bytes_per_uid"), "{e}");
    // Another user still gets the rest of the budget.
    let d = h.consumer(3000);
    assert_eq!(
        try_enable(&mut h, d, config(&[(2048, false)], &[], |_| {})),
        Ok(())
    );
}

/// As Perfetto's service: a clone's trace says when the clone began (a
/// `clone_started` service event at the CloneSession request, before its
/// flush) and when each buffer was copied (`buffer_cloned`, valued with
/// the buffer's index in the session), the events `traced.stats` reads.
#[test]
fn a_clone_says_when_it_began_and_when_each_buffer_was_copied() {
    let mut h = Harness::new();
    let p = h.producer("app", 2000);
    register(&mut h, p, "a", false);
    register(&mut h, p, "b", false);
    let c = h.consumer(2000);
    let mut w = HeapWriter::new();
    {
        let mut cfg = TraceConfig::from_message(w.root());
        for (name, buffer) in [("a", 0), ("b", 1)] {
            cfg.add_buffers().set_size_kb(64).set_fill_policy_raw(1);
            cfg.add_data_sources()
                .begin_config()
                .set_name(name)
                .set_target_buffer(buffer);
        }
    }
    assert_eq!(try_enable(&mut h, c, w.finish().unwrap()), Ok(()));
    let sid = h.svc.sessions()[0].id.0;
    h.take_commands(p);
    h.advance_ms(5);
    let cloner = h.consumer(2000);
    let args = CloneArgs {
        session_id: Some(sid),
        ..Default::default()
    };
    assert_eq!(clone(&mut h, cloner, args, &[p]), Ok(()));
    let events: Vec<(u64, u32, u64)> = h
        .read(cloner)
        .iter()
        .filter(|p| varint(p, 10) == Some(SERVICE_SEQ))
        .filter_map(|p| {
            let ev = bytes(p, 69)?;
            let ts = varint(p, 8).unwrap_or(0);
            [10u32, 11]
                .into_iter()
                .find_map(|f| varint(&ev, f).map(|v| (ts, f, v)))
        })
        .collect();
    let started: Vec<_> = events.iter().filter(|e| e.1 == 10).collect();
    let copied: Vec<_> = events.iter().filter(|e| e.1 == 11).collect();
    assert_eq!(started.len(), 1, "{events:?}");
    assert_eq!(started[0].2, 1, "clone_started is a flag");
    assert_eq!(
        copied.iter().map(|e| e.2).collect::<Vec<_>>(),
        [0, 1],
        "one buffer_cloned per buffer, by index: {events:?}"
    );
    assert!(copied.iter().all(|e| e.0 >= started[0].0), "{events:?}");
    // The original session's own trace has neither.
    h.ccall(c, ConsumerCall::DisableTracing);
    h.advance_ms(10);
    let own = h.read(c);
    assert!(
        own.iter()
            .filter_map(|p| bytes(p, 69))
            .all(|ev| varint(&ev, 10).is_none() && varint(&ev, 11).is_none()),
        "the cloned session's trace carries no clone events"
    );
}
