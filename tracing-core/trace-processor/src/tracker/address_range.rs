//! Half-open address ranges and the two collections the JIT importers
//! keep them in: a map from non-overlapping ranges to values (a process's
//! mappings by address, a JIT cache's functions, the code ranges of a V8
//! isolate) and a set of addresses kept as disjoint ranges (an isolate's
//! heap code less its embedded blob). Lookups by address find the one
//! range holding it; inserting a range can trim, delete or split what it
//! overlaps, each as upstream's address-range containers do.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

/// The addresses `start..end` (`end` excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AddressRange {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
}

impl AddressRange {
    /// `start..end`; an `end` below `start` makes the empty range at
    /// `start`.
    pub fn new(start: u64, end: u64) -> Self {
        AddressRange {
            start,
            end: end.max(start),
        }
    }

    /// `size` bytes from `start` (cut at the top of the address space).
    pub fn from_start_and_size(start: u64, size: u64) -> Self {
        AddressRange::new(start, start.saturating_add(size))
    }

    /// Bytes in the range.
    pub fn size(self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the range holds no address.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// Values keyed by ranges that never overlap, found by address.
///
/// Entries are kept by their end address: the entry holding an address
/// is the first whose end lies past it, if that entry starts at or
/// before it.
#[derive(Debug, Clone)]
pub struct AddressRangeMap<V> {
    /// Entries by end address: (start, value).
    by_end: BTreeMap<u64, (u64, V)>,
}

impl<V> Default for AddressRangeMap<V> {
    fn default() -> Self {
        AddressRangeMap {
            by_end: BTreeMap::new(),
        }
    }
}

impl<V> AddressRangeMap<V> {
    /// The first entry ending after `address`.
    fn first_ending_after(&self, address: u64) -> Option<(AddressRange, &V)> {
        self.by_end
            .range((Excluded(address), Unbounded))
            .next()
            .map(|(&end, (start, v))| (AddressRange { start: *start, end }, v))
    }

    /// Adds `value` at `range` unless the range is empty or overlaps an
    /// entry; whether it was added.
    pub fn emplace(&mut self, range: AddressRange, value: V) -> bool {
        if range.is_empty() {
            return false;
        }
        if let Some((r, _)) = self.first_ending_after(range.start)
            && range.end > r.start
        {
            return false;
        }
        self.by_end.insert(range.end, (range.start, value));
        true
    }

    /// The entry holding `address`.
    pub fn find(&self, address: u64) -> Option<(AddressRange, &V)> {
        self.first_ending_after(address)
            .filter(|(r, _)| address >= r.start)
    }

    /// The entry holding `address`, its value mutable.
    pub fn find_mut(&mut self, address: u64) -> Option<(AddressRange, &mut V)> {
        let (range, _) = self.find(address)?;
        self.by_end.get_mut(&range.end).map(|(_, v)| (range, v))
    }

    /// The entry holding all of `range` (None for an empty range).
    pub fn find_containing(&self, range: AddressRange) -> Option<(AddressRange, &V)> {
        if range.is_empty() {
            return None;
        }
        self.find(range.start).filter(|(r, _)| r.end >= range.end)
    }

    /// Removes the entry holding `address`, returning it.
    pub fn remove_at(&mut self, address: u64) -> Option<(AddressRange, V)> {
        let (range, _) = self.find(address)?;
        self.by_end.remove(&range.end).map(|(start, v)| {
            (
                AddressRange {
                    start,
                    end: range.end,
                },
                v,
            )
        })
    }

    /// The entries overlapping `range`, in address order.
    pub fn overlapping(&self, range: AddressRange) -> impl Iterator<Item = (AddressRange, &V)> {
        let start = range.start;
        let end = range.end;
        let empty = range.is_empty();
        self.by_end
            .range((Excluded(start), Unbounded))
            .take_while(move |(_, (s, _))| !empty && end > *s)
            .map(|(&e, (s, v))| (AddressRange { start: *s, end: e }, v))
    }

    /// Adds `value` at `range` after removing every entry it overlaps,
    /// handing each removed one to `removed`; false (nothing changed) for
    /// an empty range.
    pub fn delete_overlaps_and_emplace(
        &mut self,
        range: AddressRange,
        value: V,
        mut removed: impl FnMut(AddressRange, V),
    ) -> bool {
        if range.is_empty() {
            return false;
        }
        let ends: Vec<u64> = self.overlapping(range).map(|(r, _)| r.end).collect();
        for end in ends {
            if let Some((start, v)) = self.by_end.remove(&end) {
                removed(AddressRange { start, end }, v);
            }
        }
        self.by_end.insert(range.end, (range.start, value));
        true
    }

    /// The entries in address order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (AddressRange, &V)> {
        self.by_end
            .iter()
            .map(|(&end, (start, v))| (AddressRange { start: *start, end }, v))
    }
}

impl<V: Clone> AddressRangeMap<V> {
    /// Adds `value` at `range`, cutting what it overlaps: an entry inside
    /// it is removed, one sticking out on a side keeps the part outside,
    /// and one holding all of it is split in two around it (both parts
    /// keeping the old value). False (nothing changed) for an empty range.
    pub fn trim_overlaps_and_emplace(&mut self, range: AddressRange, value: V) -> bool {
        if range.is_empty() {
            return false;
        }
        let overlapping: Vec<AddressRange> = self.overlapping(range).map(|(r, _)| r).collect();
        for r in overlapping {
            let Some((_, v)) = self.by_end.remove(&r.end) else {
                continue;
            };
            if r.start < range.start {
                self.by_end.insert(range.start, (r.start, v.clone()));
            }
            if r.end > range.end {
                self.by_end.insert(r.end, (range.end, v));
            }
        }
        self.by_end.insert(range.end, (range.start, value));
        true
    }
}

/// Addresses kept as sorted, disjoint, non-adjacent ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressSet {
    /// Ranges by end address: their start.
    by_end: BTreeMap<u64, u64>,
}

