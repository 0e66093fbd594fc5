//! The trackers the parsers fill tables through: threads and processes,
//! tracks, slices, flows.

pub mod flows;
pub mod process;
pub mod profiler_samples;
pub mod sched;
pub mod slices;
pub mod stack_profile;
pub mod track_compressor;
pub mod tracks;
