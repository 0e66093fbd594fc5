//! What a sequence has already worked out for each trace point: the
//! beginning of the point's TrackEvent (its type, category, name and
//! source location ids), encoded once after the point's first event on the
//! sequence and copied into every later one, and the names of the debug
//! annotations that event carried with the first bytes of each (its tag
//! and its name's id), so that an event naming the same ones interns
//! nothing. A clear of the incremental state empties it with the interning
//! tables (by an epoch, no sweep).

use rustc_hash::FxHashMap;

use super::callsite::SiteKey;
use super::category::Category;
use protozero::varint::encode_varint;

/// Longest cached prefix: type (2) and three ids of up to four bytes
/// with their tags (5 + 5 + 6) fit with room; larger ids are not cached.
const PREFIX_MAX: usize = 26;

/// Most annotation names an entry keeps (a point with more interns them
/// on every event).
pub(crate) const SITE_ARGS: usize = 4;

/// Largest annotation name id an entry keeps (four varint bytes).
const MAX_ARG_IID: u64 = (1 << 28) - 1;

/// An annotation name a point's event carried, and the first bytes of its
/// `DebugAnnotation` in a point's events: `debug_annotations` (4)'s tag, a
/// length byte left 0 (each event writes its own), `name_iid` (1)'s tag
/// and the name's id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArgHead {
    /// The name's address (names are keyed by address and length, as the
    /// interner keys them).
    name_ptr: usize,
    /// The encoded bytes, little-endian (zeros after them).
    word: u64,
    name_len: u32,
    /// How many bytes of `word` are encoded (at most 7).
    len: u8,
}

impl ArgHead {
    const NONE: ArgHead = ArgHead {
        name_ptr: 0,
        word: 0,
        name_len: 0,
        len: 0,
    };

    /// Whether it is `name`'s.
    #[inline(always)]
    pub(crate) fn is(&self, name: &str) -> bool {
        self.name_ptr == name.as_ptr() as usize && self.name_len as usize == name.len()
    }

    /// The encoded bytes with `size` (the annotation's size after its
    /// length byte: less than 128) as the length, and how many there are.
    #[inline(always)]
    pub(crate) fn with_size(&self, size: usize) -> ([u8; 8], usize) {
        (
            (self.word | (size as u64) << 8).to_le_bytes(),
            self.len as usize,
        )
    }

    /// How many bytes it takes.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }
}

/// One point's cached prefix, valid for one epoch of one sequence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SiteEntry {
    /// The sequence's epoch when it was made (0: empty).
    epoch: u32,
    kind: u8,
    len: u8,
    /// How many of `heads` are the point's annotations.
    args: u8,
    bytes: [u8; PREFIX_MAX],
    /// What the prefix names, checked on every use: a point whose name or
    /// category changes between calls (names are expressions) still
    /// writes what it was given.
    category: usize,
    name_ptr: usize,
    name_len: usize,
    /// The annotations of the event that made it (none if it had more
    /// than [`SITE_ARGS`], or ids past [`MAX_ARG_IID`]).
    heads: [ArgHead; SITE_ARGS],
}

const EMPTY: SiteEntry = SiteEntry {
    epoch: 0,
    kind: 0,
    len: 0,
    args: 0,
    bytes: [0; PREFIX_MAX],
    category: 0,
    name_ptr: 0,
    name_len: 0,
    heads: [ArgHead::NONE; SITE_ARGS],
};

impl SiteEntry {
    /// The encoded fields at the start of a fixed-size array (zeros after
    /// them), and how many there are: for a copy of constant size.
    #[inline]
    pub(crate) fn padded(&self) -> (&[u8; PREFIX_MAX], usize) {
        (&self.bytes, self.len as usize)
    }

    /// The annotations' heads, if the point's event named these (in
    /// order); `None` for others, or more than it kept.
    #[inline]
    pub(crate) fn heads_for<'a>(
        &self,
        mut names: impl ExactSizeIterator<Item = &'a str>,
    ) -> Option<&[ArgHead]> {
        let heads = self.heads.get(..self.args as usize)?;
        (names.len() == heads.len() && heads.iter().all(|h| names.next().is_some_and(|n| h.is(n))))
            .then_some(heads)
    }
}

