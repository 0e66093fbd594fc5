//! The records the core keeps per producer, consumer, session, data source
//! instance and pending flush.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::protocol::{BufferId, WriterId};
use crate::service::calls::DataSourceDescriptor;
use crate::service::commit::ProducerSmb;
use crate::service::config::SessionConfig;
use crate::service::env::PeerIdentity;
use crate::service::ids::{
    ConsumerId, DataSourceInstanceId, FlushRequestId, ProducerId, RequestId, SessionId,
};
use crate::service::trace_buffer::TraceBuffer;
use crate::shm::SharedMemoryRegion;

use super::ProducerTransport;
use super::session_parts::{Clocks, FileState, FlushCounts, ReadCursor, Sequences};

/// A connected producer.
pub(super) struct Producer {
    pub id: ProducerId,
    pub identity: PeerIdentity,
    pub transport: ProducerTransport,
    pub initialized: bool,
    pub name: String,
    /// The name of its machine (this machine's for a local producer).
    pub machine_name: String,
    pub sdk_version: String,
    pub page_size_hint: usize,
    pub smb_size_hint: usize,
    pub scraping: bool,
    /// A producer-provided SMB waiting for the first setup.
    pub provided_smb: Option<Arc<dyn SharedMemoryRegion>>,
    pub smb_region: Option<Arc<dyn SharedMemoryRegion>>,
    pub smb: Option<ProducerSmb>,
    pub smb_page_size: usize,
    pub smb_sent: bool,
    /// The GetAsyncCommand request that commands stream on.
    pub async_request: Option<RequestId>,
    /// Commands waiting for GetAsyncCommand: encoded response, attach SMB.
    pub queued_commands: Vec<(Vec<u8>, bool)>,
    pub data_sources: BTreeMap<String, DataSourceDescriptor>,
    /// Writer id to the buffer it registered for.
    pub writers: HashMap<WriterId, BufferId>,
    /// Buffers a data source setup granted.
    pub allowed_buffers: BTreeSet<BufferId>,
}

impl Producer {
    pub fn new(id: ProducerId, identity: PeerIdentity, transport: ProducerTransport) -> Producer {
        Producer {
            id,
            identity,
            transport,
            initialized: false,
            name: String::new(),
            machine_name: String::new(),
            sdk_version: String::new(),
            page_size_hint: 0,
            smb_size_hint: 0,
            scraping: false,
            provided_smb: None,
            smb_region: None,
            smb: None,
            smb_page_size: 0,
            smb_sent: false,
            async_request: None,
            queued_commands: Vec::new(),
            data_sources: BTreeMap::new(),
            writers: HashMap::new(),
            allowed_buffers: BTreeSet::new(),
        }
    }
}

/// A connected consumer.
pub(super) struct Consumer {
    pub identity: PeerIdentity,
    pub session: Option<SessionId>,
    /// `ObservableEvents.Type` bits asked for, and the stream's request.
    pub observe_mask: u32,
    pub observe_request: Option<RequestId>,
    /// The CLONE_SNAPSHOT trigger its clone in flight answers.
    pub clone_trigger: Option<crate::service::CloneTrigger>,
    /// When its clone in flight started (before the clone's flush).
    pub clone_started: Option<u64>,
}

impl Consumer {
    pub fn new(identity: PeerIdentity) -> Consumer {
        Consumer {
            identity,
            session: None,
            observe_mask: 0,
            observe_request: None,
            clone_trigger: None,
            clone_started: None,
        }
    }
}

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Set up; waiting for StartTracing or a start trigger.
    Configured,
    /// Data sources started.
    Started,
    /// Stop sent; waiting for data sources that notify on stop.
    Stopping,
    /// Stopped; the buffers can still be read.
    Stopped,
}

/// Where a data source instance is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataSourceState {
    /// `setup_data_source` sent.
    Configured,
    /// `start_data_source` sent; waiting for its notification.
    Starting,
    /// Running.
    Started,
    /// `stop_data_source` sent; waiting for its notification.
    Stopping,
    /// Stopped.
    Stopped,
}

/// One data source instance of a session on a producer.
pub(super) struct Instance {
    pub id: DataSourceInstanceId,
    pub producer: ProducerId,
    pub producer_name: String,
    pub data_source: String,
    /// The DataSourceConfig sent to the producer.
    pub config: Vec<u8>,
    pub state: DataSourceState,
    pub will_notify_on_start: bool,
    pub will_notify_on_stop: bool,
    pub no_flush: bool,
    pub handles_incremental_state_clear: bool,
}

/// What a session is for (clones are read-only snapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SessionKind {
    Normal,
    Clone,
}

