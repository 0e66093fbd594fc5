//! The relay's own connection, sans-IO, on a fake clock against the
//! service's IPC host: identity first, then the RelayPort bind, InitRelay
//! with the machine's SystemInfo and a clock round (PING, then UPDATE once
//! PING is answered, with fresh readings), the next round 30 s after the
//! last; reconnection delays that double from 1 s to 30 s and start over
//! after a connection that got as far as the bind; a service without
//! RelayPort is left; a refused InitRelay or SyncClock closes the
//! connection with its reason, is no round, and backs off.

use zerotrace_core::ipc::{HostConnection, HostEvent, Port};
use zerotrace_core::relay::{
    RETRY_DELAY_MAX_MS, RelayEvent, RelayIdentity, RelayPortClient, SYNC_INTERVAL_MS,
};
use zerotrace_protos::protos::{InitRelayRequestDecoder, SyncClockRequestDecoder};

const MS: u64 = 1_000_000;

fn identity() -> RelayIdentity {
    RelayIdentity {
        pid: 77,
        uid: 1000,
        machine_id_hint: "boot-id-of-vm".into(),
        machine_name: "vm".into(),
        system_info: vec![0x0a, 0x02, 0x0a, 0x00],
    }
}

/// Moves the client's bytes into the host; returns the host's events.
fn to_host(c: &mut RelayPortClient, h: &mut HostConnection) -> Vec<HostEvent> {
    let mut events = Vec::new();
    while let Some(b) = c.poll_transmit() {
        events.extend(h.receive(&b));
    }
    events
}

/// Moves the host's frames into the client, whose clocks read `reading`.
fn to_client(c: &mut RelayPortClient, h: &mut HostConnection, now: u64, reading: &mut u64) {
    for b in h.take_transmit() {
        c.handle_bytes(now, &b, &mut || {
            *reading += 1;
            vec![(6, *reading), (3, *reading + 100)]
        });
    }
}

