//! The producer client: connects to a tracing service (ours or Perfetto's
//! `traced`), registers data sources, maps the shared memory buffer the
//! service sends with `setup_tracing`, and serves the service's commands.
//! Writers made with [`ProducerClient::create_trace_writer`] write into
//! that buffer through the [`SharedMemoryArbiter`]; its commits go out over
//! the socket.
//!
//! The protocol is the sans-IO [`ProducerEndpoint`]; this is its driver:
//! the socket, a reader thread, a timer thread (deadlines and batches of
//! commits), the SMB mapping and the waits (see `driver`).
//!
//! With [`ProducerOptions::startup_tracing`] the producer makes its own
//! buffer up front and can write before it is connected
//! ([`ProducerClient::start`], [`ProducerClient::create_startup_trace_writer`]);
//! see [`startup`] for the protocol.
//!
//! [`ProducerEndpoint`]: crate::producer::ProducerEndpoint
//! [`SharedMemoryArbiter`]: crate::producer::SharedMemoryArbiter

use std::io;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::ipc::socket::Endpoint;
use crate::producer::endpoint::{Backoff, EndpointOptions};
use crate::producer::{BufferExhaustedPolicy, FlushCallback, ProducerError, TraceWriter};
use crate::shm::ShmError;

mod driver;
mod outbox;
mod sink;
pub mod startup;

pub use crate::producer::endpoint::{DataSourceEvent, DataSourceSpec, Instance};
use driver::{Core, Shared};
pub use startup::StartupTracingOptions;

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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The driver's clock: the endpoint's `now`.
fn now() -> u64 {
    crate::platform::boottime_ns()
}

/// A connected producer.
pub struct ProducerClient {
    shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
    timer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ProducerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerClient").finish_non_exhaustive()
    }
}

