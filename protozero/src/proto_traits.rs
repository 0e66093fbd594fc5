//! The contract between `#[derive(ProtoWrite)]` / `#[derive(ProtoRead)]` and
//! the runtime: plain Rust types become protobuf messages without a schema
//! compiler, while keeping protozero's two promises — writing appends straight
//! into the [`Message`] being built (no intermediate buffer, no allocation),
//! and reading borrows from the input (`&'a str`, `&'a [u8]`, nested views).
//!
//! Derived code only names the traits and helpers here, so the macros stay
//! small and every wire decision (skipping defaults, packing, merging, the
//! recursion limit) lives in one auditable place:
//!
//! * [`ProtoWrite`] / [`ProtoRead`] — a struct is a message.
//! * [`ProtoEncode`] / [`ProtoPacked`] / [`ProtoDecode`] — how one field value
//!   is written and read, selected by an encoding marker from [`encoding`]
//!   (`#[proto(sint)]`, `#[proto(fixed)]`).
//! * [`ProtoOneofWrite`] / [`ProtoOneofRead`] — an enum whose variants are the
//!   members of a `oneof`.
//! * [`Repeated`] — a lazy, allocation-free view of a repeated field.
//! * [`ReadError`] — a decode error plus the path of fields leading to it.
//!
//! Semantics follow proto3 with explicit presence where asked for: a plain
//! scalar field is skipped when it holds its default (0, `false`, empty, the
//! first enum variant; `-0.0` is written, as C++ protobuf does), `Option<T>`
//! is written whenever it is `Some`, and nested messages are always written.
//! On reading, singular scalars are last-one-wins, singular messages that occur
//! several times are merged, repeated fields append (packed and unpacked
//! occurrences both accepted), unknown fields are skipped, and enum numbers the
//! Rust enum does not know are treated as unknown fields (proto2 closed enums).

use alloc::vec::Vec;

use crate::decoder::Field;
use crate::error::WriteError;
use crate::message::Message;
use crate::writer::HeapWriter;

mod field_decode;
mod field_encode;
mod lazy;
mod read_error;
mod scalars;

#[path = "proto_traits/private.rs"]
pub(crate) mod __private;

pub use field_decode::{ProtoDecode, merge_option, merge_repeated};
pub use field_encode::{ProtoEncode, ProtoPacked, write_packed, write_repeated};
pub use lazy::{Repeated, RepeatedIter};
pub use read_error::{MAX_PATH_DEPTH, PathSegment, ReadError, ReadErrorKind};

/// Deepest nesting of messages [`ProtoRead`] decodes eagerly; deeper input is a
/// [`ReadErrorKind::RecursionLimit`] error instead of a stack overflow. Same
/// value as the C++ and Java protobuf parsers.
pub const RECURSION_LIMIT: u32 = 100;

/// Marker types that pick a field's wire encoding when a Rust type has more
/// than one (`i32` can be `int32`, `sint32` or `sfixed32`).
pub mod encoding {
    /// The default: varints for integers (`int32`, `uint64`, ...), `float`,
    /// `double`, `bool`, strings, bytes, enums and nested messages.
    #[derive(Debug, Clone, Copy)]
    pub enum Plain {}
    /// Zigzag varints (`sint32`, `sint64`): `#[proto(sint)]`.
    #[derive(Debug, Clone, Copy)]
    pub enum Sint {}
    /// Little-endian fixed width (`fixed32`, `fixed64`, `sfixed32`,
    /// `sfixed64`): `#[proto(fixed)]`.
    #[derive(Debug, Clone, Copy)]
    pub enum Fixed {}
}

/// A Rust type that is a protobuf message and writes itself field by field.
///
/// Derived with `#[derive(ProtoWrite)]`; the generated body is a sequence of
/// `Message::append_*` calls and `Message::begin_nested` scopes.
pub trait ProtoWrite {
    /// Appends every field of `self` to `msg`, in declaration order.
    fn write_fields(&self, msg: &mut Message<'_>);

    /// Writes `self` as nested message field `id` of `msg`.
    fn write_nested(&self, msg: &mut Message<'_>, id: u32) {
        let mut child = msg.begin_nested(id);
        self.write_fields(&mut child);
    }

    /// Encodes `self` as a root message into a fresh heap buffer.
    ///
    /// This convenience allocates the output; write into a caller-provided
    /// [`Message`] with [`ProtoWrite::write_fields`] to avoid that.
    fn write_to_vec(&self) -> Result<Vec<u8>, WriteError> {
        let mut writer = HeapWriter::new();
        self.write_fields(&mut writer.root());
        writer.finish()
    }
}

/// A Rust type that is a protobuf message decoded from bytes it borrows for `'a`.
///
/// Derived with `#[derive(ProtoRead)]`.
pub trait ProtoRead<'a>: Sized {
    /// The message with every field absent (defaults, `None`, empty repeated).
    fn empty() -> Self;

    /// Merges the fields encoded in `buf` into `self`; `depth` is how many
    /// messages enclose this one (checked against [`RECURSION_LIMIT`]).
    fn merge_fields(&mut self, buf: &'a [u8], depth: u32) -> Result<(), ReadError>;

    /// Decodes a message from `buf`.
    fn decode(buf: &'a [u8]) -> Result<Self, ReadError> {
        let mut msg = Self::empty();
        msg.merge_fields(buf, 0)?;
        Ok(msg)
    }

    /// Merges another encoding of this message into `self`, as protobuf does
    /// when a message is sent in several pieces.
    fn merge_from(&mut self, buf: &'a [u8]) -> Result<(), ReadError> {
        self.merge_fields(buf, 0)
    }
}

/// An enum whose variants are the members of a `oneof` (derived with
/// `#[derive(ProtoWrite)]` on an enum with one-value variants).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a oneof that can be written",
    label = "a `#[proto(oneof)]` field needs `Option<E>` where E derives ProtoWrite",
    note = "a oneof enum has one value per variant, each with `#[proto(tag = N)]`"
)]
pub trait ProtoOneofWrite {
    /// Field numbers of all members, so a message can check them against its own.
    const TAGS: &'static [u32];

    /// Appends the one member `self` holds to `msg` (always, even a default value).
    fn write_oneof(&self, msg: &mut Message<'_>);
}

/// The decoding side of a `oneof` enum (derived with `#[derive(ProtoRead)]`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a oneof that can be read",
    label = "a `#[proto(oneof)]` field needs `Option<E>` where E derives ProtoRead",
    note = "a oneof enum has one value per variant, each with `#[proto(tag = N)]`"
)]
pub trait ProtoOneofRead<'a>: Sized {
    /// Field numbers of all members.
    const TAGS: &'static [u32];

    /// Applies `field` to `slot` if it is one of this oneof's members and
    /// returns whether it was: the same member merges (messages) or replaces
    /// (scalars), a different member replaces the current one.
    fn merge_oneof(
        slot: &mut Option<Self>,
        field: &Field<'a>,
        depth: u32,
    ) -> Result<bool, ReadError>;
}
