//! The in-process backend: one call starts an embedded tracing service (the
//! daemon's loop on a thread of this process, on private abstract sockets),
//! connects this process as producer and consumer, registers the
//! TrackEvent categories and records a session; [`InProcessSession::stop`]
//! writes the trace file. No `zerotraced` needs to run.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_protos::protos::TraceConfig;

use super::backend::TrackEvent;
use super::category::Category;
use crate::consumer::{ConsumerClient, EnableRequest, SessionEnd};
use crate::ipc::Endpoint;
use crate::producer::{ProducerClient, ProducerOptions};
use crate::service::driver::{Daemon, DaemonConfig};

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
}

impl Default for InProcessConfig {
    fn default() -> InProcessConfig {
        InProcessConfig {
            buffer_kb: 32 * 1024,
            enabled_categories: Vec::new(),
            duration_ms: 0,
            data_sources: Vec::new(),
        }
    }
}

/// A session recorded in this process.
pub struct InProcessSession {
    consumer: ConsumerClient,
    session: EnableRequest,
    producer: Arc<ProducerClient>,
    stop: UnixStream,
    service: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for InProcessSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessSession").finish_non_exhaustive()
    }
}

static STARTED: AtomicU32 = AtomicU32::new(0);

impl InProcessSession {
    /// Starts the embedded service, registers `categories` and starts
    /// recording them; returns once the categories are live.
    pub fn start(
        categories: &'static [&'static Category],
        cfg: InProcessConfig,
    ) -> Result<InProcessSession, InProcessError> {
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let base = format!("zerotrace-inproc-{}-{n}", std::process::id());
        let daemon_cfg = DaemonConfig {
            producer_sockets: vec![Endpoint::Abstract(format!("{base}-p"))],
            consumer_socket: Endpoint::Abstract(format!("{base}-c")),
            producer_socket_mode: None,
            consumer_socket_mode: None,
            log_level: 0,
            ..DaemonConfig::default()
        };
        let (p_ep, c_ep) = (
            daemon_cfg.producer_sockets[0].clone(),
            daemon_cfg.consumer_socket.clone(),
        );
        let (stop, stop_rx) = UnixStream::pair().map_err(fail)?;
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let service = std::thread::Builder::new()
            .name("zerotrace-service".into())
            .spawn(
                move || match Daemon::bind(daemon_cfg, Some(OwnedFd::from(stop_rx))) {
                    Ok(mut d) => {
                        let _ = ready_tx.send(Ok(()));
                        let _ = d.run();
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                    }
                },
            )
            .map_err(fail)?;
        ready.recv().map_err(fail)?.map_err(fail)?;
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
            if cfg.duration_ms > 0 {
                c.set_duration_ms(cfg.duration_ms);
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
            stop,
            service: Some(service),
        })
    }

    /// The producer connection, to register further data sources on.
    pub fn producer(&self) -> &Arc<ProducerClient> {
        &self.producer
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

impl Drop for InProcessSession {
    fn drop(&mut self) {
        let _ = self.stop.write_all(&[1]);
        if let Some(s) = self.service.take() {
            let _ = s.join();
        }
    }
}
