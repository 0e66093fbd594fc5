//! The I/O half of the producer client, around the sans-IO endpoint: the
//! socket (connect, write the endpoint's frames, attach the startup
//! buffer's fd), the reader thread (bytes and fds into the endpoint), the
//! timer thread (the endpoint's deadlines, the arbiter's batches of
//! commits, the outbox), the SMB mapping, and the application's callbacks.
//!
//! One lock guards the endpoint and what goes with it ([`Core`]). Events
//! are handled by one thread at a time (the *pump*), outside that lock, so
//! that callbacks may call back into the client; a thread that changes the
//! endpoint while another pumps only writes the frames and leaves the
//! events to it.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use super::outbox::{BATCH_WINDOW, Outbox, Outgoing};
use super::sink::{IpcSink, discard};
use super::startup::ClientStartup;
use super::{DataSourceCallback, ProducerOptions, lock, now};
use crate::ipc::fd::OwnedFd;
use crate::ipc::socket::{Endpoint, Stream, connect};
use crate::producer::endpoint::{
    DataSourceEvent, EndpointEvent, EndpointOptions, ProducerEndpoint, SmbSetup, StartupStep,
    Transmit,
};
use crate::producer::smb_view::SmbView;
use crate::producer::{
    ArbiterConfig, BufferExhaustedPolicy, CommitSink, FlushCallback, SharedMemoryArbiter,
};
use crate::shm::{HeapShm, SharedMemoryRegion};

/// The endpoint and the driver state under one lock.
pub(super) struct Core {
    pub(super) endpoint: ProducerEndpoint,
    /// The write side of the current connection.
    stream: Option<Stream>,
    /// A clone of it, to shut the connection down.
    shutdown: Option<Stream>,
    /// A new connection's read side, for the reader thread.
    new_read: Option<Stream>,
    /// Descriptors received and not yet consumed, in order.
    fds: VecDeque<OwnedFd>,
    /// The arbiter of the current connection's SMB.
    pub(super) arbiter: Option<Arc<SharedMemoryArbiter>>,
    /// Data source callbacks by name.
    pub(super) callbacks: HashMap<String, Arc<DataSourceCallback>>,
    /// Commit callbacks by the id the endpoint knows them by.
    flush_callbacks: HashMap<u64, FlushCallback>,
    next_callback: u64,
    /// InitializeConnection succeeded on the current connection, and the
    /// events before its answer (the startup buffer's adoption) are done.
    pub(super) connected: bool,
    /// A thread is handling events.
    pumping: bool,
    closing: bool,
    /// The first connection was given up.
    pub(super) gave_up: bool,
    /// The last connection attempt's error.
    pub(super) connect_error: Option<io::Error>,
    /// Startup tracing's buffer and arbiter.
    pub(super) startup: ClientStartup,
}

/// What the client's threads share.
pub(super) struct Shared {
    pub(super) core: Mutex<Core>,
    /// Signalled whenever the endpoint's state may have changed.
    pub(super) changed: Condvar,
    pub(super) outbox: Arc<Outbox>,
    pub(super) policy: BufferExhaustedPolicy,
    address: Endpoint,
}