/// A prefix handed out for one event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prefix {
    len: u8,
    bytes: [u8; PREFIX_MAX],
}

impl Prefix {
    /// The encoded fields.
    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len as usize).unwrap_or(&[])
    }
}

/// What an event from a point is: checked against the cached entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SiteFacts {
    pub(crate) kind: u8,
    pub(crate) category: &'static Category,
    pub(crate) name: &'static str,
}

impl SiteFacts {
    #[inline]
    fn matches(&self, e: &SiteEntry) -> bool {
        e.kind == self.kind
            && e.category == self.category as *const Category as usize
            && e.name_ptr == self.name.as_ptr() as usize
            && e.name_len == self.name.len()
    }
}

/// The head of annotation `name` whose id is `iid`, if an entry keeps it.
fn arg_head(name: &'static str, iid: u64) -> Option<ArgHead> {
    let name_len = u32::try_from(name.len()).ok()?;
    if iid > MAX_ARG_IID {
        return None;
    }
    // debug_annotations (4, length-delimited), its length (0 here),
    // name_iid (1, varint), the id.
    let mut bytes = [4 << 3 | 2, 0, 1 << 3, 0, 0, 0, 0, 0];
    let n = encode_varint(iid, &mut bytes[3..]);
    Some(ArgHead {
        name_ptr: name.as_ptr() as usize,
        word: u64::from_le_bytes(bytes),
        name_len,
        len: 3 + n as u8,
    })
}

/// Direct-mapped entries for `tracing` callsites (a power of two).
const META_DIRECT: usize = 64;

