//! The TraceConfig as the service acts on it: the fields it interprets,
//! validated, with every limit breach an error naming the limit. The
//! consumer's bytes are kept whole: the `trace_config` packet and the
//! producers' DataSourceConfigs carry them as written, fields we do not
//! model included.

mod fields;

use protozero::{Decoder, FieldValue, HeapWriter, Message};
use zerotrace_protos::protos::TraceConfigDecoder;

pub use self::fields::{CONFIG_FIELDS, FieldDecisions, Handling};

/// Service-wide limits, all configurable; the defaults are Perfetto's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Buffers per session.
    pub max_buffers_per_session: usize,
    /// Concurrent sessions in all.
    pub max_sessions: usize,
    /// Concurrent sessions per consumer uid.
    pub max_sessions_per_uid: usize,
    /// Longest `duration_ms`.
    pub max_duration_ms: u64,
    /// Buffer bytes of one session.
    pub max_session_buffer_bytes: u64,
    /// Buffer bytes of all sessions together.
    pub max_total_buffer_bytes: u64,
    /// Most buffer bytes of a session with `enable_extra_guardrails` (the
    /// config's `guardrail_overrides.max_tracing_buffer_size_kb` may raise
    /// it, never lower it).
    pub guardrail_buffer_bytes: u64,
    /// Longest duration with `enable_extra_guardrails`.
    pub guardrail_duration_ms: u64,
    /// With `enable_extra_guardrails`, a session may not reuse the
    /// `unique_session_name` (empty included) of one begun this recently.
    pub guardrail_session_name_interval_ms: u64,
    /// Pending flushes per session.
    pub max_pending_flushes: usize,
    /// Data sources per producer.
    pub max_data_sources_per_producer: usize,
    /// Trace writers per producer.
    pub max_writers_per_producer: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_buffers_per_session: 128,
            max_sessions: 15,
            max_sessions_per_uid: 5,
            max_duration_ms: 7 * 24 * 3600 * 1000,
            max_session_buffer_bytes: 2 << 30,
            max_total_buffer_bytes: 4 << 30,
            guardrail_buffer_bytes: 128 << 20,
            guardrail_duration_ms: 24 * 3600 * 1000,
            guardrail_session_name_interval_ms: 5 * 60 * 1000,
            max_pending_flushes: 1000,
            max_data_sources_per_producer: 1024,
            max_writers_per_producer: 32767,
        }
    }
}

/// One `buffers` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSpec {
    /// Size in bytes.
    pub size: usize,
    /// DISCARD instead of RING_BUFFER.
    pub discard: bool,
    /// `name`, which `target_buffer_name` refers to.
    pub name: Option<String>,
    /// `transfer_on_clone`.
    pub transfer_on_clone: bool,
    /// `clear_before_clone`.
    pub clear_before_clone: bool,
}

/// One `data_sources` entry.
#[derive(Debug, Clone)]
pub struct DataSourceSpec {
    /// The DataSourceConfig's bytes as the consumer wrote them.
    pub config: Vec<u8>,
    /// Its `name`.
    pub name: String,
    /// Index into `buffers` (from `target_buffer` or `target_buffer_name`).
    pub buffer_index: usize,
    /// `producer_name_filter`.
    pub producer_name_filter: Vec<String>,
    /// `producer_name_regex_filter`, compiled and anchored.
    pub producer_name_regex_filter: Vec<regex::Regex>,
    /// `machine_name_filter`.
    pub machine_name_filter: Vec<String>,
}

impl DataSourceSpec {
    /// Whether a producer named `producer` passes the name filters.
    pub fn matches_producer(&self, producer: &str) -> bool {
        self.producer_name_filter.is_empty() && self.producer_name_regex_filter.is_empty()
            || self.producer_name_filter.iter().any(|f| f == producer)
            || self
                .producer_name_regex_filter
                .iter()
                .any(|r| r.is_match(producer))
    }

