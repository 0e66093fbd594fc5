//! The four states of a chunk, as stored in two bits of its page header word.
//!
//! Ownership follows the state: a producer owns a chunk that is being written,
//! the service owns one that is being read, and nobody owns a free or complete
//! chunk (a complete chunk waits for the service to pick it up).

/// State of one chunk (2 bits of the page header word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ChunkState {
    /// Nobody owns it; a producer may acquire it for writing.
    Free = 0,
    /// Owned by the producer that is filling it.
    BeingWritten = 1,
    /// Owned by the service, which is copying it out.
    BeingRead = 2,
    /// Filled and handed over; waiting for the service to read it.
    Complete = 3,
}

impl ChunkState {
    /// Decodes the low two bits of `bits`; every value is a valid state.
    #[inline]
    pub const fn from_bits(bits: u32) -> ChunkState {
        match bits & 0b11 {
            0 => ChunkState::Free,
            1 => ChunkState::BeingWritten,
            2 => ChunkState::BeingRead,
            _ => ChunkState::Complete,
        }
    }

    /// The two-bit encoding.
    #[inline]
    pub const fn bits(self) -> u32 {
        self as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_matches_perfetto() {
        assert_eq!(ChunkState::Free.bits(), 0);
        assert_eq!(ChunkState::BeingWritten.bits(), 1);
        assert_eq!(ChunkState::BeingRead.bits(), 2);
        assert_eq!(ChunkState::Complete.bits(), 3);
        for b in 0..4 {
            assert_eq!(ChunkState::from_bits(b).bits(), b);
        }
        assert_eq!(ChunkState::from_bits(0b111), ChunkState::Complete);
    }
}
