//! The sans-IO producer endpoint on a fake clock, against a fake service
//! (the host side of the IPC layer): the handshake bytes, data source
//! registration, start/stop/flush round trips, commit acks, the reconnect
//! back-off as deadlines, startup reservations expiring and binding, and
//! hostile frames; and startup tracing end to end against a real arbiter
//! (the fake-clock twins of `startup_tracing.rs`'s paced tests). No
//! sockets, threads or sleeps: `now` is a number. Startup tracing's
//! reservations and their end-to-end runs are in [`startup`].

use std::sync::{Arc, mpsc};
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::ipc::{HostConnection, HostEvent, Port};
use zerotrace_core::producer::{
    ArbiterConfig, Backoff, ChannelCommitSink, DataSourceEvent, DataSourceSpec, EndpointError,
    EndpointEvent, EndpointOptions, ProducerEndpoint, ReservationState, SharedMemoryArbiter,
    SinkMessage, SmbSetup, StartupError, StartupOffer, StartupReservation, StartupStep,
    TraceWriter,
};
use zerotrace_core::protocol::CommitDataRequest;
use zerotrace_core::shm::HeapShm;
use zerotrace_protos::protos::{
    DataSourceConfig, GetAsyncCommandResponse, InitializeConnectionRequestDecoder,
    InitializeConnectionResponse, RegisterDataSourceRequestDecoder,
};

mod startup;

const MS: u64 = 1_000_000;

