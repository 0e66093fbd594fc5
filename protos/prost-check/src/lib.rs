//! Reference `prost` types for zerotrace's Perfetto-compatible schemas.
//!
//! Built at compile time (see `build.rs`) from `protos/proto`, the same files
//! `zerotrace-protos` is generated from, by an independent protobuf
//! implementation. The round-trip property tests of this crate compare the
//! two: bytes from our generated writers must decode with prost, and prost's
//! bytes must decode with our generated decoders, to the same values.

/// prost's rendering of package `perfetto.protos`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod protos {
    include!(concat!(env!("OUT_DIR"), "/perfetto.protos.rs"));
}
