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

#[cfg(feature = "sql")]
mod freeze;

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

/// One stored arg in 12 bytes instead of [`Arg`]'s 24: its (key, flat
/// key) pair as an index into the table's few distinct pairs, with the
/// value's kind in the top bits, and the value's 64 bits (as
/// [`ArgValue::hash_key`] gives them) in two halves, so that the largest
/// table of a trace of millions of args is half as large while it loads.
#[derive(Debug, Clone, Copy)]
struct StoredArg {
    /// `kind << PAIR_BITS | pair`.
    keys: u32,
    /// The value's bits, low half.
    lo: u32,
    /// The value's bits, high half.
    hi: u32,
}

/// Bits of [`StoredArg::keys`] that name the pair (the other 3 the kind).
const PAIR_BITS: u32 = 29;

/// The pair index that says the pair is kept apart
/// ([`KeyPairs::overflow`]): a table of more distinct pairs than the
/// bits can name.
const PAIR_APART: u32 = (1 << PAIR_BITS) - 1;

/// No pair yet for a key ([`KeyPairs::by_key`]).
const NO_PAIR: u32 = u32::MAX;

impl StoredArg {
    /// The value's kind ([`ArgValue::hash_key`]'s).
    #[inline]
    fn kind(self) -> u8 {
        (self.keys >> PAIR_BITS) as u8
    }

    /// The pair's index (or [`PAIR_APART`]).
    #[inline]
    fn pair(self) -> u32 {
        self.keys & PAIR_APART
    }

    /// The value's bits.
    #[inline]
    fn bits(self) -> u64 {
        u64::from(self.hi) << 32 | u64::from(self.lo)
    }

    /// The value back from its kind and bits.
    #[inline(always)]
    fn value(self) -> ArgValue {
        let bits = self.bits();
        match self.kind() {
            0 => ArgValue::Int(bits as i64),
            1 => ArgValue::Uint(bits),
            2 => ArgValue::String(StrId(self.lo)),
            3 => ArgValue::Real(f64::from_bits(bits)),
            4 => ArgValue::Pointer(bits),
            5 => ArgValue::Bool(bits != 0),
            6 => ArgValue::Json(StrId(self.lo)),
            _ => ArgValue::Null,
        }
    }

    /// Whether it holds `value` (as the dedup of sets compares values).
    fn holds(self, value: &ArgValue) -> bool {
        let (kind, bits) = value.hash_key();
        self.kind() == kind && self.bits() == bits
    }
}

/// The distinct (key, flat key) pairs of the stored args: a trace's
/// millions of args name a few hundred keys.
#[derive(Debug)]
struct KeyPairs {
    /// Each pair, by index: (key, flat key).
    pairs: Vec<(StrId, StrId)>,
    /// Per key id, the index of the last pair made with it (nearly every
    /// key has one flat key: one load finds its pair).
    by_key: Vec<u32>,
    /// Every pair's index, for a key with several flat keys.
    index: HashMap<(StrId, StrId), u32>,
    /// The pairs of args stored past [`KeyPairs::most`] distinct pairs, by
    /// the arg's place.
    overflow: HashMap<usize, (StrId, StrId)>,
    /// The most pairs indexed ([`PAIR_APART`]; fewer in tests).
    most: u32,
}

impl Default for KeyPairs {
    fn default() -> Self {
        KeyPairs {
            pairs: Vec::new(),
            by_key: Vec::new(),
            index: HashMap::default(),
            overflow: HashMap::default(),
            most: PAIR_APART,
        }
    }
}

impl KeyPairs {
    /// The index of the pair (made when new), or [`PAIR_APART`] when the
    /// bits can name no more.
    fn index_of(&mut self, key: StrId, flat_key: StrId) -> u32 {
        let k = key.0 as usize;
        if let Some(&i) = self.by_key.get(k) {
            if i != NO_PAIR && self.pairs.get(i as usize) == Some(&(key, flat_key)) {
                return i;
            }
        }
        let i = match self.index.get(&(key, flat_key)) {
            Some(&i) => i,
            None => {
                let Ok(i) = u32::try_from(self.pairs.len()) else {
                    return PAIR_APART;
                };
                if i >= self.most {
                    return PAIR_APART;
                }
                self.pairs.push((key, flat_key));
                self.index.insert((key, flat_key), i);
                i
            }
        };
        if self.by_key.len() <= k {
            self.by_key.resize(k + 1, NO_PAIR);
        }
        if let Some(slot) = self.by_key.get_mut(k) {
            *slot = i;
        }
        i
    }

