//! Startup tracing in the producer client: the shared memory buffer the
//! producer makes before it is connected, offered to the service with
//! `InitializeConnection` (`producer_provided_shmem`, the memfd attached),
//! and the startup writers over its arbiter. The reservations themselves
//! (one per data source name, their expiry, binding to a started instance,
//! the service's refusal) are the endpoint's state machine
//! ([`crate::producer::endpoint::startup`]); this file holds the buffer and
//! the API.
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
//!     p.set_timestamp(zerotrace_core::platform::boottime_ns());
//! });
//! # Ok::<(), zerotrace_core::producer::ProducerClientError>(())
//! ```

use std::sync::Arc;
use std::time::Duration;

use super::{ProducerClient, ProducerClientError, lock, now};
use crate::ipc::fd::OwnedFd;
use crate::producer::endpoint::{EndpointError, StartupError, StartupOffer, StartupReservation};
use crate::producer::{SharedMemoryArbiter, TraceWriter};
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
        let shared = &self.shared;
        let mut core = lock(&shared.core);
        if let Some(instance) = core.endpoint.started(data_source).cloned() {
            drop(core);
            return self.create_trace_writer_for(&instance);
        }
        let reservation = match core.endpoint.startup_reservation(data_source) {
            Err(EndpointError::Startup(StartupError::Refused)) => {
                return Err(ProducerClientError::Refused("the startup buffer"));
            }
            Err(_) => {
                return Err(ProducerClientError::Unsupported(
                    "startup tracing (not enabled)",
                ));
            }
            Ok(r) => r,
        };
        let arbiter = core
            .startup
            .arbiter
            .clone()
            .ok_or(ProducerClientError::Unsupported(
                "startup tracing (not enabled)",
            ))?;
        let reservation = match reservation {
            StartupReservation::Open(r) => r,
            StartupReservation::Needed => {
                let r = arbiter.create_startup_reservation()?;
                core.endpoint.add_startup_reservation(now(), data_source, r);
                // The timer thread watches the deadlines.
                shared.outbox.wake();
                r
            }
        };
        drop(core);
        Ok(arbiter.create_startup_trace_writer(reservation)?)
    }

    /// How many startup reservations were aborted (their data dropped):
    /// no session in time, the service refused the buffer, or it could not
    /// be used on the connection the session came on. Counted once the
    /// abort is carried out in the buffer: from then on the reservation's
    /// writers drop what they write.
    pub fn startup_reservations_aborted(&self) -> u64 {
        let arbiter = lock(&self.shared.core).startup.arbiter.clone();
        arbiter.map_or(0, |a| a.stats().startup_reservations_aborted)
    }

    /// Whether the service adopted the buffer this producer made for startup
    /// tracing (and it is the producer's SMB on the current connection).
    pub fn uses_own_smb(&self) -> bool {
        lock(&self.shared.core).endpoint.uses_startup_smb()
    }
}

/// The mapped buffer the producer made, as the unix build has it.
#[cfg(unix)]
type OwnSmb = crate::shm::MappedShm;

/// The client's startup buffer and its arbiter.
#[derive(Default)]
pub(super) struct ClientStartup {
    /// The arbiter over our own buffer (unbound until the service adopts it).
    pub(super) arbiter: Option<Arc<SharedMemoryArbiter>>,
    /// Our buffer (to offer its fd).
    #[cfg(unix)]
    smb: Option<Arc<OwnSmb>>,
    /// What the endpoint offers.
    offer: Option<StartupOffer>,
}

impl ClientStartup {
    /// Creates the buffer and its unbound arbiter (none without options).
    #[cfg(unix)]
    pub(super) fn new(
        opts: Option<&StartupTracingOptions>,
    ) -> Result<ClientStartup, ProducerClientError> {
        let Some(opts) = opts else {
            return Ok(ClientStartup::default());
        };
        let smb = Arc::new(OwnSmb::create(opts.smb_size)?);
        let region: Arc<dyn crate::shm::SharedMemoryRegion> = smb.clone();
        let config = crate::producer::ArbiterConfig::default();
        let arbiter = SharedMemoryArbiter::new_unbound(region, opts.page_size, config)?;
        let size = crate::shm::SharedMemoryRegion::size(&*smb);
        Ok(ClientStartup {
            arbiter: Some(arbiter),
            smb: Some(smb),
            offer: Some(StartupOffer {
                smb_size: size as u32,
                page_size: opts.page_size as u32,
                timeout_ns: u64::try_from(opts.timeout.as_nanos()).unwrap_or(u64::MAX),
            }),
        })
    }

    /// Startup tracing needs a buffer another process can map (unix only).
    #[cfg(not(unix))]
    pub(super) fn new(
        opts: Option<&StartupTracingOptions>,
    ) -> Result<ClientStartup, ProducerClientError> {
        match opts {
            None => Ok(ClientStartup::default()),
            Some(_) => Err(ProducerClientError::Unsupported("startup tracing")),
        }
    }

    /// What the endpoint offers with `InitializeConnection`.
    pub(super) fn offer(&self) -> Option<StartupOffer> {
        self.offer
    }

    /// A descriptor of our buffer, to attach to `InitializeConnection`.
    pub(super) fn fd(&self) -> Option<OwnedFd> {
        #[cfg(unix)]
        {
            self.smb.as_ref()?.fd().try_clone_to_owned().ok()
        }
        #[cfg(not(unix))]
        None
    }
}
