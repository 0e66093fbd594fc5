//! Perfetto-compatible protobuf schemas and the protozero code generated from
//! them, so the rest of zerotrace writes and reads Perfetto's wire format
//! through typed methods instead of raw field numbers.
//!
//! The `.proto` files live in `protos/proto` (package `perfetto.protos`, the
//! same messages, fields and numbers as Perfetto). The Rust code under
//! `src/generated` is produced by `cargo xtask codegen` and checked in;
//! `cargo xtask codegen --check` and the test `generated_code_is_fresh` fail
//! when it is stale.
//!
//! Per message `Foo` there is a writer `Foo<'w>` and a decoder `FooDecoder<'a>`:
//!
//! ```
//! use zerotrace_protos::protos::{TracePacket, TracePacketDecoder};
//!
//! let mut w = protozero::HeapWriter::new();
//! {
//!     let mut packet = TracePacket::from_message(w.root());
//!     packet.set_timestamp(1234);
//!     packet.begin_track_event().set_name("my slice");
//! }
//! let bytes = w.finish().unwrap();
//! let packet = TracePacketDecoder::new(&bytes);
//! assert_eq!(packet.timestamp(), Some(1234));
//! assert_eq!(packet.track_event().and_then(|e| e.name()), Some("my slice"));
//! ```

// Formatted by prettyplease at generation time; `cargo xtask codegen --check`
// compares bytes, so rustfmt must not touch it.
#[rustfmt::skip]
mod generated;

pub use generated::{FILE_DESCRIPTOR_SET, perfetto};

/// Shorthand for [`perfetto::protos`], the package every Perfetto schema uses.
pub use generated::perfetto::protos;
