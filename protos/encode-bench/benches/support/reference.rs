//! The practical lower bound the protozero writer is measured against: a
//! minimal encoder that writes varints straight into one preallocated slice
//! and backfills 4-byte reserved lengths of nested messages. It has no slice
//! switching, no error state and no length compaction.

/// Wire type of varint fields.
const VARINT: u32 = 0;
/// Wire type of length-delimited fields.
const LEN: u32 = 2;

/// Appends protobuf fields at `pos` in `buf`; panics (indexing) when `buf` is too small.
pub struct RefEncoder<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

/// Where a nested message's 4-byte length goes.
#[derive(Clone, Copy)]
pub struct Nested(usize);

impl<'a> RefEncoder<'a> {
    /// Starts writing at the beginning of `buf`.
    #[inline(always)]
    pub fn new(buf: &'a mut [u8]) -> RefEncoder<'a> {
        RefEncoder { buf, pos: 0 }
    }

    /// Bytes written so far.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf[self.pos] = v as u8 | 0x80;
            self.pos += 1;
            v >>= 7;
        }
        self.buf[self.pos] = v as u8;
        self.pos += 1;
    }

    #[inline(always)]
    fn tag(&mut self, id: u32, wire_type: u32) {
        self.varint(u64::from(id << 3 | wire_type));
    }

    /// A varint field (uint64, int64 as two's complement, enum, ...).
    #[inline(always)]
    pub fn uint(&mut self, id: u32, v: u64) {
        self.tag(id, VARINT);
        self.varint(v);
    }

    /// A string or bytes field.
    #[inline(always)]
    pub fn bytes(&mut self, id: u32, data: &[u8]) {
        self.tag(id, LEN);
        self.varint(data.len() as u64);
        self.buf[self.pos..self.pos + data.len()].copy_from_slice(data);
        self.pos += data.len();
    }

    /// Writes the tag of a nested message and reserves 4 bytes for its length.
    #[inline(always)]
    pub fn begin_nested(&mut self, id: u32) -> Nested {
        self.tag(id, LEN);
        let slot = self.pos;
        self.pos += 4;
        Nested(slot)
    }

    /// Backfills the length of `nested` as a redundant 4-byte varint.
    #[inline(always)]
    pub fn end_nested(&mut self, nested: Nested) {
        let len = (self.pos - nested.0 - 4) as u32;
        self.buf[nested.0..nested.0 + 4].copy_from_slice(&[
            len as u8 | 0x80,
            (len >> 7) as u8 | 0x80,
            (len >> 14) as u8 | 0x80,
            (len >> 21) as u8 & 0x7f,
        ]);
    }
}