    /// Whether a producer of the machine named `machine` (`local`: this
    /// one) gets it, by Perfetto's rules since v54: a `machine_name_filter`
    /// matches the machine's name, and "host" always matches this machine;
    /// without a filter only local producers get it, unless the session
    /// sets `trace_all_machines`.
    pub fn matches_machine(&self, machine: &str, local: bool, trace_all_machines: bool) -> bool {
        if self.machine_name_filter.is_empty() {
            return local || trace_all_machines;
        }
        self.machine_name_filter
            .iter()
            .any(|m| m == machine || local && m == "host")
    }
}

/// `trigger_config.trigger_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerMode {
    /// The session waits for a trigger to start its data sources.
    StartTracing,
    /// The session stops (after `stop_delay_ms`) on a trigger.
    StopTracing,
    /// A trigger tells the consumer to clone the session.
    CloneSnapshot,
}

/// One trigger of `trigger_config`.
#[derive(Debug, Clone)]
pub struct TriggerSpec {
    /// The trigger's name.
    pub name: String,
    /// Only producers whose name matches (anchored), if set.
    pub producer_name_regex: Option<regex::Regex>,
    /// Delay between the trigger and the stop.
    pub stop_delay_ms: u32,
    /// `max_per_24_h` (0 = no limit): hits of this trigger's name, across
    /// sessions, after which it is ignored for 24 hours.
    pub max_per_24_h: u32,
    /// `skip_probability`: the chance that a hit is ignored.
    pub skip_probability: f64,
}

/// The interpreted TraceConfig of a session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The consumer's bytes.
    pub raw: Vec<u8>,
    /// `buffers`.
    pub buffers: Vec<BufferSpec>,
    /// `data_sources`.
    pub data_sources: Vec<DataSourceSpec>,
    /// `trace_all_machines`: data sources without a `machine_name_filter`
    /// go to producers of every machine, not only this one's.
    pub trace_all_machines: bool,
    /// `duration_ms` (0 = until stopped).
    pub duration_ms: u32,
    /// `enable_extra_guardrails`.
    pub extra_guardrails: bool,
    /// `prefer_suspend_clock_for_duration`: `duration_ms` counts suspended
    /// time (BOOTTIME), not only time awake (MONOTONIC, the default).
    pub prefer_suspend_clock_for_duration: bool,
    /// `builtin_data_sources.prefer_suspend_clock_for_snapshot`: the
    /// periodic clock snapshot's timer counts suspended time.
    pub prefer_suspend_clock_for_snapshot: bool,
    /// `lockdown_mode` = LOCKDOWN_SET / LOCKDOWN_CLEAR.
    pub lockdown: Option<bool>,
    /// `producers`: (name, shm bytes, page bytes).
    pub producers: Vec<(String, usize, usize)>,
    /// `write_into_file`.
    pub write_into_file: bool,
    /// `output_path`.
    pub output_path: Option<String>,
    /// `file_write_period_ms`, clamped (default 5000, minimum 100).
    pub file_write_period_ms: u32,
    /// `max_file_size_bytes` (0 = no limit).
    pub max_file_size_bytes: u64,
    /// `deferred_start`.
    pub deferred_start: bool,
    /// Periodic flush interval (0 = none), after the write_flush_mode rule.
    pub flush_period_ms: u32,
    /// `flush_timeout_ms` (default 5000).
    pub flush_timeout_ms: u32,
    /// `data_source_stop_timeout_ms` (default 5000).
    pub stop_timeout_ms: u32,
    /// `bugreport_score`.
    pub bugreport_score: i32,
    /// `trigger_config`.
    pub trigger_mode: Option<TriggerMode>,
    /// `trigger_config.triggers`.
    pub triggers: Vec<TriggerSpec>,
    /// `trigger_config.trigger_timeout_ms`.
    pub trigger_timeout_ms: u32,
    /// `activate_triggers`.
    pub activate_triggers: Vec<String>,
    /// `incremental_state_config.clear_period_ms`.
    pub clear_period_ms: u32,
    /// `unique_session_name`.
    pub unique_session_name: Option<String>,
    /// Deflate the trace (`compression_type` or `compression { deflate }`).
    pub deflate: bool,
    /// `builtin_data_sources.disable_clock_snapshotting`.
    pub disable_clock_snapshotting: bool,
    /// `builtin_data_sources.disable_trace_config`.
    pub disable_trace_config: bool,
    /// `builtin_data_sources.disable_system_info`.
    pub disable_system_info: bool,
    /// `builtin_data_sources.disable_service_events`.
    pub disable_service_events: bool,
    /// `builtin_data_sources.disable_chunk_usage_histograms`.
    pub disable_chunk_usage_histograms: bool,
    /// `builtin_data_sources.primary_trace_clock` (0 = BOOTTIME).
    pub primary_trace_clock: u32,
    /// `builtin_data_sources.snapshot_interval_ms` (default 10 s).
    pub snapshot_interval_ms: u32,
    /// `trace_uuid_msb` / `trace_uuid_lsb`, when the consumer chose the uuid.
    pub trace_uuid: Option<u128>,
    /// `session_semaphores`: (name, max other sessions holding it).
    pub session_semaphores: Vec<(String, u64)>,
    /// `fflush_post_write` = FFLUSH_ENABLED.
    pub fflush_post_write: bool,
}

