//! Perfetto-compatible protobuf schemas and the protozero code generated from
//! them, so the rest of zerotrace writes and reads Perfetto's wire format
//! through typed methods instead of raw field numbers. This is zerotrace's
//! one schema library: every crate (the service and SDK, the probes, the
//! heap profiler, the command, the tests and fuzzers) takes its messages
//! from here, and each message is generated once.
//!
//! The code comes from two sources, generated as one schema by the schema
//! pipeline (`protos/pipeline`, run by `cargo xtask codegen`):
//!
//! * our schemas in `protos/proto` (package `perfetto.protos`, the same
//!   messages, fields and numbers as Perfetto; only what the service and
//!   SDK write or act on), into `src/generated/perfetto/`;
//! * the upstream set: Perfetto's own files for the probes' configs and
//!   packets (ftrace, with `FtraceEvent` cut down to the events the probes
//!   translate; process tree and stats; sys stats; CPU info), the perf
//!   profiling packets and pprof's `profile.proto`, read from the pinned
//!   `perfetto_protos` crate (never copied in), into `src/generated/upstream/`.
//!
//! A message both sources declare is generated from the definition with
//! every field of the other; today those are `profile_common.proto`'s
//! (ours: its `Frame` has fields upstream v51 lacks) and `ProfilePacket`
//! (alike; ours). Both sources share the package, so every message is in
//! [`protos`], whichever file declared it; pprof's are in [`pprof`].
//! [`upstream_tables`] holds what the pipeline reads from upstream's schema
//! as data (field numbers of messages not generated whole, field lists).
//! [`FILE_DESCRIPTOR_SET`] describes `protos/proto`'s files only.
//!
//! The generated code is checked in; `cargo xtask codegen --check` and the
//! test `generated_code_is_fresh` fail when it is stale.
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

pub mod meminfo_keys;
pub mod upstream_tables;

pub use generated::{FILE_DESCRIPTOR_SET, perfetto};

/// Shorthand for [`perfetto::protos`], the package every Perfetto schema uses.
pub use generated::perfetto::protos;

/// pprof's `profile.proto` (package `perftools.profiles` upstream; Perfetto
/// ships it as `perfetto.third_party.perftools.profiles`, the same wire
/// format), as the command's `--pprof` output writes it.
pub mod pprof {
    pub use crate::generated::perfetto::third_party::perftools::profiles::*;
}
