//! `Debug` output for generated decoders.
//!
//! A generated decoder prints like a struct named after it, listing the fields
//! that are present (under their `.proto` names, in field-number order):
//!
//! ```text
//! TracePacketDecoder { timestamp: 5, track_event: TrackEventDecoder { name: "x", type: SliceBegin } }
//! ```
//!
//! * scalars print as their Rust values, enums as the Rust variant name (a
//!   number the enum does not name prints as that number);
//! * strings print quoted; a string that is not UTF-8 prints as its bytes;
//! * bytes print as a list of numbers when at most [`MAX_DEBUG_BYTES`] long,
//!   else as `[N bytes]`;
//! * nested messages print through their own decoder; one nested
//!   [`MAX_DEBUG_DEPTH`] levels below the decoder being printed prints as
//!   `NameDecoder { .. }` without being parsed (so neither is anything in it);
//! * repeated fields print as lists, up to the first malformed element;
//! * fields with numbers the schema does not name (unknown fields, extensions)
//!   are not printed. A trailing `..` says something was left out: such a
//!   field, a field whose wire type does not match the schema, or bytes after
//!   the point where parsing stopped.
//!
//! Printing never allocates. Each nested message is parsed when printed, so
//! the recursion is as deep as the data nests, and capped as above.

use core::fmt::{self, Debug, DebugStruct, Formatter};
use core::marker::PhantomData;

use crate::codegen_support::{MessageDecoder, ProtoEnum, ScalarKind, kinds};
use crate::decoder::{Field, FieldValue};
use crate::repeated::RepeatedFields;
use crate::typed_decoder::TypedDecoder;
use crate::typed_repeated::RepeatedScalars;

/// Nesting depth below the decoder being printed at which `Debug` stops
/// parsing nested messages and prints them as `NameDecoder { .. }`.
pub const MAX_DEBUG_DEPTH: usize = 64;

/// Longest `bytes` value printed element by element; longer ones print as
/// `[N bytes]`.
pub const MAX_DEBUG_BYTES: usize = 32;

/// A generated decoder's `Debug` body, with the nesting depth it is printed at.
pub trait DebugDecoder {
    /// The decoder's Rust type name, e.g. `TracePacketDecoder`.
    const DEBUG_NAME: &'static str;

    /// Writes the decoder as a struct; `depth` is how many messages enclose it.
    fn fmt_at_depth(&self, f: &mut Formatter<'_>, depth: usize) -> fmt::Result;
}

/// Builds the struct-like output of one decoder, field by field. Absent
/// fields are skipped; fields that cannot be shown mark the output as
/// non-exhaustive (a trailing `..`).
pub struct DebugFields<'f, 'b> {
    out: DebugStruct<'f, 'b>,
    depth: usize,
    incomplete: bool,
}

impl<'f, 'b> DebugFields<'f, 'b> {
    /// Starts the output of decoder `name` printed `depth` levels down.
    pub fn new(f: &'f mut Formatter<'b>, name: &str, depth: usize) -> Self {
        DebugFields {
            out: f.debug_struct(name),
            depth,
            incomplete: false,
        }
    }

    /// Marks the output as non-exhaustive when `dec` stopped parsing early
    /// or holds a field whose number is not in `known` (sorted ascending).
    pub fn check_fields<const N: usize>(&mut self, dec: &TypedDecoder<'_, N>, known: &[u32]) {
        if self.incomplete {
            return;
        }
        self.incomplete =
            dec.error().is_some() || dec.fields().any(|f| known.binary_search(&f.id).is_err());
    }

    /// Ends the output, with `..` if anything was left out.
    pub fn finish(mut self) -> fmt::Result {
        if self.incomplete {
            self.out.finish_non_exhaustive()
        } else {
            self.out.finish()
        }
    }

    fn show(&mut self, name: &str, value: Option<&dyn Debug>) {
        match value {
            Some(v) => {
                self.out.field(name, v);
            }
            None => self.incomplete = true,
        }
    }