fn encode(f: impl FnOnce(protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(w.root());
    w.finish().unwrap()
}

/// A fake service: the host side of one producer connection.
struct Service {
    host: HostConnection,
    init: Option<u64>,
    async_command: Option<u64>,
    /// Calls seen, in order: (request id, method, args).
    calls: Vec<(u64, &'static str, Vec<u8>)>,
}

impl Service {
    fn new() -> Service {
        Service {
            host: HostConnection::new(Port::Producer),
            init: None,
            async_command: None,
            calls: Vec::new(),
        }
    }

    /// Reads everything the endpoint has to send; returns whether any
    /// frame asked for the startup fd.
    fn read(&mut self, ep: &mut ProducerEndpoint) -> bool {
        let mut attached = false;
        while let Some(t) = ep.poll_transmit() {
            attached |= t.attach_startup_fd;
            for ev in self.host.receive(&t.bytes) {
                if let HostEvent::Call {
                    request_id,
                    method,
                    args,
                } = ev
                {
                    match method {
                        "InitializeConnection" => self.init = Some(request_id),
                        "GetAsyncCommand" => self.async_command = Some(request_id),
                        _ => {}
                    }
                    self.calls.push((request_id, method, args));
                }
            }
        }
        attached
    }

    /// Sends what the host queued to the endpoint.
    fn write(&mut self, ep: &mut ProducerEndpoint, now: u64, fds: usize) {
        let bytes = self.host.take_transmit().concat();
        ep.handle_bytes(now, &bytes, fds).unwrap();
    }

    fn methods(&self) -> Vec<&'static str> {
        self.calls.iter().map(|c| c.1).collect()
    }

    fn take_calls(&mut self) -> Vec<(u64, &'static str, Vec<u8>)> {
        std::mem::take(&mut self.calls)
    }

    /// Answers InitializeConnection.
    fn initialize(&mut self, ep: &mut ProducerEndpoint, adopt: bool, emulation: bool) {
        let data = encode(|m| {
            let mut r = InitializeConnectionResponse::from_message(m);
            r.set_using_shmem_provided_by_producer(adopt);
            r.set_use_shmem_emulation(emulation);
        });
        let id = self.init.unwrap();
        self.host.reply(id, Ok(data), false);
        self.write(ep, 0, 0);
    }

    /// Sends one GetAsyncCommand response.
    fn command(&mut self, ep: &mut ProducerEndpoint, now: u64, fds: usize, data: Vec<u8>) {
        let id = self.async_command.unwrap();
        self.host.reply(id, Ok(data), true);
        self.write(ep, now, fds);
    }
}

fn config(name: &str, target_buffer: u32) -> Vec<u8> {
    encode(|m| {
        let mut c = DataSourceConfig::from_message(m);
        c.set_name(name);
        c.set_target_buffer(target_buffer);
    })
}

fn start(id: u64, name: &str, target_buffer: u32) -> Vec<u8> {
    let cfg = config(name, target_buffer);
    encode(|m| {
        GetAsyncCommandResponse::from_message(m)
            .begin_start_data_source()
            .set_new_instance_id(id)
            .set_config_raw(&cfg);
    })
}

fn setup(id: u64, name: &str, target_buffer: u32) -> Vec<u8> {
    let cfg = config(name, target_buffer);
    encode(|m| {
        GetAsyncCommandResponse::from_message(m)
            .begin_setup_data_source()
            .set_new_instance_id(id)
            .set_config_raw(&cfg);
    })
}

fn stop(id: u64) -> Vec<u8> {
    encode(|m| {
        GetAsyncCommandResponse::from_message(m)
            .begin_stop_data_source()
            .set_instance_id(id);
    })
}

fn flush(request: u64, ids: &[u64]) -> Vec<u8> {
    encode(|m| {
        let mut c = GetAsyncCommandResponse::from_message(m);
        let mut f = c.begin_flush();
        for &id in ids {
            f.add_data_source_ids(id);
        }
        f.set_request_id(request);
    })
}

fn setup_tracing(page_kb: u32) -> Vec<u8> {
    encode(|m| {
        GetAsyncCommandResponse::from_message(m)
            .begin_setup_tracing()
            .set_shared_buffer_page_size_kb(page_kb);
    })
}

fn events(ep: &mut ProducerEndpoint) -> Vec<EndpointEvent> {
    std::iter::from_fn(|| ep.poll_event()).collect()
}

fn options() -> EndpointOptions {
    EndpointOptions {
        name: "test-producer".into(),
        ..EndpointOptions::default()
    }
}

fn startup_options(timeout_ms: u64) -> EndpointOptions {
    EndpointOptions {
        startup: Some(StartupOffer {
            smb_size: 256 * 1024,
            page_size: 4096,
            timeout_ns: timeout_ms * MS,
        }),
        ..options()
    }
}

/// An endpoint connected at time 0 and initialized (events drained).
fn connected(opts: EndpointOptions, adopt: bool) -> (ProducerEndpoint, Service) {
    let mut ep = ProducerEndpoint::new(0, opts);
    assert_eq!(ep.poll_event(), Some(EndpointEvent::Connect));
    ep.handle_connected(0).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, 0, 0);
    svc.read(&mut ep);
    svc.initialize(&mut ep, adopt, false);
    events(&mut ep);
    svc.take_calls();
    (ep, svc)
}

fn spec(name: &str) -> DataSourceSpec {
    DataSourceSpec {
        name: name.into(),
        will_notify_on_start: true,
        will_notify_on_stop: true,
        ..DataSourceSpec::default()
    }
}

#[test]
fn the_handshake_binds_then_pipelines_initialize_get_async_command_and_registrations() {
    let mut ep = ProducerEndpoint::new(0, options());
    ep.register_data_source(spec("a"));
    ep.register_data_source(spec("b"));
    assert_eq!(ep.poll_transmit(), None, "nothing without a connection");
    assert_eq!(events(&mut ep), vec![EndpointEvent::Connect]);
    ep.handle_connected(5 * MS).unwrap();
    assert!(ep.has_connection() && !ep.is_connected());

    // The bind goes alone; the calls wait for its reply.
    let bind = ep.poll_transmit().unwrap();
    assert!(!bind.attach_startup_fd);
    assert_eq!(ep.poll_transmit(), None);
    let mut svc = Service::new();
    assert!(svc.host.receive(&bind.bytes).is_empty());
    svc.write(&mut ep, 5 * MS, 0);
    assert!(!svc.read(&mut ep), "no startup buffer offered");
    assert_eq!(
        svc.methods(),
        [
            "InitializeConnection",
            "GetAsyncCommand",
            "RegisterDataSource",
            "RegisterDataSource"
        ]
    );
    let init = InitializeConnectionRequestDecoder::new(&svc.calls[0].2);
    assert_eq!(init.producer_name(), Some("test-producer"));
    assert_eq!(init.producer_provided_shmem(), None);
    let reg = RegisterDataSourceRequestDecoder::new(&svc.calls[2].2);
    assert_eq!(reg.data_source_descriptor().unwrap().name(), Some("a"));

    svc.initialize(&mut ep, false, false);
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::Initialized { success: true }]
    );
    assert!(ep.is_connected());
    assert_eq!(ep.poll_timeout(), None, "nothing to wait for");
}

