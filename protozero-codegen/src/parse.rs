//! Turns `.proto` files into the [`crate::model`]. A front end compiles
//! them to descriptors (`FileDescriptorProto`s, imports first): by default
//! `protox`, a pure-Rust protobuf compiler (no external tool; see
//! `pure.rs`, and `lowering.rs`/`editions_raise.rs` for editions), or
//! Google's `protoc` (see `protoc.rs`). Both front ends' output
//! is read as `protoc`'s bytes are, so everything after is shared: a
//! one-time translation of the descriptors that settles syntax- and
//! feature-dependent questions (packing, presence, group encoding, enum
//! openness, synthetic proto3 `optional` oneofs) for the emitters.

use std::path::{Path, PathBuf};

use protobuf::descriptor::field_descriptor_proto::{Label as PbLabel, Type as PbType};
use protobuf::descriptor::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto,
    ServiceDescriptorProto,
};

use crate::descriptor_set::DescriptorSet;
use crate::error::CodegenError;
use crate::features::{
    ENUM_FEATURES, FIELD_FEATURES, FILE_FEATURES, Features, FileSyntax, MESSAGE_FEATURES,
    ONEOF_FEATURES,
};
use crate::json_names::default_json_name;
use crate::model::{
    EnumDef, EnumValueDef, ExtensionDef, FieldDef, FieldType, Label, MessageDef, MethodDef,
    OneofDef, Presence, ProtoFile, Scalar, Schema, ServiceDef,
};

/// Which compiler reads the `.proto` files (`#[non_exhaustive]`: a front
/// end may be added).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FrontEnd {
    /// `protox` (0.10), a pure-Rust protobuf compiler: no external tool.
    /// It reads proto2, proto3 and editions 2023 and 2024 as `protoc` does,
    /// to the same descriptors (custom options of every type, extension
    /// declarations, groups, `import public`, `weak` and `option`,
    /// `export`/`local`); editions files are lowered to proto2 for protox and
    /// their descriptors raised back, with editions' own checks. What it
    /// refuses and `protoc` reads: under the message option
    /// `deprecated_legacy_json_field_conflicts`, a custom `json_name`
    /// written with an escape that clashes with another field's JSON name;
    /// an option value `nan` or `inf` whose option's place also holds an
    /// enum option set to a value of that name. It checks a little less
    /// than `protoc`: extensions are not matched against their
    /// declarations, and `features` in proto2/proto3 files, `jstype` on
    /// 32-bit fields and lite files extending non-lite messages pass; in
    /// edition 2024, naming style and symbol visibility are not enforced.
    /// Its own copy of `descriptor.proto` predates edition 2024's
    /// `enforce_naming_style` and `default_symbol_visibility`: to set those
    /// features, put a newer `google/protobuf/descriptor.proto` (protoc's)
    /// in an include directory.
    #[default]
    Pure,
    /// Google's `protoc`: the given binary, else `$PROTOC`, else the one
    /// shipped by the `protoc-bin-vendored` crate (feature `vendored-protoc`).
    Protoc(Option<PathBuf>),
}

/// The parser's output: our model plus the descriptors (for the
/// FileDescriptorSet), both in dependency order.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Parsed {
    /// The model.
    pub schema: Schema,
    /// Descriptors of every loaded file, imports included.
    pub descriptors: DescriptorSet,
}

/// Parses `inputs` (each under one of `includes`) and every file they import;
/// code is generated for all of them, since the inputs' code refers to them.
pub fn parse_files(
    includes: &[PathBuf],
    inputs: &[PathBuf],
    front_end: &FrontEnd,
) -> Result<Parsed, CodegenError> {
    if inputs.is_empty() {
        return Err(CodegenError::NoInputs);
    }
    let descriptors = match front_end {
        FrontEnd::Pure => crate::pure::compile(includes, inputs)?,
        FrontEnd::Protoc(path) => crate::protoc::compile(path.as_deref(), includes, inputs)?,
    };
    let files = descriptors
        .iter()
        .map(convert_file)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parsed {
        schema: Schema { files },
        descriptors: DescriptorSet::new(descriptors),
    })
}

/// Lists every `.proto` file under `dir`, sorted, for callers that generate
/// a whole tree.
pub fn find_proto_files(dir: &Path) -> Result<Vec<PathBuf>, CodegenError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|source| CodegenError::Io {
            path: d.clone(),
            source,
        })?;
        for entry in entries {
            let path = entry
                .map_err(|source| CodegenError::Io {
                    path: d.clone(),
                    source,
                })?
                .path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "proto") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn join(scope: &str, name: &str) -> String {
    if scope.is_empty() {
        name.to_owned()
    } else {
        format!("{scope}.{name}")
    }
}

