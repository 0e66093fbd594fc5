//! Perfetto's full upstream trace schema as protozero decoders, for fuzzing.
//!
//! Our own schema (`protos/proto`, crate `zerotrace-protos`) is a subset of
//! Perfetto's; the decoders must hold on anything, so the
//! `trace_full_schema` fuzz target runs the generated code of the whole
//! closure of upstream's `protos/perfetto/trace/trace.proto` (`Trace`,
//! `TracePacket` and every message they reach: ftrace events, Android,
//! Chrome, GPU, profiling, ...). `build.rs` generates it from the pinned
//! `perfetto_protos` crate at build time; nothing generated is committed.
//! [`walk::walk_trace`] reads a `Trace` through every field of every
//! message it reaches, generically over the generated types (instantiated
//! here: see its module docs).

// Formatted by prettyplease at generation time. Upstream's field names are
// not ours to restyle: a field `len` makes a decoder method `len()` that
// clippy would want an `is_empty()` beside.
#[rustfmt::skip]
#[allow(clippy::len_without_is_empty)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/generated/mod.rs"));
}

pub use generated::perfetto;

pub mod walk;

/// Shorthand for [`perfetto::protos`], the package of every upstream file.
pub use generated::perfetto::protos;
