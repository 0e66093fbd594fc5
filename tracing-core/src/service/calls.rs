//! The calls a producer or consumer can make, decoded from an IPC method
//! name and its argument bytes into owned values. Decoding never panics;
//! a malformed argument is a [`CallError`] that the IPC layer turns into a
//! rejected reply.

use protozero::DecodeError;
use zerotrace_protos::protos::{
    ActivateTriggersRequestDecoder, AttachRequestDecoder, ChangeTraceConfigRequestDecoder,
    CloneSessionRequestDecoder, DataSourceDescriptorDecoder, DetachRequestDecoder,
    EnableTracingRequestDecoder, FlushRequestDecoder, FreeBuffersRequestDecoder,
    InitRelayRequestDecoder, InitializeConnectionRequestDecoder,
    NotifyDataSourceStartedRequestDecoder, NotifyDataSourceStoppedRequestDecoder,
    ObserveEventsRequestDecoder, QueryServiceStateRequestDecoder, RegisterDataSourceRequestDecoder,
    RegisterTraceWriterRequestDecoder, SyncClockRequestDecoder, UnregisterDataSourceRequestDecoder,
    UnregisterTraceWriterRequestDecoder, UpdateDataSourceRequestDecoder,
};

use crate::protocol::{CONSUMER_METHODS, PRODUCER_METHODS, RELAY_METHODS};
use crate::protocol::{CommitDataRequest, CommitDecodeError};
use crate::service::env::ClockReading;

/// Why a call could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The service has no method of that name.
    #[error("unknown method {0:?}")]
    UnknownMethod(String),
    /// The arguments are not a valid message.
    #[error("malformed arguments of {method}: {error}")]
    Malformed {
        /// The method called.
        method: &'static str,
        /// What the decoder found.
        error: DecodeError,
    },
    /// A required argument is missing.
    #[error("{method}: missing {field}")]
    Missing {
        /// The method called.
        method: &'static str,
        /// The missing field.
        field: &'static str,
    },
    /// A `CommitDataRequest` failed to decode.
    #[error("malformed CommitData: {0}")]
    Commit(#[from] CommitDecodeError),
}

/// A data source as a producer describes it (`DataSourceDescriptor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSourceDescriptor {
    /// The data source's name, e.g. `track_event`.
    pub name: String,
    /// The producer's id for it (SDK ≥ v30), 0 if none.
    pub id: u64,
    /// Stop waits for `NotifyDataSourceStopped`.
    pub will_notify_on_stop: bool,
    /// Start waits for `NotifyDataSourceStarted`.
    pub will_notify_on_start: bool,
    /// It re-emits incremental state on request.
    pub handles_incremental_state_clear: bool,
    /// Flush requests are not sent to it.
    pub no_flush: bool,
    /// The descriptor's bytes as the producer sent them (for service state).
    pub raw: Vec<u8>,
}

impl DataSourceDescriptor {
    /// Decodes a descriptor.
    pub fn decode(raw: &[u8], method: &'static str) -> Result<DataSourceDescriptor, CallError> {
        let d = DataSourceDescriptorDecoder::new(raw);
        check(d.decode_error(), method)?;
        let name = d
            .name()
            .filter(|n| !n.is_empty())
            .ok_or(CallError::Missing {
                method,
                field: "data_source_descriptor.name",
            })?;
        Ok(DataSourceDescriptor {
            name: name.to_owned(),
            id: d.id().unwrap_or(0),
            will_notify_on_stop: d.will_notify_on_stop().unwrap_or(false),
            will_notify_on_start: d.will_notify_on_start().unwrap_or(false),
            handles_incremental_state_clear: d.handles_incremental_state_clear().unwrap_or(false),
            no_flush: d.no_flush().unwrap_or(false),
            raw: raw.to_vec(),
        })
    }
}

