//! The TrackEvent API: categories, slices, instants, counters, flows,
//! tracks and source locations written as Perfetto `TrackEvent`s, the
//! in-process and system backends, and (feature `tracing`) a
//! `tracing-subscriber` Layer.

mod backend;
mod callsite;
mod category;
mod debug_value;
mod event_writer;
#[cfg(feature = "service")]
mod in_process;
mod interning;
#[cfg(feature = "tracing")]
mod layer;
#[cfg(feature = "tracing")]
mod layer_fields;
mod names;
mod options;
mod site_cache;
mod site_packet;
mod small_values;
#[cfg(feature = "tracing")]
mod span_table;
mod tracks;

// The API: categories, the macros' backend, and the system backend that
// registers with a producer connected to a tracing service (`TrackEvent::register`).
pub use backend::{CounterValue, SliceGuard, TrackEvent};
pub use category::{Category, CategoryFilter};
pub use interning::SourceLocation;

// One sequence's TrackEvent packets, written by hand.
pub use debug_value::DebugValue;
pub use event_writer::{EventKind, EventWriter};
pub use interning::{Fresh, InternKind, Interner};
pub use options::EventOptions;
pub use tracks::{ThreadTrack, TrackSpec};

// The in-process backend: the service on a thread of this process.
#[cfg(feature = "service")]
pub use in_process::{InProcessConfig, InProcessError, InProcessSession};

// A `tracing-subscriber` Layer over the same writers.
#[cfg(feature = "tracing")]
pub use layer::PerfettoLayer;

/// What the `trace_*!` macros expand to: not part of the API, may change in
/// any release.
#[doc(hidden)]
pub mod __private {
    pub use super::backend::{emit_at_site, emit_event, end_fast};
    pub use super::callsite::Callsite;
}