/// The endpoint's settings for `opts`; `blocking`: `connect` (retry the
/// first connection until the timeout), else `start` (retry for ever).
fn endpoint_options(
    opts: &ProducerOptions,
    blocking: bool,
    startup: &startup::ClientStartup,
) -> EndpointOptions {
    EndpointOptions {
        name: opts.name.clone(),
        smb_size_hint: opts.smb_size_hint,
        page_size_hint: opts.page_size_hint,
        first_connect: if blocking {
            Backoff::FIRST_CONNECT
        } else {
            Backoff::RECONNECT
        },
        give_up_after: blocking.then_some(opts.connect_timeout),
        reconnect: Backoff::RECONNECT,
        startup: startup.offer(),
        flush_reply_timeout: None,
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
        let client = Self::spawn(endpoint, opts, true)?;
        client
            .wait(None, |c| c.endpoint.generation() > 0 || c.gave_up)
            .map_err(|_| ProducerClientError::Timeout("a connection"))?;
        let gave_up = {
            let mut core = lock(&client.shared.core);
            (core.endpoint.generation() == 0).then(|| {
                core.connect_error
                    .take()
                    .unwrap_or_else(|| io::Error::from(io::ErrorKind::TimedOut))
            })
        };
        if let Some(e) = gave_up {
            return Err(e.into());
        }
        client
            .wait(Some(Duration::from_secs(10)), |c| c.connected)
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
        Self::spawn(endpoint, opts, false)
    }

    /// Makes the endpoint and starts the reader and timer threads (the
    /// timer thread makes the first connection attempt).
    fn spawn(
        endpoint: &Endpoint,
        opts: ProducerOptions,
        blocking: bool,
    ) -> Result<ProducerClient, ProducerClientError> {
        let startup = startup::ClientStartup::new(opts.startup_tracing.as_ref())?;
        let eopts = endpoint_options(&opts, blocking, &startup);
        let shared = Shared::new(endpoint, &opts, eopts, startup);
        let timer_shared = shared.clone();
        let timer = std::thread::Builder::new()
            .name("zerotrace-commit".into())
            .spawn(move || driver::timer_loop(&timer_shared))?;
        let reader_shared = shared.clone();
        let reader = std::thread::Builder::new()
            .name("zerotrace-producer".into())
            .spawn(move || driver::read_loop(&reader_shared));
        let mut client = ProducerClient {
            shared,
            reader: None,
            timer: Some(timer),
        };
        client.reader = Some(reader?);
        client.shared.outbox.wake();
        Ok(client)
    }

    /// How many times the client reconnected after losing the service.
    pub fn reconnects(&self) -> u64 {
        lock(&self.shared.core).endpoint.stats().reconnects
    }

    /// Waits until the client is connected (again).
    pub fn wait_connected(&self, timeout: Duration) -> Result<(), ProducerClientError> {
        self.wait(Some(timeout), |c| c.connected)
            .map_err(|_| ProducerClientError::Timeout("a connection"))
    }

    /// Waits until the client is connected after its `n`th reconnection (a
    /// test of a service restart waits for this, not for [`Self::wait_connected`],
    /// which the old connection may still satisfy before its loss is noticed).
    pub fn wait_reconnected(&self, n: u64, timeout: Duration) -> Result<(), ProducerClientError> {
        self.wait(Some(timeout), |c| {
            c.connected && c.endpoint.stats().reconnects >= n
        })
        .map_err(|_| ProducerClientError::Timeout("a reconnection"))
    }

    fn wait(&self, timeout: Option<Duration>, ready: impl Fn(&Core) -> bool) -> Result<(), ()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut core = lock(&self.shared.core);
        while !ready(&core) {
            core = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(());
                    }
                    self.shared
                        .changed
                        .wait_timeout(core, left)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0)
                }
                None => self
                    .shared
                    .changed
                    .wait(core)
                    .unwrap_or_else(|e| e.into_inner()),
            };
        }
        Ok(())
    }

    /// Registers a data source; `callback` hears its setup, start, stop,
    /// flush and clear requests (on one of the producer's threads, one at a
    /// time).
    pub fn register_data_source(
        &self,
        spec: DataSourceSpec,
        callback: impl Fn(&DataSourceEvent) + Send + Sync + 'static,
    ) -> Result<(), ProducerClientError> {
        let callback: DataSourceCallback = Box::new(callback);
        self.shared.locked(|core| {
            core.callbacks.insert(spec.name.clone(), Arc::new(callback));
            core.endpoint.register_data_source(spec);
        });
        self.shared.pump();
        Ok(())
    }

    /// A writer into `target_buffer` (from a started instance).
    pub fn create_trace_writer(
        &self,
        target_buffer: u16,
    ) -> Result<TraceWriter, ProducerClientError> {
        self.create_trace_writer_with_policy(target_buffer, self.shared.policy)
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
        BufferExhaustedPolicy::from_data_source_config(data_source_config, self.shared.policy)
    }

    /// A writer into `target_buffer` with `policy`.
    pub fn create_trace_writer_with_policy(
        &self,
        target_buffer: u16,
        policy: BufferExhaustedPolicy,
    ) -> Result<TraceWriter, ProducerClientError> {
        let arbiter = lock(&self.shared.core)
            .arbiter
            .clone()
            .ok_or(ProducerClientError::NoSmb)?;
        let writer = arbiter.create_trace_writer(target_buffer, policy);
        // Its registration is queued: send it now.
        self.shared.pump();
        Ok(writer?)
    }

    /// Waits until an instance of `name` has been started.
    pub fn wait_for_start(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Instance, ProducerClientError> {
        self.wait(Some(timeout), |c| c.endpoint.started(name).is_some())
            .map_err(|_| ProducerClientError::Timeout("start_data_source"))?;
        lock(&self.shared.core)
            .endpoint
            .started(name)
            .cloned()
            .ok_or(ProducerClientError::Timeout("start_data_source"))
    }

    /// Sends everything committed so far; `callback` runs when the service
    /// has processed it.
    pub fn flush(&self, callback: Option<FlushCallback>) {
        let arbiter = lock(&self.shared.core).arbiter.clone();
        if let Some(a) = arbiter {
            a.flush_pending_commit_data_requests(callback);
            self.shared.pump();
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
        self.shared
            .locked(|core| core.endpoint.activate_triggers(names));
        Ok(())
    }

    /// Whether the connection to the service is up.
    pub fn is_connected(&self) -> bool {
        lock(&self.shared.core).connected
    }
}

impl Drop for ProducerClient {
    fn drop(&mut self) {
        // What writers queued just before goes out first.
        self.shared.locked(|_| ());
        self.shared.close();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        if let Some(t) = self.timer.take() {
            let _ = t.join();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn absent() -> Endpoint {
        let path = std::env::temp_dir().join(format!(
            "zerotrace-absent-producer-{}.sock",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        Endpoint::Path(path)
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "sockets, threads and the boot clock, which Miri does not emulate"
    )]
    fn connect_gives_up_after_its_timeout_with_the_socket_error() {
        let started = Instant::now();
        let r = ProducerClient::connect(
            &absent(),
            ProducerOptions {
                connect_timeout: Duration::from_millis(100),
                ..ProducerOptions::default()
            },
        );
        assert!(matches!(r, Err(ProducerClientError::Io(_))), "{r:?}");
        // Attempts at 0, 20 and 60 ms; the next (140 ms) is past the limit.
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "sockets, threads and the boot clock, which Miri does not emulate"
    )]
    fn start_returns_at_once_and_keeps_trying() {
        let client = ProducerClient::start(&absent(), ProducerOptions::default()).unwrap();
        assert!(!client.is_connected());
        assert_eq!(client.reconnects(), 0);
        assert!(matches!(
            client.create_trace_writer(0),
            Err(ProducerClientError::NoSmb)
        ));
        assert!(matches!(
            client.create_startup_trace_writer("x"),
            Err(ProducerClientError::Unsupported(_))
        ));
        // Dropping it stops the threads.
        drop(client);
    }
}
