//! Hostile IPC peers against the daemon: oversized and malformed frames,
//! unknown methods, fds nobody asked for, producer-provided buffers that are
//! not sealed memfds. The offender is refused or dropped; everyone else goes
//! on, and no fd leaks.
//! (Its own test binary, not a module of `all/`: it counts the process's
//! open descriptors, which other tests' sockets would move.)
#![cfg(target_os = "linux")]

mod service_support;

use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use service_support::DaemonThread;
use zerotrace_core::daemon::DaemonConfig;
use zerotrace_core::ipc::connect;
use zerotrace_core::ipc::{ClientConnection, ClientEvent, Endpoint, Frame, FrameMsg, Stream};
use zerotrace_core::shm::MappedShm;
use zerotrace_protos::protos::{InitializeConnectionRequest, InitializeConnectionResponseDecoder};

struct Svc {
    _daemon: DaemonThread,
    producer: Endpoint,
    dir: PathBuf,
}

impl Svc {
    fn start(name: &str) -> Svc {
        let dir = std::env::temp_dir().join(format!("zt-hostile-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let producer = Endpoint::Path(dir.join("p"));
        let cfg = DaemonConfig {
            producer_sockets: vec![producer.clone()],
            consumer_socket: Endpoint::Path(dir.join("c")),
            log_level: 0,
            ..DaemonConfig::default()
        };
        Svc {
            _daemon: DaemonThread::spawn(cfg).unwrap(),
            producer,
            dir,
        }
    }
}

impl Drop for Svc {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A raw client: frames out, events in.
struct Raw {
    s: Stream,
    c: ClientConnection,
}

impl Raw {
    fn connect(ep: &Endpoint) -> Raw {
        Raw::connect_to(ep, "ProducerPort")
    }

    fn connect_to(ep: &Endpoint, service: &str) -> Raw {
        let s = connect(ep).unwrap();
        s.set_nonblocking(false).unwrap();
        let mut r = Raw {
            s,
            c: ClientConnection::new(service),
        };
        r.flush(None);
        r
    }

    fn flush(&mut self, fd: Option<std::os::fd::BorrowedFd<'_>>) {
        let mut fd = fd;
        for f in self.c.take_transmit() {
            self.s.send(&f, fd.take()).unwrap();
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let _ = self.s.send(bytes, None);
    }

    /// Events until `done` says so or the connection ends (`None`).
    fn until(&mut self, done: impl Fn(&ClientEvent) -> bool) -> Option<ClientEvent> {
        self.s
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = vec![0u8; 65536];
        let mut fds = Vec::new();
        loop {
            let n = self.s.recv(&mut buf, &mut fds).ok()?;
            if n == 0 {
                return None;
            }
            let evs = self.c.receive(&buf[..n]);
            self.flush(None);
            if let Some(e) = evs.into_iter().find(|e| done(e)) {
                return Some(e);
            }
        }
    }
}

fn init_args(provided: bool) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut r = InitializeConnectionRequest::from_message(w.root());
        r.set_producer_name("hostile");
        r.set_shared_memory_page_size_hint_bytes(4096);
        r.set_producer_provided_shmem(provided);
    }
    w.finish().unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn oversized_and_malformed_frames() {
    let svc = Svc::start("frames");
    // Bound, then a malformed frame (dropped), then a call that still works.
    let mut a = Raw::connect(&svc.producer);
    a.raw(&[3, 0, 0, 0, 0xff, 0xff, 0xff]);
    let id = a.c.invoke("InitializeConnection", init_args(false), false);
    a.flush(None);
    let e = a.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id));
    assert!(
        matches!(e, Some(ClientEvent::Reply { success: true, .. })),
        "{e:?}"
    );
    // An unknown method id is rejected, not a disconnect.
    a.raw(
        &Frame {
            request_id: 77,
            msg: FrameMsg::Invoke {
                service_id: 1,
                method_id: 999,
                args: vec![],
                drop_reply: false,
            },
        }
        .encode(),
    );
    // (The client does not know request 77; read the raw reply instead.)
    let id = a.c.invoke("Sync", vec![], false);
    a.flush(None);
    assert!(
        a.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
            .is_some()
    );
    // An oversized frame ends that connection only.
    let mut b = Raw::connect(&svc.producer);
    b.raw(&(200_000u32).to_le_bytes());
    b.raw(&[0u8; 1024]);
    assert!(b.until(|_| false).is_none(), "the offender is disconnected");
    let id = a.c.invoke("Sync", vec![], false);
    a.flush(None);
    assert!(
        a.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
            .is_some(),
        "others go on"
    );
}

#[test]
fn producer_provided_buffers_must_be_sealed_memfds() {
    let svc = Svc::start("smb");
    for (shm, accepted) in [
        (MappedShm::create_memfd(64 * 1024).unwrap(), true),
        (MappedShm::create_tmpfile(64 * 1024).unwrap(), false),
    ] {
        let mut r = Raw::connect(&svc.producer);
        // Wait for the bind so the fd goes with the InitializeConnection frame.
        r.until(|e| matches!(e, ClientEvent::Bound { .. }));
        let id = r.c.invoke("InitializeConnection", init_args(true), false);
        r.flush(Some(shm.fd()));
        let Some(ClientEvent::Reply { data, .. }) =
            r.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
        else {
            panic!("no reply");
        };
        let d = InitializeConnectionResponseDecoder::new(&data);
        assert_eq!(
            d.using_shmem_provided_by_producer(),
            Some(accepted),
            "sealed: {accepted}"
        );
    }
}

#[test]
fn unexpected_fds_are_closed() {
    let svc = Svc::start("fds");
    let before = open_fds();
    for _ in 0..20 {
        let mut r = Raw::connect(&svc.producer);
        r.until(|e| matches!(e, ClientEvent::Bound { .. }));
        let shm = MappedShm::create(4096).unwrap();
        // A Sync with an fd nobody asked for, several times.
        for _ in 0..3 {
            r.c.invoke("Sync", vec![], false);
            r.flush(Some(shm.fd().as_fd()));
        }
        drop(shm);
        let id = r.c.invoke("Sync", vec![], false);
        r.flush(None);
        r.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id));
    }
    // Connections closed by the clients; give the daemon a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while open_fds() > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        open_fds() <= before,
        "{} fds open, {} before",
        open_fds(),
        before
    );
}

