//! Where the packets' bytes wait for the sort. One allocation per packet
//! (and a `Vec` header in every queued packet) cost more than the copy
//! itself on traces of millions of small TrackEvents, so the bytes are
//! appended to large blocks and a packet keeps only where its bytes are.
//! Blocks are never moved once written, so no byte is copied twice.
//!
//! Each block counts the packets still to be read in it: a packet's bytes
//! are read once (parsed, or dropped unparsed) and then released, and a
//! block whose packets were all released goes back (one spare block is
//! kept to be filled again), so that the arena holds about what the sort
//! window holds, not the whole trace.
//!
//! A block given back must also leave the process's resident memory:
//! glibc serves an allocation from its heap rather than by its own
//! mapping once a larger mapped one was freed (its threshold follows
//! them up to 32 MiB), and a freed block inside the heap stays resident.
//! The allocator is asked to return its free memory after every
//! [`TRIM_EVERY`] bytes of blocks given back and when the arena goes
//! (`free_memory.rs`). On a 226 MB recording with 1 MiB blocks the load's
//! peak was 64 MB higher without.

/// Bytes of one shared block. A packet larger than a quarter of it gets a
/// block of its own, so a block wastes at most a quarter of itself. One
/// packet keeps its whole block until it is read, and a trace's first
/// packets may be read last (a service writes its trace's provenance
/// first, stamped at the end): 1 MiB keeps a block pinned so small beside
/// the trace, where 16 MiB blocks kept 16 MiB of a 226 MB recording until
/// its end.
pub(crate) const BLOCK: usize = 1 << 20;

/// Bytes of blocks given back between two requests to the allocator to
/// return its free memory.
const TRIM_EVERY: usize = 16 << 20;

/// Where a packet's bytes are in the arena, in 64 bits (millions of them
/// wait in the sort window at once): the block's index in the top
/// [`BLOCK_BITS`], the start in the block in the next 20 (a shared block
/// is [`BLOCK`] = 2^20 bytes), the length in the low 20. A packet with a
/// block of its own starts at 0 and its length is [`OWN_BLOCK`], read as
/// the block's length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteRange(u64);

/// Bits of a range's block index: 2^24 blocks, 16 TiB of shared blocks.
const BLOCK_BITS: u32 = 24;

/// Bits of a range's start and of its length.
const OFFSET_BITS: u32 = 20;

const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// The length of a range whose packet has its block to itself (a shared
/// block's packet is at most a quarter of [`BLOCK`], well under it).
const OWN_BLOCK: u32 = (1 << OFFSET_BITS) - 1;

impl ByteRange {
    /// The range of `len` bytes at `start` of block `block`; `None` past
    /// the bits (a start or length of 2^20 or more, 2^24 blocks).
    fn new(block: u32, start: u32, len: u32) -> Option<ByteRange> {
        if block >= 1 << BLOCK_BITS || u64::from(start) > OFFSET_MASK || len > OWN_BLOCK {
            return None;
        }
        Some(ByteRange(
            (u64::from(block) << (2 * OFFSET_BITS))
                | (u64::from(start) << OFFSET_BITS)
                | u64::from(len),
        ))
    }

    fn block(self) -> u32 {
        (self.0 >> (2 * OFFSET_BITS)) as u32
    }

    fn start(self) -> usize {
        ((self.0 >> OFFSET_BITS) & OFFSET_MASK) as usize
    }

    /// The length field ([`OWN_BLOCK`] for a block of its own).
    fn len_field(self) -> u32 {
        (self.0 & OFFSET_MASK) as u32
    }
}

/// The blocks of packet bytes.
#[derive(Debug, Default)]
pub struct PacketArena {
    blocks: Vec<Vec<u8>>,
    /// The shared block being filled.
    current: Option<u32>,
    /// Per block, the packets pushed into it and not yet released.
    unread: Vec<u32>,
    /// A shared block given back, kept to be filled again.
    spare: Option<Vec<u8>>,
    /// Bytes of the blocks held now, and the most held at once.
    held: usize,
    high_water: usize,
    /// Bytes of blocks given back since the allocator was last asked to
    /// return its free memory.
    untrimmed: usize,
}

