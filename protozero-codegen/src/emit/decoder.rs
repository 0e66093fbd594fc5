//! Emits a message's decoder: one forward pass over the message's bytes that
//! hands each field to a generated `match` on its number and keeps what the
//! accessors need in slots of the decoder itself (see the runtime's
//! `decoder_slots`): a singular field's raw value, a repeated field's first
//! and last occurrence, a oneof's last member. Accessors return `Option`s and
//! iterators; a field with an unexpected wire type or invalid UTF-8 reads as
//! absent, so hostile input cannot panic.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use super::fields::{FieldPlan, Shape, scalar_info, which_names};
use crate::error::CodegenError;
use crate::model::{MessageDef, Scalar};
use crate::names::{ident_in, module_name, type_ident, type_name, upper_camel};
use crate::resolve::oneof_enum_name;

use super::access::{Access, slot};
use super::closed_enum::{closed_value, counted_oneof};
use super::decoder_debug::debug_impl;
use super::fast_pass::fast_path;
use super::strict::pass_check;

/// Ids below this go to the dense table of the `TypedDecoder` that
/// `typed_decoder()` and `Debug` build on demand (not to the decoder's own
/// slots, which hold exactly the declared fields).
pub const MAX_DENSE_FIELDS: u32 = 128;

/// The runtime function picking the raw value a field's slot holds, and the
/// slot's type.
pub(crate) fn extract(p: &FieldPlan<'_>) -> (TokenStream, TokenStream) {
    let bytes = (quote!(bytes), quote!(&'a [u8]));
    match &p.shape {
        Shape::Message { .. } if p.def.delimited => (quote!(group), quote!(&'a [u8])),
        Shape::Message { .. } => bytes,
        Shape::Enum(_) => (quote!(varint), quote!(u64)),
        Shape::Scalar(s) => match s {
            Scalar::String | Scalar::Bytes => bytes,
            Scalar::Fixed32 | Scalar::Sfixed32 | Scalar::Float => (quote!(fixed32), quote!(u32)),
            Scalar::Fixed64 | Scalar::Sfixed64 | Scalar::Double => (quote!(fixed64), quote!(u64)),
            _ => (quote!(varint), quote!(u64)),
        },
    }
}

/// `raw` (an `Option` of the slot's type) turned into the accessor's value.
pub(crate) fn convert(s: Scalar, raw: TokenStream) -> TokenStream {
    let vz = quote!(::protozero::varint);
    let map = match s {
        Scalar::Bytes | Scalar::Uint64 | Scalar::Fixed32 | Scalar::Fixed64 => return raw,
        Scalar::String => return quote!(#raw.and_then(|b| ::core::str::from_utf8(b).ok())),
        Scalar::Sint64 => return quote!(#raw.map(#vz::unzigzag64)),
        Scalar::Float => return quote!(#raw.map(f32::from_bits)),
        Scalar::Double => return quote!(#raw.map(f64::from_bits)),
        Scalar::Int32 | Scalar::Sfixed32 => quote!(v as i32),
        Scalar::Int64 | Scalar::Sfixed64 => quote!(v as i64),
        Scalar::Uint32 => quote!(v as u32),
        Scalar::Sint32 => quote!(#vz::unzigzag32(v as u32)),
        Scalar::Bool => quote!(v != 0),
    };
    quote!(#raw.map(|v| #map))
}

/// Oneof member `p`'s raw value (`Option` of its slot type) from `slot`, an
/// expression of type `OneofSlot`: one compare of the whole tag the member
/// is written with (number and the wire type its type has).
pub(crate) fn oneof_raw(p: &FieldPlan<'_>, slot: TokenStream) -> TokenStream {
    let (ex, _) = extract(p);
    let (wire_type, method) = match ex.to_string().as_str() {
        "varint" => (0, quote!(u64_if)),
        "fixed64" => (1, quote!(u64_if)),
        "fixed32" => (5, quote!(u32_if)),
        "group" => (3, quote!(bytes_if)),
        _ => (2, quote!(bytes_if)),
    };
    let tag = Literal::u32_unsuffixed(p.def.number << 3 | wire_type);
    quote!(#slot.#method(#tag))
}

/// A singular field's raw value, `Option<slot type>`.
fn singular_raw(p: &FieldPlan<'_>, id: &Literal, a: &Access) -> TokenStream {
    let (ex, _) = extract(p);
    match a {
        Access::Slots { .. } => match p.def.oneof {
            Some(k) => {
                let o = slot("o", k as u32);
                oneof_raw(p, quote!(self.#o))
            }
            None => {
                let f = slot("f", p.def.number);
                quote!(self.#f)
            }
        },
        Access::Table { dec } => {
            quote!(#dec.get(#id).and_then(|f| ::protozero::__private::#ex(f.value)))
        }
    }
}

/// A repeated field's occurrences, a `protozero::RepeatedFields`.
fn repeated_raw(p: &FieldPlan<'_>, id: &Literal, a: &Access) -> TokenStream {
    match a {
        Access::Slots { groups } => {
            let r = slot("r", p.def.number);
            if *groups {
                quote!(self.#r.fields_with_groups(self.buf, #id))
            } else {
                quote!(self.#r.fields(self.buf, #id))
            }
        }
        Access::Table { dec } => quote!(#dec.repeated(#id)),
    }
}

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
        "Zero-copy decoder of message `{full_name}` (from `{file}`): `new` reads the fields once and keeps each declared field's last value (a oneof's last member, a repeated field's extent); missing or malformed fields read as `None`. `try_new` reads strictly, as prost does: malformed bytes, a declared field with another wire type or a string that is not UTF-8 are an error. A singular message field that occurs more than once reads as its last occurrence (its `_all` accessor yields every one, to merge as protobuf says). Its `Debug` output lists the fields present, by their `.proto` names."
    );
    let access = Access::Slots { groups };
    let accessors = plans.iter().map(|p| {
        let counted = p.def.oneof.and_then(|k| counted_oneof(plans, k, groups));
        field_accessors(msg, p, &access, counted.as_ref())
    });
    let which = which_names(msg, plans, file)?;
    let oneofs = which
        .iter()
        .enumerate()
        .map(|(i, method)| which_method(msg, i, method, plans, file, groups))
        .collect::<Result<Vec<_>, _>>()?;
    let table = if groups {
        quote!(::protozero::TypedDecoder::with_groups(self.buf))
    } else {
        quote!(::protozero::TypedDecoder::new(self.buf))
    };
    let (slots, pass) = slots_and_pass(msg, plans, groups);
    let debug = debug_impl(&name, plans);
    Ok(quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #name<'a> {
            buf: &'a [u8],
            error: ::core::option::Option<::protozero::DecodeError>,
            #slots
        }

        impl<'a> #name<'a> {
            /// Reads `buf`'s fields; decoding never fails: parsing stops at
            /// malformed bytes (see [`Self::decode_error`]), a declared field
            /// with another wire type reads as absent, a string that is not
            /// UTF-8 as `None` (see [`Self::try_new`] for the strict read).
            #[inline]
            pub fn new(buf: &'a [u8]) -> Self {
                Self::decode_pass::<false>(buf)
            }

            /// Reads `buf`'s fields strictly, as prost refuses a message:
            /// `Err` for malformed bytes, for a declared field of this
            /// message with a wire type its type cannot have
            /// (`WrongWireType`) and for a string field, singular or
            /// repeated, that is not UTF-8 (`InvalidUtf8`). Undeclared
            /// fields are accepted; nested messages are checked when read
            /// in turn (their `try_` accessors, or their own `try_new`).
            #[inline]
            pub fn try_new(buf: &'a [u8]) -> ::core::result::Result<Self, ::protozero::DecodeError> {
                let d = Self::decode_pass::<true>(buf);
                match d.error {
                    ::core::option::Option::Some(e) => ::core::result::Result::Err(e),
                    ::core::option::Option::None => ::core::result::Result::Ok(d),
                }
            }

            /// The one pass over `buf`: each field to its slot; `STRICT`
            /// also stops at a declared field that does not fit.
            #[inline(always)]
            fn decode_pass<const STRICT: bool>(buf: &'a [u8]) -> Self {
                #pass
            }

            /// Why parsing stopped before the end of the bytes, if it did;
            /// fields before that point are still readable.
            #[inline]
            pub fn decode_error(&self) -> ::core::option::Option<::protozero::DecodeError> {
                self.error
            }

            /// The bytes being decoded.
            #[inline]
            pub fn raw_bytes(&self) -> &'a [u8] {
                self.buf
            }

            /// An untyped field table over the same bytes (parsed anew on
            /// each call), for fields this schema does not know.
            pub fn typed_decoder(&self) -> ::protozero::TypedDecoder<'a, #dense> {
                #table
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
                self.error
            }

            #[inline]
            fn try_decode(buf: &'a [u8]) -> ::core::result::Result<Self, ::protozero::DecodeError> {
                Self::try_new(buf)
            }
        }

        #debug
    })
}

/// The slot declarations, and the body of `new`: the one pass.
fn slots_and_pass(
    msg: &MessageDef,
    plans: &[FieldPlan<'_>],
    groups: bool,
) -> (TokenStream, TokenStream) {
    let mut decls = TokenStream::new();
    let mut inits = TokenStream::new();
    let mut arms = Vec::new();
    for p in plans.iter().filter(|p| p.def.oneof.is_none()) {
        let id = Literal::u32_unsuffixed(p.def.number);
        let check = pass_check(p);
        if p.repeated() {
            let r = slot("r", p.def.number);
            decls.extend(quote!(#r: ::protozero::__private::Occurrences,));
            inits.extend(quote!(#r: ::protozero::__private::Occurrences::NONE,));
            arms.push((id, quote!(#check d.#r.add(pos, next))));
        } else {
            let f = slot("f", p.def.number);
            let (ex, ty) = extract(p);
            decls.extend(quote!(#f: ::core::option::Option<#ty>,));
            inits.extend(quote!(#f: ::core::option::Option::None,));
            arms.push((
                id,
                quote!(#check d.#f = ::protozero::__private::#ex(f.value)),
            ));
        }
    }
    for k in 0..msg.oneofs.len() {
        let o = slot("o", k as u32);
        decls.extend(quote!(#o: ::protozero::__private::OneofSlot<'a>,));
        inits.extend(quote!(#o: ::protozero::__private::OneofSlot::NONE,));
        for p in plans.iter().filter(|p| p.def.oneof == Some(k)) {
            let id = Literal::u32_unsuffixed(p.def.number);
            let check = pass_check(p);
            arms.push((
                id,
                quote!(#check d.#o = ::protozero::__private::OneofSlot::new(f)),
            ));
        }
    }
    let dispatch = match arms.as_slice() {
        [] => TokenStream::new(),
        [(id, action)] => quote! {
            if f.id == #id {
                #action;
            }
        },
        _ => {
            let arms = arms.iter().map(|(id, action)| quote!(#id => { #action; }));
            quote! {
                match f.id {
                    #(#arms)*
                    _ => {}
                }
            }
        }
    };
    let field = if arms.is_empty() {
        quote!((_, next))
    } else {
        quote!((f, next))
    };
    let fast = fast_path(plans);
    let pass = quote! {
        let mut d = Self {
            buf,
            error: ::core::option::Option::None,
            #inits
        };
        let mut pos = 0;
        while pos < buf.len() {
            #fast
            let #field = match ::protozero::__private::parse_at(buf, pos, #groups) {
                ::core::result::Result::Ok(read) => read,
                ::core::result::Result::Err(e) => {
                    d.error = ::core::option::Option::Some(e);
                    break;
                }
            };
            #dispatch
            pos = next;
        }
        d
    };
    (decls, pass)
}

/// A decoder's accessors of field `p`. `counted`: for a member of a oneof
/// with closed enum members, the oneof's slot as its typed accessors read it
/// (see [`counted_oneof`]).
pub(crate) fn field_accessors(
    msg: &MessageDef,
    p: &FieldPlan<'_>,
    a: &Access,
    counted: Option<&TokenStream>,
) -> TokenStream {
    let id = Literal::u32_unsuffixed(p.def.number);
    let has = &p.d_has;
    let what = p.describe(msg);
    let has_doc = if p.repeated() {
        format!("Whether {} occurs at least once.", lower(&what))
    } else if p.closed_enum || counted.is_some() {
        format!(
            "Whether {} is present (with the wire type its type has), as protoc's C++ has it: an occurrence of a closed enum with a number the enum does not name is an unknown field.",
            lower(&what)
        )
    } else {
        format!(
            "Whether {} is present (with the wire type its type has).",
            lower(&what)
        )
    };
    let present = match (p.repeated(), a) {
        (true, Access::Slots { .. }) => {
            let r = slot("r", p.def.number);
            quote!(!self.#r.is_empty())
        }
        (true, Access::Table { dec }) => quote!(#dec.has(#id)),
        // As protoc's C++ has it, a closed enum's unnamed number is an
        // unknown field, not a presence (the `_raw` accessors read the wire).
        (false, _) if p.closed_enum && p.def.oneof.is_none() => {
            let get = &p.d_get;
            quote!(self.#get().is_some())
        }
        (false, _) => match counted {
            Some(slot) => {
                let raw = oneof_raw(p, slot.clone());
                quote!(#raw.is_some())
            }
            None => {
                let raw = singular_raw(p, &id, a);
                quote!(#raw.is_some())
            }
        },
    };
    let has_fn = quote! {
        #[doc = #has_doc]
        #[inline]
        pub fn #has(&self) -> bool {
            #present
        }
    };
    let main = if p.repeated() {
        repeated_accessors(p, &id, &what, a)
    } else {
        singular_accessors(p, &id, &what, a, counted)
    };
    quote! { #main #has_fn }
}

/// The typed value of member/field `p` from `raw`, its raw `Option`.
fn typed_value(p: &FieldPlan<'_>, raw: TokenStream) -> TokenStream {
    match &p.shape {
        Shape::Scalar(s) => convert(*s, raw),
        Shape::Enum(path) => quote!(
            #raw.and_then(|v| <#path as ::protozero::ProtoEnum>::from_i32(v as i32))
        ),
        Shape::Message { decoder, .. } => quote!(#raw.map(#decoder::new)),
    }
}

fn singular_accessors(
    p: &FieldPlan<'_>,
    id: &Literal,
    what: &str,
    a: &Access,
    counted: Option<&TokenStream>,
) -> TokenStream {
    let get = &p.d_get;
    let raw = singular_raw(p, id, a);
    let doc = format!("{what}; `None` when absent or malformed.");
    // The raw value the typed accessors read (a oneof member's as counted).
    let counted_raw = match counted {
        Some(slot) => oneof_raw(p, slot.clone()),
        None => raw.clone(),
    };
    let value = match (&p.shape, p.closed_enum, p.def.oneof) {
        (Shape::Enum(path), true, None) => closed_value(path, id, a, &raw),
        _ => match counted {
            Some(slot) => typed_value(p, oneof_raw(p, slot.clone())),
            None => typed_value(p, raw.clone()),
        },
    };
    match &p.shape {
        Shape::Scalar(s) => {
            let ty = match s {
                Scalar::String => quote!(&'a str),
                Scalar::Bytes => quote!(&'a [u8]),
                _ => scalar_info(*s).rust_ty,
            };
            let bytes = p.d_bytes.as_ref().map(|b| {
                let doc = format!("{what}, as raw bytes (not checked to be UTF-8).");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #b(&self) -> ::core::option::Option<&'a [u8]> {
                        #raw
                    }
                }
            });
            let doc = match (*s == Scalar::String, &p.d_try) {
                (true, Some(t)) => format!(
                    "{what}; `None` when absent or malformed, and when not UTF-8: [`Self::{}`] tells that apart as an error (prost refuses the message), [`Self::{}`] reads the bytes.",
                    t.to_string().trim_start_matches("r#"),
                    p.d_bytes
                        .as_ref()
                        .map(|b| b.to_string())
                        .unwrap_or_default()
                        .trim_start_matches("r#")
                ),
                (true, None) => format!("{what}; `None` when absent, malformed or not UTF-8."),
                _ => doc,
            };
            let try_fn = p.d_try.as_ref().map(|t| {
                let doc = format!(
                    "{what}, read strictly: `Ok(None)` when absent (or of another wire type, which `try_new` refuses), `Err(InvalidUtf8)` when it is not UTF-8."
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #t(&self) -> ::core::result::Result<::core::option::Option<&'a str>, ::protozero::DecodeError> {
                        ::protozero::__private::try_str(#id, #counted_raw)
                    }
                }
            });
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#ty> {
                    #value
                }
                #bytes
                #try_fn
            }
        }
        Shape::Enum(path) => {
            let in_oneof = p.def.oneof.is_some();
            let raw_fn = p.d_raw.as_ref().map(|raw_name| {
                let doc = format!(
                    "{what}, as the number on the wire (also when the enum does not name it); `None` when absent or malformed."
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #raw_name(&self) -> ::core::option::Option<i32> {
                        #raw.map(|v| v as i32)
                    }
                }
            });
            let see_raw = p
                .d_raw
                .as_ref()
                .map(|raw| {
                    format!(
                        " (see [`Self::{}`])",
                        raw.to_string().trim_start_matches("r#")
                    )
                })
                .unwrap_or_default();
            let doc = match (p.closed_enum, in_oneof) {
                (true, false) => format!(
                    "{what}; `None` when absent or malformed. Its enum is closed: an occurrence with a number the enum does not name is an unknown field, so the last occurrence it names is read, as protoc's C++ reads it{see_raw}."
                ),
                (true, true) => format!(
                    "{what}; `None` when absent or malformed, or when another member is set. Its enum is closed: an occurrence with a number the enum does not name is an unknown field, which leaves the oneof as it was, as protoc's C++ reads it{see_raw}."
                ),
                (false, _) => format!(
                    "{what}; `None` when absent, malformed or a number the enum does not name{see_raw}."
                ),
            };
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#path> {
                    #value
                }
                #raw_fn
            }
        }
        Shape::Message { decoder, .. } => {
            let what_bytes = if p.def.delimited {
                "as its encoded group contents (without the group tags)"
            } else {
                "as its encoded bytes"
            };
            let bytes = p.d_bytes.as_ref().map(|b| {
                let doc = format!("{what}, {what_bytes}.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #b(&self) -> ::core::option::Option<&'a [u8]> {
                        #raw
                    }
                }
            });
            let try_fn = p.d_try.as_ref().map(|t| {
                let doc = format!(
                    "{what}, read strictly: `Ok(None)` when absent, `Err` when its bytes are malformed or it has a declared field that does not fit (see `try_new`)."
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #t(&self) -> ::core::result::Result<::core::option::Option<#decoder<'a>>, ::protozero::DecodeError> {
                        match #counted_raw {
                            ::core::option::Option::Some(b) => #decoder::try_new(b).map(::core::option::Option::Some),
                            ::core::option::Option::None => ::core::result::Result::Ok(::core::option::Option::None),
                        }
                    }
                }
            });
            let all_fn = p.d_all.as_ref().map(|all| {
                let doc = format!(
                    "{what}: every occurrence on the wire, in order. The field is singular, so protobuf merges its occurrences (as prost does: scalars of later ones win, repeated fields append, nested messages merge in turn); [`Self::{}`] reads only the last one. Decoding the concatenation of these occurrences' bytes gives the merged message. Scans the message anew.",
                    get.to_string().trim_start_matches("r#")
                );
                let fields = match a {
                    Access::Slots { groups: true } => {
                        quote!(::protozero::RepeatedFields::new(self.buf, 0, #id).accept_groups())
                    }
                    Access::Slots { groups: false } => {
                        quote!(::protozero::RepeatedFields::new(self.buf, 0, #id))
                    }
                    Access::Table { dec } => quote!(#dec.repeated(#id)),
                };
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #all(&self) -> ::protozero::RepeatedMessages<'a, #decoder<'a>> {
                        ::protozero::RepeatedMessages::new(#fields)
                    }
                }
            });
            let doc = format!(
                "{what}; `None` when absent or malformed. When it occurs more than once, the last occurrence (protobuf merges them: see the `_all` accessor, where there is one)."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #get(&self) -> ::core::option::Option<#decoder<'a>> {
                    #value
                }
                #bytes
                #try_fn
                #all_fn
            }
        }
    }
}

fn repeated_accessors(p: &FieldPlan<'_>, id: &Literal, what: &str, a: &Access) -> TokenStream {
    let get = &p.d_get;
    if p.def.delimited {
        return repeated_groups(p, id, what, a);
    }
    let fields = repeated_raw(p, id, a);
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
                ::protozero::RepeatedScalars::new(#fields)
            }
        }
    });
    let bytes = p.d_bytes.as_ref().map(|b| {
        let doc = format!("{what}, as raw bytes.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #b(&self) -> ::protozero::RepeatedBytes<'a> {
                ::protozero::RepeatedBytes::new(#fields)
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #get(&self) -> #ty {
            #ctor(#fields)
        }
        #raw
        #bytes
    }
}

/// Repeated group fields: iterators over the elements' group contents
/// (elements with another wire type are skipped).
fn repeated_groups(p: &FieldPlan<'_>, id: &Literal, what: &str, a: &Access) -> TokenStream {
    let get = &p.d_get;
    let Shape::Message { decoder, .. } = &p.shape else {
        return TokenStream::new();
    };
    let fields = repeated_raw(p, id, a);
    let doc = format!("{what}: every element in order, each written as a group.");
    let capture = a.precise_capture().then(|| quote!(+ use<'a>));
    let bytes = p.d_bytes.as_ref().map(|b| {
        let doc = format!("{what}, as each element's group contents.");
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #b(&self) -> impl ::core::iter::Iterator<Item = &'a [u8]> #capture {
                #fields.filter_map(|f| f.as_group().ok())
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #get(&self) -> impl ::core::iter::Iterator<Item = #decoder<'a>> #capture {
            #fields.filter_map(|f| f.as_group().ok()).map(#decoder::new)
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

/// `which_x()`: the member seen last (protobuf's "last one wins" across a
/// oneof's members), read from the oneof's slot.
fn which_method(
    msg: &MessageDef,
    index: usize,
    method: &Ident,
    plans: &[FieldPlan<'_>],
    file: &str,
    groups: bool,
) -> Result<TokenStream, CodegenError> {
    let module = ident_in(file, &module_name(&msg.name))?;
    let enum_name = ident_in(file, &oneof_enum_name(msg, index))?;
    let lt = oneof_borrows(plans, index).then(|| quote!(<'a>));
    let oneof = &msg.oneofs[index].name;
    let o = slot("o", index as u32);
    let counted = counted_oneof(plans, index, groups);
    let doc = if counted.is_some() {
        format!(
            "Which member of oneof `{oneof}` is set (the last one on the wire wins; an occurrence of a closed enum member with a number its enum does not name is an unknown field and leaves the oneof as it was, as protoc's C++ reads it), with its value; `None` when none is, or when that member is malformed or an open enum member with a number the enum does not name."
        )
    } else {
        format!(
            "Which member of oneof `{oneof}` is set (the last one on the wire wins), with its value; `None` when none is, or when that member is malformed or an enum member with a number the enum does not name."
        )
    };
    let slot = counted.unwrap_or_else(|| quote!(self.#o));
    let mut arms = Vec::new();
    for p in plans.iter().filter(|p| p.def.oneof == Some(index)) {
        let id = Literal::u32_unsuffixed(p.def.number);
        let variant = oneof_variant(p, file)?;
        let (ex, _) = extract(p);
        let value = typed_value(p, quote!(::protozero::__private::#ex(v)));
        arms.push(quote! { #id => #value.map(#module::#enum_name::#variant), });
    }
    Ok(quote! {
        #[doc = #doc]
        #[inline]
        pub fn #method(&self) -> ::core::option::Option<#module::#enum_name #lt> {
            let s = #slot;
            let v = s.value();
            match s.id() {
                #(#arms)*
                _ => ::core::option::Option::None,
            }
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
