//! Parsing of `#[proto(...)]` attributes on containers, fields and variants.
//!
//! Every key is checked here, with the error on the token that is wrong: a
//! field number outside 1..=2^29−1 points at the number, an unknown key at
//! the key, a repeated key at its second occurrence.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitInt, LitStr, Path};

/// Largest protobuf field number (2^29 − 1).
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;
/// Field numbers protobuf reserves for its own implementation.
const RESERVED: core::ops::RangeInclusive<u64> = 19000..=19999;

/// How a value's wire encoding was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `int32`, `uint64`, `string`, messages, ...
    Plain,
    /// `#[proto(sint)]`: zigzag varints.
    Sint,
    /// `#[proto(fixed)]`: fixed-width little-endian.
    Fixed,
}

impl Encoding {
    /// Name of the marker type in `protozero::__private::encoding`.
    pub fn marker(self) -> &'static str {
        match self {
            Encoding::Plain => "Plain",
            Encoding::Sint => "Sint",
            Encoding::Fixed => "Fixed",
        }
    }
}

/// Options on the deriving type itself.
pub struct ContainerAttrs {
    /// Path of the runtime crate (`#[proto(crate = "...")]`), `::protozero` by default.
    pub krate: Path,
}

/// Options on one field or oneof variant. Spans point at the option's key.
#[derive(Default)]
pub struct FieldAttrs {
    /// Field number and the span of its literal.
    pub tag: Option<(u32, Span)>,
    /// `sint` or `fixed`, with the key's span.
    pub encoding: Option<(Encoding, Span)>,
    pub packed: Option<Span>,
    pub repeated: Option<Span>,
    pub oneof: Option<Span>,
    pub skip: Option<Span>,
}

impl FieldAttrs {
    /// The chosen encoding (plain unless `sint`/`fixed` was given).
    pub fn encoding(&self) -> Encoding {
        self.encoding.map_or(Encoding::Plain, |(e, _)| e)
    }

    /// Errors for every option that is set among `forbidden`, naming `what`.
    pub fn reject(&self, forbidden: &[&str], what: &str) -> syn::Result<()> {
        for key in forbidden {
            let span = match *key {
                "tag" => self.tag.map(|(_, s)| s),
                "sint" | "fixed" => self
                    .encoding
                    .filter(|(e, _)| e.marker().eq_ignore_ascii_case(key))
                    .map(|(_, s)| s),
                "packed" => self.packed,
                "repeated" => self.repeated,
                "oneof" => self.oneof,
                "skip" => self.skip,
                _ => None,
            };
            if let Some(span) = span {
                return Err(syn::Error::new(
                    span,
                    format!("`{key}` is not allowed {what}"),
                ));
            }
        }
        Ok(())
    }
}

fn is_proto(attr: &Attribute) -> bool {
    attr.path().is_ident("proto")
}

/// Reads `#[proto(crate = "path")]` from the container's attributes.
pub fn container(attrs: &[Attribute]) -> syn::Result<ContainerAttrs> {
    let mut krate: Option<Path> = None;
    for attr in attrs.iter().filter(|a| is_proto(a)) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                if krate.is_some() {
                    return Err(meta.error("`crate` given twice"));
                }
                let lit: LitStr = meta.value()?.parse()?;
                krate = Some(lit.parse()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown container option; the only one is `crate = \"path::to::protozero\"`",
                ))
            }
        })?;
    }
    Ok(ContainerAttrs {
        krate: krate.unwrap_or_else(|| syn::parse_quote!(::protozero)),
    })
}

/// Reads the `#[proto(...)]` options of a field or variant.
pub fn field(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| is_proto(a)) {
        attr.parse_nested_meta(|meta| {
            let key_span = meta.path.span();
            let twice = || syn::Error::new(key_span, "option given twice");
            let flag = |slot: &mut Option<Span>| {
                if slot.replace(key_span).is_some() {
                    Err(twice())
                } else {
                    Ok(())
                }
            };
            if meta.path.is_ident("tag") {
                let lit: LitInt = meta.value()?.parse()?;
                let tag = field_number(&lit)?;
                if out.tag.replace((tag, lit.span())).is_some() {
                    return Err(syn::Error::new(lit.span(), "`tag` given twice"));
                }
                Ok(())
            } else if meta.path.is_ident("sint") || meta.path.is_ident("fixed") {
                let enc = if meta.path.is_ident("sint") {
                    Encoding::Sint
                } else {
                    Encoding::Fixed
                };
                if out.encoding.replace((enc, key_span)).is_some() {
                    return Err(syn::Error::new(
                        key_span,
                        "choose one of `sint` and `fixed`, once",
                    ));
                }
                Ok(())
            } else if meta.path.is_ident("packed") {
                flag(&mut out.packed)
            } else if meta.path.is_ident("repeated") {
                flag(&mut out.repeated)
            } else if meta.path.is_ident("oneof") {
                flag(&mut out.oneof)
            } else if meta.path.is_ident("skip") {
                flag(&mut out.skip)
            } else {
                Err(meta.error(
                    "unknown option; expected one of `tag = N`, `sint`, `fixed`, `packed`, `repeated`, `oneof`, `skip`",
                ))
            }
        })?;
    }
    Ok(out)
}

/// Validates a field number literal.
fn field_number(lit: &LitInt) -> syn::Result<u32> {
    let n: u64 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("field number must be an integer in 1..={MAX_FIELD_NUMBER}"),
        )
    })?;
    if n == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "field number 0 is not allowed: protobuf field numbers start at 1",
        ));
    }
    if n > MAX_FIELD_NUMBER {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "field number {n} is larger than the protobuf maximum {MAX_FIELD_NUMBER} (2^29 - 1)"
            ),
        ));
    }
    if RESERVED.contains(&n) {
        return Err(syn::Error::new(
            lit.span(),
            "field numbers 19000 to 19999 are reserved by protobuf",
        ));
    }
    // `n` ≤ 2^29 − 1, so it fits.
    Ok(n as u32)
}
