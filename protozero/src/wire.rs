//! Wire-level vocabulary of protobuf: wire types, tags and the limits ProtoZero
//! relies on (the 4-byte length reservation, the largest message it can describe).

/// The encoding of a field's value on the wire, taken from the low 3 bits of its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WireType {
    /// Base-128 varint (int32, int64, uint*, sint*, bool, enum).
    Varint = 0,
    /// 8 little-endian bytes (fixed64, sfixed64, double).
    Fixed64 = 1,
    /// Varint length followed by that many bytes (string, bytes, messages, packed).
    LengthDelimited = 2,
    /// Start of a proto2 group (deprecated).
    StartGroup = 3,
    /// End of a proto2 group (deprecated).
    EndGroup = 4,
    /// 4 little-endian bytes (fixed32, sfixed32, float).
    Fixed32 = 5,
}

impl WireType {
    /// Maps the low 3 bits of a tag to a wire type; 6 and 7 are not wire types.
    #[inline]
    pub const fn from_bits(bits: u8) -> Option<WireType> {
        match bits {
            0 => Some(WireType::Varint),
            1 => Some(WireType::Fixed64),
            2 => Some(WireType::LengthDelimited),
            3 => Some(WireType::StartGroup),
            4 => Some(WireType::EndGroup),
            5 => Some(WireType::Fixed32),
            _ => None,
        }
    }
}

/// Largest field number protobuf allows (2^29 − 1).
pub const MAX_FIELD_ID: u32 = (1 << 29) - 1;

/// Bytes reserved for the length of a nested message: a redundant 4-byte varint.
pub const SIZE_SLOT_LEN: usize = 4;

/// Largest length a 4-byte redundant varint can carry (2^28 − 1); longer
/// messages are reported as [`crate::WriteError::MessageTooLong`].
pub const MAX_MESSAGE_LENGTH: usize = (1 << 28) - 1;

/// Nested messages up to this many bytes are compacted to a 1-byte length
/// when their slot and payload are still in the current slice.
pub const MAX_ONE_BYTE_MESSAGE_LENGTH: usize = 127;

/// Longest encoding of a tag (field id up to 2^29 − 1).
pub const MAX_TAG_LEN: usize = 5;

/// Builds the tag `(id << 3) | wire_type`.
#[inline(always)]
pub const fn make_tag(id: u32, wire_type: WireType) -> u32 {
    (id << 3) | wire_type as u32
}