/// Why a TraceConfig was refused; the message goes to the consumer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The bytes are not a TraceConfig.
    #[error("malformed TraceConfig: {0}")]
    Malformed(String),
    /// A value is out of range.
    #[error("invalid TraceConfig: {0}")]
    Invalid(String),
    /// A limit is exceeded.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// A field Perfetto's service acts on that this service does not implement.
    #[error("TraceConfig field {0} is not supported by this service")]
    Unsupported(&'static str),
}

fn invalid(msg: impl Into<String>) -> ConfigError {
    ConfigError::Invalid(msg.into())
}

/// Compiles a Perfetto-style (whole-string) regex.
fn anchored(pattern: &str, what: &str) -> Result<regex::Regex, ConfigError> {
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| invalid(format!("{what} {pattern:?}: {e}")))
}

impl SessionConfig {
    /// Parses and validates `raw` against `limits`.
    pub fn parse(raw: &[u8], limits: &Limits) -> Result<SessionConfig, ConfigError> {
        let d = TraceConfigDecoder::new(raw);
        if let Some(e) = d.decode_error() {
            return Err(ConfigError::Malformed(e.to_string()));
        }
        // Fields Perfetto's service acts on under Linux that we do not do.
        if d.has_trace_filter() {
            return Err(ConfigError::Unsupported("trace_filter"));
        }
        if d.has_priority_boost() {
            return Err(ConfigError::Unsupported("priority_boost"));
        }
        if d.exclusive_prio().unwrap_or(0) != 0 {
            return Err(ConfigError::Unsupported("exclusive_prio"));
        }
        if let Some(b) = d.builtin_data_sources()
            && b.enable_concurrent_session_events().unwrap_or(false)
        {
            return Err(ConfigError::Unsupported(
                "builtin_data_sources.enable_concurrent_session_events",
            ));
        }
        let mut deflate = d.compression_type_raw().unwrap_or(0) == 1;
        if let Some(c) = d.compression() {
            if c.has_zstd() {
                return Err(ConfigError::Unsupported("compression.zstd"));
            }
            deflate |= c.has_deflate();
        }
        if let Some(t) = d.compression_type_raw()
            && !(0..=1).contains(&t)
        {
            return Err(invalid(format!("compression_type {t}")));
        }

        let extra_guardrails = d.enable_extra_guardrails().unwrap_or(false);
        let mut buffers = Vec::new();
        for b in d.buffers() {
            let size_kb = b.size_kb().unwrap_or(0);
            if size_kb == 0 {
                return Err(invalid(format!("buffers[{}].size_kb is 0", buffers.len())));
            }
            let discard = match b.fill_policy_raw().unwrap_or(0) {
                0 | 1 => false,
                2 => true,
                p => {
                    return Err(invalid(format!(
                        "buffers[{}].fill_policy {p}",
                        buffers.len()
                    )));
                }
            };
            let size = size_kb as u64 * 1024;
            if extra_guardrails && size_kb % 4 != 0 {
                return Err(invalid(format!(
                    "buffers[{}].size_kb {size_kb} is not a multiple of 4 (enable_extra_guardrails)",
                    buffers.len()
                )));
            }
            match b.experimental_mode_raw().unwrap_or(0) {
                0 => {}
                1 => return Err(ConfigError::Unsupported("buffers.experimental_mode")),
                m => {
                    return Err(invalid(format!(
                        "buffers[{}].experimental_mode {m}",
                        buffers.len()
                    )));
                }
            }
            if b.clear_before_clone().unwrap_or(false) {
                return Err(ConfigError::Unsupported("buffers.clear_before_clone"));
            }
            buffers.push(BufferSpec {
                size: size as usize,
                discard,
                name: b.name().filter(|n| !n.is_empty()).map(str::to_owned),
                transfer_on_clone: b.transfer_on_clone().unwrap_or(false),
                clear_before_clone: b.clear_before_clone().unwrap_or(false),
            });
        }
        if buffers.is_empty() {
            return Err(invalid("no buffers"));
        }
        if buffers.len() > limits.max_buffers_per_session {
            return Err(ConfigError::Limit(format!(
                "{} buffers, at most {} per session (max_buffers_per_session)",
                buffers.len(),
                limits.max_buffers_per_session
            )));
        }
        let total: u64 = buffers.iter().map(|b| b.size as u64).sum();
        if extra_guardrails {
            let raised = d
                .guardrail_overrides()
                .and_then(|g| g.max_tracing_buffer_size_kb())
                .unwrap_or(0) as u64
                * 1024;
            let max = limits.guardrail_buffer_bytes.max(raised);
            if total > max {
                return Err(ConfigError::Limit(format!(
                    "buffers total {} KiB, at most {} KiB with enable_extra_guardrails",
                    total / 1024,
                    max / 1024
                )));
            }
            if d.deferred_start().unwrap_or(false) {
                return Err(invalid(
                    "deferred_start is not allowed with enable_extra_guardrails",
                ));
            }
        }
        if total > limits.max_session_buffer_bytes {
            return Err(ConfigError::Limit(format!(
                "buffers total {total} bytes, at most {} per session (max_session_buffer_bytes)",
                limits.max_session_buffer_bytes
            )));
        }

        let mut data_sources = Vec::new();
        for (i, ds) in d.data_sources().enumerate() {
            let config = ds.config_bytes().unwrap_or(&[]);
            let cfg = ds
                .config()
                .ok_or_else(|| invalid(format!("data_sources[{i}] has no config")))?;
            let name = cfg
                .name()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid(format!("data_sources[{i}].config has no name")))?;
            let buffer_index = match cfg.target_buffer_name().filter(|n| !n.is_empty()) {
                Some(bn) => buffers
                    .iter()
                    .position(|b| b.name.as_deref() == Some(bn))
                    .ok_or_else(|| {
                        invalid(format!(
                            "data_sources[{i}].config.target_buffer_name {bn:?} names no buffer"
                        ))
                    })?,
                None => cfg.target_buffer().unwrap_or(0) as usize,
            };
            if buffer_index >= buffers.len() {
                return Err(invalid(format!(
                    "data_sources[{i}] ({name}) targets buffer {buffer_index}, the config has {}",
                    buffers.len()
                )));
            }
            // Perfetto's service runs a ProtoVM over the buffer for it.
            if cfg.has_protovm_config() {
                return Err(ConfigError::Unsupported(
                    "data_sources.config.protovm_config",
                ));
            }
            let mut regexes = Vec::new();
            for r in ds.producer_name_regex_filter() {
                regexes.push(anchored(r, "producer_name_regex_filter")?);
            }
            data_sources.push(DataSourceSpec {
                config: config.to_vec(),
                name: name.to_owned(),
                buffer_index,
                producer_name_filter: ds.producer_name_filter().map(str::to_owned).collect(),
                producer_name_regex_filter: regexes,
                machine_name_filter: ds.machine_name_filter().map(str::to_owned).collect(),
            });
        }

