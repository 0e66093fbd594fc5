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
use super::process::{ProcessUnwinder, UnwindMode, read_maps_text};

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
        let out = self.unwind_inner(pid, sample, mode);
        self.stats.count(out.error);
        out
    }

    fn unwind_inner(
        &mut self,
        pid: u32,
        sample: &UserSample<'_>,
        mode: UnwindMode,
    ) -> UnwoundStack {
        if mode == UnwindMode::Skip {
            return UnwoundStack::complete(Vec::new());
        }
        self.with_maps_reread(pid, sample.stack_maxed, |p, cache| {
            p.unwind(cache, sample.regs, sample.stack, mode)
        })
    }

    /// The frames of a chain of pcs the kernel walked (`pcs[0]` the sampled
    /// ip, then return addresses; `UNWIND_KERNEL_FRAME_POINTER`), each placed
    /// in its mapping. A pc in no mapping has the maps read again once (as
    /// [`Unwinder::unwind`] does) and, if still unmapped, ends the stack
    /// with `INVALID_MAP`.
    pub fn place(&mut self, pid: u32, pcs: &[u64]) -> UnwoundStack {
        let out = if pcs.is_empty() {
            UnwoundStack::complete(Vec::new())
        } else {
            self.with_maps_reread(pid, false, |p, _| p.place(pcs))
        };
        self.stats.count(out.error);
        out
    }

    /// Runs `attempt` on `pid`'s state (built on its first sample). When
    /// it meets a pc in no mapping (and the stack copy was not cut at its
    /// maximum, where that is expected), the maps are read again, unless a
    /// recent re-read found them unchanged; if they changed, the state is
    /// rebuilt and `attempt` runs once more.
    fn with_maps_reread(
        &mut self,
        pid: u32,
        stack_maxed: bool,
        mut attempt: impl FnMut(&ProcessUnwinder, &mut DwarfCache) -> UnwoundStack,
    ) -> UnwoundStack {
        let process = match self.processes.entry(pid) {
            std::collections::hash_map::Entry::Occupied(e) => {
                self.stats.process_hits += 1;
                e.into_mut()
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                self.stats.process_misses += 1;
                match ProcessUnwinder::load(&self.proc, pid, &mut self.modules) {
                    Ok(p) => v.insert(p),
                    Err(e) => return UnwoundStack::failed(Vec::new(), UnwindFailure::Maps(e)),
                }
            }
        };
        let first = attempt(process, &mut self.cache);
        if first.error != UnwindErrorKind::InvalidMap || stack_maxed {
            return first;
        }
        if process.reread_cooldown > 0 {
            // A recent re-read found nothing new: this pc is garbage (a
            // broken chain), not a new mapping.
            process.reread_cooldown -= 1;
            self.stats.maps_rereads_skipped += 1;
            return first;
        }
        // Something may have been mapped since the maps were read: read
        // them again, and if they changed, rebuild and try once more.
        self.stats.maps_rereads += 1;
        let text = match read_maps_text(&self.proc, pid) {
            Ok(t) => t,
            Err(e) => {
                self.processes.remove(&pid);
                return UnwoundStack::failed(first.frames, UnwindFailure::Maps(e));
            }
        };
        if process.built_from(&text) {
            process.reread_cooldown = REREAD_COOLDOWN;
            let mut first = first;
            first.maps_reread = true;
            return first;
        }
        match ProcessUnwinder::from_maps_text(&self.proc, pid, &text, &mut self.modules) {
            Ok(p) => {
                let p = self.processes.entry(pid).insert_entry(p).into_mut();
                let mut again = attempt(p, &mut self.cache);
                again.maps_reread = true;
                again
            }
            Err(e) => {
                self.processes.remove(&pid);
                UnwoundStack::failed(first.frames, UnwindFailure::Maps(e))
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
