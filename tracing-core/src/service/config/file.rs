//! A session that writes into a file: `write_into_file`, `output_path`,
//! the write period, and the flushes `write_flush_mode` asks for.
//!
//! The rule is upstream's (`src/tracing/service/tracing_service_impl.cc`,
//! where EnableTracing reads `write_flush_mode`): AUTO (and UNSPECIFIED)
//! flushes every 5 s when the file is written at least that often, else
//! before every write; ENABLED flushes before every write; both ignore
//! `flush_period_ms`, which only DISABLED (and a session without a file)
//! keeps.

use zerotrace_protos::protos::TraceConfigDecoder;

use super::{ConfigError, invalid};

/// The default write period, which is also AUTO's periodic flush.
const DEFAULT_WRITE_PERIOD_MS: u32 = 5000;

/// What `d` says of writing the trace into a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileSettings {
    /// `write_into_file`.
    pub write_into_file: bool,
    /// `output_path`.
    pub output_path: Option<String>,
    /// `file_write_period_ms`, clamped (default 5000, minimum 100).
    pub file_write_period_ms: u32,
    /// Periodic flush interval (0 = none), after the write_flush_mode rule.
    pub flush_period_ms: u32,
    /// Each write into the file waits for a flush of the data sources
    /// first (upstream's "flush on write").
    pub flush_before_write: bool,
}

/// The file settings of `d`.
pub(super) fn parse_file_settings(d: &TraceConfigDecoder<'_>) -> Result<FileSettings, ConfigError> {
    let write_into_file = d.write_into_file().unwrap_or(false);
    let output_path = d.output_path().filter(|p| !p.is_empty()).map(str::to_owned);
    if output_path.is_some() && !write_into_file {
        return Err(invalid("output_path needs write_into_file"));
    }
    let file_write_period_ms = match d.file_write_period_ms().unwrap_or(0) {
        0 => DEFAULT_WRITE_PERIOD_MS,
        p => p.max(100),
    };
    let mut flush_period_ms = d.flush_period_ms().unwrap_or(0);
    let mut flush_before_write = false;
    let write_flush_mode = d.write_flush_mode_raw().unwrap_or(0);
    if write_into_file {
        match write_flush_mode {
            // AUTO, UNSPECIFIED.
            0 | 1 => {
                if file_write_period_ms <= DEFAULT_WRITE_PERIOD_MS {
                    flush_period_ms = DEFAULT_WRITE_PERIOD_MS;
                } else {
                    flush_period_ms = 0;
                    flush_before_write = true;
                }
            }
            // DISABLED: flush_period_ms as the config sets it.
            2 => {}
            // ENABLED.
            3 => {
                flush_period_ms = 0;
                flush_before_write = true;
            }
            m => return Err(invalid(format!("write_flush_mode {m}"))),
        }
    }
    Ok(FileSettings {
        write_into_file,
        output_path,
        file_write_period_ms,
        flush_period_ms,
        flush_before_write,
    })
}
