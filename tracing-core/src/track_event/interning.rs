//! Per-sequence interning: event names, categories and debug annotation
//! names are written once per sequence (in `interned_data`) and referred to
//! by id afterwards. Names are `&'static str`, so a table is keyed by the
//! string's address and length and a lookup never hashes its bytes.

use std::collections::HashMap;

/// The kinds of interned strings TrackEvent uses (`InternedData` field numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InternKind {
    /// `event_categories` (1).
    Category = 1,
    /// `event_names` (2).
    EventName = 2,
    /// `debug_annotation_names` (3).
    AnnotationName = 3,
}

/// One sequence's interning tables.
#[derive(Debug, Default)]
pub struct Interner {
    ids: HashMap<(InternKind, usize, usize), u64>,
    next: [u64; 4],
    /// Entries made since the last packet took them: (kind, id, string).
    fresh: Vec<(InternKind, u64, &'static str)>,
}

impl Interner {
    /// The id of `s` (a new one is queued for `interned_data`).
    pub fn intern(&mut self, kind: InternKind, s: &'static str) -> u64 {
        let key = (kind, s.as_ptr() as usize, s.len());
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let slot = &mut self.next[kind as usize];
        *slot += 1;
        let id = *slot;
        self.ids.insert(key, id);
        self.fresh.push((kind, id, s));
        id
    }

    /// Entries the next packet must carry (the buffer is kept for reuse).
    pub fn drain_fresh(&mut self) -> std::vec::Drain<'_, (InternKind, u64, &'static str)> {
        self.fresh.drain(..)
    }

    /// Whether entries wait for a packet.
    pub fn has_fresh(&self) -> bool {
        !self.fresh.is_empty()
    }

    /// Forgets everything (incremental state cleared).
    pub fn clear(&mut self) {
        self.ids.clear();
        self.next = [0; 4];
        self.fresh.clear();
    }
}
