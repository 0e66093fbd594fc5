//! The producer's protocol as a sans-IO state machine, the twin of the
//! service core: the driver reports the connection coming and going, the
//! bytes it read (and how many file descriptors came with them), the
//! passing of time and the application's calls; the endpoint answers with
//! frames to write ([`ProducerEndpoint::poll_transmit`]), events for the
//! application and the driver ([`ProducerEndpoint::poll_event`]) and its
//! next deadline ([`ProducerEndpoint::poll_timeout`]: the reconnect
//! back-off, startup reservations expiring, flush replies overdue).
//!
//! No sockets, threads, clocks or shared memory here: `now` is nanoseconds
//! of the driver's clock (BOOTTIME, as the service core's), and the shared
//! memory buffer is the driver's (it hears [`SmbSetup`] and maps). Startup
//! tracing is one state machine of the endpoint (see [`startup`]); the
//! arbiter keeps only the placeholder-buffer mechanics.
//!
//! `ProducerClient` is the threaded driver over it.

mod backoff;
mod commands;
mod data_source;
mod messages;
pub mod startup;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use zerotrace_protos::protos::InitializeConnectionResponseDecoder;

use crate::ipc::FrameError;
use crate::ipc::client::{ClientConnection, ClientEvent};
use crate::protocol::CommitDataRequest;

pub use backoff::Backoff;
use backoff::{AfterFailure, Reconnect, ns};
pub use data_source::{DataSourceEvent, DataSourceSpec, Instance};
use startup::StartupTracing;
pub use startup::{StartupError, StartupOffer, StartupReservation, StartupStep};

/// Settings of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointOptions {
    /// The producer's name.
    pub name: String,
    /// SMB size hint in bytes (0: the service's default).
    pub smb_size_hint: u32,
    /// SMB page size hint in bytes (0: the service's default).
    pub page_size_hint: u32,
    /// How the first connection is retried.
    pub first_connect: Backoff,
    /// Give up the first connection when the next attempt would come after
    /// this long (`None`: never).
    pub give_up_after: Option<Duration>,
    /// How connections are retried after losing the service.
    pub reconnect: Backoff,
    /// Startup tracing: the buffer to offer (`None`: off).
    pub startup: Option<StartupOffer>,
    /// Reply to a service flush request on our own when the application
    /// has not answered it within this long (`None`: wait for it).
    pub flush_reply_timeout: Option<Duration>,
}

impl Default for EndpointOptions {
    fn default() -> EndpointOptions {
        EndpointOptions {
            name: "zerotrace".into(),
            smb_size_hint: 0,
            page_size_hint: 0,
            first_connect: Backoff::RECONNECT,
            give_up_after: None,
            reconnect: Backoff::RECONNECT,
            startup: None,
            flush_reply_timeout: None,
        }
    }
}

/// How the driver gets the shared memory buffer for this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmbSetup {
    /// Take the first `received` file descriptors of those received since
    /// the last setup; map the last of them as the SMB, close the others.
    MapReceived {
        /// The SMB's page size.
        page_size: usize,
        /// How many received descriptors this consumes.
        received: usize,
    },
    /// The transport cannot share memory: make a local buffer of `size`
    /// bytes; its chunks travel inline in CommitData.
    Emulated {
        /// The buffer's page size.
        page_size: usize,
        /// Its size (a multiple of the page size).
        size: usize,
        /// How many received descriptors to close (none are used).
        received: usize,
    },
    /// The service adopted our startup buffer: bind its arbiter to this
    /// connection; it is the SMB.
    AdoptStartupBuffer,
    /// Close the first `received` descriptors (nothing to map).
    CloseReceived {
        /// How many.
        received: usize,
    },
}

