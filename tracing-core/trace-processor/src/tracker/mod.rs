//! The trackers the parsers fill tables through: threads and processes,
//! tracks, slices.

pub mod process;
pub mod profiler_samples;
pub mod slices;
pub mod stack_profile;
pub mod tracks;
