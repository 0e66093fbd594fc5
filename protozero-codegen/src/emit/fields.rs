//! Per-field planning shared by the writer and decoder emitters: the Rust
//! types a field maps to, the runtime calls that encode and decode it, and
//! the method names it gets, made unique within each generated `impl`.

use std::collections::HashSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::Ctx;
use crate::error::CodegenError;
use crate::model::{FieldDef, FieldType, Label, MessageDef, Scalar};
use crate::names::{
    DECODER_RESERVED, escape, ident_in, primary_decoder_accessors, screaming, snake, unique_name,
};
use crate::resolve::{SymbolKind, relative_path};

/// How one scalar type is written, read and iterated.
pub(crate) struct ScalarInfo {
    /// Rust value type (for writer parameters and decoder results).
    pub rust_ty: TokenStream,
    /// `protozero::Message` method appending one value.
    pub append: Ident,
    /// `protozero::kinds` marker (numeric types only).
    pub kind: Option<Ident>,
    /// Packed writer: `Some(method)` for fixed-width (slice input) types.
    pub packed_fixed: Option<Ident>,
}

pub(crate) fn scalar_info(s: Scalar) -> ScalarInfo {
    let (ty, name, fixed) = match s {
        Scalar::Double => (quote!(f64), "double", true),
        Scalar::Float => (quote!(f32), "float", true),
        Scalar::Int32 => (quote!(i32), "int32", false),
        Scalar::Int64 => (quote!(i64), "int64", false),
        Scalar::Uint32 => (quote!(u32), "uint32", false),
        Scalar::Uint64 => (quote!(u64), "uint64", false),
        Scalar::Sint32 => (quote!(i32), "sint32", false),
        Scalar::Sint64 => (quote!(i64), "sint64", false),
        Scalar::Fixed32 => (quote!(u32), "fixed32", true),
        Scalar::Fixed64 => (quote!(u64), "fixed64", true),
        Scalar::Sfixed32 => (quote!(i32), "sfixed32", true),
        Scalar::Sfixed64 => (quote!(i64), "sfixed64", true),
        Scalar::Bool => (quote!(bool), "bool", false),
        Scalar::String => (quote!(&str), "string", false),
        Scalar::Bytes => (quote!(&[u8]), "bytes", false),
    };
    let kind = s
        .is_packable()
        .then(|| format_ident!("{}", crate::names::upper_camel(name)));
    ScalarInfo {
        rust_ty: ty,
        append: format_ident!("append_{}", name),
        kind,
        packed_fixed: fixed.then(|| format_ident!("append_packed_{}", name)),
    }
}

/// What a field's values are, with paths resolved from the current module.
pub(crate) enum Shape {
    /// A scalar.
    Scalar(Scalar),
    /// An enum; the path to the Rust enum.
    Enum(TokenStream),
    /// A message; paths to its writer and decoder types.
    Message {
        writer: TokenStream,
        decoder: TokenStream,
    },
}

/// Everything the emitters need about one field.
pub(crate) struct FieldPlan<'m> {
    pub def: &'m FieldDef,
    pub shape: Shape,
    /// The field number constant on the writer, e.g. `FIELD_TIMESTAMP`.
    pub konst: Ident,
    /// Writer: `set_x` / `add_x` / `begin_x`.
    pub w_main: Ident,
    /// Writer: the raw variant (`set_x_raw`), for enums and messages.
    pub w_raw: Option<Ident>,
    /// Decoder: the accessor (`x`).
    pub d_get: Ident,
    /// Decoder: `has_x`.
    pub d_has: Ident,
    /// Decoder: `x_raw` for enums.
    pub d_raw: Option<Ident>,
    /// Decoder: `x_bytes` for strings and messages.
    pub d_bytes: Option<Ident>,
    /// Decoder: `try_x` for singular strings and messages (the strict read).
    pub d_try: Option<Ident>,
    /// Decoder: `x_all` for singular message fields outside oneofs (every
    /// occurrence, for merging).
    pub d_all: Option<Ident>,
    /// Of a closed enum: an occurrence with a number the enum does not name
    /// is an unknown field, so the field keeps its earlier value (as
    /// protoc's C++ decodes it).
    pub closed_enum: bool,
}

