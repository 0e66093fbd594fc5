//! Startup tracing in the producer client: a shared memory buffer made by
//! the producer before it is connected, offered to the service with
//! `InitializeConnection` (`producer_provided_shmem`, the memfd attached),
//! and one reservation per data source name for the startup writers.
//!
//! The flow: [`StartupTracingOptions`] makes the client create a sealed
//! memfd and an unbound arbiter over it at once, so
//! [`ProducerClient::create_startup_trace_writer`] works before any service
//! exists. On the first connection the buffer is offered; if the service
//! answers `using_shmem_provided_by_producer`, the arbiter is bound to the
//! connection and becomes the producer's SMB (the service then sends
//! `setup_tracing` without an fd). When a session starts a data source with
//! an open reservation, the reservation is bound to the buffer named in the
//! DataSourceConfig, and the held data flows. A reservation no session
//! claims within [`StartupTracingOptions::timeout`] is aborted: its data is
//! freed uncommitted and its writers drop from then on. If the service
//! refuses the buffer (a size it does not accept, no seals, a transport
//! that cannot pass fds), every reservation is aborted, the reason is
//! logged, and the service's own buffer is used as without startup tracing.
//!
//! ```no_run
//! use zerotrace_core::ipc::Endpoint;
//! use zerotrace_core::producer::{
//!     DataSourceSpec, ProducerClient, ProducerOptions, StartupTracingOptions,
//! };
//!
//! let producer = ProducerClient::start(
//!     &Endpoint::Path("/tmp/perfetto-producer".into()),
//!     ProducerOptions {
//!         startup_tracing: Some(StartupTracingOptions::default()),
//!         ..ProducerOptions::default()
//!     },
//! )?;
//! producer.register_data_source(
//!     DataSourceSpec { name: "my.startup".into(), ..Default::default() },
//!     |_| {},
//! )?;
//! // Connected or not: held until a session starts "my.startup".
//! let mut writer = producer.create_startup_trace_writer("my.startup")?;
//! writer.packet(|p| {
//!     p.set_timestamp(zerotrace_core::boottime_ns());
//! });
//! # Ok::<(), zerotrace_core::producer::ProducerClientError>(())
//! ```
//!
//! [`ProducerClient::create_startup_trace_writer`]: super::ProducerClient::create_startup_trace_writer

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::sink::IpcSink;
use super::{Inner, Instance, ProducerClient, ProducerClientError, lock};
use crate::ipc::fd::OwnedFd;
use crate::producer::SharedMemoryArbiter;
use crate::producer::TraceWriter;
use crate::shm::{DEFAULT_PAGE_SIZE, DEFAULT_SHM_SIZE};

/// Startup tracing settings ([`super::ProducerOptions::startup_tracing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupTracingOptions {
    /// Size of the buffer the producer makes (bytes). The service adopts it
    /// only if it is at most 32 MiB and a whole number of pages.
    pub smb_size: usize,
    /// Page size of that buffer (bytes): 4, 8, 16 or 32 KiB for the service
    /// to adopt it.
    pub page_size: usize,
    /// How long a reservation waits for a session to start its data source
    /// before its data is dropped (Perfetto's SDK waits about 10 s).
    pub timeout: Duration,
}

impl Default for StartupTracingOptions {
    fn default() -> StartupTracingOptions {
        StartupTracingOptions {
            smb_size: DEFAULT_SHM_SIZE,
            page_size: DEFAULT_PAGE_SIZE,
            timeout: Duration::from_secs(10),
        }
    }
}

impl ProducerClient {
    /// A startup writer for data source `data_source`: usable at once,
    /// connected or not. Until a session starts the data source, what it
    /// writes is held in the producer's own buffer; then it goes to the
    /// session's buffer, in order, followed by everything written later.
    /// If no session starts it within [`StartupTracingOptions::timeout`],
    /// the data is dropped and so is whatever the writer writes afterwards.
    /// Writers made for one data source before its start share one
    /// reservation; once an instance runs, this returns an ordinary writer
    /// for it. Startup writers never stall (policy DROP).
    pub fn create_startup_trace_writer(
        &self,
        data_source: &str,
    ) -> Result<TraceWriter, ProducerClientError> {
        let running = lock(&self.inner.state)
            .started
            .iter()
            .rev()
            .find(|i| i.name == data_source)
            .cloned();
        match running {
            Some(instance) => self.create_trace_writer_for(&instance),
            None => create_writer(&self.inner, data_source),
        }
    }

