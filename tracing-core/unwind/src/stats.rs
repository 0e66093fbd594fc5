//! Counters the sampler reports about unwinding: modules loaded, the
//! caches' hits and misses (processes, modules, `framehop`'s unwind-rule
//! cache), maps re-reads, and unwinds by result.

use super::error::UnwindErrorKind;
use super::module_cache::ModuleCacheStats;

/// A snapshot of the unwinder's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnwindStats {
    /// The module cache's counters (modules loaded, failed, hits, misses).
    pub modules: ModuleCacheStats,
    /// Samples whose process state was already built.
    pub process_hits: u64,
    /// Samples that built it (read `/proc/PID/maps` first).
    pub process_misses: u64,
    /// Re-reads of `/proc/PID/maps` after a pc outside every mapping.
    pub maps_rereads: u64,
    /// Re-reads skipped because a recent one found the maps unchanged.
    pub maps_rereads_skipped: u64,
    /// `framehop`'s unwind-rule cache hits.
    pub rule_cache_hits: u64,
    /// `framehop`'s unwind-rule cache misses.
    pub rule_cache_misses: u64,
    /// Unwinds by result, indexed by [`UnwindErrorKind::proto_value`].
    pub by_result: [u64; 16],
}

impl UnwindStats {
    /// Unwinds that ended with `kind`.
    pub fn unwinds(&self, kind: UnwindErrorKind) -> u64 {
        self.by_result
            .get(kind.proto_value() as usize)
            .copied()
            .unwrap_or(0)
    }

    /// All unwinds.
    pub fn total_unwinds(&self) -> u64 {
        self.by_result.iter().sum()
    }

    /// The rule cache's hit rate (0 before any lookup).
    pub fn rule_cache_hit_rate(&self) -> f64 {
        let total = self.rule_cache_hits + self.rule_cache_misses;
        if total == 0 {
            0.0
        } else {
            self.rule_cache_hits as f64 / total as f64
        }
    }

    pub(crate) fn count(&mut self, kind: UnwindErrorKind) {
        if let Some(n) = self.by_result.get_mut(kind.proto_value() as usize) {
            *n += 1;
        }
    }
}
