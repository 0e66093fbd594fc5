//! The trace processor's Chrome JSON reader on any bytes: the input
//! follows `[{"` (so the loader takes it for JSON whatever it holds) and
//! goes through the `trace_processor` target's invariants (no panic; the
//! same tables or the same error whether pushed at once or in small
//! chunks; an error's offset inside the input; every table answers) and
//! `trace_processor_time`'s (work linear in the bytes).

/// The `json_trace` target: the input is the rest of a JSON trace.
pub fn json_trace(data: &[u8]) {
    let mut trace = b"[{\"".to_vec();
    trace.extend_from_slice(data);
    crate::trace_processor(&trace);
    crate::trace_processor_time(&trace);
}
