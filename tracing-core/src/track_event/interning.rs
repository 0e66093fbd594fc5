//! Per-sequence interning: event names, categories, debug annotation names
//! and source locations are written once per sequence (in `interned_data`)
//! and referred to by id afterwards. Names are `&'static str`, so a table is
//! keyed by the string's address and length and a lookup never hashes its
//! bytes (the hasher is `rustc-hash`'s, a multiply per word).

use rustc_hash::FxHashMap;

/// The kinds of interned entries TrackEvent uses (`InternedData` field numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InternKind {
    /// `event_categories` (1).
    Category = 1,
    /// `event_names` (2).
    EventName = 2,
    /// `debug_annotation_names` (3).
    AnnotationName = 3,
    /// `source_locations` (4).
    SourceLocation = 4,
}

/// Where in the source an event was emitted (`SourceLocation` in
/// `interned_data`): build one with [`source_location!`](crate::source_location) or from a
/// `tracing` callsite's metadata. Rust has no function-name macro, so
/// `function` is whatever the caller names (the macros give the module path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// `file_name`.
    pub file: &'static str,
    /// `function_name` (the module path when the macros fill it in).
    pub function: &'static str,
    /// `line_number`.
    pub line: u32,
}

impl SourceLocation {
    /// A location from `file!()`, `module_path!()` and `line!()`.
    pub const fn new(file: &'static str, function: &'static str, line: u32) -> SourceLocation {
        SourceLocation {
            file,
            function,
            line,
        }
    }

    /// The table key: the strings' addresses, not their bytes.
    fn key(&self) -> (usize, usize, u32) {
        (
            self.file.as_ptr() as usize ^ self.file.len().rotate_left(48),
            self.function.as_ptr() as usize ^ self.function.len().rotate_left(48),
            self.line,
        )
    }
}

/// The location of the macro call (file, module path, line).
#[macro_export]
macro_rules! source_location {
    () => {
        $crate::track_event::SourceLocation::new(file!(), module_path!(), line!())
    };
}

/// An entry made since the last packet took the fresh ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// A string table entry: (kind, id, string).
    Name(InternKind, u64, &'static str),
    /// A source location: (id, location).
    Location(u64, SourceLocation),
}

/// Slots of the direct-mapped cache in front of the name table.
const CACHE_SLOTS: usize = 64;

/// A cached name: its address, its length and kind, its id (0: empty).
#[derive(Debug, Clone, Copy, Default)]
struct CacheSlot {
    ptr: usize,
    len_kind: usize,
    id: u64,
}

/// One sequence's interning tables.
#[derive(Debug)]
pub struct Interner {
    /// The hot names, looked up without hashing: a trace point's names
    /// are the same few `&'static str`s every time.
    cache: [CacheSlot; CACHE_SLOTS],
    ids: FxHashMap<(InternKind, usize, usize), u64>,
    locations: FxHashMap<(usize, usize, u32), u64>,
    next: [u64; 5],
    /// Entries made since the last packet took them.
    fresh: Vec<Fresh>,
}

impl Default for Interner {
    fn default() -> Interner {
        Interner {
            cache: [CacheSlot::default(); CACHE_SLOTS],
            ids: FxHashMap::default(),
            locations: FxHashMap::default(),
            next: [0; 5],
            fresh: Vec::new(),
        }
    }
}

impl Interner {
    /// The id of `s` (a new one is queued for `interned_data`).
    #[inline]
    pub fn intern(&mut self, kind: InternKind, s: &'static str) -> u64 {
        let ptr = s.as_ptr() as usize;
        let len_kind = s.len() << 3 | kind as usize;
        // Fibonacci hashing: the top bits of a multiply spread nearby addresses.
        let slot = ((ptr ^ len_kind << 48) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58;
        let slot = slot as usize % CACHE_SLOTS;
        let c = self.cache[slot];
        if c.ptr == ptr && c.len_kind == len_kind && c.id != 0 {
            return c.id;
        }
        let id = self.intern_slow(kind, s);
        self.cache[slot] = CacheSlot { ptr, len_kind, id };
        id
    }

    /// The table lookup behind the cache.
    #[inline(never)]
    fn intern_slow(&mut self, kind: InternKind, s: &'static str) -> u64 {
        let key = (kind, s.as_ptr() as usize, s.len());
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.next_id(kind);
        self.ids.insert(key, id);
        self.fresh.push(Fresh::Name(kind, id, s));
        id
    }

    /// The id of source location `loc` (a new one is queued).
    #[inline]
    pub fn intern_location(&mut self, loc: &SourceLocation) -> u64 {
        let key = loc.key();
        if let Some(&id) = self.locations.get(&key) {
            return id;
        }
        let id = self.next_id(InternKind::SourceLocation);
        self.locations.insert(key, id);
        self.fresh.push(Fresh::Location(id, *loc));
        id
    }

    fn next_id(&mut self, kind: InternKind) -> u64 {
        let slot = &mut self.next[kind as usize];
        *slot += 1;
        *slot
    }

    /// Entries the next packet must carry (the buffer is kept for reuse).
    pub fn drain_fresh(&mut self) -> std::vec::Drain<'_, Fresh> {
        self.fresh.drain(..)
    }

    /// Whether entries wait for a packet.
    #[inline]
    pub fn has_fresh(&self) -> bool {
        !self.fresh.is_empty()
    }

    /// Forgets everything (incremental state cleared).
    pub fn clear(&mut self) {
        self.cache = [CacheSlot::default(); CACHE_SLOTS];
        self.ids.clear();
        self.locations.clear();
        self.next = [0; 5];
        self.fresh.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_per_kind_and_stable_until_cleared() {
        let mut i = Interner::default();
        let a = i.intern(InternKind::EventName, "a");
        let b = i.intern(InternKind::EventName, "b");
        let c = i.intern(InternKind::Category, "a");
        assert_eq!((a, b, c), (1, 2, 1));
        assert_eq!(i.intern(InternKind::EventName, "a"), 1);
        let here = SourceLocation::new("f.rs", "m", 3);
        let there = SourceLocation::new("f.rs", "m", 4);
        assert_eq!(i.intern_location(&here), 1);
        assert_eq!(i.intern_location(&there), 2);
        assert_eq!(i.intern_location(&here), 1);
        assert_eq!(i.drain_fresh().count(), 5);
        assert!(!i.has_fresh());
        i.clear();
        assert_eq!(i.intern(InternKind::EventName, "b"), 1);
        assert_eq!(i.intern_location(&there), 1);
    }
}
