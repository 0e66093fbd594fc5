//! Emits a message's writer: a `#[repr(transparent)]` wrapper over
//! `protozero::Message` whose methods are one-line `#[inline]` calls of the
//! matching `append_*`, so using it costs the same as calling `Message`
//! directly with literal field numbers.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::fields::{FieldPlan, Shape, scalar_info};
use crate::error::CodegenError;
use crate::model::{MessageDef, Scalar};
use crate::names::{ident_in, type_name};

/// The writer struct, its inherent impl and its `MessageWriter` impl.
pub(crate) fn emit_writer(
    msg: &MessageDef,
    file: &str,
    plans: &[FieldPlan<'_>],
) -> Result<TokenStream, CodegenError> {
    let name = ident_in(file, &type_name(&msg.name))?;
    let full_name = &msg.full_name;
    let doc = format!(
        "Writer of message `{full_name}` (from `{file}`): each method appends one field to the output immediately."
    );
    let consts = plans.iter().map(|p| {
        let k = &p.konst;
        let n = Literal::u32_unsuffixed(p.def.number);
        let d = format!("Field number of `{}`.", p.def.name);
        quote! { #[doc = #d] pub const #k: u32 = #n; }
    });
    let recv = quote!(self.msg);
    let methods = plans.iter().map(|p| field_methods(msg, p, &recv));
    Ok(quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #[repr(transparent)]
        pub struct #name<'w> {
            msg: ::protozero::Message<'w>,
        }

        impl<'w> #name<'w> {
            #(#consts)*

            /// Wraps an open message: a root (`writer.root()`) or a nested one.
            #[inline]
            pub fn from_message(msg: ::protozero::Message<'w>) -> Self {
                Self { msg }
            }

            /// The underlying message, for fields this schema does not know.
            #[inline]
            pub fn message(&mut self) -> &mut ::protozero::Message<'w> {
                &mut self.msg
            }

            /// Unwraps the underlying message.
            #[inline]
            pub fn into_message(self) -> ::protozero::Message<'w> {
                self.msg
            }

            /// Closes the message (backfilling its length if nested); returns its size.
            #[inline]
            pub fn finalize(self) -> usize {
                self.msg.finalize()
            }

            #(#methods)*
        }

        impl<'w> ::protozero::MessageWriter<'w> for #name<'w> {
            const FULL_NAME: &'static str = #full_name;

            #[inline]
            fn from_message(msg: ::protozero::Message<'w>) -> Self {
                Self { msg }
            }

            #[inline]
            fn message(&mut self) -> &mut ::protozero::Message<'w> {
                &mut self.msg
            }
        }
    })
}

