//! The trackers the parsers fill tables through: threads and processes,
//! tracks, slices.

pub mod process;
pub mod sched;
pub mod slices;
pub mod tracks;
