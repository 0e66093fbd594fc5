//! Perfetto-compatible tracing core (shared memory ABI, TraceWriter, IPC, service).
