//! Error types of the writer and the decoders. Both are small `Copy` enums so a
//! hot loop can carry them without cost.

/// Why a write did not produce complete output.
///
/// Writers never panic on these: the first error is kept (sticky), later bytes
/// are discarded, and the error is reported when the writer is finished.
/// New kinds may be added in a minor release (`#[non_exhaustive]`): a
/// `match` needs a wildcard arm. Delegates build the variants as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The delegate had no more memory to hand out (fixed slice full, SMB exhausted).
    #[error("out of buffer space: {requested} more contiguous bytes were needed")]
    OutOfSpace {
        /// The smallest slice the writer asked for.
        requested: usize,
    },
    /// A nested message grew past the 2^28 − 1 bytes a 4-byte length can describe.
    #[error("nested message of {len} bytes exceeds the 268435455-byte limit")]
    MessageTooLong {
        /// The length the message reached.
        len: usize,
    },
    /// A field id outside 1..=2^29−1 was used.
    #[error("field id {id} is outside 1..=536870911")]
    InvalidFieldId {
        /// The offending id.
        id: u32,
    },
}

/// Why bytes could not be decoded. Decoders stop at the first error.
/// New kinds may be added in a minor release (`#[non_exhaustive]`): a
/// `match` needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A varint ended before its last byte.
    #[error("truncated varint")]
    TruncatedVarint,
    /// A group's end tag is missing or closes a different field.
    #[error("group field {id} is not terminated by its end-group tag")]
    UnterminatedGroup {
        /// Field id of the group.
        id: u32,
    },
    /// Groups nest deeper than `decoder::MAX_GROUP_DEPTH`.
    #[error("group field {id} nests groups deeper than the decoder accepts")]
    GroupTooDeep {
        /// Field id of the outermost group being read.
        id: u32,
    },
    /// A varint ran longer than 10 bytes.
    #[error("varint longer than 10 bytes")]
    VarintTooLong,
    /// A tag carried field id 0 or one above 2^29 − 1.
    #[error("invalid field id {id}")]
    InvalidFieldId {
        /// The id found (truncated to 64 bits).
        id: u64,
    },
    /// A tag carried a wire type this decoder does not accept (3, 4, 6, 7).
    #[error("unsupported wire type {wire_type} for field {id}")]
    UnsupportedWireType {
        /// Field id of the tag.
        id: u32,
        /// The 3-bit wire type.
        wire_type: u8,
    },
    /// A length-delimited field claims more bytes than remain.
    #[error("field {id} declares {len} bytes but only {remaining} remain")]
    LengthOutOfBounds {
        /// Field id of the tag.
        id: u32,
        /// Declared length (saturated to u64).
        len: u64,
        /// Bytes left in the buffer.
        remaining: usize,
    },
    /// A fixed32/fixed64 value was cut short.
    #[error("truncated fixed-width value in field {id}")]
    TruncatedFixed {
        /// Field id of the tag.
        id: u32,
    },
    /// A field had a different wire type than the schema expects.
    #[error("field {id} has wire type {found}, expected {expected}")]
    WrongWireType {
        /// Field id.
        id: u32,
        /// Wire type the accessor needs.
        expected: u8,
        /// Wire type on the wire.
        found: u8,
    },
    /// A string field was not valid UTF-8.
    #[error("field {id} is not valid UTF-8")]
    InvalidUtf8 {
        /// Field id.
        id: u32,
    },
    /// A packed fixed-width payload's length is not a multiple of the element size.
    #[error("packed payload of {len} bytes is not a multiple of {elem}")]
    PackedLength {
        /// Payload length.
        len: usize,
        /// Element size (4 or 8).
        elem: usize,
    },
    /// A value did not fit the target type (for example an enum number).
    #[error("value {value} out of range for field {id}")]
    OutOfRange {
        /// Field id.
        id: u32,
        /// The raw value.
        value: u64,
    },
}
