//! What `max_daemon_memory_kb` weighs: the profiler's own memory, not its
//! process's. Upstream's `traced_perf` is a process of its own and weighs
//! its RssAnon + VmSwap; here the profiler can share its process with the
//! tracing service (`zerotraced --probes`), whose trace buffers would then
//! count against the profiler and stop it for memory it does not hold.
//! So the guardrail weighs what the data source instance itself holds:
//! the bytes queued between the ring buffers and the unwinder, its
//! interning tables, its scope decisions, and the unwinder's cached state
//! as the unwinder reckons it.

/// What one `linux.perf` instance holds, as the guardrail weighs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes read from the ring buffers and waiting to be unwound (exact).
    pub queued_bytes: u64,
    /// Entries of the sequence's interning tables (strings, mappings,
    /// frames, callstacks).
    pub interned_entries: u64,
    /// Processes whose scope decision is kept.
    pub scope_entries: u64,
    /// The unwinder's cached state (process maps, parsed ELF modules), as
    /// the unwinder reckons it.
    pub unwinder_bytes: u64,
}

/// What one interned entry is reckoned to hold: the key (a frame's three
/// ids, a callstack's few frame ids, a function name) and its slot in the
/// table.
pub const INTERNED_ENTRY_BYTES: u64 = 128;

/// What one scope decision is reckoned to hold.
pub const SCOPE_ENTRY_BYTES: u64 = 32;

impl Footprint {
    /// The total in bytes.
    pub fn bytes(&self) -> u64 {
        self.queued_bytes
            .saturating_add(self.interned_entries.saturating_mul(INTERNED_ENTRY_BYTES))
            .saturating_add(self.scope_entries.saturating_mul(SCOPE_ENTRY_BYTES))
            .saturating_add(self.unwinder_bytes)
    }

    /// The total in kB, rounded up (what `max_daemon_memory_kb` is
    /// compared with).
    pub fn kb(&self) -> u64 {
        self.bytes().div_ceil(1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_counts() {
        let f = Footprint {
            queued_bytes: 1000,
            interned_entries: 2,
            scope_entries: 1,
            unwinder_bytes: 24,
        };
        assert_eq!(f.bytes(), 1000 + 256 + 32 + 24);
        assert_eq!(f.kb(), 2);
        assert_eq!(Footprint::default().kb(), 0);
    }
}
