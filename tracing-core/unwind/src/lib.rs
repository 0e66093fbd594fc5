//! User-space stack unwinding and symbols, for a sampler outside the
//! process (`linux.perf` in the probes: a sample's registers and stack
//! copy from the kernel) and for a profiler inside it (the heap profiler:
//! the allocating thread's own registers and stack): from registers and a
//! stack copy to frames leaf first, each with its mapping and `rel_pc` as
//! Perfetto's profile packets want them, and the error that stopped the
//! walk when it did not reach the root.
//!
//! The sampler builds a [`UserSample`] ([`UserRegs::from_perf_x86_64`] reads
//! the registers; [`X86_64_UNWIND_REGS_MASK`] is what to ask the kernel
//! for), calls [`Unwinder::unwind`] with the process's pid, writes each
//! [`UnwoundStack::callstack`] entry (the synthetic `"ERROR ..."` frame
//! included) and names functions with [`Unwinder::symbolize`]. It calls
//! [`Unwinder::forget_process`] on exec and exit, [`Unwinder::clear`] every
//! `unwind_state_clear_period_ms`, and reports [`Unwinder::stats`]. Every
//! file is read under a [`ProcRoot`] (`/`, or a recorded tree in tests and
//! benches), with a cap.
//!
//! Files: `proc_root.rs` (bounded reads under a root), `maps.rs`
//! (`/proc/PID/maps`), `regs.rs` and `stack.rs` (the
//! sample's inputs), `module_source.rs` (where ELF bytes come from),
//! `elf_module.rs` (what is kept of an ELF), `eh_frame_hdr_check.rs`
//! (whether its `.eh_frame_hdr` table is safe to search), `symbols.rs` and
//! `demangle.rs` (names), `module_cache.rs` (modules shared across
//! processes), `arch.rs` (framehop, x86-64 only), `frame_pointer.rs` (the
//! rbp chain), `process.rs` (one process's state and the unwind loop),
//! `frame.rs` (the output), `error.rs` (upstream's error kinds),
//! `jit_map.rs` (`/tmp/perf-PID.map`), `stats.rs`, and `unwinder.rs` (all
//! processes, and the maps re-read policy).

mod arch;
mod demangle;
mod eh_frame_hdr_check;
mod elf_module;
mod error;
mod frame;
mod frame_pointer;
mod jit_map;
mod maps;
mod module_cache;
mod module_source;
pub mod proc_root;
mod process;
mod regs;
mod section_data;
mod stack;
mod stats;
mod symbols;
mod unwinder;

pub use arch::SUPPORTED;
pub use demangle::demangle;
pub use elf_module::{ElfError, ElfModule, LoadSegment, SectionData};
pub use error::{UnwindErrorKind, UnwindFailure};
pub use frame::{CallstackEntry, Frame, FrameMapping, UnwoundStack};
pub use jit_map::JitMap;
pub use maps::{Mapping, MappingKind, MapsError, Perms, find, find_index, parse_line, parse_maps};
pub use module_cache::{ModuleCache, ModuleCacheStats, ModuleKey};
pub use proc_root::{ProcError, ProcRoot};
pub use process::{MAX_FRAMES, ProcessUnwinder, UnwindMode, read_maps, read_maps_text};
pub use regs::{
    PERF_REG_X86_BP, PERF_REG_X86_IP, PERF_REG_X86_SP, PERF_SAMPLE_REGS_ABI_32,
    PERF_SAMPLE_REGS_ABI_64, PERF_SAMPLE_REGS_ABI_NONE, RegsError, UserRegs,
    X86_64_UNWIND_REGS_MASK,
};
pub use stack::{StackCopy, StackReadError};
pub use stats::UnwindStats;
pub use symbols::{Symbol, SymbolTable};
pub use unwinder::{REREAD_COOLDOWN, Unwinder, UnwoundPcs, UserSample};
