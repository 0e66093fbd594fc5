//! The service core driven by hostile producers: the input connects
//! producers, makes ProducerPort calls (method and argument bytes from the
//! input), rewrites their shared memory at will, and lets a consumer record
//! and read. The core must never panic, and every packet a consumer reads
//! carries the trusted fields of a real producer connection.

use std::cell::RefCell;
use std::rc::Rc;

use crate::support::{Cursor, FakeEnv, World, scribble};
use zerotrace_core::protocol::{PRODUCER_METHODS, RELAY_METHODS};
use zerotrace_core::service::{
    ConsumerCall, ConsumerId, PeerIdentity, ProducerCall, ProducerTransport, RequestId,
    ServiceOptions, TracingService,
};
use zerotrace_protos::protos::{ReadBuffersResponseDecoder, TracePacketDecoder};

/// A valid config: one buffer, data sources "a" and "b".
const CONFIG: &[u8] = &[
    0x0a, 0x03, 0x08, 0x80, 0x01, // buffers { size_kb: 128 }
    0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, b'a', // data_sources { config { name: "a" } }
    0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, b'b',
];

/// The `producer_port` target.
pub fn producer_port(data: &[u8]) {
    let world = Rc::new(RefCell::new(World::default()));
    let mut svc = TracingService::new(ServiceOptions::default(), Box::new(FakeEnv(world.clone())));
    let consumer = ConsumerId(1);
    svc.consumer_connected(
        0,
        consumer,
        PeerIdentity {
            uid: 5,
            pid: Some(5),
            machine_id: None,
        },
    );
    let mut producers = Vec::new();
    let mut c = Cursor(data);
    let mut request = 0u64;
    let mut now = 0u64;
    while let Some(op) = c.byte() {
        request += 1;
        let r = RequestId(request);
        match op % 8 {
            0 => {
                let uid = 100 + producers.len() as u32;
                let t = ProducerTransport {
                    can_pass_fds: op & 0x80 == 0,
                };
                if let Some(p) = svc.producer_connected(
                    now,
                    PeerIdentity {
                        uid,
                        pid: Some(uid as i32),
                        machine_id: None,
                    },
                    t,
                ) {
                    // Some are a relay's connections, of another machine.
                    if op & 0x40 != 0 {
                        svc.set_producer_identity(
                            p,
                            PeerIdentity {
                                uid,
                                pid: None,
                                machine_id: Some(uid % 4 + 1),
                            },
                            "remote".into(),
                        );
                    }
                    producers.push(p);
                }
            }
            1..=3 if !producers.is_empty() => {
                let p = producers[usize::from(op >> 3) % producers.len()];
                // ProducerPort's methods and RelayPort's (the same socket
                // serves both with the relay endpoint on).
                let i = usize::from(c.byte().unwrap_or(0))
                    % (PRODUCER_METHODS.len() + RELAY_METHODS.len());
                let method = PRODUCER_METHODS
                    .get(i)
                    .or_else(|| RELAY_METHODS.get(i - PRODUCER_METHODS.len()))
                    .copied()
                    .unwrap_or("InitializeConnection");
                if let Ok(call) = ProducerCall::decode(method, c.piece()) {
                    svc.handle_producer_call(now, p, r, call, None);
                }
            }
            4 if !producers.is_empty() => {
                let p = producers[usize::from(op >> 3) % producers.len()];
                let region = world.borrow().smbs.get(&p).cloned();
                if let Some(region) = region {
                    let at = usize::from(c.byte().unwrap_or(0)) * 256;
                    scribble(&region, at, c.piece());
                }
            }
            5 => svc.handle_consumer_call(
                now,
                consumer,
                r,
                ConsumerCall::EnableTracing {
                    config: CONFIG.to_vec(),
                    attach_notification_only: false,
                },
            ),
            6 => {
                now += u64::from(op) * 50_000_000;
                world.borrow_mut().now = now;
                svc.handle_timeout(now);
            }
            7 => {
                let call = match op >> 3 & 3 {
                    0 => ConsumerCall::DisableTracing,
                    1 => ConsumerCall::Flush {
                        timeout_ms: 100,
                        flags: 0,
                    },
                    2 => ConsumerCall::FreeBuffers,
                    _ => ConsumerCall::ReadBuffers,
                };
                svc.handle_consumer_call(now, consumer, r, call);
            }
            _ => {
                if let Some(&p) = producers.get(usize::from(op >> 3)) {
                    svc.producer_disconnected(now, p);
                }
            }
        }
        while let Some(a) = svc.poll_action() {
            check(&a);
        }
    }
    request += 1;
    svc.handle_consumer_call(now, consumer, RequestId(request), ConsumerCall::ReadBuffers);
    loop {
        while let Some(a) = svc.poll_action() {
            check(&a);
        }
        if !svc.has_pending_read(consumer) {
            break;
        }
        svc.resume_read(now, consumer);
    }
}

/// Read-out replies respect the frame limit and their packets carry a
/// trusted uid and sequence id.
fn check(a: &zerotrace_core::service::Action) {
    use zerotrace_core::service::{Action, Peer, Reply};
    if let Action::Reply {
        to: Peer::Consumer(_),
        reply: Reply::Ok { data, .. },
        ..
    } = a
    {
        assert!(data.len() <= 128 * 1024);
        for s in ReadBuffersResponseDecoder::new(data).slices() {
            if s.last_slice_for_packet() == Some(true) {
                let d = s.data().unwrap_or(&[]);
                // Whole packets in one slice can be checked here.
                let p = TracePacketDecoder::new(d);
                if p.decode_error().is_none() && p.has_trusted_packet_sequence_id() {
                    let seq = p.trusted_packet_sequence_id().unwrap_or(0);
                    assert!(seq >= 1);
                    if seq >= 2 {
                        let uid = p.trusted_uid().unwrap_or(-1);
                        assert!((100..200).contains(&uid), "uid {uid} is a connection's");
                    }
                }
            }
        }
    }
}
