//! The derives' expansion functions: `syn::DeriveInput` in, `TokenStream`
//! out, independent of `proc_macro` so tests can call them directly and
//! snapshot the pretty-printed output.
//!
//! [`model`] validates the input once; [`write`] and [`read`] generate code
//! from the validated model; [`attr`] and [`shape`] are their parsers.

mod attr;
mod model;
mod read;
mod shape;
mod write;

#[cfg(test)]
mod snapshot_tests;

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{DeriveInput, Lifetime, Type};

use attr::Encoding;
use model::{FieldKind, FieldModel, Parsed};

/// Expands `#[derive(ProtoWrite)]`.
pub fn derive_write(input: &DeriveInput) -> syn::Result<TokenStream> {
    write::expand(&model::parse(input)?)
}

/// Expands `#[derive(ProtoRead)]`.
pub fn derive_read(input: &DeriveInput) -> syn::Result<TokenStream> {
    read::expand(&model::parse(input)?)
}

/// What both generators need: the input and the runtime crate's path.
struct Ctx<'i> {
    input: &'i DeriveInput,
    krate: &'i syn::Path,
}

impl<'i> Ctx<'i> {
    fn new(parsed: &'i Parsed<'i>) -> Self {
        Ctx {
            input: parsed.input,
            krate: &parsed.attrs.krate,
        }
    }

    /// `::protozero`.
    fn root(&self) -> TokenStream {
        let krate = self.krate;
        quote!(#krate)
    }

    /// `::protozero::__private` (the support items derived code uses).
    fn traits(&self) -> TokenStream {
        let krate = self.krate;
        quote!(#krate::__private)
    }

    /// `::protozero::Message<'_>`.
    fn message(&self) -> TokenStream {
        let krate = self.krate;
        quote!(#krate::Message<'_>)
    }

    /// The marker type of an encoding.
    fn encoding(&self, e: Encoding) -> TokenStream {
        let krate = self.krate;
        let marker = format_ident!("{}", e.marker());
        quote!(#krate::__private::encoding::#marker)
    }

    /// One `const` per oneof field that fails to compile when the oneof's
    /// field numbers collide with the message's own or an earlier oneof's
    /// (the macro cannot see the enum's numbers; the compiler can). The error
    /// points at the oneof field's type. Empty without oneofs.
    fn tag_check(&self, fields: &[FieldModel], oneof_trait: TokenStream) -> TokenStream {
        let pt = self.traits();
        let own: Vec<u32> = fields
            .iter()
            .filter_map(|f| match f.kind {
                FieldKind::Tagged { tag, .. } => Some(tag),
                _ => None,
            })
            .collect();
        let mut earlier: Vec<TokenStream> = Vec::new();
        let mut checks = TokenStream::new();
        for f in fields {
            let FieldKind::Oneof(inner) = &f.kind else {
                continue;
            };
            let ty = static_lifetimes(inner);
            let tags = quote!(<#ty as #oneof_trait>::TAGS);
            let check = quote! {
                const _: () = match #pt::tag_clash(&[#(#own),*], &[#(#earlier),*], #tags) {
                    #pt::TagClash::None => {}
                    #pt::TagClash::WithField => ::core::panic!(
                        "protozero: a member of this oneof reuses the field number of a field of the message"
                    ),
                    #pt::TagClash::WithOneof => ::core::panic!(
                        "protozero: a member of this oneof reuses a field number of another oneof of the message"
                    ),
                };
            };
            checks.extend(respan(check, inner.span()));
            earlier.push(tags);
        }
        checks
    }
}

/// `tokens` with every span set to `span`, so that compiler errors about
/// them (not only about the tokens we create) point at user code.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// `ty` with every lifetime replaced by `'static`, for use in a `const`.
fn static_lifetimes(ty: &Type) -> Type {
    struct Static;
    impl VisitMut for Static {
        fn visit_lifetime_mut(&mut self, lt: &mut Lifetime) {
            *lt = Lifetime::new("'static", lt.span());
        }
    }
    let mut ty = ty.clone();
    Static.visit_type_mut(&mut ty);
    ty
}
