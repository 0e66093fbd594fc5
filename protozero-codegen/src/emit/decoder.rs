//! Emits a message's decoder: a typed view over `protozero::TypedDecoder`
//! that parses the bytes once and answers each accessor from the field table.
//! Accessors return `Option`s and iterators; a field with an unexpected wire
//! type or invalid UTF-8 reads as absent, so hostile input cannot panic.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use super::fields::{FieldPlan, Shape, scalar_info, which_names};
use crate::error::CodegenError;
use crate::model::{MessageDef, Scalar};
use crate::names::{ident_in, module_name, type_ident, type_name, upper_camel};
use crate::resolve::oneof_enum_name;

/// How generated accessor bodies reach the parsed field table.
pub(crate) struct Access {
    /// Expression of type `&TypedDecoder` (`self.dec` in a decoder's own
    /// impl, `self.typed_decoder()` in an extension trait impl).
    pub dec: TokenStream,
    /// Iterator-returning accessors say `+ use<'a>` (not in trait items,
    /// where precise capturing needs a newer compiler than our MSRV).
    pub precise_capture: bool,
}

/// Fields with numbers below this go to the decoder's dense table; larger
/// numbers (rare) are found by scanning the message from the first of them.
pub const MAX_DENSE_FIELDS: u32 = 128;