/// (method, request id, phase, BOOTTIME reading) of the calls.
fn calls(events: &[HostEvent]) -> Vec<(&'static str, u64, i32, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            HostEvent::Call {
                request_id,
                method,
                args,
            } => {
                let (phase, boot) = if *method == "SyncClock" {
                    let d = SyncClockRequestDecoder::new(args);
                    let boot = d
                        .clocks()
                        .find(|c| c.clock_id() == Some(6))
                        .and_then(|c| c.timestamp())
                        .unwrap_or(0);
                    (d.phase_raw().unwrap_or(0), boot)
                } else {
                    (0, 0)
                };
                Some((*method, *request_id, phase, boot))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn identity_bind_init_and_clock_rounds_every_30_s() {
    let mut c = RelayPortClient::new(identity());
    assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    let mut h = HostConnection::with_relay_port(Port::Producer, true);
    let mut now = 5 * MS;
    let mut reading = 0;
    c.handle_connected(now);
    let ev = to_host(&mut c, &mut h);
    assert_eq!(
        ev,
        [HostEvent::SetPeerIdentity {
            pid: Some(77),
            uid: Some(1000),
            machine_id_hint: Some("boot-id-of-vm".into()),
            machine_name: Some("vm".into()),
        }],
        "the identity goes first, then the bind (answered, no call)"
    );
    assert!(!c.is_bound());
    to_client(&mut c, &mut h, now, &mut reading);
    assert!(c.is_bound());
    let ev = to_host(&mut c, &mut h);
    let cs = calls(&ev);
    assert_eq!(cs.len(), 2, "{ev:?}");
    assert_eq!(cs[0].0, "InitRelay");
    let HostEvent::Call { args, .. } = &ev[0] else {
        unreachable!()
    };
    assert_eq!(
        InitRelayRequestDecoder::new(args).system_info_bytes(),
        Some(&[0x0a, 0x02, 0x0a, 0x00][..])
    );
    assert_eq!((cs[1].0, cs[1].2, cs[1].3), ("SyncClock", 1, 1));
    // InitRelay's reply changes nothing; PING's brings UPDATE, read fresh.
    h.reply(cs[0].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    assert!(calls(&to_host(&mut c, &mut h)).is_empty());
    now += MS;
    h.reply(cs[1].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    let update = calls(&to_host(&mut c, &mut h));
    assert_eq!(update.len(), 1);
    assert_eq!((update[0].0, update[0].2, update[0].3), ("SyncClock", 2, 2));
    assert_eq!(c.poll_timeout(), None, "no round while one is in flight");
    now += MS;
    h.reply(update[0].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    assert_eq!(c.stats().clock_rounds, 1);
    assert_eq!(c.poll_timeout(), Some(now + SYNC_INTERVAL_MS * MS));
    // Not before its time.
    c.handle_timeout(now + SYNC_INTERVAL_MS * MS - 1, &mut || vec![(6, 999)]);
    assert!(calls(&to_host(&mut c, &mut h)).is_empty());
    c.handle_timeout(now + SYNC_INTERVAL_MS * MS, &mut || vec![(6, 12345)]);
    let next = calls(&to_host(&mut c, &mut h));
    assert_eq!(next.len(), 1);
    assert_eq!((next[0].0, next[0].2, next[0].3), ("SyncClock", 1, 12345));
}

#[test]
fn reconnections_back_off_doubling_to_30_s_and_start_over_after_a_bind() {
    let mut c = RelayPortClient::new(identity());
    assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    let mut now = 0;
    let mut delays = Vec::new();
    for _ in 0..8 {
        c.handle_disconnected(now);
        let at = c.poll_timeout().expect("a retry deadline");
        delays.push((at - now) / MS);
        c.handle_timeout(at - 1, &mut Vec::new);
        assert_eq!(c.poll_event(), None, "not before the deadline");
        now = at;
        c.handle_timeout(now, &mut Vec::new);
        assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    }
    assert_eq!(
        delays,
        [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
    );
    assert_eq!(c.retry_delay_ms(), RETRY_DELAY_MAX_MS);
    // A connection that binds: the next loss is retried after 1 s again.
    let mut h = HostConnection::with_relay_port(Port::Producer, true);
    let mut reading = 0;
    c.handle_connected(now);
    to_host(&mut c, &mut h);
    to_client(&mut c, &mut h, now, &mut reading);
    assert!(c.is_bound());
    c.handle_disconnected(now);
    assert_eq!(c.poll_timeout(), Some(now + 1_000 * MS));
    assert_eq!(c.stats().disconnects, 9);
    assert_eq!(c.stats().connections, 1);
}

/// A service that does not serve RelayPort (its relay endpoint is off):
/// the client closes the connection and tries again later.
#[test]
fn a_service_without_relay_port_is_left() {
    let mut c = RelayPortClient::new(identity());
    assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    let mut h = HostConnection::with_relay_port(Port::Producer, false);
    let mut reading = 0;
    c.handle_connected(0);
    to_host(&mut c, &mut h);
    to_client(&mut c, &mut h, 0, &mut reading);
    assert!(!c.is_bound());
    assert!(matches!(c.poll_event(), Some(RelayEvent::Close(_))));
    c.handle_disconnected(0);
    assert_eq!(c.poll_timeout(), Some(1_000 * MS));
}

/// A service that binds RelayPort but refuses SyncClock (or InitRelay):
/// the refusal closes the connection with a reason that names the call, is
/// no clock round, and while refusals go on the reconnection delay grows
/// (a bind alone does not start it over); a completed round does.
#[test]
fn a_refused_call_is_reported_not_counted_and_backed_off() {
    let mut c = RelayPortClient::new(identity());
    assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    let mut now = 0;
    let mut reading = 0;
    let mut delays = Vec::new();
    for attempt in 0..4 {
        let mut h = HostConnection::with_relay_port(Port::Producer, true);
        c.handle_connected(now);
        to_host(&mut c, &mut h);
        to_client(&mut c, &mut h, now, &mut reading);
        assert!(c.is_bound());
        let cs = calls(&to_host(&mut c, &mut h));
        assert_eq!((cs[0].0, cs[1].0), ("InitRelay", "SyncClock"));
        if attempt == 3 {
            // InitRelay refused: closed too, with its name.
            h.reply(cs[0].1, Err(()), false);
            to_client(&mut c, &mut h, now, &mut reading);
            assert_eq!(
                c.poll_event(),
                Some(RelayEvent::Close(
                    "the central service refused InitRelay".into()
                ))
            );
        } else {
            h.reply(cs[0].1, Ok(Vec::new()), false);
            h.reply(cs[1].1, Err(()), false);
            to_client(&mut c, &mut h, now, &mut reading);
            assert_eq!(
                c.poll_event(),
                Some(RelayEvent::Close(
                    "the central service refused SyncClock PING".into()
                ))
            );
        }
        assert_eq!(c.stats().clock_rounds, 0, "a refused round is no round");
        c.handle_disconnected(now);
        let at = c.poll_timeout().expect("tried again");
        delays.push((at - now) / MS);
        now = at;
        c.handle_timeout(now, &mut Vec::new);
        assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    }
    assert_eq!(delays, [1_000, 2_000, 4_000, 8_000]);
    // UPDATE refused after PING went through: the same.
    let mut h = HostConnection::with_relay_port(Port::Producer, true);
    c.handle_connected(now);
    to_host(&mut c, &mut h);
    to_client(&mut c, &mut h, now, &mut reading);
    let cs = calls(&to_host(&mut c, &mut h));
    h.reply(cs[1].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    let update = calls(&to_host(&mut c, &mut h));
    h.reply(update[0].1, Err(()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    assert_eq!(
        c.poll_event(),
        Some(RelayEvent::Close(
            "the central service refused SyncClock UPDATE".into()
        ))
    );
    assert_eq!(c.stats().clock_rounds, 0);
    c.handle_disconnected(now);
    assert_eq!(c.poll_timeout(), Some(now + 16_000 * MS));
    now += 16_000 * MS;
    c.handle_timeout(now, &mut Vec::new);
    assert_eq!(c.poll_event(), Some(RelayEvent::Connect));
    // A service that answers: one round, and the delays start over.
    let mut h = HostConnection::with_relay_port(Port::Producer, true);
    c.handle_connected(now);
    to_host(&mut c, &mut h);
    to_client(&mut c, &mut h, now, &mut reading);
    let cs = calls(&to_host(&mut c, &mut h));
    h.reply(cs[0].1, Ok(Vec::new()), false);
    h.reply(cs[1].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    let update = calls(&to_host(&mut c, &mut h));
    h.reply(update[0].1, Ok(Vec::new()), false);
    to_client(&mut c, &mut h, now, &mut reading);
    assert_eq!(c.stats().clock_rounds, 1);
    assert_eq!(c.poll_event(), None);
    c.handle_disconnected(now);
    assert_eq!(c.poll_timeout(), Some(now + 1_000 * MS));
}
