//! `#[derive(ProtoWrite)]` and `#[derive(ProtoRead)]`: plain Rust types as
//! protobuf messages, written through protozero and read back zero-copy.
//!
//! A data source that defines its payload in Rust rather than in a `.proto`
//! file still wants protozero's properties: the writer appends straight into
//! the trace buffer's `Message` (no intermediate buffer, no allocation), and
//! the reader borrows strings and bytes from the input. These derives generate
//! exactly that code against the traits in `protozero` (`ProtoWrite`, `ProtoRead`); use
//! them through `protozero` with its `derive` feature.
//!
//! # A custom payload inside a TracePacket
//!
//! The packet itself is written with raw `Message` calls (timestamp is field
//! 8 of TracePacket); the payload goes under a field number from Perfetto's
//! range for out-of-tree extensions (1000–1999).
//!
//! ```
//! use protozero::{HeapWriter, ProtoRead, ProtoWrite};
//!
//! /// One sample of a GPU frequency counter, defined in Rust.
//! #[derive(ProtoWrite, ProtoRead, Debug, PartialEq)]
//! struct GpuFreqSample<'a> {
//!     #[proto(tag = 1)]
//!     gpu: &'a str,
//!     #[proto(tag = 2)]
//!     khz: u32,
//!     #[proto(tag = 3, sint, packed)]
//!     deltas: Vec<i32>,
//!     #[proto(tag = 4)]
//!     governor: Option<Governor>,
//! }
//!
//! /// A protobuf enum: numbers come from the discriminants.
//! #[derive(ProtoWrite, ProtoRead, Debug, PartialEq, Clone, Copy)]
//! enum Governor {
//!     Unknown = 0,
//!     Performance = 1,
//!     Powersave = 2,
//! }
//!
//! /// The subset of TracePacket this reader cares about; other fields are skipped.
//! #[derive(ProtoRead)]
//! struct PacketView<'a> {
//!     #[proto(tag = 8)]
//!     timestamp: u64,
//!     #[proto(tag = 1000)]
//!     gpu_freq: Option<GpuFreqSample<'a>>,
//! }
//!
//! let sample = GpuFreqSample {
//!     gpu: "gpu0",
//!     khz: 585_000,
//!     deltas: vec![-3, 0, 12],
//!     governor: Some(Governor::Powersave),
//! };
//!
//! let mut w = HeapWriter::new();
//! {
//!     let mut packet = w.root();
//!     packet.append_uint64(8, 1_000_000); // TracePacket.timestamp
//!     sample.write_nested(&mut packet, 1000); // our payload, in place
//! }
//! let bytes = w.finish()?;
//!
//! let view = PacketView::decode(&bytes)?;
//! assert_eq!(view.timestamp, 1_000_000);
//! let got = view.gpu_freq.expect("payload present");
//! assert_eq!(got, sample);
//! // `got.gpu` borrows from `bytes`: nothing was copied.
//! assert!(bytes.as_ptr_range().contains(&got.gpu.as_ptr()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Field attributes
//!
//! | attribute | meaning |
//! |---|---|
//! | `#[proto(tag = N)]` | field number, 1..=2^29−1 (not 19000–19999); required |
//! | `sint` | `i32`/`i64` as `sint32`/`sint64` (zigzag) |
//! | `fixed` | `u32`/`u64`/`i32`/`i64` as `fixed32`/`fixed64`/`sfixed32`/`sfixed64` |
//! | `packed` | write a repeated number/bool/enum field packed |
//! | `repeated` | treat a collection type the macro does not know as repeated |
//! | `oneof` | an `Option<E>` field where `E` is a oneof enum (no `tag`) |
//! | `skip` | not part of the message (`Default` when decoding) |
//!
//! The container accepts `#[proto(crate = "path")]` when `protozero` is
//! reachable under another name.
//!
//! # Types
//!
//! * Scalars: `u32`, `u64`, `i32`, `i64` (with `sint`/`fixed`), `bool`, `f32`,
//!   `f64`. Strings: `&'a str`, `String`, `Cow<'a, str>` (and `Box<str>` for
//!   writing). Bytes: `&'a [u8]`, `Vec<u8>`, `Cow<'a, [u8]>` (and `[u8; N]`,
//!   `Box<[u8]>` for writing).
//! * A plain field is omitted when it holds its default (0, `false`, empty,
//!   the first enum variant; `-0.0` is written), as proto3 does. `Option<T>`
//!   gives explicit presence. Message-typed fields are always written.
//! * Repeated: `Vec<T>`, `&'a [T]`, `[T; N]`, `Box<[T]>` and, with
//!   `repeated`, any collection `C` where `&C: IntoIterator<Item = &T>`
//!   (decoding also needs `C: Default + Extend<T>`).
//! * Nested messages: any type deriving these macros, also as
//!   `Option<T>`, `Box<T>` (for recursion) and repeated.
//! * Enums of unit variants are protobuf enums: the discriminant is the
//!   number, the first variant is the default, and numbers the Rust enum does
//!   not know are skipped when decoding (proto2 closed-enum behaviour).
//! * Enums whose variants each hold one value, each with
//!   `#[proto(tag = N)]` (and optionally `sint`/`fixed`), are oneofs.
//!
//! # Decoding and the choice for repeated fields
//!
//! `ProtoRead` needs at most one lifetime, the lifetime of the input. A
//! repeated field can be decoded two ways, and the field's type picks:
//!
//! * `Vec<T>` decodes every element eagerly (one allocation per field),
//!   reports any malformed element from `decode`, and is the simple default.
//! * `protozero::Repeated<'a, T>` allocates nothing: `decode` only checks
//!   the wire types and remembers where the field starts; iterating decodes
//!   elements on demand and yields `Result<T, ReadError>` items, so
//!   element-level errors surface there. Use it for large or rarely read lists.
//!
//! Decoding follows protobuf: last one wins for singular scalars, repeated
//! occurrences of a singular message merge, repeated fields accept packed and
//! unpacked input, unknown fields are skipped. Malformed input is a
//! `ReadError` carrying the path of fields down to the problem; nesting
//! deeper than 100 messages is an error, never a stack overflow.
//!
//! Mistakes in the type definition are compile errors on the offending
//! token: duplicate or out-of-range field numbers, missing `tag`, types
//! protobuf cannot express, option combinations that make no sense.

mod expand;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Implements `protozero::ProtoWrite` for a struct (and `ProtoEncode`, so it
/// can be nested), `ProtoOneofWrite` for a oneof enum, or `ProtoEncode` for
/// a C-like enum. See the crate docs for the attributes.
#[proc_macro_derive(ProtoWrite, attributes(proto))]
pub fn derive_proto_write(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_write(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `protozero::ProtoRead` for a struct (and `ProtoDecode`, so it
/// can be nested), `ProtoOneofRead` for a oneof enum, or `ProtoDecode` for a
/// C-like enum. See the crate docs for the attributes.
#[proc_macro_derive(ProtoRead, attributes(proto))]
pub fn derive_proto_read(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_read(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