impl Shared {
    /// The shared state of a client that has not connected yet.
    pub(super) fn new(
        address: &Endpoint,
        opts: &ProducerOptions,
        eopts: EndpointOptions,
        startup: ClientStartup,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            core: Mutex::new(Core {
                endpoint: ProducerEndpoint::new(now(), eopts),
                stream: None,
                shutdown: None,
                new_read: None,
                fds: VecDeque::new(),
                arbiter: None,
                callbacks: HashMap::new(),
                flush_callbacks: HashMap::new(),
                next_callback: 0,
                connected: false,
                pumping: false,
                closing: false,
                gave_up: false,
                connect_error: None,
                startup,
            }),
            changed: Condvar::new(),
            outbox: Arc::new(Outbox::default()),
            policy: opts.buffer_exhausted_policy,
            address: address.clone(),
        })
    }

    /// Runs `f` on the core between two moves of the outbox into the
    /// endpoint (what was queued before `f` goes out before what `f`
    /// sends), and writes the frames; callbacks released meanwhile run
    /// after the lock.
    pub(super) fn locked<R>(&self, f: impl FnOnce(&mut Core) -> R) -> R {
        let mut core = lock(&self.core);
        // What the writers queued before this call goes to the endpoint
        // before what `f` sends: a data source's last commit before its
        // NotifyDataSourceStopped, or the service may end the session
        // without it.
        let mut ready = core.io(&self.outbox);
        let r = f(&mut core);
        ready.extend(core.io(&self.outbox));
        drop(core);
        self.changed.notify_all();
        ready.into_iter().for_each(|cb| cb());
        r
    }

    /// Writes what is queued and handles the endpoint's events (unless
    /// another thread is at it: it will see them).
    pub(super) fn pump(&self) {
        let mut core = lock(&self.core);
        let mut ready = core.io(&self.outbox);
        if core.pumping {
            drop(core);
            ready.into_iter().for_each(|cb| cb());
            return;
        }
        core.pumping = true;
        loop {
            let ev = core.endpoint.poll_event();
            if ev.is_none() {
                core.pumping = false;
            }
            drop(core);
            self.changed.notify_all();
            ready.drain(..).for_each(|cb| cb());
            let Some(ev) = ev else {
                return;
            };
            self.handle(ev);
            core = lock(&self.core);
            ready = core.io(&self.outbox);
        }
    }

    /// Stops the client: no more connections, the current one shut down,
    /// both threads woken to end.
    pub(super) fn close(&self) {
        {
            let mut core = lock(&self.core);
            core.closing = true;
            core.endpoint.close();
            if let Some(s) = core.shutdown.take() {
                let _ = s.shutdown();
            }
        }
        self.changed.notify_all();
        self.outbox.close();
    }

    fn arbiter(&self) -> Option<Arc<SharedMemoryArbiter>> {
        lock(&self.core).arbiter.clone()
    }

    fn startup_arbiter(&self) -> Option<Arc<SharedMemoryArbiter>> {
        lock(&self.core).startup.arbiter.clone()
    }

    /// One event of the endpoint (no lock held).
    fn handle(&self, ev: EndpointEvent) {
        match ev {
            EndpointEvent::Connect => self.connect(),
            EndpointEvent::GaveUp => {
                lock(&self.core).gave_up = true;
            }
            EndpointEvent::Initialized { success } => {
                lock(&self.core).connected = success;
            }
            EndpointEvent::Disconnected => {
                let mut core = lock(&self.core);
                core.connected = false;
                core.arbiter = None;
                core.fds.clear();
            }
            EndpointEvent::Smb(setup) => self.setup_smb(setup),
            EndpointEvent::DataSource(event) => self.data_source(event),
            EndpointEvent::Flush {
                request_id,
                instances,
            } => {
                for i in instances {
                    self.notify(&i.name.clone(), &DataSourceEvent::Flush(i));
                }
                if let Some(a) = self.arbiter() {
                    a.flush_pending_commit_data_requests(None);
                }
                self.locked(|core| core.endpoint.flush_done(request_id));
            }
            EndpointEvent::CommitDone { callback } => {
                let cb = lock(&self.core).flush_callbacks.remove(&callback);
                if let Some(cb) = cb {
                    cb();
                }
            }
            EndpointEvent::Startup(step) => self.startup_step(step),
            EndpointEvent::StartupRefused { reason } => eprintln!(
                "zerotrace: the tracing service did not adopt the producer's startup buffer \
                 ({reason}); the data written before the connection is dropped and the \
                 service's buffer is used"
            ),
        }
    }

    /// Tells data source `name`'s callback.
    fn notify(&self, name: &str, event: &DataSourceEvent) {
        let cb = lock(&self.core).callbacks.get(name).cloned();
        if let Some(cb) = cb {
            cb(event);
        }
    }

    fn data_source(&self, event: DataSourceEvent) {
        match &event {
            DataSourceEvent::Start(i) => {
                self.notify(&i.name, &event);
                self.locked(|core| core.endpoint.data_source_started(i.id));
            }
            DataSourceEvent::Stop(i) => {
                self.notify(&i.name, &event);
                if let Some(a) = self.arbiter() {
                    a.flush_pending_commit_data_requests(None);
                }
                self.locked(|core| core.endpoint.data_source_stopped(i.id, &i.name));
            }
            DataSourceEvent::Setup(i)
            | DataSourceEvent::Flush(i)
            | DataSourceEvent::ClearIncrementalState(i) => self.notify(&i.name, &event),
        }
    }

    fn startup_step(&self, step: StartupStep) {
        let Some(arbiter) = self.startup_arbiter() else {
            return;
        };
        match step {
            StartupStep::Bind {
                reservation,
                target_buffer,
            } => {
                if arbiter
                    .bind_startup_target_buffer(reservation, target_buffer)
                    .is_err()
                {
                    let _ = arbiter.abort_startup_reservation(reservation);
                    self.locked(|core| core.endpoint.handle_bind_failed());
                }
            }
            StartupStep::Abort { reservation } => {
                let _ = arbiter.abort_startup_reservation(reservation);
            }
        }
    }

    /// Makes the arbiter of this connection's SMB.
    fn setup_smb(&self, setup: SmbSetup) {
        let (page, region, emulation): (usize, Arc<dyn SharedMemoryRegion>, bool) = match setup {
            SmbSetup::AdoptStartupBuffer => {
                let Some(arbiter) = self.startup_arbiter() else {
                    return;
                };
                let sink = IpcSink::new(&self.outbox, false, arbiter.smb());
                if arbiter.bind_to_sink(sink).is_ok() {
                    lock(&self.core).arbiter = Some(arbiter);
                }
                return;
            }
            SmbSetup::CloseReceived { received } => {
                self.take_fds(received);
                return;
            }
            SmbSetup::Emulated {
                page_size,
                size,
                received,
            } => {
                self.take_fds(received);
                // Our own buffer; its chunks are sent inline.
                match HeapShm::new(size) {
                    Ok(h) => (page_size, Arc::new(h), true),
                    Err(_) => return,
                }
            }
            SmbSetup::MapReceived {
                page_size,
                received,
            } => {
                let Some(fd) = self.take_fds(received).pop() else {
                    return;
                };
                let Some(shm) = map_received(fd) else {
                    return;
                };
                (page_size, shm, false)
            }
        };
        let Ok(smb) = SmbView::claim(region, page) else {
            return;
        };
        let sink: Arc<dyn CommitSink> = IpcSink::new(&self.outbox, emulation, &smb);
        if let Ok(a) =
            SharedMemoryArbiter::over(smb, OnceLock::from(sink), ArbiterConfig::default())
        {
            lock(&self.core).arbiter = Some(a);
        }
    }

    /// The first `n` descriptors received.
    fn take_fds(&self, n: usize) -> Vec<OwnedFd> {
        let mut core = lock(&self.core);
        let n = n.min(core.fds.len());
        core.fds.drain(..n).collect()
    }

    /// Opens a connection (the endpoint asked), with no lock held.
    fn connect(&self) {
        let opened = connect(&self.address).and_then(|s| {
            s.set_nonblocking(false)?;
            let read = s.try_clone()?;
            let shutdown = s.try_clone()?;
            Ok((s, read, shutdown))
        });
        let mut core = lock(&self.core);
        match opened {
            Ok((stream, read, shutdown)) => {
                if core.closing {
                    // Dropped meanwhile.
                    let _ = shutdown.shutdown();
                    return;
                }
                if core.endpoint.handle_connected(now()).is_err() {
                    return;
                }
                self.outbox.set_generation(core.endpoint.generation());
                core.stream = Some(stream);
                core.shutdown = Some(shutdown);
                core.new_read = Some(read);
            }
            Err(e) => {
                core.connect_error = Some(e);
                core.endpoint.handle_connect_failed(now());
                self.outbox.wake();
            }
        }
    }
}

