//! Arg sets: the key/value bags slices, tracks, processes and threads
//! point to by `arg_set_id`. A set is stored once (an identical set gets
//! the id of the first), and its id is the `args` row id of its first arg,
//! as upstream numbers them. A set being built finds a key again by a map
//! once it holds more than a few args (an event of N debug annotations
//! looked each up in a list: N² in one packet). The row and its columns
//! are declared in `tables/args.rs`.

use crate::hash::{HashMap, HashSet};

pub use crate::tables::args::{Arg, ArgRow, ArgValue};

use super::arg_set_index::ArgSetIndex;
use crate::column_store::strings::StrId;

/// Args a set being built holds before its keys are indexed.
const INDEXED_FROM: usize = 8;

/// The args collected for one row before they become a set: a later arg
/// with the same key replaces the earlier one in place.
#[derive(Debug, Default, Clone)]
pub struct ArgSetBuilder {
    args: Vec<Arg>,
    /// Key → position in `args`, once it holds [`INDEXED_FROM`] args.
    index: HashMap<StrId, usize>,
}

impl ArgSetBuilder {
    /// Adds (or replaces) an arg.
    pub fn add(&mut self, flat_key: StrId, key: StrId, value: ArgValue) {
        let arg = Arg {
            flat_key,
            key,
            value,
        };
        if self.args.len() < INDEXED_FROM {
            match self.args.iter_mut().find(|a| a.key == key) {
                Some(a) => *a = arg,
                None => self.args.push(arg),
            }
            return;
        }
        if self.index.len() != self.args.len() {
            self.index = self
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| (a.key, i))
                .collect();
        }
        match self.index.get(&key).and_then(|&i| self.args.get_mut(i)) {
            Some(a) => *a = arg,
            None => {
                self.index.insert(key, self.args.len());
                self.args.push(arg);
            }
        }
    }

    /// Empties it, keeping its memory for the next set.
    pub fn clear(&mut self) {
        self.args.clear();
        self.index.clear();
    }

    /// Whether no arg was added.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// The args in insertion order.
    pub fn args(&self) -> &[Arg] {
        &self.args
    }
}

/// Every arg, and the sets already stored.
///
/// Sets are found again by a hash of their contents and compared with the
/// stored args, so a set costs no key of its own beyond its hash (most
/// slices' sets are distinct, and a copy of each as a key once cost more
/// memory and time than the rows). A set's args are consecutive and its
/// id is the place of its first: an arg keeps no set id of its own (a
/// bit per arg marks where each set starts), 24 bytes where a row with
/// its id took 32, millions of times over while a trace loads.
#[derive(Debug, Default)]
pub struct ArgTable {
    /// The args, in set order.
    args: Vec<Arg>,
    /// A bit per arg, set where a set starts.
    starts: Vec<u64>,
    /// The sets taken out of the table (replaced by their translation):
    /// left out of it when it freezes.
    retired: HashSet<u32>,
    /// Content hash → the sets with it.
    sets: ArgSetIndex,
    state: foldhash::fast::RandomState,
}

impl ArgTable {
    /// Stores a set (or finds the identical one) and returns its id; None
    /// for an empty set.
    pub fn add_set(&mut self, builder: &ArgSetBuilder) -> Option<u32> {
        use std::hash::{BuildHasher, Hash, Hasher};
        if builder.is_empty() {
            return None;
        }
        let mut hasher = self.state.build_hasher();
        for a in &builder.args {
            a.key.hash(&mut hasher);
            a.value.hash_key().hash(&mut hasher);
        }
        let h = hasher.finish();
        if let Some(id) = self.sets.find(h, |id| self.same(id, &builder.args)) {
            return Some(id);
        }
        let first = self.args.len();
        let id = u32::try_from(first).unwrap_or(u32::MAX);
        self.args.extend_from_slice(&builder.args);
        self.starts.resize(self.args.len().div_ceil(64), 0);
        if let Some(w) = self.starts.get_mut(first / 64) {
            *w |= 1 << (first % 64);
        }
        self.sets.insert(h, id);
        Some(id)
    }

