//! Finds a stored arg set again by its content hash with one memory access
//! per probe. A general hash map keeps its control bytes and its entries
//! apart, so each lookup in a map of hundreds of thousands of sets (one
//! per slice) missed the cache twice before the set's rows were even read.
//! Here a slot is one `u64`: 32 bits of the hash (which also place the
//! slot) beside the set's id. Equal bits only name a candidate; the caller
//! compares the candidate's rows, so sets are never merged by their hash.
//!
//! Which slots are taken is also kept as a bit per slot, 64 times smaller
//! than the slots, so it stays in the cache: a probe that meets an empty
//! slot (the end of every probe for a set not stored yet, at once for most
//! of them) reads that bit instead of the slot, and the new set's slot is
//! written without being read first. On a trace of hundreds of thousands
//! of distinct sets the slots are MBs, and reading one missed the cache
//! for nearly every new set.

/// Slots a table starts with (a power of two).
const FIRST_SLOTS: usize = 1 << 10;

/// Content hashes of arg sets → the sets' ids, candidates in probe order.
#[derive(Debug, Default)]
pub struct ArgSetIndex {
    /// Open addressing with linear probing: `tag << 32 | id`, where the
    /// slot's bit in `taken` is set (else anything).
    slots: Vec<u64>,
    /// A bit per slot, set where it holds a set.
    taken: Vec<u64>,
    /// Sets held.
    len: usize,
}

/// The 32 bits of a hash kept in its slot (they place it, too).
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

impl ArgSetIndex {
    /// The ids of the sets whose kept hash bits equal `hash`'s are asked
    /// of `matches` until it says yes; that id is returned. (No two equal
    /// sets are inserted, so at most one candidate matches and the order
    /// they are asked in does not matter.)
    pub fn find(&self, hash: u64, mut matches: impl FnMut(u32) -> bool) -> Option<u32> {
        let mask = self.slots.len().checked_sub(1)?;
        let tag = tag(hash);
        let mut i = tag as usize & mask;
        loop {
            if !self.is_taken(i) {
                return None;
            }
            let slot = *self.slots.get(i)?;
            if (slot >> 32) as u32 == tag {
                let id = slot as u32;
                if matches(id) {
                    return Some(id);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether slot `i` holds a set (false past the end).
    #[inline(always)]
    fn is_taken(&self, i: usize) -> bool {
        self.taken
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds set `id` under `hash` (after [`Self::find`] found no equal
    /// set).
    pub fn insert(&mut self, hash: u64, id: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let slot = (u64::from(tag(hash)) << 32) | u64::from(id);
        self.place(slot);
        self.len += 1;
    }

    /// Puts `slot` in the first empty place of its probe sequence (found
    /// by the bits alone).
    fn place(&mut self, slot: u64) {
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = (slot >> 32) as usize & mask;
        for _ in 0..self.slots.len() {
            if !self.is_taken(i) {
                if let (Some(s), Some(w)) = (self.slots.get_mut(i), self.taken.get_mut(i / 64)) {
                    *s = slot;
                    *w |= 1 << (i % 64);
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the slots; the tags place the slots again (no set is
    /// hashed again).
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let old_taken = std::mem::replace(&mut self.taken, vec![0; size.div_ceil(64)]);
        for (i, s) in old.into_iter().enumerate() {
            if old_taken
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0)
            {
                self.place(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_back_by_hash_and_only_when_matched() {
        let mut ix = ArgSetIndex::default();
        assert_eq!(ix.find(7, |_| true), None);
        for id in 0..5000u32 {
            let hash = u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            assert_eq!(ix.find(hash, |_| true), None);
            ix.insert(hash, id);
        }
        for id in 0..5000u32 {
            let hash = u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            assert_eq!(ix.find(hash, |c| c == id), Some(id));
            assert_eq!(ix.find(hash, |_| false), None);
        }
    }

    /// Set ids of every size (0 and the largest among them) come back,
    /// and a slot's bit is set exactly where a set was placed, across
    /// growth.
    #[test]
    fn every_id_comes_back_and_bits_mark_the_placed_slots() {
        let mut ix = ArgSetIndex::default();
        let ids: Vec<u32> = (0..4000u32)
            .map(|i| if i == 7 { u32::MAX } else { i * 3 })
            .collect();
        for (n, &id) in ids.iter().enumerate() {
            // Tags that collide in runs, to make long probes.
            let hash = (u64::from(n as u32 / 5) << 40) | u64::from(id);
            ix.insert(hash, id);
        }
        for (n, &id) in ids.iter().enumerate() {
            let hash = (u64::from(n as u32 / 5) << 40) | u64::from(id);
            assert_eq!(ix.find(hash, |c| c == id), Some(id));
        }
        let taken: usize = ix.taken.iter().map(|w| w.count_ones() as usize).sum();
        assert_eq!(taken, ids.len());
        assert_eq!(ix.taken.len(), ix.slots.len().div_ceil(64));
    }

    /// Sets whose hashes agree in the kept bits are all candidates, across
    /// growth.
    #[test]
    fn equal_tags_are_all_candidates() {
        let mut ix = ArgSetIndex::default();
        let same = 0xABCD_0123_0000_0000u64;
        for id in 0..3000u32 {
            // Every third set shares the tag; the others spread.
            let hash = if id % 3 == 0 {
                same | u64::from(id)
            } else {
                u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            };
            ix.insert(hash, id);
        }
        let mut seen = Vec::new();
        assert_eq!(
            ix.find(same, |c| {
                seen.push(c);
                false
            }),
            None
        );
        seen.sort_unstable();
        let want: Vec<u32> = (0..3000).filter(|i| i % 3 == 0).collect();
        assert_eq!(seen, want);
        assert_eq!(ix.find(same, |c| c == 1500), Some(1500));
    }
}