impl AddressSet {
    /// Adds every address of `range`, merging with the ranges it touches.
    pub fn add(&mut self, range: AddressRange) {
        if range.is_empty() {
            return;
        }
        let (mut start, mut end) = (range.start, range.end);
        // Ranges ending at or after `start` that start at or before `end`
        // touch or overlap the new one.
        let touching: Vec<(u64, u64)> = self
            .by_end
            .range(start..)
            .take_while(|(_, s)| **s <= end)
            .map(|(e, s)| (*e, *s))
            .collect();
        for (e, s) in touching {
            self.by_end.remove(&e);
            start = start.min(s);
            end = end.max(e);
        }
        self.by_end.insert(end, start);
    }

    /// Removes every address of `range`, splitting what it cuts.
    pub fn remove(&mut self, range: AddressRange) {
        if range.is_empty() {
            return;
        }
        let cut: Vec<(u64, u64)> = self
            .by_end
            .range((Excluded(range.start), Unbounded))
            .take_while(|(_, s)| range.end > **s)
            .map(|(e, s)| (*e, *s))
            .collect();
        for (e, s) in cut {
            self.by_end.remove(&e);
            if s < range.start {
                self.by_end.insert(range.start, s);
            }
            if e > range.end {
                self.by_end.insert(e, range.end);
            }
        }
    }

    /// The ranges in address order.
    pub fn iter(&self) -> impl Iterator<Item = AddressRange> + '_ {
        self.by_end
            .iter()
            .map(|(&end, &start)| AddressRange { start, end })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, end: u64) -> AddressRange {
        AddressRange::new(start, end)
    }

    fn entries(m: &AddressRangeMap<u32>) -> Vec<(u64, u64, u32)> {
        m.iter().map(|(r, v)| (r.start, r.end, *v)).collect()
    }

    #[test]
    fn lookups_find_the_range_holding_an_address() {
        let mut m = AddressRangeMap::default();
        assert!(m.emplace(r(10, 20), 1));
        assert!(m.emplace(r(20, 30), 2));
        assert!(!m.emplace(r(15, 25), 3), "overlaps");
        assert!(!m.emplace(r(40, 40), 4), "empty");
        assert_eq!(m.find(9).map(|(_, v)| *v), None);
        assert_eq!(m.find(10).map(|(_, v)| *v), Some(1));
        assert_eq!(m.find(19).map(|(_, v)| *v), Some(1));
        assert_eq!(m.find(20).map(|(_, v)| *v), Some(2));
        assert_eq!(m.find(30).map(|(_, v)| *v), None);
        assert_eq!(m.find_containing(r(12, 20)).map(|(_, v)| *v), Some(1));
        assert_eq!(m.find_containing(r(12, 21)).map(|(_, v)| *v), None);
        assert_eq!(m.find_containing(r(12, 12)).map(|(_, v)| *v), None);
        assert_eq!(m.remove_at(25).map(|(r, v)| (r.start, v)), Some((20, 2)));
        assert_eq!(entries(&m), vec![(10, 20, 1)]);
    }

    #[test]
    fn trimming_cuts_overlaps_and_splits_an_enclosing_range() {
        let mut m = AddressRangeMap::default();
        m.emplace(r(0, 100), 1);
        m.trim_overlaps_and_emplace(r(40, 60), 2);
        assert_eq!(entries(&m), vec![(0, 40, 1), (40, 60, 2), (60, 100, 1)]);
        m.trim_overlaps_and_emplace(r(30, 70), 3);
        assert_eq!(entries(&m), vec![(0, 30, 1), (30, 70, 3), (70, 100, 1)]);
        m.trim_overlaps_and_emplace(r(0, 100), 4);
        assert_eq!(entries(&m), vec![(0, 100, 4)]);
    }

    #[test]
    fn deleting_overlaps_reports_each_removed_entry() {
        let mut m = AddressRangeMap::default();
        m.emplace(r(0, 10), 1);
        m.emplace(r(10, 20), 2);
        m.emplace(r(30, 40), 3);
        let mut removed = Vec::new();
        m.delete_overlaps_and_emplace(r(5, 12), 4, |r, v| removed.push((r.start, v)));
        assert_eq!(removed, vec![(0, 1), (10, 2)]);
        assert_eq!(entries(&m), vec![(5, 12, 4), (30, 40, 3)]);
    }

    #[test]
    fn address_sets_merge_and_split() {
        let mut s = AddressSet::default();
        s.add(r(10, 20));
        s.add(r(20, 30));
        s.add(r(40, 50));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![r(10, 30), r(40, 50)]);
        s.remove(r(15, 45));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![r(10, 15), r(45, 50)]);
        s.add(r(0, 100));
        s.remove(r(40, 60));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![r(0, 40), r(60, 100)]);
    }
}