/// What the endpoint tells its driver and application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// Open a connection to the service now, then report
    /// [`ProducerEndpoint::handle_connected`] or
    /// [`ProducerEndpoint::handle_connect_failed`].
    Connect,
    /// The first connection did not come within `give_up_after`.
    GaveUp,
    /// The service accepted `InitializeConnection` (success) or not.
    Initialized {
        /// Whether it succeeded.
        success: bool,
    },
    /// The connection is gone: drop its SMB and writers' arbiter.
    Disconnected,
    /// The SMB of this connection.
    Smb(SmbSetup),
    /// Tell the application's data source. After a `Start`, the driver
    /// calls [`ProducerEndpoint::data_source_started`]; after a `Stop`, it
    /// flushes its writers and calls [`ProducerEndpoint::data_source_stopped`].
    DataSource(DataSourceEvent),
    /// The service asks for a flush of these instances: tell each, flush
    /// the writers, then call [`ProducerEndpoint::flush_done`].
    Flush {
        /// The service's flush request.
        request_id: u64,
        /// The instances named (those the endpoint knows).
        instances: Vec<Instance>,
    },
    /// The service processed a commit (or never will: the connection is
    /// gone): run the callback the driver registered under this id.
    CommitDone {
        /// The driver's callback id.
        callback: u64,
    },
    /// Do this to a startup reservation in the arbiter.
    Startup(StartupStep),
    /// The service did not adopt our startup buffer (its data is dropped).
    StartupRefused {
        /// Why, for the log.
        reason: &'static str,
    },
}

/// A frame to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The encoded frame.
    pub bytes: Vec<u8>,
    /// Attach the startup buffer's file descriptor to it.
    pub attach_startup_fd: bool,
}

/// Errors of the endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The service sent a frame that cannot be read: close the connection.
    #[error("service frame: {0}")]
    Frame(#[from] FrameError),
    /// Bytes or a call came with no connection.
    #[error("no connection to the service")]
    NotConnected,
    /// The driver reported a connection the endpoint did not ask for.
    #[error("no connection attempt is under way")]
    NotConnecting,
    /// A startup reservation cannot be had.
    #[error(transparent)]
    Startup(#[from] StartupError),
}

/// Counters of an endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Connections made after the first.
    pub reconnects: u64,
    /// Frames or commands the endpoint could not use.
    pub protocol_errors: u64,
    /// Flush requests answered by the timeout, not the application.
    pub flush_replies_timed_out: u64,
}

/// One connection's protocol state.
#[derive(Debug)]
struct Connection {
    ipc: ClientConnection,
    init_request: u64,
    async_request: u64,
    /// The next frame after the bind carries the startup buffer's fd.
    attach_pending: bool,
    /// The service said so in its InitializeConnection reply.
    emulation: bool,
    /// The service adopted our startup buffer on this connection.
    startup_smb: bool,
    /// InitializeConnection succeeded.
    initialized: bool,
    /// File descriptors received since the last SMB setup.
    fds: usize,
    /// CommitData request ids whose ack runs a driver callback.
    acks: HashMap<u64, u64>,
}

/// The sans-IO producer endpoint.
#[derive(Debug)]
pub struct ProducerEndpoint {
    opts: EndpointOptions,
    sources: BTreeMap<String, DataSourceSpec>,
    conn: Option<Connection>,
    /// Connections made so far (each one's number: writers' sinks of older
    /// ones are stale).
    generation: u64,
    instances: HashMap<u64, Instance>,
    started: Vec<Instance>,
    /// Flush requests awaiting the application, with their deadline.
    flushes: BTreeMap<u64, Option<u64>>,
    reconnect: Reconnect,
    startup: StartupTracing,
    events: VecDeque<EndpointEvent>,
    transmit: VecDeque<Transmit>,
    stats: EndpointStats,
}

impl ProducerEndpoint {
    /// An endpoint that asks for its first connection at once
    /// ([`EndpointEvent::Connect`]); `now` starts the give-up clock.
    pub fn new(now: u64, opts: EndpointOptions) -> ProducerEndpoint {
        let give_up_at = opts.give_up_after.map(|d| now.saturating_add(ns(d)));
        let reconnect = Reconnect::new(opts.first_connect, give_up_at);
        let startup = StartupTracing::new(opts.startup);
        ProducerEndpoint {
            opts,
            sources: BTreeMap::new(),
            conn: None,
            generation: 0,
            instances: HashMap::new(),
            started: Vec::new(),
            flushes: BTreeMap::new(),
            reconnect,
            startup,
            events: VecDeque::from([EndpointEvent::Connect]),
            transmit: VecDeque::new(),
            stats: EndpointStats::default(),
        }
    }

    // ---- out ----