/// A ProducerPort call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProducerCall {
    /// `InitializeConnection`.
    InitializeConnection {
        /// Page size hint in bytes (0 = the service's default).
        page_size_hint: u32,
        /// SMB size hint in bytes (0 = the service's default).
        smb_size_hint: u32,
        /// The producer's name.
        name: String,
        /// `smb_scraping_mode`: 0 unspecified, 1 enabled, 2 disabled.
        smb_scraping_mode: i32,
        /// The producer passed its own SMB with this call.
        producer_provided_shmem: bool,
        /// The producer's SDK version string.
        sdk_version: String,
    },
    /// `RegisterDataSource`.
    RegisterDataSource(DataSourceDescriptor),
    /// `UpdateDataSource`.
    UpdateDataSource(DataSourceDescriptor),
    /// `UnregisterDataSource`.
    UnregisterDataSource {
        /// The data source's name.
        name: String,
    },
    /// `CommitData`.
    CommitData(CommitDataRequest),
    /// `GetAsyncCommand`: the stream the service sends commands on.
    GetAsyncCommand,
    /// `RegisterTraceWriter`.
    RegisterTraceWriter {
        /// The writer id.
        writer_id: u32,
        /// The global buffer id it writes into.
        target_buffer: u32,
    },
    /// `UnregisterTraceWriter`.
    UnregisterTraceWriter {
        /// The writer id.
        writer_id: u32,
    },
    /// `NotifyDataSourceStarted`.
    NotifyDataSourceStarted {
        /// The instance id from `start_data_source`.
        instance_id: u64,
    },
    /// `NotifyDataSourceStopped`.
    NotifyDataSourceStopped {
        /// The instance id from `stop_data_source`.
        instance_id: u64,
    },
    /// `ActivateTriggers`.
    ActivateTriggers {
        /// Trigger names.
        names: Vec<String>,
    },
    /// `Sync`: a fence, answered once everything before it is handled.
    Sync,
    /// RelayPort's `InitRelay`: the relay's machine, described once.
    InitRelay {
        /// The machine's `SystemInfo`, encoded (empty when not sent).
        system_info: Vec<u8>,
    },
    /// RelayPort's `SyncClock`: the relay's clocks as it sent the call.
    SyncClock {
        /// `SyncClockRequest.phase` (1 PING, 2 UPDATE; 0 when absent).
        phase: i32,
        /// The relay's readings.
        clocks: Vec<ClockReading>,
    },
}

impl ProducerCall {
    /// Whether the call is RelayPort's (a relay's own connection), not
    /// ProducerPort's.
    pub fn is_relay(&self) -> bool {
        matches!(
            self,
            ProducerCall::InitRelay { .. } | ProducerCall::SyncClock { .. }
        )
    }
}

/// Most clock readings kept of one SyncClock call (a relay sends seven).
pub const MAX_SYNC_CLOCKS: usize = 32;

fn check(err: Option<DecodeError>, method: &'static str) -> Result<(), CallError> {
    match err {
        Some(error) => Err(CallError::Malformed { method, error }),
        None => Ok(()),
    }
}

