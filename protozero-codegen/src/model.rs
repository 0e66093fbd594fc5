//! The intermediate model: what the emitters need to know about a schema,
//! and nothing about how it was parsed.
//!
//! The parser's descriptors carry many optional fields, options and
//! syntax-dependent defaults; [`crate::parse`] resolves those once (for
//! example whether a repeated field is packed) so the emitters only read plain
//! data. Names are fully qualified without a leading dot
//! (`perfetto.protos.TrackEvent.Type`).
//!
//! The model grows with the schema language (editions bring new features,
//! new options matter to the emitters): the structs here, [`Syntax`] and
//! [`Presence`] are `#[non_exhaustive]`, so a new field or variant is not a
//! breaking change. Read the model a parse produces, and change a parsed
//! one rather than building one from scratch. [`Scalar`], [`FieldType`] and
//! [`Label`] are closed (the wire format fixes protobuf's scalar types, the
//! kinds of field and the two cardinalities): a `match` over them may be
//! exhaustive.

/// Every file of one code generation run, in dependency order.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Schema {
    /// Files; a file comes after the files it imports.
    pub files: Vec<ProtoFile>,
}

impl Schema {
    /// Whether any field (extensions included) is written as a group, or a
    /// message uses the message-set format (items are groups), so decoders
    /// must read wire types 3 and 4.
    pub fn uses_groups(&self) -> bool {
        fn message(m: &MessageDef) -> bool {
            m.message_set
                || m.fields.iter().any(|f| f.delimited)
                || m.extensions.iter().any(|e| e.field.delimited)
                || m.messages.iter().any(message)
        }
        self.files.iter().any(|f| {
            f.messages.iter().any(message) || f.extensions.iter().any(|e| e.field.delimited)
        })
    }
}

/// `proto2`, `proto3` or an edition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Syntax {
    /// `syntax = "proto2"` (or none).
    Proto2,
    /// `syntax = "proto3"`.
    Proto3,
    /// `edition = "<year>"`, e.g. 2023.
    Edition(u32),
}

/// Whether a singular field tracks presence (resolved from the syntax or
/// the editions `field_presence` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Presence {
    /// Set or not set is observable (proto2 and proto3 `optional`, editions default).
    Explicit,
    /// Absent means the default value (proto3 singular scalars, editions `IMPLICIT`).
    Implicit,
    /// proto2 `required` (editions `LEGACY_REQUIRED`).
    Required,
}

/// One `.proto` file.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProtoFile {
    /// Path relative to its include directory, e.g. `perfetto/trace/trace.proto`.
    pub name: String,
    /// Package, e.g. `perfetto.protos` (empty for none).
    pub package: String,
    /// Declared syntax.
    pub syntax: Syntax,
    /// Imported files, as written in the `import` statements.
    pub dependencies: Vec<String>,
    /// Top-level messages in declaration order.
    pub messages: Vec<MessageDef>,
    /// Top-level enums in declaration order.
    pub enums: Vec<EnumDef>,
    /// Services in declaration order.
    pub services: Vec<ServiceDef>,
    /// Top-level `extend` fields in declaration order.
    pub extensions: Vec<ExtensionDef>,
}

/// One field declared in an `extend Foo { ... }` block.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExtensionDef {
    /// Fully qualified name of the extended message.
    pub extendee: String,
    /// The field (its `oneof` is always `None`).
    pub field: FieldDef,
}

/// A message type.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MessageDef {
    /// Simple name, e.g. `TrackEvent`.
    pub name: String,
    /// Fully qualified name, e.g. `perfetto.protos.TrackEvent`.
    pub full_name: String,
    /// Fields in declaration order.
    pub fields: Vec<FieldDef>,
    /// Real (non-synthetic) oneofs; fields point here by index.
    pub oneofs: Vec<OneofDef>,
    /// Nested messages.
    pub messages: Vec<MessageDef>,
    /// Nested enums.
    pub enums: Vec<EnumDef>,
    /// Whether this is the synthetic entry type of a `map<K, V>` field.
    pub map_entry: bool,
    /// `option message_set_wire_format = true`: the message only carries
    /// extensions, each wrapped in an `Item` group on the wire.
    pub message_set: bool,
    /// `extend` fields declared inside this message, in declaration order.
    pub extensions: Vec<ExtensionDef>,
}