impl FieldPlan<'_> {
    pub fn repeated(&self) -> bool {
        self.def.label == Label::Repeated
    }

    /// The proto type as written, e.g. `uint64` or `perfetto.protos.TrackEvent`.
    pub fn proto_type(&self) -> &str {
        match &self.def.ty {
            FieldType::Scalar(s) => s.proto_name(),
            FieldType::Enum(n) | FieldType::Message(n) => n,
        }
    }

    /// "Field `name` = N (`type`) of `Msg`", the start of every doc comment.
    pub fn describe(&self, msg: &MessageDef) -> String {
        let label = if self.repeated() { "repeated " } else { "" };
        let mut s = format!(
            "Field `{}` = {} ({label}`{}`) of `{}`",
            self.def.name,
            self.def.number,
            self.proto_type(),
            msg.full_name
        );
        if self.def.packed {
            s.push_str(", packed");
        }
        if let Some(d) = &self.def.default {
            s.push_str(&format!(", default `{d}`"));
        }
        s
    }
}

/// Hands out unique method names within one `impl`; errors name `file`.
struct NameSet<'f> {
    taken: HashSet<String>,
    file: &'f str,
}

impl<'f> NameSet<'f> {
    fn new(reserved: &[&str], file: &'f str) -> Self {
        NameSet {
            taken: reserved.iter().map(|s| s.to_string()).collect(),
            file,
        }
    }

    /// A name not yet in the set (see [`unique_name`]), escaped first so
    /// derived names such as `1a_raw` become identifiers (`_1a_raw`).
    fn take(&mut self, wanted: String) -> Result<Ident, CodegenError> {
        ident_in(self.file, &unique_name(&mut self.taken, escape(&wanted)))
    }
}

/// Methods every generated writer has.
pub(crate) const WRITER_RESERVED: &[&str] =
    &["from_message", "message", "into_message", "finalize"];

