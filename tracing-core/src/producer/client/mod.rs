//! The producer client: connects to a tracing service (ours or Perfetto's
//! `traced`), registers data sources, maps the shared memory buffer the
//! service sends with `setup_tracing`, and serves the service's commands on
//! a reader thread. Writers made with [`ProducerClient::create_trace_writer`]
//! write into that buffer through the [`SharedMemoryArbiter`]; its commits
//! go out over the socket.
//!
//! With [`ProducerOptions::startup_tracing`] the producer makes its own
//! buffer up front and can write before it is connected
//! ([`ProducerClient::start`], [`ProducerClient::create_startup_trace_writer`]);
//! see [`startup`] for the protocol.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use protozero::HeapWriter;
use zerotrace_protos::protos::{
    DataSourceDescriptor as DescriptorWriter, InitializeConnectionRequest,
    InitializeConnectionResponseDecoder,
};

use crate::ipc::client::{ClientConnection, ClientEvent};
use crate::ipc::fd::OwnedFd;
use crate::ipc::socket::{Endpoint, Stream, connect};
use crate::producer::{
    BufferExhaustedPolicy, FlushCallback, ProducerError, SharedMemoryArbiter, TraceWriter,
};
use crate::shm::ShmError;

mod commands;
mod sink;
pub mod startup;

use commands::command;
pub use startup::StartupTracingOptions;

/// A data source as the producer registers it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataSourceSpec {
    /// Its name.
    pub name: String,
    /// The service waits for our stop notification.
    pub will_notify_on_stop: bool,
    /// The service waits for our start notification.
    pub will_notify_on_start: bool,
    /// It re-emits incremental state when asked.
    pub handles_incremental_state_clear: bool,
    /// It does not want flush requests.
    pub no_flush: bool,
    /// Further DataSourceDescriptor fields, encoded (e.g. a
    /// `track_event_descriptor` listing categories).
    pub extra_descriptor: Vec<u8>,
}

/// One instance of a data source the service set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The service's id for it.
    pub id: u64,
    /// The data source's name.
    pub name: String,
    /// The buffer its writers write into.
    pub target_buffer: u16,
    /// The DataSourceConfig the service sent.
    pub config: Vec<u8>,
}

/// What a data source is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataSourceEvent {
    /// Set up (not yet started).
    Setup(Instance),
    /// Start writing.
    Start(Instance),
    /// Stop writing (flush your writers first).
    Stop(Instance),
    /// Flush your writers.
    Flush(Instance),
    /// Forget incremental state (interning) and emit it again.
    ClearIncrementalState(Instance),
}

/// Callback of a data source.
pub type DataSourceCallback = Box<dyn Fn(&DataSourceEvent) + Send + Sync>;

/// Settings of a producer.
#[derive(Debug, Clone)]
pub struct ProducerOptions {
    /// The producer's name.
    pub name: String,
    /// SMB size hint in bytes (0: the service's default).
    pub smb_size_hint: u32,
    /// SMB page size hint in bytes (0: the service's default).
    pub page_size_hint: u32,
    /// How long to keep trying to connect.
    pub connect_timeout: Duration,
    /// What writers do when the SMB is full, unless a data source's config
    /// names a policy. The default, STALL_THEN_DROP, neither hangs a
    /// writer forever nor aborts the process; a service that stays behind
    /// costs packets, each loss flagged in the trace.
    pub buffer_exhausted_policy: BufferExhaustedPolicy,
    /// Make a buffer of our own at once, so that startup writers can write
    /// before the service is reached (startup tracing); `None`: the
    /// service's buffer only.
    pub startup_tracing: Option<StartupTracingOptions>,
}

impl Default for ProducerOptions {
    fn default() -> ProducerOptions {
        ProducerOptions {
            name: std::env::args()
                .next()
                .unwrap_or_else(|| "zerotrace".into()),
            smb_size_hint: 0,
            page_size_hint: 0,
            connect_timeout: Duration::from_secs(10),
            buffer_exhausted_policy: BufferExhaustedPolicy::StallThenDrop,
            startup_tracing: None,
        }
    }
}

