//! `TraceConfig.buffers`: the session's trace buffers as the service
//! sizes them, checked against the limits and the guardrails.

use zerotrace_protos::protos::TraceConfigDecoder;

use super::{ConfigError, Limits, invalid};

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

/// The `buffers` of `d`: each validated (size, fill policy, the
/// guardrails' multiple of 4 KiB), at least one, and within the session's
/// buffer limits (raised by `guardrail_overrides` where the guardrails
/// apply).
pub(super) fn parse_buffers(
    d: &TraceConfigDecoder<'_>,
    limits: &Limits,
    extra_guardrails: bool,
) -> Result<Vec<BufferSpec>, ConfigError> {
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
    }
    if total > limits.max_session_buffer_bytes {
        return Err(ConfigError::Limit(format!(
            "buffers total {total} bytes, at most {} per session (max_session_buffer_bytes)",
            limits.max_session_buffer_bytes
        )));
    }
    Ok(buffers)
}
