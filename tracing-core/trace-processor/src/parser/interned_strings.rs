//! Interned strings resolved to string pool ids once per sequence
//! generation. A TrackEvent names its event, its categories and its debug
//! annotations by iids into its sequence's interned data; resolving one
//! from the bytes (a map lookup, a walk over the interned message, UTF-8
//! validation, then hashing the string into the pool) for every event was
//! a tenth of a load of millions of events that reuse a few dozen names.
//! Here each (generation, kind, iid) is resolved once and its pool id kept.
//!
//! A generation's interned entry can be replaced by a later `InternedData`
//! with the same iid; the generation counts such replacements
//! ([`Generation::replacements`]) and a kept id is only used while that
//! count is the one it was resolved under, so the answer is always what
//! resolving the bytes would give.

use std::borrow::Cow;

use crate::column_store::strings::{StrId, StringPool};
use crate::hash::HashMap;
use crate::sequence_state::Generation;

/// The string of an interned message's field 2 (names and strings are
/// field 2 of every interned kind used here).
pub fn interned_str(generation: &Generation, field: u32, iid: u64) -> Option<Cow<'_, str>> {
    let bytes = generation.interned(field, iid)?;
    let f = protozero::Decoder::new(bytes).find_last(2)?;
    let b = f.as_bytes().ok()?;
    Some(String::from_utf8_lossy(b))
}

/// What a kept id stands for: the interned string itself, or a key made
/// from it (a debug annotation's `debug.<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Derived {
    /// The interned string as it is.
    Plain,
    /// `debug.` and the interned string.
    DebugKey,
}

/// A cache key: generation index, what is derived, InternedData field, iid.
type Key = (u32, Derived, u32, u64);

/// An interned source location's args as pool ids: each arg's key and
/// value (the file name as the args show it), and the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLocationIds {
    /// The file name's key and value.
    pub file: (StrId, StrId),
    /// The function name's key and value.
    pub function: (StrId, StrId),
    /// The line number's key, and the line.
    pub line: (StrId, u64),
}

/// The pool ids of interned strings already resolved.
#[derive(Debug, Default)]
pub struct InternedStrings {
    /// Key → (the generation's replacement count then, the pool id).
    ids: HashMap<Key, (u32, StrId)>,
    /// (generation index, iid) → (the replacement count then, the args
    /// of an event's `source_location_iid`).
    source_locations: HashMap<(u32, u64), (u32, SourceLocationIds)>,
}

impl InternedStrings {
    /// The pool id kept for `iid` of InternedData field `field` in
    /// `generation` (index `generation_idx`) made into `derived`, if any.
    pub fn get(
        &self,
        generation_idx: u32,
        generation: &Generation,
        derived: Derived,
        field: u32,
        iid: u64,
    ) -> Option<StrId> {
        let &(seen, id) = self.ids.get(&(generation_idx, derived, field, iid))?;
        (seen == generation.replacements()).then_some(id)
    }

    /// Keeps `id` as what `iid` of `field` in `generation` resolves to.
    pub fn put(
        &mut self,
        generation_idx: u32,
        generation: &Generation,
        derived: Derived,
        field: u32,
        iid: u64,
        id: StrId,
    ) {
        let key: Key = (generation_idx, derived, field, iid);
        self.ids.insert(key, (generation.replacements(), id));
    }

    /// The args kept for source location `iid` of `generation` (index
    /// `generation_idx`), if any.
    pub fn source_location(
        &self,
        generation_idx: u32,
        generation: &Generation,
        iid: u64,
    ) -> Option<SourceLocationIds> {
        let &(seen, ids) = self.source_locations.get(&(generation_idx, iid))?;
        (seen == generation.replacements()).then_some(ids)
    }

    /// Keeps `ids` as the args of source location `iid` of `generation`.
    pub fn put_source_location(
        &mut self,
        generation_idx: u32,
        generation: &Generation,
        iid: u64,
        ids: SourceLocationIds,
    ) {
        self.source_locations
            .insert((generation_idx, iid), (generation.replacements(), ids));
    }

