//! Writer ids: unique per arbiter, in 1..=32767, handed out round-robin so a
//! just-released id is not reused at once (the service may still hold chunks
//! of the old writer).

use crate::protocol::{MAX_WRITER_ID, WriterId};

/// Round-robin allocator over 1..=32767.
#[derive(Debug)]
pub struct WriterIdAllocator {
    in_use: Vec<u64>,
    last: u16,
}

impl Default for WriterIdAllocator {
    fn default() -> Self {
        WriterIdAllocator {
            in_use: vec![0; (MAX_WRITER_ID as usize + 1).div_ceil(64)],
            last: 0,
        }
    }
}

impl WriterIdAllocator {
    #[cfg(test)]
    /// An allocator with every id free.
    pub fn new() -> WriterIdAllocator {
        WriterIdAllocator::default()
    }

    fn is_used(&self, id: u16) -> bool {
        self.in_use[id as usize / 64] & (1 << (id % 64)) != 0
    }

    /// The next free id after the last one handed out, or `None` when all
    /// 32767 are taken.
    pub fn allocate(&mut self) -> Option<WriterId> {
        for i in 1..=MAX_WRITER_ID {
            let id =
                ((u32::from(self.last) + u32::from(i) - 1) % u32::from(MAX_WRITER_ID) + 1) as u16;
            if !self.is_used(id) {
                self.in_use[id as usize / 64] |= 1 << (id % 64);
                self.last = id;
                return WriterId::new(id);
            }
        }
        None
    }

    /// Returns `id` to the pool (ids never allocated are ignored).
    pub fn release(&mut self, id: WriterId) {
        let id = id.get();
        self.in_use[id as usize / 64] &= !(1 << (id % 64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u16) -> WriterId {
        WriterId::new(n).unwrap()
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe code: exhausting 65,535 ids took 55 s of Miri's run"
    )]
    fn round_robin_reuse_and_exhaustion() {
        let mut a = WriterIdAllocator::new();
        assert_eq!(a.allocate(), Some(id(1)));
        assert_eq!(a.allocate(), Some(id(2)));
        a.release(id(1));
        // Round robin: 1 is not reused before the range wraps.
        assert_eq!(a.allocate(), Some(id(3)));
        for _ in 4..=MAX_WRITER_ID {
            assert!(a.allocate().is_some());
        }
        // Wrapped: only 1 is free.
        assert_eq!(a.allocate(), Some(id(1)));
        assert_eq!(a.allocate(), None);
        a.release(id(500));
        assert_eq!(a.allocate(), Some(id(500)));
    }
}
