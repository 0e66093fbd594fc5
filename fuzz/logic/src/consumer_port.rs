//! The service core driven by hostile consumers: any ConsumerPort call with
//! any argument bytes, from several consumers, with time passing and one
//! well-behaved producer. The core must never panic, and a consumer only
//! ever receives replies to its own requests.

use std::cell::RefCell;
use std::rc::Rc;

use crate::support::{Cursor, FakeEnv, World};
use zerotrace_core::protocol::CONSUMER_METHODS;
use zerotrace_core::service::{
    Action, ConsumerCall, ConsumerId, DataSourceDescriptor, Peer, PeerIdentity, ProducerCall,
    ProducerTransport, RequestId, ServiceOptions, TracingService,
};

/// The `consumer_port` target.
pub fn consumer_port(data: &[u8]) {
    let world = Rc::new(RefCell::new(World::default()));
    let mut svc = TracingService::new(ServiceOptions::default(), Box::new(FakeEnv(world.clone())));
    let p = svc
        .producer_connected(
            0,
            PeerIdentity::default(),
            ProducerTransport { can_pass_fds: true },
        )
        .expect("first producer");
    let init = ProducerCall::InitializeConnection {
        page_size_hint: 0,
        smb_size_hint: 0,
        name: "p".into(),
        smb_scraping_mode: 1,
        producer_provided_shmem: false,
        sdk_version: String::new(),
    };
    svc.handle_producer_call(0, p, RequestId(1), init, None);
    svc.handle_producer_call(0, p, RequestId(2), ProducerCall::GetAsyncCommand, None);
    let desc = DataSourceDescriptor::decode(&[0x0a, 0x01, b'a', 0x10, 0x01], "RegisterDataSource")
        .expect("valid");
    svc.handle_producer_call(
        0,
        p,
        RequestId(3),
        ProducerCall::RegisterDataSource(desc),
        None,
    );
    let mut c = Cursor(data);
    let mut issued: Vec<(ConsumerId, RequestId)> = Vec::new();
    let mut now = 0;
    let mut request = 10u64;
    while let Some(op) = c.byte() {
        let consumer = ConsumerId(u64::from(op & 3));
        match op >> 2 {
            0 => svc.consumer_connected(
                now,
                consumer,
                PeerIdentity {
                    uid: u32::from(op & 1),
                    pid: None,
                    machine_id: None,
                },
            ),
            1 => svc.consumer_disconnected(now, consumer),
            2..=4 => {
                now += u64::from(c.byte().unwrap_or(0)) * 10_000_000;
                svc.handle_timeout(now);
            }
            _ => {
                let method =
                    CONSUMER_METHODS[usize::from(c.byte().unwrap_or(0)) % CONSUMER_METHODS.len()];
                if let Ok(call) = ConsumerCall::decode(method, c.piece()) {
                    request += 1;
                    issued.push((consumer, RequestId(request)));
                    // Every other call comes with a file descriptor.
                    let fd_passed = request % 2 == 0;
                    svc.handle_consumer_call_with_fd(
                        now,
                        consumer,
                        RequestId(request),
                        call,
                        fd_passed,
                    );
                }
            }
        }
        // The driver's side of output files: creations that fail or not,
        // writes that sometimes fail, closes acknowledged.
        loop {
            let mut files = Vec::new();
            while let Some(a) = svc.poll_action() {
                match a {
                    Action::Reply {
                        to: Peer::Consumer(cid),
                        request,
                        ..
                    } => assert!(
                        issued.contains(&(cid, request)),
                        "reply to a request {cid:?} never made"
                    ),
                    Action::CreateFile { .. }
                    | Action::WriteFile { .. }
                    | Action::CloseFile { .. } => files.push(a),
                    _ => {}
                }
            }
            if files.is_empty() {
                break;
            }
            for a in files {
                match a {
                    Action::CreateFile { session, .. } => {
                        let result = if request % 3 == 0 {
                            Err("exists".to_owned())
                        } else {
                            Ok(())
                        };
                        svc.output_file_created(now, session, result);
                    }
                    Action::WriteFile { session, .. } if request % 5 == 0 => {
                        svc.output_file_closed(now, session, Some("full".into()));
                    }
                    Action::CloseFile { session } => svc.output_file_closed(now, session, None),
                    _ => {}
                }
            }
        }
    }
}
