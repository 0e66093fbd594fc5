//! Perfetto's `linux.perf` data source (its `traced_perf`): what a sampled
//! thread's registers and stack copy become once unwound and symbolized.
//!
//! * [`unwind`]: user-space stack unwinding (DWARF CFI or the frame-pointer
//!   chain) over `/proc/PID/maps` and the process's ELF files, and symbols.

pub mod unwind;