fn method_name(name: &str, table: &[&'static str]) -> Result<&'static str, CallError> {
    table
        .iter()
        .copied()
        .find(|m| *m == name)
        .ok_or_else(|| CallError::UnknownMethod(name.chars().take(64).collect()))
}

impl ProducerCall {
    /// Decodes a call of `method` with argument bytes `args`.
    pub fn decode(method: &str, args: &[u8]) -> Result<ProducerCall, CallError> {
        let m = method_name(method, &PRODUCER_METHODS)
            .or_else(|_| method_name(method, &RELAY_METHODS))?;
        Ok(match m {
            "InitRelay" => {
                let d = InitRelayRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::InitRelay {
                    system_info: d.system_info_bytes().unwrap_or_default().to_vec(),
                }
            }
            "SyncClock" => {
                let d = SyncClockRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                let mut clocks = Vec::new();
                for c in d.clocks() {
                    check(c.decode_error(), m)?;
                    if clocks.len() < MAX_SYNC_CLOCKS
                        && let (Some(clock_id), Some(timestamp)) = (c.clock_id(), c.timestamp())
                    {
                        clocks.push(ClockReading {
                            clock_id,
                            timestamp,
                        });
                    }
                }
                ProducerCall::SyncClock {
                    phase: d.phase_raw().unwrap_or(0),
                    clocks,
                }
            }
            "InitializeConnection" => {
                let d = InitializeConnectionRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::InitializeConnection {
                    page_size_hint: d.shared_memory_page_size_hint_bytes().unwrap_or(0),
                    smb_size_hint: d.shared_memory_size_hint_bytes().unwrap_or(0),
                    name: d.producer_name().unwrap_or("").to_owned(),
                    smb_scraping_mode: d.smb_scraping_mode_raw().unwrap_or(0),
                    producer_provided_shmem: d.producer_provided_shmem().unwrap_or(false),
                    sdk_version: d.sdk_version().unwrap_or("").to_owned(),
                }
            }
            "RegisterDataSource" => {
                let d = RegisterDataSourceRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                let raw = d.data_source_descriptor_bytes().ok_or(CallError::Missing {
                    method: m,
                    field: "data_source_descriptor",
                })?;
                ProducerCall::RegisterDataSource(DataSourceDescriptor::decode(raw, m)?)
            }
            "UpdateDataSource" => {
                let d = UpdateDataSourceRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                let raw = d.data_source_descriptor_bytes().ok_or(CallError::Missing {
                    method: m,
                    field: "data_source_descriptor",
                })?;
                ProducerCall::UpdateDataSource(DataSourceDescriptor::decode(raw, m)?)
            }
            "UnregisterDataSource" => {
                let d = UnregisterDataSourceRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::UnregisterDataSource {
                    name: d.data_source_name().unwrap_or("").to_owned(),
                }
            }
            "CommitData" => ProducerCall::CommitData(CommitDataRequest::decode(args)?),
            "GetAsyncCommand" => ProducerCall::GetAsyncCommand,
            "RegisterTraceWriter" => {
                let d = RegisterTraceWriterRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::RegisterTraceWriter {
                    writer_id: d.trace_writer_id().unwrap_or(0),
                    target_buffer: d.target_buffer().unwrap_or(0),
                }
            }
            "UnregisterTraceWriter" => {
                let d = UnregisterTraceWriterRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::UnregisterTraceWriter {
                    writer_id: d.trace_writer_id().unwrap_or(0),
                }
            }
            "NotifyDataSourceStarted" => {
                let d = NotifyDataSourceStartedRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::NotifyDataSourceStarted {
                    instance_id: d.data_source_id().unwrap_or(0),
                }
            }
            "NotifyDataSourceStopped" => {
                let d = NotifyDataSourceStoppedRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::NotifyDataSourceStopped {
                    instance_id: d.data_source_id().unwrap_or(0),
                }
            }
            "ActivateTriggers" => {
                let d = ActivateTriggersRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ProducerCall::ActivateTriggers {
                    names: d.trigger_names().map(str::to_owned).collect(),
                }
            }
            _ => ProducerCall::Sync,
        })
    }
}

/// `CloneSession` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CloneArgs {
    /// The session to clone (`u64::MAX`: the one with the highest bugreport score).
    pub session_id: Option<u64>,
    /// Or the session with this `unique_session_name`.
    pub unique_session_name: Option<String>,
    /// Clone without applying the trace filter. Nothing to skip here: this
    /// service refuses `trace_filter`, so a clone is never filtered.
    pub skip_trace_filter: bool,
    /// A bugreport clone: the clone's flush carries the bugreport clone
    /// target in its `FlushFlags`, as Perfetto's.
    pub for_bugreport: bool,
    /// The CLONE_SNAPSHOT trigger this clone answers (its
    /// `clone_trigger_*` fields, when `clone_trigger_name` is set): the
    /// clone's trace says which trigger cut it.
    pub clone_trigger: Option<CloneTrigger>,
}

/// The trigger behind a clone, as the consumer relays it from the
/// `clone_trigger_hit` event it observed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CloneTrigger {
    /// The trigger's name.
    pub name: String,
    /// The name of the producer that activated it.
    pub producer_name: String,
    /// That producer's uid.
    pub producer_uid: i32,
    /// When the service received the trigger (boot time, ns).
    pub boot_time_ns: u64,
    /// The trigger's `stop_delay_ms`.
    pub delay_ms: u64,
}