/// The direct-mapped entry of the callsite whose metadata is at `m`.
#[inline]
fn meta_slot(m: usize) -> usize {
    // Fibonacci hashing: the top bits of a multiply spread nearby statics.
    ((m as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize & (META_DIRECT - 1)
}

/// A sequence's table of points.
#[derive(Debug)]
pub(crate) struct SiteCache {
    epoch: u32,
    dense: Vec<SiteEntry>,
    /// `tracing` callsites by their metadata's address, each in the one
    /// entry its address picks when that is free (or stale), so a hit is
    /// a compare, not a hash probe; ...
    meta_direct: Box<[(usize, SiteEntry)]>,
    /// ... and in this map when another callsite holds it.
    by_metadata: FxHashMap<usize, SiteEntry>,
}

impl Default for SiteCache {
    fn default() -> SiteCache {
        SiteCache {
            epoch: 1,
            dense: Vec::new(),
            meta_direct: vec![(0, EMPTY); META_DIRECT].into_boxed_slice(),
            by_metadata: FxHashMap::default(),
        }
    }
}

impl SiteCache {
    /// The prefix cached for `key` if it is this epoch's and names what
    /// `facts` say.
    #[inline]
    pub(crate) fn get(&self, key: SiteKey, facts: &SiteFacts) -> Option<Prefix> {
        self.entry(key, facts).map(|e| Prefix {
            len: e.len,
            bytes: e.bytes,
        })
    }

    /// The entry of `key` if it is this epoch's and names what `facts`
    /// say.
    #[inline]
    pub(crate) fn entry(&self, key: SiteKey, facts: &SiteFacts) -> Option<&SiteEntry> {
        let e = match key {
            SiteKey::Dense(i) => self.dense.get(i as usize)?,
            SiteKey::Metadata(m) => match self.meta_direct.get(meta_slot(m)) {
                Some((k, e)) if *k == m => e,
                _ if self.by_metadata.is_empty() => return None,
                _ => self.by_metadata.get(&m)?,
            },
        };
        (e.epoch == self.epoch && facts.matches(e)).then_some(e)
    }

    /// Caches the prefix of an event of `facts` whose ids are these, and
    /// its annotations' names with their ids (`args`, in order).
    pub(crate) fn put(
        &mut self,
        key: SiteKey,
        facts: &SiteFacts,
        category_iid: u64,
        name_iid: u64,
        location_iid: Option<u64>,
        args: &[(&'static str, u64)],
    ) {
        let mut bytes = [0u8; 40];
        let mut n = 0;
        let mut push = |v: u64| {
            let mut tmp = [0u8; 10];
            let len = encode_varint(v, &mut tmp);
            if let (Some(dst), Some(src)) = (bytes.get_mut(n..n + len), tmp.get(..len)) {
                dst.copy_from_slice(src);
            }
            n += len;
        };
        // TrackEvent: type (9), category_iids (3), name_iid (10),
        // source_location_iid (34), in the order the general path writes.
        push(9 << 3);
        push(u64::from(facts.kind));
        push(3 << 3);
        push(category_iid);
        push(10 << 3);
        push(name_iid);
        if let Some(l) = location_iid {
            push(34 << 3);
            push(l);
        }
        let Some(src) = bytes.get(..n).filter(|_| n <= PREFIX_MAX) else {
            return;
        };
        let mut entry = SiteEntry {
            epoch: self.epoch,
            kind: facts.kind,
            len: n as u8,
            args: 0,
            bytes: [0; PREFIX_MAX],
            category: facts.category as *const Category as usize,
            name_ptr: facts.name.as_ptr() as usize,
            name_len: facts.name.len(),
            heads: [ArgHead::NONE; SITE_ARGS],
        };
        entry.bytes[..n].copy_from_slice(src);
        if args.len() <= SITE_ARGS {
            let mut all = true;
            for (slot, (name, iid)) in entry.heads.iter_mut().zip(args) {
                match arg_head(name, *iid) {
                    Some(h) => *slot = h,
                    None => all = false,
                }
            }
            if all {
                entry.args = args.len() as u8;
            }
        }
        match key {
            SiteKey::Dense(i) => {
                let i = i as usize;
                if self.dense.len() <= i {
                    self.dense.resize(i + 1, EMPTY);
                }
                if let Some(slot) = self.dense.get_mut(i) {
                    *slot = entry;
                }
            }
            SiteKey::Metadata(m) => {
                let epoch = self.epoch;
                match self.meta_direct.get_mut(meta_slot(m)) {
                    // Free, stale, or this callsite's already.
                    Some(slot) if slot.0 == m || slot.0 == 0 || slot.1.epoch != epoch => {
                        *slot = (m, entry);
                    }
                    _ => {
                        self.by_metadata.insert(m, entry);
                    }
                }
            }
        }
    }

    /// Forgets every entry (the interned ids they hold are gone).
    pub(crate) fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.epoch = 1;
            self.dense.fill(EMPTY);
        }
        // Entries of an old epoch are never used; the map is kept small
        // by dropping them (its capacity stays).
        if self.epoch == 1 {
            self.meta_direct.fill((0, EMPTY));
        }
        self.by_metadata.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static CAT: Category = Category::new("c");
    static OTHER: Category = Category::new("d");

    #[test]
    fn an_entry_serves_its_point_until_a_clear() {
        let mut c = SiteCache::default();
        let facts = SiteFacts {
            kind: 1,
            category: &CAT,
            name: "n",
        };
        assert!(c.get(SiteKey::Dense(3), &facts).is_none());
        c.put(SiteKey::Dense(3), &facts, 1, 2, Some(300), &[]);
        let p = c.get(SiteKey::Dense(3), &facts).expect("cached");
        assert_eq!(
            p.as_bytes(),
            &[0x48, 1, 0x18, 1, 0x50, 2, 0x90, 0x02, 0xac, 0x02]
        );
        // Another category, name or kind at the same point: not this entry.
        let other = SiteFacts {
            category: &OTHER,
            ..facts
        };
        assert!(c.get(SiteKey::Dense(3), &other).is_none());
        let instant = SiteFacts { kind: 3, ..facts };
        assert!(c.get(SiteKey::Dense(3), &instant).is_none());
        c.put(SiteKey::Metadata(0x1000), &facts, 1, 2, None, &[]);
        assert!(c.get(SiteKey::Metadata(0x1000), &facts).is_some());
        c.clear();
        assert!(c.get(SiteKey::Dense(3), &facts).is_none());
        assert!(c.get(SiteKey::Metadata(0x1000), &facts).is_none());
    }

    #[test]
    fn callsites_sharing_a_direct_entry_keep_their_own_prefixes() {
        let mut c = SiteCache::default();
        let facts = SiteFacts {
            kind: 1,
            category: &CAT,
            name: "n",
        };
        // Two addresses that pick the same direct entry.
        let a = 0x1000;
        let b = (1..1 << 20)
            .map(|i| a + 8 * i)
            .find(|b| meta_slot(*b) == meta_slot(a))
            .expect("a colliding address");
        c.put(SiteKey::Metadata(a), &facts, 1, 2, None, &[]);
        c.put(SiteKey::Metadata(b), &facts, 3, 4, None, &[]);
        let pa = c.get(SiteKey::Metadata(a), &facts).expect("a cached");
        let pb = c.get(SiteKey::Metadata(b), &facts).expect("b cached");
        assert_eq!(pa.as_bytes(), &[0x48, 1, 0x18, 1, 0x50, 2]);
        assert_eq!(pb.as_bytes(), &[0x48, 1, 0x18, 3, 0x50, 4]);
        // After a clear, neither; the stale entry is taken again.
        c.clear();
        assert!(c.get(SiteKey::Metadata(a), &facts).is_none());
        assert!(c.get(SiteKey::Metadata(b), &facts).is_none());
        c.put(SiteKey::Metadata(b), &facts, 5, 6, None, &[]);
        let pb = c.get(SiteKey::Metadata(b), &facts).expect("b cached again");
        assert_eq!(pb.as_bytes(), &[0x48, 1, 0x18, 5, 0x50, 6]);
        assert!(c.get(SiteKey::Metadata(a), &facts).is_none());
    }

    #[test]
    fn ids_too_large_are_not_cached() {
        let mut c = SiteCache::default();
        let facts = SiteFacts {
            kind: 1,
            category: &CAT,
            name: "n",
        };
        c.put(
            SiteKey::Dense(0),
            &facts,
            u64::MAX,
            u64::MAX,
            Some(u64::MAX),
            &[],
        );
        assert!(c.get(SiteKey::Dense(0), &facts).is_none());
    }

    #[test]
    fn an_entry_stays_small() {
        // Each thread's dense table holds up to MAX_DENSE_SITES of them.
        assert!(std::mem::size_of::<SiteEntry>() <= 160);
    }

    #[test]
    fn an_entry_keeps_its_events_annotation_names_and_ids() {
        let mut c = SiteCache::default();
        let facts = SiteFacts {
            kind: 1,
            category: &CAT,
            name: "n",
        };
        let (a, b) = ("count", "what");
        c.put(SiteKey::Dense(0), &facts, 1, 2, None, &[(a, 3), (b, 300)]);
        let e = c.entry(SiteKey::Dense(0), &facts).expect("cached");
        let heads = e.heads_for([a, b].into_iter()).expect("the same names");
        assert_eq!(heads[0].with_size(5), ([0x22, 5, 0x08, 3, 0, 0, 0, 0], 4));
        assert_eq!(
            heads[1].with_size(9),
            ([0x22, 9, 0x08, 0xac, 0x02, 0, 0, 0], 5)
        );
        // Other names, another order, fewer or more: not these heads.
        let copy = String::from("count");
        assert!(e.heads_for([copy.as_str(), b].into_iter()).is_none());
        assert!(e.heads_for([b, a].into_iter()).is_none());
        assert!(e.heads_for([a].into_iter()).is_none());
        assert!(e.heads_for([a, b, a].into_iter()).is_none());
        // More than an entry keeps, or an id too large: none kept.
        let five = [(a, 1), (b, 2), (a, 1), (b, 2), (a, 1)];
        c.put(SiteKey::Dense(1), &facts, 1, 2, None, &five);
        let e = c.entry(SiteKey::Dense(1), &facts).expect("cached");
        assert!(e.heads_for(five.iter().map(|(n, _)| *n)).is_none());
        c.put(SiteKey::Dense(2), &facts, 1, 2, None, &[(a, 1 << 28)]);
        let e = c.entry(SiteKey::Dense(2), &facts).expect("cached");
        assert!(e.heads_for([a].into_iter()).is_none());
        // Gone with a clear.
        c.clear();
        assert!(c.entry(SiteKey::Dense(0), &facts).is_none());
    }
}
