//! Emits a message's decoder: a typed view over `protozero::TypedDecoder`
//! that parses the bytes once and answers each accessor from the field table.
//! Accessors return `Option`s and iterators; a field with an unexpected wire
//! type or invalid UTF-8 reads as absent, so hostile input cannot panic.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::fields::{FieldPlan, Shape, scalar_info, which_names};
use crate::model::{MessageDef, Scalar};
use crate::names::{ident, module_name, type_name, upper_camel};
use crate::resolve::oneof_enum_name;

/// Fields with numbers below this go to the decoder's dense table; larger
/// numbers are found by a scan of the (rare) spill list.
pub const MAX_DENSE_FIELDS: u32 = 128;

/// The decoder struct, its inherent impl and its `MessageDecoder` impl.
pub(crate) fn emit_decoder(msg: &MessageDef, file: &str, plans: &[FieldPlan<'_>]) -> TokenStream {
    let name = format_ident!("{}Decoder", type_name(&msg.name));
    let full_name = &msg.full_name;
    let dense =
        Literal::usize_unsuffixed((msg.max_field_number() + 1).min(MAX_DENSE_FIELDS) as usize);
    let doc = format!(
        "Zero-copy decoder of message `{full_name}` (from `{file}`); missing or malformed fields read as `None`."
    );
    let accessors = plans.iter().map(|p| field_accessors(msg, p));
    let which = which_names(msg, plans);
    let oneofs = msg
        .oneofs
        .iter()
        .enumerate()
        .map(|(i, _)| which_method(msg, i, &which[i], plans));
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone)]
        pub struct #name<'a> {
            dec: ::protozero::TypedDecoder<'a, #dense>,
        }

        impl<'a> #name<'a> {
            /// Parses `buf`; decoding never fails, see [`Self::decode_error`].
            #[inline]
            pub fn new(buf: &'a [u8]) -> Self {
                Self { dec: ::protozero::TypedDecoder::new(buf) }
            }

            /// Why parsing stopped before the end of the bytes, if it did;
            /// fields before that point are still readable.
            #[inline]
            pub fn decode_error(&self) -> ::core::option::Option<::protozero::DecodeError> {
                self.dec.error()
            }

            /// The bytes being decoded.
            #[inline]
            pub fn raw_bytes(&self) -> &'a [u8] {
                self.dec.buffer()
            }

            /// The untyped field table, for fields this schema does not know.
            #[inline]
            pub fn typed_decoder(&self) -> &::protozero::TypedDecoder<'a, #dense> {
                &self.dec
            }

            #(#accessors)*
            #(#oneofs)*
        }

        impl<'a> ::protozero::MessageDecoder<'a> for #name<'a> {
            const FULL_NAME: &'static str = #full_name;

            #[inline]
            fn decode(buf: &'a [u8]) -> Self {
                Self::new(buf)
            }

            #[inline]
            fn decode_error(&self) -> ::core::option::Option<::protozero::DecodeError> {
                self.dec.error()
            }
        }
    }
}

fn field_accessors(msg: &MessageDef, p: &FieldPlan<'_>) -> TokenStream {
    let id = Literal::u32_unsuffixed(p.def.number);
    let has = &p.d_has;
    let what = p.describe(msg);
    let has_doc = if p.repeated() {
        format!("Whether {} occurs at least once.", lower(&what))
    } else {
        format!("Whether {} is present.", lower(&what))
    };
    let has_fn = quote! {
        #[doc = #has_doc]
        #[inline]
        pub fn #has(&self) -> bool {
            self.dec.has(#id)
        }
    };
    let main = if p.repeated() {
        repeated_accessors(p, &id, &what)
    } else {
        singular_accessors(p, &id, &what)
    };
    quote! { #main #has_fn }
}

fn singular_accessors(p: &FieldPlan<'_>, id: &Literal, what: &str) -> TokenStream {
    let get = &p.d_get;
    let doc = format!("{what}; `None` when absent or malformed.");
    match &p.shape {
        Shape::Scalar(s) => {
            let info = scalar_info(*s);
            let getter = info.getter;
            let ty = match s {
                Scalar::String => quote!(&'a str),
                Scalar::Bytes => quote!(&'a [u8]),
                _ => info.rust_ty,
            };
            let bytes = p.d_bytes.as_ref().map(|b| {
                let doc = format!("{what}, as raw bytes (not checked to be UTF-8).");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #b(&self) -> ::core::option::Option<&'a [u8]> {
                        self.dec.get(#id).and_then(|f| f.as_bytes().ok())
                    }
                }
            });
            let doc = if *s == Scalar::String {
                format!("{what}; `None` when absent, malformed or not UTF-8.")
            } else {
                doc
            };
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#ty> {
                    self.dec.get(#id).and_then(|f| f.#getter().ok())
                }
                #bytes
            }
        }
        Shape::Enum(path) => {
            let raw = p.d_raw.as_ref().map(|raw| {
                let doc = format!("{what}, as its raw number.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #raw(&self) -> ::core::option::Option<i32> {
                        self.dec.get(#id).and_then(|f| f.as_i32().ok())
                    }
                }
            });
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<::protozero::EnumValue<#path>> {
                    self.dec
                        .get(#id)
                        .and_then(|f| f.as_i32().ok())
                        .map(::protozero::EnumValue::from_i32)
                }
                #raw
            }
        }
        Shape::Message { decoder, .. } => {
            let bytes = p.d_bytes.as_ref().map(|b| {
                let doc = format!("{what}, as its encoded bytes.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #b(&self) -> ::core::option::Option<&'a [u8]> {
                        self.dec.get(#id).and_then(|f| f.as_bytes().ok())
                    }
                }
            });
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#decoder<'a>> {
                    self.dec.get(#id).and_then(|f| f.as_bytes().ok()).map(#decoder::new)
                }
                #bytes
            }
        }
    }
}

