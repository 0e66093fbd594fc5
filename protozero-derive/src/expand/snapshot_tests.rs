//! Snapshot tests of the generated code: representative inputs go through the
//! expansion functions and `prettyplease`, and the result is compared with
//! the reviewed snapshots in `snapshots/` (update with `cargo insta review`
//! or `INSTA_UPDATE=always`).

use proc_macro2::TokenStream;
use syn::DeriveInput;

fn pretty(tokens: syn::Result<TokenStream>) -> String {
    let tokens = tokens.unwrap_or_else(|e| panic!("expansion failed: {e}"));
    let file: syn::File =
        syn::parse2(tokens).unwrap_or_else(|e| panic!("expansion is not valid Rust: {e}"));
    prettyplease::unparse(&file)
}

fn both(input: DeriveInput) -> String {
    let write = pretty(super::derive_write(&input));
    let read = pretty(super::derive_read(&input));
    format!("// ---- ProtoWrite ----\n{write}\n// ---- ProtoRead ----\n{read}")
}

#[test]
fn message_with_every_shape() {
    let input: DeriveInput = syn::parse_quote! {
        struct Event<'a> {
            #[proto(tag = 1)]
            id: u64,
            #[proto(tag = 2, sint)]
            delta: i32,
            #[proto(tag = 3)]
            name: &'a str,
            #[proto(tag = 4)]
            parent: Option<Inner<'a>>,
            #[proto(tag = 5, packed, fixed)]
            stamps: Vec<u32>,
            #[proto(tag = 6)]
            children: Vec<Inner<'a>>,
            #[proto(tag = 7, repeated)]
            queue: VecDeque<u32>,
            #[proto(oneof)]
            payload: Option<Payload<'a>>,
            #[proto(skip)]
            cache: u32,
        }
    };
    insta::assert_snapshot!(both(input));
}

#[test]
fn oneof_enum() {
    let input: DeriveInput = syn::parse_quote! {
        enum Payload<'a> {
            #[proto(tag = 10)]
            Text(&'a str),
            #[proto(tag = 11, sint)]
            Delta(i64),
            #[proto(tag = 12)]
            Nested(Inner<'a>),
        }
    };
    insta::assert_snapshot!(both(input));
}

#[test]
fn c_like_enum() {
    let input: DeriveInput = syn::parse_quote! {
        enum Level {
            Info = 0,
            Warn = 1,
            Error = -1,
        }
    };
    insta::assert_snapshot!(both(input));
}

#[test]
fn lazy_reader() {
    let input: DeriveInput = syn::parse_quote! {
        struct View<'a> {
            #[proto(tag = 1)]
            items: Repeated<'a, Item<'a>>,
            #[proto(tag = 2, sint)]
            deltas: Repeated<'a, i64>,
        }
    };
    insta::assert_snapshot!(pretty(super::derive_read(&input)));
}

#[test]
fn tuple_struct_without_lifetime_and_renamed_crate() {
    let input: DeriveInput = syn::parse_quote! {
        #[proto(crate = "pz")]
        struct Point(#[proto(tag = 1)] String, #[proto(tag = 2, packed)] Vec<u32>);
    };
    insta::assert_snapshot!(both(input));
}

#[test]
fn invalid_inputs_are_errors_not_panics() {
    let cases: [DeriveInput; 4] = [
        syn::parse_quote!(
            struct A {
                x: u32,
            }
        ),
        syn::parse_quote!(
            struct B {
                #[proto(tag = 1)]
                x: u32,
                #[proto(tag = 1)]
                y: u32,
            }
        ),
        syn::parse_quote!(union C { x: u32 }),
        syn::parse_quote!(
            struct D<T> {
                #[proto(tag = 1)]
                x: T,
            }
        ),
    ];
    for input in cases {
        assert!(super::derive_write(&input).is_err(), "{}", input.ident);
        assert!(super::derive_read(&input).is_err(), "{}", input.ident);
    }
}