    /// The pool id of interned string `iid` of InternedData field `field`
    /// in `generation` (index `generation_idx`), interned now when first
    /// met; None when the sequence has no such entry. `field`'s messages
    /// carry their string in their field 2, as every interned name kind
    /// does.
    pub fn resolve(
        &mut self,
        strings: &mut StringPool,
        generation_idx: u32,
        generation: &Generation,
        field: u32,
        iid: u64,
    ) -> Option<StrId> {
        if let Some(id) = self.get(generation_idx, generation, Derived::Plain, field, iid) {
            return Some(id);
        }
        let s = interned_str(generation, field, iid)?;
        let id = strings.intern(&s);
        self.put(generation_idx, generation, Derived::Plain, field, iid, id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interned name message: iid (field 1) and the string (field 2).
    fn name_message(iid: u64, name: &str) -> Vec<u8> {
        let mut out = vec![0x08];
        let mut v = iid;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out.push(0x12);
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out
    }

    #[test]
    fn a_name_resolves_to_the_pool_id_of_its_string_once() {
        let mut g = Generation::default();
        g.intern((2, 7), name_message(7, "draw"));
        let mut strings = StringPool::default();
        let mut cache = InternedStrings::default();
        let plain = cache.resolve(&mut strings, 1, &g, 2, 7);
        assert_eq!(plain, strings.find("draw"));
        assert_eq!(cache.get(1, &g, Derived::DebugKey, 2, 7), None);
        let key = strings.intern("debug.draw");
        cache.put(1, &g, Derived::DebugKey, 2, 7, key);
        assert_eq!(cache.get(1, &g, Derived::DebugKey, 2, 7), Some(key));
        assert_eq!(cache.resolve(&mut strings, 1, &g, 2, 8), None);
        // Kept: the same id again.
        assert_eq!(cache.get(1, &g, Derived::Plain, 2, 7), plain);
        assert_eq!(cache.resolve(&mut strings, 1, &g, 2, 7), plain);
    }

    /// An iid given again in the same generation is read anew, as the
    /// bytes would be (without the replacement count the old name stayed).
    #[test]
    fn a_replaced_entry_is_resolved_again() {
        let mut g = Generation::default();
        g.intern((2, 7), name_message(7, "draw"));
        let mut strings = StringPool::default();
        let mut cache = InternedStrings::default();
        let first = cache.resolve(&mut strings, 1, &g, 2, 7);
        assert_eq!(first, strings.find("draw"));
        g.intern((2, 7), name_message(7, "layout"));
        assert_eq!(cache.get(1, &g, Derived::Plain, 2, 7), None);
        let second = cache.resolve(&mut strings, 1, &g, 2, 7);
        assert_eq!(second, strings.find("layout"));
        assert_ne!(first, second);
    }

    /// A source location's args are kept per generation and iid, and read
    /// anew once an entry of the generation was replaced.
    #[test]
    fn source_location_args_are_kept_until_a_replacement() {
        let mut g = Generation::default();
        let mut cache = InternedStrings::default();
        let ids = SourceLocationIds {
            file: (StrId(1), StrId(2)),
            function: (StrId(3), StrId(4)),
            line: (StrId(5), 42),
        };
        assert_eq!(cache.source_location(0, &g, 9), None);
        cache.put_source_location(0, &g, 9, ids);
        assert_eq!(cache.source_location(0, &g, 9), Some(ids));
        assert_eq!(cache.source_location(1, &g, 9), None);
        g.intern((4, 9), vec![8, 9]);
        g.intern((4, 9), vec![8, 9, 0x10, 1]);
        assert_eq!(cache.source_location(0, &g, 9), None);
    }

    /// Two generations with the same iid keep their own names.
    #[test]
    fn generations_do_not_share_ids() {
        let mut a = Generation::default();
        a.intern((2, 1), name_message(1, "a"));
        let mut b = Generation::default();
        b.intern((2, 1), name_message(1, "b"));
        let mut strings = StringPool::default();
        let mut cache = InternedStrings::default();
        let x = cache.resolve(&mut strings, 1, &a, 2, 1);
        let y = cache.resolve(&mut strings, 2, &b, 2, 1);
        assert_ne!(x, y);
        assert_eq!(y, strings.find("b"));
    }
}