    /// The (key, flat key) of the arg stored at `at`.
    #[inline(always)]
    fn get(&self, arg: StoredArg, at: usize) -> (StrId, StrId) {
        let pair = arg.pair();
        let found = if pair == PAIR_APART {
            self.overflow.get(&at)
        } else {
            self.pairs.get(pair as usize)
        };
        found.copied().unwrap_or((StrId::NULL, StrId::NULL))
    }
}

/// Every arg, and the sets already stored.
///
/// Sets are found again by a hash of their contents and compared with the
/// stored args, so a set costs no key of its own beyond its hash (most
/// slices' sets are distinct, and a copy of each as a key once cost more
/// memory and time than the rows). A set's args are consecutive and its
/// id is the place of its first: an arg keeps no set id of its own (a
/// bit per arg marks where each set starts), and its keys are a pair's
/// index ([`StoredArg`]): 12 bytes an arg where a row with its id took 32,
/// millions of times over while a trace loads.
#[derive(Debug, Default)]
pub struct ArgTable {
    /// The args, in set order.
    args: Vec<StoredArg>,
    /// Their keys' pairs.
    keys: KeyPairs,
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
        self.args.reserve(builder.args.len());
        for a in &builder.args {
            let pair = self.keys.index_of(a.key, a.flat_key);
            if pair == PAIR_APART {
                self.keys
                    .overflow
                    .insert(self.args.len(), (a.key, a.flat_key));
            }
            let (kind, bits) = a.value.hash_key();
            self.args.push(StoredArg {
                keys: u32::from(kind) << PAIR_BITS | pair,
                lo: bits as u32,
                hi: (bits >> 32) as u32,
            });
        }
        self.starts.resize(self.args.len().div_ceil(64), 0);
        if let Some(w) = self.starts.get_mut(first / 64) {
            *w |= 1 << (first % 64);
        }
        self.sets.insert(h, id);
        Some(id)
    }

    /// Whether a set starts at arg `i` (false past the end).
    #[inline(always)]
    fn starts_at(&self, i: usize) -> bool {
        self.starts
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Where the args of set `id` are: from its first to the next set's
    /// (empty for an id where no set starts).
    fn range_of(&self, id: u32) -> std::ops::Range<usize> {
        let first = id as usize;
        if !self.starts_at(first) {
            return 0..0;
        }
        let mut end = first + 1;
        while end < self.args.len() && !self.starts_at(end) {
            end += 1;
        }
        first..end
    }

    /// The arg stored at `at`, whole.
    #[inline(always)]
    fn arg_at(&self, at: usize, stored: StoredArg) -> Arg {
        let (key, flat_key) = self.keys.get(stored, at);
        Arg {
            flat_key,
            key,
            value: stored.value(),
        }
    }

    /// Whether stored set `id` holds exactly `args`, in order (their keys
    /// and values; flat keys follow from the keys).
    fn same(&self, id: u32, args: &[Arg]) -> bool {
        if !self.retired.is_empty() && self.retired.contains(&id) {
            return false;
        }
        let range = self.range_of(id);
        let start = range.start;
        let Some(stored) = self.args.get(range) else {
            return false;
        };
        stored.len() == args.len()
            && stored
                .iter()
                .zip(args)
                .enumerate()
                .all(|(i, (r, a))| r.holds(&a.value) && self.keys.get(*r, start + i).0 == a.key)
    }

    /// The args of one set (empty for an unknown or retired id).
    pub fn set(&self, id: u32) -> SetArgs<'_> {
        let range = if !self.retired.is_empty() && self.retired.contains(&id) {
            0..0
        } else {
            self.range_of(id)
        };
        SetArgs { table: self, range }
    }

    /// Forgets the index that finds a stored set again by its contents,
    /// once no set will be added (the tables freeze): its slots are MBs on
    /// a trace of a million sets. A set added after this is stored anew
    /// even when an identical one is stored.
    pub fn forget_sets(&mut self) {
        self.sets = ArgSetIndex::default();
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
        let retired_args: usize = self.retired.iter().map(|&id| self.range_of(id).len()).sum();
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

/// The args of one set ([`ArgTable::set`]), made whole as they are walked.
#[derive(Debug, Clone)]
pub struct SetArgs<'a> {
    table: &'a ArgTable,
    range: std::ops::Range<usize>,
}

