//! The sampler's entry point: every sampled process's unwinding state by
//! pid, the modules they share, and the policy around them. A process's
//! state is built on its first sample; when an unwind meets a pc in no
//! mapping, `/proc/PID/maps` is read again and the sample unwound once
//! more (`traced_perf` does the same, and likewise skips the re-read when
//! the stack copy was cut at its maximum, where such an error is
//! expected). Where `traced_perf` re-reads on every such sample, a re-read that
//! finds the maps unchanged holds off the next [`REREAD_COOLDOWN`] (a pc
//! in no mapping is then garbage from a broken chain, not a new library).
//! The sampler drops a process's state on exec and exit, and
//! everything on [`Unwinder::clear`] every `unwind_state_clear_period_ms`.

use std::collections::HashMap;

use crate::ProcRoot;

use super::arch::DwarfCache;
use super::error::{UnwindErrorKind, UnwindFailure};
use super::frame::{Frame, UnwoundStack};
use super::module_cache::ModuleCache;
use super::process::{FrameSink, ProcessUnwinder, UnwindMode, read_maps_text};
use super::stack::StackCopy;

/// After a re-read of `/proc/PID/maps` found them unchanged, how many more
/// samples of that process with a pc in no mapping are reported without
/// reading them again (each read costs tens of microseconds).
pub const REREAD_COOLDOWN: u32 = 64;
use super::regs::UserRegs;
use super::stats::UnwindStats;
use super::symbols::Symbol;

/// One sample's user-space state.
#[derive(Debug, Clone, Copy)]
pub struct UserSample<'a> {
    /// The sampled registers.
    pub regs: UserRegs,
    /// The stack copy's valid bytes (`dyn_size` of them), from `regs.sp`.
    pub stack: &'a [u8],
    /// Whether the copy filled the whole `sample_stack_user` size (so the
    /// stack was probably cut and an error near its end is expected).
    pub stack_maxed: bool,
}

/// What [`Unwinder::unwind_pcs`] says beside the pcs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnwoundPcs {
    /// `UNWIND_ERROR_NONE` for a stack walked to its root, else why it
    /// stopped.
    pub error: UnwindErrorKind,
    /// Whether `/proc/PID/maps` was read again for this sample.
    pub maps_reread: bool,
}

/// Unwinding state of all sampled processes.
pub struct Unwinder {
    proc: ProcRoot,
    modules: ModuleCache,
    processes: HashMap<u32, ProcessUnwinder>,
    cache: DwarfCache,
    stats: UnwindStats,
}

impl std::fmt::Debug for Unwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unwinder")
            .field("proc", &self.proc)
            .field("processes", &self.processes.len())
            .field("modules", &self.modules.len())
            .finish_non_exhaustive()
    }
}

impl Default for Unwinder {
    fn default() -> Self {
        Self::new()
    }
}

impl Unwinder {
    /// An unwinder over the running system's `/proc`.
    pub fn new() -> Self {
        Self::with_proc_root(ProcRoot::system())
    }

    /// An unwinder reading `proc/PID/...` under `proc` (tests).
    pub fn with_proc_root(proc: ProcRoot) -> Self {
        Unwinder {
            proc,
            modules: ModuleCache::new(),
            processes: HashMap::new(),
            cache: DwarfCache::new(),
            stats: UnwindStats::default(),
        }
    }

    /// Unwinds one sample of process `pid`.
    pub fn unwind(&mut self, pid: u32, sample: &UserSample<'_>, mode: UnwindMode) -> UnwoundStack {
        let mut frames = Vec::new();
        let out = if mode == UnwindMode::Skip {
            UnwoundStack::complete(frames)
        } else {
            let stack = StackCopy::new(sample.regs.sp, sample.stack);
            let (failure, maps_reread) =
                self.with_maps_reread(pid, sample.stack_maxed, &mut frames, |p, cache, out| {
                    p.unwind_into(cache, sample.regs, &stack, mode, out)
                });
            let mut out = UnwoundStack::of(frames, failure);
            out.maps_reread = maps_reread;
            out
        };
        self.stats.count(out.error);
        out
    }

    /// As [`Unwinder::unwind`], for a caller that keeps what it knows of
    /// each pc: the frames' pcs only, leaf first, into `pcs` (cleared
    /// first), as they were before the one-byte step back of return
    /// addresses ([`Unwinder::frame_of`] makes a pc's [`Frame`]); no
    /// frame is built, nothing is allocated once `pcs` has grown. `stack`
    /// may be read in place ([`StackCopy::shared`]).
    pub fn unwind_pcs(
        &mut self,
        pid: u32,
        regs: UserRegs,
        stack: &StackCopy<'_>,
        stack_maxed: bool,
        mode: UnwindMode,
        pcs: &mut Vec<u64>,
    ) -> UnwoundPcs {
        pcs.clear();
        let (failure, maps_reread) = if mode == UnwindMode::Skip {
            (None, false)
        } else {
            self.with_maps_reread(pid, stack_maxed, pcs, |p, cache, out| {
                p.unwind_into(cache, regs, stack, mode, out)
            })
        };
        let error = failure.map_or(UnwindErrorKind::None, |f| f.kind());
        self.stats.count(error);
        UnwoundPcs { error, maps_reread }
    }

    /// The frame an unwind of `pid` gives for `pc`, as [`Unwinder::unwind_pcs`]
    /// gave it (`is_return`: past the first frame), in the process's
    /// mappings as they now stand.
    pub fn frame_of(&self, pid: u32, pc: u64, is_return: bool) -> Frame {
        match self.processes.get(&pid) {
            Some(p) => p.frame_of(pc, is_return),
            None => Frame {
                pc,
                rel_pc: pc,
                mapping: None,
            },
        }
    }

