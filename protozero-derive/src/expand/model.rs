//! The validated description of a deriving type that both derives generate
//! code from: a message struct's fields, a oneof enum's members, or a C-like
//! enum's variants. All cross-field rules (every field has a number, numbers
//! are unique, option combinations make sense) are enforced here so the code
//! generators never see an invalid model.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields, Ident, Lit, Member, Type, UnOp};

use super::attr::{self, ContainerAttrs, Encoding};
use super::shape::{self, Shape};

/// What the derive is applied to.
pub enum Model {
    /// A struct: a protobuf message.
    Message(Vec<FieldModel>),
    /// An enum whose variants each hold one value: a protobuf `oneof`.
    Oneof(Vec<OneofMember>),
    /// An enum of unit variants: a protobuf enum.
    Enum(Vec<Ident>),
}

/// One oneof member (an enum variant holding one value).
pub struct OneofMember {
    pub variant: Ident,
    pub ty: Type,
    pub tag: u32,
    pub encoding: Encoding,
}

/// One field of a message struct.
pub struct FieldModel {
    /// `self.<member>`.
    pub member: Member,
    /// Name used in error paths.
    pub name: String,
    pub ty: Type,
    pub kind: FieldKind,
}

/// How a field takes part in the message.
pub enum FieldKind {
    /// `#[proto(skip)]`: not on the wire; `Default` when decoding.
    Skip,
    /// `#[proto(oneof)]` on an `Option<E>`; holds `E`.
    Oneof(Type),
    /// A numbered field.
    Tagged {
        tag: u32,
        encoding: Encoding,
        packed: bool,
        shape: Shape,
    },
}

/// The parsed container and its model.
pub struct Parsed<'i> {
    pub input: &'i DeriveInput,
    pub attrs: ContainerAttrs,
    pub model: Model,
}

/// Validates `input` for either derive.
pub fn parse(input: &DeriveInput) -> syn::Result<Parsed<'_>> {
    let attrs = attr::container(&input.attrs)?;
    let model = match &input.data {
        Data::Struct(s) => Model::Message(message_fields(&s.fields)?),
        Data::Enum(e) => {
            if e.variants.is_empty() {
                return Err(syn::Error::new(
                    input.ident.span(),
                    "an enum without variants cannot be a protobuf enum or oneof",
                ));
            }
            if e.variants.iter().all(|v| matches!(v.fields, Fields::Unit)) {
                Model::Enum(enum_variants(e)?)
            } else {
                Model::Oneof(oneof_members(e)?)
            }
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "unions are not supported; use an enum for a oneof",
            ));
        }
    };
    if let Some(param) = input.generics.type_params().next() {
        return Err(syn::Error::new(
            param.ident.span(),
            "type parameters are not supported; only lifetimes may be generic",
        ));
    }
    if let Some(param) = input.generics.const_params().next() {
        return Err(syn::Error::new(
            param.ident.span(),
            "const parameters are not supported; only lifetimes may be generic",
        ));
    }
    Ok(Parsed {
        input,
        attrs,
        model,
    })
}

