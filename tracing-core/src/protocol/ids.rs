//! The ids a producer and the service both name on the wire, as types with
//! their ranges. A writer id names one TraceWriter of a producer (it becomes
//! the packet sequence id together with the producer id); a buffer id
//! (`target_buffer`) names the service's trace buffer a chunk goes to; a
//! chunk id counts a writer's chunks. On the wire all three are `uint32`:
//! [`WriterId::from_wire`] and [`BufferId::from_wire`] are the one place a
//! wire value becomes an id, and refuse what is out of range.

use std::fmt;

/// Largest valid writer id (2^15 − 1); valid writer ids are
/// `1..=MAX_WRITER_ID`, 0 is never a writer. The producer allocates within
/// this range and the service drops commits and patches outside it.
pub const MAX_WRITER_ID: u16 = 32767;

/// Whether `id`, as read from the wire, is a valid writer id.
pub fn is_valid_writer_id(id: u32) -> bool {
    WriterId::from_wire(id).is_some()
}

/// One TraceWriter of a producer: `1..=`[`MAX_WRITER_ID`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriterId(u16);

impl WriterId {
    /// `id` as a writer id, or `None` outside `1..=MAX_WRITER_ID`.
    pub const fn new(id: u16) -> Option<WriterId> {
        if id >= 1 && id <= MAX_WRITER_ID {
            Some(WriterId(id))
        } else {
            None
        }
    }

    /// A writer id read from the wire (`uint32`), or `None` out of range.
    pub fn from_wire(id: u32) -> Option<WriterId> {
        u16::try_from(id).ok().and_then(WriterId::new)
    }

    /// The id's value (as the chunk header and the sequence key carry it).
    pub const fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for WriterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A trace buffer of the service (Perfetto's `BufferID`, 16 bits), global
/// across sessions: the id producers name as `target_buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u16);

impl BufferId {
    /// A `target_buffer` read from the wire, or `None` when it does not fit
    /// the 16 bits a buffer id has.
    pub fn from_wire(id: u32) -> Option<BufferId> {
        u16::try_from(id).ok().map(BufferId)
    }
}

impl fmt::Display for BufferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The number of one of a writer's chunks: counts up from 0 and wraps at
/// `u32::MAX`, so "the next chunk" is a wrapping successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ChunkId(pub u32);

impl ChunkId {
    /// The chunk after this one (wrapping).
    #[must_use]
    pub const fn next(self) -> ChunkId {
        ChunkId(self.0.wrapping_add(1))
    }

    /// The chunk before this one (wrapping).
    #[must_use]
    pub const fn prev(self) -> ChunkId {
        ChunkId(self.0.wrapping_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_ids_run_from_one_to_the_maximum() {
        assert!(!is_valid_writer_id(0));
        assert!(is_valid_writer_id(1));
        assert!(is_valid_writer_id(32767));
        assert!(!is_valid_writer_id(32768));
        assert!(!is_valid_writer_id(u32::MAX));
        assert!(!is_valid_writer_id(65537));
        assert_eq!(WriterId::new(0), None);
        assert_eq!(WriterId::new(MAX_WRITER_ID).map(WriterId::get), Some(32767));
        assert_eq!(WriterId::from_wire(7).map(WriterId::get), Some(7));
    }

    #[test]
    fn buffer_ids_have_sixteen_bits() {
        assert_eq!(BufferId::from_wire(0), Some(BufferId(0)));
        assert_eq!(BufferId::from_wire(65535), Some(BufferId(65535)));
        assert_eq!(BufferId::from_wire(65536), None);
    }

    #[test]
    fn chunk_ids_wrap() {
        assert_eq!(ChunkId(u32::MAX).next(), ChunkId(0));
        assert_eq!(ChunkId(0).prev(), ChunkId(u32::MAX));
        assert_eq!(ChunkId(41).next(), ChunkId(42));
    }
}
