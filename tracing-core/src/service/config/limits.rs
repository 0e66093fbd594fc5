//! The service's limits on what a TraceConfig may ask, all configurable,
//! with Perfetto's values as defaults.

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
    /// Buffer bytes of all sessions of one consumer uid together (not for
    /// the service's own uid): half the total, so that one user cannot
    /// take the whole budget. Perfetto has no such share; it bounds
    /// sessions per uid only, which with large buffers is no bound.
    pub max_buffer_bytes_per_uid: u64,
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
            max_buffer_bytes_per_uid: 2 << 30,
            guardrail_buffer_bytes: 128 << 20,
            guardrail_duration_ms: 24 * 3600 * 1000,
            guardrail_session_name_interval_ms: 5 * 60 * 1000,
            max_pending_flushes: 1000,
            max_data_sources_per_producer: 1024,
            max_writers_per_producer: 32767,
        }
    }
}
