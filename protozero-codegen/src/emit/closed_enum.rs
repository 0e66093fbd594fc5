//! Closed enums (proto2's, editions' `CLOSED`) as protoc's C++ reads
//! them: an occurrence with a number the enum does not name is an unknown
//! field, so a field keeps its previous named value and a oneof its
//! previous member. The decoder's pass keeps the last occurrence on the
//! wire; these expressions recover what counts in the rare case it is
//! unnamed.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::access::{Access, slot};
use super::fields::{FieldPlan, Shape};

/// Whether the raw value `v` (a `u64` varint) is a number closed enum
/// field `p`'s enum does not name: such an occurrence is an unknown field.
pub(super) fn unnamed(p: &FieldPlan<'_>, v: TokenStream) -> TokenStream {
    match &p.shape {
        Shape::Enum(path) => {
            quote!(<#path as ::protozero::ProtoEnum>::from_i32(#v as i32).is_none())
        }
        _ => quote!(false),
    }
}

/// Oneof `k`'s slot as its typed accessors read it, when a member is of a
/// closed enum: protoc's C++ reads an occurrence with a number the enum does
/// not name as an unknown field, which leaves the oneof as it was, so when
/// the last member on the wire is such an occurrence the last counting one
/// is found anew (`recount_oneof`). `None` when no member is of a closed enum
/// (the slot as the pass left it).
pub(super) fn counted_oneof(
    plans: &[FieldPlan<'_>],
    k: usize,
    groups: bool,
) -> Option<TokenStream> {
    let members: Vec<&FieldPlan<'_>> = plans.iter().filter(|p| p.def.oneof == Some(k)).collect();
    if !members.iter().any(|p| p.closed_enum) {
        return None;
    }
    let ids = members
        .iter()
        .map(|p| Literal::u32_unsuffixed(p.def.number));
    let arms = members.iter().filter(|p| p.closed_enum).map(|p| {
        let id = Literal::u32_unsuffixed(p.def.number);
        let unnamed = unnamed(p, quote!(v));
        quote!(#id => !matches!(::protozero::__private::varint(v), ::core::option::Option::Some(v) if #unnamed),)
    });
    let o = slot("o", k as u32);
    Some(quote!(::protozero::__private::recount_oneof(
        self.buf,
        #groups,
        self.#o,
        &[#(#ids),*],
        |id, v| match id {
            #(#arms)*
            _ => true,
        },
    )))
}

/// The typed value of singular closed enum field `id` (not in a oneof),
/// whose enum is `path`, from `raw`, its last occurrence on the wire: when
/// that is a number the enum does not name (an unknown field, as protoc's
/// C++ reads it) the last named occurrence counts, found anew (a rare path).
pub(super) fn closed_value(
    path: &TokenStream,
    id: &Literal,
    a: &Access,
    raw: &TokenStream,
) -> TokenStream {
    let occurrences = match a {
        Access::Slots { .. } => quote!(self.typed_decoder().repeated(#id)),
        Access::Table { dec } => quote!(#dec.repeated(#id)),
    };
    quote!(match #raw {
        ::core::option::Option::Some(v) => {
            match <#path as ::protozero::ProtoEnum>::from_i32(v as i32) {
                ::core::option::Option::Some(e) => ::core::option::Option::Some(e),
                ::core::option::Option::None => #occurrences
                    .filter_map(|f| ::protozero::__private::varint(f.value))
                    .filter_map(|v| <#path as ::protozero::ProtoEnum>::from_i32(v as i32))
                    .last(),
            }
        }
        ::core::option::Option::None => ::core::option::Option::None,
    })
}
