//! [`Repeated`]: a repeated field decoded on demand instead of into a `Vec`.
//!
//! While the enclosing message is parsed, the view only remembers where the
//! field's first occurrence starts in the message's bytes (and checks each
//! occurrence's wire type); iterating walks from there, skipping other
//! fields, and decodes one element at a time. Nothing is allocated unless the
//! enclosing message is merged from several separate buffers (a message field
//! that occurs more than once), which needs one extra slice per buffer.
//!
//! Because elements are decoded only when iterated, element-level problems
//! (invalid UTF-8, a malformed nested message, a truncated packed varint) are
//! reported by the iterator as `Err` items, not by the enclosing decode.

use alloc::vec::Vec;

use super::field_decode::{PackedRaw, ProtoDecode, check_repeated_wire_type};
use super::read_error::{PathSegment, ReadError};
use crate::decoder::{Decoder, Field, FieldValue};
use crate::wire::WireType;

/// Lazily decoded occurrences of one repeated field, borrowing the input for `'a`.
pub struct Repeated<'a, T> {
    segment: &'static PathSegment,
    /// Nesting depth of the enclosing message, for elements' recursion limit.
    depth: u32,
    /// Suffix of the enclosing message starting at the field's first occurrence.
    first: Option<&'a [u8]>,
    /// The same for each further buffer merged into the enclosing message.
    more: Vec<&'a [u8]>,
    decode: fn(&Field<'a>, u32) -> Result<Option<T>, ReadError>,
    from_packed: fn(u64) -> Option<T>,
    wire: WireType,
    packable: bool,
}

impl<'a, T> Repeated<'a, T> {
    /// An empty view of the field described by `segment` (its number, and
    /// its name for error paths) whose elements decode with encoding `E`.
    pub fn new<E>(segment: &'static PathSegment) -> Self
    where
        T: ProtoDecode<'a, E>,
    {
        Repeated {
            segment,
            depth: 0,
            first: None,
            more: Vec::new(),
            decode: T::decode_value,
            from_packed: T::from_packed_raw,
            wire: T::WIRE_TYPE,
            packable: T::PACKABLE,
        }
    }

    /// Records an occurrence of the field found at `offset` of `buf` (the
    /// enclosing message, at nesting `depth`). `seen` is the caller's per-buffer
    /// flag: only the first occurrence in a buffer is remembered, later ones
    /// are found again by scanning.
    pub fn note<E>(
        &mut self,
        buf: &'a [u8],
        offset: usize,
        field: &Field<'a>,
        depth: u32,
        seen: &mut bool,
    ) -> Result<(), ReadError>
    where
        T: ProtoDecode<'a, E>,
    {
        check_repeated_wire_type::<E, T>(field)?;
        if !*seen {
            *seen = true;
            let suffix = buf.get(offset..).unwrap_or_default();
            self.depth = depth;
            match self.first {
                None => self.first = Some(suffix),
                Some(_) => self.more.push(suffix),
            }
        }
        Ok(())
    }

    /// The field number this view reads.
    pub fn id(&self) -> u32 {
        self.segment.id
    }

    /// Whether no occurrence of the field was seen (an occurrence may still
    /// decode to no elements, e.g. an empty packed payload).
    pub fn is_absent(&self) -> bool {
        self.first.is_none()
    }

    /// Iterates the elements in wire order, decoding each on demand.
    pub fn iter(&self) -> RepeatedIter<'a, '_, T> {
        RepeatedIter {
            owner: self,
            segment: 0,
            decoder: None,
            packed: None,
            done: false,
        }
    }

    /// Decodes every element into a `Vec`, stopping at the first error.
    pub fn to_vec(&self) -> Result<Vec<T>, ReadError> {
        self.iter().collect()
    }

    fn segment(&self, i: usize) -> Option<&'a [u8]> {
        match i {
            0 => self.first,
            _ => self.more.get(i - 1).copied(),
        }
    }

    #[cold]
    fn located(&self, e: ReadError) -> ReadError {
        e.in_field(self.segment)
    }
}

impl<T> Clone for Repeated<'_, T> {
    fn clone(&self) -> Self {
        Repeated {
            more: self.more.clone(),
            ..*self
        }
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for Repeated<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Equal when both yield the same sequence of elements (and errors).
impl<T: PartialEq> PartialEq for Repeated<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl<'a, 'r, T> IntoIterator for &'r Repeated<'a, T> {
    type Item = Result<T, ReadError>;
    type IntoIter = RepeatedIter<'a, 'r, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over a [`Repeated`]; yields `Err` once and then ends if an element
/// is malformed.
pub struct RepeatedIter<'a, 'r, T> {
    owner: &'r Repeated<'a, T>,
    segment: usize,
    decoder: Option<Decoder<'a>>,
    packed: Option<PackedRaw<'a>>,
    done: bool,
}

impl<T> core::fmt::Debug for RepeatedIter<'_, '_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RepeatedIter")
            .field("id", &self.owner.segment.id)
            .field("segment", &self.segment)
            .field("done", &self.done)
            .finish()
    }
}

