//! [`TypedDecoder`]: parses a message once and answers "field N?" in O(1).
//!
//! Fields with ids below `N` go to a dense on-stack table that keeps the last
//! occurrence (last one wins, as protobuf requires for singular fields) and the
//! offset of the first, so repeated fields iterate in arrival order from there.
//! Ids at or above `N` (rare: extensions, unknown fields) are not stored: the
//! decoder remembers where the first of them sits and answers lookups of such
//! ids by scanning the message from there, in O(fields) per lookup. Nothing is
//! ever allocated. Parsing stops at the first malformed field; fields before it
//! stay readable and [`TypedDecoder::error`] reports why.

use crate::decoder::{Decoder, Field, FieldValue};
use crate::error::DecodeError;
use crate::repeated::RepeatedFields;

#[derive(Debug, Clone, Copy)]
struct Entry<'a> {
    last: FieldValue<'a>,
    /// Byte offset of the first occurrence's tag (a `usize`: messages may
    /// exceed 4 GiB).
    first_offset: usize,
}

/// A fully parsed message with a dense field table of `N` ids.
#[derive(Debug, Clone)]
pub struct TypedDecoder<'a, const N: usize> {
    buf: &'a [u8],
    dense: [Option<Entry<'a>>; N],
    /// Byte offset of the first field with an id ≥ N, if there is one; ids
    /// ≥ N are looked up by scanning from here.
    first_high: Option<usize>,
    error: Option<DecodeError>,
    groups: bool,
}

