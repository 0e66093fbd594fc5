//! Visiting a message field by field in one pass, each field typed.
//!
//! A generated decoder (`FooDecoder::new`) reads a message once and keeps
//! each declared field's last value, for random access. Code that visits
//! every field does better without keeping anything: `FooField::read(bytes)`
//! yields the fields in wire order as values of a generated enum
//! (`FooField::Timestamp(u64)`, `FooField::TrackEvent(Lazy<..>)`, ...),
//! converted as the accessors convert them, so a `match` in a `for` loop
//! visits the message at the cost of one scan. Nested messages come as
//! [`Lazy`] views, read only when asked; an occurrence of a repeated number
//! comes as an [`Occurrence`] (one element, or a packed run). A field the
//! schema does not declare, or a declared one with another wire type or a
//! string that is not UTF-8, comes as the enum's `Other` variant with the
//! raw [`Field`]. Nothing allocates; a malformed field ends the iteration
//! and is kept for [`Fields::error`].
//!
//! `FooField::try_read(bytes)` ([`TryFields`]) is the strict visit, as prost
//! reads: it yields `Result`s, and a malformed field, a declared field with a
//! wire type its type cannot have or a string that is not UTF-8 comes as one
//! `Err` that ends the iteration (see the crate's `strict` checks), so an
//! error cannot go unnoticed. A singular field that occurs more than once is
//! visited once per occurrence, so a caller merges message occurrences as
//! protobuf says (or keeps the last, as the random-access decoder does).
//!
//! Code generic over messages (a walk over every message a schema reaches,
//! as the `trace_full_schema` fuzz target does) gets each nested message
//! typed by its decoder from [`FieldEnum::visit_message`], through a
//! [`MessageVisitor`].

use core::fmt;
use core::marker::PhantomData;

use crate::codegen_support::{MessageDecoder, PackedLayout, ScalarKind};
use crate::decoder::parse_at;
use crate::decoder::{Field, FieldValue};
use crate::error::DecodeError;
use crate::typed_repeated::take_packed;

/// A generated enum of one message's fields (see the module docs).
pub trait FieldEnum<'a>: Sized {
    /// Whether the schema has groups (the reader then reads them as fields).
    const GROUPS: bool;
    /// The typed value of `field`.
    fn from_field(field: Field<'a>) -> Self;

    /// Whether `field` is what the schema declares for its number (any
    /// undeclared number is): `WrongWireType` for a declared field with
    /// another wire type, `InvalidUtf8` for a string that is not UTF-8.
    /// [`TryFields`] calls it on every field. Generated enums implement it;
    /// the default accepts everything.
    #[inline]
    fn check(field: &Field<'a>) -> Result<(), DecodeError> {
        let _ = field;
        Ok(())
    }

    /// Hands the nested message this field holds, if it holds one (a
    /// message or group field's [`Lazy`] view), to `visitor`, typed by its
    /// decoder. Generated enums of messages with message fields implement
    /// it; the default holds none.
    #[inline]
    fn visit_message<V: MessageVisitor<'a>>(&self, visitor: &mut V) {
        let _ = visitor;
    }
}

/// A generated decoder whose message can also be visited field by field.
pub trait MessageFields<'a>: MessageDecoder<'a> {
    /// The message's generated field enum (generated enums derive `Debug`).
    type Field: FieldEnum<'a> + fmt::Debug;
}

/// Receives the nested messages of [`FieldEnum::visit_message`], each with
/// its decoder type, so generic code can recurse into every message type a
/// schema reaches without naming any (it bounds its own depth: the bytes
/// may nest as deep as they are long).
pub trait MessageVisitor<'a> {
    /// One nested message, read by decoder `D`.
    fn message<D: MessageFields<'a>>(&mut self, message: Lazy<'a, D>);
}

/// The fields of one message in wire order, typed as `F`.
pub struct Fields<'a, F> {
    buf: &'a [u8],
    pos: usize,
    error: Option<DecodeError>,
    kind: PhantomData<fn() -> F>,
}

impl<'a, F: FieldEnum<'a>> Fields<'a, F> {
    /// The fields of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Fields {
            buf,
            pos: 0,
            error: None,
            kind: PhantomData,
        }
    }

    /// Why iteration stopped before the end of the bytes, if it did.
    #[inline]
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }
}

impl<'a, F: FieldEnum<'a>> Iterator for Fields<'a, F> {
    type Item = F;

    #[inline(always)]
    fn next(&mut self) -> Option<F> {
        if self.pos >= self.buf.len() {
            return None;
        }
        match parse_at(self.buf, self.pos, F::GROUPS) {
            Ok((field, next)) => {
                self.pos = next;
                Some(F::from_field(field))
            }
            Err(e) => {
                self.error = Some(e);
                self.pos = self.buf.len();
                None
            }
        }
    }
}

