//! The TrackEvent API: categories, slices, instants, counters, flows and
//! tracks written as Perfetto `TrackEvent`s (issue #20; so far the category
//! rules, interning and the per-sequence event writer).

#[cfg(target_os = "linux")]
pub mod backend;
pub mod category;
pub mod event_writer;
#[cfg(target_os = "linux")]
pub mod in_process;
pub mod interning;
#[cfg(all(target_os = "linux", feature = "tracing"))]
pub mod layer;

#[cfg(target_os = "linux")]
pub use backend::{CounterValue, SliceGuard, TrackEvent, emit_event};
pub use category::{Category, CategoryFilter, glob};
pub use event_writer::{DebugValue, EventKind, EventOptions, EventWriter, ThreadTrack, TrackSpec};
#[cfg(target_os = "linux")]
pub use in_process::{InProcessConfig, InProcessError, InProcessSession};
pub use interning::{Fresh, InternKind, Interner, SourceLocation};
#[cfg(all(target_os = "linux", feature = "tracing"))]
pub use layer::PerfettoLayer;
