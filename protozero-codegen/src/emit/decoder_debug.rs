//! A generated decoder's `Debug`: the fields present, in field-number
//! order, under their `.proto` names, printed through the runtime's
//! `DebugFields` with the method each field's shape calls for.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use super::fields::{FieldPlan, Shape, scalar_info};
use crate::model::Scalar;

/// `Debug` for a decoder: the fields present, in field-number order, under
/// their `.proto` names, through the runtime's `DebugFields` (which documents
/// the format); fields the schema does not name are left out, marked `..`.
pub(super) fn debug_impl(name: &Ident, plans: &[FieldPlan<'_>]) -> TokenStream {
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
                let d = &self.typed_decoder();
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
