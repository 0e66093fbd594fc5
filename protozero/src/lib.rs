//! Zero-copy protobuf encoding and decoding in the style of Perfetto's ProtoZero.
//!
//! Your `.proto` schema becomes typed writers and zero-copy decoders
//! (`protozero-codegen`, from a build script); this crate is what they run
//! on.
//!
//! # A schema of your own, end to end
//!
//! This is the example crate `protozero/user-example` of the repository,
//! step by step (a test there checks that every line shown here is still in
//! its files). The schema, `proto/shop/order.proto`:
//!
//! ```proto
//! // A user's schema, nothing to do with tracing: an order in a shop.
//! syntax = "proto3";
//!
//! package shop;
//!
//! message Order {
//!   enum Status {
//!     STATUS_UNSPECIFIED = 0;
//!     PLACED = 1;
//!     SHIPPED = 2;
//!   }
//!
//!   // One line of the order (a nested message).
//!   message Line {
//!     string sku = 1;
//!     uint32 quantity = 2;
//!     sint64 price_cents = 3;
//!   }
//!
//!   uint64 id = 1;
//!   Status status = 2;
//!   repeated Line lines = 3;
//!   map<string, string> notes = 4;
//!   oneof payment {
//!     string card_token = 5;
//!     uint64 voucher_id = 6;
//!   }
//!   repeated uint32 tags = 7;
//! }
//! ```
//!
//! `build.rs`, with `protozero-codegen` as a build dependency, turns it into
//! Rust (the pure-Rust front end: no `protoc` needed):
//!
//! ```no_run
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     println!("cargo:rerun-if-changed=proto");
//!     let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
//!     protozero_codegen::Config::new()
//!         .include("proto")
//!         .input("proto/shop/order.proto")
//!         .generate()?
//!         .write_to(out.join("protozero"))?;
//!     Ok(())
//! }
//! ```
//!
//! `src/lib.rs` includes the generated module, one module per package:
//!
//! ```rust,ignore
//! mod generated {
//!     include!(concat!(env!("OUT_DIR"), "/protozero/mod.rs"));
//! }
//! pub use generated::shop;
//! ```
//!
//! Per message, `shop::Order` is a writer over a [`Message`]: setters append
//! at once, `add_lines()` opens a nested message (its length is backfilled
//! when it is dropped), `add_notes()` writes a map entry, `set_card_token`
//! a oneof member:
//!
//! ```rust,ignore
//! use protozero::Message;
//! use shop::{Order, order};
//!
//! pub fn write_order(root: Message<'_>) {
//!     let mut o = Order::from_message(root);
//!     o.set_id(42).set_status(order::Status::Placed);
//!     o.add_lines()
//!         .set_sku("tea-1kg")
//!         .set_quantity(2)
//!         .set_price_cents(1_250);
//!     o.add_notes().set_key("gift").set_value("yes");
//!     o.set_card_token("tok_123");
//!     o.set_tags([7, 9]);
//! }
//! ```
//!
//! The same function writes into a growable buffer finished as a `Vec`
//! ([`HeapWriter`]), into a fixed slice without allocating ([`SliceWriter`],
//! an error if the message does not fit) or into a chunked stream
//! ([`Writer`] over a [`HeapBuffer`] of 16-byte chunks, lengths backfilled
//! across chunks). `shop::OrderDecoder` reads the bytes back without
//! copying: one pass, then each accessor is a load.
//!
//! ```rust,ignore
//! use protozero::{HeapBuffer, HeapWriter, SliceWriter, Writer};
//! use protozero_user_example::shop::OrderDecoder;
//!
//! let mut w = HeapWriter::new();
//! write_order(w.root());
//! let bytes = w.finish()?;
//!
//! let mut buf = [0u8; 256];
//! let mut w = SliceWriter::new(&mut buf);
//! write_order(w.root());
//! let in_slice = w.finish()?;
//! assert_eq!(&in_slice[..], &bytes[..]);
//!
//! let mut w = Writer::with_delegate(HeapBuffer::with_slice_sizes(16, 16));
//! write_order(w.root());
//! let chunked = w.finish()?;
//!
//! let order = OrderDecoder::new(&bytes);
//! println!("order {:?}, status {:?}", order.id(), order.status());
//! for line in order.lines() {
//!     println!(
//!         "  {:?} x{:?} at {:?}",
//!         line.sku(),
//!         line.quantity(),
//!         line.price_cents()
//!     );
//! }
//! ```
//!
//! The bytes are ordinary protobuf: prost, `protoc` or any other
//! implementation reads them (the example checks with prost).
//!
//! # How it works
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
//! # Without a schema
//!
//! The writers and decoders work on field numbers too, which is what the
//! generated code calls:
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
mod fast_read;
mod field_visit;
mod heap_buffer;
mod message;
mod null_buffer;
mod owned_slice;
mod packed;
mod packed_read;
mod proto_traits;
mod repeated;
mod service;
mod slice_buffer;
mod stream_writer;
mod strict;
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
pub use field_visit::{
    FieldEnum, Fields, Lazy, MessageFields, MessageVisitor, Occurrence, TryFields,
};
pub use packed_read::{PackedFixed32, PackedFixed64, PackedVarints};
pub use repeated::RepeatedFields;
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
    pub use crate::decoder::parse_at;
    pub use crate::decoder_slots::{
        Occurrences, OneofSlot, bytes, fixed32, fixed64, group, recount_oneof, varint,
    };
    pub use crate::fast_read::{read_bytes, read_fixed32, read_fixed64, read_varint};
    pub use crate::proto_traits::__private::*;
    pub use crate::proto_traits::{
        PathSegment, ProtoDecode, ProtoEncode, ProtoOneofRead, ProtoOneofWrite, ProtoPacked,
        ProtoRead, ProtoWrite, RECURSION_LIMIT, ReadError, encoding, merge_option, merge_repeated,
        write_packed, write_repeated,
    };
    pub use crate::strict::{Expect, check, fits, try_str, utf8};
}
