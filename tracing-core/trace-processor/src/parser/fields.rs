//! A message's scalar fields read in one walk: the importers of small
//! upstream messages (frame timeline, GPU, graphics and driver events)
//! ask for a field by number and get its last value, or none when the
//! field is absent, which is how upstream's decoders tell `has_x()` from
//! a default. Malformed bytes end the walk: what was read before stays.

use protozero::{Decoder, FieldValue};

/// Field numbers kept (a larger one is ignored).
const SLOTS: usize = 64;

/// The last value of each field number below [`SLOTS`].
pub struct Fields<'a> {
    slots: [Option<FieldValue<'a>>; SLOTS],
}

impl<'a> Fields<'a> {
    /// Reads `bytes`' fields.
    pub fn new(bytes: &'a [u8]) -> Self {
        let mut slots = [None; SLOTS];
        for f in Decoder::new(bytes).map_while(Result::ok) {
            if let Some(slot) = slots.get_mut(f.id as usize) {
                *slot = Some(f.value);
            }
        }
        Fields { slots }
    }

    fn get(&self, id: u32) -> Option<FieldValue<'a>> {
        self.slots.get(id as usize).copied().flatten()
    }

    /// A varint or fixed field as a signed integer (two's complement, as
    /// `int64`/`int32` fields are written).
    pub fn int(&self, id: u32) -> Option<i64> {
        match self.get(id)? {
            FieldValue::Varint(v) | FieldValue::Fixed64(v) => Some(v as i64),
            FieldValue::Fixed32(v) => Some(i64::from(v as i32)),
            _ => None,
        }
    }

    /// An `int32` field (a negative value's 64-bit varint cut to 32 bits).
    pub fn int32(&self, id: u32) -> Option<i32> {
        self.int(id).map(|v| v as i32)
    }

    /// A varint or fixed field as an unsigned integer.
    pub fn uint(&self, id: u32) -> Option<u64> {
        match self.get(id)? {
            FieldValue::Varint(v) | FieldValue::Fixed64(v) => Some(v),
            FieldValue::Fixed32(v) => Some(u64::from(v)),
            _ => None,
        }
    }

    /// A `bool` field.
    pub fn bool(&self, id: u32) -> Option<bool> {
        self.uint(id).map(|v| v != 0)
    }

    /// A `float` (fixed32) or `double` (fixed64) field.
    pub fn real(&self, id: u32) -> Option<f64> {
        match self.get(id)? {
            FieldValue::Fixed32(v) => Some(f64::from(f32::from_bits(v))),
            FieldValue::Fixed64(v) => Some(f64::from_bits(v)),
            _ => None,
        }
    }

    /// A length-delimited field's bytes.
    pub fn bytes(&self, id: u32) -> Option<&'a [u8]> {
        match self.get(id)? {
            FieldValue::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// A `string` field (invalid UTF-8 replaced).
    pub fn str(&self, id: u32) -> Option<std::borrow::Cow<'a, str>> {
        self.bytes(id).map(String::from_utf8_lossy)
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    #[test]
    fn last_values_by_number_and_absent_fields() {
        // 1: varint 5 then 7; 2: "ab"; 3: fixed32 1.5f; 4: varint -1 (10 bytes).
        let mut b = vec![0x08, 5, 0x08, 7, 0x12, 2, b'a', b'b', 0x1d];
        b.extend_from_slice(&1.5f32.to_bits().to_le_bytes());
        b.extend_from_slice(&[
            0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ]);
        let f = Fields::new(&b);
        assert_eq!(f.int(1), Some(7));
        assert_eq!(f.str(2).as_deref(), Some("ab"));
        assert_eq!(f.real(3), Some(1.5));
        assert_eq!(f.int32(4), Some(-1));
        assert_eq!(f.uint(5), None);
        assert_eq!(f.int(2), None);
    }
}