/// A tracing session.
pub(super) struct Session {
    pub id: SessionId,
    pub kind: SessionKind,
    pub consumer: Option<ConsumerId>,
    pub consumer_uid: u32,
    pub detach_key: Option<String>,
    pub config: SessionConfig,
    pub buffers: Vec<BufferId>,
    pub state: SessionState,
    pub instances: Vec<Instance>,
    /// The EnableTracing call answered when the session ends.
    pub enable_reply: Option<(ConsumerId, RequestId)>,
    /// Trusted sequence ids handed out.
    pub sequences: Sequences,
    /// Identity of every producer that was set up for the session (kept
    /// after it disconnects, for the trusted fields of its packets).
    pub producer_meta: HashMap<u16, PeerIdentity>,
    pub uuid: u128,
    pub clocks: Clocks,
    /// (timestamp, TracingServiceEvent field, its varint value: 1 for the
    /// flags, a buffer's index for `buffer_cloned`) not yet written to the
    /// trace.
    pub events: Vec<(u64, u32, u32)>,
    pub preamble_written: bool,
    /// What the trace holds of the machines relays described.
    pub remote_written: crate::service::machines::RemoteWritten,
    /// Where a read in progress is.
    pub read: ReadCursor,
    pub last_sync_marker: Option<u64>,
    pub started_at: Option<u64>,
    pub invalid_packets: u64,
    pub flushes: FlushCounts,
    pub file: FileState,
    /// Why the session ended early (a write error), for the consumer.
    pub end_error: Option<String>,
    pub triggers_received: Vec<(String, String, u32, u64)>,
    pub all_started_notified: bool,
    /// A clone's CLONE_SNAPSHOT trigger (from the CloneSession call), for
    /// the first read.
    pub clone_trigger: Option<crate::service::CloneTrigger>,
}

/// A session as [`TracingService::sessions`](super::TracingService::sessions) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// Its id.
    pub id: SessionId,
    /// Its state.
    pub state: SessionState,
    /// Its consumer (none while detached).
    pub consumer: Option<ConsumerId>,
    /// Its buffers' ids and sizes.
    pub buffers: Vec<(BufferId, usize)>,
    /// Its `unique_session_name`.
    pub unique_session_name: Option<String>,
    /// A read-only clone.
    pub is_clone: bool,
}

impl Session {
    pub fn summary(
        &self,
        buffers: &BTreeMap<BufferId, (SessionId, TraceBuffer)>,
    ) -> SessionSummary {
        SessionSummary {
            id: self.id,
            state: self.state,
            consumer: self.consumer,
            buffers: self
                .buffers
                .iter()
                .map(|b| (*b, buffers.get(b).map(|(_, t)| t.size()).unwrap_or(0)))
                .collect(),
            unique_session_name: self.config.unique_session_name.clone(),
            is_clone: self.kind == SessionKind::Clone,
        }
    }

    /// The trusted sequence id of (producer, writer), assigned on first use.
    pub fn sequence_id(&mut self, producer: u16, writer: u16) -> u32 {
        self.sequences.id(producer, writer)
    }
}

/// Why a flush was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FlushPurpose {
    /// A consumer's Flush call.
    Consumer(ConsumerId, RequestId),
    /// `flush_period_ms` or the file writer.
    Periodic,
    /// The flush before a stop (duration or DisableTracing with flush).
    Stop,
    /// The flush before a clone.
    Clone(ConsumerId, RequestId),
    /// The flush before a write into the file (`write_flush_mode`).
    BeforeWrite,
}

/// A flush sent to producers and not yet acknowledged by all.
pub(super) struct PendingFlush {
    pub session: SessionId,
    pub producers: BTreeSet<ProducerId>,
    pub purpose: FlushPurpose,
}

/// What a timer is for. Stale timers (their session gone or moved on) do
/// nothing when they fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    FlushTimeout(FlushRequestId),
    StopTimeout(SessionId),
    Duration(SessionId),
    FileWrite(SessionId),
    PeriodicFlush(SessionId),
    ClearIncrementalState(SessionId),
    TriggerTimeout(SessionId),
    TriggerStop(SessionId),
    /// A CLONE_SNAPSHOT trigger's hit, told to the consumer after the
    /// trigger's stop delay (the event waits in the `TriggerBook`).
    CloneTriggerHit(SessionId, u64),
    ClockSnapshot(SessionId),
}

impl Timer {
    pub fn session(&self) -> Option<SessionId> {
        match *self {
            Timer::FlushTimeout(_) => None,
            Timer::StopTimeout(s)
            | Timer::Duration(s)
            | Timer::FileWrite(s)
            | Timer::PeriodicFlush(s)
            | Timer::ClearIncrementalState(s)
            | Timer::TriggerTimeout(s)
            | Timer::TriggerStop(s)
            | Timer::CloneTriggerHit(s, _)
            | Timer::ClockSnapshot(s) => Some(s),
        }
    }
}
