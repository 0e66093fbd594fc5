//! Code generation for `#[derive(ProtoRead)]`.
//!
//! A message struct gets `ProtoRead`: `empty()` plus a single pass over the
//! input with `protozero::Decoder` that dispatches on the field number —
//! scalars last-one-wins, messages merge, repeated fields append or (for
//! `Repeated<'a, T>`) only remember where they start, oneofs go to their
//! enum, anything else is skipped. Errors get the field's name and number
//! added on their way out. It also gets `ProtoDecode` so it can be a field.
//! A oneof enum gets `ProtoOneofRead`; a C-like enum gets `ProtoDecode`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericParam, Lifetime, LifetimeParam};

use super::Ctx;
use super::model::{FieldKind, FieldModel, Model, OneofMember, Parsed};
use super::shape::{RepeatedKind, Shape};

/// Expands `#[derive(ProtoRead)]` for a validated model.
pub fn expand(parsed: &Parsed<'_>) -> syn::Result<TokenStream> {
    let cx = Ctx::new(parsed);
    let mut generics = cx.input.generics.clone();
    let mut lifetimes = generics.lifetimes();
    let lt: Lifetime = match (lifetimes.next(), lifetimes.next()) {
        (None, _) => {
            let lt: Lifetime = syn::parse_quote!('__pz);
            generics
                .params
                .insert(0, GenericParam::Lifetime(LifetimeParam::new(lt.clone())));
            lt
        }
        (Some(one), None) => one.lifetime.clone(),
        (Some(_), Some(second)) => {
            return Err(syn::Error::new(
                second.lifetime.span(),
                "ProtoRead supports at most one lifetime: the lifetime of the input bytes",
            ));
        }
    };
    let (impl_g, _, where_c) = generics.split_for_impl();
    let (_, ty_g, _) = cx.input.generics.split_for_impl();
    let header = Header {
        impl_g: quote!(#impl_g),
        ty: {
            let name = &cx.input.ident;
            quote!(#name #ty_g)
        },
        where_c: quote!(#where_c),
        lt,
    };
    match &parsed.model {
        Model::Message(fields) => message(&cx, &header, fields),
        Model::Oneof(members) => Ok(oneof(&cx, &header, members)),
        Model::Enum(variants) => Ok(enumeration(&cx, &header, variants)),
    }
}

/// The pieces of an `impl<'a> Trait<'a> for Type<'a> where ...` header.
struct Header {
    impl_g: TokenStream,
    ty: TokenStream,
    where_c: TokenStream,
    lt: Lifetime,
}

fn message(cx: &Ctx<'_>, h: &Header, fields: &[FieldModel]) -> syn::Result<TokenStream> {
    let (pt, root) = (cx.traits(), cx.root());
    let Header {
        impl_g,
        ty,
        where_c,
        lt,
    } = h;
    let mut inits = Vec::new();
    let mut arms = Vec::new();
    let mut oneofs = Vec::new();
    let mut seen_flags = Vec::new();
    for f in fields {
        let m = &f.member;
        let init = match &f.kind {
            FieldKind::Skip => quote!(::core::default::Default::default()),
            FieldKind::Oneof(inner) => {
                oneofs.push(quote_spanned! {f.ty.span()=>
                    if <#inner as #pt::ProtoOneofRead<#lt>>::merge_oneof(&mut self.#m, &field, depth)? {
                        continue;
                    }
                });
                quote!(::core::option::Option::None)
            }
            FieldKind::Tagged {
                tag,
                encoding,
                shape,
                ..
            } => {
                let (arm, init) = tagged(cx, h, f, *tag, cx.encoding(*encoding), shape)?;
                if let Shape::Lazy(_) = shape {
                    seen_flags.push(seen_flag(f));
                }
                arms.push(arm);
                init
            }
        };
        inits.push(quote!(#m: #init));
    }
    let offset = if seen_flags.is_empty() {
        quote!()
    } else {
        quote!(let offset = decoder.offset();)
    };
    let tag_check = cx.tag_check(fields, quote!(#pt::ProtoOneofRead<'static>));
    Ok(quote! {
        impl #impl_g #pt::ProtoRead<#lt> for #ty #where_c {
            fn empty() -> Self {
                Self {
                    #(#inits,)*
                }
            }

            fn merge_fields(
                &mut self,
                buf: &#lt [u8],
                depth: u32,
            ) -> ::core::result::Result<(), #pt::ReadError> {
                let _ = depth;
                let mut decoder = #root::Decoder::new(buf);
                #(let mut #seen_flags = false;)*
                loop {
                    #offset
                    let field = match decoder.read_field() {
                        ::core::option::Option::None => return ::core::result::Result::Ok(()),
                        ::core::option::Option::Some(::core::result::Result::Ok(field)) => field,
                        ::core::option::Option::Some(::core::result::Result::Err(e)) => {
                            return ::core::result::Result::Err(e.into());
                        }
                    };
                    match field.id {
                        #(#arms)*
                        _ => {
                            #(#oneofs)*
                        }
                    }
                }
            }
        }

        impl #impl_g #pt::ProtoDecode<#lt, #pt::encoding::Plain> for #ty #where_c {
            const WIRE_TYPE: #root::WireType = #root::WireType::LengthDelimited;

            #[inline]
            fn default_value() -> Self {
                <Self as #pt::ProtoRead<#lt>>::empty()
            }

            #[inline]
            fn decode_value(
                field: &#root::Field<#lt>,
                depth: u32,
            ) -> ::core::result::Result<::core::option::Option<Self>, #pt::ReadError> {
                #pt::decode_message(field, depth)
            }

            #[inline]
            fn merge_value(
                &mut self,
                field: &#root::Field<#lt>,
                depth: u32,
            ) -> ::core::result::Result<(), #pt::ReadError> {
                #pt::merge_message(self, field, depth)
            }
        }

        #tag_check
    })
}

fn seen_flag(f: &FieldModel) -> syn::Ident {
    format_ident!("seen_{}", f.name)
}

/// The match arm and the `empty()` initializer of a numbered field.
fn tagged(
    cx: &Ctx<'_>,
    h: &Header,
    f: &FieldModel,
    tag: u32,
    enc: TokenStream,
    shape: &Shape,
) -> syn::Result<(TokenStream, TokenStream)> {
    let (pt, root) = (cx.traits(), cx.root());
    let (m, ty, name, lt) = (&f.member, &f.ty, &f.name, &h.lt);
    let span = ty.span();
    let (merge, init) = match shape {
        Shape::Single => (
            quote_spanned! {span=>
                <#ty as #pt::ProtoDecode<#lt, #enc>>::merge_value(&mut self.#m, &field, depth)
            },
            quote_spanned! {span=> <#ty as #pt::ProtoDecode<#lt, #enc>>::default_value() },
        ),
        Shape::Optional(inner) => (
            quote_spanned! {span=>
                #pt::merge_option::<#enc, #inner>(&mut self.#m, &field, depth)
            },
            quote!(::core::option::Option::None),
        ),
        Shape::Repeated { elem, kind } => {
            let elem = match (kind, elem) {
                (RepeatedKind::Vec, Some(elem)) => quote!(#elem),
                (RepeatedKind::Custom, _) => quote!(<#ty as ::core::iter::IntoIterator>::Item),
                _ => {
                    return Err(syn::Error::new_spanned(
                        ty,
                        "slices, arrays and boxed slices cannot be decoded into; use Vec<T> or protozero::Repeated<'a, T> for ProtoRead",
                    ));
                }
            };
            (
                quote_spanned! {span=>
                    #pt::merge_repeated::<#enc, #elem, _>(&mut self.#m, &field, depth)
                },
                quote!(::core::default::Default::default()),
            )
        }
        Shape::Lazy(_) => {
            let seen = seen_flag(f);
            (
                quote_spanned! {span=>
                    self.#m.note::<#enc>(buf, offset, &field, depth, &mut #seen)
                },
                quote!(#root::Repeated::new::<#enc>(&#pt::PathSegment { name: #name, id: #tag })),
            )
        }
    };
    let arm = quote! {
        #tag => #merge.map_err(|e| e.in_field(&#pt::PathSegment { name: #name, id: #tag }))?,
    };
    Ok((arm, init))
}

fn oneof(cx: &Ctx<'_>, h: &Header, members: &[OneofMember]) -> TokenStream {
    let (pt, root) = (cx.traits(), cx.root());
    let Header {
        impl_g,
        ty: self_ty,
        where_c,
        lt,
    } = h;
    let tags = members.iter().map(|m| m.tag);
    let arms = members.iter().map(|m| {
        let (variant, ty, tag) = (&m.variant, &m.ty, m.tag);
        let name = variant.to_string();
        let enc = cx.encoding(m.encoding);
        let decode = quote_spanned!(ty.span()=> <#ty as #pt::ProtoDecode<#lt, #enc>>);
        let segment = quote!(&#pt::PathSegment { name: #name, id: #tag });
        quote! {
            #tag => {
                if let ::core::option::Option::Some(Self::#variant(value)) = slot {
                    #decode::merge_value(value, field, depth)
                        .map_err(|e| e.in_field(#segment))?;
                } else if let ::core::option::Option::Some(value) =
                    #decode::decode_value(field, depth).map_err(|e| e.in_field(#segment))?
                {
                    *slot = ::core::option::Option::Some(Self::#variant(value));
                }
                ::core::result::Result::Ok(true)
            }
        }
    });
    quote! {
        impl #impl_g #pt::ProtoOneofRead<#lt> for #self_ty #where_c {
            const TAGS: &'static [u32] = &[#(#tags),*];

            fn merge_oneof(
                slot: &mut ::core::option::Option<Self>,
                field: &#root::Field<#lt>,
                depth: u32,
            ) -> ::core::result::Result<bool, #pt::ReadError> {
                match field.id {
                    #(#arms)*
                    _ => ::core::result::Result::Ok(false),
                }
            }
        }
    }
}

fn enumeration(cx: &Ctx<'_>, h: &Header, variants: &[syn::Ident]) -> TokenStream {
    let (pt, root) = (cx.traits(), cx.root());
    let Header {
        impl_g,
        ty,
        where_c,
        lt,
    } = h;
    let Some(first) = variants.first() else {
        return TokenStream::new();
    };
    let checks = variants.iter().map(|v| {
        quote! {
            if number == Self::#v as i32 {
                return ::core::option::Option::Some(Self::#v);
            }
        }
    });
    quote! {
        impl #impl_g #pt::ProtoDecode<#lt, #pt::encoding::Plain> for #ty #where_c {
            const WIRE_TYPE: #root::WireType = #root::WireType::Varint;
            const PACKABLE: bool = true;

            #[inline]
            fn default_value() -> Self {
                Self::#first
            }

            #[inline]
            fn decode_value(
                field: &#root::Field<#lt>,
                _depth: u32,
            ) -> ::core::result::Result<::core::option::Option<Self>, #pt::ReadError> {
                ::core::result::Result::Ok(
                    <Self as #pt::ProtoDecode<#lt, #pt::encoding::Plain>>::from_packed_raw(
                        field.as_varint()?,
                    ),
                )
            }

            fn from_packed_raw(raw: u64) -> ::core::option::Option<Self> {
                // int32 on the wire: the low 32 bits are the value.
                let number = raw as i32;
                #(#checks)*
                ::core::option::Option::None
            }
        }
    }
}