    /// The frames of a chain of pcs the kernel walked (`pcs[0]` the sampled
    /// ip, then return addresses; `UNWIND_KERNEL_FRAME_POINTER`), each placed
    /// in its mapping. A pc in no mapping has the maps read again once (as
    /// [`Unwinder::unwind`] does) and, if still unmapped, ends the stack
    /// with `INVALID_MAP`.
    pub fn place(&mut self, pid: u32, pcs: &[u64]) -> UnwoundStack {
        let mut frames = Vec::with_capacity(pcs.len().min(crate::MAX_FRAMES));
        let out = if pcs.is_empty() {
            UnwoundStack::complete(frames)
        } else {
            let (failure, maps_reread) =
                self.with_maps_reread(pid, false, &mut frames, |p, _, out| p.place_into(pcs, out));
            let mut out = UnwoundStack::of(frames, failure);
            out.maps_reread = maps_reread;
            out
        };
        self.stats.count(out.error);
        out
    }

    /// Runs `attempt` on `pid`'s state (built on its first sample) into
    /// `out`; what stopped it short, and whether the maps were read again.
    /// When it meets a pc in no mapping (and the stack copy was not cut at
    /// its maximum, where that is expected), the maps are read again,
    /// unless a recent re-read found them unchanged; if they changed, the
    /// state is rebuilt and `attempt` runs once more, into a cleared `out`.
    fn with_maps_reread<S: FrameSink>(
        &mut self,
        pid: u32,
        stack_maxed: bool,
        out: &mut S,
        mut attempt: impl FnMut(&ProcessUnwinder, &mut DwarfCache, &mut S) -> Option<UnwindFailure>,
    ) -> (Option<UnwindFailure>, bool) {
        let process = match self.processes.entry(pid) {
            std::collections::hash_map::Entry::Occupied(e) => {
                self.stats.process_hits += 1;
                e.into_mut()
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                self.stats.process_misses += 1;
                match ProcessUnwinder::load(&self.proc, pid, &mut self.modules) {
                    Ok(p) => v.insert(p),
                    Err(e) => return (Some(UnwindFailure::Maps(e)), false),
                }
            }
        };
        let first = attempt(process, &mut self.cache, out);
        let unmapped = first
            .as_ref()
            .is_some_and(|f| f.kind() == UnwindErrorKind::InvalidMap);
        if !unmapped || stack_maxed {
            return (first, false);
        }
        if process.reread_cooldown > 0 {
            // A recent re-read found nothing new: this pc is garbage (a
            // broken chain), not a new mapping.
            process.reread_cooldown -= 1;
            self.stats.maps_rereads_skipped += 1;
            return (first, false);
        }
        // Something may have been mapped since the maps were read: read
        // them again, and if they changed, rebuild and try once more.
        self.stats.maps_rereads += 1;
        let text = match read_maps_text(&self.proc, pid) {
            Ok(t) => t,
            Err(e) => {
                self.processes.remove(&pid);
                return (Some(UnwindFailure::Maps(e)), false);
            }
        };
        if process.built_from(&text) {
            process.reread_cooldown = REREAD_COOLDOWN;
            return (first, true);
        }
        match ProcessUnwinder::from_maps_text(&self.proc, pid, &text, &mut self.modules) {
            Ok(p) => {
                let p = self.processes.entry(pid).insert_entry(p).into_mut();
                out.clear();
                (attempt(p, &mut self.cache, out), true)
            }
            Err(e) => {
                self.processes.remove(&pid);
                (Some(UnwindFailure::Maps(e)), false)
            }
        }
    }

    /// The function `frame` (of process `pid`) is in, demangled: from its
    /// ELF's symbols, or for JIT code from `/tmp/perf-PID.map`. `None` for a
    /// stripped module or unknown code; the frame still has its mapping's
    /// build id, path, offsets and `rel_pc`.
    pub fn symbolize(&mut self, pid: u32, frame: &Frame) -> Option<Symbol> {
        match self.processes.get_mut(&pid) {
            Some(p) => p.symbolize(&self.proc, frame),
            None => frame.mapping.as_ref()?.symbolize(frame.rel_pc),
        }
    }

    /// Forgets `pid`'s state (it exec'd or exited); its next sample reads
    /// its maps afresh.
    pub fn forget_process(&mut self, pid: u32) {
        self.processes.remove(&pid);
    }

    /// Drops every process's state and every module (the periodic
    /// `unwind_state_clear_period_ms` clear). Counters are kept.
    pub fn clear(&mut self) {
        self.processes.clear();
        self.modules.clear();
        let (hits, misses) = self.cache.hits_misses();
        self.stats.rule_cache_hits += hits;
        self.stats.rule_cache_misses += misses;
        self.cache = DwarfCache::new();
    }

    /// The state of `pid`, if built.
    pub fn process(&self, pid: u32) -> Option<&ProcessUnwinder> {
        self.processes.get(&pid)
    }

    /// The counters so far.
    pub fn stats(&self) -> UnwindStats {
        let (hits, misses) = self.cache.hits_misses();
        UnwindStats {
            modules: self.modules.stats(),
            rule_cache_hits: self.stats.rule_cache_hits + hits,
            rule_cache_misses: self.stats.rule_cache_misses + misses,
            ..self.stats
        }
    }
}