#[test]
fn a_startup_offer_rides_on_initialize_connection_with_the_fd() {
    let mut ep = ProducerEndpoint::new(0, startup_options(1000));
    events(&mut ep);
    ep.handle_connected(0).unwrap();
    let mut svc = Service::new();
    assert!(!svc.read(&mut ep), "not on the bind");
    svc.write(&mut ep, 0, 0);
    let mut first = true;
    while let Some(t) = ep.poll_transmit() {
        assert_eq!(t.attach_startup_fd, first, "only InitializeConnection");
        first = false;
        for ev in svc.host.receive(&t.bytes) {
            if let HostEvent::Call {
                method: "InitializeConnection",
                args,
                ..
            } = ev
            {
                let init = InitializeConnectionRequestDecoder::new(&args);
                assert_eq!(init.producer_provided_shmem(), Some(true));
                assert_eq!(init.shared_memory_size_hint_bytes(), Some(256 * 1024));
                assert_eq!(init.shared_memory_page_size_hint_bytes(), Some(4096));
            }
        }
    }
    assert!(!first);
}

#[test]
fn start_and_stop_round_trip_with_notifications_after_the_application() {
    let (mut ep, mut svc) = connected(options(), false);
    ep.register_data_source(spec("a"));
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["RegisterDataSource"]);
    svc.take_calls();

    svc.command(&mut ep, MS, 0, setup(7, "a", 3));
    svc.command(&mut ep, MS, 0, start(7, "a", 3));
    let ev = events(&mut ep);
    assert!(matches!(&ev[..], [
        EndpointEvent::DataSource(DataSourceEvent::Setup(s)),
        EndpointEvent::DataSource(DataSourceEvent::Start(i)),
    ] if s.id == 7 && i.id == 7 && i.name == "a" && i.target_buffer == 3));
    // Nothing goes out (and nothing counts as started) before the
    // application says it started.
    svc.read(&mut ep);
    assert!(svc.calls.is_empty());
    assert!(ep.started("a").is_none());
    ep.data_source_started(7);
    assert_eq!(ep.started("a").map(|i| i.id), Some(7));
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["NotifyDataSourceStarted"]);
    svc.take_calls();

    svc.command(&mut ep, 2 * MS, 0, stop(7));
    assert!(matches!(
        &events(&mut ep)[..],
        [EndpointEvent::DataSource(DataSourceEvent::Stop(i))] if i.id == 7
    ));
    assert!(ep.started("a").is_none());
    ep.data_source_stopped(7, "a");
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["NotifyDataSourceStopped"]);

    // Stopping an unknown instance tells nobody.
    svc.command(&mut ep, 3 * MS, 0, stop(99));
    assert_eq!(events(&mut ep), vec![]);
}

#[test]
fn a_data_source_that_does_not_notify_sends_no_notifications() {
    let (mut ep, mut svc) = connected(options(), false);
    ep.register_data_source(DataSourceSpec {
        name: "quiet".into(),
        ..DataSourceSpec::default()
    });
    svc.read(&mut ep);
    svc.take_calls();
    svc.command(&mut ep, 0, 0, start(1, "quiet", 0));
    events(&mut ep);
    ep.data_source_started(1);
    ep.data_source_stopped(1, "quiet");
    svc.read(&mut ep);
    assert!(svc.calls.is_empty());
}

