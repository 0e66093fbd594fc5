//! Editions feature resolution: which presence, packing, enum openness and
//! message encoding apply to each field and enum.
//!
//! Files in `edition = "2023"` (or later) state these properties as
//! `features` on the file, message, oneof, field or enum options, inherited
//! from the enclosing element; proto2 and proto3 files imply fixed sets.
//! The `protobuf` crate's descriptor types predate editions, so the
//! edition number and the `FeatureSet` messages arrive as unknown fields;
//! this module reads them from there.

use protobuf::UnknownFields;
use protobuf::UnknownValueRef;

use crate::model::{Presence, Syntax};

/// `FileDescriptorProto.edition`.
pub(crate) const FILE_EDITION: u32 = 14;
/// `FileOptions.features`.
pub const FILE_FEATURES: u32 = 50;
/// `MessageOptions.features`.
pub const MESSAGE_FEATURES: u32 = 12;
/// `FieldOptions.features`.
pub const FIELD_FEATURES: u32 = 21;
/// `OneofOptions.features`.
pub const ONEOF_FEATURES: u32 = 1;
/// `EnumOptions.features`.
pub const ENUM_FEATURES: u32 = 7;

/// The resolved features of one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Field presence.
    pub presence: Presence,
    /// Enums are closed (unknown numbers are not valid values).
    pub closed_enums: bool,
    /// Repeated numeric fields are packed.
    pub packed: bool,
    /// Message fields use the group (delimited) encoding.
    pub delimited: bool,
}

/// The syntax a file declares, with its edition number if it uses editions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSyntax {
    /// proto2.
    Proto2,
    /// proto3.
    Proto3,
    /// `edition = "..."`, with `Edition` enum's number (1000 = 2023).
    Edition(u64),
}

impl FileSyntax {
    /// Reads the syntax of a file descriptor.
    pub(crate) fn of(syntax: &str, unknown: &UnknownFields) -> FileSyntax {
        match syntax {
            "proto3" => FileSyntax::Proto3,
            "editions" => match unknown.get(FILE_EDITION) {
                Some(UnknownValueRef::Varint(e)) => FileSyntax::Edition(e),
                // No number: assume the first edition.
                _ => FileSyntax::Edition(1000),
            },
            _ => FileSyntax::Proto2,
        }
    }

    /// The model's view: editions by year (`Edition` number 1000 is 2023).
    pub fn model(self) -> Syntax {
        match self {
            FileSyntax::Proto2 => Syntax::Proto2,
            FileSyntax::Proto3 => Syntax::Proto3,
            FileSyntax::Edition(n) => Syntax::Edition(
                u32::try_from(n.saturating_sub(1000)).map_or(u32::MAX, |d| 2023 + d),
            ),
        }
    }

    /// The features that apply before any `features` option.
    pub fn defaults(self) -> Features {
        match self {
            FileSyntax::Proto2 => Features {
                presence: Presence::Explicit,
                closed_enums: true,
                packed: false,
                delimited: false,
            },
            FileSyntax::Proto3 => Features {
                presence: Presence::Implicit,
                closed_enums: false,
                packed: true,
                delimited: false,
            },
            // 2023 and 2024 share these defaults.
            FileSyntax::Edition(_) => Features {
                presence: Presence::Explicit,
                closed_enums: false,
                packed: true,
                delimited: false,
            },
        }
    }
}

impl Features {
    /// These features overridden by the `FeatureSet` stored as field
    /// `field` of an options message's unknown fields, if there is one.
    pub(crate) fn overlay(self, unknown: Option<&UnknownFields>, field: u32) -> Features {
        let Some(UnknownValueRef::LengthDelimited(bytes)) = unknown.and_then(|u| u.get(field))
        else {
            return self;
        };
        let mut f = self;
        for (number, value) in varint_fields(bytes) {
            match (number, value) {
                (1, 1) => f.presence = Presence::Explicit,
                (1, 2) => f.presence = Presence::Implicit,
                (1, 3) => f.presence = Presence::Required,
                (2, 1) => f.closed_enums = false,
                (2, 2) => f.closed_enums = true,
                (3, 1) => f.packed = true,
                (3, 2) => f.packed = false,
                (5, 1) => f.delimited = false,
                (5, 2) => f.delimited = true,
                _ => {}
            }
        }
        f
    }
}

/// The varint fields of a serialized message, stopping at anything malformed
/// (a `FeatureSet` holds only enums and nested messages this module ignores).
pub(crate) fn varint_fields(mut bytes: &[u8]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    while let Some((tag, rest)) = varint(bytes) {
        let rest = match tag & 7 {
            0 => match varint(rest) {
                Some((v, rest)) => {
                    out.push((tag >> 3, v));
                    rest
                }
                None => break,
            },
            1 => match rest.get(8..) {
                Some(r) => r,
                None => break,
            },
            2 => match varint(rest) {
                Some((len, r)) => match usize::try_from(len).ok().and_then(|l| r.get(l..)) {
                    Some(r) => r,
                    None => break,
                },
                None => break,
            },
            5 => match rest.get(4..) {
                Some(r) => r,
                None => break,
            },
            _ => break,
        };
        bytes = rest;
    }
    out
}

fn varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return bytes.get(i + 1..).map(|rest| (v, rest));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_fields_skip_other_wire_types() {
        // 1: 2, 6: "ab" (skipped), 3: 2, then a truncated varint.
        let bytes = [0x08, 2, 0x32, 2, b'a', b'b', 0x18, 2, 0x28];
        assert_eq!(varint_fields(&bytes), [(1, 2), (3, 2)]);
    }

    #[test]
    fn overlay_applies_known_values() {
        let mut unknown = UnknownFields::new();
        // presence IMPLICIT, enum CLOSED, EXPANDED, DELIMITED.
        unknown.add_length_delimited(FIELD_FEATURES, vec![0x08, 2, 0x10, 2, 0x18, 2, 0x28, 2]);
        let f = FileSyntax::Edition(1000)
            .defaults()
            .overlay(Some(&unknown), FIELD_FEATURES);
        assert_eq!(
            f,
            Features {
                presence: Presence::Implicit,
                closed_enums: true,
                packed: false,
                delimited: true
            }
        );
        assert_eq!(
            FileSyntax::Proto2.defaults().overlay(None, FIELD_FEATURES),
            FileSyntax::Proto2.defaults()
        );
    }

    #[test]
    fn edition_years() {
        assert_eq!(FileSyntax::Edition(1000).model(), Syntax::Edition(2023));
        assert_eq!(FileSyntax::Edition(1001).model(), Syntax::Edition(2024));
        assert_eq!(FileSyntax::Proto3.model(), Syntax::Proto3);
    }
}