/// `set_peer_identity` is honoured once and only where the kernel gives no
/// credentials (TCP, as from a relay); on a unix socket it is ignored, so a
/// local producer cannot claim another uid.
#[test]
fn peer_identity_is_honoured_only_over_tcp() {
    use zerotrace_core::consumer::ConsumerClient;
    use zerotrace_protos::protos::TracingServiceStateDecoder;
    let dir = std::env::temp_dir().join(format!("zt-hostile-ident-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let unix = Endpoint::Path(dir.join("p"));
    let cfg = DaemonConfig {
        producer_sockets: vec![unix.clone(), Endpoint::Tcp("127.0.0.1:0".into())],
        consumer_socket: Endpoint::Path(dir.join("c")),
        log_level: 0,
        ..DaemonConfig::default()
    };
    let daemon = DaemonThread::spawn(cfg).unwrap();
    let tcp = Endpoint::Tcp(daemon.producer_tcp_addr().unwrap().to_string());
    let claim = |ep: &Endpoint, name: &str| {
        let mut r = Raw::connect(ep);
        r.until(|e| matches!(e, ClientEvent::Bound { .. }));
        let id = FrameMsg::SetPeerIdentity {
            pid: Some(4242),
            uid: Some(1234),
            machine_id_hint: Some("relay-a".into()),
            machine_name: None,
        };
        r.raw(
            &Frame {
                request_id: 100,
                msg: id,
            }
            .encode(),
        );
        let mut w = protozero::HeapWriter::new();
        InitializeConnectionRequest::from_message(w.root()).set_producer_name(name);
        let req =
            r.c.invoke("InitializeConnection", w.finish().unwrap(), false);
        r.flush(None);
        r.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == req));
        r
    };
    let _relayed = claim(&tcp, "relayed");
    let _local = claim(&unix, "local");
    let mut c = ConsumerClient::connect(&Endpoint::Path(dir.join("c"))).unwrap();
    let state = c.query_service_state().unwrap();
    let st = TracingServiceStateDecoder::new(&state);
    let uid_of = |name: &str| {
        st.producers()
            .find(|p| p.name() == Some(name))
            .and_then(|p| p.uid())
    };
    assert_eq!(
        uid_of("relayed"),
        Some(1234),
        "over TCP the relay's identity is taken"
    );
    assert_eq!(
        uid_of("local"),
        Some(rustix::process::getuid().as_raw() as i32),
        "over unix the kernel's"
    );
    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A frame that arrives one byte per write is still one call; a frame cut
/// short by a disconnect is forgotten with its connection; a flood of empty
/// frames neither stops the peer nor anyone else.
#[test]
fn byte_at_a_time_truncated_and_tiny_frames() {
    let svc = Svc::start("bytes");
    let mut slow = Raw::connect(&svc.producer);
    slow.until(|e| matches!(e, ClientEvent::Bound { .. }));
    let id = slow
        .c
        .invoke("InitializeConnection", init_args(false), false);
    for frame in slow.c.take_transmit() {
        for b in frame {
            slow.raw(&[b]);
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    let e = slow.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id));
    assert!(
        matches!(e, Some(ClientEvent::Reply { success: true, .. })),
        "{e:?}"
    );

    // Half a frame, then gone.
    let mut cut = Raw::connect(&svc.producer);
    cut.until(|e| matches!(e, ClientEvent::Bound { .. }));
    cut.c
        .invoke("InitializeConnection", init_args(false), false);
    let frame = cut.c.take_transmit().concat();
    cut.raw(&frame[..frame.len() / 2]);
    drop(cut);

    // Ten thousand zero-length frames (each an IPCFrame that decodes to
    // nothing useful): dropped and counted, the connection goes on.
    slow.raw(&[0u8; 4 * 10_000]);
    let id = slow.c.invoke("Sync", vec![], false);
    slow.flush(None);
    assert!(
        slow.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
            .is_some(),
        "the flooding peer is still served"
    );
    let mut other = Raw::connect(&svc.producer);
    other.until(|e| matches!(e, ClientEvent::Bound { .. }));
    let id = other
        .c
        .invoke("InitializeConnection", init_args(false), false);
    other.flush(None);
    assert!(
        other
            .until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
            .is_some(),
        "others are served"
    );
}

/// Sixteen fds on one message, again and again: the service keeps at most
/// what one read may carry, closes those it did not ask for, and the
/// kernel drops the rest; nothing leaks.
#[test]
fn too_many_fds_are_closed() {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, sendmsg};
    use std::io::IoSlice;
    use std::mem::MaybeUninit;
    let svc = Svc::start("manyfds");
    let shms: Vec<MappedShm> = (0..16).map(|_| MappedShm::create(4096).unwrap()).collect();
    let before = open_fds();
    for _ in 0..10 {
        let mut r = Raw::connect(&svc.producer);
        r.until(|e| matches!(e, ClientEvent::Bound { .. }));
        for _ in 0..3 {
            r.c.invoke("Sync", vec![], false);
            let bytes = r.c.take_transmit().concat();
            let fds: Vec<_> = shms.iter().map(MappedShm::fd).collect();
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(16))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            assert!(control.push(SendAncillaryMessage::ScmRights(&fds)));
            sendmsg(
                r.s.as_fd(),
                &[IoSlice::new(&bytes)],
                &mut control,
                SendFlags::empty(),
            )
            .unwrap();
        }
        let id = r.c.invoke("Sync", vec![], false);
        r.flush(None);
        assert!(
            r.until(|e| matches!(e, ClientEvent::Reply { request_id, .. } if *request_id == id))
                .is_some()
        );
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while open_fds() > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(open_fds() <= before, "{} fds, {before} before", open_fds());
}