impl MessageDef {
    /// Largest field number used (0 for a message without fields).
    pub fn max_field_number(&self) -> u32 {
        self.fields.iter().map(|f| f.number).max().unwrap_or(0)
    }
}

/// Cardinality of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// At most one value (proto2 `optional`/`required`, proto3 singular).
    Singular,
    /// Any number of values.
    Repeated,
}

/// A scalar type: everything that is neither a message nor an enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `double`
    Double,
    /// `float`
    Float,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint32`
    Uint32,
    /// `uint64`
    Uint64,
    /// `sint32`
    Sint32,
    /// `sint64`
    Sint64,
    /// `fixed32`
    Fixed32,
    /// `fixed64`
    Fixed64,
    /// `sfixed32`
    Sfixed32,
    /// `sfixed64`
    Sfixed64,
    /// `bool`
    Bool,
    /// `string`
    String,
    /// `bytes`
    Bytes,
}

impl Scalar {
    /// Whether values of this type may be packed (numeric types only).
    pub fn is_packable(self) -> bool {
        !matches!(self, Scalar::String | Scalar::Bytes)
    }

    /// The name used in `.proto` files.
    pub fn proto_name(self) -> &'static str {
        match self {
            Scalar::Double => "double",
            Scalar::Float => "float",
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::Uint32 => "uint32",
            Scalar::Uint64 => "uint64",
            Scalar::Sint32 => "sint32",
            Scalar::Sint64 => "sint64",
            Scalar::Fixed32 => "fixed32",
            Scalar::Fixed64 => "fixed64",
            Scalar::Sfixed32 => "sfixed32",
            Scalar::Sfixed64 => "sfixed64",
            Scalar::Bool => "bool",
            Scalar::String => "string",
            Scalar::Bytes => "bytes",
        }
    }
}

/// The type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// A scalar.
    Scalar(Scalar),
    /// An enum, by fully qualified name.
    Enum(String),
    /// A message, by fully qualified name.
    Message(String),
}

/// One field of a message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FieldDef {
    /// Name as declared, e.g. `timestamp`.
    pub name: String,
    /// Field number.
    pub number: u32,
    /// Singular or repeated.
    pub label: Label,
    /// Value type.
    pub ty: FieldType,
    /// Whether the writer emits this repeated field packed (explicit
    /// `[packed = true]`, or the proto3 default for numeric types).
    pub packed: bool,
    /// Index into [`MessageDef::oneofs`] for members of a real oneof.
    pub oneof: Option<usize>,
    /// Declared `[default = ...]`, as written.
    pub default: Option<String>,
    /// Presence tracking of a singular field.
    pub presence: Presence,
    /// A message field written as a group (start/end tags, wire types 3
    /// and 4) instead of length-prefixed: proto2 `group`s and editions'
    /// `message_encoding = DELIMITED`.
    pub delimited: bool,
    /// A `json_name` that differs from the default lowerCamelCase name.
    pub json_name: Option<String>,
}

/// A `oneof` group.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OneofDef {
    /// Name as declared.
    pub name: String,
}

/// An enum type.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EnumDef {
    /// Simple name.
    pub name: String,
    /// Fully qualified name.
    pub full_name: String,
    /// Values in declaration order (aliases included).
    pub values: Vec<EnumValueDef>,
    /// Closed enum (proto2, editions `enum_type = CLOSED`): numbers it does
    /// not name are not valid values of its fields.
    pub closed: bool,
}

/// One enum value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnumValueDef {
    /// Name as declared, e.g. `TYPE_SLICE_BEGIN`.
    pub name: String,
    /// Number.
    pub number: i32,
}

/// A service.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServiceDef {
    /// Simple name, e.g. `ProducerPort`.
    pub name: String,
    /// Fully qualified name.
    pub full_name: String,
    /// Methods in declaration order.
    pub methods: Vec<MethodDef>,
}

/// One RPC method.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodDef {
    /// Name as declared.
    pub name: String,
    /// Fully qualified request type.
    pub input_type: String,
    /// Fully qualified response type.
    pub output_type: String,
    /// `stream` on the request.
    pub client_streaming: bool,
    /// `stream` on the response.
    pub server_streaming: bool,
}