/// Plans every field of `msg`, emitted from module `module`.
pub(crate) fn plan_fields<'m>(
    ctx: &Ctx<'_>,
    module: &[String],
    msg: &'m MessageDef,
) -> Result<Vec<FieldPlan<'m>>, CodegenError> {
    let file = ctx.file.name.as_str();
    let mut writer = NameSet::new(WRITER_RESERVED, file);
    let mut decoder = NameSet::new(DECODER_RESERVED, file);
    let mut consts = NameSet::new(&[], file);
    // The main accessors come from `names` so tools (xtask) can name them too.
    let mut d_gets = primary_decoder_accessors(msg).into_iter();
    // Primary names first, so a field's own accessor is never displaced by
    // another field's derived name.
    let mut primary = Vec::with_capacity(msg.fields.len());
    for f in &msg.fields {
        let construct = format!("field {}.{}", msg.full_name, f.name);
        let mut closed_enum = false;
        let shape = match &f.ty {
            FieldType::Scalar(s) => Shape::Scalar(*s),
            FieldType::Enum(n) => {
                let sym = ctx.symbols.get(n, &ctx.file.name, &construct)?;
                expect_kind(ctx, sym.kind, SymbolKind::Enum, &construct, n)?;
                closed_enum = sym.closed;
                Shape::Enum(relative_path(file, module, &sym.module, &sym.ident)?)
            }
            FieldType::Message(n) => {
                let sym = ctx.symbols.get(n, &ctx.file.name, &construct)?;
                expect_kind(ctx, sym.kind, SymbolKind::Message, &construct, n)?;
                Shape::Message {
                    writer: relative_path(file, module, &sym.module, &sym.ident)?,
                    decoder: relative_path(
                        file,
                        module,
                        &sym.module,
                        &format!("{}Decoder", sym.ident),
                    )?,
                }
            }
        };
        let base = snake(&f.name);
        let w_prefix = match (&shape, f.label) {
            (_, Label::Repeated) if f.packed => "set",
            (_, Label::Repeated) => "add",
            (Shape::Message { .. }, Label::Singular) => "begin",
            (_, Label::Singular) => "set",
        };
        let konst = consts.take(format!("FIELD_{}", screaming(&f.name)))?;
        let w_main = writer.take(format!("{w_prefix}_{base}"))?;
        let d_get = decoder.take(d_gets.next().unwrap_or_else(|| escape(&base)))?;
        primary.push((f, shape, konst, w_main, d_get, closed_enum));
    }
    let mut plans = Vec::with_capacity(primary.len());
    for (def, shape, konst, w_main, d_get, closed_enum) in primary {
        let base = snake(&def.name);
        let raw_writer = match (&shape, def.label) {
            (Shape::Enum(_), _) if def.packed => Some(format!("set_{base}_raw")),
            (Shape::Enum(_) | Shape::Message { .. }, Label::Repeated) => {
                Some(format!("add_{base}_raw"))
            }
            (Shape::Enum(_) | Shape::Message { .. }, Label::Singular) => {
                Some(format!("set_{base}_raw"))
            }
            _ => None,
        };
        let w_raw = raw_writer.map(|n| writer.take(n)).transpose()?;
        let d_has = decoder.take(format!("has_{base}"))?;
        let d_raw = matches!(shape, Shape::Enum(_))
            .then(|| decoder.take(format!("{base}_raw")))
            .transpose()?;
        let d_bytes = matches!(shape, Shape::Message { .. } | Shape::Scalar(Scalar::String))
            .then(|| decoder.take(format!("{base}_bytes")))
            .transpose()?;
        let singular = def.label != Label::Repeated;
        let d_try = (singular
            && matches!(shape, Shape::Message { .. } | Shape::Scalar(Scalar::String)))
        .then(|| decoder.take(format!("try_{base}")))
        .transpose()?;
        let d_all = (singular
            && def.oneof.is_none()
            && !def.delimited
            && matches!(shape, Shape::Message { .. }))
        .then(|| decoder.take(format!("{base}_all")))
        .transpose()?;
        plans.push(FieldPlan {
            def,
            shape,
            konst,
            w_main,
            w_raw,
            d_get,
            d_has,
            d_raw,
            d_bytes,
            d_try,
            d_all,
            closed_enum,
        });
    }
    Ok(plans)
}

/// Name of the decoder's `which_<oneof>` method (unique among its methods).
pub(crate) fn which_names(
    msg: &MessageDef,
    plans: &[FieldPlan<'_>],
    file: &str,
) -> Result<Vec<Ident>, CodegenError> {
    let mut taken: HashSet<String> = DECODER_RESERVED.iter().map(|s| s.to_string()).collect();
    for p in plans {
        for id in [
            Some(&p.d_get),
            Some(&p.d_has),
            p.d_raw.as_ref(),
            p.d_bytes.as_ref(),
            p.d_try.as_ref(),
            p.d_all.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            taken.insert(id.to_string());
        }
    }
    let mut set = NameSet { taken, file };
    msg.oneofs
        .iter()
        .map(|o| set.take(format!("which_{}", snake(&o.name))))
        .collect()
}

fn expect_kind(
    ctx: &Ctx<'_>,
    found: SymbolKind,
    wanted: SymbolKind,
    construct: &str,
    name: &str,
) -> Result<(), CodegenError> {
    if found == wanted {
        Ok(())
    } else {
        Err(CodegenError::UnknownType {
            file: ctx.file.name.clone(),
            construct: construct.to_owned(),
            type_name: format!(
                "{name} (not a{})",
                if wanted == SymbolKind::Enum {
                    "n enum"
                } else {
                    " message"
                }
            ),
        })
    }
}
