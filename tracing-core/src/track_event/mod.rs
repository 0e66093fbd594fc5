//! The TrackEvent API: categories, slices, instants, counters, flows and
//! tracks written as Perfetto `TrackEvent`s (issue #20; so far the category
//! rules).

pub mod category;

pub use category::{Category, CategoryFilter, glob};
