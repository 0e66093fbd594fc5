//! The in-process backend: one call starts an embedded tracing service (the
//! daemon's loop on a thread of this process), connects this process as
//! producer and consumer, registers the TrackEvent categories and records a
//! session; [`InProcessSession::stop`] writes the trace file. No
//! `zerotraced` needs to run.
//!
//! On Linux the service listens on private abstract unix sockets and the
//! producer writes into a shared memory buffer. Elsewhere (macOS, Windows)
//! it listens on TCP on the loopback interface, at ports the system picks,
//! and the producer emulates the buffer: its chunks go to the service
//! inline, as over any TCP connection.
//!
//! Why the shared buffer stays defined with both sides in one process: the
//! producer's writer threads write its chunks with plain stores through the
//! producer's mapping of the memfd, and the embedded service (flushing,
//! stopping, scraping chunks still being written) reads them only through a
//! mapping of its own, with atomic loads that copy every byte once. The two
//! mappings are distinct allocations to the compiler, so the service's reads
//! are to it what another process's are: torn values at worst, which the
//! service parses as untrusted. The service never reads through the
//! producer's own mapping (`ProducerSmb::new` and
//! `SharedMemoryAbi::peek_chunk` state the rule).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_protos::protos::TraceConfig;

use super::backend::TrackEvent;
use super::category::Category;
use crate::consumer::{ConsumerClient, EnableRequest, SessionEnd};
use crate::daemon::{DaemonConfig, DaemonThread};
use crate::ipc::Endpoint;
use crate::producer::{ProducerClient, ProducerOptions};

/// Errors of the in-process backend.
#[derive(Debug, thiserror::Error)]
pub enum InProcessError {
    /// The embedded service or a client failed.
    #[error("in-process tracing: {0}")]
    Failed(String),
}

fn fail(e: impl std::fmt::Display) -> InProcessError {
    InProcessError::Failed(e.to_string())
}

/// What to record.
#[derive(Debug, Clone)]
pub struct InProcessConfig {
    /// Trace buffer size in KiB.
    pub buffer_kb: u32,
    /// Categories to enable (glob patterns); empty: every category not
    /// tagged `slow` or `debug`.
    pub enabled_categories: Vec<String>,
    /// Stop by itself after this long (0: when [`InProcessSession::stop`] is called).
    pub duration_ms: u32,
    /// Further data sources the session records (register them on
    /// [`InProcessSession::producer`]); their configs carry only the name.
    pub data_sources: Vec<String>,
    /// Further data sources with their whole `DataSourceConfig`, encoded
    /// (its name included), for those that read a config of their own
    /// (the heap profiler's `heapprofd_config`, say).
    pub data_source_configs: Vec<Vec<u8>>,
    /// Every this many milliseconds the service asks the writers to clear
    /// their incremental state, so each thread writes its track
    /// descriptors and interned names again and a ring buffer that
    /// overwrote the first ones still resolves every event after the next
    /// clear (the config's `incremental_state_config.clear_period_ms`;
    /// 0: never).
    pub incremental_state_clear_period_ms: u32,
}

impl Default for InProcessConfig {
    fn default() -> InProcessConfig {
        InProcessConfig {
            buffer_kb: 32 * 1024,
            enabled_categories: Vec::new(),
            duration_ms: 0,
            data_sources: Vec::new(),
            data_source_configs: Vec::new(),
            incremental_state_clear_period_ms: 0,
        }
    }
}

/// A session recorded in this process.
pub struct InProcessSession {
    consumer: ConsumerClient,
    session: EnableRequest,
    producer: Arc<ProducerClient>,
    producer_endpoint: Endpoint,
    service: Option<DaemonThread>,
}

impl std::fmt::Debug for InProcessSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessSession").finish_non_exhaustive()
    }
}