impl<'a, T> RepeatedIter<'a, '_, T> {
    fn fail(&mut self, e: ReadError) -> Option<Result<T, ReadError>> {
        self.done = true;
        Some(Err(self.owner.located(e)))
    }

    /// The next occurrence of the field, across segments.
    fn next_field(&mut self) -> Option<Result<Field<'a>, ReadError>> {
        loop {
            let decoder = match &mut self.decoder {
                Some(d) => d,
                None => {
                    let seg = self.owner.segment(self.segment)?;
                    self.segment += 1;
                    self.decoder.insert(Decoder::new(seg))
                }
            };
            match decoder.read_field() {
                None => self.decoder = None,
                Some(Err(e)) => return Some(Err(e.into())),
                Some(Ok(f)) if f.id == self.owner.segment.id => return Some(Ok(f)),
                Some(Ok(_)) => {}
            }
        }
    }
}

impl<'a, T> Iterator for RepeatedIter<'a, '_, T> {
    type Item = Result<T, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            if let Some(packed) = &mut self.packed {
                match packed.next() {
                    Some(Ok(raw)) => match (self.owner.from_packed)(raw) {
                        Some(v) => return Some(Ok(v)),
                        None => continue,
                    },
                    Some(Err(e)) => return self.fail(e.into()),
                    None => self.packed = None,
                }
            }
            let field = match self.next_field()? {
                Ok(f) => f,
                Err(e) => return self.fail(e),
            };
            let owner = self.owner;
            match field.value {
                FieldValue::Bytes(payload) if owner.packable => {
                    match PackedRaw::new(payload, owner.wire) {
                        Ok(p) => self.packed = Some(p),
                        Err(e) => return self.fail(e.into()),
                    }
                }
                _ => match (owner.decode)(&field, owner.depth) {
                    Ok(Some(v)) => return Some(Ok(v)),
                    Ok(None) => {}
                    Err(e) => return self.fail(e),
                },
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto_traits::encoding::{Plain, Sint};

    /// field 1 = "a", field 2 = 9, field 1 = "b", field 1 = <invalid UTF-8>
    const STRINGS: &[u8] = &[0x0A, 1, b'a', 0x10, 9, 0x0A, 1, b'b', 0x0A, 1, 0xFF];

    fn view<'a, E, T: ProtoDecode<'a, E>>(buf: &'a [u8], id: u32) -> Repeated<'a, T> {
        let segment: &'static PathSegment = match id {
            1 => &PathSegment { name: "f", id: 1 },
            3 => &PathSegment { name: "f", id: 3 },
            _ => &PathSegment { name: "f", id: 4 },
        };
        let mut r = Repeated::new::<E>(segment);
        let mut seen = false;
        let mut d = Decoder::new(buf);
        loop {
            let off = d.offset();
            match d.read_field() {
                Some(Ok(f)) if f.id == id => r.note::<E>(buf, off, &f, 0, &mut seen).unwrap(),
                Some(Ok(_)) => {}
                _ => break,
            }
        }
        r
    }

    #[test]
    fn strings_in_order_then_error() {
        let r = view::<Plain, &str>(STRINGS, 1);
        let items: Vec<_> = r.iter().collect();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0], Ok("a"));
        assert_eq!(items[1], Ok("b"));
        let err = items[2].unwrap_err();
        assert_eq!(err.path().next().map(|s| s.id), Some(1));
        assert!(r.to_vec().is_err());
    }

    #[test]
    fn packed_and_unpacked_mix() {
        // field 3 packed sint32 [-1, 1], then unpacked sint32 2.
        let buf = [0x1A, 2, 0x01, 0x02, 0x18, 0x04];
        let r = view::<Sint, i32>(&buf, 3);
        assert_eq!(r.to_vec(), Ok(alloc::vec![-1, 1, 2]));
        assert!(!r.is_absent());
        assert!(view::<Sint, i32>(&buf, 4).is_absent());
    }

    #[test]
    fn wrong_wire_type_rejected_at_note() {
        let buf = [0x0D, 1, 0, 0, 0];
        let f = Decoder::new(&buf).next().unwrap().unwrap();
        let mut r = Repeated::<&str>::new::<Plain>(&PathSegment { name: "f", id: 1 });
        assert!(r.note::<Plain>(&buf, 0, &f, 0, &mut false).is_err());
    }
}
