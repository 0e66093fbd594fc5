//! The service state machine. The driver reports connections, calls and
//! the passing of time; the core answers with [`Action`]s, taken with
//! [`TracingService::poll_action`], and names its next deadline in
//! [`TracingService::poll_timeout`]. All times are nanoseconds of one
//! monotonic clock that includes suspend (BOOTTIME), supplied by the driver.
//! Deadlines that must not count suspended time (as Perfetto's, most of
//! them) also carry a CLOCK_MONOTONIC deadline, read from the
//! [`ServiceEnv`]: when such a timer comes due on BOOTTIME before it is due
//! on MONOTONIC (the machine slept), it waits for the rest.

mod clone_session;
mod consumer_port;
mod file_output;
mod lifecycle;
mod permissions;
mod producer_port;
mod read;
mod relay_port;
mod session_parts;
mod state;
mod tables;
mod timers;
mod trigger_book;
mod triggers;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::service::action::{Action, Peer, Reply};
use crate::service::commit::CommitStats;
use crate::service::config::Limits;
use crate::service::env::{PeerIdentity, ServiceEnv};
use crate::service::ids::{ConsumerId, ProducerId, RequestId, SessionId};
use crate::shm::SharedMemoryRegion;

pub use read::GlobalStats;
use state::{Consumer, Producer, Timer};
pub use state::{DataSourceState, SessionState, SessionSummary};

/// Settings of a service instance.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// Limits on sessions, buffers and durations.
    pub limits: Limits,
    /// The service's own uid (stamped on its packets; lockdown compares).
    pub service_uid: u32,
    /// This machine's name (`$PERFETTO_MACHINE_NAME`, else `uname -s`; the
    /// driver finds it): the name of every local producer, for
    /// `machine_name_filter`, which also matches local producers by "host".
    pub machine_name: String,
    /// SMB page size when neither config nor producer asks (4 KiB).
    pub default_page_size: usize,
    /// SMB size when neither config nor producer asks (256 KiB).
    pub default_smb_size: usize,
    /// Largest SMB the service creates (Perfetto: 32 MiB).
    pub max_smb_size: usize,
    /// Largest ReadBuffers reply (IPC frame limit 128 KiB, less headroom).
    pub max_read_reply_bytes: usize,
    /// Whether a consumer may name an `output_path` for the service to write.
    pub allow_output_path: bool,
}

impl Default for ServiceOptions {
    fn default() -> ServiceOptions {
        ServiceOptions {
            limits: Limits::default(),
            service_uid: 0,
            machine_name: String::new(),
            default_page_size: 4096,
            default_smb_size: 256 * 1024,
            max_smb_size: 32 * 1024 * 1024,
            max_read_reply_bytes: 128 * 1024 - 512,
            allow_output_path: true,
        }
    }
}

/// How a producer is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerTransport {
    /// The transport passes file descriptors (unix sockets); otherwise the
    /// producer uses SMB emulation (chunks inline in CommitData).
    pub can_pass_fds: bool,
}

/// Service-wide counters (the global part of `TraceStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceStats {
    /// Producers that ever connected.
    pub producers_seen: u64,
    /// Data sources ever registered.
    pub data_sources_seen: u64,
    /// The commit path's counters.
    pub commit: CommitStats,
    /// Calls refused because the caller broke the protocol.
    pub protocol_errors: u64,
    /// Producer connections refused (lockdown, id space exhausted).
    pub producers_refused: u64,
}

/// The tracing service core.
pub struct TracingService {
    opts: ServiceOptions,
    env: Box<dyn ServiceEnv>,
    now: u64,
    actions: VecDeque<Action>,
    producers: tables::Producers,
    consumers: BTreeMap<ConsumerId, Consumer>,
    /// The sessions, and their data source instances' ids.
    sessions: tables::Sessions,
    /// Trace buffers by global id, with their session.
    buffers: tables::Buffers,
    pending_flushes: tables::Flushes,
    /// ReadBuffers calls still streaming: consumer to (session, request).
    pending_reads: BTreeMap<ConsumerId, (SessionId, RequestId)>,
    /// Timers, by their deadline.
    timers: timers::Timers,
    lockdown: bool,
    stats: ServiceStats,
    /// When each `unique_session_name` last began a session with
    /// `enable_extra_guardrails` (BOOTTIME ns).
    guardrail_names: BTreeMap<String, u64>,
    /// Trigger hits of the last day, clone-trigger notices held back.
    trigger_book: trigger_book::TriggerBook,
    /// What relays told about their machines.
    machines: crate::service::machines::Machines,
}

