//! The producer endpoint driven by a hostile service: the input connects
//! and disconnects, fails connection attempts, lets time pass, sends raw
//! bytes, well-framed replies with arbitrary payloads to the endpoint's own
//! requests (InitializeConnection, GetAsyncCommand, commits), and makes the
//! application's calls in between. The endpoint must never panic; after
//! `handle_timeout(now)` no deadline at or before `now` is left; every
//! frame it transmits is one the service side reads without a framing
//! error; and each commit callback is released exactly once (all of them
//! once the service is gone).

use std::collections::BTreeSet;

use crate::support::Cursor;
use zerotrace_core::ipc::{HostConnection, HostEvent, Port};
use zerotrace_core::producer::{
    DataSourceSpec, EndpointEvent, EndpointOptions, ProducerEndpoint, StartupOffer,
    StartupReservation,
};
use zerotrace_core::protocol::CommitDataRequest;

const MS: u64 = 1_000_000;

/// The fake service of the current connection: its host side and the
/// request ids the endpoint made.
struct Service {
    host: HostConnection,
    requests: Vec<u64>,
}

impl Service {
    fn new() -> Service {
        Service {
            host: HostConnection::new(Port::Producer),
            requests: Vec::new(),
        }
    }
}

/// Reads every frame the endpoint transmits (asserting each is
/// well-formed) and every event (asserting callbacks come back once).
fn drain(ep: &mut ProducerEndpoint, svc: &mut Option<Service>, released: &mut BTreeSet<u64>) {
    while let Some(t) = ep.poll_transmit() {
        if let Some(s) = svc.as_mut() {
            for ev in s.host.receive(&t.bytes) {
                match ev {
                    HostEvent::Call { request_id, .. } => s.requests.push(request_id),
                    HostEvent::Fatal(e) => panic!("the endpoint sent a bad frame: {e}"),
                    _ => {}
                }
            }
        }
    }
    while let Some(ev) = ep.poll_event() {
        if let EndpointEvent::CommitDone { callback } = ev {
            assert!(released.insert(callback), "callback {callback} twice");
        }
    }
}

/// The `producer_endpoint` target.
pub fn producer_endpoint(data: &[u8]) {
    let mut c = Cursor(data);
    let startup = c.byte().unwrap_or(0);
    let opts = EndpointOptions {
        name: "fuzz".into(),
        smb_size_hint: u32::from(c.byte().unwrap_or(0)) * 4096,
        startup: (startup & 1 == 1).then_some(StartupOffer {
            smb_size: 64 * 1024,
            page_size: 4096,
            timeout_ns: u64::from(startup) * 10 * MS,
        }),
        flush_reply_timeout: (startup & 2 == 2)
            .then(|| std::time::Duration::from_millis(u64::from(startup))),
        ..EndpointOptions::default()
    };
    let mut now = 0u64;
    let mut ep = ProducerEndpoint::new(now, opts);
    let mut svc: Option<Service> = None;
    let mut released = BTreeSet::new();
    let mut next_callback = 0u64;
    let mut with_callback = BTreeSet::new();
    let mut next_reservation = 0u16;
    while let Some(op) = c.byte() {
        let arg = c.byte().unwrap_or(0);
        match op % 12 {
            0 => {
                if ep.handle_connected(now).is_ok() {
                    svc = Some(Service::new());
                }
            }
            1 => ep.handle_connect_failed(now),
            2 => {
                ep.handle_disconnected(now);
                svc = None;
            }
            3 => {
                now = now.saturating_add(u64::from(arg) * MS * 10);
                ep.handle_timeout(now);
                assert!(
                    ep.poll_timeout().is_none_or(|t| t > now),
                    "a deadline at or before {now} left after handle_timeout"
                );
            }
            4 => {
                let fds = usize::from(arg % 3);
                if ep.handle_bytes(now, c.piece(), fds).is_err() {
                    ep.handle_disconnected(now);
                    svc = None;
                }
            }
            5 => {
                // A well-framed reply to one of the endpoint's requests (if
                // it made any), after whatever the service has queued (the
                // bind reply).
                let payload = c.piece().to_vec();
                if let Some(s) = svc.as_mut() {
                    if !s.requests.is_empty() {
                        let id = s.requests[usize::from(arg) % s.requests.len()];
                        s.host.reply(id, Ok(payload), op & 0x80 != 0);
                    }
                    let bytes = s.host.take_transmit().concat();
                    if ep
                        .handle_bytes(now, &bytes, usize::from(op >> 6 & 1))
                        .is_err()
                    {
                        ep.handle_disconnected(now);
                        svc = None;
                    }
                }
            }
            6 => ep.register_data_source(DataSourceSpec {
                name: ["a", "b", ""][usize::from(arg) % 3].into(),
                will_notify_on_start: arg & 4 != 0,
                will_notify_on_stop: arg & 8 != 0,
                ..DataSourceSpec::default()
            }),
            7 => ep.data_source_started(u64::from(arg % 8)),
            8 => ep.data_source_stopped(u64::from(arg % 8), ["a", "b"][usize::from(arg) % 2]),
            9 => ep.flush_done(u64::from(arg % 8)),
            10 => {
                next_callback += 1;
                let req = CommitDataRequest {
                    flush_request_id: Some(u64::from(arg)),
                    ..CommitDataRequest::default()
                };
                let callback = (arg & 1 == 1).then_some(next_callback);
                with_callback.extend(callback);
                ep.commit_data(&req, callback);
            }
            _ => {
                let name = ["a", "b"][usize::from(arg) % 2];
                if let Ok(StartupReservation::Needed) = ep.startup_reservation(name) {
                    next_reservation = next_reservation.wrapping_add(1);
                    ep.add_startup_reservation(now, name, next_reservation);
                }
            }
        }
        drain(&mut ep, &mut svc, &mut released);
    }
    // Losing the service releases every callback still waiting.
    ep.handle_disconnected(now);
    drain(&mut ep, &mut svc, &mut released);
    assert_eq!(
        released, with_callback,
        "every commit callback released once"
    );
}
