//! How generated accessors reach a field's value: through the decoder's own
//! slots or through a `TypedDecoder` table, and the names of those slots. The
//! decoder, the fast pass and the closed-enum emitters all speak this
//! vocabulary, so it stands apart from each of them.

use proc_macro2::{Ident, TokenStream};
use quote::format_ident;

/// Where generated accessor bodies find a field's value.
pub(crate) enum Access {
    /// The decoder's own slots, filled by its pass (`groups`: the schema has
    /// groups, so repeated fields are scanned with a group-aware reader).
    Slots { groups: bool },
    /// Lookups in a `protozero::TypedDecoder` (extension traits, whose
    /// fields the extended decoder has no slots for): `dec` is an
    /// expression of that type.
    Table { dec: TokenStream },
}

impl Access {
    /// Iterator-returning accessors say `+ use<'a>` (not in trait items,
    /// where precise capturing needs a newer compiler than our MSRV).
    pub(super) fn precise_capture(&self) -> bool {
        matches!(self, Access::Slots { .. })
    }
}

/// The name of a decoder slot: `prefix` says its kind (`f` singular, `r`
/// repeated, `o` oneof) and `n` the field number or oneof index.
pub(super) fn slot(prefix: &str, n: u32) -> Ident {
    format_ident!("{}{}", prefix, n)
}
