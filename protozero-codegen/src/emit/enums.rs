//! Emits protobuf enums as `#[repr(i32)]` Rust enums, and the per-oneof case
//! enums that decoders' `which_*` methods return.
//!
//! Proto enums may alias one number under several names (`allow_alias`); a
//! Rust enum cannot, so the first name becomes the variant and later ones
//! become associated constants. Variant names drop the enum's own prefix
//! (`Type::TYPE_SLICE_BEGIN` → `Type::SliceBegin`) unless that would make two
//! variants collide.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use super::decoder::{oneof_borrows, oneof_variant};
use super::fields::{FieldPlan, Shape, scalar_info};
use crate::EmitOptions;
use crate::error::CodegenError;
use crate::model::{EnumDef, MessageDef, Scalar};
use crate::names::{escape, ident_in, type_name, variant_name};
use crate::resolve::oneof_enum_name;

/// One Rust enum for a protobuf enum.
pub(crate) fn emit_enum(
    e: &EnumDef,
    file: &str,
    options: &EmitOptions,
) -> Result<TokenStream, CodegenError> {
    let non_exhaustive = non_exhaustive(options);
    let first_value = e.values.first().ok_or_else(|| CodegenError::Unsupported {
        file: file.to_owned(),
        construct: format!("enum {}", e.full_name),
        reason: "an enum needs at least one value".to_owned(),
    })?;
    let name = ident_in(file, &type_name(&e.name))?;
    let variants = variant_names(e);
    let idents = variants
        .iter()
        .map(|v| ident_in(file, v))
        .collect::<Result<Vec<_>, _>>()?;
    let ident = |i: usize| idents[i].clone();
    let mut seen: HashMap<i32, usize> = HashMap::new();
    let mut primary = Vec::new();
    let mut aliases = Vec::new();
    for (i, v) in e.values.iter().enumerate() {
        match seen.get(&v.number) {
            Some(&first) => aliases.push((i, first)),
            None => {
                seen.insert(v.number, i);
                primary.push(i);
            }
        }
    }
    let doc = format!("Enum `{}` (from `{file}`).", e.full_name);
    let decl = primary.iter().map(|&i| {
        let v = &e.values[i];
        let id = ident(i);
        let n = Literal::i32_unsuffixed(v.number);
        let d = format!("`{}` = {}", v.name, v.number);
        quote! { #[doc = #d] #id = #n, }
    });
    // Alias names upper-cased may coincide (`moo` and `MOO`): number them.
    let mut used_consts = HashSet::new();
    let alias_names: Vec<Ident> = aliases
        .iter()
        .map(|&(i, _)| {
            let mut n = e.values[i].name.to_uppercase();
            while !used_consts.insert(n.clone()) {
                n.push('_');
            }
            ident_in(file, &escape(&n))
        })
        .collect::<Result<_, _>>()?;
    let alias_consts = aliases.iter().zip(&alias_names).map(|(&(i, first), name)| {
        let v = &e.values[i];
        let c = name;
        let target = ident(first);
        let d = format!(
            "`{}` = {}, an alias of [`Self::{}`].",
            v.name, v.number, variants[first]
        );
        quote! { #[doc = #d] pub const #c: Self = Self::#target; }
    });
    let from_arms = primary.iter().map(|&i| {
        let id = ident(i);
        let n = Literal::i32_unsuffixed(e.values[i].number);
        quote! { #n => ::core::option::Option::Some(Self::#id), }
    });
    let name_arms = primary.iter().map(|&i| {
        let id = ident(i);
        let s = &e.values[i].name;
        quote! { Self::#id => #s, }
    });
    let parse_arms = e.values.iter().map(|v| {
        let first = seen.get(&v.number).copied().unwrap_or(0);
        let id = ident(first);
        let s = &v.name;
        quote! { #s => ::core::option::Option::Some(Self::#id), }
    });
    let default = ident(seen.get(&first_value.number).copied().unwrap_or(0));
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        #non_exhaustive
        pub enum #name {
            #(#decl)*
        }

        impl #name {
            #(#alias_consts)*

            /// The variant with this number, if the schema names one.
            pub const fn from_i32(value: i32) -> ::core::option::Option<Self> {
                match value {
                    #(#from_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            /// The number on the wire.
            pub const fn as_i32(self) -> i32 {
                self as i32
            }

            /// The value's name as written in the `.proto` file.
            pub const fn as_str_name(self) -> &'static str {
                match self {
                    #(#name_arms)*
                }
            }

            /// The value with this `.proto` name (aliases included).
            pub fn from_str_name(name: &str) -> ::core::option::Option<Self> {
                match name {
                    #(#parse_arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl ::core::default::Default for #name {
            /// The first value declared, protobuf's default.
            fn default() -> Self {
                Self::#default
            }
        }

        impl ::protozero::ProtoEnum for #name {
            #[inline]
            fn from_i32(value: i32) -> ::core::option::Option<Self> {
                Self::from_i32(value)
            }
            #[inline]
            fn as_i32(self) -> i32 {
                self as i32
            }
            #[inline]
            fn as_str_name(self) -> &'static str {
                Self::as_str_name(self)
            }
        }

        impl ::core::convert::From<#name> for i32 {
            #[inline]
            fn from(value: #name) -> i32 {
                value as i32
            }
        }

        impl ::core::convert::TryFrom<i32> for #name {
            type Error = i32;
            /// Fails with the number itself when the schema does not name it.
            #[inline]
            fn try_from(value: i32) -> ::core::result::Result<Self, i32> {
                Self::from_i32(value).ok_or(value)
            }
        }
    })
}

