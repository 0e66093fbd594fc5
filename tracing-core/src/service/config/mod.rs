//! The TraceConfig as the service acts on it: the fields it interprets,
//! validated, with every limit breach an error naming the limit. The
//! consumer's bytes are kept whole: the `trace_config` packet and the
//! producers' DataSourceConfigs carry them as written, fields we do not
//! model included.
//!
//! `SessionConfig::parse` here reads the top level; each part of the
//! message with rules of its own is parsed beside it: `buffers.rs`,
//! `data_sources.rs`, `file.rs` (file sessions and `write_flush_mode`),
//! `triggers.rs`; `limits.rs` holds the service's limits, `rewrite.rs` the
//! DataSourceConfig producers receive, `fields.rs` the decision on every
//! upstream field.

mod buffers;
mod data_sources;
mod fields;
mod file;
mod limits;
mod rewrite;
mod triggers;

use zerotrace_protos::protos::TraceConfigDecoder;

pub use self::buffers::BufferSpec;
pub use self::data_sources::DataSourceSpec;
pub use self::fields::{CONFIG_FIELDS, FieldDecisions, Handling};
pub use self::limits::Limits;
pub use self::rewrite::{DataSourceOverrides, rewrite_data_source_config};
pub use self::triggers::{TriggerMode, TriggerSpec};

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
    /// A file session flushes before each write into the file
    /// (`write_flush_mode` ENABLED, or AUTO with a period over 5 s).
    pub flush_before_write: bool,
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
        let buffers = buffers::parse_buffers(&d, limits, extra_guardrails)?;
        if extra_guardrails && d.deferred_start().unwrap_or(false) {
            return Err(invalid(
                "deferred_start is not allowed with enable_extra_guardrails",
            ));
        }

        let data_sources = data_sources::parse_data_sources(&d, &buffers)?;

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

        let file = file::parse_file_settings(&d)?;

        let trig = triggers::parse_triggers(&d, duration_ms, max_duration, file.write_into_file)?;
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
            write_into_file: file.write_into_file,
            output_path: file.output_path,
            file_write_period_ms: file.file_write_period_ms,
            max_file_size_bytes: d.max_file_size_bytes().unwrap_or(0),
            deferred_start: d.deferred_start().unwrap_or(false),
            flush_period_ms: file.flush_period_ms,
            flush_before_write: file.flush_before_write,
            flush_timeout_ms: d.flush_timeout_ms().filter(|&t| t > 0).unwrap_or(5000),
            stop_timeout_ms: d
                .data_source_stop_timeout_ms()
                .filter(|&t| t > 0)
                .unwrap_or(5000),
            bugreport_score: d.bugreport_score().unwrap_or(0),
            trigger_mode: trig.mode,
            triggers: trig.triggers,
            trigger_timeout_ms: trig.timeout_ms,
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
