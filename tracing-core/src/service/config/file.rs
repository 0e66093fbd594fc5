//! A session that writes into a file: `write_into_file`, `output_path`,
//! the write period, and the periodic flush `write_flush_mode` asks for.

use zerotrace_protos::protos::TraceConfigDecoder;

use super::{ConfigError, invalid};

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
}

/// The file settings of `d`.
pub(super) fn parse_file_settings(d: &TraceConfigDecoder<'_>) -> Result<FileSettings, ConfigError> {
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
    Ok(FileSettings {
        write_into_file,
        output_path,
        file_write_period_ms,
        flush_period_ms,
    })
}
