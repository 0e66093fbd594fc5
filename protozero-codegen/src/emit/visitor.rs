//! Emits a message's field enum (`FooField<'a>`): the message read field by
//! field in one pass, each field typed (see the runtime's `field_visit`).
//! A variant per declared field, converted as the decoder's accessor
//! converts it (enums as `EnumValue`s, so unnamed numbers are kept; nested
//! messages as `Lazy` views; an occurrence of a repeated number as an
//! `Occurrence`), and `Other` for everything else; `number()` says which
//! field a value is. A message with message fields also gets
//! `FieldEnum::visit_message`, which hands a nested message's view to a
//! generic visitor (one arm per message field). Every message has a field
//! enum, and so a `MessageFields` decoder, for every arm to compile: it is
//! `FooField_` where a type is named `FooField` (`resolve.rs`).

use std::collections::HashSet;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::decoder::extract;
use super::fields::{FieldPlan, Shape, scalar_info};
use super::strict::check_body;
use crate::error::CodegenError;
use crate::model::{MessageDef, Scalar};
use crate::names::{ident_in, type_ident, type_name, unique_name, upper_camel};

/// The enum, its `read` constructor and its trait impls.
pub(crate) fn emit_field_enum(
    msg: &MessageDef,
    file: &str,
    enum_name: &str,
    plans: &[FieldPlan<'_>],
    groups: bool,
) -> Result<TokenStream, CodegenError> {
    let name = ident_in(file, enum_name)?;
    let decoder = ident_in(file, &format!("{}Decoder", type_name(&msg.name)))?;
    let full_name = &msg.full_name;
    let mut taken: HashSet<String> = HashSet::from(["Other".to_owned()]);
    let mut variants = Vec::new();
    let mut arms = Vec::new();
    let mut nested = Vec::new();
    let mut numbers = Vec::new();
    for p in plans {
        let v = unique_name(&mut taken, type_ident(upper_camel(&p.def.name)));
        let variant = ident_in(file, &v)?;
        let (ty, value) = payload(p);
        let doc = format!("{}.", p.describe(msg));
        variants.push(quote! {
            #[doc = #doc]
            #variant(#ty),
        });
        if matches!(p.shape, Shape::Message { .. }) {
            nested.push(variant.clone());
        }
        let id = Literal::u32_unsuffixed(p.def.number);
        numbers.push(quote! { Self::#variant(_) => #id, });
        arms.push(quote! {
            #id => match #value {
                ::core::option::Option::Some(v) => Self::#variant(v),
                ::core::option::Option::None => Self::Other(f),
            },
        });
    }
    let check = check_body(plans);
    let usual = format!("{}Field", type_name(&msg.name));
    let renamed = if enum_name == usual {
        String::new()
    } else {
        format!(" Named `{enum_name}` because `{usual}` names another type in this module.")
    };
    let doc = format!(
        "The fields of message `{full_name}` one by one, in wire order, typed (from [`{enum_name}::read`]); `Other` holds a field the schema does not declare, or one with another wire type or a string that is not UTF-8 (a field whose variant name is taken, e.g. one named `other`, gets `_` appended).{renamed}"
    );
    let dispatch = if arms.is_empty() {
        quote!(Self::Other(f))
    } else {
        quote! {
            match f.id {
                #(#arms)*
                _ => Self::Other(f),
            }
        }
    };
    // One message field is an `if let` (clippy's `single_match`).
    let visit_body = match nested.as_slice() {
        [] => None,
        [one] => Some(quote! {
            if let Self::#one(m) = self {
                visitor.message(*m);
            }
        }),
        many => Some(quote! {
            match self {
                #(Self::#many(m) => visitor.message(*m),)*
                _ => {}
            }
        }),
    };
    let visit_message = visit_body.map(|body| {
        quote! {
            #[inline]
            fn visit_message<V: ::protozero::MessageVisitor<'a>>(&self, visitor: &mut V) {
                #body
            }
        }
    });
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum #name<'a> {
            #(#variants)*
            /// A field the schema does not declare, or a declared one that is
            /// malformed (another wire type, a string that is not UTF-8).
            Other(::protozero::Field<'a>),
        }

        impl<'a> #name<'a> {
            /// Visits `buf`'s fields in wire order (one scan, nothing kept);
            /// iteration ends at a malformed field, see `Fields::error`
            /// (and [`Self::try_read`], which reports it as an item).
            #[inline]
            pub fn read(buf: &'a [u8]) -> ::protozero::Fields<'a, Self> {
                ::protozero::Fields::new(buf)
            }

            /// Visits `buf`'s fields in wire order strictly, as prost reads
            /// a message: each item a `Result`, with one `Err` (then the end)
            /// for malformed bytes, a declared field with a wire type its
            /// type cannot have or a string that is not UTF-8. A singular
            /// field is yielded once per occurrence.
            #[inline]
            pub fn try_read(buf: &'a [u8]) -> ::protozero::TryFields<'a, Self> {
                ::protozero::TryFields::new(buf)
            }

            /// The field's number: its declared one, or for `Other` the
            /// number on the wire.
            #[inline]
            pub const fn number(&self) -> u32 {
                match self {
                    #(#numbers)*
                    Self::Other(f) => f.id,
                }
            }
        }

        impl<'a> ::protozero::FieldEnum<'a> for #name<'a> {
            const GROUPS: bool = #groups;

            #[inline(always)]
            fn from_field(f: ::protozero::Field<'a>) -> Self {
                #dispatch
            }

            #[inline]
            fn check(
                field: &::protozero::Field<'a>,
            ) -> ::core::result::Result<(), ::protozero::DecodeError> {
                #check
            }

            #visit_message
        }

        impl<'a> ::protozero::MessageFields<'a> for #decoder<'a> {
            type Field = #name<'a>;
        }
    })
}

/// A variant's payload type, and the expression (an `Option` of it) that
/// makes it from `f`, the field read.
fn payload(p: &FieldPlan<'_>) -> (TokenStream, TokenStream) {
    let (ex, _) = extract(p);
    let raw = quote!(::protozero::__private::#ex(f.value));
    let packable = match &p.shape {
        Shape::Scalar(s) => s.is_packable(),
        Shape::Enum(_) => true,
        Shape::Message { .. } => false,
    };
    if p.repeated() && packable {
        let kind = match &p.shape {
            Shape::Enum(path) => quote!(::protozero::kinds::Enum<#path>),
            Shape::Scalar(s) => {
                let k = scalar_info(*s).kind;
                quote!(::protozero::kinds::#k)
            }
            Shape::Message { .. } => TokenStream::new(),
        };
        return (
            quote!(::protozero::Occurrence<'a, #kind>),
            quote!(::protozero::Occurrence::<#kind>::from_value(f.value)),
        );
    }
    match &p.shape {
        Shape::Scalar(s) => {
            let ty = match s {
                Scalar::String => quote!(&'a str),
                Scalar::Bytes => quote!(&'a [u8]),
                _ => scalar_info(*s).rust_ty,
            };
            (ty, super::decoder::convert(*s, raw))
        }
        Shape::Enum(path) => (
            quote!(::protozero::EnumValue<#path>),
            quote!(#raw.map(|v| ::protozero::EnumValue::from_i32(v as i32))),
        ),
        Shape::Message { decoder, .. } => (
            quote!(::protozero::Lazy<'a, #decoder<'a>>),
            quote!(#raw.map(::protozero::Lazy::new)),
        ),
    }
}
