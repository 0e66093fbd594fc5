//! The TrackEvent API: categories, slices, instants, counters, flows and
//! tracks written as Perfetto `TrackEvent`s (issue #20; so far the category
//! rules, interning and the per-sequence event writer).

pub mod backend;
pub mod category;
pub mod event_writer;
pub mod in_process;
pub mod interning;
#[cfg(feature = "tracing")]
pub mod layer;

pub use backend::{CounterValue, SliceGuard, TrackEvent};
pub use category::{Category, CategoryFilter, glob};
pub use event_writer::{DebugValue, EventWriter, ThreadTrack, TrackSpec};
pub use in_process::{InProcessConfig, InProcessError, InProcessSession};
pub use interning::{InternKind, Interner};
#[cfg(feature = "tracing")]
pub use layer::PerfettoLayer;