#[test]
fn flush_round_trip_and_the_flush_reply_deadline() {
    let opts = EndpointOptions {
        flush_reply_timeout: Some(Duration::from_millis(100)),
        ..options()
    };
    let (mut ep, mut svc) = connected(opts, false);
    svc.command(&mut ep, 0, 0, setup(4, "a", 1));
    events(&mut ep);

    svc.command(&mut ep, 10 * MS, 0, flush(21, &[4, 5]));
    let ev = events(&mut ep);
    assert!(
        matches!(&ev[..], [EndpointEvent::Flush { request_id: 21, instances }]
        if instances.len() == 1 && instances[0].id == 4)
    );
    assert_eq!(ep.poll_timeout(), Some(110 * MS));
    ep.flush_done(21);
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["CommitData"]);
    let req = CommitDataRequest::decode(&svc.calls[0].2).unwrap();
    assert_eq!(req.flush_request_id, Some(21));
    svc.take_calls();
    assert_eq!(ep.poll_timeout(), None);

    // Unanswered: the endpoint replies at the deadline, not before, once.
    svc.command(&mut ep, 200 * MS, 0, flush(22, &[4]));
    events(&mut ep);
    ep.handle_timeout(299 * MS);
    svc.read(&mut ep);
    assert!(svc.calls.is_empty());
    ep.handle_timeout(300 * MS);
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["CommitData"]);
    assert_eq!(ep.stats().flush_replies_timed_out, 1);
    svc.take_calls();
    ep.flush_done(22);
    svc.read(&mut ep);
    assert!(svc.calls.is_empty(), "a late reply is dropped");
}

#[test]
fn commit_callbacks_run_on_the_ack_or_when_the_connection_goes() {
    let (mut ep, mut svc) = connected(options(), false);
    let req = CommitDataRequest {
        flush_request_id: Some(3),
        ..CommitDataRequest::default()
    };
    ep.commit_data(&req, Some(1));
    ep.commit_data(&req, Some(2));
    ep.commit_data(&req, None);
    svc.read(&mut ep);
    assert_eq!(svc.methods(), ["CommitData"; 3]);
    let first = svc.calls[0].0;
    svc.host.reply(first, Ok(Vec::new()), false);
    svc.write(&mut ep, MS, 0);
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::CommitDone { callback: 1 }]
    );
    ep.handle_disconnected(2 * MS);
    assert_eq!(
        events(&mut ep),
        vec![
            EndpointEvent::Disconnected,
            EndpointEvent::CommitDone { callback: 2 }
        ]
    );
    // Without a connection nobody will ack: at once.
    ep.commit_data(&req, Some(9));
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::CommitDone { callback: 9 }]
    );
}

#[test]
fn setup_tracing_maps_the_last_fd_received_or_emulates() {
    let (mut ep, mut svc) = connected(options(), false);
    svc.command(&mut ep, 0, 2, setup_tracing(16));
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::Smb(SmbSetup::MapReceived {
            page_size: 16 * 1024,
            received: 2
        })]
    );
    // No fd: nothing to map.
    let errors = ep.stats().protocol_errors;
    svc.command(&mut ep, 0, 0, setup_tracing(4));
    assert_eq!(events(&mut ep), vec![]);
    assert_eq!(ep.stats().protocol_errors, errors + 1);

    // SMB emulation (a transport without fds): a local buffer.
    let opts = EndpointOptions {
        smb_size_hint: 100 * 1024,
        ..options()
    };
    let mut ep = ProducerEndpoint::new(0, opts);
    events(&mut ep);
    ep.handle_connected(0).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, 0, 0);
    svc.read(&mut ep);
    svc.initialize(&mut ep, false, true);
    assert!(ep.emulation());
    events(&mut ep);
    svc.command(&mut ep, 0, 0, setup_tracing(8));
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::Smb(SmbSetup::Emulated {
            page_size: 8192,
            size: 96 * 1024,
            received: 0
        })]
    );
}