    /// A singular scalar field of kind `K` (a marker from `kinds`).
    pub fn scalar<K: ScalarKind>(&mut self, name: &str, field: Option<Field<'_>>, _kind: K)
    where
        K::Value: Debug,
    {
        if let Some(field) = field {
            self.show(name, K::from_value(field.value).as_ref().map(|v| v as _));
        }
    }

    /// A singular enum field of enum `E`.
    pub fn enumeration<E: ProtoEnum + Debug>(&mut self, name: &str, field: Option<Field<'_>>) {
        if let Some(field) = field {
            let value = kinds::Int32::from_value(field.value).map(EnumName::<E>::new);
            self.show(name, value.as_ref().map(|v| v as _));
        }
    }

    /// A singular `string` field.
    pub fn string(&mut self, name: &str, field: Option<Field<'_>>) {
        self.payload::<Str<'_>>(name, field, false);
    }

    /// A singular `bytes` field.
    pub fn bytes(&mut self, name: &str, field: Option<Field<'_>>) {
        self.payload::<Bytes<'_>>(name, field, false);
    }

    /// A singular message field read by decoder `D`.
    pub fn message<'a, D>(&mut self, name: &str, field: Option<Field<'a>>)
    where
        D: MessageDecoder<'a> + DebugDecoder,
    {
        self.payload::<Nested<'a, D>>(name, field, false);
    }

    /// A singular group (delimited) field read by decoder `D`.
    pub fn group<'a, D>(&mut self, name: &str, field: Option<Field<'a>>)
    where
        D: MessageDecoder<'a> + DebugDecoder,
    {
        self.payload::<Nested<'a, D>>(name, field, true);
    }

    fn payload<'a, T: Payload<'a>>(&mut self, name: &str, field: Option<Field<'a>>, group: bool) {
        if let Some(field) = field {
            let value = payload(field.value, group).map(|b| T::wrap(b, self.depth + 1));
            self.show(name, value.as_ref().map(|v| v as _));
        }
    }

    /// A repeated scalar field of kind `K` (a marker from `kinds`), packed
    /// or not.
    pub fn repeated_scalars<K: ScalarKind>(
        &mut self,
        name: &str,
        fields: RepeatedFields<'_>,
        _kind: K,
    ) where
        K::Value: Debug,
    {
        if present(&fields) {
            let mut all = RepeatedScalars::<K>::new(fields.clone());
            all.by_ref().for_each(drop);
            self.incomplete |= all.error().is_some();
            self.out.field(name, &ScalarList::<K>(fields, PhantomData));
        }
    }

    /// A repeated enum field of enum `E` (packed or not); every element is
    /// listed, unknown numbers as numbers.
    pub fn repeated_enums<E: ProtoEnum + Debug>(&mut self, name: &str, fields: RepeatedFields<'_>) {
        if present(&fields) {
            let mut all = RepeatedScalars::<kinds::Int32>::new(fields.clone());
            all.by_ref().for_each(drop);
            self.incomplete |= all.error().is_some();
            self.out.field(name, &EnumList::<E>(fields, PhantomData));
        }
    }

    /// A repeated `string` field.
    pub fn repeated_strings(&mut self, name: &str, fields: RepeatedFields<'_>) {
        self.payloads::<Str<'_>>(name, fields, false);
    }

    /// A repeated `bytes` field.
    pub fn repeated_bytes(&mut self, name: &str, fields: RepeatedFields<'_>) {
        self.payloads::<Bytes<'_>>(name, fields, false);
    }

    /// A repeated message field read by decoder `D`.
    pub fn repeated_messages<'a, D>(&mut self, name: &str, fields: RepeatedFields<'a>)
    where
        D: MessageDecoder<'a> + DebugDecoder,
    {
        self.payloads::<Nested<'a, D>>(name, fields, false);
    }

    /// A repeated group (delimited) field read by decoder `D`.
    pub fn repeated_groups<'a, D>(&mut self, name: &str, fields: RepeatedFields<'a>)
    where
        D: MessageDecoder<'a> + DebugDecoder,
    {
        self.payloads::<Nested<'a, D>>(name, fields, true);
    }

    fn payloads<'a, T: Payload<'a>>(
        &mut self,
        name: &str,
        fields: RepeatedFields<'a>,
        group: bool,
    ) {
        if present(&fields) {
            let mut all = fields.clone();
            let well_formed = all.by_ref().all(|f| payload(f.value, group).is_some());
            self.incomplete |= !well_formed || all.error().is_some();
            let list = PayloadList::<T> {
                fields,
                group,
                depth: self.depth + 1,
                kind: PhantomData,
            };
            self.out.field(name, &list);
        }
    }
}

