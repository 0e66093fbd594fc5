//! The live sampled blocks of one heap by address, in as little memory as
//! the profiler can keep them in: the profiler's memory grows with them
//! (one entry per sampled block still live), and heapprofd's budget for
//! the profiler is a small share of the profiled heap.
//!
//! Entries are kept in sorted runs of up to [`RUN_MAX`] `(address, value)`
//! pairs, the runs in a B-tree by their first address: 16 bytes an entry
//! in a full run. A heap handed out in ascending addresses (the common
//! case: a growing heap) fills each run before the next one begins, where
//! a B-tree of the entries themselves leaves its nodes half full (about 26
//! bytes an entry measured, against about 17 here). A run that empties
//! goes; one that falls to a quarter joins its predecessor when they fit
//! in three quarters of a run; a run's spare capacity is given back once
//! it is four times what the run holds. There is no moment when a table
//! and its doubled successor are both held, as a hash table would have.
//!
//! Each entry's value packs the stack id and the size; the rare block
//! whose size or stack id does not fit is kept aside.

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxBuildHasher;

/// A call stack's index in the caller's callstack table.
pub type StackId = u32;

/// A live sampled block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Live {
    /// The stack that allocated it.
    pub stack: StackId,
    /// The bytes it counts for.
    pub size: u64,
}

/// Entries of a run at most.
const RUN_MAX: usize = 64;

/// Bits of a packed entry that hold the stack id; the size gets the rest.
const STACK_BITS: u32 = 24;
/// Marks an address whose block is in `wide`.
const WIDE: u64 = u64::MAX;

/// One run: ascending addresses and their packed values.
type Run = Vec<(u64, u64)>;

/// The live sampled blocks by address.
#[derive(Debug, Default)]
pub(crate) struct LiveBlocks {
    /// The runs by their first address; every address of a run is below
    /// the next run's first.
    runs: BTreeMap<u64, Run>,
    len: usize,
    wide: HashMap<u64, Live, FxBuildHasher>,
}

impl LiveBlocks {
    /// Adds (or replaces) the block at `addr`.
    pub(crate) fn insert(&mut self, addr: u64, l: Live) {
        let packed = if l.stack < 1 << STACK_BITS && l.size < (1 << (64 - STACK_BITS)) - 1 {
            l.size << STACK_BITS | u64::from(l.stack)
        } else {
            self.wide.insert(addr, l);
            WIDE
        };
        // A wide block replaced by a packed one leaves `wide` (the books
        // take a block out before they put one in at its address, so a
        // replacement is rare: the hash map is not looked at otherwise).
        if self.insert_packed(addr, packed) == Some(WIDE) && packed != WIDE {
            self.wide.remove(&addr);
        }
    }

    /// Takes the block at `addr` out, if there is one.
    pub(crate) fn remove(&mut self, addr: u64) -> Option<Live> {
        match self.remove_packed(addr)? {
            WIDE => self.wide.remove(&addr),
            v => Some(Live {
                stack: (v & ((1 << STACK_BITS) - 1)) as StackId,
                size: v >> STACK_BITS,
            }),
        }
    }

    /// Blocks held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Puts `v` at `addr`: the value it replaced, if any.
    fn insert_packed(&mut self, addr: u64, v: u64) -> Option<u64> {
        let Some((_, run)) = self.runs.range_mut(..=addr).next_back() else {
            // Below every run: at the front of the first, if it has room
            // (its key changes), else a run of its own.
            match self.runs.first_entry() {
                Some(e) if e.get().len() < RUN_MAX => {
                    let mut run = e.remove();
                    make_room(&mut run);
                    run.insert(0, (addr, v));
                    self.runs.insert(addr, run);
                }
                _ => {
                    self.runs.insert(addr, new_run(addr, v));
                }
            }
            self.len += 1;
            return None;
        };
        let i = match run.binary_search_by_key(&addr, |e| e.0) {
            Ok(i) => return Some(std::mem::replace(&mut run[i].1, v)),
            Err(i) => i,
        };
        self.len += 1;
        if run.len() < RUN_MAX {
            make_room(run);
            run.insert(i, (addr, v));
        } else if i == run.len() {
            // Past a full run's end (a heap growing upwards): a new run,
            // the full one left full.
            self.runs.insert(addr, new_run(addr, v));
        } else {
            // Inside a full run: the entries from `i` on start a run of
            // their own, and the new one ends this one.
            let tail = run.split_off(i);
            run.push((addr, v));
            trim(run);
            self.runs.insert(tail[0].0, tail);
        }
        None
    }

