//! One heap's books as heapprofd keeps them for a process: for each call
//! stack, the sampled bytes and allocations made there and how many of
//! them were freed since, and which sampled allocations are still live (by
//! address), so a free is charged to the stack that allocated the block.
//!
//! A free of an address that was never sampled is not an error: most
//! allocations are not sampled, so most frees match nothing. An address
//! allocated again while the table still holds it (a free the table did
//! not see, e.g. one made before the session began sampling) replaces the
//! old block, whose bytes are then counted freed and the replacement is
//! counted in [`HeapStats::unmatched_reuse`].
//!
//! For `dump_at_max` it also keeps each callstack's live bytes and count at
//! the moment the table's live bytes were highest: on each new peak a
//! generation counter moves on, and a callstack changed after the peak
//! first saves what it held then (so the peak costs nothing to record).
//!
//! Sans-IO and single-threaded: the profiler's thread owns it.

use super::live_blocks::{Live, LiveBlocks, StackId};

/// What a call stack allocated and freed, in sampled bytes and counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackTotals {
    /// Bytes allocated (sampled sizes: multiples of the interval, or the
    /// exact size of large allocations).
    pub allocated: u64,
    /// Bytes of those allocations since freed.
    pub freed: u64,
    /// Allocations recorded.
    pub alloc_count: u64,
    /// Of those, freed.
    pub free_count: u64,
    /// The peak generation `at_peak` was saved in.
    peak_gen: u64,
    /// Live bytes and blocks at the latest peak, when saved after it.
    at_peak: (u64, u64),
}

impl StackTotals {
    /// Before a change: saves what the stack held at the latest peak, if
    /// not yet saved since it.
    fn save_peak(&mut self, peak_gen: u64) {
        if self.peak_gen != peak_gen {
            self.peak_gen = peak_gen;
            self.at_peak = (self.live(), self.alloc_count - self.free_count);
        }
    }

    /// Live bytes and blocks when the table's live bytes peaked.
    pub fn at_peak(&self, peak_gen: u64) -> (u64, u64) {
        if self.peak_gen == peak_gen {
            self.at_peak
        } else {
            (self.live(), self.alloc_count - self.free_count)
        }
    }

    /// Bytes still live.
    pub fn live(&self) -> u64 {
        self.allocated.saturating_sub(self.freed)
    }
}

/// The table's own counts, for the dump's stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapStats {
    /// Allocations recorded.
    pub heap_samples: u64,
    /// Allocations at an address the table still held (the earlier
    /// block's free was not seen); the earlier block is counted freed.
    pub unmatched_reuse: u64,
}

/// One heap's per-stack totals and live sampled blocks.
#[derive(Debug, Default)]
pub struct HeapTable {
    totals: Vec<StackTotals>,
    live: LiveBlocks,
    live_bytes: u64,
    peak_bytes: u64,
    peak_gen: u64,
    stats: HeapStats,
}

