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
//! borrowed buffer, [`TypedDecoder`] indexes them by field id for generated code.
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
pub mod codegen_support;
pub mod decoder;
pub mod delegate;
pub mod error;
pub mod heap_buffer;
pub mod message;
pub mod null_buffer;
pub mod packed;
pub mod proto_traits;
pub mod repeated;
pub mod service;
pub mod slice_buffer;
pub mod stream_writer;
pub mod typed_decoder;
pub mod typed_repeated;
pub mod varint;
pub mod wire;
pub mod writer;

pub use codegen_support::{
    EnumValue, MessageDecoder, MessageWriter, PackedLayout, ProtoEnum, ScalarKind, kinds,
};
pub use decoder::{Decoder, Field, FieldValue};
pub use delegate::{Delegate, OpenSlots, PatchId, SizeSlot, Slice, SlotLocation};
pub use error::{DecodeError, WriteError};
pub use heap_buffer::HeapBuffer;
pub use message::Message;
pub use null_buffer::NullBuffer;
pub use proto_traits::{
    ProtoDecode, ProtoEncode, ProtoOneofRead, ProtoOneofWrite, ProtoPacked, ProtoRead, ProtoWrite,
    ReadError, ReadErrorKind, Repeated,
};
#[cfg(feature = "derive")]
pub use protozero_derive::{ProtoRead, ProtoWrite};
pub use repeated::{PackedFixed32, PackedFixed64, PackedVarints, RepeatedFields};
pub use service::{MethodDescriptor, ServiceDescriptor};
pub use slice_buffer::SliceBuffer;
pub use stream_writer::StreamWriter;
pub use typed_decoder::TypedDecoder;
pub use typed_repeated::{RepeatedBytes, RepeatedMessages, RepeatedScalars, RepeatedStrs};
pub use wire::WireType;
pub use writer::{HeapWriter, NullWriter, SliceWriter, Writer};
