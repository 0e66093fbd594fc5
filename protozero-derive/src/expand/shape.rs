//! Classifies a field's Rust type into the protobuf shape it stands for
//! (singular, optional, repeated, lazily repeated, oneof) and rejects the
//! types protobuf cannot express, with the error on the offending type.
//!
//! Only the outer shape is decided syntactically; whether the value type
//! itself can be written or read is left to the `ProtoEncode`/`ProtoDecode`
//! trait bounds, whose errors the generated code places on the same type.

use syn::{GenericArgument, PathArguments, Type, TypePath};

use super::attr::Encoding;

/// What kind of container a repeated field is, which decides how the
/// generated code iterates it and whether it can be decoded into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatedKind {
    /// `Vec<T>`.
    Vec,
    /// `&[T]`.
    Slice,
    /// `[T; N]`.
    Array,
    /// `Box<[T]>`.
    BoxSlice,
    /// Any other collection, marked `#[proto(repeated)]`.
    Custom,
}

/// The protobuf shape of a field.
#[derive(Clone)]
pub enum Shape {
    /// One value, omitted when it is the default.
    Single,
    /// `Option<T>`: explicit presence.
    Optional(Type),
    /// A repeated field with its element type (unknown for custom collections).
    Repeated {
        elem: Option<Type>,
        kind: RepeatedKind,
    },
    /// `protozero::Repeated<'a, T>`: decoded on demand.
    Lazy(Type),
}

/// Strips parentheses and invisible groups around a type.
fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Paren(p) => peel(&p.elem),
        Type::Group(g) => peel(&g.elem),
        _ => ty,
    }
}

/// The last path segment's name and its angle-bracketed type arguments, for
/// a path type without a qualified self.
fn path_parts(ty: &Type) -> Option<(String, Vec<&Type>)> {
    let Type::Path(TypePath { qself: None, path }) = peel(ty) else {
        return None;
    };
    let last = path.segments.last()?;
    let args = match &last.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((last.ident.to_string(), args))
}

/// The identifier of a plain one-segment path type (`u32`, `String`).
pub fn simple_ident(ty: &Type) -> Option<String> {
    let Type::Path(TypePath { qself: None, path }) = peel(ty) else {
        return None;
    };
    path.get_ident().map(ToString::to_string)
}

fn is_u8(ty: &Type) -> bool {
    simple_ident(ty).as_deref() == Some("u8")
}

/// Whether the type is one that is written as protobuf `bytes`.
fn is_bytes(ty: &Type) -> bool {
    match peel(ty) {
        Type::Reference(r) => matches!(peel(&r.elem), Type::Slice(s) if is_u8(&s.elem)),
        Type::Array(a) => is_u8(&a.elem),
        _ => match path_parts(ty) {
            Some((name, args)) if name == "Vec" && args.len() == 1 => is_u8(args[0]),
            Some((name, args)) if (name == "Box" || name == "Cow") && args.len() == 1 => {
                matches!(peel(args[0]), Type::Slice(s) if is_u8(&s.elem))
            }
            _ => false,
        },
    }
}

/// Whether the type is written as protobuf `string`.
fn is_string(ty: &Type) -> bool {
    match peel(ty) {
        Type::Reference(r) => simple_ident(&r.elem).as_deref() == Some("str"),
        _ => match path_parts(ty) {
            Some((name, args)) if name == "String" && args.is_empty() => true,
            Some((name, args)) if (name == "Box" || name == "Cow") && args.len() == 1 => {
                simple_ident(args[0]).as_deref() == Some("str")
            }
            _ => false,
        },
    }
}

fn err<T>(ty: &Type, msg: impl core::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new_spanned(ty, msg))
}

/// Classifies a tagged field's type. `forced_repeated` is `#[proto(repeated)]`.
pub fn classify(ty: &Type, forced_repeated: bool) -> syn::Result<Shape> {
    if is_bytes(ty) || is_string(ty) {
        if forced_repeated {
            return err(
                ty,
                "`repeated` on a string or bytes field; use Vec<String> or Vec<&[u8]> for a repeated field",
            );
        }
        return Ok(Shape::Single);
    }
    let shape = match peel(ty) {
        Type::Reference(r) => match peel(&r.elem) {
            Type::Slice(s) => Shape::Repeated {
                elem: Some((*s.elem).clone()),
                kind: RepeatedKind::Slice,
            },
            _ => Shape::Single,
        },
        Type::Array(a) => Shape::Repeated {
            elem: Some((*a.elem).clone()),
            kind: RepeatedKind::Array,
        },
        _ => match path_parts(ty) {
            Some((name, args)) if name == "Option" && args.len() == 1 => {
                if forced_repeated {
                    return err(
                        ty,
                        "`repeated` does not apply to `Option`; an empty collection already means absent",
                    );
                }
                check_value(args[0], "an `Option`")?;
                Shape::Optional(args[0].clone())
            }
            Some((name, args)) if name == "Vec" && args.len() == 1 => Shape::Repeated {
                elem: Some(args[0].clone()),
                kind: RepeatedKind::Vec,
            },
            Some((name, args)) if name == "Box" && args.len() == 1 => match peel(args[0]) {
                Type::Slice(s) => Shape::Repeated {
                    elem: Some((*s.elem).clone()),
                    kind: RepeatedKind::BoxSlice,
                },
                _ => Shape::Single,
            },
            Some((name, args)) if name == "Repeated" && args.len() == 1 => {
                Shape::Lazy(args[0].clone())
            }
            _ if forced_repeated => Shape::Repeated {
                elem: None,
                kind: RepeatedKind::Custom,
            },
            _ => Shape::Single,
        },
    };
    match &shape {
        Shape::Repeated {
            elem: Some(elem), ..
        }
        | Shape::Lazy(elem) => check_value(elem, "a repeated field")?,
        Shape::Single => check_value(ty, "a field")?,
        _ => {}
    }
    Ok(shape)
}

