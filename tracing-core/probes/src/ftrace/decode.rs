//! The generic event: a record's payload read field by field through its
//! event's `format` (integers of any size and sign, fixed `char` arrays,
//! `__data_loc`/`__rel_loc` strings and arrays, flexible arrays), so any
//! tracepoint can be turned into named values without knowing it in
//! advance. Every offset comes from the format file and is bounds-checked
//! against the payload.

use super::format::{EventFormat, Field, FieldKind};
use super::page::{Record, read_uint};
use std::collections::HashMap;
use thiserror::Error;

/// Why a table could not take a format or a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// No format with this id is in the table.
    #[error("unknown event id {0}")]
    UnknownId(u32),
    /// The event has no field of this name.
    #[error("event {event:?} has no field {field:?}")]
    NoSuchField {
        /// The event name.
        event: String,
        /// The field asked for.
        field: String,
    },
    /// The field (or the data it points at) lies outside the payload.
    #[error("field {0:?} lies outside the event payload")]
    OutOfBounds(String),
    /// A format whose `common_type` differs from the others'.
    #[error("event {0:?} has a common_type unlike the table's other events")]
    CommonTypeMismatch(String),
    /// A format without `common_type`.
    #[error("event {0:?} has no common_type field")]
    NoCommonType(String),
    /// Two formats with one id.
    #[error("event id {0} is already in the table")]
    DuplicateId(u32),
}

/// A field's value as read from the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// A signed integer, sign-extended.
    Signed(i64),
    /// An unsigned integer.
    Unsigned(u64),
    /// A string: the bytes up to the first NUL (not necessarily UTF-8).
    Str(&'a [u8]),
    /// A non-string array or blob: its raw bytes.
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// The value as an i64 where it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Signed(v) => Some(v),
            Value::Unsigned(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a u64 where it is an integer (signed values
    /// reinterpreted as their two's-complement bits).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Signed(v) => Some(v as u64),
            Value::Unsigned(v) => Some(v),
            _ => None,
        }
    }

    /// The bytes of a string or array value.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Str(b) | Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// The formats of the events being recorded, by id.
#[derive(Debug, Clone, Default)]
pub struct FormatTable {
    by_id: HashMap<u32, EventFormat>,
    common_type: Option<Field>,
}

impl FormatTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a format. All formats must agree on `common_type`, which is
    /// where a page's records carry their id.
    pub fn insert(&mut self, format: EventFormat) -> Result<(), DecodeError> {
        let ct = format
            .field("common_type")
            .ok_or_else(|| DecodeError::NoCommonType(format.name.clone()))?;
        match &self.common_type {
            Some(existing) if existing.offset != ct.offset || existing.size != ct.size => {
                return Err(DecodeError::CommonTypeMismatch(format.name.clone()));
            }
            Some(_) => {}
            None => self.common_type = Some(ct.clone()),
        }
        if self.by_id.contains_key(&format.id) {
            return Err(DecodeError::DuplicateId(format.id));
        }
        self.by_id.insert(format.id, format);
        Ok(())
    }

    /// The `common_type` field shared by the table's formats (for
    /// [`super::page::PageLayout::new`]); `None` while the table is empty.
    pub fn common_type(&self) -> Option<&Field> {
        self.common_type.as_ref()
    }

    /// Every format in the table (in no particular order).
    pub fn formats(&self) -> impl Iterator<Item = &EventFormat> {
        self.by_id.values()
    }

    /// The format with this id.
    pub fn get(&self, id: u32) -> Option<&EventFormat> {
        self.by_id.get(&id)
    }

    /// Pairs a record with its format.
    pub fn decode<'a>(&'a self, record: &Record<'a>) -> Result<Event<'a>, DecodeError> {
        let format = self
            .by_id
            .get(&record.id)
            .ok_or(DecodeError::UnknownId(record.id))?;
        Ok(Event {
            format,
            payload: record.payload,
        })
    }
}

/// A record with its format: field values by name.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// The event's format.
    pub format: &'a EventFormat,
    /// The record's payload.
    pub payload: &'a [u8],
}

impl<'a> Event<'a> {
    /// The event's name.
    pub fn name(&self) -> &'a str {
        &self.format.name
    }

    /// The value of the field called `name` (common fields included).
    pub fn field(&self, name: &str) -> Result<Value<'a>, DecodeError> {
        let field = self
            .format
            .field(name)
            .ok_or_else(|| DecodeError::NoSuchField {
                event: self.format.name.clone(),
                field: name.to_owned(),
            })?;
        read_field(self.payload, field)
    }

    /// The pid of the task the event was recorded in (`common_pid`).
    pub fn pid(&self) -> Result<i64, DecodeError> {
        let v = self.field("common_pid")?;
        v.as_i64()
            .ok_or_else(|| DecodeError::OutOfBounds("common_pid".to_owned()))
    }

    /// The event's own fields (not the common ones) with their values.
    pub fn fields(&self) -> impl Iterator<Item = (&'a Field, Result<Value<'a>, DecodeError>)> + 'a {
        let payload = self.payload;
        self.format
            .fields
            .iter()
            .map(move |f| (f, read_field(payload, f)))
    }
}