pub(crate) fn field_methods(msg: &MessageDef, p: &FieldPlan<'_>, m: &TokenStream) -> TokenStream {
    let k = &p.konst;
    let main = &p.w_main;
    let what = p.describe(msg);
    match &p.shape {
        Shape::Scalar(s) if p.def.packed => packed_scalar(p, *s, &what, m),
        Shape::Scalar(s) => {
            let info = scalar_info(*s);
            let ty = info.rust_ty;
            let append = info.append;
            let verb = if p.repeated() {
                "Appends one element of"
            } else {
                "Sets"
            };
            let doc = format!("{verb} {}.", lower_first(&what));
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #main(&mut self, value: #ty) -> &mut Self {
                    #m.#append(Self::#k, value);
                    self
                }
            }
        }
        Shape::Enum(path) => {
            let raw = p.w_raw.as_ref().map(|raw| {
                if p.def.packed {
                    let doc = format!("Writes {} from raw numbers, packed.", lower_first(&what));
                    quote! {
                        #[doc = #doc]
                        #[inline]
                        pub fn #raw(&mut self, values: impl ::core::iter::IntoIterator<Item = i32>) -> &mut Self {
                            #m.append_packed_int32(Self::#k, values);
                            self
                        }
                    }
                } else {
                    let doc = format!("{} by raw number (for values the schema does not name).", lead(p, &what));
                    quote! {
                        #[doc = #doc]
                        #[inline]
                        pub fn #raw(&mut self, value: i32) -> &mut Self {
                            #m.append_enum(Self::#k, value);
                            self
                        }
                    }
                }
            });
            let main_fn = if p.def.packed {
                let doc = format!("Writes {}.", lower_first(&what));
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #main(&mut self, values: impl ::core::iter::IntoIterator<Item = #path>) -> &mut Self {
                        #m.append_packed_int32(Self::#k, values.into_iter().map(|v| v as i32));
                        self
                    }
                }
            } else {
                let doc = format!("{}.", lead(p, &what));
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #main(&mut self, value: #path) -> &mut Self {
                        #m.append_enum(Self::#k, value as i32);
                        self
                    }
                }
            };
            quote! { #main_fn #raw }
        }
        Shape::Message { writer, .. } => {
            let verb = if p.repeated() {
                "Opens a new element of"
            } else {
                "Opens"
            };
            let doc = format!(
                "{verb} {}; it is closed when the returned writer is finalized or dropped.",
                lower_first(&what)
            );
            if p.def.delimited {
                let raw = p.w_raw.as_ref().map(|raw| {
                    let doc = format!(
                        "{} from already encoded group contents (the group tags are added).",
                        lead(p, &what)
                    );
                    quote! {
                        #[doc = #doc]
                        #[inline]
                        pub fn #raw(&mut self, encoded: &[u8]) -> &mut Self {
                            #m.append_tag(Self::#k, ::protozero::WireType::StartGroup);
                            #m.append_raw_bytes(encoded);
                            #m.append_tag(Self::#k, ::protozero::WireType::EndGroup);
                            self
                        }
                    }
                });
                let doc = format!("{} Written as a group (start/end tags, no length).", doc);
                return quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #main(&mut self) -> #writer<'_> {
                        #writer::from_message(#m.begin_group(Self::#k))
                    }
                    #raw
                };
            }
            let raw = p.w_raw.as_ref().map(|raw| {
                let doc = format!(
                    "{} from an already encoded message payload (no length prefix).",
                    lead(p, &what)
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #raw(&mut self, encoded: &[u8]) -> &mut Self {
                        #m.append_bytes(Self::#k, encoded);
                        self
                    }
                }
            });
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #main(&mut self) -> #writer<'_> {
                    #writer::from_message(#m.begin_nested(Self::#k))
                }
                #raw
            }
        }
    }
}

fn packed_scalar(p: &FieldPlan<'_>, s: Scalar, what: &str, m: &TokenStream) -> TokenStream {
    let k = &p.konst;
    let main = &p.w_main;
    let info = scalar_info(s);
    let ty = info.rust_ty;
    let doc = format!("Writes {} as one packed field.", lower_first(what));
    if let Some(fixed) = info.packed_fixed {
        return quote! {
            #[doc = #doc]
            #[inline]
            pub fn #main(&mut self, values: &[#ty]) -> &mut Self {
                #m.#fixed(Self::#k, values);
                self
            }
        };
    }
    let body = match s {
        Scalar::Int32 => quote!(#m.append_packed_int32(Self::#k, values)),
        Scalar::Sint32 => quote!(#m.append_packed_sint32(Self::#k, values)),
        Scalar::Sint64 => quote!(#m.append_packed_sint64(Self::#k, values)),
        Scalar::Uint64 => quote!(#m.append_packed_varint(Self::#k, values)),
        Scalar::Int64 => {
            quote!(#m.append_packed_varint(Self::#k, values.into_iter().map(|v| v as u64)))
        }
        _ => quote!(#m.append_packed_varint(Self::#k, values.into_iter().map(u64::from))),
    };
    quote! {
        #[doc = #doc]
        #[inline]
        pub fn #main(&mut self, values: impl ::core::iter::IntoIterator<Item = #ty>) -> &mut Self {
            #body;
            self
        }
    }
}

/// "Sets field …" or "Appends one element of field …".
fn lead(p: &FieldPlan<'_>, what: &str) -> String {
    if p.repeated() {
        format!("Appends one element of {}", lower_first(what))
    } else {
        format!("Sets {}", lower_first(what))
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