impl<'a, const N: usize> TypedDecoder<'a, N> {
    /// Parses `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self::parse(Decoder::new(buf))
    }

    /// Parses `buf`, reading proto2 groups as [`FieldValue::Group`] (see
    /// [`Decoder::accept_groups`]) instead of stopping at them.
    pub fn with_groups(buf: &'a [u8]) -> Self {
        Self::parse(Decoder::new(buf).accept_groups())
    }

    fn parse(mut it: Decoder<'a>) -> Self {
        let buf = it.buffer();
        let mut d = TypedDecoder {
            buf,
            dense: [None; N],
            first_high: None,
            error: None,
            groups: it.groups_accepted(),
        };
        loop {
            let offset = it.offset();
            match it.read_field() {
                None => break,
                Some(Err(e)) => {
                    d.error = Some(e);
                    break;
                }
                Some(Ok(f)) => {
                    let id = f.id as usize;
                    if id < N {
                        let e = &mut d.dense[id];
                        match e {
                            Some(entry) => entry.last = f.value,
                            None => {
                                *e = Some(Entry {
                                    last: f.value,
                                    first_offset: offset,
                                })
                            }
                        }
                    } else if d.first_high.is_none() {
                        d.first_high = Some(offset);
                    }
                }
            }
        }
        d
    }

    /// The well-formed fields from the first one with an id ≥ N on (none if
    /// there is no such field). The scan reads the same bytes the same way
    /// as [`Self::parse`], so it yields exactly the fields parsing accepted.
    fn high_fields(&self) -> impl Iterator<Item = Field<'a>> + use<'a, N> {
        let (buf, start) = match self.first_high {
            Some(off) => (self.buf, off),
            None => (&[][..], 0),
        };
        self.scan(buf, start)
            .map_while(Result::ok)
            .filter(|f| f.id as usize >= N)
    }

    /// A decoder over `buf` from `start`, reading groups if this one does.
    fn scan(&self, buf: &'a [u8], start: usize) -> Decoder<'a> {
        let it = Decoder::at(buf, start);
        if self.groups { it.accept_groups() } else { it }
    }

    /// The bytes being decoded.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// Why parsing stopped early, if it did.
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }

    /// The last occurrence of field `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<Field<'a>> {
        let i = id as usize;
        if i < N {
            self.dense[i].map(|e| Field { id, value: e.last })
        } else {
            self.get_high(id)
        }
    }

    #[cold]
    fn get_high(&self, id: u32) -> Option<Field<'a>> {
        self.high_fields().filter(|f| f.id == id).last()
    }

    /// Whether field `id` is present.
    #[inline]
    pub fn has(&self, id: u32) -> bool {
        let i = id as usize;
        if i < N {
            self.dense[i].is_some()
        } else {
            self.has_high(id)
        }
    }

    #[cold]
    fn has_high(&self, id: u32) -> bool {
        self.high_fields().any(|f| f.id == id)
    }

    /// Every occurrence of field `id`, in arrival order.
    pub fn repeated(&self, id: u32) -> RepeatedFields<'a> {
        let i = id as usize;
        let start = if i < N {
            self.dense[i].map(|e| e.first_offset)
        } else {
            self.first_offset_high(id)
        };
        match start {
            Some(off) if self.groups => RepeatedFields::new(self.buf, off, id).accept_groups(),
            Some(off) => RepeatedFields::new(self.buf, off, id),
            None => RepeatedFields::empty(),
        }
    }

    /// Offset of the first occurrence of `id` ≥ N, by a scan from the first
    /// high field, so the iterator starts where the dense table's would.
    #[cold]
    fn first_offset_high(&self, id: u32) -> Option<usize> {
        let mut it = self.scan(self.buf, self.first_high?);
        loop {
            let offset = it.offset();
            match it.read_field()? {
                Ok(f) if f.id == id => return Some(offset),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// Every field parsing accepted, in arrival order (found by a scan of
    /// the message, not stored).
    pub fn fields(&self) -> impl Iterator<Item = Field<'a>> + use<'a, N> {
        self.scan(self.buf, 0).map_while(Result::ok)
    }

    /// Fields with ids ≥ `N`, in arrival order (found by a scan of the
    /// message, not stored).
    pub fn spilled(&self) -> impl Iterator<Item = Field<'a>> + '_ {
        self.high_fields()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_wins_and_repeated_in_order() {
        // field 1 = 5, field 2 = "a", field 1 = 7, field 200 = 1, field 2 = "b"
        let buf = [
            0x08, 5, 0x12, 1, b'a', 0x08, 7, 0xC0, 0x0C, 1, 0x12, 1, b'b',
        ];
        let d = TypedDecoder::<'_, 16>::new(&buf);
        assert_eq!(d.error(), None);
        assert_eq!(d.get(1).unwrap().as_u64(), Ok(7));
        let strs: Vec<_> = d.repeated(2).map(|f| f.as_str().unwrap()).collect();
        assert_eq!(strs, ["a", "b"]);
        assert_eq!(d.get(200).unwrap().as_u64(), Ok(1));
        assert!(!d.has(3));
        assert_eq!(d.repeated(3).count(), 0);
        let ids: Vec<u32> = d.fields().map(|f| f.id).collect();
        assert_eq!(ids, [1, 2, 1, 200, 2]);
    }

    #[test]
    fn groups_only_when_asked() {
        // 1: group { 2: 1 }, 1: group {}, 3: 9.
        let buf = [0x0B, 0x10, 1, 0x0C, 0x0B, 0x0C, 0x18, 9];
        let plain = TypedDecoder::<'_, 4>::new(&buf);
        assert!(plain.get(3).is_none());
        assert!(plain.error().is_some());
        let d = TypedDecoder::<'_, 4>::with_groups(&buf);
        assert_eq!(d.error(), None);
        assert_eq!(d.get(3).unwrap().as_u64(), Ok(9));
        let groups: Vec<_> = d.repeated(1).map(|f| f.as_group().unwrap()).collect();
        assert_eq!(groups, [&[0x10, 1][..], &[][..]]);
    }

    #[test]
    fn keeps_fields_before_error() {
        let buf = [0x08, 5, 0x12, 10, b'a'];
        let d = TypedDecoder::<'_, 8>::new(&buf);
        assert_eq!(d.get(1).unwrap().as_u64(), Ok(5));
        assert_eq!(d.fields().count(), 1);
        assert!(matches!(
            d.error(),
            Some(DecodeError::LengthOutOfBounds { id: 2, .. })
        ));
    }
}