impl Drop for PacketArena {
    fn drop(&mut self) {
        let held = !self.blocks.is_empty() || self.spare.is_some();
        self.blocks = Vec::new();
        self.spare = None;
        if held {
            crate::free_memory::release();
        }
    }
}

impl PacketArena {
    /// Appends `bytes`; where they are. `None` only for more bytes or
    /// blocks than the ranges can name (4 GiB in one packet, 2^32 blocks),
    /// which the tokenizer's packet size limit rules out.
    pub fn push(&mut self, bytes: &[u8]) -> Option<ByteRange> {
        if bytes.is_empty() {
            return Some(ByteRange::default());
        }
        if bytes.len() > BLOCK / 4 {
            let block = u32::try_from(self.blocks.len()).ok()?;
            let range = ByteRange::new(block, 0, OWN_BLOCK)?;
            self.blocks.push(bytes.to_vec());
            self.unread.push(1);
            self.grow(bytes.len());
            return Some(range);
        }
        let len = u32::try_from(bytes.len()).ok()?;
        let fits = self
            .current
            .and_then(|i| self.blocks.get(i as usize))
            .is_some_and(|b| b.capacity() - b.len() >= bytes.len());
        if !fits {
            let block = u32::try_from(self.blocks.len()).ok()?;
            // The block left behind goes back now if all its packets were
            // read while it was being filled.
            if let Some(old) = self.current {
                if self.unread.get(old as usize) == Some(&0) {
                    self.give_back(old as usize);
                }
            }
            let fresh = match self.spare.take() {
                Some(b) => b,
                None => {
                    self.grow(BLOCK);
                    Vec::with_capacity(BLOCK)
                }
            };
            self.blocks.push(fresh);
            self.unread.push(0);
            self.current = Some(block);
        }
        let block = self.current?;
        let b = self.blocks.get_mut(block as usize)?;
        let start = u32::try_from(b.len()).ok()?;
        let range = ByteRange::new(block, start, len)?;
        b.extend_from_slice(bytes);
        if let Some(n) = self.unread.get_mut(block as usize) {
            *n += 1;
        }
        Some(range)
    }

    fn grow(&mut self, bytes: usize) {
        self.held = self.held.saturating_add(bytes);
        self.high_water = self.high_water.max(self.held);
    }

    /// Block `i`'s memory goes back (a shared one is kept as the spare
    /// when there is none).
    fn give_back(&mut self, i: usize) {
        let Some(b) = self.blocks.get_mut(i) else {
            return;
        };
        let b = std::mem::take(b);
        if b.capacity() == BLOCK && self.spare.is_none() {
            let mut b = b;
            b.clear();
            self.spare = Some(b);
        } else {
            let freed = b.capacity();
            drop(b);
            self.held = self.held.saturating_sub(freed);
            self.untrimmed += freed;
            if self.untrimmed >= TRIM_EVERY {
                self.untrimmed = 0;
                crate::free_memory::release();
            }
        }
    }

    /// `range` (one this arena gave) was read for the last time: its
    /// block's memory goes back once all of its ranges were, unless it is
    /// the block being filled (it goes back when the next one starts).
    /// Packets leave the sort in about the stream order blocks are filled
    /// in, so blocks go back as the parsing moves through the trace.
    pub fn release(&mut self, range: ByteRange) {
        if range.len_field() == 0 {
            return;
        }
        let i = range.block() as usize;
        let Some(n) = self.unread.get_mut(i) else {
            return;
        };
        *n = n.saturating_sub(1);
        if *n == 0 && self.current != Some(range.block()) {
            self.give_back(i);
        }
    }

    /// The most bytes of blocks held at once.
    pub fn high_water_bytes(&self) -> usize {
        self.high_water
    }

