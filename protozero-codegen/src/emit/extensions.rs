//! Emits `extend` fields as traits on the extended message's writer and
//! decoder, so `use`-ing the trait adds typed setters and accessors:
//!
//! ```text
//! extend Foo { optional uint32 bar = 1000; }   // in file baz.proto
//! → pub trait BazFooExt<'w>: MessageWriter<'w> { fn set_bar(&mut self, v: u32) -> &mut Self }
//!   pub trait BazFooDecoderExt<'a> { fn bar(&self) -> Option<u32>; ... }
//! ```
//!
//! Writer methods are default methods over `MessageWriter::message`, so one
//! blanket-free `impl` per extended writer suffices; decoder methods read the
//! extended decoder's bytes through a `TypedDecoder`. The method bodies are the same ones
//! the per-message emitters produce, turned into trait items with `syn`.
//! Inherent methods of the extended types win over same-named extension
//! methods (call those as `Trait::method(&x)`).
//!
//! Extensions of a message-set message (`message_set_wire_format`) travel as
//! `Item` groups (field 1) holding the extension number (`type_id`, field 2)
//! and the encoded message (field 3); for those the writer trait offers
//! `set_x_raw(encoded)` and the decoder trait `x()` / `x_bytes()`, which
//! find the item with the extension's number.

use proc_macro2::TokenStream;
use quote::quote;

use super::Ctx;
use super::access::Access;
use super::decoder::field_accessors;
use super::fields::plan_fields;
use super::writer::field_methods;
use crate::error::CodegenError;
use crate::model::{ExtensionDef, MessageDef};
use crate::names::ident_in;
use crate::resolve::{extension_traits, relative_path};

/// The extension traits of one scope (a file's package module, or a
/// message's module), emitted from module `module`.
pub(crate) fn emit_extensions(
    ctx: &Ctx<'_>,
    module: &[String],
    exts: &[ExtensionDef],
    file_stem: Option<&str>,
) -> Result<TokenStream, CodegenError> {
    let mut out = TokenStream::new();
    for (extendee, w_name, d_name, fields) in extension_traits(exts, file_stem) {
        let construct = format!("extensions of {extendee}");
        let sym = ctx.symbols.get(&extendee, &ctx.file.name, &construct)?;
        let file = ctx.file.name.as_str();
        let writer = relative_path(file, module, &sym.module, &sym.ident)?;
        let decoder = relative_path(file, module, &sym.module, &format!("{}Decoder", sym.ident))?;
        let pseudo = MessageDef {
            name: extendee.rsplit('.').next().unwrap_or(&extendee).to_owned(),
            full_name: extendee.clone(),
            fields: fields.iter().map(|e| e.field.clone()).collect(),
            oneofs: Vec::new(),
            messages: Vec::new(),
            enums: Vec::new(),
            map_entry: false,
            message_set: false,
            extensions: Vec::new(),
        };
        let plans = plan_fields(ctx, module, &pseudo)?;
        if sym.message_set {
            out.extend(message_set_traits(
                &pseudo, &plans, &w_name, &d_name, &writer, &decoder, ctx,
            )?);
            continue;
        }
        let w_ident = ident_in(file, &w_name)?;
        let d_ident = ident_in(file, &d_name)?;
        let recv = quote!(::protozero::MessageWriter::message(self));
        let consts = plans.iter().map(|p| {
            let k = &p.konst;
            let n = proc_macro2::Literal::u32_unsuffixed(p.def.number);
            let d = format!("Field number of extension `{}`.", p.def.name);
            quote! { #[doc = #d] const #k: u32 = #n; }
        });
        let w_items = plans
            .iter()
            .map(|p| trait_defaults(field_methods(&pseudo, p, &recv), &ctx.file.name))
            .collect::<Result<Vec<_>, _>>()?;
        // Extensions have no slots in the extended decoder: each accessor
        // scans the message's bytes (a one-entry table sends every id to
        // the scan).
        let table = if ctx.groups {
            quote!(::protozero::TypedDecoder::<'a, 1>::with_groups(
                self.raw_bytes()
            ))
        } else {
            quote!(::protozero::TypedDecoder::<'a, 1>::new(self.raw_bytes()))
        };
        let access = Access::Table { dec: table };
        let (d_decls, d_impls): (Vec<_>, Vec<_>) = plans
            .iter()
            .map(|p| split_decls(field_accessors(&pseudo, p, &access, None), &ctx.file.name))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .unzip();
        let w_doc = format!(
            "Setters for the extensions of `{extendee}` declared in `{}`; implemented by its writer.",
            ctx.file.name
        );
        let d_doc = format!(
            "Accessors for the extensions of `{extendee}` declared in `{}`; implemented by its decoder.",
            ctx.file.name
        );
        out.extend(quote! {
            #[doc = #w_doc]
            pub trait #w_ident<'w>: ::protozero::MessageWriter<'w> {
                #(#consts)*
                #(#w_items)*
            }

            impl<'w> #w_ident<'w> for #writer<'w> {}

            #[doc = #d_doc]
            pub trait #d_ident<'a> {
                #(#d_decls)*
            }

            impl<'a> #d_ident<'a> for #decoder<'a> {
                #(#d_impls)*
            }
        });
    }
    Ok(out)
}

