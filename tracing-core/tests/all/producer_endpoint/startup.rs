//! Startup tracing on the sans-IO endpoint: reservations that expire,
//! bind to an adopted buffer or abort with it, and what a writer wrote
//! before the connection reaching the service (the fake-clock twins of
//! `startup_tracing.rs`'s paced tests).

use super::*;

#[test]
fn a_startup_reservation_expires_at_its_deadline() {
    // The fake-clock twin of startup_tracing.rs's
    // `an_unclaimed_reservation_is_dropped_after_the_timeout`.
    let mut ep = ProducerEndpoint::new(0, startup_options(300));
    events(&mut ep);
    assert_eq!(ep.startup_reservation("a"), Ok(StartupReservation::Needed));
    ep.add_startup_reservation(10 * MS, "a", 1);
    assert_eq!(ep.startup_reservation("a"), Ok(StartupReservation::Open(1)));
    ep.add_startup_reservation(20 * MS, "b", 2);
    assert_eq!(ep.poll_timeout(), Some(310 * MS));
    ep.handle_timeout(309 * MS);
    assert_eq!(events(&mut ep), vec![]);
    ep.handle_timeout(310 * MS);
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::Startup(StartupStep::Abort {
            reservation: 1
        })]
    );
    assert_eq!(ep.startup_reservations_aborted(), 1);
    assert_eq!(ep.poll_timeout(), Some(320 * MS));
    // A new reservation for "a" gets a fresh deadline.
    assert_eq!(ep.startup_reservation("a"), Ok(StartupReservation::Needed));
    ep.handle_timeout(320 * MS);
    assert_eq!(ep.startup_reservations_aborted(), 2);
    assert_eq!(ep.poll_timeout(), None);
}

#[test]
fn a_started_data_source_binds_its_reservation_on_an_adopted_buffer() {
    let opts = startup_options(10_000);
    let mut ep = ProducerEndpoint::new(0, opts);
    events(&mut ep);
    ep.add_startup_reservation(0, "early", 4);
    ep.handle_connected(0).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, 0, 0);
    assert!(svc.read(&mut ep));
    svc.initialize(&mut ep, true, false);
    assert_eq!(
        events(&mut ep),
        vec![
            EndpointEvent::Smb(SmbSetup::AdoptStartupBuffer),
            EndpointEvent::Initialized { success: true }
        ]
    );
    assert!(ep.uses_startup_smb());
    // setup_tracing without an fd: our buffer is the SMB already.
    svc.command(&mut ep, MS, 1, setup_tracing(4));
    assert_eq!(
        events(&mut ep),
        vec![EndpointEvent::Smb(SmbSetup::CloseReceived { received: 1 })]
    );
    // The start binds the reservation before the application hears it.
    svc.command(&mut ep, 2 * MS, 0, start(9, "early", 6));
    let ev = events(&mut ep);
    assert_eq!(
        ev[0],
        EndpointEvent::Startup(StartupStep::Bind {
            reservation: 4,
            target_buffer: 6
        })
    );
    assert!(matches!(
        ev[1],
        EndpointEvent::DataSource(DataSourceEvent::Start(_))
    ));
    assert_eq!(ep.poll_timeout(), None, "no deadline left");
    assert_eq!(ep.startup_reservations_aborted(), 0);

    // Later connections offer nothing, and a start there aborts.
    ep.add_startup_reservation(3 * MS, "late", 5);
    ep.handle_disconnected(4 * MS);
    ep.handle_timeout(54 * MS);
    events(&mut ep);
    ep.handle_connected(54 * MS).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, 54 * MS, 0);
    assert!(!svc.read(&mut ep), "offered once");
    svc.initialize(&mut ep, false, false);
    assert!(!ep.uses_startup_smb());
    events(&mut ep);
    svc.command(&mut ep, 60 * MS, 0, start(10, "late", 1));
    assert_eq!(
        ep.poll_event(),
        Some(EndpointEvent::Startup(StartupStep::Abort {
            reservation: 5
        }))
    );
    assert_eq!(ep.startup_reservations_aborted(), 1);
}

#[test]
fn a_refused_startup_buffer_aborts_every_reservation() {
    let mut ep = ProducerEndpoint::new(0, startup_options(10_000));
    events(&mut ep);
    ep.add_startup_reservation(0, "a", 1);
    ep.add_startup_reservation(0, "b", 2);
    ep.handle_connected(0).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, 0, 0);
    svc.read(&mut ep);
    svc.initialize(&mut ep, false, false);
    let ev = events(&mut ep);
    assert!(matches!(ev[0], EndpointEvent::StartupRefused { .. }));
    assert_eq!(
        ev[1..],
        [
            EndpointEvent::Startup(StartupStep::Abort { reservation: 1 }),
            EndpointEvent::Startup(StartupStep::Abort { reservation: 2 }),
            EndpointEvent::Initialized { success: true },
        ]
    );
    assert_eq!(ep.startup_reservations_aborted(), 2);
    assert!(ep.startup_refused());
    assert_eq!(
        ep.startup_reservation("a"),
        Err(EndpointError::Startup(StartupError::Refused))
    );
    assert_eq!(ep.poll_timeout(), None);
}

#[test]
fn startup_reservations_need_startup_tracing() {
    let ep = ProducerEndpoint::new(0, options());
    assert_eq!(
        ep.startup_reservation("a"),
        Err(EndpointError::Startup(StartupError::NotEnabled))
    );
}