/// Reads one field from a payload.
pub fn read_field<'a>(payload: &'a [u8], field: &Field) -> Result<Value<'a>, DecodeError> {
    let oob = || DecodeError::OutOfBounds(field.name.clone());
    let end = field.offset.checked_add(field.size).ok_or_else(oob)?;
    let bytes = payload.get(field.offset..end).ok_or_else(oob)?;
    Ok(match field.kind {
        FieldKind::Int => {
            let raw = read_uint(bytes, 0, field.size).ok_or_else(oob)?;
            if field.signed {
                let shift = 64 - 8 * field.size as u32;
                Value::Signed(((raw << shift) as i64) >> shift)
            } else {
                Value::Unsigned(raw)
            }
        }
        FieldKind::CharArray => Value::Str(until_nul(bytes)),
        FieldKind::Array { .. } | FieldKind::Blob => Value::Bytes(bytes),
        FieldKind::DataLoc { string } | FieldKind::RelLoc { string } => {
            let word = read_uint(bytes, 0, 4).ok_or_else(oob)?;
            let mut off = (word & 0xffff) as usize;
            let len = (word >> 16) as usize;
            if matches!(field.kind, FieldKind::RelLoc { .. }) {
                off = off.checked_add(end).ok_or_else(oob)?;
            }
            let data_end = off.checked_add(len).ok_or_else(oob)?;
            let data = payload.get(off..data_end).ok_or_else(oob)?;
            if string {
                Value::Str(until_nul(data))
            } else {
                Value::Bytes(data)
            }
        }
        FieldKind::Flex { string } => {
            let data = payload.get(field.offset..).ok_or_else(oob)?;
            if string {
                Value::Str(until_nul(data))
            } else {
                Value::Bytes(data)
            }
        }
    })
}

/// The bytes before the first NUL.
fn until_nul(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(n) => &bytes[..n],
        None => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FMT: &str = "name: ev\nID: 9\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:char comm[8];\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:16;\tsize:4;\tsigned:0;\n\
\tfield:short s;\toffset:20;\tsize:2;\tsigned:1;\n\
\tfield:__rel_loc char[] rel;\toffset:24;\tsize:4;\tsigned:0;\n\
\nprint fmt: \"\"\n";

    #[test]
    fn reads_every_kind() {
        let mut t = FormatTable::new();
        t.insert(EventFormat::parse(FMT).unwrap()).unwrap();
        let mut p = vec![0u8; 40];
        p[0] = 9;
        p[4..8].copy_from_slice(&(-3i32).to_le_bytes());
        p[8..12].copy_from_slice(b"abc\0");
        // name at 28, 3 bytes ("hi\0").
        p[16..20].copy_from_slice(&(28u32 | (3 << 16)).to_le_bytes());
        p[20..22].copy_from_slice(&(-2i16).to_le_bytes());
        // rel: 3 bytes after the field's end (28) -> 31, 2 bytes.
        p[24..28].copy_from_slice(&(3u32 | (2 << 16)).to_le_bytes());
        p[28..31].copy_from_slice(b"hi\0");
        p[31..33].copy_from_slice(b"yo");
        let r = Record {
            timestamp: 0,
            id: 9,
            payload: &p,
        };
        let e = t.decode(&r).unwrap();
        assert_eq!(e.pid().unwrap(), -3);
        assert_eq!(e.field("comm").unwrap(), Value::Str(b"abc"));
        assert_eq!(e.field("name").unwrap(), Value::Str(b"hi"));
        assert_eq!(e.field("s").unwrap(), Value::Signed(-2));
        assert_eq!(e.field("rel").unwrap(), Value::Str(b"yo"));
        assert_eq!(e.fields().count(), 4);
        // A data_loc pointing past the payload.
        p[16..20].copy_from_slice(&(38u32 | (9 << 16)).to_le_bytes());
        let r = Record {
            timestamp: 0,
            id: 9,
            payload: &p,
        };
        let e = t.decode(&r).unwrap();
        assert!(matches!(e.field("name"), Err(DecodeError::OutOfBounds(_))));
        // Short payload, unknown id, missing field.
        let short = Record {
            timestamp: 0,
            id: 9,
            payload: &p[..10],
        };
        assert!(t.decode(&short).unwrap().field("s").is_err());
        assert!(matches!(
            t.decode(&Record {
                timestamp: 0,
                id: 1,
                payload: &p
            }),
            Err(DecodeError::UnknownId(1))
        ));
        assert!(matches!(
            e.field("nope"),
            Err(DecodeError::NoSuchField { .. })
        ));
        assert_eq!(
            t.insert(EventFormat::parse(FMT).unwrap()),
            Err(DecodeError::DuplicateId(9))
        );
    }
}
