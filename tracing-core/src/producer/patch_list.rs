//! [`PatchList`]: length slots of a packet that were left behind in chunks the
//! writer already returned.
//!
//! When a packet spans chunks, the 4-byte lengths of its still-open nested
//! messages may sit in a chunk that has been handed to the service. Each such
//! slot becomes a patch `{chunk_id, offset from the chunk payload start}` whose
//! 4 bytes arrive when the nested message ends; patches are sent, in order,
//! with the next commit. A patch is ready once its first byte is non-zero (a
//! redundant 4-byte varint always has the continuation bit set in byte 0).

use std::collections::VecDeque;

use protozero::PatchId;

/// Patch id whose content is thrown away (slots of an abandoned packet).
pub const DISCARDED_PATCH: PatchId = PatchId(u32::MAX);

/// One pending length backfill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    /// Chunk holding the slot.
    pub chunk_id: u32,
    /// Offset of the slot from the start of the chunk payload.
    pub offset: u16,
    /// The 4 length bytes; all zero until filled.
    pub data: [u8; 4],
}

impl Patch {
    /// Whether the length has arrived.
    pub fn is_ready(&self) -> bool {
        self.data[0] != 0
    }
}

/// Pending patches of one writer, oldest first, addressable by [`PatchId`].
///
/// The list only holds the slots of the packet being written plus any not yet
/// sent, so it stays short; lookups scan from the newest entry.
#[derive(Debug, Default)]
pub struct PatchList {
    entries: VecDeque<(PatchId, Patch)>,
    next_id: u32,
}

impl PatchList {
    /// An empty list.
    pub fn new() -> PatchList {
        PatchList::default()
    }

    /// Whether no patch is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends an unfilled patch and returns its id (never [`DISCARDED_PATCH`]).
    pub fn push(&mut self, chunk_id: u32, offset: u16) -> PatchId {
        if self.next_id == DISCARDED_PATCH.0 {
            self.next_id = 0;
        }
        let id = PatchId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        self.entries.push_back((
            id,
            Patch {
                chunk_id,
                offset,
                data: [0; 4],
            },
        ));
        id
    }

    /// Stores the length bytes of patch `id` (unknown ids are ignored).
    pub fn fill(&mut self, id: PatchId, bytes: [u8; 4]) {
        if id == DISCARDED_PATCH {
            return;
        }
        if let Some((_, p)) = self.entries.iter_mut().rev().find(|(i, _)| *i == id) {
            p.data = bytes;
        }
    }

    /// The oldest patch.
    pub fn front(&self) -> Option<&Patch> {
        self.entries.front().map(|(_, p)| p)
    }

    /// Removes and returns the oldest patch if it is ready.
    pub fn pop_ready(&mut self) -> Option<Patch> {
        if self.front_is_ready() {
            self.entries.pop_front().map(|(_, p)| p)
        } else {
            None
        }
    }

    /// Whether the oldest patch is ready.
    pub fn front_is_ready(&self) -> bool {
        self.front().is_some_and(Patch::is_ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_drain_in_order() {
        let mut l = PatchList::new();
        let a = l.push(3, 10);
        let b = l.push(3, 20);
        let c = l.push(4, 0);
        assert!(!l.front_is_ready());
        l.fill(b, [0x85, 0x80, 0x80, 0x00]);
        assert!(l.pop_ready().is_none());
        l.fill(a, [0x81, 0x80, 0x80, 0x00]);
        l.fill(DISCARDED_PATCH, [1, 2, 3, 4]);
        assert_eq!(l.pop_ready().map(|p| (p.chunk_id, p.offset)), Some((3, 10)));
        assert_eq!(
            l.pop_ready().map(|p| p.data),
            Some([0x85, 0x80, 0x80, 0x00])
        );
        assert!(l.pop_ready().is_none());
        l.fill(c, [0x80, 0x80, 0x80, 0x00]);
        assert!(l.pop_ready().is_some());
        assert!(l.is_empty());
    }

    #[test]
    fn ids_survive_wraparound() {
        let mut l = PatchList::new();
        l.next_id = u32::MAX - 2;
        let ids: Vec<PatchId> = (0..5).map(|i| l.push(i, 0)).collect();
        assert!(!ids.contains(&DISCARDED_PATCH));
        for (i, id) in ids.iter().enumerate() {
            l.fill(*id, [0x80 | i as u8, 0x80, 0x80, 0]);
        }
        for i in 0..5u8 {
            let p = l.pop_ready().unwrap();
            assert_eq!(p.chunk_id, u32::from(i));
            assert_eq!(p.data[0], 0x80 | i);
        }
    }
}
