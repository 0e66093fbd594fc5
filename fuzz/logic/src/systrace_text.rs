//! The trace processor's systrace text reader on any bytes: the input
//! follows a `# tracer` header line (so the loader takes it for systrace
//! whatever it holds) and goes through the `trace_processor` target's
//! invariants (no panic; the same tables or the same error whether pushed
//! at once or in small chunks; every table answers) and
//! `trace_processor_time`'s (work linear in the bytes).

/// The `systrace_text` target: the input is the text after the header.
pub fn systrace_text(data: &[u8]) {
    let mut trace = b"# tracer: nop\n".to_vec();
    trace.extend_from_slice(data);
    crate::trace_processor(&trace);
    crate::trace_processor_time(&trace);
}