/// A ConsumerPort call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerCall {
    /// `EnableTracing`.
    EnableTracing {
        /// The encoded `TraceConfig`.
        config: Vec<u8>,
        /// Only re-attach to get the end-of-session notification.
        attach_notification_only: bool,
    },
    /// `DisableTracing`.
    DisableTracing,
    /// `ReadBuffers`.
    ReadBuffers,
    /// `FreeBuffers`.
    FreeBuffers,
    /// `Flush`.
    Flush {
        /// Give up after this long (0 = the session's `flush_timeout_ms`).
        timeout_ms: u32,
        /// `FlushFlags` bits.
        flags: u64,
    },
    /// `StartTracing` (for a `deferred_start` session).
    StartTracing,
    /// `ChangeTraceConfig`.
    ChangeTraceConfig {
        /// The encoded new `TraceConfig`.
        config: Vec<u8>,
    },
    /// `Detach`.
    Detach {
        /// The key to attach again with.
        key: String,
    },
    /// `Attach`.
    Attach {
        /// The key the session was detached with.
        key: String,
    },
    /// `GetTraceStats`.
    GetTraceStats,
    /// `ObserveEvents`.
    ObserveEvents {
        /// `ObservableEvents.Type` numbers.
        types: Vec<i32>,
    },
    /// `QueryServiceState`.
    QueryServiceState {
        /// Only sessions, no producers or data sources.
        sessions_only: bool,
    },
    /// `QueryCapabilities`.
    QueryCapabilities,
    /// `SaveTraceForBugreport` (deprecated).
    SaveTraceForBugreport,
    /// `CloneSession`.
    CloneSession(CloneArgs),
}

impl ConsumerCall {
    /// Decodes a call of `method` with argument bytes `args`.
    pub fn decode(method: &str, args: &[u8]) -> Result<ConsumerCall, CallError> {
        let m = method_name(method, &CONSUMER_METHODS)?;
        Ok(match m {
            "EnableTracing" => {
                let d = EnableTracingRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::EnableTracing {
                    config: d.trace_config_bytes().unwrap_or(&[]).to_vec(),
                    attach_notification_only: d.attach_notification_only().unwrap_or(false),
                }
            }
            "DisableTracing" => ConsumerCall::DisableTracing,
            "ReadBuffers" => ConsumerCall::ReadBuffers,
            "FreeBuffers" => {
                let d = FreeBuffersRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::FreeBuffers
            }
            "Flush" => {
                let d = FlushRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::Flush {
                    timeout_ms: d.timeout_ms().unwrap_or(0),
                    flags: d.flags().unwrap_or(0),
                }
            }
            "StartTracing" => ConsumerCall::StartTracing,
            "ChangeTraceConfig" => {
                let d = ChangeTraceConfigRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::ChangeTraceConfig {
                    config: d.trace_config_bytes().unwrap_or(&[]).to_vec(),
                }
            }
            "Detach" => {
                let d = DetachRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::Detach {
                    key: d.key().unwrap_or("").to_owned(),
                }
            }
            "Attach" => {
                let d = AttachRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::Attach {
                    key: d.key().unwrap_or("").to_owned(),
                }
            }
            "GetTraceStats" => ConsumerCall::GetTraceStats,
            "ObserveEvents" => {
                let d = ObserveEventsRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::ObserveEvents {
                    types: d.events_to_observe_raw().collect(),
                }
            }
            "QueryServiceState" => {
                let d = QueryServiceStateRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::QueryServiceState {
                    sessions_only: d.sessions_only().unwrap_or(false),
                }
            }
            "QueryCapabilities" => ConsumerCall::QueryCapabilities,
            "SaveTraceForBugreport" => ConsumerCall::SaveTraceForBugreport,
            _ => {
                let d = CloneSessionRequestDecoder::new(args);
                check(d.decode_error(), m)?;
                ConsumerCall::CloneSession(CloneArgs {
                    session_id: d.session_id(),
                    unique_session_name: d.unique_session_name().map(str::to_owned),
                    skip_trace_filter: d.skip_trace_filter().unwrap_or(false),
                    for_bugreport: d.for_bugreport().unwrap_or(false),
                    clone_trigger: d
                        .clone_trigger_name()
                        .filter(|n| !n.is_empty())
                        .map(|name| CloneTrigger {
                            name: name.to_owned(),
                            producer_name: d.clone_trigger_producer_name().unwrap_or("").to_owned(),
                            producer_uid: d.clone_trigger_trusted_producer_uid().unwrap_or(0),
                            boot_time_ns: d.clone_trigger_boot_time_ns().unwrap_or(0),
                            delay_ms: d.clone_trigger_delay_ms().unwrap_or(0),
                        }),
                })
            }
        })
    }
}