    /// How many startup reservations were aborted (their data dropped):
    /// no session in time, the service refused the buffer, or it could not
    /// be used on the connection the session came on.
    pub fn startup_reservations_aborted(&self) -> u64 {
        aborted(&self.inner)
    }

    /// Whether the service adopted the buffer this producer made for startup
    /// tracing (and it is the producer's SMB on the current connection).
    pub fn uses_own_smb(&self) -> bool {
        lock(&self.inner.state).using_provided_smb
    }
}

/// The mapped buffer the producer made, as the unix build has it.
#[cfg(unix)]
type OwnSmb = crate::shm::MappedShm;

/// The client's startup tracing state.
#[derive(Default)]
pub(super) struct ClientStartup {
    /// The arbiter over our own buffer (unbound until the service adopts it).
    arbiter: Option<Arc<SharedMemoryArbiter>>,
    /// Our buffer (to offer its fd) and its page size.
    #[cfg(unix)]
    smb: Option<(Arc<OwnSmb>, usize)>,
    timeout: Duration,
    /// The service answered our offer (adopted or refused).
    answered: bool,
    /// The service refused the buffer: no more startup writers.
    refused: bool,
    /// Unbound reservations by data source name, with their deadlines.
    open: HashMap<String, (u16, Instant)>,
    /// Reservations aborted so far (timeout, refusal, or a start that came
    /// when our buffer was not the producer's SMB).
    aborted: u64,
}

impl ClientStartup {
    /// Creates the buffer and its unbound arbiter.
    #[cfg(unix)]
    pub(super) fn new(opts: &StartupTracingOptions) -> Result<ClientStartup, ProducerClientError> {
        let smb = Arc::new(OwnSmb::create(opts.smb_size)?);
        let region: Arc<dyn crate::shm::SharedMemoryRegion> = smb.clone();
        let config = crate::producer::ArbiterConfig::default();
        let arbiter = SharedMemoryArbiter::new_unbound(region, opts.page_size, config)?;
        Ok(ClientStartup {
            arbiter: Some(arbiter),
            smb: Some((smb, opts.page_size)),
            timeout: opts.timeout,
            ..ClientStartup::default()
        })
    }

    /// Startup tracing needs a buffer another process can map (unix only).
    #[cfg(not(unix))]
    pub(super) fn new(_: &StartupTracingOptions) -> Result<ClientStartup, ProducerClientError> {
        Err(ProducerClientError::Unsupported("startup tracing"))
    }
}

impl ClientStartup {
    /// What `InitializeConnection` offers: the fd of our buffer, its size
    /// and page size; `None` once the service answered (or without startup
    /// tracing).
    pub(super) fn offer(&self) -> Option<(OwnedFd, u32, u32)> {
        if self.answered || self.arbiter.is_none() {
            return None;
        }
        #[cfg(unix)]
        {
            let (smb, page_size) = self.smb.as_ref()?;
            let fd = smb.fd().try_clone_to_owned().ok()?;
            let size = crate::shm::SharedMemoryRegion::size(&**smb);
            Some((fd, size as u32, *page_size as u32))
        }
        #[cfg(not(unix))]
        None
    }
}

/// [`ClientStartup::offer`] of the client.
pub(super) fn offer(inner: &Inner) -> Option<(OwnedFd, u32, u32)> {
    lock(&inner.startup).offer()
}

