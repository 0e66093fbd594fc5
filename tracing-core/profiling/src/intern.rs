//! A sequence's interned callstacks, as Perfetto's profilers intern them.

pub use zerotrace_core::profile_intern::{FrameDesc, Interner, MappingDesc, write_fixed};