impl SetArgs<'_> {
    /// Itself: the args are made as they are walked, so they are values
    /// already (for callers written when a set gave references).
    pub fn copied(self) -> Self {
        self
    }

    /// Itself, as [`SetArgs::copied`].
    pub fn cloned(self) -> Self {
        self
    }
}

impl Iterator for SetArgs<'_> {
    type Item = Arg;

    #[inline]
    fn next(&mut self) -> Option<Arg> {
        let at = self.range.next()?;
        let stored = *self.table.args.get(at)?;
        Some(self.table.arg_at(at, stored))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl ExactSizeIterator for SetArgs<'_> {}

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

    #[inline(always)]
    fn next(&mut self) -> Option<ArgRow> {
        loop {
            let at = self.next;
            let stored = *self.table.args.get(at)?;
            if self.table.starts_at(at) {
                self.set = u32::try_from(at).unwrap_or(u32::MAX);
                if !self.table.retired.is_empty() && self.table.retired.contains(&self.set) {
                    self.next += self.table.range_of(self.set).len().max(1);
                    continue;
                }
            }
            self.next += 1;
            self.left = self.left.saturating_sub(1);
            return Some(ArgRow {
                arg_set_id: self.set,
                arg: self.table.arg_at(at, stored),
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

    /// Every kind of value, its extremes among them, comes back from the
    /// 12 bytes it is stored in, with its key and flat key, also when one
    /// key has several flat keys and when the pairs are past the most the
    /// stored bits name.
    #[test]
    fn stored_args_read_back_whole() {
        assert_eq!(std::mem::size_of::<StoredArg>(), 12);
        let values = [
            ArgValue::Int(i64::MIN),
            ArgValue::Int(-1),
            ArgValue::Uint(u64::MAX),
            ArgValue::String(StrId(7)),
            ArgValue::Real(-0.0),
            ArgValue::Real(f64::NAN),
            ArgValue::Real(1.5e300),
            ArgValue::Pointer(0xdead_beef_0000_0001),
            ArgValue::Bool(true),
            ArgValue::Bool(false),
            ArgValue::Json(StrId(u32::MAX - 1)),
            ArgValue::Null,
        ];
        for most in [PAIR_APART, 2] {
            let mut t = ArgTable::default();
            t.keys.most = most;
            let mut want = Vec::new();
            let mut ids = Vec::new();
            for (i, v) in values.iter().enumerate() {
                let mut b = ArgSetBuilder::default();
                // Key 1 with flat keys 1 and 2 in turn; a key of its own.
                let flat = StrId(1 + (i % 2) as u32);
                b.add(flat, StrId(1), *v);
                b.add(StrId(100 + i as u32), StrId(100 + i as u32), *v);
                want.push(b.args().to_vec());
                ids.push(t.add_set(&b).unwrap());
            }
            for (id, want) in ids.iter().zip(&want) {
                let got: Vec<Arg> = t.set(*id).copied().collect();
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(want) {
                    assert_eq!((g.key, g.flat_key), (w.key, w.flat_key));
                    assert_eq!(g.value.hash_key(), w.value.hash_key());
                }
            }
            let rows: Vec<ArgRow> = t.rows().collect();
            assert_eq!(rows.len(), 2 * values.len());
            assert!(
                rows.iter()
                    .zip(want.iter().flatten())
                    .all(|(r, w)| r.arg.key == w.key && r.arg.flat_key == w.flat_key)
            );
            // The same sets are found again.
            for (id, want) in ids.iter().zip(&want) {
                let mut b = ArgSetBuilder::default();
                for a in want {
                    b.add(a.flat_key, a.key, a.value);
                }
                assert_eq!(t.add_set(&b), Some(*id));
            }
            assert_eq!(t.len(), 2 * values.len());
        }
    }

    /// Once the sets are forgotten an identical set is stored anew; what
    /// was stored reads back as before.
    #[test]
    fn a_set_added_after_the_sets_are_forgotten_is_stored_anew() {
        let mut t = ArgTable::default();
        let mut b = ArgSetBuilder::default();
        b.add(StrId(1), StrId(1), ArgValue::Int(3));
        assert_eq!(t.add_set(&b), Some(0));
        t.forget_sets();
        assert_eq!(t.add_set(&b), Some(1));
        assert_eq!(t.set(0).count(), 1);
        assert_eq!(t.set(1).next().map(|a| a.value), Some(ArgValue::Int(3)));
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