/// Rejects types that cannot be the value of a field (or of an element).
pub fn check_value(ty: &Type, position: &str) -> syn::Result<()> {
    if is_bytes(ty) || is_string(ty) {
        return Ok(());
    }
    match peel(ty) {
        Type::Tuple(t) if t.elems.is_empty() => {
            return err(
                ty,
                "`()` cannot be a field; an empty message is a unit struct deriving ProtoWrite/ProtoRead",
            );
        }
        Type::Tuple(_) => {
            return err(
                ty,
                "tuples are not supported; use a struct deriving ProtoWrite/ProtoRead",
            );
        }
        Type::Reference(r) if r.mutability.is_some() => {
            return err(ty, "`&mut` references are not supported");
        }
        Type::Reference(r) => return check_value(&r.elem, position),
        Type::Array(_) | Type::Slice(_) => {
            return err(
                ty,
                format!(
                    "{position} cannot hold a list: repeated of repeated is not supported; wrap the inner list in a message"
                ),
            );
        }
        Type::Path(_) => {}
        _ => return err(ty, "unsupported field type"),
    }
    if let Some(name) = simple_ident(ty) {
        let hint = match name.as_str() {
            "u8" | "u16" => Some("protobuf has no 8- or 16-bit integers; use u32"),
            "i8" | "i16" => Some("protobuf has no 8- or 16-bit integers; use i32"),
            "usize" => Some("`usize` has no fixed width; use u64"),
            "isize" => Some("`isize` has no fixed width; use i64"),
            "u128" | "i128" => {
                Some("protobuf has no 128-bit integers; use two 64-bit fields or bytes")
            }
            "char" => Some("protobuf has no char type; use u32 or a string"),
            "f16" | "f128" => Some("protobuf floats are f32 (float) or f64 (double)"),
            _ => None,
        };
        if let Some(hint) = hint {
            return err(ty, format!("unsupported field type `{name}`: {hint}"));
        }
    }
    match path_parts(ty) {
        Some((name, _)) if matches!(name.as_str(), "HashMap" | "BTreeMap" | "IndexMap") => err(
            ty,
            "map fields are not supported; use a repeated message of key/value entries",
        ),
        Some((name, _)) if name == "Option" => {
            err(ty, format!("{position} cannot hold an `Option`"))
        }
        Some((name, args)) if (name == "Vec" && args.len() == 1) || name == "Repeated" => err(
            ty,
            format!(
                "{position} cannot hold a list: repeated of repeated is not supported; wrap the inner list in a message"
            ),
        ),
        Some((name, args)) if name == "Box" && args.len() == 1 => check_value(args[0], position),
        _ => Ok(()),
    }
}

/// The type the encoding attribute applies to, with references and boxes removed.
fn scalar_of(ty: &Type) -> &Type {
    match peel(ty) {
        Type::Reference(r) => scalar_of(&r.elem),
        _ => ty,
    }
}

/// Checks `sint`/`fixed`/`packed` against the value type when it is a
/// built-in one (user types are checked by the trait bounds instead).
pub fn check_encoding(value_ty: &Type, encoding: Encoding, packed: bool) -> syn::Result<()> {
    let scalar = scalar_of(value_ty);
    let text = is_string(scalar) || is_bytes(scalar);
    let name = simple_ident(scalar).unwrap_or_default();
    let builtin = text
        || matches!(
            name.as_str(),
            "u32" | "u64" | "i32" | "i64" | "bool" | "f32" | "f64" | "str"
        );
    if packed && text {
        return err(
            value_ty,
            "strings and bytes cannot be packed; remove `packed`",
        );
    }
    if !builtin {
        return Ok(());
    }
    match encoding {
        Encoding::Plain => Ok(()),
        Encoding::Sint if matches!(name.as_str(), "i32" | "i64") => Ok(()),
        Encoding::Sint => err(
            value_ty,
            "`sint` applies to i32 and i64 only (sint32/sint64)",
        ),
        Encoding::Fixed if matches!(name.as_str(), "u32" | "u64" | "i32" | "i64") => Ok(()),
        Encoding::Fixed if matches!(name.as_str(), "f32" | "f64") => err(
            value_ty,
            "f32 and f64 are always fixed-width; remove `fixed`",
        ),
        Encoding::Fixed => err(value_ty, "`fixed` applies to u32, u64, i32 and i64 only"),
    }
}