    /// The bytes of `range` (empty for a range this arena did not give).
    pub fn get(&self, range: ByteRange) -> &[u8] {
        let Some(b) = self.blocks.get(range.block() as usize) else {
            return &[];
        };
        let start = range.start();
        let end = match range.len_field() {
            OWN_BLOCK => b.len(),
            len => start + len as usize,
        };
        b.get(start..end).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_come_back_as_pushed_across_blocks() {
        let mut a = PacketArena::default();
        let small: Vec<Vec<u8>> = (0..40u32).map(|i| vec![i as u8; BLOCK / 32]).collect();
        let big = vec![7u8; BLOCK / 2];
        let mut ranges: Vec<_> = small.iter().map(|s| a.push(s).unwrap()).collect();
        ranges.push(a.push(&big).unwrap());
        ranges.push(a.push(&[]).unwrap());
        for (r, s) in ranges.iter().zip(small.iter()) {
            assert_eq!(a.get(*r), s.as_slice());
        }
        assert_eq!(a.get(ranges[40]), big.as_slice());
        assert!(a.get(ranges[41]).is_empty());
        // 40 packets of a 32nd of a block fill 2 shared blocks and the
        // large one has its own.
        assert_eq!(a.blocks.len(), 3);
    }

    #[test]
    fn a_block_goes_back_when_its_last_range_is_read() {
        let mut a = PacketArena::default();
        let big = vec![1u8; BLOCK / 2];
        let r1 = a.push(&big).unwrap();
        let r2 = a.push(&[2, 3]).unwrap();
        let r3 = a.push(&[4]).unwrap();
        a.release(r2);
        assert_eq!(a.get(r3), &[4]);
        a.release(r3);
        // The block being filled stays until the next one starts.
        assert_eq!(a.get(r3), &[4]);
        let quarter = vec![5u8; BLOCK / 4];
        let filling: Vec<_> = (0..3).map(|_| a.push(&quarter).unwrap()).collect();
        let next = a.push(&quarter).unwrap();
        assert_ne!(next.block(), r3.block());
        assert_eq!(a.get(filling[0]).len(), BLOCK / 4);
        for r in filling {
            a.release(r);
        }
        assert!(a.get(r3).is_empty());
        assert_eq!(a.blocks[r3.block() as usize].capacity(), 0);
        assert_eq!(a.get(next).len(), BLOCK / 4);
        assert_eq!(a.get(r1).len(), BLOCK / 2);
        a.release(r1);
        assert!(a.get(r1).is_empty());
    }

    #[test]
    fn a_block_whose_packets_were_read_is_filled_again() {
        let mut a = PacketArena::default();
        let quarter = vec![1u8; BLOCK / 4];
        for _ in 0..40 {
            let r = a.push(&quarter).unwrap();
            a.release(r);
        }
        // Each block's packets were read before the next one started: the
        // one block is filled again and again.
        assert_eq!(a.high_water_bytes(), BLOCK);
        assert!(a.blocks.len() > 2);
    }

    /// Millions of ranges wait at once: each in 8 bytes, its fields whole
    /// at their extremes, and a range past the bits refused.
    #[test]
    fn a_range_is_8_bytes_and_reads_back_its_fields() {
        assert_eq!(std::mem::size_of::<ByteRange>(), 8);
        let last = (1 << BLOCK_BITS) - 1;
        let r = ByteRange::new(last, OFFSET_MASK as u32, (BLOCK / 4) as u32).unwrap();
        assert_eq!(
            (r.block(), r.start(), r.len_field()),
            (last, OFFSET_MASK as usize, (BLOCK / 4) as u32)
        );
        assert!(ByteRange::new(last + 1, 0, 1).is_none());
        assert!(ByteRange::new(0, 1 << OFFSET_BITS, 1).is_none());
        assert!(ByteRange::new(0, 0, OWN_BLOCK + 1).is_none());
    }

    #[test]
    fn a_foreign_range_reads_as_empty() {
        let a = PacketArena::default();
        let r = ByteRange::new(3, 1, 9).unwrap();
        assert!(a.get(r).is_empty());
        assert!(a.get(ByteRange::new(3, 0, OWN_BLOCK).unwrap()).is_empty());
    }
}