    /// Whether a set starts at arg `i` (false past the end).
    fn starts_at(&self, i: usize) -> bool {
        self.starts
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// The args of set `id`: from its first to the next set's (empty for
    /// an id where no set starts).
    fn args_of(&self, id: u32) -> &[Arg] {
        let first = id as usize;
        if !self.starts_at(first) {
            return &[];
        }
        let mut end = first + 1;
        while end < self.args.len() && !self.starts_at(end) {
            end += 1;
        }
        self.args.get(first..end).unwrap_or(&[])
    }

    /// Whether stored set `id` holds exactly `args`, in order.
    fn same(&self, id: u32, args: &[Arg]) -> bool {
        if !self.retired.is_empty() && self.retired.contains(&id) {
            return false;
        }
        let stored = self.args_of(id);
        stored.len() == args.len()
            && stored
                .iter()
                .zip(args)
                .all(|(r, a)| r.key == a.key && r.value.hash_key() == a.value.hash_key())
    }

    /// The args of one set (empty for an unknown or retired id).
    pub fn set(&self, id: u32) -> impl Iterator<Item = &Arg> {
        let args = if !self.retired.is_empty() && self.retired.contains(&id) {
            &[]
        } else {
            self.args_of(id)
        };
        args.iter()
    }

    /// Takes set `id` out of the table: [`Self::set`] no longer gives it,
    /// no set is found equal to it and it is left out when the table
    /// freezes (a set replaced by its translation, as upstream stores only
    /// the translated one).
    pub fn retire(&mut self, id: u32) {
        if self.starts_at(id as usize) {
            self.retired.insert(id);
        }
    }

    /// The rows of the `args` table: each arg of a set not retired, with
    /// its set, in set order.
    pub fn rows(&self) -> ArgRows<'_> {
        let retired_args: usize = self.retired.iter().map(|&id| self.args_of(id).len()).sum();
        ArgRows {
            table: self,
            next: 0,
            set: 0,
            left: self.args.len().saturating_sub(retired_args),
        }
    }

    /// How many args are stored (retired sets' included).
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// Whether no arg is stored.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }
}

/// The rows of the `args` table ([`ArgTable::rows`]), built as they are
/// walked.
#[derive(Debug, Clone)]
pub struct ArgRows<'a> {
    table: &'a ArgTable,
    /// The next arg.
    next: usize,
    /// The set the next arg belongs to, unless one starts there.
    set: u32,
    /// Rows left.
    left: usize,
}