impl Core {
    /// Moves the outbox into the endpoint and writes the endpoint's
    /// frames; returns the callbacks of commits that came too late.
    fn io(&mut self, outbox: &Outbox) -> Vec<FlushCallback> {
        let mut ready = Vec::new();
        let current = self.endpoint.generation();
        for (generation, item) in outbox.drain() {
            match item {
                Outgoing::Commit {
                    mut request,
                    callback,
                    smb,
                } => {
                    if generation != current {
                        discard(&smb, &mut request, None);
                        ready.extend(callback);
                        continue;
                    }
                    let id = callback.map(|cb| {
                        self.next_callback += 1;
                        self.flush_callbacks.insert(self.next_callback, cb);
                        self.next_callback
                    });
                    self.endpoint.commit_data(&request, id);
                }
                Outgoing::Register {
                    writer_id,
                    target_buffer,
                } if generation == current => {
                    self.endpoint
                        .register_trace_writer(writer_id, target_buffer);
                }
                Outgoing::Unregister { writer_id } if generation == current => {
                    self.endpoint.unregister_trace_writer(writer_id);
                }
                _ => {}
            }
        }
        while let Some(t) = self.endpoint.poll_transmit() {
            self.write(&t);
        }
        ready
    }

    /// Writes one frame (dropped without a connection or after an error:
    /// the reader sees the connection end).
    fn write(&mut self, t: &Transmit) {
        let fd = if t.attach_startup_fd {
            self.startup.fd()
        } else {
            None
        };
        let Some(stream) = self.stream.as_ref() else {
            return;
        };
        let mut sent = 0;
        while sent < t.bytes.len() {
            #[cfg(unix)]
            let with = fd
                .as_ref()
                .filter(|_| sent == 0)
                .map(std::os::fd::AsFd::as_fd);
            #[cfg(not(unix))]
            let with = fd.as_ref().and(None);
            match stream.send(&t.bytes[sent..], with) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.stream = None;
                    return;
                }
            }
        }
    }
}