/// The fields of one message in wire order, typed as `F`, read strictly:
/// `Err` for a malformed field or one [`FieldEnum::check`] refuses, once,
/// and then the end.
pub struct TryFields<'a, F> {
    buf: &'a [u8],
    pos: usize,
    kind: PhantomData<fn() -> F>,
}

impl<'a, F: FieldEnum<'a>> TryFields<'a, F> {
    /// The fields of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        TryFields {
            buf,
            pos: 0,
            kind: PhantomData,
        }
    }

    /// Offset of the next field (the length of the bytes after the end or an
    /// error).
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a, F: FieldEnum<'a>> Iterator for TryFields<'a, F> {
    type Item = Result<F, DecodeError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Result<F, DecodeError>> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let read = parse_at(self.buf, self.pos, F::GROUPS)
            .and_then(|(field, next)| F::check(&field).map(|()| (field, next)));
        match read {
            Ok((field, next)) => {
                self.pos = next;
                Some(Ok(F::from_field(field)))
            }
            Err(e) => {
                self.pos = self.buf.len();
                Some(Err(e))
            }
        }
    }
}

impl<F> Clone for TryFields<'_, F> {
    fn clone(&self) -> Self {
        TryFields {
            buf: self.buf,
            pos: self.pos,
            kind: PhantomData,
        }
    }
}

impl<F> fmt::Debug for TryFields<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TryFields")
            .field("offset", &self.pos)
            .field("len", &self.buf.len())
            .finish()
    }
}

impl<F> Clone for Fields<'_, F> {
    fn clone(&self) -> Self {
        Fields {
            buf: self.buf,
            pos: self.pos,
            error: self.error,
            kind: PhantomData,
        }
    }
}

impl<F> fmt::Debug for Fields<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fields")
            .field("offset", &self.pos)
            .field("len", &self.buf.len())
            .field("error", &self.error)
            .finish()
    }
}

/// A nested message not read yet: its bytes, and the decoder type to read
/// them with.
pub struct Lazy<'a, D> {
    bytes: &'a [u8],
    decoder: PhantomData<fn() -> D>,
}

impl<'a, D> Lazy<'a, D> {
    /// The message in `bytes`.
    #[inline(always)]
    pub fn new(bytes: &'a [u8]) -> Self {
        Lazy {
            bytes,
            decoder: PhantomData,
        }
    }

    /// The message's encoded bytes (a group's contents, for a group).
    #[inline(always)]
    pub fn bytes(self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a, D: MessageDecoder<'a>> Lazy<'a, D> {
    /// Reads the message for random access.
    #[inline]
    pub fn decode(self) -> D {
        D::decode(self.bytes)
    }

    /// Reads the message for random access, strictly
    /// ([`MessageDecoder::try_decode`]).
    #[inline]
    pub fn try_decode(self) -> Result<D, DecodeError> {
        D::try_decode(self.bytes)
    }
}

impl<'a, D: MessageFields<'a>> Lazy<'a, D> {
    /// Visits the message's fields in wire order.
    #[inline]
    pub fn fields(self) -> Fields<'a, D::Field> {
        Fields::new(self.bytes)
    }

    /// Visits the message's fields in wire order, strictly ([`TryFields`]).
    #[inline]
    pub fn try_fields(self) -> TryFields<'a, D::Field> {
        TryFields::new(self.bytes)
    }
}

impl<D> Clone for Lazy<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Lazy<'_, D> {}

impl<D> fmt::Debug for Lazy<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lazy({} bytes)", self.bytes.len())
    }
}

/// The elements one occurrence of a repeated scalar field carries: one, or
/// a packed run (protobuf lets a parser meet either, whatever the schema
/// says). Stops at a malformed element and keeps the error.
pub struct Occurrence<'a, K: ScalarKind> {
    single: Option<K::Value>,
    packed: &'a [u8],
    error: Option<DecodeError>,
}

impl<'a, K: ScalarKind> Occurrence<'a, K> {
    /// The elements of a field whose value is `value`; `None` for a wire
    /// type that is neither the element's nor a packed run.
    #[inline(always)]
    pub fn from_value(value: FieldValue<'a>) -> Option<Self> {
        match value {
            FieldValue::Bytes(packed) => Some(Occurrence {
                single: None,
                packed,
                error: None,
            }),
            other => K::from_value(other).map(|v| Occurrence {
                single: Some(v),
                packed: &[],
                error: None,
            }),
        }
    }

    /// The error that ended iteration early, if any.
    #[inline]
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }

    #[cold]
    fn fail(&mut self, e: DecodeError) -> Option<K::Value> {
        self.error = Some(e);
        self.packed = &[];
        None
    }
}

impl<K: ScalarKind> Iterator for Occurrence<'_, K> {
    type Item = K::Value;

    #[inline]
    fn next(&mut self) -> Option<K::Value> {
        if let Some(v) = self.single.take() {
            return Some(v);
        }
        if self.packed.is_empty() {
            return None;
        }
        let elem = match K::LAYOUT {
            PackedLayout::Varint => 1,
            PackedLayout::Fixed32 => 4,
            PackedLayout::Fixed64 => 8,
        };
        let truncated = DecodeError::PackedLength {
            len: self.packed.len(),
            elem,
        };
        match take_packed(K::LAYOUT, &mut self.packed, truncated) {
            Ok(value) => K::from_value(value),
            Err(e) => self.fail(e),
        }
    }
}