        let duration_ms = d.duration_ms().unwrap_or(0);
        let max_duration = if extra_guardrails {
            limits.guardrail_duration_ms
        } else {
            limits.max_duration_ms
        };
        if duration_ms as u64 > max_duration {
            return Err(ConfigError::Limit(format!(
                "duration_ms {duration_ms} exceeds {max_duration}{}",
                if extra_guardrails {
                    " with enable_extra_guardrails"
                } else {
                    ""
                }
            )));
        }

        let lockdown = match d.lockdown_mode_raw().unwrap_or(0) {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            m => return Err(invalid(format!("lockdown_mode {m}"))),
        };
        let mut producers = Vec::new();
        for p in d.producers() {
            producers.push((
                p.producer_name().unwrap_or("").to_owned(),
                p.shm_size_kb().unwrap_or(0) as usize * 1024,
                p.page_size_kb().unwrap_or(0) as usize * 1024,
            ));
        }

        let write_into_file = d.write_into_file().unwrap_or(false);
        let output_path = d.output_path().filter(|p| !p.is_empty()).map(str::to_owned);
        if output_path.is_some() && !write_into_file {
            return Err(invalid("output_path needs write_into_file"));
        }
        let file_write_period_ms = match d.file_write_period_ms().unwrap_or(0) {
            0 => 5000,
            p => p.max(100),
        };
        let mut flush_period_ms = d.flush_period_ms().unwrap_or(0);
        // write_flush_mode: with AUTO/UNSPECIFIED a file session flushes
        // every 5 s when it writes at least that often; DISABLED keeps
        // flush_period_ms; ENABLED flushes before every write.
        let write_flush_mode = d.write_flush_mode_raw().unwrap_or(0);
        if write_into_file {
            match write_flush_mode {
                0 | 1 if file_write_period_ms <= 5000 => flush_period_ms = 5000,
                3 => flush_period_ms = file_write_period_ms,
                0..=3 => {}
                m => return Err(invalid(format!("write_flush_mode {m}"))),
            }
        }

