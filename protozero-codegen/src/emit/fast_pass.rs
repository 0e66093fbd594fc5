//! The fast path of a decoder's pass: the field's tag decoded and matched
//! whole (number and wire type at once, as a hand-written scanner does)
//! against the tags the message's declared fields are written with, each
//! value read straight into its slot (the runtime's `fast_read`). A tag
//! that is not one of them (an undeclared field, another wire type, a
//! group) or a value the readers decline (malformed bytes) falls through
//! to the generic path after it, which reads it as before, so the slots end
//! up exactly as the generic path alone would leave them.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::access::slot;
use super::fields::{FieldPlan, Shape};
use crate::model::Scalar;

/// How a value of one wire type is read, and how it becomes a `FieldValue`.
struct Read {
    wire_type: u64,
    reader: TokenStream,
    variant: TokenStream,
}

fn read(wire_type: u64) -> Read {
    let (reader, variant) = match wire_type {
        0 => (quote!(read_varint), quote!(Varint)),
        1 => (quote!(read_fixed64), quote!(Fixed64)),
        5 => (quote!(read_fixed32), quote!(Fixed32)),
        _ => (quote!(read_bytes), quote!(Bytes)),
    };
    Read {
        wire_type,
        reader,
        variant,
    }
}

/// The wire type field `p`'s elements are written with, `None` for a
/// group (left to the generic path).
fn element_wire_type(p: &FieldPlan<'_>) -> Option<u64> {
    match &p.shape {
        Shape::Message { .. } if p.def.delimited => None,
        Shape::Message { .. } | Shape::Scalar(Scalar::String | Scalar::Bytes) => Some(2),
        Shape::Enum(_) => Some(0),
        Shape::Scalar(s) => Some(match s {
            Scalar::Fixed32 | Scalar::Sfixed32 | Scalar::Float => 5,
            Scalar::Fixed64 | Scalar::Sfixed64 | Scalar::Double => 1,
            _ => 0,
        }),
    }
}

/// One fast-path arm: the tag it matches, whether only the lenient pass
/// takes it, and its body (reads the value, stores it and `continue`s the
/// pass; a declined read falls through).
struct Arm {
    tag: Literal,
    lenient_only: bool,
    body: TokenStream,
}

/// The arms for field `p`: one per wire type it is written with (a
/// packable repeated field's packed runs too). A string's arm is taken only
/// by the lenient pass (the strict one checks UTF-8 on the generic path).
fn arms(p: &FieldPlan<'_>) -> Vec<Arm> {
    let Some(wt) = element_wire_type(p) else {
        return Vec::new();
    };
    let mut reads = vec![read(wt)];
    let packable = match &p.shape {
        Shape::Scalar(s) => s.is_packable(),
        Shape::Enum(_) => true,
        Shape::Message { .. } => false,
    };
    if p.repeated() && packable {
        reads.push(read(2));
    }
    let lenient_only = matches!(p.shape, Shape::Scalar(Scalar::String));
    let number = p.def.number;
    let id = Literal::u32_unsuffixed(number);
    reads
        .into_iter()
        .map(|r| {
            let tag = Literal::u64_unsuffixed(u64::from(number) << 3 | r.wire_type);
            let reader = &r.reader;
            let variant = &r.variant;
            let store = if p.repeated() {
                let s = slot("r", number);
                quote!(d.#s.add(pos, next))
            } else if let Some(k) = p.def.oneof {
                let s = slot("o", k as u32);
                quote!(d.#s = ::protozero::__private::OneofSlot::of(
                    #id,
                    ::protozero::FieldValue::#variant(v),
                ))
            } else {
                let s = slot("f", number);
                quote!(d.#s = ::core::option::Option::Some(v))
            };
            let value = if p.repeated() { quote!(_) } else { quote!(v) };
            let body = quote! {
                if let ::core::option::Option::Some((#value, next)) =
                    ::protozero::__private::#reader(buf, after)
                {
                    #store;
                    pos = next;
                    continue;
                }
            };
            Arm {
                tag,
                lenient_only,
                body,
            }
        })
        .collect()
}

/// The fast path, a statement at the top of the pass's loop (empty for a
/// message without fields the fast path reads; one `if let` for one tag).
pub(crate) fn fast_path(plans: &[FieldPlan<'_>]) -> TokenStream {
    let arms: Vec<Arm> = plans.iter().flat_map(arms).collect();
    let tag = quote!(::protozero::__private::read_varint(buf, pos));
    match arms.as_slice() {
        [] => TokenStream::new(),
        [one] => {
            let (t, body) = (&one.tag, &one.body);
            let read = if one.lenient_only {
                quote!(#tag.filter(|_| !STRICT))
            } else {
                tag
            };
            quote! {
                if let ::core::option::Option::Some((#t, after)) = #read {
                    #body
                }
            }
        }
        many => {
            let arms = many.iter().map(|a| {
                let (t, body) = (&a.tag, &a.body);
                let guard = a.lenient_only.then(|| quote!(if !STRICT));
                quote!(#t #guard => { #body })
            });
            quote! {
                if let ::core::option::Option::Some((tag, after)) = #tag {
                    match tag {
                        #(#arms)*
                        _ => {}
                    }
                }
            }
        }
    }
}