/// Does what a driver does with the endpoint's startup and SMB events:
/// returns the sink's messages once the startup arbiter is adopted.
fn drive(
    ep: &mut ProducerEndpoint,
    arbiter: &Arc<SharedMemoryArbiter>,
    sink: &mut Option<mpsc::Receiver<SinkMessage>>,
) {
    while let Some(ev) = ep.poll_event() {
        match ev {
            EndpointEvent::Smb(SmbSetup::AdoptStartupBuffer) => {
                let (s, rx) = ChannelCommitSink::new();
                arbiter.bind_to_sink(Arc::new(s)).unwrap();
                *sink = Some(rx);
            }
            EndpointEvent::Startup(StartupStep::Abort { reservation }) => {
                arbiter.abort_startup_reservation(reservation).unwrap();
            }
            EndpointEvent::Startup(StartupStep::Bind {
                reservation,
                target_buffer,
            }) => arbiter
                .bind_startup_target_buffer(reservation, target_buffer)
                .unwrap(),
            _ => {}
        }
    }
}

fn startup_arbiter(pages: usize) -> Arc<SharedMemoryArbiter> {
    let region = Arc::new(HeapShm::new(pages * 4096).unwrap());
    SharedMemoryArbiter::new_unbound(region, 4096, ArbiterConfig::default()).unwrap()
}

/// A startup writer of `name`, as `create_startup_trace_writer` makes it.
fn startup_writer(
    ep: &mut ProducerEndpoint,
    arbiter: &Arc<SharedMemoryArbiter>,
    now: u64,
    name: &str,
) -> (u16, TraceWriter) {
    let r = match ep.startup_reservation(name).unwrap() {
        StartupReservation::Open(r) => r,
        StartupReservation::Needed => {
            let r = arbiter.create_startup_reservation().unwrap();
            ep.add_startup_reservation(now, name, r);
            r
        }
    };
    (r, arbiter.create_startup_trace_writer(r).unwrap())
}

fn write(w: &mut TraceWriter, n: u64) {
    for i in 0..n {
        w.packet(|p| {
            p.set_timestamp(i);
            p.message().append_bytes(900, &[i as u8; 1000]);
        });
    }
}

#[test]
fn an_unclaimed_reservation_frees_its_chunks_at_the_deadline() {
    let arbiter = startup_arbiter(16);
    let mut ep = ProducerEndpoint::new(0, startup_options(300));
    events(&mut ep);
    let mut sink = None;
    let (r, mut w) = startup_writer(&mut ep, &arbiter, 0, "unclaimed");
    // A second writer of the same data source shares the reservation.
    let (r2, _w2) = startup_writer(&mut ep, &arbiter, 5 * MS, "unclaimed");
    assert_eq!(r, r2);
    write(&mut w, 20);
    w.flush(None);
    let free = |a: &SharedMemoryArbiter| {
        let abi = a.abi();
        (0..abi.num_pages())
            .filter(|&p| abi.is_page_free(p))
            .count()
    };
    assert!(free(&arbiter) < 16, "the data is held");

    ep.handle_timeout(299 * MS);
    drive(&mut ep, &arbiter, &mut sink);
    assert_eq!(
        arbiter.startup_reservation_state(r),
        Some(ReservationState::Unbound)
    );
    ep.handle_timeout(300 * MS);
    drive(&mut ep, &arbiter, &mut sink);
    assert_eq!(
        arbiter.startup_reservation_state(r),
        Some(ReservationState::Aborted)
    );
    assert_eq!(ep.startup_reservations_aborted(), 1);
    assert_eq!(free(&arbiter), 16, "every held chunk freed");
    assert!(arbiter.stats().startup_chunks_discarded > 0);
    // The writer goes on, dropping.
    write(&mut w, 20);
    assert!(w.drop_count() > 0);
}

#[test]
fn a_started_data_source_receives_what_was_written_before_the_connection() {
    let arbiter = startup_arbiter(16);
    let mut ep = ProducerEndpoint::new(0, startup_options(10_000));
    events(&mut ep);
    let mut sink = None;
    let (_, mut w) = startup_writer(&mut ep, &arbiter, 0, "early");
    let writer_id = w.writer_id();
    write(&mut w, 10);
    w.flush(None);

    ep.handle_connected(MS).unwrap();
    let mut svc = Service::new();
    svc.read(&mut ep);
    svc.write(&mut ep, MS, 0);
    assert!(svc.read(&mut ep), "the buffer is offered");
    svc.initialize(&mut ep, true, false);
    drive(&mut ep, &arbiter, &mut sink);
    let rx = sink.take().expect("adopted");
    assert_eq!(rx.try_iter().count(), 0, "held until a session starts it");

    svc.command(&mut ep, 2 * MS, 0, start(3, "early", 7));
    drive(&mut ep, &arbiter, &mut sink);
    let msgs: Vec<SinkMessage> = rx.try_iter().collect();
    assert_eq!(
        msgs[0],
        SinkMessage::RegisterTraceWriter {
            writer_id,
            target_buffer: 7
        }
    );
    let moved: Vec<u32> = msgs
        .iter()
        .filter_map(|m| match m {
            SinkMessage::Commit(c) => Some(c.chunks_to_move.clone()),
            _ => None,
        })
        .flatten()
        .map(|m| m.target_buffer)
        .collect();
    assert!(
        !moved.is_empty() && moved.iter().all(|&b| b == 7),
        "{moved:?}"
    );
    assert_eq!(
        ep.poll_timeout(),
        None,
        "the reservation's deadline is gone"
    );
}
