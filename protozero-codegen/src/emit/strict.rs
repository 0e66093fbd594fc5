//! What the strict paths of generated code (`FooDecoder::try_new`,
//! `FooField::try_read`, see the runtime's `strict` module) expect of each
//! declared field: the `protozero::__private::Expect` a field's occurrences
//! are checked against, and the check as a statement of a decoder's pass.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::fields::{FieldPlan, Shape};
use crate::model::Scalar;

/// The `Expect` value every occurrence of field `p` is checked against.
pub(crate) fn expect(p: &FieldPlan<'_>) -> TokenStream {
    let e = quote!(::protozero::__private::Expect);
    let layout = quote!(::protozero::PackedLayout);
    let (single, packed) = match &p.shape {
        Shape::Message { .. } if p.def.delimited => return quote!(#e::Group),
        Shape::Message { .. } => return quote!(#e::Bytes),
        Shape::Scalar(Scalar::String) => return quote!(#e::Utf8),
        Shape::Scalar(Scalar::Bytes) => return quote!(#e::Bytes),
        Shape::Enum(_) => (quote!(Varint), quote!(Varint)),
        Shape::Scalar(s) => match s {
            Scalar::Fixed32 | Scalar::Sfixed32 | Scalar::Float => {
                (quote!(Fixed32), quote!(Fixed32))
            }
            Scalar::Fixed64 | Scalar::Sfixed64 | Scalar::Double => {
                (quote!(Fixed64), quote!(Fixed64))
            }
            _ => (quote!(Varint), quote!(Varint)),
        },
    };
    if p.repeated() {
        quote!(#e::Packable(#layout::#packed))
    } else {
        quote!(#e::#single)
    }
}

/// The statement a decoder's pass runs before keeping occurrence `f` of
/// field `p`: when the pass is strict (`STRICT`), a field that does not fit
/// its declaration ends the pass with the error kept.
pub(crate) fn pass_check(p: &FieldPlan<'_>) -> TokenStream {
    let expect = expect(p);
    quote! {
        if STRICT && !::protozero::__private::fits(&f, #expect, &mut d.error) {
            break;
        }
    }
}

/// The body of a field enum's `FieldEnum::check`: a `match` on the number,
/// each declared field checked against its `Expect`.
pub(crate) fn check_body(plans: &[FieldPlan<'_>]) -> TokenStream {
    if plans.is_empty() {
        return quote! {
            let _ = field;
            ::core::result::Result::Ok(())
        };
    }
    let arms = plans.iter().map(|p| {
        let id = Literal::u32_unsuffixed(p.def.number);
        let expect = expect(p);
        quote!(#id => ::protozero::__private::check(field, #expect),)
    });
    quote! {
        match field.id {
            #(#arms)*
            _ => ::core::result::Result::Ok(()),
        }
    }
}
