//! Machines through the daemon's sockets: a TCP producer that names no
//! machine is local, one whose relay sent `set_peer_identity` is of the
//! machine it names (id from the hint, name as sent), and the sessions'
//! `machine_name_filter` and `trace_all_machines` pick between them as
//! Perfetto's service does.
#![cfg(target_os = "linux")]

use crate::service_support;

use std::time::Duration;

use protozero::HeapWriter;
use service_support::DaemonThread;
use zerotrace_core::consumer::ConsumerClient;
use zerotrace_core::daemon::DaemonConfig;
use zerotrace_core::ipc::connect;
use zerotrace_core::ipc::{ClientConnection, ClientEvent, Endpoint, Frame, FrameMsg, Stream};
use zerotrace_core::service::ServiceOptions;
use zerotrace_protos::protos::{
    InitializeConnectionRequest, RegisterDataSourceRequest, TraceConfig, TracingServiceStateDecoder,
};

/// A producer speaking raw frames (so it can send `set_peer_identity`).
struct Raw {
    s: Stream,
    c: ClientConnection,
}

impl Raw {
    fn connect(ep: &Endpoint) -> Raw {
        let s = connect(ep).unwrap();
        s.set_nonblocking(false).unwrap();
        let mut r = Raw {
            s,
            c: ClientConnection::new("ProducerPort"),
        };
        r.flush();
        r.until(|e| matches!(e, ClientEvent::Bound { .. }));
        r
    }

    fn flush(&mut self) {
        for f in self.c.take_transmit() {
            self.s.send(&f, None).unwrap();
        }
    }

    fn until(&mut self, done: impl Fn(&ClientEvent) -> bool) {
        if let Stream::Tcp(t) = &self.s {
            t.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let mut buf = vec![0u8; 65536];
        let mut fds = Vec::new();
        loop {
            let n = self.s.recv(&mut buf, &mut fds).unwrap();
            assert!(n > 0, "the service hung up");
            let evs = self.c.receive(&buf[..n]);
            self.flush();
            if evs.iter().any(&done) {
                return;
            }
        }
    }

    fn call(&mut self, method: &str, args: Vec<u8>) {
        let req = self.c.invoke(method, args, false);
        self.flush();
        self.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == req));
    }

    /// A producer named `name` with data source "ds", after an identity
    /// claim (machine hint, machine name) if any.
    fn producer(ep: &Endpoint, name: &str, claim: Option<(&str, &str)>) -> Raw {
        let mut r = Raw::connect(ep);
        if let Some((hint, machine)) = claim {
            let frame = Frame {
                request_id: 100,
                msg: FrameMsg::SetPeerIdentity {
                    pid: Some(7),
                    uid: Some(1234),
                    machine_id_hint: Some(hint.into()),
                    machine_name: Some(machine.into()),
                },
            };
            r.s.send(&frame.encode(), None).unwrap();
        }
        let mut w = HeapWriter::new();
        InitializeConnectionRequest::from_message(w.root()).set_producer_name(name);
        r.call("InitializeConnection", w.finish().unwrap());
        let mut w = HeapWriter::new();
        RegisterDataSourceRequest::from_message(w.root())
            .begin_data_source_descriptor()
            .set_name("ds");
        r.call("RegisterDataSource", w.finish().unwrap());
        r
    }
}

#[test]
fn relayed_and_plain_tcp_producers_by_machine() {
    let dir = std::env::temp_dir().join(format!("zt-machines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let consumer = Endpoint::Path(dir.join("c"));
    let daemon = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![Endpoint::Tcp("127.0.0.1:0".into())],
        consumer_socket: consumer.clone(),
        log_level: 0,
        options: ServiceOptions {
            machine_name: "thisbox".into(),
            ..DaemonConfig::default().options
        },
        ..DaemonConfig::default()
    })
    .unwrap();
    let tcp = Endpoint::Tcp(daemon.producer_tcp_addr().unwrap().to_string());
    let _plain = Raw::producer(&tcp, "plain", None);
    let _relayed = Raw::producer(&tcp, "relayed", Some(("relay-a", "vm-a")));

    // Five: the most sessions one uid may have.
    let sessions: [(&[&str], bool); 5] = [
        (&[], false),
        (&[], true),
        (&["vm-a"], false),
        (&["thisbox"], false),
        (&["host", "vm-a"], false),
    ];
    let mut clients = Vec::new();
    let mut counts = Vec::new();
    for (filters, all) in sessions {
        let mut w = HeapWriter::new();
        {
            let mut c = TraceConfig::from_message(w.root());
            c.add_buffers().set_size_kb(64);
            if all {
                c.set_trace_all_machines(true);
            }
            let mut ds = c.add_data_sources();
            for f in filters {
                ds.add_machine_name_filter(f);
            }
            ds.begin_config().set_name("ds");
        }
        let mut client = ConsumerClient::connect(&consumer).unwrap();
        let _session = client.enable_tracing(&w.finish().unwrap(), None).unwrap();
        // Answered after the EnableTracing before it on the same connection.
        let state = client.query_service_state().unwrap();
        let st = TracingServiceStateDecoder::new(&state);
        let last = st.tracing_sessions().last().expect("the session");
        counts.push(last.num_data_sources().unwrap_or(0));
        clients.push(client);
    }
    assert_eq!(counts, [1, 2, 1, 1, 2], "instances per session");
    drop(clients);
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}
