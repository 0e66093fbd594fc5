//! Code generation for `#[derive(ProtoWrite)]`.
//!
//! A message struct gets `ProtoWrite::write_fields`, a straight-line sequence
//! of appends on the caller's `Message` (nested messages open a child with
//! `begin_nested`; nothing is buffered), plus `ProtoEncode` so it can be a
//! field of another message. A oneof enum gets `ProtoOneofWrite`; a C-like
//! enum gets `ProtoEncode`/`ProtoPacked` as a varint enum value.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Ctx;
use super::model::{FieldKind, FieldModel, Model, OneofMember, Parsed};
use super::shape::{RepeatedKind, Shape};

/// Expands `#[derive(ProtoWrite)]` for a validated model.
pub fn expand(parsed: &Parsed<'_>) -> syn::Result<TokenStream> {
    let cx = Ctx::new(parsed);
    match &parsed.model {
        Model::Message(fields) => message(&cx, fields),
        Model::Oneof(members) => Ok(oneof(&cx, members)),
        Model::Enum(variants) => Ok(enumeration(&cx, variants)),
    }
}

fn message(cx: &Ctx<'_>, fields: &[FieldModel]) -> syn::Result<TokenStream> {
    let (pt, msg, root) = (cx.traits(), cx.message(), cx.root());
    let name = &cx.input.ident;
    let (impl_g, ty_g, where_c) = cx.input.generics.split_for_impl();
    let mut stmts = Vec::new();
    for f in fields {
        stmts.push(field_stmt(cx, f)?);
    }
    let tag_check = cx.tag_check(fields, quote!(#pt::ProtoOneofWrite));
    Ok(quote! {
        impl #impl_g #pt::ProtoWrite for #name #ty_g #where_c {
            fn write_fields(&self, msg: &mut #msg) {
                #(#stmts)*
            }
        }

        impl #impl_g #pt::ProtoEncode<#pt::encoding::Plain> for #name #ty_g #where_c {
            const WIRE_TYPE: #root::WireType = #root::WireType::LengthDelimited;

            #[inline]
            fn is_default(&self) -> bool {
                false
            }

            #[inline]
            fn encode_field(&self, msg: &mut #msg, id: u32) {
                #pt::write_message(self, msg, id)
            }
        }

        #tag_check
    })
}

fn field_stmt(cx: &Ctx<'_>, f: &FieldModel) -> syn::Result<TokenStream> {
    let pt = cx.traits();
    let m = &f.member;
    let span = f.ty.span();
    let (tag, encoding, packed, shape) = match &f.kind {
        FieldKind::Skip => return Ok(TokenStream::new()),
        FieldKind::Oneof(inner) => {
            return Ok(quote_spanned! {span=>
                if let ::core::option::Option::Some(value) = &self.#m {
                    <#inner as #pt::ProtoOneofWrite>::write_oneof(value, msg);
                }
            });
        }
        FieldKind::Tagged {
            tag,
            encoding,
            packed,
            shape,
        } => (*tag, *encoding, *packed, shape),
    };
    let enc = cx.encoding(encoding);
    let ty = &f.ty;
    Ok(match shape {
        Shape::Single => quote_spanned! {span=>
            if !<#ty as #pt::ProtoEncode<#enc>>::is_default(&self.#m) {
                <#ty as #pt::ProtoEncode<#enc>>::encode_field(&self.#m, msg, #tag);
            }
        },
        Shape::Optional(inner) => quote_spanned! {span=>
            if let ::core::option::Option::Some(value) = &self.#m {
                <#inner as #pt::ProtoEncode<#enc>>::encode_field(value, msg, #tag);
            }
        },
        Shape::Repeated { elem, kind } => {
            let values = match kind {
                RepeatedKind::Slice => quote!(self.#m),
                RepeatedKind::BoxSlice => quote!(&*self.#m),
                RepeatedKind::Vec | RepeatedKind::Array | RepeatedKind::Custom => quote!(&self.#m),
            };
            let elem = elem.as_ref().map_or_else(|| quote!(_), |e| quote!(#e));
            let helper = if packed {
                quote!(write_packed)
            } else {
                quote!(write_repeated)
            };
            quote_spanned! {span=>
                #pt::#helper::<#enc, #elem, _>(msg, #tag, #values);
            }
        }
        Shape::Lazy(_) => {
            return Err(syn::Error::new_spanned(
                &f.ty,
                "`Repeated<'a, T>` is a lazy decoding view and cannot be written; use Vec<T> or a slice for ProtoWrite",
            ));
        }
    })
}

fn oneof(cx: &Ctx<'_>, members: &[OneofMember]) -> TokenStream {
    let (pt, msg) = (cx.traits(), cx.message());
    let name = &cx.input.ident;
    let (impl_g, ty_g, where_c) = cx.input.generics.split_for_impl();
    let tags = members.iter().map(|m| m.tag);
    let arms = members.iter().map(|m| {
        let (variant, ty, tag) = (&m.variant, &m.ty, m.tag);
        let enc = cx.encoding(m.encoding);
        quote_spanned! {ty.span()=>
            Self::#variant(value) => <#ty as #pt::ProtoEncode<#enc>>::encode_field(value, msg, #tag),
        }
    });
    quote! {
        impl #impl_g #pt::ProtoOneofWrite for #name #ty_g #where_c {
            const TAGS: &'static [u32] = &[#(#tags),*];

            fn write_oneof(&self, msg: &mut #msg) {
                match self {
                    #(#arms)*
                }
            }
        }
    }
}

fn enumeration(cx: &Ctx<'_>, variants: &[syn::Ident]) -> TokenStream {
    let (pt, msg, root) = (cx.traits(), cx.message(), cx.root());
    let name = &cx.input.ident;
    let Some(first) = variants.first() else {
        return TokenStream::new();
    };
    let arms = variants
        .iter()
        .map(|v| quote!(Self::#v => (Self::#v as i32),));
    quote! {
        impl #pt::ProtoEncode<#pt::encoding::Plain> for #name {
            const WIRE_TYPE: #root::WireType = #root::WireType::Varint;

            #[inline]
            fn is_default(&self) -> bool {
                ::core::matches!(self, Self::#first)
            }

            #[inline]
            fn encode_field(&self, msg: &mut #msg, id: u32) {
                msg.append_varint(id, #pt::ProtoPacked::<#pt::encoding::Plain>::to_packed_raw(self));
            }
        }

        impl #pt::ProtoPacked<#pt::encoding::Plain> for #name {
            #[inline]
            fn to_packed_raw(&self) -> u64 {
                let number: i32 = match self {
                    #(#arms)*
                };
                i64::from(number) as u64
            }
        }
    }
}