impl Iterator for ArgRows<'_> {
    type Item = ArgRow;

    fn next(&mut self) -> Option<ArgRow> {
        loop {
            let arg = *self.table.args.get(self.next)?;
            if self.table.starts_at(self.next) {
                self.set = u32::try_from(self.next).unwrap_or(u32::MAX);
                if !self.table.retired.is_empty() && self.table.retired.contains(&self.set) {
                    self.next += self.table.args_of(self.set).len().max(1);
                    continue;
                }
            }
            self.next += 1;
            self.left = self.left.saturating_sub(1);
            return Some(ArgRow {
                arg_set_id: self.set,
                arg,
            });
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for ArgRows<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_that_starts_another_is_not_taken_for_it() {
        let mut t = ArgTable::default();
        let mut long = ArgSetBuilder::default();
        long.add(StrId(1), StrId(1), ArgValue::Int(3));
        long.add(StrId(2), StrId(2), ArgValue::Int(4));
        let mut short = ArgSetBuilder::default();
        short.add(StrId(1), StrId(1), ArgValue::Int(3));
        let a = t.add_set(&long);
        let b = t.add_set(&short);
        assert_ne!(a, b);
        assert_eq!(t.add_set(&short), b);
        assert_eq!(t.add_set(&long), a);
        assert_eq!(t.set(b.unwrap()).count(), 1);
    }

    #[test]
    fn identical_sets_share_an_id_and_ids_are_first_rows() {
        let mut t = ArgTable::default();
        let mut b = ArgSetBuilder::default();
        b.add(StrId(1), StrId(1), ArgValue::Int(3));
        b.add(StrId(2), StrId(2), ArgValue::Int(4));
        b.add(StrId(1), StrId(1), ArgValue::Int(5));
        assert_eq!(b.args().len(), 2);
        assert_eq!(t.add_set(&b), Some(0));
        assert_eq!(t.add_set(&b), Some(0));
        let mut c = ArgSetBuilder::default();
        c.add(StrId(1), StrId(1), ArgValue::Real(1.0));
        assert_eq!(t.add_set(&c), Some(2));
        assert_eq!(t.set(0).count(), 2);
        assert_eq!(t.add_set(&ArgSetBuilder::default()), None);
    }

    /// The table's rows name each arg's set; a retired set is left out of
    /// them, is no longer given by `set` and is not found again.
    #[test]
    fn rows_name_their_set_and_leave_retired_sets_out() {
        let mut t = ArgTable::default();
        let set = |vals: &[i64]| {
            let mut b = ArgSetBuilder::default();
            for (i, v) in vals.iter().enumerate() {
                b.add(StrId(i as u32 + 1), StrId(i as u32 + 1), ArgValue::Int(*v));
            }
            b
        };
        // Sets across a word of start bits.
        let mut ids = Vec::new();
        for n in 0..40i64 {
            let vals: Vec<i64> = (0..(n % 3 + 1)).map(|k| n * 10 + k).collect();
            ids.push(t.add_set(&set(&vals)).unwrap());
        }
        let rows: Vec<ArgRow> = t.rows().collect();
        assert_eq!(rows.len(), t.len());
        assert_eq!(t.rows().len(), t.len());
        for (n, id) in ids.iter().enumerate() {
            let got: Vec<i64> = rows
                .iter()
                .filter(|r| r.arg_set_id == *id)
                .map(|r| match r.arg.value {
                    ArgValue::Int(v) => v,
                    _ => -1,
                })
                .collect();
            let want: Vec<i64> = (0..(n as i64 % 3 + 1)).map(|k| n as i64 * 10 + k).collect();
            assert_eq!(got, want);
            assert_eq!(t.set(*id).count(), want.len());
        }
        t.retire(ids[5]);
        t.retire(ids[39]);
        // Not a set's start: nothing happens.
        t.retire(ids[7] + 1);
        let kept: Vec<ArgRow> = t.rows().collect();
        assert_eq!(kept.len(), t.rows().len());
        assert_eq!(kept.len(), t.len() - 3 - 1);
        assert!(
            kept.iter()
                .all(|r| r.arg_set_id != ids[5] && r.arg_set_id != ids[39])
        );
        assert_eq!(t.set(ids[5]).count(), 0);
        assert_eq!(t.set(ids[7]).count(), 2);
        // An identical set is stored anew.
        let again = t.add_set(&set(&[50, 51, 52])).unwrap();
        assert_ne!(again, ids[5]);
        assert_eq!(t.add_set(&set(&[70, 71])), Some(ids[7]));
    }

    /// Past the indexed size a repeated key still replaces its arg in
    /// place, and new keys keep their order.
    #[test]
    fn a_large_set_replaces_repeated_keys_in_place() {
        let mut strings = crate::column_store::strings::StringPool::default();
        let keys: Vec<StrId> = (0..20).map(|i| strings.intern(&format!("k{i}"))).collect();
        let mut b = ArgSetBuilder::default();
        for (i, &k) in keys.iter().enumerate() {
            b.add(k, k, ArgValue::Int(i as i64));
        }
        b.add(keys[3], keys[3], ArgValue::Int(-3));
        b.add(keys[15], keys[15], ArgValue::Int(-15));
        assert_eq!(b.args().len(), 20);
        assert_eq!(b.args()[3].value, ArgValue::Int(-3));
        assert_eq!(b.args()[15].value, ArgValue::Int(-15));
        assert!(b.args().iter().zip(&keys).all(|(a, k)| a.key == *k));
    }
}
