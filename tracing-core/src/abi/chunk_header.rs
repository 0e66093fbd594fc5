//! The 8-byte chunk header: `chunk_id` (u32), `writer_id` (u16) and `packets`
//! (u16: fragment count in bits 0–9, flags in bits 10–15), little-endian.
//!
//! In shared memory the three fields are atomics (see `chunk.rs`); this file is
//! the value type and its byte encoding, used for known-answer tests and for
//! chunks that arrive as bytes over IPC.

/// Size of the chunk header.
pub const CHUNK_HEADER_SIZE: usize = 8;
/// Largest value of the 10-bit packet count.
pub const MAX_PACKET_COUNT: u16 = 1023;
/// Shift of the flags inside the `packets` field.
pub const FLAGS_SHIFT: u16 = 10;

/// The chunk flags (6 bits in the header; three are defined).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ChunkFlags(u8);

impl ChunkFlags {
    /// No flag set.
    pub const NONE: ChunkFlags = ChunkFlags(0);
    /// The first fragment continues a packet begun in the previous chunk of the writer.
    pub const FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK: ChunkFlags = ChunkFlags(1);
    /// The last fragment is continued in the next chunk of the writer.
    pub const LAST_PACKET_CONTINUES_ON_NEXT_CHUNK: ChunkFlags = ChunkFlags(2);
    /// Some length slots of the last packet will be patched out of band.
    pub const CHUNK_NEEDS_PATCHING: ChunkFlags = ChunkFlags(4);
    /// Mask of the flags defined by the ABI.
    pub const KNOWN_MASK: u8 = 0x7;

    /// Flags from the 6 raw bits (bits above 5 are dropped).
    #[inline]
    pub const fn from_bits(bits: u8) -> ChunkFlags {
        ChunkFlags(bits & 0x3F)
    }

    /// The raw 6 bits.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: ChunkFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union.
    #[inline]
    pub const fn union(self, other: ChunkFlags) -> ChunkFlags {
        ChunkFlags(self.0 | other.0)
    }

    /// These flags without those of `other`.
    #[inline]
    pub const fn without(self, other: ChunkFlags) -> ChunkFlags {
        ChunkFlags(self.0 & !other.0)
    }
}

/// The `packets` field: fragment count and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Packets {
    /// Number of fragments started in the chunk (10 bits).
    pub count: u16,
    /// Chunk flags.
    pub flags: ChunkFlags,
}

impl Packets {
    /// Decodes the raw u16.
    #[inline]
    pub const fn from_raw(raw: u16) -> Packets {
        Packets {
            count: raw & MAX_PACKET_COUNT,
            flags: ChunkFlags::from_bits((raw >> FLAGS_SHIFT) as u8),
        }
    }

    /// Encodes as the raw u16 (`count` is truncated to 10 bits).
    #[inline]
    pub const fn to_raw(self) -> u16 {
        (self.count & MAX_PACKET_COUNT) | ((self.flags.bits() as u16) << FLAGS_SHIFT)
    }
}

/// A chunk header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ChunkHeader {
    /// Per-writer sequence number of the chunk (wraps at 2^32).
    pub chunk_id: u32,
    /// The writer that owns the chunk (1..=32767 when valid).
    pub writer_id: u16,
    /// Fragment count and flags.
    pub packets: Packets,
}

impl ChunkHeader {
    /// The little-endian byte encoding.
    pub const fn to_bytes(&self) -> [u8; CHUNK_HEADER_SIZE] {
        let id = self.chunk_id.to_le_bytes();
        let w = self.writer_id.to_le_bytes();
        let p = self.packets.to_raw().to_le_bytes();
        [id[0], id[1], id[2], id[3], w[0], w[1], p[0], p[1]]
    }

    /// Decodes the little-endian encoding.
    pub const fn from_bytes(b: [u8; CHUNK_HEADER_SIZE]) -> ChunkHeader {
        ChunkHeader {
            chunk_id: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            writer_id: u16::from_le_bytes([b[4], b[5]]),
            packets: Packets::from_raw(u16::from_le_bytes([b[6], b[7]])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(chunk_id: u32, writer_id: u16, count: u16, flags: ChunkFlags) -> ChunkHeader {
        ChunkHeader {
            chunk_id,
            writer_id,
            packets: Packets { count, flags },
        }
    }

    /// Byte-exact encodings, including each flag on its own (0x0400, 0x0800, 0x1000).
    #[test]
    fn known_answers() {
        assert_eq!(
            hdr(0x0403_0201, 0x0605, 0, ChunkFlags::NONE).to_bytes(),
            [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0x00]
        );
        assert_eq!(
            hdr(7, 1, 1, ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK).to_bytes(),
            [7, 0, 0, 0, 1, 0, 0x01, 0x04]
        );
        assert_eq!(
            hdr(7, 1, 3, ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK).to_bytes(),
            [7, 0, 0, 0, 1, 0, 0x03, 0x08]
        );
        assert_eq!(
            hdr(7, 1, 2, ChunkFlags::CHUNK_NEEDS_PATCHING).to_bytes(),
            [7, 0, 0, 0, 1, 0, 0x02, 0x10]
        );
        let all = ChunkFlags::FIRST_PACKET_CONTINUES_FROM_PREV_CHUNK
            .union(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK)
            .union(ChunkFlags::CHUNK_NEEDS_PATCHING);
        assert_eq!(
            hdr(u32::MAX, 32767, 1023, all).to_bytes(),
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x1F]
        );
        assert_eq!(
            Packets {
                count: 1022,
                flags: all
            }
            .to_raw(),
            0x1FFE
        );
    }

    #[test]
    fn round_trip_and_hostile_bits() {
        for raw in [0u16, 1, 0x03FF, 0x0400, 0xFC00, 0xFFFF] {
            assert_eq!(Packets::from_raw(raw).to_raw(), raw);
        }
        let h = ChunkHeader::from_bytes([0xFF; 8]);
        assert_eq!(h.packets.count, 1023);
        assert_eq!(h.packets.flags.bits(), 0x3F);
        assert_eq!(ChunkHeader::from_bytes(h.to_bytes()), h);
        let f =
            ChunkFlags::CHUNK_NEEDS_PATCHING.union(ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK);
        assert!(f.contains(ChunkFlags::CHUNK_NEEDS_PATCHING));
        assert_eq!(
            f.without(ChunkFlags::CHUNK_NEEDS_PATCHING),
            ChunkFlags::LAST_PACKET_CONTINUES_ON_NEXT_CHUNK
        );
    }
}