fn convert_file(fd: &FileDescriptorProto) -> Result<ProtoFile, CodegenError> {
    let syntax = FileSyntax::of(fd.syntax(), fd.special_fields.unknown_fields());
    let features = syntax.defaults().overlay(
        fd.options
            .as_ref()
            .map(|o| o.special_fields.unknown_fields()),
        FILE_FEATURES,
    );
    let ctx = Ctx {
        file: fd.name(),
        proto2_or_3: !matches!(syntax, FileSyntax::Edition(_)),
        proto3: syntax == FileSyntax::Proto3,
    };
    let package = fd.package().to_owned();
    Ok(ProtoFile {
        name: fd.name().to_owned(),
        package: package.clone(),
        syntax: syntax.model(),
        dependencies: fd.dependency.clone(),
        messages: fd
            .message_type
            .iter()
            .map(|m| ctx.message(m, &package, features))
            .collect::<Result<_, _>>()?,
        enums: fd
            .enum_type
            .iter()
            .map(|e| convert_enum(e, &package, features))
            .collect(),
        services: fd
            .service
            .iter()
            .map(|s| convert_service(s, &package))
            .collect(),
        extensions: fd
            .extension
            .iter()
            .map(|f| ctx.extension(f, &package, features))
            .collect::<Result<_, _>>()?,
    })
}

struct Ctx<'a> {
    file: &'a str,
    /// proto2 or proto3: `[packed]` options and `TYPE_GROUP` decide, not features.
    proto2_or_3: bool,
    proto3: bool,
}

impl Ctx<'_> {
    fn message(
        &self,
        m: &DescriptorProto,
        scope: &str,
        parent: Features,
    ) -> Result<MessageDef, CodegenError> {
        let full_name = join(scope, m.name());
        let features = parent.overlay(
            m.options
                .as_ref()
                .map(|o| o.special_fields.unknown_fields()),
            MESSAGE_FEATURES,
        );
        // proto3 `optional` fields sit in synthetic oneofs; only real oneofs
        // (with at least one non-synthetic member) are kept, renumbered, so
        // the result does not depend on how a parser numbers synthetic ones.
        let mut real = vec![false; m.oneof_decl.len()];
        for f in &m.field {
            if let Some(i) = f.oneof_index {
                if !f.proto3_optional() {
                    if let Some(slot) = usize::try_from(i).ok().and_then(|i| real.get_mut(i)) {
                        *slot = true;
                    }
                }
            }
        }
        let mut remap = vec![None; real.len()];
        let mut oneofs = Vec::new();
        for (i, o) in m.oneof_decl.iter().enumerate() {
            if real[i] {
                remap[i] = Some(oneofs.len());
                oneofs.push(OneofDef {
                    name: o.name().to_owned(),
                });
            }
        }
        let map_entries: Vec<String> = m
            .nested_type
            .iter()
            .filter(|n| is_map_entry(n))
            .map(|n| join(&full_name, n.name()))
            .collect();
        let fields = m
            .field
            .iter()
            .map(|f| {
                let inherited = f
                    .oneof_index
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| m.oneof_decl.get(i))
                    .map_or(features, |o| {
                        features.overlay(
                            o.options
                                .as_ref()
                                .map(|o| o.special_fields.unknown_fields()),
                            ONEOF_FEATURES,
                        )
                    });
                let oneof = f
                    .oneof_index
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| remap.get(i).copied().flatten());
                self.field(f, &full_name, inherited, oneof, &map_entries)
            })
            .collect::<Result<_, _>>()?;
        Ok(MessageDef {
            name: m.name().to_owned(),
            full_name: full_name.clone(),
            fields,
            oneofs,
            messages: m
                .nested_type
                .iter()
                .map(|n| self.message(n, &full_name, features))
                .collect::<Result<_, _>>()?,
            enums: m
                .enum_type
                .iter()
                .map(|e| convert_enum(e, &full_name, features))
                .collect(),
            map_entry: is_map_entry(m),
            message_set: m.options.as_ref().and_then(|o| o.message_set_wire_format) == Some(true),
            extensions: m
                .extension
                .iter()
                .map(|f| self.extension(f, &full_name, features))
                .collect::<Result<_, _>>()?,
        })
    }

    fn extension(
        &self,
        f: &FieldDescriptorProto,
        scope: &str,
        features: Features,
    ) -> Result<ExtensionDef, CodegenError> {
        Ok(ExtensionDef {
            extendee: strip_dot(f.extendee()),
            field: self.field(f, scope, features, None, &[])?,
        })
    }

    fn field(
        &self,
        f: &FieldDescriptorProto,
        scope: &str,
        inherited: Features,
        oneof: Option<usize>,
        map_entries: &[String],
    ) -> Result<FieldDef, CodegenError> {
        let construct = || format!("field {scope}.{}", f.name());
        let features = inherited.overlay(
            f.options
                .as_ref()
                .map(|o| o.special_fields.unknown_fields()),
            FIELD_FEATURES,
        );
        let ty = match f.type_() {
            PbType::TYPE_DOUBLE => FieldType::Scalar(Scalar::Double),
            PbType::TYPE_FLOAT => FieldType::Scalar(Scalar::Float),
            PbType::TYPE_INT64 => FieldType::Scalar(Scalar::Int64),
            PbType::TYPE_UINT64 => FieldType::Scalar(Scalar::Uint64),
            PbType::TYPE_INT32 => FieldType::Scalar(Scalar::Int32),
            PbType::TYPE_FIXED64 => FieldType::Scalar(Scalar::Fixed64),
            PbType::TYPE_FIXED32 => FieldType::Scalar(Scalar::Fixed32),
            PbType::TYPE_BOOL => FieldType::Scalar(Scalar::Bool),
            PbType::TYPE_STRING => FieldType::Scalar(Scalar::String),
            PbType::TYPE_BYTES => FieldType::Scalar(Scalar::Bytes),
            PbType::TYPE_UINT32 => FieldType::Scalar(Scalar::Uint32),
            PbType::TYPE_SFIXED32 => FieldType::Scalar(Scalar::Sfixed32),
            PbType::TYPE_SFIXED64 => FieldType::Scalar(Scalar::Sfixed64),
            PbType::TYPE_SINT32 => FieldType::Scalar(Scalar::Sint32),
            PbType::TYPE_SINT64 => FieldType::Scalar(Scalar::Sint64),
            PbType::TYPE_ENUM => FieldType::Enum(strip_dot(f.type_name())),
            PbType::TYPE_MESSAGE | PbType::TYPE_GROUP => {
                FieldType::Message(strip_dot(f.type_name()))
            }
        };
        let number = u32::try_from(f.number()).map_err(|_| CodegenError::Unsupported {
            file: self.file.to_owned(),
            construct: construct(),
            reason: format!("field number {} is not positive", f.number()),
        })?;
        let label = if f.label() == PbLabel::LABEL_REPEATED {
            Label::Repeated
        } else {
            Label::Singular
        };
        let packable = match &ty {
            FieldType::Scalar(s) => s.is_packable(),
            FieldType::Enum(_) => true,
            FieldType::Message(_) => false,
        };
        let packed = label == Label::Repeated
            && packable
            && if self.proto2_or_3 {
                f.options
                    .as_ref()
                    .and_then(|o| o.packed)
                    .unwrap_or(self.proto3)
            } else {
                features.packed
            };
        let is_map = matches!(&ty, FieldType::Message(n) if map_entries.contains(n));
        let delimited = match &ty {
            FieldType::Message(_) if self.proto2_or_3 => f.type_() == PbType::TYPE_GROUP,
            FieldType::Message(_) => {
                f.type_() == PbType::TYPE_GROUP || (features.delimited && !is_map)
            }
            _ => false,
        };
        let presence = if f.label() == PbLabel::LABEL_REQUIRED {
            Presence::Required
        } else if self.proto2_or_3 {
            let implicit = self.proto3
                && !f.proto3_optional()
                && oneof.is_none()
                && !matches!(ty, FieldType::Message(_));
            if implicit {
                Presence::Implicit
            } else {
                Presence::Explicit
            }
        } else if matches!(ty, FieldType::Message(_)) || oneof.is_some() {
            // Editions cannot make message or oneof members implicit.
            match features.presence {
                Presence::Implicit => Presence::Explicit,
                p => p,
            }
        } else {
            features.presence
        };
        let json_name = f
            .json_name
            .as_ref()
            .filter(|j| **j != default_json_name(f.name()))
            .cloned();
        Ok(FieldDef {
            name: f.name().to_owned(),
            number,
            label,
            ty,
            packed,
            oneof,
            default: f.default_value.clone(),
            presence,
            delimited,
            json_name,
        })
    }
}