        let (mut trigger_mode, mut triggers, mut trigger_timeout_ms) = (None, Vec::new(), 0);
        if let Some(tc) = d.trigger_config() {
            trigger_mode = match tc.trigger_mode_raw().unwrap_or(0) {
                0 => None,
                1 => Some(TriggerMode::StartTracing),
                2 => Some(TriggerMode::StopTracing),
                4 => Some(TriggerMode::CloneSnapshot),
                m => return Err(invalid(format!("trigger_config.trigger_mode {m}"))),
            };
            for t in tc.triggers() {
                let name = t.name().unwrap_or("");
                if name.is_empty() {
                    return Err(invalid("trigger_config.triggers entry without a name"));
                }
                let producer_name_regex = match t.producer_name_regex().filter(|r| !r.is_empty()) {
                    Some(r) => Some(anchored(r, "trigger_config.triggers.producer_name_regex")?),
                    None => None,
                };
                let skip_probability = t.skip_probability().unwrap_or(0.0);
                if !(0.0..=1.0).contains(&skip_probability) {
                    return Err(invalid(format!(
                        "trigger_config.triggers.skip_probability {skip_probability} is not in [0, 1]"
                    )));
                }
                triggers.push(TriggerSpec {
                    name: name.to_owned(),
                    producer_name_regex,
                    stop_delay_ms: t.stop_delay_ms().unwrap_or(0),
                    max_per_24_h: t.max_per_24_h().unwrap_or(0),
                    skip_probability,
                });
            }
            // A config for services older than CLONE_SNAPSHOT: STOP_TRACING
            // there, CLONE_SNAPSHOT here (as Perfetto's).
            if tc.use_clone_snapshot_if_available().unwrap_or(false) {
                if trigger_mode != Some(TriggerMode::StopTracing) {
                    return Err(invalid(
                        "trigger_config.use_clone_snapshot_if_available needs trigger_mode STOP_TRACING",
                    ));
                }
                trigger_mode = Some(TriggerMode::CloneSnapshot);
            }
            trigger_timeout_ms = tc.trigger_timeout_ms().unwrap_or(0);
            if trigger_mode.is_some() && trigger_timeout_ms == 0 {
                return Err(invalid("trigger_config needs trigger_timeout_ms"));
            }
            // As Perfetto's: the timeout within the longest duration, no
            // duration of its own, one trigger per name, and no
            // STOP_TRACING or CLONE_SNAPSHOT session into a file.
            if trigger_mode.is_some() {
                if trigger_timeout_ms as u64 > max_duration {
                    return Err(ConfigError::Limit(format!(
                        "trigger_config.trigger_timeout_ms {trigger_timeout_ms} exceeds {max_duration}"
                    )));
                }
                if duration_ms != 0 {
                    return Err(invalid(
                        "duration_ms must not be set with a trigger_config (trigger_timeout_ms bounds it)",
                    ));
                }
                if write_into_file && trigger_mode != Some(TriggerMode::StartTracing) {
                    return Err(invalid(
                        "trigger_mode STOP_TRACING or CLONE_SNAPSHOT cannot write_into_file",
                    ));
                }
            }
            for (i, t) in triggers.iter().enumerate() {
                if triggers[..i].iter().any(|u| u.name == t.name) {
                    return Err(invalid(format!(
                        "trigger_config.triggers: duplicate trigger name {:?}",
                        t.name
                    )));
                }
            }
            if trigger_mode.is_none() && !triggers.is_empty() {
                return Err(invalid("trigger_config.triggers without a trigger_mode"));
            }
        }
        // Perfetto's service takes only [a-zA-Z0-9-_.] (the name becomes a
        // file name on Android; here it is only checked and kept).
        if let Some(name) = d.bugreport_filename()
            && !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c))
        {
            return Err(invalid(format!(
                "bugreport_filename {name:?} may use only [a-zA-Z0-9-_.]"
            )));
        }
        let builtin = d.builtin_data_sources();
        let flag = |f: fn(
            &zerotrace_protos::protos::trace_config::BuiltinDataSourceDecoder<'_>,
        ) -> Option<bool>| { builtin.as_ref().and_then(f).unwrap_or(false) };
        let trace_uuid = match (d.trace_uuid_msb(), d.trace_uuid_lsb()) {
            (None, None) => None,
            (msb, lsb) => {
                Some(((msb.unwrap_or(0) as u64 as u128) << 64) | lsb.unwrap_or(0) as u64 as u128)
            }
        };
        Ok(SessionConfig {
            raw: raw.to_vec(),
            buffers,
            data_sources,
            trace_all_machines: d.trace_all_machines().unwrap_or(false),
            duration_ms,
            extra_guardrails,
            prefer_suspend_clock_for_duration: d
                .prefer_suspend_clock_for_duration()
                .unwrap_or(false),
            prefer_suspend_clock_for_snapshot: flag(|b| b.prefer_suspend_clock_for_snapshot()),
            lockdown,
            producers,
            write_into_file,
            output_path,
            file_write_period_ms,
            max_file_size_bytes: d.max_file_size_bytes().unwrap_or(0),
            deferred_start: d.deferred_start().unwrap_or(false),
            flush_period_ms,
            flush_timeout_ms: d.flush_timeout_ms().filter(|&t| t > 0).unwrap_or(5000),
            stop_timeout_ms: d
                .data_source_stop_timeout_ms()
                .filter(|&t| t > 0)
                .unwrap_or(5000),
            bugreport_score: d.bugreport_score().unwrap_or(0),
            trigger_mode,
            triggers,
            trigger_timeout_ms,
            activate_triggers: d.activate_triggers().map(str::to_owned).collect(),
            clear_period_ms: d
                .incremental_state_config()
                .and_then(|c| c.clear_period_ms())
                .unwrap_or(0),
            unique_session_name: d
                .unique_session_name()
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
            deflate,
            disable_clock_snapshotting: flag(|b| b.disable_clock_snapshotting()),
            disable_trace_config: flag(|b| b.disable_trace_config()),
            disable_system_info: flag(|b| b.disable_system_info()),
            disable_service_events: flag(|b| b.disable_service_events()),
            disable_chunk_usage_histograms: flag(|b| b.disable_chunk_usage_histograms()),
            primary_trace_clock: builtin
                .as_ref()
                .and_then(|b| b.primary_trace_clock_raw())
                .filter(|&c| c > 0)
                .unwrap_or(6) as u32,
            snapshot_interval_ms: builtin
                .as_ref()
                .and_then(|b| b.snapshot_interval_ms())
                .filter(|&i| i > 0)
                .unwrap_or(10_000),
            trace_uuid,
            session_semaphores: d
                .session_semaphores()
                .map(|s| {
                    (
                        s.name().unwrap_or("").to_owned(),
                        s.max_other_session_count().unwrap_or(0),
                    )
                })
                .collect(),
            fflush_post_write: d.fflush_post_write_raw() == Some(2),
        })
    }

    /// Total buffer bytes.
    pub fn total_buffer_bytes(&self) -> u64 {
        self.buffers.iter().map(|b| b.size as u64).sum()
    }
}

