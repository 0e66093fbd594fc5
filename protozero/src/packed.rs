//! Packed repeated fields: one length-delimited field holding many scalars.
//!
//! Fixed-width elements know their total length up front; varints are written
//! through a reserved length slot, exactly like a nested message, so any
//! iterator works without buffering.

use crate::message::Message;
use crate::varint::{zigzag32, zigzag64};

impl Message<'_> {
    /// Packed varints (uint32/uint64/int64/bool/enum after conversion to u64).
    pub fn append_packed_varint<I>(&mut self, id: u32, values: I)
    where
        I: IntoIterator<Item = u64>,
    {
        let mut nested = self.begin_nested(id);
        let (stream, delegate) = nested.parts();
        for v in values {
            stream.write_varint(delegate, v);
        }
    }

    /// Packed `int32` (negative values sign-extended).
    pub fn append_packed_int32<I: IntoIterator<Item = i32>>(&mut self, id: u32, values: I) {
        self.append_packed_varint(id, values.into_iter().map(|v| i64::from(v) as u64));
    }

    /// Packed `sint32`.
    pub fn append_packed_sint32<I: IntoIterator<Item = i32>>(&mut self, id: u32, values: I) {
        self.append_packed_varint(id, values.into_iter().map(|v| u64::from(zigzag32(v))));
    }

    /// Packed `sint64`.
    pub fn append_packed_sint64<I: IntoIterator<Item = i64>>(&mut self, id: u32, values: I) {
        self.append_packed_varint(id, values.into_iter().map(zigzag64));
    }

    /// Packed `fixed32`.
    pub fn append_packed_fixed32(&mut self, id: u32, values: &[u32]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Packed `sfixed32`.
    pub fn append_packed_sfixed32(&mut self, id: u32, values: &[i32]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Packed `float`.
    pub fn append_packed_float(&mut self, id: u32, values: &[f32]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Packed `fixed64`.
    pub fn append_packed_fixed64(&mut self, id: u32, values: &[u64]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Packed `sfixed64`.
    pub fn append_packed_sfixed64(&mut self, id: u32, values: &[i64]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Packed `double`.
    pub fn append_packed_double(&mut self, id: u32, values: &[f64]) {
        self.append_packed_fixed(id, values.iter().map(|v| v.to_le_bytes()), values.len());
    }

    /// Writes `count` fixed-width elements; the length is exact because the
    /// elements come from a slice.
    fn append_packed_fixed<const N: usize>(
        &mut self,
        id: u32,
        values: impl Iterator<Item = [u8; N]>,
        count: usize,
    ) {
        self.append_length_prefix(id, count * N);
        let (stream, delegate) = self.parts();
        for v in values {
            stream.write_bytes(delegate, &v);
        }
    }
}
