//! Finds a stored arg set again by its content hash with one memory access
//! per probe. A general hash map keeps its control bytes and its entries
//! apart, so each lookup in a map of hundreds of thousands of sets (one
//! per slice) missed the cache twice before the set's rows were even read.
//! Here a slot is one `u64`: 32 bits of the hash (which also place the
//! slot) beside the set's id. Equal bits only name a candidate; the caller
//! compares the candidate's rows, so sets are never merged by their hash.

/// Slots a table starts with (a power of two).
const FIRST_SLOTS: usize = 1 << 10;

/// An empty slot.
const EMPTY: u64 = 0;

/// Content hashes of arg sets → the sets' ids, candidates in probe order.
#[derive(Debug, Default)]
pub struct ArgSetIndex {
    /// Open addressing with linear probing: `tag << 32 | (id + 1)`, or
    /// [`EMPTY`].
    slots: Vec<u64>,
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
            let slot = *self.slots.get(i)?;
            if slot == EMPTY {
                return None;
            }
            if (slot >> 32) as u32 == tag {
                let id = (slot as u32).wrapping_sub(1);
                if matches(id) {
                    return Some(id);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds set `id` under `hash` (after [`Self::find`] found no equal
    /// set).
    pub fn insert(&mut self, hash: u64, id: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let slot = (u64::from(tag(hash)) << 32) | u64::from(id.wrapping_add(1));
        self.place(slot);
        self.len += 1;
    }

    /// Puts `slot` in the first empty place of its probe sequence.
    fn place(&mut self, slot: u64) {
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = (slot >> 32) as usize & mask;
        while let Some(s) = self.slots.get_mut(i) {
            if *s == EMPTY {
                *s = slot;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the slots; the tags place the slots again (no set is
    /// hashed again).
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        for s in old.into_iter().filter(|&s| s != EMPTY) {
            self.place(s);
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