/// A consumer that sends requests and never reads the replies is dropped
/// once its send queue passes the limit (with a logged reason); the loop
/// never blocks on it and other consumers are served throughout.
#[test]
fn a_consumer_that_stops_reading_is_dropped_and_others_go_on() {
    use zerotrace_core::consumer::ConsumerClient;
    let dir = std::env::temp_dir().join(format!("zt-hostile-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let consumer = Endpoint::Path(dir.join("c"));
    let _daemon = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![Endpoint::Path(dir.join("p"))],
        consumer_socket: consumer.clone(),
        log_level: 0,
        max_send_queue: 1 << 20,
        send_timeout_ms: 2_000,
        ..DaemonConfig::default()
    })
    .unwrap();
    let mut hog = Raw::connect_to(&consumer, "ConsumerPort");
    hog.until(|e| matches!(e, ClientEvent::Bound { .. }));
    hog.s.set_nonblocking(true).unwrap();
    let mut good = ConsumerClient::connect(&consumer).unwrap();
    let mut sent = 0usize;
    let mut served = 0;
    let started = Instant::now();
    // Write requests (each answered with a service-state reply) until the
    // service hangs up on us; ask the other consumer between batches.
    let mut pending = Vec::new();
    let dropped = loop {
        if pending.is_empty() {
            for _ in 0..200 {
                hog.c.invoke("QueryServiceState", vec![], false);
            }
            pending = hog.c.take_transmit().concat();
        }
        // Whole frames only: a cut frame would be a different offence.
        match hog.s.send(&pending, None) {
            Ok(n) => {
                sent += n;
                pending.drain(..n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(_) => break true, // the service hung up
        }
        good.query_service_state()
            .expect("the other consumer is served");
        served += 1;
        if started.elapsed() > Duration::from_secs(30) {
            break false;
        }
    };
    assert!(dropped, "never disconnected after {sent} bytes of requests");
    assert!(served > 0);
    good.query_service_state()
        .expect("still served after the hog left");
    let _ = std::fs::remove_dir_all(&dir);
}