    fn remove_packed(&mut self, addr: u64) -> Option<u64> {
        let (&first, run) = self.runs.range_mut(..=addr).next_back()?;
        let i = run.binary_search_by_key(&addr, |e| e.0).ok()?;
        let (_, v) = run.remove(i);
        self.len -= 1;
        if run.is_empty() {
            self.runs.remove(&first);
            return Some(v);
        }
        trim(run);
        let small = run.len() <= RUN_MAX / 4;
        if i == 0 {
            // The run's first address changed: so does its key.
            if let Some(run) = self.runs.remove(&first) {
                self.runs.insert(run[0].0, run);
            }
        }
        if small {
            self.join_with_predecessor(if i == 0 { addr } else { first });
        }
        Some(v)
    }

    /// Moves the run whose first address is at or after `at`'s run's
    /// start into the run before it, when both fit in three quarters of a
    /// run.
    fn join_with_predecessor(&mut self, at: u64) {
        let Some((&key, run)) = self.runs.range(at..).next() else {
            return;
        };
        let n = run.len();
        let Some((_, prev)) = self.runs.range_mut(..key).next_back() else {
            return;
        };
        if prev.len() + n > RUN_MAX * 3 / 4 {
            return;
        }
        if let Some(run) = self.runs.remove(&key) {
            if let Some((_, prev)) = self.runs.range_mut(..key).next_back() {
                prev.reserve_exact(run.len());
                prev.extend_from_slice(&run);
            }
        }
    }
}

/// A run of one entry, with room for a few more.
fn new_run(addr: u64, v: u64) -> Run {
    let mut run = Vec::with_capacity(4);
    run.push((addr, v));
    run
}

/// Gives back a run's spare capacity once it is four times what the run
/// holds (down to twice, so that a run that grows again does not at once).
fn trim(run: &mut Run) {
    if run.len() * 4 <= run.capacity() && run.capacity() > 8 {
        run.shrink_to(run.len() * 2);
    }
}