/// Whether the field occurs at all.
fn present(fields: &RepeatedFields<'_>) -> bool {
    fields.clone().next().is_some()
}

/// The payload of a length-delimited value (or of a group, when `group`).
fn payload(value: FieldValue<'_>, group: bool) -> Option<&[u8]> {
    match (value, group) {
        (FieldValue::Bytes(b), false) | (FieldValue::Group(b), true) => Some(b),
        _ => None,
    }
}

/// A length-delimited value shown one way or another.
trait Payload<'a>: Debug {
    fn wrap(bytes: &'a [u8], depth: usize) -> Self;
}

/// A string: quoted when UTF-8, else its bytes.
struct Str<'a>(&'a [u8]);

impl<'a> Payload<'a> for Str<'a> {
    fn wrap(bytes: &'a [u8], _: usize) -> Self {
        Str(bytes)
    }
}

impl Debug for Str<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match core::str::from_utf8(self.0) {
            Ok(s) => Debug::fmt(s, f),
            Err(_) => Debug::fmt(&Bytes(self.0), f),
        }
    }
}

/// Bytes: listed when short, counted when long.
struct Bytes<'a>(&'a [u8]);

impl<'a> Payload<'a> for Bytes<'a> {
    fn wrap(bytes: &'a [u8], _: usize) -> Self {
        Bytes(bytes)
    }
}

impl Debug for Bytes<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0.len() <= MAX_DEBUG_BYTES {
            f.debug_list().entries(self.0).finish()
        } else {
            write!(f, "[{} bytes]", self.0.len())
        }
    }
}

/// A nested message, parsed by `D` only when printed (and only above the cap).
struct Nested<'a, D> {
    bytes: &'a [u8],
    depth: usize,
    decoder: PhantomData<fn() -> D>,
}

impl<'a, D: MessageDecoder<'a> + DebugDecoder> Payload<'a> for Nested<'a, D> {
    fn wrap(bytes: &'a [u8], depth: usize) -> Self {
        Nested {
            bytes,
            depth,
            decoder: PhantomData,
        }
    }
}

impl<'a, D: MessageDecoder<'a> + DebugDecoder> Debug for Nested<'a, D> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.depth >= MAX_DEBUG_DEPTH {
            f.debug_struct(D::DEBUG_NAME).finish_non_exhaustive()
        } else {
            D::decode(self.bytes).fmt_at_depth(f, self.depth)
        }
    }
}

/// An enum number: the variant's name, or the number when `E` has none.
struct EnumName<E>(i32, PhantomData<fn() -> E>);

impl<E> EnumName<E> {
    fn new(value: i32) -> Self {
        EnumName(value, PhantomData)
    }
}

impl<E: ProtoEnum + Debug> Debug for EnumName<E> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match E::from_i32(self.0) {
            Some(e) => Debug::fmt(&e, f),
            None => Debug::fmt(&self.0, f),
        }
    }
}

/// Elements of a repeated scalar field.
struct ScalarList<'a, K>(RepeatedFields<'a>, PhantomData<fn() -> K>);

impl<K: ScalarKind> Debug for ScalarList<'_, K>
where
    K::Value: Debug,
{
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(RepeatedScalars::<K>::new(self.0.clone()))
            .finish()
    }
}

/// Elements of a repeated enum field.
struct EnumList<'a, E>(RepeatedFields<'a>, PhantomData<fn() -> E>);

impl<E: ProtoEnum + Debug> Debug for EnumList<'_, E> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(RepeatedScalars::<kinds::Int32>::new(self.0.clone()).map(EnumName::<E>::new))
            .finish()
    }
}

/// Elements of a repeated length-delimited (or group) field.
struct PayloadList<'a, T> {
    fields: RepeatedFields<'a>,
    group: bool,
    depth: usize,
    kind: PhantomData<fn() -> T>,
}