fn message_fields(fields: &Fields) -> syn::Result<Vec<FieldModel>> {
    let mut out = Vec::new();
    let mut seen: Vec<(u32, String)> = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for (i, f) in fields.iter().enumerate() {
        let (member, name) = match &f.ident {
            Some(id) => (Member::Named(id.clone()), id.to_string()),
            None => (Member::Unnamed(i.into()), i.to_string()),
        };
        let result = field_kind(f, &name).and_then(|(kind, tag_span)| {
            if let (FieldKind::Tagged { tag, .. }, Some(span)) = (&kind, tag_span) {
                if let Some((_, other)) = seen.iter().find(|(t, _)| t == tag) {
                    return Err(syn::Error::new(
                        span,
                        format!("duplicate field number {tag}: already used by field `{other}`"),
                    ));
                }
                seen.push((*tag, name.clone()));
            }
            Ok(kind)
        });
        match result {
            Ok(kind) => out.push(FieldModel {
                member,
                name,
                ty: f.ty.clone(),
                kind,
            }),
            Err(e) => match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            },
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The kind of one struct field and the span of its number.
fn field_kind(f: &syn::Field, name: &str) -> syn::Result<(FieldKind, Option<Span>)> {
    let a = attr::field(&f.attrs)?;
    if a.skip.is_some() {
        a.reject(
            &["tag", "sint", "fixed", "packed", "repeated", "oneof"],
            "on a skipped field",
        )?;
        return Ok((FieldKind::Skip, None));
    }
    if a.oneof.is_some() {
        a.reject(
            &["tag", "sint", "fixed", "packed", "repeated"],
            "on a oneof field: its field numbers and encodings come from the enum's variants",
        )?;
        return match shape::classify(&f.ty, false)? {
            Shape::Optional(inner) => Ok((FieldKind::Oneof(inner), None)),
            _ => Err(syn::Error::new_spanned(
                &f.ty,
                "a `oneof` field must have type `Option<E>`, where E is an enum deriving ProtoWrite/ProtoRead",
            )),
        };
    }
    let Some((tag, tag_span)) = a.tag else {
        let span = f.ident.as_ref().map_or_else(|| f.ty.span(), Ident::span);
        return Err(syn::Error::new(
            span,
            format!(
                "field `{name}` needs a field number: add `#[proto(tag = N)]` (or `#[proto(skip)]`)"
            ),
        ));
    };
    let shape = shape::classify(&f.ty, a.repeated.is_some())?;
    let packed = a.packed.is_some();
    let value_ty = match &shape {
        Shape::Single => Some(&f.ty),
        Shape::Optional(t) | Shape::Lazy(t) => Some(t),
        Shape::Repeated { elem, .. } => elem.as_ref(),
    };
    if let (Some(span), Shape::Single | Shape::Optional(_)) = (a.packed, &shape) {
        return Err(syn::Error::new(
            span,
            "`packed` applies to repeated fields only",
        ));
    }
    if let Some(t) = value_ty {
        shape::check_encoding(t, a.encoding(), packed)?;
    }
    let kind = FieldKind::Tagged {
        tag,
        encoding: a.encoding(),
        packed,
        shape,
    };
    Ok((kind, Some(tag_span)))
}

fn oneof_members(e: &syn::DataEnum) -> syn::Result<Vec<OneofMember>> {
    let mut out: Vec<OneofMember> = Vec::new();
    for v in &e.variants {
        let a = attr::field(&v.attrs)?;
        a.reject(
            &["packed", "repeated", "oneof", "skip"],
            "on a oneof member: members are single values",
        )?;
        let ty = match &v.fields {
            Fields::Unnamed(u) if u.unnamed.len() == 1 => u.unnamed[0].ty.clone(),
            _ => {
                return Err(syn::Error::new(
                    v.ident.span(),
                    "a oneof variant must hold exactly one value, like `Name(&'a str)`; for a protobuf enum make every variant a unit variant",
                ));
            }
        };
        let Some((tag, tag_span)) = a.tag else {
            return Err(syn::Error::new(
                v.ident.span(),
                format!(
                    "oneof member `{}` needs a field number: add `#[proto(tag = N)]`",
                    v.ident
                ),
            ));
        };
        if let Some(other) = out.iter().find(|m| m.tag == tag) {
            return Err(syn::Error::new(
                tag_span,
                format!(
                    "duplicate field number {tag}: already used by variant `{}`",
                    other.variant
                ),
            ));
        }
        match shape::classify(&ty, false)? {
            Shape::Single => {}
            _ => {
                return Err(syn::Error::new_spanned(
                    &ty,
                    "a oneof member cannot be optional or repeated (protobuf forbids it)",
                ));
            }
        }
        shape::check_encoding(&ty, a.encoding(), false)?;
        out.push(OneofMember {
            variant: v.ident.clone(),
            ty,
            tag,
            encoding: a.encoding(),
        });
    }
    Ok(out)
}

fn enum_variants(e: &syn::DataEnum) -> syn::Result<Vec<Ident>> {
    let mut out = Vec::new();
    for v in &e.variants {
        if let Some(a) = v.attrs.iter().find(|a| a.path().is_ident("proto")) {
            return Err(syn::Error::new_spanned(
                a,
                "a protobuf enum takes its numbers from the discriminants (`Name = 3`); remove `#[proto]`",
            ));
        }
        if let Some((_, expr)) = &v.discriminant {
            if let Some(n) = literal_value(expr) {
                if i128::from(i32::MIN) > n || n > i128::from(i32::MAX) {
                    return Err(syn::Error::new_spanned(
                        expr,
                        format!("enum value {n} does not fit in protobuf's int32"),
                    ));
                }
            }
        }
        out.push(v.ident.clone());
    }
    Ok(out)
}

/// The value of an integer literal discriminant, possibly negated.
fn literal_value(expr: &Expr) -> Option<i128> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<i128>().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => literal_value(&u.expr).map(|v| -v),
        Expr::Group(g) => literal_value(&g.expr),
        Expr::Paren(p) => literal_value(&p.expr),
        _ => None,
    }
}
