//! A sequence's interned callstacks, as Perfetto's profilers intern them:
//! the one interner zerotrace-core's CPU and heap profilers share
//! (`zerotrace_core::profile_intern`), re-exported here.

pub use zerotrace_core::profile_intern::{FrameDesc, Interner, MappingDesc, write_fixed};
