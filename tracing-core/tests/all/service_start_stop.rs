//! When a session starts, flushes and stops, through the sans-IO service core
//! on a fake clock: deferred start and start or stop triggers, a duration
//! that flushes then stops, and flush and stop timeouts when producers never
//! answer.

use crate::service_support;

use service_support::scenario::*;
use service_support::*;
use zerotrace_core::service::{ConsumerCall, ProducerCall, Reply, SessionState};
use zerotrace_protos::protos::{EnableTracingResponseDecoder, GetAsyncCommandResponseDecoder};

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
        ProducerCall::CommitData(zerotrace_core::protocol::CommitDataRequest {
            flush_request_id: Some(id),
            ..Default::default()
        }),
    );
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
}

/// The flush events of a read's service packets: (timestamp,
/// `service_event` field) for `all_data_sources_flushed` (3) and
/// `last_flush_slow_data_sources` (8).
fn flush_events(packets: &[Vec<u8>]) -> Vec<(u64, u32)> {
    packets
        .iter()
        .filter(|p| varint(p, 10) == Some(SERVICE_SEQ))
        .filter_map(|p| Some((varint(p, 8)?, field_ids(&bytes(p, 69)?)[0])))
        .filter(|e| e.1 == 3 || e.1 == 8)
        .collect()
}

/// As upstream's service (`CompleteFlush` and `OnFlushTimeout` in
/// `tracing_service_impl.cc`): every flush that ends, acknowledged or
/// timed out, records `all_data_sources_flushed` (the trace processor's
/// sort window counts on it), and only a final flush (stop, clone) that
/// timed out records `last_flush_slow_data_sources`, just before it.
#[test]
fn every_flush_that_ends_records_all_data_sources_flushed() {
    let mut h = Harness::new();
    let (p, c, _) = simple_session(&mut h, |cfg| {
        cfg.set_duration_ms(20_000);
    });
    let started = h.now;
    h.take_commands(p);
    let asked = h.now;
    let r = h.ccall(
        c,
        ConsumerCall::Flush {
            timeout_ms: 1000,
            flags: 0,
        },
    );
    h.take_commands(p);
    h.advance_ms(1001);
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Err(_)]));
    let timed_out = asked + 1000 * MS;
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
    h.advance_ms(10);
    h.pcall(
        p,
        ProducerCall::CommitData(zerotrace_core::protocol::CommitDataRequest {
            flush_request_id: Some(id),
            ..Default::default()
        }),
    );
    assert!(matches!(h.replies(c, r).as_slice(), [Reply::Ok { .. }]));
    let acked = h.now;
    assert_eq!(
        flush_events(&h.read(c)),
        [(timed_out, 3), (acked, 3)],
        "a timed-out flush that is not final is flushed all the same"
    );
    // The duration's stop flush, never acknowledged: it times out (5 s).
    h.advance_ms((started + 20_000 * MS - h.now) / MS);
    assert_eq!(command_kinds(&h.take_commands(p)), ["flush"]);
    h.advance_ms(5000);
    let ended = started + 25_000 * MS;
    assert_eq!(
        flush_events(&h.read(c)),
        [(ended, 8), (ended, 3)],
        "the final flush timed out"
    );
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