impl InProcessSession {
    /// Starts the embedded service, registers `categories` and starts
    /// recording them; returns once the categories are live.
    pub fn start(
        categories: &'static [&'static Category],
        cfg: InProcessConfig,
    ) -> Result<InProcessSession, InProcessError> {
        let (producer_socket, consumer_socket) = service_endpoints();
        let daemon_cfg = DaemonConfig {
            producer_sockets: vec![producer_socket],
            consumer_socket,
            producer_socket_mode: None,
            consumer_socket_mode: None,
            log_level: 0,
            // Only this process connects (on loopback TCP outside Linux).
            tcp_peers_are_local: true,
            ..DaemonConfig::default()
        };
        let service = DaemonThread::spawn(daemon_cfg).map_err(fail)?;
        let p_ep = service.producer_endpoints()[0].clone();
        let c_ep = service.consumer_endpoint().clone();
        let name = std::env::args()
            .next()
            .unwrap_or_else(|| "zerotrace".into());
        let producer = Arc::new(
            ProducerClient::connect(
                &p_ep,
                ProducerOptions {
                    name,
                    ..Default::default()
                },
            )
            .map_err(fail)?,
        );
        TrackEvent::register(producer.clone(), categories).map_err(fail)?;
        let mut w = HeapWriter::new();
        {
            let mut c = TraceConfig::from_message(w.root());
            c.add_buffers().set_size_kb(cfg.buffer_kb);
            {
                let mut ds = c.add_data_sources();
                let mut dc = ds.begin_config();
                dc.set_name("track_event");
                if !cfg.enabled_categories.is_empty() {
                    let mut te = dc.message().begin_nested(113);
                    te.append_string(1, "*");
                    for e in &cfg.enabled_categories {
                        te.append_string(2, e);
                    }
                }
            }
            for name in &cfg.data_sources {
                c.add_data_sources().begin_config().set_name(name);
            }
            for raw in &cfg.data_source_configs {
                c.add_data_sources().set_config_raw(raw);
            }
            if cfg.duration_ms > 0 {
                c.set_duration_ms(cfg.duration_ms);
            }
            if cfg.incremental_state_clear_period_ms > 0 {
                c.begin_incremental_state_config()
                    .set_clear_period_ms(cfg.incremental_state_clear_period_ms);
            }
        }
        let mut consumer = ConsumerClient::connect(&c_ep).map_err(fail)?;
        let session = consumer
            .enable_tracing(&w.finish().map_err(fail)?, None)
            .map_err(fail)?;
        producer
            .wait_for_start("track_event", Duration::from_secs(10))
            .map_err(fail)?;
        Ok(InProcessSession {
            consumer,
            session,
            producer,
            producer_endpoint: p_ep,
            service: Some(service),
        })
    }

    /// The producer connection, to register further data sources on.
    pub fn producer(&self) -> &Arc<ProducerClient> {
        &self.producer
    }

    /// The embedded service's producer socket, for further producers of
    /// this process (the system probes, say) to connect to; a data source
    /// they register that the session names starts at once.
    pub fn producer_endpoint(&self) -> &Endpoint {
        &self.producer_endpoint
    }

    /// Stops recording (or waits for `duration_ms` to end it), writes the
    /// trace to `path` and shuts the embedded service down; returns the
    /// number of bytes written.
    pub fn stop(mut self, path: &Path) -> Result<usize, InProcessError> {
        TrackEvent::flush();
        let _ = self.producer.flush_blocking(Duration::from_secs(10));
        // A session with a duration may have ended already.
        let ended = self
            .consumer
            .poll_end(self.session, Duration::from_millis(1))
            .map_err(fail)?;
        let end = match ended {
            Some(end) => end,
            None => {
                self.consumer.disable_tracing().map_err(fail)?;
                self.consumer
                    .wait_for_end(self.session, Some(Duration::from_secs(30)))
                    .map_err(fail)?
            }
        };
        if let SessionEnd::Error(e) = end {
            return Err(fail(e));
        }
        let trace = self.consumer.read_trace().map_err(fail)?;
        std::fs::write(path, &trace).map_err(fail)?;
        Ok(trace.len())
    }
}

/// The embedded service's sockets: private abstract unix sockets (no file
/// to clean up).
#[cfg(target_os = "linux")]
fn service_endpoints() -> (Endpoint, Endpoint) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static STARTED: AtomicU32 = AtomicU32::new(0);
    let n = STARTED.fetch_add(1, Ordering::Relaxed);
    let base = format!("zerotrace-inproc-{}-{n}", std::process::id());
    (
        Endpoint::Abstract(format!("{base}-p")),
        Endpoint::Abstract(format!("{base}-c")),
    )
}

/// The embedded service's sockets: TCP on the loopback interface, at ports
/// the system picks (there are no abstract unix sockets here).
#[cfg(not(target_os = "linux"))]
fn service_endpoints() -> (Endpoint, Endpoint) {
    (
        Endpoint::Tcp("127.0.0.1:0".into()),
        Endpoint::Tcp("127.0.0.1:0".into()),
    )
}

impl Drop for InProcessSession {
    fn drop(&mut self) {
        // The service stops first (as it always did), then the clients.
        drop(self.service.take());
    }
}