/// The traits for extensions of a message-set message: items, not fields.
fn message_set_traits(
    pseudo: &MessageDef,
    plans: &[super::fields::FieldPlan<'_>],
    w_name: &str,
    d_name: &str,
    writer: &TokenStream,
    decoder: &TokenStream,
    ctx: &Ctx<'_>,
) -> Result<TokenStream, CodegenError> {
    let file = ctx.file.name.as_str();
    let w_ident = ident_in(file, w_name)?;
    let d_ident = ident_in(file, d_name)?;
    let mut w_items = TokenStream::new();
    let mut d_decls = TokenStream::new();
    let mut d_impls = TokenStream::new();
    for p in plans {
        let super::fields::Shape::Message {
            decoder: ext_dec, ..
        } = &p.shape
        else {
            // protoc only allows singular message extensions of message sets.
            continue;
        };
        // Singular message fields always get both names, made unique and
        // valid by the field planner.
        let (Some(raw), Some(bytes)) = (&p.w_raw, &p.d_bytes) else {
            continue;
        };
        let n = proc_macro2::Literal::u32_unsuffixed(p.def.number);
        let what = p.describe(pseudo);
        let get = &p.d_get;
        let w_doc = format!(
            "Writes {what} as a message-set item from its encoded message (no length prefix)."
        );
        let d_doc = format!("{what}, from the message-set item with this number.");
        let b_doc = format!("{what}, as the encoded message of its message-set item.");
        w_items.extend(quote! {
            #[doc = #w_doc]
            #[inline]
            fn #raw(&mut self, encoded: &[u8]) -> &mut Self {
                let m = ::protozero::MessageWriter::message(self);
                m.append_tag(1, ::protozero::WireType::StartGroup);
                m.append_uint32(2, #n);
                m.append_bytes(3, encoded);
                m.append_tag(1, ::protozero::WireType::EndGroup);
                self
            }
        });
        d_decls.extend(quote! {
            #[doc = #d_doc]
            fn #get(&self) -> ::core::option::Option<#ext_dec<'a>>;
            #[doc = #b_doc]
            fn #bytes(&self) -> ::core::option::Option<&'a [u8]>;
        });
        d_impls.extend(quote! {
            #[inline]
            fn #get(&self) -> ::core::option::Option<#ext_dec<'a>> {
                self.#bytes().map(#ext_dec::new)
            }
            fn #bytes(&self) -> ::core::option::Option<&'a [u8]> {
                self.typed_decoder()
                    .repeated(1)
                    .filter_map(|f| f.as_group().ok())
                    .filter_map(|item| {
                        let item = ::protozero::TypedDecoder::<'a, 4>::with_groups(item);
                        let id = item.get(2)?.as_u32().ok()?;
                        (id == #n).then(|| item.get(3)?.as_bytes().ok()).flatten()
                    })
                    .last()
            }
        });
    }
    let w_doc = format!(
        "Message-set items for the extensions of `{}` declared in `{}`.",
        pseudo.full_name, ctx.file.name
    );
    let d_doc = format!(
        "Reads the message-set items for the extensions of `{}` declared in `{}`.",
        pseudo.full_name, ctx.file.name
    );
    Ok(quote! {
        #[doc = #w_doc]
        pub trait #w_ident<'w>: ::protozero::MessageWriter<'w> {
            #w_items
        }

        impl<'w> #w_ident<'w> for #writer<'w> {}

        #[doc = #d_doc]
        pub trait #d_ident<'a> {
            #d_decls
        }

        impl<'a> #d_ident<'a> for #decoder<'a> {
            #d_impls
        }
    })
}

fn parse_fns(tokens: TokenStream, file: &str) -> Result<Vec<syn::ImplItemFn>, CodegenError> {
    let block: syn::ItemImpl =
        syn::parse2(quote! { impl X { #tokens } }).map_err(|e| CodegenError::Format {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
    Ok(block
        .items
        .into_iter()
        .filter_map(|i| match i {
            syn::ImplItem::Fn(f) => Some(f),
            _ => None,
        })
        .collect())
}

/// `pub fn`s as trait methods with default bodies. A method returning a
/// child writer borrowed from `self` (`-> W<'_>`) gets an explicit
/// `fn m<'s>(&'s mut self) -> W<'s> where 'w: 's`: inside the trait, the
/// receiver's type does not imply that `'w` outlives the borrow.
fn trait_defaults(tokens: TokenStream, file: &str) -> Result<TokenStream, CodegenError> {
    let fns = parse_fns(tokens, file)?;
    let mut out = TokenStream::new();
    for f in fns {
        let attrs = f.attrs;
        let mut sig = f.sig;
        let block = f.block;
        if let syn::ReturnType::Type(_, ty) = &sig.output {
            let text = quote!(#ty).to_string();
            if text.contains("'_") {
                let bound = text.replace("'_", "'s");
                let ty: syn::Type = syn::parse_str(&bound).map_err(|e| CodegenError::Format {
                    file: file.to_owned(),
                    message: e.to_string(),
                })?;
                sig.output = syn::parse_quote!(-> #ty);
                sig.generics.params.push(syn::parse_quote!('s));
                sig.generics.where_clause = Some(syn::parse_quote!(where 'w: 's));
                if let Some(first) = sig.inputs.first_mut() {
                    *first = syn::parse_quote!(&'s mut self);
                }
            }
        }
        out.extend(quote! { #(#attrs)* #sig #block });
    }
    Ok(out)
}

/// `pub fn`s as (trait declarations, trait impl items).
fn split_decls(
    tokens: TokenStream,
    file: &str,
) -> Result<(TokenStream, TokenStream), CodegenError> {
    let fns = parse_fns(tokens, file)?;
    let mut decls = TokenStream::new();
    let mut impls = TokenStream::new();
    for f in fns {
        let docs: Vec<_> = f
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .collect();
        let sig = &f.sig;
        let block = &f.block;
        decls.extend(quote! { #(#docs)* #sig; });
        impls.extend(quote! { #[inline] #sig #block });
    }
    Ok((decls, impls))
}