impl std::fmt::Debug for TracingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracingService")
            .field("producers", &self.producers.len())
            .field("consumers", &self.consumers.len())
            .field("sessions", &self.sessions.len())
            .field("buffers", &self.buffers.len())
            .finish_non_exhaustive()
    }
}

impl TracingService {
    /// A service with no connections.
    pub fn new(opts: ServiceOptions, env: Box<dyn ServiceEnv>) -> TracingService {
        TracingService {
            opts,
            env,
            now: 0,
            actions: VecDeque::new(),
            producers: Default::default(),
            consumers: BTreeMap::new(),
            sessions: Default::default(),
            buffers: Default::default(),
            pending_flushes: Default::default(),
            pending_reads: BTreeMap::new(),
            timers: timers::Timers::default(),
            lockdown: false,
            stats: ServiceStats::default(),
            guardrail_names: BTreeMap::new(),
            trigger_book: Default::default(),
            machines: Default::default(),
        }
    }

    /// The next action for the driver, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The earliest time at which [`handle_timeout`](Self::handle_timeout)
    /// has work to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.next_deadline()
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        self.advance(now);
        loop {
            let env = &mut self.env;
            let Some(timer) = self.timers.pop_due(self.now, || env.monotonic_ns()) else {
                break;
            };
            self.fire(timer);
        }
    }

    /// Service-wide counters.
    pub fn stats(&self) -> &ServiceStats {
        &self.stats
    }

    /// A producer connected with `identity` (from the transport).
    /// `None` when it is refused (lockdown, or no producer id is free); the
    /// driver then closes the connection.
    pub fn producer_connected(
        &mut self,
        now: u64,
        identity: PeerIdentity,
        transport: ProducerTransport,
    ) -> Option<ProducerId> {
        self.advance(now);
        if self.lockdown && identity.uid != self.opts.service_uid {
            self.stats.producers_refused += 1;
            return None;
        }
        let id = self.allocate_producer_id()?;
        let identity = PeerIdentity {
            machine_id: identity.machine_id.filter(|&m| m != 0),
            ..identity
        };
        let mut p = Producer::new(id, identity, transport);
        if identity.machine_id.is_none() {
            p.machine_name = self.opts.machine_name.clone();
        }
        self.producers.insert(id, p);
        self.stats.producers_seen += 1;
        Some(id)
    }

    /// A consumer connected with `identity`; the driver names it.
    pub fn consumer_connected(&mut self, now: u64, id: ConsumerId, identity: PeerIdentity) {
        self.advance(now);
        self.consumers.insert(id, Consumer::new(identity));
    }

    fn allocate_producer_id(&mut self) -> Option<ProducerId> {
        // A departed producer's id stays taken while a buffer holds its
        // chunks.
        let sessions = &self.sessions;
        let id = self.producers.free_id(|id| {
            sessions
                .values()
                .any(|s| s.producer_meta.contains_key(&id.0))
        });
        if id.is_none() {
            self.stats.producers_refused += 1;
        }
        id
    }

    fn advance(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    fn push(&mut self, action: Action) {
        self.actions.push_back(action);
    }

    fn reply(&mut self, to: Peer, request: RequestId, reply: Reply) {
        self.push(Action::Reply { to, request, reply });
    }

    /// Arms `timer` to fire `after_ms` from now: on BOOTTIME when it counts
    /// suspended time ([`Self::counts_suspend`]), else on MONOTONIC.
    fn arm(&mut self, after_ms: u64, timer: Timer) {
        let after = after_ms.saturating_mul(1_000_000);
        let at = self.now.saturating_add(after);
        let monotonic_at = if self.counts_suspend(&timer) {
            None
        } else {
            self.env.monotonic_ns().map(|m| m.saturating_add(after))
        };
        self.timers.arm(at, monotonic_at, timer);
    }

    /// Whether `timer` runs on BOOTTIME (counting suspend), as Perfetto's:
    /// `duration_ms` (and the trigger timeout of STOP_TRACING and
    /// CLONE_SNAPSHOT sessions, which Perfetto runs as their duration) with
    /// `prefer_suspend_clock_for_duration`, the periodic clock snapshot with
    /// `builtin_data_sources.prefer_suspend_clock_for_snapshot`. Every other
    /// timer (flushes, stop delays of triggers, file writes...) runs on
    /// MONOTONIC.
    fn counts_suspend(&self, timer: &Timer) -> bool {
        let config = |s: &SessionId| self.sessions.get(s).map(|s| &s.config);
        match timer {
            Timer::Duration(s) => config(s).is_some_and(|c| c.prefer_suspend_clock_for_duration),
            Timer::TriggerTimeout(s) => config(s).is_some_and(|c| {
                c.prefer_suspend_clock_for_duration
                    && c.trigger_mode != Some(crate::service::config::TriggerMode::StartTracing)
            }),
            Timer::ClockSnapshot(s) => {
                config(s).is_some_and(|c| c.prefer_suspend_clock_for_snapshot)
            }
            _ => false,
        }
    }

    fn disarm(&mut self, pred: impl Fn(&Timer) -> bool) {
        let book = &mut self.trigger_book;
        self.timers.retain(|t| {
            let keep = !pred(t);
            if let (false, Timer::CloneTriggerHit(_, id)) = (keep, t) {
                book.take_clone_hit(*id);
            }
            keep
        });
    }

    /// Replaces the identity of producer `id` before it initializes (a
    /// relay's `set_peer_identity` over TCP, where the kernel tells nothing):
    /// with a `machine_id` (not 0) it is a producer of the machine named
    /// `machine_name`, whose data sources a session enables only with
    /// `trace_all_machines` or a `machine_name_filter` naming it.
    pub fn set_producer_identity(
        &mut self,
        id: ProducerId,
        identity: PeerIdentity,
        machine_name: String,
    ) {
        let local = self.opts.machine_name.clone();
        if let Some(p) = self.producers.get_mut(&id).filter(|p| !p.initialized) {
            p.identity = PeerIdentity {
                machine_id: identity.machine_id.filter(|&m| m != 0),
                ..identity
            };
            p.machine_name = match p.identity.machine_id {
                Some(_) => machine_name,
                None => local,
            };
        }
    }

    /// The session consumer `id` is attached to.
    pub fn session_of(&self, id: ConsumerId) -> Option<SessionId> {
        self.consumers.get(&id).and_then(|c| c.session)
    }

    /// Stops every session at once (the daemon is going away): file
    /// sessions write what their buffers hold and close their files.
    pub fn shutdown(&mut self, now: u64) {
        self.advance(now);
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for s in ids {
            self.stop_session(s);
            if self
                .sessions
                .get(&s)
                .is_some_and(|s| s.state == SessionState::Stopping)
            {
                self.finish_stop(s);
            }
        }
    }

    /// The SMB region of a producer, for drivers that pass its fd.
    pub fn producer_smb(&self, id: ProducerId) -> Option<Arc<dyn SharedMemoryRegion>> {
        self.producers.get(&id).and_then(|p| p.smb_region.clone())
    }

    /// Sessions as the state query reports them.
    pub fn sessions(&self) -> Vec<SessionSummary> {
        self.sessions
            .values()
            .map(|s| s.summary(&self.buffers))
            .collect()
    }

    /// The state of each data source instance of `session`.
    pub fn data_source_states(&self, session: SessionId) -> Vec<(String, DataSourceState)> {
        self.sessions
            .get(&session)
            .map(|s| {
                s.instances
                    .iter()
                    .map(|i| (i.data_source.clone(), i.state))
                    .collect()
            })
            .unwrap_or_default()
    }
}