impl<'a, T: Payload<'a>> Debug for PayloadList<'a, T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let group = self.group;
        let depth = self.depth;
        f.debug_list()
            .entries(
                self.fields
                    .clone()
                    .map_while(|field| payload(field.value, group))
                    .map(|b| T::wrap(b, depth)),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;

    use super::*;
    use crate::error::DecodeError;

    /// `message M { uint32 a = 1; string s = 2; repeated M kids = 3; bytes b = 4; }`
    #[derive(Clone)]
    struct MDecoder<'a> {
        dec: TypedDecoder<'a, 5>,
    }

    impl<'a> MessageDecoder<'a> for MDecoder<'a> {
        const FULL_NAME: &'static str = "M";
        fn decode(buf: &'a [u8]) -> Self {
            MDecoder {
                dec: TypedDecoder::new(buf),
            }
        }
        fn decode_error(&self) -> Option<DecodeError> {
            self.dec.error()
        }
    }

    impl DebugDecoder for MDecoder<'_> {
        const DEBUG_NAME: &'static str = "MDecoder";
        fn fmt_at_depth(&self, f: &mut Formatter<'_>, depth: usize) -> fmt::Result {
            let mut s = DebugFields::new(f, Self::DEBUG_NAME, depth);
            s.scalar("a", self.dec.get(1), kinds::Uint32);
            s.string("s", self.dec.get(2));
            s.repeated_messages::<MDecoder<'_>>("kids", self.dec.repeated(3));
            s.bytes("b", self.dec.get(4));
            s.check_fields(&self.dec, &[1, 2, 3, 4]);
            s.finish()
        }
    }

    impl Debug for MDecoder<'_> {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            self.fmt_at_depth(f, 0)
        }
    }

    fn show(buf: &[u8]) -> alloc::string::String {
        format!("{:?}", MDecoder::decode(buf))
    }

    #[test]
    fn present_fields_in_order() {
        // s = "hi", a = 7, kids = [{a: 1}, {}]
        let buf = [0x12, 2, b'h', b'i', 0x08, 7, 0x1A, 2, 0x08, 1, 0x1A, 0];
        assert_eq!(
            show(&buf),
            r#"MDecoder { a: 7, s: "hi", kids: [MDecoder { a: 1 }, MDecoder] }"#
        );
        assert_eq!(show(&[]), "MDecoder");
    }

    #[test]
    fn invalid_utf8_and_long_bytes() {
        let mut buf = alloc::vec![0x12, 2, 0xFF, b'a', 0x22, 40];
        buf.extend_from_slice(&[0; 40]);
        assert_eq!(show(&buf), "MDecoder { s: [255, 97], b: [40 bytes] }");
        assert_eq!(show(&[0x22, 2, 1, 2]), "MDecoder { b: [1, 2] }");
    }

    #[test]
    fn unknown_and_malformed_fields_mark_the_output() {
        // field 9 = 1 (unknown)
        assert_eq!(show(&[0x08, 1, 0x48, 1]), "MDecoder { a: 1, .. }");
        // a as a fixed32
        assert_eq!(show(&[0x0D, 1, 0, 0, 0]), "MDecoder { .. }");
        // truncated after a
        assert_eq!(show(&[0x08, 1, 0x12, 9]), "MDecoder { a: 1, .. }");
    }

    #[test]
    fn depth_is_capped() {
        // MAX_DEBUG_DEPTH + 10 levels of kids, built inside out.
        let mut buf = alloc::vec::Vec::new();
        for _ in 0..MAX_DEBUG_DEPTH + 10 {
            let mut outer = alloc::vec![0x1A, buf.len() as u8];
            if buf.len() >= 0x80 {
                outer = alloc::vec![0x1A];
                let mut n = buf.len();
                while n >= 0x80 {
                    outer.push((n as u8 & 0x7F) | 0x80);
                    n >>= 7;
                }
                outer.push(n as u8);
            }
            outer.extend_from_slice(&buf);
            buf = outer;
        }
        let out = show(&buf);
        assert_eq!(out.matches("MDecoder").count(), MAX_DEBUG_DEPTH + 1);
        assert!(out.contains("kids: [MDecoder { .. }]"), "{out}");
    }
}
