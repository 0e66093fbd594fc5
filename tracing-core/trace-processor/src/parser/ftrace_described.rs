//! What a trace says about an ftrace event our schema does not know: its
//! name and, per field number, the field's name and protobuf type, read
//! from the `DescriptorProto` the recorder made of the kernel's `format`
//! file. The generic importer (`ftrace_generic.rs`) fills these in and
//! reads events by them; the kernel track event convention
//! (`ftrace_kernel_track.rs`) matches field names against them.

use crate::column_store::strings::StrId;

/// `FieldDescriptorProto.Type` values (protobuf's numbering).
pub mod ty {
    /// `double`.
    pub const DOUBLE: u8 = 1;
    /// `float`.
    pub const FLOAT: u8 = 2;
    /// `int64`.
    pub const INT64: u8 = 3;
    /// `uint64`.
    pub const UINT64: u8 = 4;
    /// `int32`.
    pub const INT32: u8 = 5;
    /// `fixed64`.
    pub const FIXED64: u8 = 6;
    /// `fixed32`.
    pub const FIXED32: u8 = 7;
    /// `bool`.
    pub const BOOL: u8 = 8;
    /// `string`.
    pub const STRING: u8 = 9;
    /// `bytes`.
    pub const BYTES: u8 = 12;
    /// `uint32`.
    pub const UINT32: u8 = 13;
    /// `enum`.
    pub const ENUM: u8 = 14;
    /// `sfixed32`.
    pub const SFIXED32: u8 = 15;
    /// `sfixed64`.
    pub const SFIXED64: u8 = 16;
    /// `sint32`.
    pub const SINT32: u8 = 17;
    /// `sint64`, the last type a descriptor may use.
    pub const SINT64: u8 = 18;
}

/// One field of a described event.
#[derive(Debug, Clone, Copy)]
pub struct GenericField {
    /// Its name.
    pub name: StrId,
    /// Its `FieldDescriptorProto.Type`.
    pub ty: u8,
}

/// One described event.
#[derive(Debug, Clone, Default)]
pub struct GenericEvent {
    /// Its name (the tracepoint's).
    pub name: StrId,
    /// Its fields, by field number (None where the number is unused).
    pub fields: Vec<Option<GenericField>>,
}
