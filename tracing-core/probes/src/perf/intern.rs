//! A sequence's interned callstacks, as Perfetto's profilers intern them:
//! the one interner the CPU and heap profilers share
//! (`zerotrace_profiling::intern`), re-exported here.

pub use zerotrace_profiling::intern::{FrameDesc, Interner, MappingDesc, write_fixed};