/// Room for one more entry, growing by doubling up to [`RUN_MAX`] exactly
/// (a run never holds more).
fn make_room(run: &mut Run) {
    if run.len() == run.capacity() {
        let want = (run.capacity() * 2).clamp(4, RUN_MAX);
        run.reserve_exact(want - run.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: the tests' sequences are fixed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn live(i: u64) -> Live {
        Live {
            stack: (i % 7) as StackId,
            size: 16 + i % 100,
        }
    }

    /// The table against a `BTreeMap`, and its invariants, after each step.
    fn check(t: &LiveBlocks, model: &BTreeMap<u64, Live>) {
        assert_eq!(t.len(), model.len());
        let mut last = None;
        let mut n = 0;
        for (&first, run) in &t.runs {
            assert!(!run.is_empty(), "an empty run kept");
            assert!(run.len() <= RUN_MAX, "a run of {}", run.len());
            assert!(
                run.capacity() <= RUN_MAX,
                "a run's capacity {}",
                run.capacity()
            );
            assert!(
                run.capacity() < 4 * run.len() || run.capacity() <= 8,
                "{} slots for {} entries",
                run.capacity(),
                run.len()
            );
            assert_eq!(run[0].0, first, "a run's key is its first address");
            for w in run.windows(2) {
                assert!(w[0].0 < w[1].0, "a run out of order");
            }
            assert!(last.is_none_or(|l| l < first), "runs overlap");
            last = run.last().map(|e| e.0);
            n += run.len();
        }
        assert_eq!(n, model.len());
    }

    /// Runs `steps` random inserts and removes (a `free_every`-th of the
    /// steps a remove, of a live address or, half the time, of one never
    /// inserted) over addresses from `addr`, checking each against the
    /// model; the entries per run at the end.
    fn run_against_model(
        seed: u64,
        steps: usize,
        free_every: u64,
        mut addr: impl FnMut(&mut Rng, usize) -> u64,
    ) -> f64 {
        let mut rng = Rng(seed);
        let (mut t, mut model) = (LiveBlocks::default(), BTreeMap::new());
        for step in 0..steps {
            if rng.next() % free_every == 0 && !model.is_empty() {
                let a = if rng.next() % 2 == 0 {
                    let k = rng.next() as usize % model.len();
                    *model.keys().nth(k).unwrap()
                } else {
                    (rng.next() % (1 << 20)) * 16 + 8
                };
                assert_eq!(t.remove(a), model.remove(&a), "remove {a:#x}");
            } else {
                let a = addr(&mut rng, step);
                let l = live(step as u64);
                t.insert(a, l);
                model.insert(a, l);
            }
            if step % 97 == 0 || step + 1 == steps {
                check(&t, &model);
            }
        }
        for (&a, l) in &model {
            assert_eq!(t.remove(a), Some(*l));
        }
        assert_eq!(t.len(), 0);
        assert!(t.runs.is_empty());
        model.len() as f64 / t.runs.len().max(1) as f64
    }

    #[test]
    fn ascending_addresses_fill_each_run() {
        let mut t = LiveBlocks::default();
        let n = if cfg!(miri) { 1_000 } else { 10_000u64 };
        for i in 0..n {
            t.insert(0x1000 + 16 * i, live(i));
        }
        check(&t, &(0..n).map(|i| (0x1000 + 16 * i, live(i))).collect());
        let full = t.runs.values().filter(|r| r.len() == RUN_MAX).count();
        assert_eq!(full, n as usize / RUN_MAX, "every run but the last is full");
        assert!(
            t.runs
                .values()
                .all(|r| r.capacity() == r.len() || r.len() < RUN_MAX)
        );
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only: Miri takes minutes over the model runs"
    )]
    fn random_inserts_and_removes_agree_with_a_b_tree() {
        for seed in 1..6 {
            run_against_model(seed, 60_000, 3, |rng, _| (rng.next() % (1 << 16)) * 16);
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only: Miri takes minutes over the model runs"
    )]
    fn mostly_ascending_inserts_with_frees_agree_with_a_b_tree() {
        for seed in 1..4 {
            run_against_model(seed, 60_000, 4, |rng, step| {
                // Two heaps growing upwards, an address now and then below.
                let base = if step % 2 == 0 {
                    0x10_0000
                } else {
                    0x9000_0000
                };
                base + 16 * (step as u64) - 16 * (rng.next() % 8)
            });
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code only: Miri takes minutes over the model runs"
    )]
    fn a_table_drained_at_random_keeps_its_runs_filled() {
        // Fill in ascending order, then free three in four at random: the
        // runs left must not be mostly near-empty ones.
        let mut rng = Rng(7);
        let mut t = LiveBlocks::default();
        let n = 64 * 1024u64;
        for i in 0..n {
            t.insert(16 * i, live(i));
        }
        let mut addrs: Vec<u64> = (0..n).map(|i| 16 * i).collect();
        for i in (1..addrs.len()).rev() {
            addrs.swap(i, rng.next() as usize % (i + 1));
        }
        for &a in &addrs[..addrs.len() * 3 / 4] {
            assert!(t.remove(a).is_some());
        }
        let per_run = t.len() as f64 / t.runs.len() as f64;
        assert!(per_run >= 12.0, "{per_run} entries a run");
        let slots: usize = t.runs.values().map(Vec::capacity).sum();
        eprintln!(
            "{per_run} entries a run, {slots} slots for {} entries",
            t.len()
        );
        assert!(
            slots <= 3 * t.len(),
            "{slots} slots for {} entries",
            t.len()
        );
    }

    #[test]
    fn wide_blocks_keep_their_size_and_stack() {
        let mut t = LiveBlocks::default();
        let huge = Live {
            stack: 3,
            size: 1 << 50,
        };
        let deep = Live {
            stack: 1 << 30,
            size: 64,
        };
        t.insert(0x10, huge);
        t.insert(0x20, deep);
        t.insert(0x30, live(1));
        // A wide block replaced by a narrow one at the same address.
        t.insert(0x10, live(2));
        assert_eq!(t.len(), 3);
        assert_eq!(t.remove(0x10), Some(live(2)));
        assert_eq!(t.remove(0x20), Some(deep));
        assert_eq!(t.remove(0x20), None);
        assert!(t.wide.is_empty());
        assert_eq!(t.len(), 1);
    }
}