/// The service answered `InitializeConnection`: `adopted` says whether it
/// uses our buffer. Adopted: bind the arbiter to this connection and make
/// it the producer's SMB. Refused: drop the startup data (logged).
pub(super) fn on_initialized(inner: &Arc<Inner>, adopted: bool, why_not: &str) {
    let (arbiter, reservations) = {
        let mut su = lock(&inner.startup);
        if su.answered || su.arbiter.is_none() {
            return;
        }
        su.answered = true;
        let reservations: Vec<u16> = if adopted {
            Vec::new()
        } else {
            su.refused = true;
            su.open.drain().map(|(_, (r, _))| r).collect()
        };
        su.aborted += reservations.len() as u64;
        (su.arbiter.clone(), reservations)
    };
    let Some(arbiter) = arbiter else { return };
    if adopted {
        let sink = IpcSink::new(inner);
        sink.set_arbiter(&arbiter);
        if arbiter.bind_to_sink(sink).is_ok() {
            let mut st = lock(&inner.state);
            st.arbiter = Some(arbiter.clone());
            st.page_size = arbiter.abi().page_size();
            st.using_provided_smb = true;
            inner.changed.notify_all();
        }
        return;
    }
    eprintln!(
        "zerotrace: the tracing service did not adopt the producer's startup buffer ({why_not}); \
         the data written before the connection is dropped and the service's buffer is used"
    );
    for r in reservations {
        let _ = arbiter.abort_startup_reservation(r);
    }
}

/// A startup writer for data source `name`: of its open reservation, or of
/// a new one (whose timeout starts now).
pub(super) fn create_writer(inner: &Inner, name: &str) -> Result<TraceWriter, ProducerClientError> {
    let mut su = lock(&inner.startup);
    if su.refused {
        return Err(ProducerClientError::Refused("the startup buffer"));
    }
    let arbiter = su.arbiter.clone().ok_or(ProducerClientError::Unsupported(
        "startup tracing (not enabled)",
    ))?;
    let reservation = match su.open.get(name) {
        Some(&(r, _)) => r,
        None => {
            let r = arbiter.create_startup_reservation()?;
            let deadline = Instant::now() + su.timeout;
            su.open.insert(name.to_owned(), (r, deadline));
            // The committer thread watches the deadlines.
            inner.commit_wanted.notify_one();
            r
        }
    };
    Ok(arbiter.create_startup_trace_writer(reservation)?)
}

/// A session started `instance`: bind the open reservation of its data
/// source (if any) to the instance's buffer, or abort it when our buffer is
/// not the producer's SMB on this connection.
pub(super) fn on_start(inner: &Inner, instance: &Instance) {
    let (reservation, arbiter) = {
        let mut su = lock(&inner.startup);
        let Some((r, _)) = su.open.remove(&instance.name) else {
            return;
        };
        (r, su.arbiter.clone())
    };
    let Some(arbiter) = arbiter else { return };
    let ours = lock(&inner.state).using_provided_smb;
    if !ours
        || arbiter
            .bind_startup_target_buffer(reservation, instance.target_buffer)
            .is_err()
    {
        lock(&inner.startup).aborted += 1;
        let _ = arbiter.abort_startup_reservation(reservation);
    }
}

/// Aborts the reservations whose deadline passed; returns the next deadline.
pub(super) fn abort_expired(inner: &Inner) -> Option<Instant> {
    let now = Instant::now();
    let (expired, arbiter, next) = {
        let mut su = lock(&inner.startup);
        let expired: Vec<String> = su
            .open
            .iter()
            .filter(|(_, (_, d))| *d <= now)
            .map(|(n, _)| n.clone())
            .collect();
        let expired: Vec<u16> = expired
            .iter()
            .filter_map(|n| su.open.remove(n))
            .map(|(r, _)| r)
            .collect();
        su.aborted += expired.len() as u64;
        let next = su.open.values().map(|&(_, d)| d).min();
        (expired, su.arbiter.clone(), next)
    };
    if let Some(a) = arbiter {
        for r in expired {
            let _ = a.abort_startup_reservation(r);
        }
    }
    next
}

/// How many startup reservations were aborted so far.
pub(super) fn aborted(inner: &Inner) -> u64 {
    lock(&inner.startup).aborted
}