fn repeated_accessors(p: &FieldPlan<'_>, id: &Literal, what: &str) -> TokenStream {
    let get = &p.d_get;
    let doc = format!("{what}: every element in order (packed or not).");
    let (ty, ctor) = match &p.shape {
        Shape::Scalar(Scalar::String) => (
            quote!(::protozero::RepeatedStrs<'a>),
            quote!(::protozero::RepeatedStrs::new),
        ),
        Shape::Scalar(Scalar::Bytes) => (
            quote!(::protozero::RepeatedBytes<'a>),
            quote!(::protozero::RepeatedBytes::new),
        ),
        Shape::Scalar(s) => {
            let kind = scalar_info(*s).kind;
            (
                quote!(::protozero::RepeatedScalars<'a, ::protozero::kinds::#kind>),
                quote!(::protozero::RepeatedScalars::new),
            )
        }
        Shape::Enum(path) => (
            quote!(::protozero::RepeatedScalars<'a, ::protozero::kinds::Enum<#path>>),
            quote!(::protozero::RepeatedScalars::new),
        ),
        Shape::Message { decoder, .. } => (
            quote!(::protozero::RepeatedMessages<'a, #decoder<'a>>),
            quote!(::protozero::RepeatedMessages::new),
        ),
    };
    let raw = p.d_raw.as_ref().map(|raw| {
        let doc = format!("{what}, as raw numbers.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #raw(&self) -> ::protozero::RepeatedScalars<'a, ::protozero::kinds::Int32> {
                ::protozero::RepeatedScalars::new(self.dec.repeated(#id))
            }
        }
    });
    let bytes = p.d_bytes.as_ref().map(|b| {
        let doc = format!("{what}, as raw bytes.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #b(&self) -> ::protozero::RepeatedBytes<'a> {
                ::protozero::RepeatedBytes::new(self.dec.repeated(#id))
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #get(&self) -> #ty {
            #ctor(self.dec.repeated(#id))
        }
        #raw
        #bytes
    }
}

/// Whether the oneof's case enum borrows from the input (has a string,
/// bytes or message member).
pub(crate) fn oneof_borrows(plans: &[FieldPlan<'_>], index: usize) -> bool {
    plans
        .iter()
        .filter(|p| p.def.oneof == Some(index))
        .any(|p| {
            matches!(
                p.shape,
                Shape::Message { .. } | Shape::Scalar(Scalar::String | Scalar::Bytes)
            )
        })
}

/// Variant name of a oneof member.
pub(crate) fn oneof_variant(p: &FieldPlan<'_>) -> Ident {
    let n = upper_camel(&p.def.name);
    ident(if n == "Self" { "Self_" } else { &n })
}

/// `which_x()`: scans for the member that appears last, as protobuf's
/// "last one wins" requires across members of a oneof.
fn which_method(
    msg: &MessageDef,
    index: usize,
    method: &Ident,
    plans: &[FieldPlan<'_>],
) -> TokenStream {
    let module = ident(&module_name(&msg.name));
    let enum_name = format_ident!("{}", oneof_enum_name(msg, index));
    let lt = oneof_borrows(plans, index).then(|| quote!(<'a>));
    let oneof = &msg.oneofs[index].name;
    let doc = format!(
        "Which member of oneof `{oneof}` is set (the last one on the wire wins), with its value."
    );
    let arms = plans
        .iter()
        .filter(|p| p.def.oneof == Some(index))
        .map(|p| {
            let id = Literal::u32_unsuffixed(p.def.number);
            let variant = oneof_variant(p);
            let convert = match &p.shape {
                Shape::Scalar(s) => {
                    let getter = scalar_info(*s).getter;
                    quote!(field.#getter().ok())
                }
                Shape::Enum(_) => quote!(field.as_i32().ok().map(::protozero::EnumValue::from_i32)),
                Shape::Message { .. } => quote!(
                    field
                        .as_bytes()
                        .ok()
                        .map(::protozero::MessageDecoder::decode)
                ),
            };
            quote! { #id => #convert.map(#module::#enum_name::#variant), }
        });
    quote! {
        #[doc = #doc]
        pub fn #method(&self) -> ::core::option::Option<#module::#enum_name #lt> {
            let mut found = ::core::option::Option::None;
            for field in ::protozero::Decoder::new(self.dec.buffer()).map_while(::core::result::Result::ok) {
                let value = match field.id {
                    #(#arms)*
                    _ => continue,
                };
                if value.is_some() {
                    found = value;
                }
            }
            found
        }
    }
}

fn lower(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
