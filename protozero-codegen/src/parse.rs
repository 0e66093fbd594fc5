//! Turns `.proto` files into the [`crate::model`]: parsing and type checking
//! by `protobuf-parse` in pure-Rust mode (no `protoc` needed), then a one-time
//! translation of its descriptors that settles syntax-dependent questions
//! (packed defaults, synthetic proto3 `optional` oneofs) for the emitters.
//! `extend` blocks are not modelled: extension fields get no typed methods
//! (decoders still expose them through `typed_decoder()`), and proto2 groups
//! are rejected.

use std::path::{Path, PathBuf};

use protobuf::descriptor::field_descriptor_proto::{Label as PbLabel, Type as PbType};
use protobuf::descriptor::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto,
    ServiceDescriptorProto,
};

use crate::error::CodegenError;
use crate::model::{
    EnumDef, EnumValueDef, FieldDef, FieldType, Label, MessageDef, MethodDef, OneofDef, ProtoFile,
    Scalar, Schema, ServiceDef, Syntax,
};

/// The parser's output: our model plus the raw descriptors (for the
/// FileDescriptorSet), both in dependency order.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The model.
    pub schema: Schema,
    /// Descriptors of every loaded file, imports included.
    pub descriptors: Vec<FileDescriptorProto>,
}

/// Parses `inputs` (each under one of `includes`) and every file they import;
/// code is generated for all of them, since the inputs' code refers to them.
pub fn parse_files(includes: &[PathBuf], inputs: &[PathBuf]) -> Result<Parsed, CodegenError> {
    if inputs.is_empty() {
        return Err(CodegenError::NoInputs);
    }
    let parsed = protobuf_parse::Parser::new()
        .pure()
        .includes(includes)
        .inputs(inputs)
        .parse_and_typecheck()
        .map_err(|e| CodegenError::Parse {
            message: format!("{e:#}"),
        })?;
    let files = parsed
        .file_descriptors
        .iter()
        .map(convert_file)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parsed {
        schema: Schema { files },
        descriptors: parsed.file_descriptors,
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
    let syntax = if fd.syntax() == "proto3" {
        Syntax::Proto3
    } else {
        Syntax::Proto2
    };
    let ctx = Ctx {
        file: fd.name(),
        syntax,
    };
    let package = fd.package().to_owned();
    Ok(ProtoFile {
        name: fd.name().to_owned(),
        package: package.clone(),
        syntax,
        dependencies: fd.dependency.clone(),
        messages: fd
            .message_type
            .iter()
            .map(|m| ctx.message(m, &package))
            .collect::<Result<_, _>>()?,
        enums: fd
            .enum_type
            .iter()
            .map(|e| convert_enum(e, &package))
            .collect(),
        services: fd
            .service
            .iter()
            .map(|s| convert_service(s, &package))
            .collect(),
    })
}

struct Ctx<'a> {
    file: &'a str,
    syntax: Syntax,
}

impl Ctx<'_> {
    fn message(&self, m: &DescriptorProto, scope: &str) -> Result<MessageDef, CodegenError> {
        let full_name = join(scope, m.name());
        // proto3 `optional` fields sit in synthetic oneofs; only real oneofs
        // (with at least one non-synthetic member) are kept, renumbered.
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
        let fields = m
            .field
            .iter()
            .map(|f| self.field(f, &full_name, &remap))
            .collect::<Result<_, _>>()?;
        Ok(MessageDef {
            name: m.name().to_owned(),
            full_name: full_name.clone(),
            fields,
            oneofs,
            messages: m
                .nested_type
                .iter()
                .map(|n| self.message(n, &full_name))
                .collect::<Result<_, _>>()?,
            enums: m
                .enum_type
                .iter()
                .map(|e| convert_enum(e, &full_name))
                .collect(),
            map_entry: m.options.as_ref().and_then(|o| o.map_entry) == Some(true),
        })
    }

    fn field(
        &self,
        f: &FieldDescriptorProto,
        message: &str,
        oneof_remap: &[Option<usize>],
    ) -> Result<FieldDef, CodegenError> {
        let construct = || format!("field {message}.{}", f.name());
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
            PbType::TYPE_MESSAGE => FieldType::Message(strip_dot(f.type_name())),
            PbType::TYPE_GROUP => {
                return Err(CodegenError::Unsupported {
                    file: self.file.to_owned(),
                    construct: construct(),
                    reason: "proto2 groups are deprecated and not generated".to_owned(),
                });
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
        let explicit = f.options.as_ref().and_then(|o| o.packed);
        let packed = label == Label::Repeated
            && packable
            && explicit.unwrap_or(self.syntax == Syntax::Proto3);
        let oneof = f
            .oneof_index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| oneof_remap.get(i).copied().flatten());
        Ok(FieldDef {
            name: f.name().to_owned(),
            number,
            label,
            ty,
            packed,
            oneof,
            default: f.default_value.clone(),
        })
    }
}

fn strip_dot(name: &str) -> String {
    name.strip_prefix('.').unwrap_or(name).to_owned()
}

fn convert_enum(e: &EnumDescriptorProto, scope: &str) -> EnumDef {
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