/// Maps the whole SMB the service sent.
#[cfg(unix)]
fn map_received(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    let st = rustix::fs::fstat(&fd).ok()?;
    // SAFETY: this is the producer's only mapping of the buffer; the
    // arbiter built on it claims it.
    let shm = unsafe { crate::shm::MappedShm::from_fd(fd, st.st_size as usize, false) }.ok()?;
    Some(Arc::new(shm))
}

/// Maps the SMB the service sent (unreachable: no fd can come here).
#[cfg(not(unix))]
fn map_received(fd: OwnedFd) -> Option<Arc<dyn SharedMemoryRegion>> {
    match fd {}
}

/// The timer thread: the endpoint's deadlines (connection attempts,
/// startup reservations expiring), the arbiter's batches of commits and
/// the outbox, until the client closes.
pub(super) fn timer_loop(shared: &Shared) {
    // After sending a batch, the next wait gathers commits for a window
    // (as long as batches keep coming), so fast writers wake no thread per
    // chunk.
    let mut gathering = false;
    loop {
        let deadline = lock(&shared.core).endpoint.poll_timeout();
        let mut wait = deadline.map(|d| Duration::from_nanos(d.saturating_sub(now())));
        if gathering {
            wait = Some(wait.map_or(BATCH_WINDOW, |w| w.min(BATCH_WINDOW)));
        }
        let wake = shared.outbox.wait(wait, gathering);
        if wake.closing {
            return;
        }
        // Gathering goes on while batches come, through wake-ups for other
        // reasons (the commit just sent queues a message), and ends with a
        // window in which none came.
        gathering = wake.commit_requested || (gathering && wake.woken);
        if wake.commit_requested {
            if let Some(a) = shared.arbiter() {
                a.flush_pending_commit_data_requests(None);
            }
        }
        {
            let mut core = lock(&shared.core);
            let t = now();
            if core.endpoint.poll_timeout().is_some_and(|d| d <= t) {
                core.endpoint.handle_timeout(t);
            }
        }
        shared.pump();
    }
}

/// The reader thread: serves each connection the timer thread opens,
/// until the client closes.
pub(super) fn read_loop(shared: &Shared) {
    loop {
        let stream = {
            let mut core = lock(&shared.core);
            loop {
                if core.closing {
                    return;
                }
                if let Some(s) = core.new_read.take() {
                    break s;
                }
                core = shared.changed.wait(core).unwrap_or_else(|e| e.into_inner());
            }
        };
        serve(shared, &stream);
        {
            let mut core = lock(&shared.core);
            core.stream = None;
            if let Some(s) = core.shutdown.take() {
                let _ = s.shutdown();
            }
            core.endpoint.handle_disconnected(now());
        }
        shared.outbox.wake();
        shared.pump();
    }
}

/// Feeds one connection's bytes and descriptors to the endpoint until it
/// ends (or sends a frame that cannot be read).
fn serve(shared: &Shared, stream: &Stream) {
    let mut buf = vec![0u8; 128 * 1024];
    let mut fds: Vec<OwnedFd> = Vec::new();
    loop {
        let n = match stream.recv(&mut buf, &mut fds) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let handled = {
            let mut core = lock(&shared.core);
            let received = fds.len();
            core.fds.extend(fds.drain(..));
            core.endpoint.handle_bytes(now(), &buf[..n], received)
        };
        // A flush request may carry a deadline.
        shared.outbox.wake();
        shared.pump();
        if handled.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ProducerOptions, endpoint_options};
    use super::*;

    /// The order on the wire is the order of the calls: a commit a writer
    /// queued (say a data source's last one, as it stops) reaches the
    /// endpoint before the call that follows it (its
    /// NotifyDataSourceStopped), whichever thread drains the outbox.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri has no CLOCK_BOOTTIME, which the client's clock reads"
    )]
    fn what_the_writers_queued_goes_out_before_the_next_endpoint_call() {
        let opts = ProducerOptions::default();
        let startup = ClientStartup::default();
        let eopts = endpoint_options(&opts, false, &startup);
        let address = Endpoint::Path("/nonexistent/zerotrace-producer.sock".into());
        let shared = Shared::new(&address, &opts, eopts, startup);
        let generation = shared.outbox.generation();
        shared
            .outbox
            .push(generation, Outgoing::Unregister { writer_id: 1 });
        let still_queued = shared.locked(|_| shared.outbox.drain().len());
        assert_eq!(still_queued, 0, "the queued item went out after the call");
    }
}