/// The fields of a DataSourceConfig that the service sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSourceOverrides {
    /// `target_buffer` (2): the global buffer id.
    pub target_buffer: u32,
    /// `trace_duration_ms` (3).
    pub trace_duration_ms: u32,
    /// `tracing_session_id` (4).
    pub tracing_session_id: u64,
    /// `enable_extra_guardrails` (6).
    pub enable_extra_guardrails: bool,
    /// `stop_timeout_ms` (7).
    pub stop_timeout_ms: u32,
    /// `session_initiator` (8).
    pub session_initiator: i32,
    /// `prefer_suspend_clock_for_duration` (122): set (to true) only when
    /// the session prefers the suspend clock, as Perfetto's service does
    /// (an SDK hashing a startup config expects no new field otherwise).
    pub prefer_suspend_clock_for_duration: bool,
}

/// Field numbers of DataSourceConfig that the service sets.
const SERVICE_SET_FIELDS: [u32; 6] = [2, 3, 4, 6, 7, 8];

/// The DataSourceConfig a producer receives: the consumer's fields byte for
/// byte, in their order, without the ones the service sets, which follow.
pub fn rewrite_data_source_config(consumer: &[u8], o: &DataSourceOverrides) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut m: Message<'_> = w.root();
        let mut dec = Decoder::new(consumer);
        loop {
            let start = dec.offset();
            let Some(Ok(field)) = dec.read_field() else {
                break;
            };
            if SERVICE_SET_FIELDS.contains(&field.id)
                || field.id == 122 && o.prefer_suspend_clock_for_duration
            {
                continue;
            }
            if let FieldValue::Group(_) = field.value {
                continue;
            }
            m.append_raw_bytes(&consumer[start..dec.offset()]);
        }
        m.append_uint32(2, o.target_buffer);
        m.append_uint32(3, o.trace_duration_ms);
        m.append_uint64(4, o.tracing_session_id);
        m.append_bool(6, o.enable_extra_guardrails);
        m.append_uint32(7, o.stop_timeout_ms);
        m.append_enum(8, o.session_initiator);
        if o.prefer_suspend_clock_for_duration {
            m.append_bool(122, true);
        }
    }
    w.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_pass_through_in_order() {
        // name = "linux.ftrace" (1), ftrace_config (100, unmodelled bytes),
        // target_buffer = 1 (2), a field number nobody defines (7777).
        let mut w = HeapWriter::new();
        {
            let mut m = w.root();
            m.append_string(1, "linux.ftrace");
            m.append_bytes(100, b"\x0a\x0csched_switch");
            m.append_uint32(2, 1);
            m.append_bytes(7777, b"mine");
        }
        let consumer = w.finish().unwrap();
        let out = rewrite_data_source_config(
            &consumer,
            &DataSourceOverrides {
                target_buffer: 9,
                trace_duration_ms: 0,
                tracing_session_id: 3,
                enable_extra_guardrails: false,
                stop_timeout_ms: 5000,
                session_initiator: 0,
                prefer_suspend_clock_for_duration: false,
            },
        );
        let mut dec = Decoder::new(&out);
        let ids: Vec<u32> =
            std::iter::from_fn(|| dec.read_field().map(|f| f.unwrap().id)).collect();
        assert_eq!(ids, vec![1, 100, 7777, 2, 3, 4, 6, 7, 8]);
        let d = Decoder::new(&out);
        assert_eq!(
            d.find_last(100).unwrap().as_bytes().unwrap(),
            b"\x0a\x0csched_switch"
        );
        assert_eq!(d.find_last(2).unwrap().as_u32().unwrap(), 9);
    }
}
