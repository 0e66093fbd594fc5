//! The trackers the parsers fill tables through: threads and processes,
//! tracks (and which track a TrackEvent goes on), slices, flows.

pub mod address_range;
pub mod flows;
pub mod heap_graph;
pub mod jit_cache;
pub mod process;
pub mod profiler_samples;
pub mod sched;
pub mod slice_args;
pub mod slices;
pub mod stack_profile;
pub mod task_state;
pub mod thread_counters;
pub mod track_compressor;
pub mod track_groups;
pub mod track_resolution;
pub mod track_scopes;
pub mod tracks;