fn is_map_entry(m: &DescriptorProto) -> bool {
    m.options.as_ref().and_then(|o| o.map_entry) == Some(true)
}

fn strip_dot(name: &str) -> String {
    name.strip_prefix('.').unwrap_or(name).to_owned()
}

fn convert_enum(e: &EnumDescriptorProto, scope: &str, parent: Features) -> EnumDef {
    let features = parent.overlay(
        e.options
            .as_ref()
            .map(|o| o.special_fields.unknown_fields()),
        ENUM_FEATURES,
    );
    EnumDef {
        name: e.name().to_owned(),
        full_name: join(scope, e.name()),
        values: e
            .value
            .iter()
            .map(|v| EnumValueDef {
                name: v.name().to_owned(),
                number: v.number(),
            })
            .collect(),
        closed: features.closed_enums,
    }
}

fn convert_service(s: &ServiceDescriptorProto, package: &str) -> ServiceDef {
    ServiceDef {
        name: s.name().to_owned(),
        full_name: join(package, s.name()),
        methods: s
            .method
            .iter()
            .map(|m| MethodDef {
                name: m.name().to_owned(),
                input_type: strip_dot(m.input_type()),
                output_type: strip_dot(m.output_type()),
                client_streaming: m.client_streaming(),
                server_streaming: m.server_streaming(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names() {
        assert_eq!(default_json_name("foo_bar"), "fooBar");
        assert_eq!(default_json_name("foo"), "foo");
        assert_eq!(default_json_name("foo__bar_1"), "fooBar1");
        assert_eq!(default_json_name("FooBar"), "FooBar");
    }
}