#[test]
fn reconnect_back_off_doubles_to_its_cap_as_deadlines() {
    let (mut ep, _svc) = connected(options(), false);
    ep.register_data_source(spec("a"));
    let t0 = 1_000 * MS;
    ep.handle_disconnected(t0);
    assert_eq!(events(&mut ep), vec![EndpointEvent::Disconnected]);
    assert!(!ep.is_connected() && !ep.has_connection());
    // A restarting service gets one initial delay.
    assert_eq!(ep.poll_timeout(), Some(t0 + 50 * MS));
    ep.handle_timeout(t0 + 49 * MS);
    assert_eq!(events(&mut ep), vec![]);
    let mut now = t0 + 50 * MS;
    ep.handle_timeout(now);
    assert_eq!(events(&mut ep), vec![EndpointEvent::Connect]);
    assert_eq!(ep.poll_timeout(), None, "waiting for the attempt");

    let mut delays = Vec::new();
    for _ in 0..8 {
        ep.handle_connect_failed(now);
        let at = ep.poll_timeout().unwrap();
        delays.push((at - now) / MS);
        now = at;
        ep.handle_timeout(now);
        assert_eq!(events(&mut ep), vec![EndpointEvent::Connect]);
    }
    assert_eq!(delays, [50, 100, 200, 400, 800, 1600, 2000, 2000]);

    // Connected again: the data sources go out again, the count goes up.
    ep.handle_connected(now).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, now, 0);
    svc.read(&mut ep);
    assert!(svc.methods().contains(&"RegisterDataSource"));
    assert_eq!(ep.stats().reconnects, 1);
    assert_eq!(ep.generation(), 2);
    // A report of a connection nobody asked for is refused.
    assert_eq!(ep.handle_connected(now), Err(EndpointError::NotConnecting));
}

#[test]
fn the_first_connection_gives_up_when_the_next_attempt_is_too_late() {
    let opts = EndpointOptions {
        first_connect: Backoff::FIRST_CONNECT,
        give_up_after: Some(Duration::from_millis(100)),
        ..options()
    };
    let mut ep = ProducerEndpoint::new(0, opts);
    assert_eq!(events(&mut ep), vec![EndpointEvent::Connect]);
    let mut now = 0;
    let mut attempts = vec![0];
    loop {
        ep.handle_connect_failed(now);
        if let Some(EndpointEvent::GaveUp) = ep.poll_event() {
            break;
        }
        now = ep.poll_timeout().unwrap();
        attempts.push(now / MS);
        ep.handle_timeout(now);
        assert_eq!(ep.poll_event(), Some(EndpointEvent::Connect));
    }
    // 20, 40, then 80 would pass the 100 ms limit.
    assert_eq!(attempts, [0, 20, 60]);
    assert_eq!(ep.poll_timeout(), None);
    ep.handle_timeout(10_000 * MS);
    assert_eq!(events(&mut ep), vec![]);
}

#[test]
fn closing_stops_reconnecting() {
    let (mut ep, _svc) = connected(options(), false);
    ep.close();
    ep.handle_disconnected(0);
    assert_eq!(events(&mut ep), vec![EndpointEvent::Disconnected]);
    assert_eq!(ep.poll_timeout(), None);
}

#[test]
fn hostile_frames_give_typed_errors_not_panics() {
    let (mut ep, _svc) = connected(options(), false);
    // A length header far beyond the frame limit.
    let huge = [0xff, 0xff, 0xff, 0x7f, 1, 2, 3];
    assert!(matches!(
        ep.handle_bytes(0, &huge, 0),
        Err(EndpointError::Frame(e)) if e.is_fatal()
    ));
    let errors = ep.stats().protocol_errors;
    assert!(errors >= 1);
    ep.handle_disconnected(0);
    assert_eq!(
        ep.handle_bytes(0, &[1, 2, 3], 0),
        Err(EndpointError::NotConnected)
    );

    // Arbitrary bytes and commands: whatever they are, no panic, and the
    // endpoint still answers.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..200u64 {
        let (mut ep, mut svc) = connected(options(), false);
        let len = (next() % 64) as usize;
        let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // As a command on the async stream...
        svc.command(&mut ep, round, (next() % 3) as usize, junk.clone());
        events(&mut ep);
        // ...and as raw bytes.
        let _ = ep.handle_bytes(round, &junk, 0);
        events(&mut ep);
        ep.handle_timeout(u64::MAX);
        while ep.poll_transmit().is_some() {}
    }
}
