//! Iterating the unpacked occurrences of one field id in a message's bytes
//! (packed payloads are read by `packed_read`).

use crate::decoder::{Field, FieldValue, parse_at};
use crate::error::DecodeError;
use crate::fast_read::{read_bytes, read_varint};
use crate::wire::MAX_FIELD_ID;

/// Every occurrence of one field id, in arrival order, from a message's bytes.
///
/// Small (a slice, an offset, the number) and never passed by reference to
/// an out-of-line call, so that a loop over an iterator a generated decoder
/// hands out stays in registers: an absent or used-up field costs one
/// inline compare; the rest is one call by value per element, which reads
/// an occurrence with the fast readers and anything else through the
/// generic reader (which also reports malformed bytes).
#[derive(Debug, Clone)]
pub struct RepeatedFields<'a> {
    buf: &'a [u8],
    pos: usize,
    id: u32,
    groups: bool,
    error: Option<DecodeError>,
}

impl<'a> RepeatedFields<'a> {
    #[inline]
    /// Occurrences of `id` in `buf` at or after offset `start`.
    pub fn new(buf: &'a [u8], start: usize, id: u32) -> Self {
        RepeatedFields {
            buf,
            pos: start.min(buf.len()),
            id,
            groups: false,
            error: None,
        }
    }

    #[inline]
    /// This iterator, stepping over proto2 groups instead of stopping at
    /// them (see [`Decoder::accept_groups`](crate::Decoder::accept_groups)).
    pub fn accept_groups(mut self) -> Self {
        self.groups = true;
        self
    }

    #[inline]
    /// An iterator that yields nothing.
    pub fn empty() -> Self {
        Self::new(&[], 0, 0)
    }

    #[inline]
    /// The error that ended iteration early, if any.
    pub fn error(&self) -> Option<DecodeError> {
        self.error
    }
}

/// What [`advance`] found.
enum Step<'a> {
    /// An occurrence, and the offset after it.
    Found(Field<'a>, usize),
    /// No further occurrence.
    End,
    /// Malformed bytes.
    Failed(DecodeError),
}

/// The next occurrence of `id` at or after `pos` of `buf` (`pos` is before
/// its end). The common case first: the next field is an occurrence (a
/// generated decoder's extent starts at the first one) and its value is
/// well formed, read with the fast readers; anything they decline goes to
/// the generic reader, which checks every field's tag and reports
/// malformed bytes. Out of line and by value, so the iterator calling it
/// need not live in memory.
#[inline(never)]
fn advance(buf: &[u8], mut pos: usize, id: u32, groups: bool) -> Step<'_> {
    if let Some((tag, after)) = read_varint(buf, pos) {
        if tag >> 3 == u64::from(id) && (1..=MAX_FIELD_ID).contains(&id) {
            let read = match tag & 7 {
                0 => read_varint(buf, after).map(|(v, n)| (FieldValue::Varint(v), n)),
                2 => read_bytes(buf, after).map(|(v, n)| (FieldValue::Bytes(v), n)),
                _ => None,
            };
            if let Some((value, next)) = read {
                return Step::Found(Field { id, value }, next);
            }
        }
    }
    while pos < buf.len() {
        match parse_at(buf, pos, groups) {
            Ok((f, next)) if f.id == id => return Step::Found(f, next),
            Ok((_, next)) => pos = next,
            Err(e) => return Step::Failed(e),
        }
    }
    Step::End
}

impl<'a> Iterator for RepeatedFields<'a> {
    type Item = Field<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Field<'a>> {
        // An absent or used-up field costs one compare (generated decoders
        // hand out many such iterators).
        if self.pos >= self.buf.len() {
            return None;
        }
        match advance(self.buf, self.pos, self.id, self.groups) {
            Step::Found(f, next) => {
                self.pos = next;
                Some(f)
            }
            Step::End => {
                self.pos = self.buf.len();
                None
            }
            Step::Failed(e) => {
                self.error = Some(e);
                self.pos = self.buf.len();
                None
            }
        }
    }
}