impl HeapTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a sampled allocation of `sample_size` bytes at `address`
    /// made from call stack `stack`.
    pub fn on_alloc(&mut self, address: u64, sample_size: u64, stack: StackId) {
        if let Some(old) = self.live.remove(address) {
            self.stats.unmatched_reuse += 1;
            self.charge_free(old);
        }
        let g = self.peak_gen;
        let t = self.totals_mut(stack);
        t.save_peak(g);
        t.allocated = t.allocated.saturating_add(sample_size);
        t.alloc_count += 1;
        self.live_bytes = self.live_bytes.saturating_add(sample_size);
        if self.live_bytes > self.peak_bytes {
            self.peak_bytes = self.live_bytes;
            self.peak_gen += 1;
        }
        self.stats.heap_samples += 1;
        self.live.insert(
            address,
            Live {
                stack,
                size: sample_size,
            },
        );
    }

    /// Records the free of `address`: whether it was a sampled block.
    pub fn on_free(&mut self, address: u64) -> bool {
        match self.live.remove(address) {
            Some(old) => {
                self.charge_free(old);
                true
            }
            None => false,
        }
    }

    fn charge_free(&mut self, old: Live) {
        let g = self.peak_gen;
        let t = self.totals_mut(old.stack);
        t.save_peak(g);
        t.freed = t.freed.saturating_add(old.size);
        t.free_count += 1;
        self.live_bytes = self.live_bytes.saturating_sub(old.size);
    }

    fn totals_mut(&mut self, stack: StackId) -> &mut StackTotals {
        let i = stack as usize;
        if self.totals.len() <= i {
            self.totals.resize(i + 1, StackTotals::default());
        }
        &mut self.totals[i]
    }

    /// Each call stack that allocated, with its totals, by id.
    pub fn totals(&self) -> impl Iterator<Item = (StackId, &StackTotals)> {
        self.totals
            .iter()
            .enumerate()
            .filter(|(_, t)| t.alloc_count > 0)
            .map(|(i, t)| (i as StackId, t))
    }

    /// The generation of the latest peak, for [`StackTotals::at_peak`].
    pub fn peak_gen(&self) -> u64 {
        self.peak_gen
    }

    /// The highest sampled live bytes so far.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }

    /// Sampled bytes live now.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Sampled blocks live now.
    pub fn live_blocks(&self) -> usize {
        self.live.len()
    }

    /// The table's own counts.
    pub fn stats(&self) -> HeapStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frees_are_charged_to_the_allocating_stack() {
        let mut t = HeapTable::new();
        t.on_alloc(0x1000, 4096, 1);
        t.on_alloc(0x2000, 8192, 2);
        t.on_alloc(0x3000, 4096, 1);
        assert!(t.on_free(0x1000));
        assert!(!t.on_free(0x9999), "never sampled");
        let all: Vec<_> = t
            .totals()
            .map(|(s, t)| (s, t.allocated, t.freed, t.alloc_count, t.free_count))
            .collect();
        assert_eq!(all, [(1, 8192, 4096, 2, 1), (2, 8192, 0, 1, 0)]);
        assert_eq!(t.live_bytes(), 12288);
        assert_eq!(t.live_blocks(), 2);
        assert!(!t.on_free(0x1000), "a second free matches nothing");
    }

    #[test]
    fn an_address_reused_without_a_seen_free_frees_the_old_block() {
        let mut t = HeapTable::new();
        t.on_alloc(0x1000, 10, 0);
        t.on_alloc(0x1000, 20, 3);
        assert_eq!(t.stats().unmatched_reuse, 1);
        assert_eq!(t.stats().heap_samples, 2);
        assert_eq!(t.live_bytes(), 20);
        let all: Vec<_> = t.totals().map(|(s, t)| (s, t.live())).collect();
        assert_eq!(all, [(0, 0), (3, 20)]);
    }

    #[test]
    fn the_peak_keeps_what_each_stack_held_then() {
        let mut t = HeapTable::new();
        t.on_alloc(1, 100, 0);
        t.on_alloc(2, 50, 1);
        // Peak: 150 (stack 0: 100, stack 1: 50).
        t.on_free(1);
        t.on_alloc(3, 20, 1);
        t.on_alloc(4, 10, 2);
        // Now 80 live: below the peak, which still holds.
        assert_eq!(t.peak_bytes(), 150);
        let g = t.peak_gen();
        let at: Vec<_> = t.totals().map(|(s, x)| (s, x.at_peak(g))).collect();
        assert_eq!(at, [(0, (100, 1)), (1, (50, 1)), (2, (0, 0))]);
        // A new peak: 80 + 100 = 180.
        t.on_alloc(5, 100, 2);
        let g = t.peak_gen();
        let at: Vec<_> = t.totals().map(|(s, x)| (s, x.at_peak(g))).collect();
        assert_eq!(at, [(0, (0, 0)), (1, (70, 2)), (2, (110, 2))]);
    }

    #[test]
    fn blocks_too_large_to_pack_keep_their_size_and_stack() {
        let mut t = HeapTable::new();
        let huge = 1u64 << 50;
        t.on_alloc(0x10, huge, 3);
        t.on_alloc(0x20, 64, 5);
        t.on_alloc(0x30, 64, 7);
        assert_eq!(t.live_bytes(), huge + 128);
        assert!(t.on_free(0x10));
        assert!(t.on_free(0x20));
        assert!(!t.on_free(0x20));
        assert_eq!(t.live_bytes(), 64);
        assert_eq!(t.live_blocks(), 1);
        let freed: Vec<_> = t
            .totals()
            .map(|(s, t)| (s, t.freed))
            .filter(|x| x.1 > 0)
            .collect();
        assert_eq!(freed, [(3, huge), (5, 64)]);
    }
}