/// Errors of the producer client.
#[derive(Debug, thiserror::Error)]
pub enum ProducerClientError {
    /// Socket trouble.
    #[error("producer connection: {0}")]
    Io(#[from] io::Error),
    /// The service refused something.
    #[error("the service refused {0}")]
    Refused(&'static str),
    /// No SMB yet (no session has set up a data source of ours).
    #[error("no shared memory buffer yet")]
    NoSmb,
    /// The arbiter refused.
    #[error(transparent)]
    Arbiter(#[from] ProducerError),
    /// Waited too long.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// The startup buffer could not be created.
    #[error("startup tracing buffer: {0}")]
    Shm(#[from] ShmError),
    /// Not available here (or not enabled in the options).
    #[error("{0} is not available")]
    Unsupported(&'static str),
}

struct Wire {
    /// `None` before the first connection (frames are then discarded:
    /// what matters is sent again on connecting).
    stream: Option<Stream>,
    conn: ClientConnection,
    /// An fd to attach to the next frame sent (the startup buffer, sent
    /// with InitializeConnection).
    attach: Option<OwnedFd>,
}

impl Wire {
    /// A wire with no connection yet.
    fn disconnected() -> Wire {
        Wire {
            stream: None,
            conn: ClientConnection::new("ProducerPort"),
            attach: None,
        }
    }

    fn send(&mut self) -> io::Result<()> {
        let frames = self.conn.take_transmit();
        let Some(stream) = self.stream.as_ref() else {
            return Ok(());
        };
        for frame in frames {
            let fd = if frame.is_empty() {
                None
            } else {
                self.attach.take()
            };
            let mut sent = 0;
            while sent < frame.len() {
                #[cfg(unix)]
                let with = fd
                    .as_ref()
                    .filter(|_| sent == 0)
                    .map(std::os::fd::AsFd::as_fd);
                #[cfg(not(unix))]
                let with = fd.as_ref().and(None);
                match stream.send(&frame[sent..], with) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    fn invoke(&mut self, method: &str, args: Vec<u8>, drop_reply: bool) -> io::Result<u64> {
        let id = self.conn.invoke(method, args, drop_reply);
        self.send()?;
        Ok(id)
    }
}

struct SourceEntry {
    spec: DataSourceSpec,
    callback: DataSourceCallback,
}

#[derive(Default)]
struct State {
    arbiter: Option<Arc<SharedMemoryArbiter>>,
    page_size: usize,
    instances: HashMap<u64, Instance>,
    started: Vec<Instance>,
    connected: bool,
    /// The service adopted our startup buffer: `arbiter` is ours.
    using_provided_smb: bool,
    /// The service cannot share memory with us (TCP): chunks travel inline.
    emulation: bool,
    smb_size: usize,
}

struct Inner {
    wire: Mutex<Wire>,
    sources: Mutex<HashMap<String, SourceEntry>>,
    callbacks: Mutex<HashMap<u64, FlushCallback>>,
    state: Mutex<State>,
    changed: Condvar,
    /// The GetAsyncCommand request of the current connection.
    async_request: AtomicU64,
    policy: BufferExhaustedPolicy,
    endpoint: Endpoint,
    opts: ProducerOptions,
    /// The client is being dropped: no more reconnects.
    closing: AtomicBool,
    /// A clone of the current connection's socket, to shut it down.
    read_stream: Mutex<Option<Stream>>,
    /// Connections made after the first.
    reconnects: AtomicU64,
    /// Which connection is current (bumped on each new one): sinks of
    /// older ones are stale (see `sink`).
    connection: AtomicU64,
    /// A batch of commits waits for the committer thread.
    commit_requested: Mutex<bool>,
    commit_wanted: Condvar,
    /// Startup tracing: our own buffer and the open reservations.
    startup: Mutex<startup::ClientStartup>,
}

impl Inner {
    fn new(
        endpoint: &Endpoint,
        opts: ProducerOptions,
        wire: Wire,
        startup: startup::ClientStartup,
        async_request: u64,
    ) -> Arc<Inner> {
        Arc::new(Inner {
            wire: Mutex::new(wire),
            sources: Mutex::new(HashMap::new()),
            callbacks: Mutex::new(HashMap::new()),
            state: Mutex::new(State {
                smb_size: opts.smb_size_hint as usize,
                ..State::default()
            }),
            changed: Condvar::new(),
            async_request: AtomicU64::new(async_request),
            policy: opts.buffer_exhausted_policy,
            endpoint: endpoint.clone(),
            opts,
            closing: AtomicBool::new(false),
            read_stream: Mutex::new(None),
            reconnects: AtomicU64::new(0),
            connection: AtomicU64::new(0),
            commit_requested: Mutex::new(false),
            commit_wanted: Condvar::new(),
            startup: Mutex::new(startup),
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn encode(f: impl FnOnce(protozero::Message<'_>)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(w.root());
    w.finish().unwrap_or_default()
}

/// A connected producer.
pub struct ProducerClient {
    inner: Arc<Inner>,
    reader: Option<JoinHandle<()>>,
    committer: Option<JoinHandle<()>>,
}

/// Our startup buffer offered with InitializeConnection: its fd, size and
/// page size.
type Offer = (OwnedFd, u32, u32);

/// Connects, binds ProducerPort, and sends InitializeConnection and
/// GetAsyncCommand without waiting (as Perfetto's clients pipeline them);
/// with an `offer`, InitializeConnection carries our startup buffer.
/// Returns the write side, a read clone and the two request ids.
fn open(
    endpoint: &Endpoint,
    opts: &ProducerOptions,
    offer: Option<Offer>,
) -> io::Result<(Wire, Stream, u64, u64)> {
    let stream = connect(endpoint)?;
    stream.set_nonblocking(false)?;
    let read = stream.try_clone()?;
    let mut conn = ClientConnection::new("ProducerPort");
    let (page_hint, size_hint) = match &offer {
        Some((_, size, page)) => (*page, *size),
        None => (opts.page_size_hint, opts.smb_size_hint),
    };
    let init = encode(|m| {
        let mut r = InitializeConnectionRequest::from_message(m);
        r.set_shared_memory_page_size_hint_bytes(page_hint);
        r.set_shared_memory_size_hint_bytes(size_hint);
        r.set_producer_name(&opts.name);
        r.set_smb_scraping_mode_raw(1);
        if offer.is_some() {
            r.set_producer_provided_shmem(true);
        }
        r.set_sdk_version(concat!("zerotrace ", env!("CARGO_PKG_VERSION")));
    });
    let init_id = conn.invoke("InitializeConnection", init, false);
    let async_request = conn.invoke("GetAsyncCommand", Vec::new(), false);
    let mut wire = Wire {
        stream: Some(stream),
        conn,
        attach: None,
    };
    // Only the bind request goes now; InitializeConnection waits for the
    // bind reply, and the fd goes with it.
    wire.send()?;
    wire.attach = offer.map(|(fd, _, _)| fd);
    Ok((wire, read, init_id, async_request))
}

/// The RegisterDataSource arguments for `spec`.
fn register_args(spec: &DataSourceSpec) -> Vec<u8> {
    let desc = encode(|m| {
        let mut d = DescriptorWriter::from_message(m);
        d.set_name(&spec.name);
        d.set_will_notify_on_stop(spec.will_notify_on_stop);
        d.set_will_notify_on_start(spec.will_notify_on_start);
        d.set_handles_incremental_state_clear(spec.handles_incremental_state_clear);
        d.set_no_flush(spec.no_flush);
        d.message().append_raw_bytes(&spec.extra_descriptor);
    });
    encode(|mut m| m.append_bytes(1, &desc))
}

impl std::fmt::Debug for ProducerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerClient").finish_non_exhaustive()
    }
}

impl ProducerClient {
    /// Connects to the service at `endpoint` (retrying with a growing
    /// back-off while it is absent, up to the options' timeout), binds
    /// ProducerPort, initializes and opens the command stream, pipelined as
    /// Perfetto's clients do.
    pub fn connect(
        endpoint: &Endpoint,
        opts: ProducerOptions,
    ) -> Result<ProducerClient, ProducerClientError> {
        let startup = Self::make_startup(&opts)?;
        let deadline = Instant::now() + opts.connect_timeout;
        let mut backoff = Duration::from_millis(20);
        let offer_of = |s: &startup::ClientStartup| s.offer();
        let (wire, read, init_id, async_request) = loop {
            match open(endpoint, &opts, offer_of(&startup)) {
                Ok(c) => break c,
                Err(e) if Instant::now() + backoff > deadline => return Err(e.into()),
                Err(_) => {
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        };
        let read_stream = read.try_clone()?;
        let inner = Inner::new(endpoint, opts, wire, startup, async_request);
        *lock(&inner.read_stream) = Some(read_stream);
        let client = Self::spawn(inner, Some((read, init_id)))?;
        client
            .wait(Duration::from_secs(10), |s| s.connected)
            .map_err(|_| ProducerClientError::Timeout("InitializeConnection"))?;
        Ok(client)
    }

    /// Returns at once and connects in the background: the client keeps
    /// trying (with a growing back-off, until it is dropped), registers its
    /// data sources once connected, and reconnects after losing the
    /// service. With [`ProducerOptions::startup_tracing`], startup writers
    /// ([`Self::create_startup_trace_writer`]) write meanwhile.
    pub fn start(
        endpoint: &Endpoint,
        opts: ProducerOptions,
    ) -> Result<ProducerClient, ProducerClientError> {
        let startup = Self::make_startup(&opts)?;
        let inner = Inner::new(endpoint, opts, Wire::disconnected(), startup, 0);
        Self::spawn(inner, None)
    }

    fn make_startup(opts: &ProducerOptions) -> Result<startup::ClientStartup, ProducerClientError> {
        match &opts.startup_tracing {
            Some(o) => startup::ClientStartup::new(o),
            None => Ok(startup::ClientStartup::default()),
        }
    }

    /// Starts the committer and reader threads (the reader serves
    /// `connected`, else connects first).
    fn spawn(
        inner: Arc<Inner>,
        connected: Option<(Stream, u64)>,
    ) -> Result<ProducerClient, ProducerClientError> {
        let committer_inner = inner.clone();
        let committer = std::thread::Builder::new()
            .name("zerotrace-commit".into())
            .spawn(move || commit_loop(&committer_inner))?;
        let reader_inner = inner.clone();
        let reader = std::thread::Builder::new()
            .name("zerotrace-producer".into())
            .spawn(move || read_loop(reader_inner, connected))?;
        Ok(ProducerClient {
            inner,
            reader: Some(reader),
            committer: Some(committer),
        })
    }

    /// How many times the client reconnected after losing the service.
    pub fn reconnects(&self) -> u64 {
        self.inner.reconnects.load(Ordering::Relaxed)
    }

    /// Waits until the client is connected (again).
    pub fn wait_connected(&self, timeout: Duration) -> Result<(), ProducerClientError> {
        self.wait(timeout, |s| s.connected)
            .map_err(|_| ProducerClientError::Timeout("a connection"))
    }

    fn wait(&self, timeout: Duration, ready: impl Fn(&State) -> bool) -> Result<(), ()> {
        let deadline = Instant::now() + timeout;
        let mut st = lock(&self.inner.state);
        while !ready(&st) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(());
            }
            st = self
                .inner
                .changed
                .wait_timeout(st, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        Ok(())
    }

    /// Registers a data source; `callback` hears its setup, start, stop,
    /// flush and clear requests (on the producer's reader thread).
    pub fn register_data_source(
        &self,
        spec: DataSourceSpec,
        callback: impl Fn(&DataSourceEvent) + Send + Sync + 'static,
    ) -> Result<(), ProducerClientError> {
        let args = register_args(&spec);
        // Held across the call, so that a connection made meanwhile
        // registers it exactly once (it registers every source it finds).
        let mut sources = lock(&self.inner.sources);
        sources.insert(
            spec.name.clone(),
            SourceEntry {
                spec,
                callback: Box::new(callback),
            },
        );
        lock(&self.inner.wire).invoke("RegisterDataSource", args, true)?;
        drop(sources);
        Ok(())
    }

    /// A writer into `target_buffer` (from a started instance).
    pub fn create_trace_writer(
        &self,
        target_buffer: u16,
    ) -> Result<TraceWriter, ProducerClientError> {
        let arbiter = lock(&self.inner.state)
            .arbiter
            .clone()
            .ok_or(ProducerClientError::NoSmb)?;
        Ok(arbiter.create_trace_writer(target_buffer, self.inner.policy)?)
    }

    /// A writer for data source `instance`: its target buffer, and the
    /// `buffer_exhausted_policy` its config names (else the producer's
    /// default from [`ProducerOptions`]).
    pub fn create_trace_writer_for(
        &self,
        instance: &Instance,
    ) -> Result<TraceWriter, ProducerClientError> {
        let policy = self.policy_for(&instance.config);
        self.create_trace_writer_with_policy(instance.target_buffer, policy)
    }

    /// The policy an encoded DataSourceConfig asks for, else the default.
    pub fn policy_for(&self, data_source_config: &[u8]) -> BufferExhaustedPolicy {
        BufferExhaustedPolicy::from_data_source_config(data_source_config, self.inner.policy)
    }

    /// A writer into `target_buffer` with `policy`.
    pub fn create_trace_writer_with_policy(
        &self,
        target_buffer: u16,
        policy: BufferExhaustedPolicy,
    ) -> Result<TraceWriter, ProducerClientError> {
        let arbiter = lock(&self.inner.state)
            .arbiter
            .clone()
            .ok_or(ProducerClientError::NoSmb)?;
        Ok(arbiter.create_trace_writer(target_buffer, policy)?)
    }

    /// Waits until an instance of `name` has been started.
    pub fn wait_for_start(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Instance, ProducerClientError> {
        self.wait(timeout, |s| s.started.iter().any(|i| i.name == name))
            .map_err(|_| ProducerClientError::Timeout("start_data_source"))?;
        let st = lock(&self.inner.state);
        st.started
            .iter()
            .rev()
            .find(|i| i.name == name)
            .cloned()
            .ok_or(ProducerClientError::Timeout("start_data_source"))
    }

    /// Sends everything committed so far; `callback` runs when the service
    /// has processed it.
    pub fn flush(&self, callback: Option<FlushCallback>) {
        let arbiter = lock(&self.inner.state).arbiter.clone();
        if let Some(a) = arbiter {
            a.flush_pending_commit_data_requests(callback);
        } else if let Some(cb) = callback {
            cb();
        }
    }

    /// Flushes and waits for the service's ack.
    pub fn flush_blocking(&self, timeout: Duration) -> Result<(), ProducerClientError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.flush(Some(Box::new(move || {
            let _ = tx.send(());
        })));
        rx.recv_timeout(timeout)
            .map_err(|_| ProducerClientError::Timeout("CommitData ack"))
    }

    /// Activates triggers by name.
    pub fn activate_triggers(&self, names: &[&str]) -> Result<(), ProducerClientError> {
        let args = encode(|mut m| {
            for n in names {
                m.append_string(1, n);
            }
        });
        lock(&self.inner.wire).invoke("ActivateTriggers", args, true)?;
        Ok(())
    }

    /// Whether the connection to the service is up.
    pub fn is_connected(&self) -> bool {
        lock(&self.inner.state).connected
    }
}

impl Drop for ProducerClient {
    fn drop(&mut self) {
        self.inner.closing.store(true, Ordering::Relaxed);
        if let Some(s) = lock(&self.inner.read_stream).take() {
            let _ = s.shutdown();
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        *lock(&self.inner.commit_requested) = true;
        self.inner.commit_wanted.notify_one();
        if let Some(c) = self.committer.take() {
            let _ = c.join();
        }
    }
}

/// Sends the arbiter's pending batch whenever one was started, and aborts
/// the startup reservations whose time is up.
fn commit_loop(inner: &Inner) {
    loop {
        {
            let mut requested = lock(&inner.commit_requested);
            while !*requested {
                if inner.closing.load(Ordering::Relaxed) {
                    return;
                }
                let next = startup::abort_expired(inner);
                requested = match next {
                    Some(deadline) => {
                        let left = deadline.saturating_duration_since(Instant::now());
                        inner
                            .commit_wanted
                            .wait_timeout(requested, left)
                            .map(|(g, _)| g)
                            .unwrap_or_else(|e| e.into_inner().0)
                    }
                    None => inner
                        .commit_wanted
                        .wait(requested)
                        .unwrap_or_else(|e| e.into_inner()),
                };
            }
            *requested = false;
        }
        if inner.closing.load(Ordering::Relaxed) {
            return;
        }
        let arbiter = lock(&inner.state).arbiter.clone();
        if let Some(a) = arbiter {
            a.flush_pending_commit_data_requests(None);
        }
    }
}

/// Opens a new connection and makes it the client's: registers every data
/// source on it. `None` if the service cannot be reached (or the client is
/// closing).
fn reconnect(inner: &Inner) -> Option<(Stream, u64)> {
    let offer = startup::offer(inner);
    let (wire, read, init, async_request) = open(&inner.endpoint, &inner.opts, offer).ok()?;
    let shutdown_clone = read.try_clone().ok()?;
    inner.async_request.store(async_request, Ordering::Relaxed);
    {
        // Under the sources lock: a source registered meanwhile goes out
        // exactly once (here, or by its own call on this wire).
        let sources = lock(&inner.sources);
        let mut w = lock(&inner.wire);
        *w = wire;
        inner.connection.fetch_add(1, Ordering::AcqRel);
        for s in sources.values() {
            let _ = w.invoke("RegisterDataSource", register_args(&s.spec), true);
        }
    }
    *lock(&inner.read_stream) = Some(shutdown_clone);
    if inner.closing.load(Ordering::Relaxed) {
        // Dropped meanwhile: the drop may have missed this stream.
        let _ = read.shutdown();
        return None;
    }
    Some((read, init))
}

/// The reader thread: replies and the service's commands; when there is no
/// connection (yet, or any more) it connects with a growing back-off and
/// registers the data sources again (until the client is dropped).
fn read_loop(inner: Arc<Inner>, mut connection: Option<(Stream, u64)>) {
    let mut was_connected = connection.is_some();
    loop {
        let mut backoff = Duration::from_millis(50);
        if let Some((stream, init_id)) = connection.take() {
            serve(&inner, &stream, init_id);
            finish(&inner);
            // Give a restarting service a moment before the first retry.
            std::thread::sleep(backoff);
        }
        loop {
            if inner.closing.load(Ordering::Relaxed) {
                return;
            }
            if let Some(c) = reconnect(&inner) {
                if was_connected {
                    inner.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                was_connected = true;
                connection = Some(c);
                break;
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }
}

/// Serves one connection until it ends.
fn serve(inner: &Arc<Inner>, stream: &Stream, init_id: u64) {
    let mut buf = vec![0u8; 128 * 1024];
    let mut fds: Vec<OwnedFd> = Vec::new();
    loop {
        let n = match stream.recv(&mut buf, &mut fds) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let events = lock(&inner.wire).conn.receive(&buf[..n]);
        // Calls held for the bind reply go out now.
        if lock(&inner.wire).send().is_err() {
            return;
        }
        let async_request = inner.async_request.load(Ordering::Relaxed);
        for ev in events {
            match ev {
                ClientEvent::Reply {
                    request_id,
                    data,
                    success,
                    ..
                } if request_id == init_id => {
                    let r = InitializeConnectionResponseDecoder::new(&data);
                    let emulation = r.use_shmem_emulation().unwrap_or(false);
                    let adopted = r.using_shmem_provided_by_producer().unwrap_or(false);
                    lock(&inner.state).emulation = emulation;
                    let why_not = if !success {
                        "InitializeConnection failed"
                    } else if emulation {
                        "the transport cannot share memory"
                    } else {
                        "it refused its size, page size or seals"
                    };
                    startup::on_initialized(inner, success && adopted && !emulation, why_not);
                    let mut st = lock(&inner.state);
                    st.connected = success;
                    inner.changed.notify_all();
                }
                ClientEvent::Reply {
                    request_id, data, ..
                } if request_id == async_request => {
                    command(inner, &data, &mut fds);
                }
                ClientEvent::Reply {
                    request_id,
                    has_more: false,
                    ..
                } => {
                    if let Some(cb) = lock(&inner.callbacks).remove(&request_id) {
                        cb();
                    }
                }
                ClientEvent::Fatal(_) => return,
                _ => {}
            }
        }
    }
}

/// The connection is gone: its SMB, instances and pending acks with it.
fn finish(inner: &Inner) {
    let mut st = lock(&inner.state);
    st.connected = false;
    st.arbiter = None;
    st.using_provided_smb = false;
    st.instances.clear();
    st.started.clear();
    st.emulation = false;
    inner.changed.notify_all();
    drop(st);
    for (_, cb) in lock(&inner.callbacks).drain() {
        cb();
    }
}