/// Variant names for every value (aliases included), prefix-stripped unless
/// stripping makes two distinct numbers collide.
fn variant_names(e: &EnumDef) -> Vec<String> {
    for strip in [true, false] {
        let names: Vec<String> = e
            .values
            .iter()
            .map(|v| variant_name(&e.name, &v.name, strip))
            .collect();
        let mut by_name: HashMap<&str, i32> = HashMap::new();
        let clash = e
            .values
            .iter()
            .zip(&names)
            .any(|(v, n)| *by_name.entry(n.as_str()).or_insert(v.number) != v.number);
        if !clash {
            return names;
        }
    }
    // Unstripped names still clash (e.g. `FOO` and `foo`): number them.
    let mut used = HashSet::new();
    e.values
        .iter()
        .map(|v| {
            let mut n = variant_name(&e.name, &v.name, false);
            while !used.insert(n.clone()) {
                n.push('_');
            }
            n
        })
        .collect()
}

/// `#[non_exhaustive]` if the options ask for it (the schema may grow).
fn non_exhaustive(options: &EmitOptions) -> TokenStream {
    if options.non_exhaustive_enums {
        quote!(#[non_exhaustive])
    } else {
        TokenStream::new()
    }
}

/// The case enum of oneof `index` of `msg`, emitted inside `msg`'s module
/// (`plans` resolved from that module).
pub(crate) fn emit_oneof_enum(
    msg: &MessageDef,
    index: usize,
    plans: &[FieldPlan<'_>],
    file: &str,
    options: &EmitOptions,
) -> Result<TokenStream, CodegenError> {
    let non_exhaustive = non_exhaustive(options);
    let name = ident_in(file, &oneof_enum_name(msg, index))?;
    let borrows = oneof_borrows(plans, index);
    let lt = borrows.then(|| quote!(<'a>));
    let oneof = &msg.oneofs[index].name;
    let doc = format!(
        "The member set in oneof `{oneof}` of `{}`, with its value.",
        msg.full_name
    );
    let mut variants = Vec::new();
    for p in plans.iter().filter(|p| p.def.oneof == Some(index)) {
        variants.push({
            let v = oneof_variant(p, file)?;
            let ty = match &p.shape {
                Shape::Scalar(Scalar::String) => quote!(&'a str),
                Shape::Scalar(Scalar::Bytes) => quote!(&'a [u8]),
                Shape::Scalar(s) => scalar_info(*s).rust_ty,
                Shape::Enum(path) => path.clone(),
                Shape::Message { decoder, .. } => quote!(#decoder<'a>),
            };
            let d = format!("Field `{}` = {}.", p.def.name, p.def.number);
            quote! { #[doc = #d] #v(#ty), }
        });
    }
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone)]
        #[allow(clippy::large_enum_variant)]
        #non_exhaustive
        pub enum #name #lt {
            #(#variants)*
        }
    })
}
