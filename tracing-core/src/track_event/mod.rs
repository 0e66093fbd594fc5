//! The TrackEvent API: categories, slices, instants, counters, flows and
//! tracks written as Perfetto `TrackEvent`s (issue #20; so far the category
//! rules, interning and the per-sequence event writer).

pub mod category;
pub mod event_writer;
pub mod interning;

pub use category::{Category, CategoryFilter, glob};
pub use event_writer::{DebugValue, EventWriter, ThreadTrack};
pub use interning::{InternKind, Interner};