impl<K: ScalarKind> Clone for Occurrence<'_, K> {
    fn clone(&self) -> Self {
        Occurrence {
            single: self.single,
            packed: self.packed,
            error: self.error,
        }
    }
}

impl<K: ScalarKind> fmt::Debug for Occurrence<'_, K>
where
    K::Value: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen_support::kinds;

    #[derive(Debug, PartialEq)]
    enum Toy<'a> {
        Number(u64),
        Other(Field<'a>),
    }

    impl<'a> FieldEnum<'a> for Toy<'a> {
        const GROUPS: bool = false;
        fn from_field(f: Field<'a>) -> Self {
            match (f.id, f.value) {
                (1, FieldValue::Varint(v)) => Toy::Number(v),
                _ => Toy::Other(f),
            }
        }
    }

    #[test]
    fn fields_in_wire_order_then_the_error() {
        // 1: 5, 2: "x", 1: 7, then a truncated length.
        let buf = [0x08, 5, 0x12, 1, b'x', 0x08, 7, 0x12, 9];
        let mut it = Fields::<Toy<'_>>::new(&buf);
        assert_eq!(it.next(), Some(Toy::Number(5)));
        assert!(matches!(it.next(), Some(Toy::Other(Field { id: 2, .. }))));
        assert_eq!(it.next(), Some(Toy::Number(7)));
        assert_eq!(it.next(), None);
        assert!(matches!(
            it.error(),
            Some(DecodeError::LengthOutOfBounds { id: 2, .. })
        ));
        assert_eq!(it.next(), None);
    }

    #[derive(Debug, PartialEq)]
    enum Strict {
        Name(u64),
        Other,
    }

    impl<'a> FieldEnum<'a> for Strict {
        const GROUPS: bool = false;
        fn from_field(f: Field<'a>) -> Self {
            match (f.id, f.value) {
                (1, FieldValue::Varint(v)) => Strict::Name(v),
                _ => Strict::Other,
            }
        }
        fn check(f: &Field<'a>) -> Result<(), DecodeError> {
            match f.id {
                1 => crate::strict::check(f, crate::strict::Expect::Varint),
                _ => Ok(()),
            }
        }
    }

    #[test]
    fn try_fields_report_what_fields_read_on() {
        // 1: 5, 9: "x" (undeclared), then 1 with wire type 5.
        let buf = [0x08, 5, 0x4a, 1, b'x', 0x0d, 1, 0, 0, 0, 0x08, 6];
        let lenient: Vec<Strict> = Fields::new(&buf).collect();
        assert_eq!(lenient.len(), 4);
        let mut it = TryFields::<Strict>::new(&buf);
        assert_eq!(it.next(), Some(Ok(Strict::Name(5))));
        assert_eq!(it.next(), Some(Ok(Strict::Other)));
        assert_eq!(
            it.next(),
            Some(Err(DecodeError::WrongWireType {
                id: 1,
                expected: 0,
                found: 5
            }))
        );
        assert_eq!(it.next(), None);
        // A truncated field is an `Err` item too, not a silent end.
        let mut cut = TryFields::<Strict>::new(&[0x08, 5, 0x12, 9]);
        assert_eq!(cut.next(), Some(Ok(Strict::Name(5))));
        assert!(matches!(
            cut.next(),
            Some(Err(DecodeError::LengthOutOfBounds { id: 2, .. }))
        ));
        assert_eq!(cut.next(), None);
    }

    #[test]
    fn occurrences_single_packed_and_malformed() {
        let one = Occurrence::<kinds::Sint32>::from_value(FieldValue::Varint(3));
        assert_eq!(one.map(Iterator::collect::<Vec<_>>), Some(vec![-2]));
        let packed = Occurrence::<kinds::Uint32>::from_value(FieldValue::Bytes(&[1, 0x80, 1]));
        assert_eq!(packed.map(Iterator::collect::<Vec<_>>), Some(vec![1, 128]));
        assert!(Occurrence::<kinds::Fixed32>::from_value(FieldValue::Varint(1)).is_none());
        let mut short =
            Occurrence::<kinds::Fixed32>::from_value(FieldValue::Bytes(&[1, 0, 0, 0, 2]))
                .expect("a packed run");
        assert_eq!(short.next(), Some(1));
        assert_eq!(short.next(), None);
        assert!(short.error().is_some());
        let mut bad = Occurrence::<kinds::Uint64>::from_value(FieldValue::Bytes(&[0x80]))
            .expect("a packed run");
        assert_eq!(bad.next(), None);
        assert_eq!(bad.error(), Some(DecodeError::TruncatedVarint));
    }
}
