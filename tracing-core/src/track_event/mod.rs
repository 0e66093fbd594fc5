//! The TrackEvent API: categories, slices, instants, counters, flows,
//! tracks and source locations written as Perfetto `TrackEvent`s, the
//! in-process and system backends, and (feature `tracing`) a
//! `tracing-subscriber` Layer.

pub mod backend;
pub mod category;
pub mod event_writer;
pub mod in_process;
pub mod interning;
#[cfg(feature = "tracing")]
pub mod layer;
mod names;

pub use backend::{CounterValue, SliceGuard, TrackEvent, emit_event};
pub use category::{Category, CategoryFilter, glob};
pub use event_writer::{DebugValue, EventKind, EventOptions, EventWriter, ThreadTrack, TrackSpec};
pub use in_process::{InProcessConfig, InProcessError, InProcessSession};
pub use interning::{Fresh, InternKind, Interner, SourceLocation};
#[cfg(feature = "tracing")]
pub use layer::PerfettoLayer;