/// The decoder struct, its inherent impl and its `MessageDecoder` impl.
pub(crate) fn emit_decoder(
    msg: &MessageDef,
    file: &str,
    plans: &[FieldPlan<'_>],
    groups: bool,
) -> Result<TokenStream, CodegenError> {
    let name = ident_in(file, &format!("{}Decoder", type_name(&msg.name)))?;
    let full_name = &msg.full_name;
    let dense =
        Literal::usize_unsuffixed((msg.max_field_number() + 1).min(MAX_DENSE_FIELDS) as usize);
    let doc = format!(
        "Zero-copy decoder of message `{full_name}` (from `{file}`); missing or malformed fields read as `None`. Its `Debug` output lists the fields present, by their `.proto` names."
    );
    let access = Access {
        dec: quote!(self.dec),
        precise_capture: true,
    };
    let accessors = plans.iter().map(|p| field_accessors(msg, p, &access));
    let which = which_names(msg, plans, file)?;
    let oneofs = which
        .iter()
        .enumerate()
        .map(|(i, method)| which_method(msg, i, method, plans, groups, file))
        .collect::<Result<Vec<_>, _>>()?;
    let ctor = if groups {
        quote!(::protozero::TypedDecoder::with_groups(buf))
    } else {
        quote!(::protozero::TypedDecoder::new(buf))
    };
    let debug = debug_impl(&name, plans);
    Ok(quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #name<'a> {
            dec: ::protozero::TypedDecoder<'a, #dense>,
        }

        impl<'a> #name<'a> {
            /// Parses `buf`; decoding never fails, see [`Self::decode_error`].
            #[inline]
            pub fn new(buf: &'a [u8]) -> Self {
                Self { dec: #ctor }
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

        #debug
    })
}

/// `Debug` for a decoder: the fields present, in field-number order, under
/// their `.proto` names, through the runtime's `DebugFields` (which documents
/// the format); fields the schema does not name are left out, marked `..`.
fn debug_impl(name: &Ident, plans: &[FieldPlan<'_>]) -> TokenStream {
    let rust_name = name.to_string();
    let rust_name = rust_name.trim_start_matches("r#");
    let mut by_number: Vec<&FieldPlan<'_>> = plans.iter().collect();
    by_number.sort_by_key(|p| p.def.number);
    let fields = by_number.iter().map(|p| {
        let id = Literal::u32_unsuffixed(p.def.number);
        let field_name = p.def.name.as_str();
        let (method, turbofish, marker) = debug_method(p);
        let field = if p.repeated() {
            quote!(d.repeated(#id))
        } else {
            quote!(d.get(#id))
        };
        quote! { s.#method #turbofish(#field_name, #field #marker); }
    });
    let mut known: Vec<u32> = plans.iter().map(|p| p.def.number).collect();
    known.sort_unstable();
    known.dedup();
    let known = known.into_iter().map(Literal::u32_unsuffixed);
    quote! {
        impl ::core::fmt::Debug for #name<'_> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::protozero::__private::DebugDecoder::fmt_at_depth(self, f, 0)
            }
        }

        impl<'a> ::protozero::__private::DebugDecoder for #name<'a> {
            const DEBUG_NAME: &'static str = #rust_name;

            fn fmt_at_depth(
                &self,
                f: &mut ::core::fmt::Formatter<'_>,
                depth: usize,
            ) -> ::core::fmt::Result {
                let d = &self.dec;
                let mut s = ::protozero::__private::DebugFields::new(f, Self::DEBUG_NAME, depth);
                #(#fields)*
                s.check_fields(d, &[#(#known),*]);
                s.finish()
            }
        }
    }
}

/// The `DebugFields` method printing a field, its turbofish (if any), and
/// its trailing kind marker argument (for numeric scalars).
fn debug_method(p: &FieldPlan<'_>) -> (Ident, TokenStream, TokenStream) {
    let repeated = p.repeated();
    let none = TokenStream::new;
    let (method, turbofish, marker) = match &p.shape {
        Shape::Scalar(Scalar::String) if repeated => ("repeated_strings", none(), none()),
        Shape::Scalar(Scalar::String) => ("string", none(), none()),
        Shape::Scalar(Scalar::Bytes) if repeated => ("repeated_bytes", none(), none()),
        Shape::Scalar(Scalar::Bytes) => ("bytes", none(), none()),
        Shape::Scalar(s) => {
            let kind = scalar_info(*s).kind;
            let method = if repeated {
                "repeated_scalars"
            } else {
                "scalar"
            };
            (method, none(), quote!(, ::protozero::kinds::#kind))
        }
        Shape::Enum(path) => {
            let method = if repeated {
                "repeated_enums"
            } else {
                "enumeration"
            };
            (method, quote!(::<#path>), none())
        }
        Shape::Message { decoder, .. } => {
            let method = match (repeated, p.def.delimited) {
                (true, true) => "repeated_groups",
                (true, false) => "repeated_messages",
                (false, true) => "group",
                (false, false) => "message",
            };
            (method, quote!(::<#decoder<'a>>), none())
        }
    };
    (
        Ident::new(method, proc_macro2::Span::call_site()),
        turbofish,
        marker,
    )
}

pub(crate) fn field_accessors(msg: &MessageDef, p: &FieldPlan<'_>, d: &Access) -> TokenStream {
    let id = Literal::u32_unsuffixed(p.def.number);
    let has = &p.d_has;
    let what = p.describe(msg);
    let has_doc = if p.repeated() {
        format!("Whether {} occurs at least once.", lower(&what))
    } else {
        format!("Whether {} is present.", lower(&what))
    };
    let dec = &d.dec;
    let has_fn = quote! {
        #[doc = #has_doc]
        #[inline]
        pub fn #has(&self) -> bool {
            #dec.has(#id)
        }
    };
    let main = if p.repeated() {
        repeated_accessors(p, &id, &what, d)
    } else {
        singular_accessors(p, &id, &what, d)
    };
    quote! { #main #has_fn }
}

fn singular_accessors(p: &FieldPlan<'_>, id: &Literal, what: &str, a: &Access) -> TokenStream {
    let d = &a.dec;
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
                        #d.get(#id).and_then(|f| f.as_bytes().ok())
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
                    #d.get(#id).and_then(|f| f.#getter().ok())
                }
                #bytes
            }
        }
        Shape::Enum(path) => {
            let raw = p.d_raw.as_ref().map(|raw| {
                let doc = format!(
                    "{what}, as the number on the wire (also when the enum does not name it); `None` when absent or malformed."
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #raw(&self) -> ::core::option::Option<i32> {
                        #d.get(#id).and_then(|f| f.as_i32().ok())
                    }
                }
            });
            let doc = match &p.d_raw {
                Some(raw) => format!(
                    "{what}; `None` when absent, malformed or a number the enum does not name (see [`Self::{}`]).",
                    raw.to_string().trim_start_matches("r#")
                ),
                None => format!(
                    "{what}; `None` when absent, malformed or a number the enum does not name."
                ),
            };
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#path> {
                    #d
                        .get(#id)
                        .and_then(|f| f.as_i32().ok())
                        .and_then(<#path as ::protozero::ProtoEnum>::from_i32)
                }
                #raw
            }
        }
        Shape::Message { decoder, .. } => {
            let (as_payload, what_bytes) = if p.def.delimited {
                (
                    quote!(as_group),
                    "as its encoded group contents (without the group tags)",
                )
            } else {
                (quote!(as_bytes), "as its encoded bytes")
            };
            let bytes = p.d_bytes.as_ref().map(|b| {
                let doc = format!("{what}, {what_bytes}.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #b(&self) -> ::core::option::Option<&'a [u8]> {
                        #d.get(#id).and_then(|f| f.#as_payload().ok())
                    }
                }
            });
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#decoder<'a>> {
                    #d.get(#id).and_then(|f| f.#as_payload().ok()).map(#decoder::new)
                }
                #bytes
            }
        }
    }
}

fn repeated_accessors(p: &FieldPlan<'_>, id: &Literal, what: &str, a: &Access) -> TokenStream {
    let d = &a.dec;
    let get = &p.d_get;
    if p.def.delimited {
        return repeated_groups(p, id, what, a);
    }
    let doc = if matches!(p.shape, Shape::Enum(_)) {
        match &p.d_raw {
            Some(raw) => format!(
                "{what}: every element the enum names, in order (packed or not); other numbers are skipped (see [`Self::{}`]).",
                raw.to_string().trim_start_matches("r#")
            ),
            None => format!(
                "{what}: every element the enum names, in order (packed or not); other numbers are skipped."
            ),
        }
    } else {
        format!("{what}: every element in order (packed or not).")
    };
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
            quote!(::protozero::RepeatedEnums<'a, #path>),
            quote!(::protozero::RepeatedEnums::new),
        ),
        Shape::Message { decoder, .. } => (
            quote!(::protozero::RepeatedMessages<'a, #decoder<'a>>),
            quote!(::protozero::RepeatedMessages::new),
        ),
    };
    let raw = p.d_raw.as_ref().map(|raw| {
        let doc = format!("{what}, as the numbers on the wire, known to the enum or not.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #raw(&self) -> ::protozero::RepeatedScalars<'a, ::protozero::kinds::Int32> {
                ::protozero::RepeatedScalars::new(#d.repeated(#id))
            }
        }
    });
    let bytes = p.d_bytes.as_ref().map(|b| {
        let doc = format!("{what}, as raw bytes.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #b(&self) -> ::protozero::RepeatedBytes<'a> {
                ::protozero::RepeatedBytes::new(#d.repeated(#id))
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #get(&self) -> #ty {
            #ctor(#d.repeated(#id))
        }
        #raw
        #bytes
    }
}

/// Repeated group fields: iterators over the elements' group contents
/// (elements with another wire type are skipped).
fn repeated_groups(p: &FieldPlan<'_>, id: &Literal, what: &str, a: &Access) -> TokenStream {
    let d = &a.dec;
    let get = &p.d_get;
    let Shape::Message { decoder, .. } = &p.shape else {
        return TokenStream::new();
    };
    let doc = format!("{what}: every element in order, each written as a group.");
    let capture = a.precise_capture.then(|| quote!(+ use<'a>));
    let bytes = p.d_bytes.as_ref().map(|b| {
        let doc = format!("{what}, as each element's group contents.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #b(&self) -> impl ::core::iter::Iterator<Item = &'a [u8]> #capture {
                #d.repeated(#id).filter_map(|f| f.as_group().ok())
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #get(&self) -> impl ::core::iter::Iterator<Item = #decoder<'a>> #capture {
            #d.repeated(#id).filter_map(|f| f.as_group().ok()).map(#decoder::new)
        }
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
pub(crate) fn oneof_variant(p: &FieldPlan<'_>, file: &str) -> Result<Ident, CodegenError> {
    ident_in(file, &type_ident(upper_camel(&p.def.name)))
}

/// `which_x()`: scans for the member that appears last, as protobuf's
/// "last one wins" requires across members of a oneof.
fn which_method(
    msg: &MessageDef,
    index: usize,
    method: &Ident,
    plans: &[FieldPlan<'_>],
    groups: bool,
    file: &str,
) -> Result<TokenStream, CodegenError> {
    let module = ident_in(file, &module_name(&msg.name))?;
    let enum_name = ident_in(file, &oneof_enum_name(msg, index))?;
    let lt = oneof_borrows(plans, index).then(|| quote!(<'a>));
    let oneof = &msg.oneofs[index].name;
    let doc = format!(
        "Which member of oneof `{oneof}` is set (the last one on the wire wins), with its value; malformed members, and enum members with numbers the enum does not name, are passed over."
    );
    let mut arms = Vec::new();
    for p in plans.iter().filter(|p| p.def.oneof == Some(index)) {
        let arm = {
            let id = Literal::u32_unsuffixed(p.def.number);
            let variant = oneof_variant(p, file)?;
            let convert = match &p.shape {
                Shape::Scalar(s) => {
                    let getter = scalar_info(*s).getter;
                    quote!(field.#getter().ok())
                }
                Shape::Enum(path) => quote!(
                    field
                        .as_i32()
                        .ok()
                        .and_then(<#path as ::protozero::ProtoEnum>::from_i32)
                ),
                Shape::Message { .. } if p.def.delimited => quote!(
                    field
                        .as_group()
                        .ok()
                        .map(::protozero::MessageDecoder::decode)
                ),
                Shape::Message { .. } => quote!(
                    field
                        .as_bytes()
                        .ok()
                        .map(::protozero::MessageDecoder::decode)
                ),
            };
            quote! { #id => #convert.map(#module::#enum_name::#variant), }
        };
        arms.push(arm);
    }
    let fields = if groups {
        quote!(::protozero::Decoder::new(self.dec.buffer()).accept_groups())
    } else {
        quote!(::protozero::Decoder::new(self.dec.buffer()))
    };
    Ok(quote! {
        #[doc = #doc]
        pub fn #method(&self) -> ::core::option::Option<#module::#enum_name #lt> {
            let mut found = ::core::option::Option::None;
            for field in #fields.map_while(::core::result::Result::ok) {
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
    })
}

fn lower(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