    /// The next frame to write.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.take_frames();
        self.transmit.pop_front()
    }

    /// The next event for the driver or the application.
    pub fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.events.pop_front()
    }

    /// The earliest time at which [`Self::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<u64> {
        let flush = self.flushes.values().filter_map(|d| *d).min();
        [
            self.reconnect
                .next_attempt
                .filter(|_| !self.reconnect.stopped),
            self.startup.next_deadline(),
            flush,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    // ---- the connection ----

    /// A connection attempt failed at `now`: the next is scheduled (a
    /// deadline), or the endpoint gives up ([`EndpointEvent::GaveUp`]).
    pub fn handle_connect_failed(&mut self, now: u64) {
        if !self.reconnect.connecting {
            return;
        }
        if self.reconnect.failed(now) == AfterFailure::GiveUp {
            self.events.push_back(EndpointEvent::GaveUp);
        }
    }

    /// The driver connected: binds ProducerPort and pipelines
    /// InitializeConnection (offering the startup buffer until the service
    /// answered an offer), GetAsyncCommand and every data source.
    pub fn handle_connected(&mut self, _now: u64) -> Result<(), EndpointError> {
        if !self.reconnect.connecting || self.conn.is_some() {
            return Err(EndpointError::NotConnecting);
        }
        if self.generation > 0 {
            self.stats.reconnects += 1;
        }
        self.generation += 1;
        self.reconnect.succeeded(self.opts.reconnect);
        let mut ipc = ClientConnection::new("ProducerPort");
        // The bind goes alone; the fd rides on the first frame after it.
        for bytes in ipc.take_transmit() {
            self.transmit.push_back(Transmit {
                bytes,
                attach_startup_fd: false,
            });
        }
        let offer = self.startup.offer();
        let init = messages::initialize_connection(
            &self.opts.name,
            self.opts.smb_size_hint,
            self.opts.page_size_hint,
            offer,
        );
        let init_request = ipc.invoke("InitializeConnection", init, false);
        let async_request = ipc.invoke("GetAsyncCommand", Vec::new(), false);
        for spec in self.sources.values() {
            ipc.invoke(
                "RegisterDataSource",
                messages::register_data_source(spec),
                true,
            );
        }
        self.conn = Some(Connection {
            ipc,
            init_request,
            async_request,
            attach_pending: offer.is_some(),
            emulation: false,
            startup_smb: false,
            initialized: false,
            fds: 0,
            acks: HashMap::new(),
        });
        Ok(())
    }

    /// The connection ended at `now` (read end, error, or closed by the
    /// driver): its state goes, pending commit callbacks are released, and
    /// a reconnect is scheduled (unless closed).
    pub fn handle_disconnected(&mut self, now: u64) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        self.transmit.clear();
        self.instances.clear();
        self.started.clear();
        self.flushes.clear();
        self.events.push_back(EndpointEvent::Disconnected);
        let mut acks: Vec<u64> = conn.acks.into_values().collect();
        acks.sort_unstable();
        for callback in acks {
            self.events
                .push_back(EndpointEvent::CommitDone { callback });
        }
        if !self.reconnect.stopped {
            self.reconnect.lost(now);
        }
    }

    /// Stops connecting (the driver is closing).
    pub fn close(&mut self) {
        self.reconnect.stopped = true;
        self.reconnect.next_attempt = None;
    }

    /// Bytes read from the connection, with how many file descriptors came
    /// with them (the driver keeps them, in order). An unreadable frame is
    /// an error after which the driver closes the connection.
    pub fn handle_bytes(
        &mut self,
        now: u64,
        bytes: &[u8],
        fds_received: usize,
    ) -> Result<(), EndpointError> {
        let Some(conn) = self.conn.as_mut() else {
            self.stats.protocol_errors += 1;
            return Err(EndpointError::NotConnected);
        };
        conn.fds = conn.fds.saturating_add(fds_received);
        let events = conn.ipc.receive(bytes);
        for ev in events {
            match ev {
                ClientEvent::Fatal(e) => {
                    self.stats.protocol_errors += 1;
                    return Err(EndpointError::Frame(e));
                }
                ClientEvent::Reply {
                    request_id,
                    success,
                    has_more,
                    data,
                } => self.reply(now, request_id, success, has_more, &data),
                ClientEvent::Bound { .. } | ClientEvent::UnknownMethod { .. } => {}
            }
        }
        Ok(())
    }

    /// A whole frame read from the connection (see [`Self::handle_bytes`]).
    pub fn handle_frame(
        &mut self,
        now: u64,
        frame: &[u8],
        fds_received: usize,
    ) -> Result<(), EndpointError> {
        self.handle_bytes(now, frame, fds_received)
    }

    /// The passing of time: a due connection attempt, expired startup
    /// reservations, overdue flush replies.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.conn.is_none() && self.reconnect.due(now) {
            self.events.push_back(EndpointEvent::Connect);
        }
        for step in self.startup.expire(now) {
            self.events.push_back(EndpointEvent::Startup(step));
        }
        let overdue: Vec<u64> = self
            .flushes
            .iter()
            .filter(|(_, d)| d.is_some_and(|d| d <= now))
            .map(|(&r, _)| r)
            .collect();
        for request in overdue {
            self.stats.flush_replies_timed_out += 1;
            self.flush_done(request);
        }
    }

    fn reply(&mut self, now: u64, request_id: u64, success: bool, has_more: bool, data: &[u8]) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if request_id == conn.init_request {
            let r = InitializeConnectionResponseDecoder::new(data);
            let emulation = r.use_shmem_emulation().unwrap_or(false);
            let adopted_flag = r.using_shmem_provided_by_producer().unwrap_or(false);
            let adopted = success && adopted_flag && !emulation;
            conn.emulation = emulation;
            conn.initialized = success;
            let offered = self.startup.offer().is_some();
            let steps = self.startup.answered(adopted);
            if offered && adopted {
                conn.startup_smb = true;
                self.events
                    .push_back(EndpointEvent::Smb(SmbSetup::AdoptStartupBuffer));
            } else if offered {
                let reason = if !success {
                    "InitializeConnection failed"
                } else if emulation {
                    "the transport cannot share memory"
                } else {
                    "it refused its size, page size or seals"
                };
                self.events
                    .push_back(EndpointEvent::StartupRefused { reason });
                self.events
                    .extend(steps.into_iter().map(EndpointEvent::Startup));
            }
            self.events
                .push_back(EndpointEvent::Initialized { success });
        } else if request_id == conn.async_request {
            self.command(now, data);
        } else if !has_more {
            if let Some(callback) = conn.acks.remove(&request_id) {
                self.events
                    .push_back(EndpointEvent::CommitDone { callback });
            }
        }
    }

    // ---- the application's calls ----

    /// Registers a data source (now, and on every later connection).
    pub fn register_data_source(&mut self, spec: DataSourceSpec) {
        let args = messages::register_data_source(&spec);
        self.sources.insert(spec.name.clone(), spec);
        self.invoke("RegisterDataSource", args, true);
    }

    /// Unregisters data source `name`.
    pub fn unregister_data_source(&mut self, name: &str) {
        if self.sources.remove(name).is_some() {
            self.invoke(
                "UnregisterDataSource",
                messages::unregister_data_source(name),
                true,
            );
        }
    }

    /// The application started instance `id` (after its `Start` event):
    /// it counts as started, and the service hears so if the data source
    /// notifies on start.
    pub fn data_source_started(&mut self, id: u64) {
        let Some(instance) = self.instances.get(&id).cloned() else {
            return;
        };
        let notify = self.spec_of(&instance.name).will_notify_on_start;
        self.started.push(instance);
        if notify {
            self.invoke("NotifyDataSourceStarted", messages::notification(id), true);
        }
    }

    /// The application stopped instance `id` and flushed its writers
    /// (after its `Stop` event): the service hears so if the data source
    /// notifies on stop.
    pub fn data_source_stopped(&mut self, id: u64, name: &str) {
        if self.spec_of(name).will_notify_on_stop {
            self.invoke("NotifyDataSourceStopped", messages::notification(id), true);
        }
    }

    /// The application flushed for the service's `request_id`: the reply
    /// goes out (once; a late reply after the timeout is dropped).
    pub fn flush_done(&mut self, request_id: u64) {
        if self.flushes.remove(&request_id).is_none() {
            return;
        }
        let req = CommitDataRequest {
            flush_request_id: Some(request_id),
            ..Default::default()
        };
        self.invoke("CommitData", req.encode(), true);
    }

    /// Sends a commit; with `callback`, an [`EndpointEvent::CommitDone`]
    /// names it once the service acked (at once without a connection).
    pub fn commit_data(&mut self, request: &CommitDataRequest, callback: Option<u64>) {
        let sent = self.invoke("CommitData", request.encode(), callback.is_none());
        match (sent, callback, self.conn.as_mut()) {
            (Some(id), Some(cb), Some(conn)) => {
                conn.acks.insert(id, cb);
            }
            (_, Some(callback), _) => self
                .events
                .push_back(EndpointEvent::CommitDone { callback }),
            _ => {}
        }
    }

    /// Registers a writer with the service.
    pub fn register_trace_writer(&mut self, writer_id: u16, target_buffer: u16) {
        self.invoke(
            "RegisterTraceWriter",
            messages::register_trace_writer(writer_id, target_buffer),
            true,
        );
    }

    /// Unregisters a writer.
    pub fn unregister_trace_writer(&mut self, writer_id: u16) {
        self.invoke(
            "UnregisterTraceWriter",
            messages::unregister_trace_writer(writer_id),
            true,
        );
    }

    /// Activates triggers by name.
    pub fn activate_triggers(&mut self, names: &[&str]) {
        self.invoke("ActivateTriggers", messages::activate_triggers(names), true);
    }

    // ---- startup tracing ----

    /// The startup reservation of data source `name`: an open one, or
    /// [`StartupReservation::Needed`].
    pub fn startup_reservation(&self, name: &str) -> Result<StartupReservation, EndpointError> {
        Ok(self.startup.reservation(name)?)
    }

    /// The driver reserved `reservation` for `name` at `now`; it expires
    /// after the startup timeout (a deadline).
    pub fn add_startup_reservation(&mut self, now: u64, name: &str, reservation: u16) {
        for step in self.startup.add(now, name, reservation) {
            self.events.push_back(EndpointEvent::Startup(step));
        }
    }

    /// Binding a reservation failed: the driver aborted it.
    pub fn handle_bind_failed(&mut self) {
        self.startup.bind_failed();
    }

    /// Startup reservations aborted so far.
    pub fn startup_reservations_aborted(&self) -> u64 {
        self.startup.aborted()
    }

    /// Whether the service refused the startup buffer.
    pub fn startup_refused(&self) -> bool {
        self.startup.refused()
    }

    // ---- queries ----

    /// Whether InitializeConnection succeeded on the current connection.
    pub fn is_connected(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.initialized)
    }

    /// Whether a connection (socket) is up, initialized or not.
    pub fn has_connection(&self) -> bool {
        self.conn.is_some()
    }

    /// Whether the current connection uses SMB emulation.
    pub fn emulation(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.emulation)
    }

    /// Whether our startup buffer is the SMB of the current connection.
    pub fn uses_startup_smb(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.startup_smb)
    }

    /// The number of the current (or last) connection, from 1.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The instance the service set up as `id`.
    pub fn instance(&self, id: u64) -> Option<&Instance> {
        self.instances.get(&id)
    }

    /// The last started instance of data source `name`.
    pub fn started(&self, name: &str) -> Option<&Instance> {
        self.started.iter().rev().find(|i| i.name == name)
    }

    /// The endpoint's counters.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// The registered spec of `name` (a default one if unknown).
    fn spec_of(&self, name: &str) -> DataSourceSpec {
        self.sources.get(name).cloned().unwrap_or_default()
    }

    /// Invokes `method` on the connection; the request id, if connected.
    fn invoke(&mut self, method: &str, args: Vec<u8>, drop_reply: bool) -> Option<u64> {
        let conn = self.conn.as_mut()?;
        let id = conn.ipc.invoke(method, args, drop_reply);
        self.take_frames();
        Some(id)
    }

    /// Moves the connection's encoded frames to the transmit queue.
    fn take_frames(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        for bytes in conn.ipc.take_transmit() {
            let attach = std::mem::take(&mut conn.attach_pending) && !bytes.is_empty();
            self.transmit.push_back(Transmit {
                bytes,
                attach_startup_fd: attach,
            });
        }
    }
}
