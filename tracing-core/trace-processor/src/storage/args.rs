//! Arg sets: the key/value bags slices, tracks, processes and threads
//! point to by `arg_set_id`. A set is stored once (an identical set gets
//! the id of the first), and its id is the `args` row id of its first arg,
//! as upstream numbers them. A set being built finds a key again by a map
//! once it holds more than a few args (an event of N debug annotations
//! looked each up in a list: N² in one packet). The row and its columns
//! are declared in `tables/args.rs`.

use crate::hash::HashMap;

pub use crate::tables::args::{Arg, ArgRow, ArgValue};

use super::arg_set_index::ArgSetIndex;
use super::strings::StrId;

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

/// One arg of a set as the dedup map keys it: key and typed value bits.
/// Every arg row, and the sets already stored.
///
/// Sets are found again by a hash of their contents and compared with the
/// stored rows, so a set costs no key of its own beyond its hash (most
/// slices' sets are distinct, and a copy of each as a key once cost more
/// memory and time than the rows).
#[derive(Debug, Default)]
pub struct ArgTable {
    /// The rows, in set order.
    pub rows: Vec<ArgRow>,
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
        let id = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        self.rows.extend(builder.args.iter().map(|&arg| ArgRow {
            arg_set_id: id,
            arg,
        }));
        self.sets.insert(h, id);
        Some(id)
    }

    /// Whether stored set `id` holds exactly `args`, in order.
    fn same(&self, id: u32, args: &[Arg]) -> bool {
        let start = id as usize;
        let Some(rows) = self.rows.get(start..start + args.len()) else {
            return false;
        };
        let next_is_other = self
            .rows
            .get(start + args.len())
            .is_none_or(|r| r.arg_set_id != id);
        next_is_other
            && rows.iter().zip(args).all(|(r, a)| {
                r.arg_set_id == id
                    && r.arg.key == a.key
                    && r.arg.value.hash_key() == a.value.hash_key()
            })
    }

    /// The args of one set (empty for an unknown id).
    pub fn set(&self, id: u32) -> impl Iterator<Item = &Arg> {
        self.rows
            .get(id as usize..)
            .unwrap_or(&[])
            .iter()
            .take_while(move |r| r.arg_set_id == id)
            .map(|r| &r.arg)
    }
}

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

    /// Past the indexed size a repeated key still replaces its arg in
    /// place, and new keys keep their order.
    #[test]
    fn a_large_set_replaces_repeated_keys_in_place() {
        let mut strings = crate::storage::strings::StringPool::default();
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
