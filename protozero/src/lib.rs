//! Zero-copy protobuf encoding and decoding in the style of Perfetto's ProtoZero.
//!
//! Writers are append-only: every setter serializes immediately into memory handed
//! out by a [`Delegate`] (a growable heap buffer, one fixed slice, or a
//! shared-memory chunk). Nested messages reserve their length as a 4-byte
//! redundant varint and backfill it when they are finalized, so nothing is ever
//! copied twice. When the slice holding such a length has already been handed
//! back (a committed chunk), the delegate turns it into a patch.
//!
//! Decoders never allocate and never panic: [`Decoder`] iterates fields of a
//! borrowed buffer, [`TypedDecoder`] indexes them by field id for code without
//! a schema, and the decoders `protozero-codegen` generates read a message in
//! one pass into slots for exactly the fields its schema declares.
//!
//! ```
//! use protozero::HeapWriter;
//!
//! let mut w = HeapWriter::new();
//! {
//!     let mut packet = w.root();
//!     packet.append_uint64(8, 1234); // timestamp
//!     let mut event = packet.begin_nested(11); // track_event
//!     event.append_string(23, "my slice"); // name
//! } // `event` is finalized (its length backfilled) when dropped.
//! let bytes = w.finish().unwrap();
//! assert_eq!(bytes[..3], [0x40, 0xd2, 0x09]);
//! ```
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod bytecopy;
mod codegen_support;
mod debug_support;
mod decoder;
mod decoder_slots;
mod delegate;
mod error;
mod field_visit;
mod heap_buffer;
mod message;
mod null_buffer;
mod owned_slice;
mod packed;
mod proto_traits;
mod repeated;
mod service;
mod slice_buffer;
mod stream_writer;
mod typed_decoder;
mod typed_repeated;
pub mod varint;
pub mod wire;
mod writer;

// Writing: messages, writers and the delegates that hand out their memory.
pub use delegate::{Delegate, OpenSlots, PatchId, SizeSlot, Slice, SlotLocation};
pub use error::{DecodeError, WriteError};
pub use heap_buffer::{DEFAULT_INITIAL_SLICE, DEFAULT_MAX_SLICE, HeapBuffer};
pub use message::Message;
pub use null_buffer::NullBuffer;
pub use owned_slice::OwnedSlice;
pub use slice_buffer::SliceBuffer;
pub use stream_writer::StreamWriter;
pub use writer::{HeapWriter, NullWriter, SliceWriter, Writer};

// Decoding: schema-less and typed, zero-copy.
pub use decoder::{Decoder, Field, FieldValue};
pub use field_visit::{FieldEnum, Fields, Lazy, MessageFields, MessageVisitor, Occurrence};
pub use repeated::{PackedFixed32, PackedFixed64, PackedVarints, RepeatedFields};
pub use typed_decoder::TypedDecoder;
pub use typed_repeated::{
    RepeatedBytes, RepeatedEnums, RepeatedMessages, RepeatedScalars, RepeatedStrs,
};
pub use wire::WireType;

// What generated code implements: a typed writer and a typed zero-copy view
// per message, enums, and service method tables.
pub use codegen_support::{
    EnumValue, MessageDecoder, MessageWriter, PackedLayout, ProtoEnum, ScalarKind, kinds,
};
pub use service::{MethodDescriptor, ServiceDescriptor};

// What `#[derive]` implements: plain Rust values that write and read
// themselves through the same writers and decoders.
pub use proto_traits::{
    MAX_PATH_DEPTH, PathSegment, ProtoRead, ProtoWrite, RECURSION_LIMIT, ReadError, ReadErrorKind,
    Repeated, RepeatedIter,
};
#[cfg(feature = "derive")]
pub use protozero_derive::{ProtoRead, ProtoWrite};

/// Support for generated and derived code only: not part of the API, may
/// change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::debug_support::{DebugDecoder, DebugFields, MAX_DEBUG_BYTES, MAX_DEBUG_DEPTH};
    pub use crate::decoder_slots::{
        Occurrences, OneofSlot, bytes, fixed32, fixed64, group, parse_at, recount_oneof, varint,
    };
    pub use crate::proto_traits::__private::*;
    pub use crate::proto_traits::{
        PathSegment, ProtoDecode, ProtoEncode, ProtoOneofRead, ProtoOneofWrite, ProtoPacked,
        ProtoRead, ProtoWrite, RECURSION_LIMIT, ReadError, encoding, merge_option, merge_repeated,
        write_packed, write_repeated,
    };
}
