//! Side-by-side protobuf **decode** benchmark: how fast zerotrace's
//! generated zero-copy decoders read real traces next to prost,
//! quick-protobuf, rust-protobuf and a hand-written floor, all on the same
//! schema (`protos/proto`, root `perfetto/trace/trace.proto`) and the same
//! bytes ([`data`]). It depends on no crate above `zerotrace-protos`: the
//! traces recorded through zerotrace's service are files that
//! `cargo xtask decode-data` writes.
//!
//! # Libraries
//!
//! | module | library | how it decodes |
//! |---|---|---|
//! | [`floor`] | none: a hand-written tag/varint scanner | visits exactly the fields the tasks read, nothing else; the physical limit |
//! | [`ours`] | `zerotrace-protos`' generated random-access decoders (`FooDecoder`) | zero-copy, lazy: only the messages it is asked about, through the public accessors |
//! | [`ours_fields`] | `zerotrace-protos`' generated field enums (`FooField::read`) | zero-copy, one scan per message, a `match` per field |
//! | [`prost_decode`] | prost 0.14 (types of `zerotrace-protos-prost-check`) | owned: the whole packet into `String`s and `Vec`s |
//! | [`quick_protobuf_decode`] | quick-protobuf 0.8 (code by pb-rs 0.10, see `build.rs`) | borrowed: the whole packet, strings as `Cow::Borrowed` |
//! | [`rust_protobuf_decode`] | rust-protobuf 3.7 (code by protobuf-codegen 3.7, pure parser) | owned: the whole packet |
//!
//! The three owned decoders share one harness ([`owned`]): the walk over
//! the packets and the visit of every field the tasks read are written
//! once, so their rows read the very same subtrees; each library only
//! decodes and spells its oneofs.
//!
//! # Tasks
//!
//! Each library implements both as `fn(&[&[u8]]) -> u64` over a trace's
//! packets ([`data::packets`]), returning a [`Checksum`]:
//!
//! - **full** (`full`): decode every packet and read every field of
//!   `TracePacket`, `TrackEvent`, `DebugAnnotation` (recursively: its
//!   `dict_entries`, `array_values` and `nested_value`, and every field of
//!   `NestedValue`, recursively), `SourceLocation` (`TrackEvent.source_location`)
//!   and `InternedData` with every field of the messages in its tables
//!   (`EventCategory`, `EventName`, `DebugAnnotationName`,
//!   `DebugAnnotationValueTypeName`, `InternedString`, `Mapping`, `Frame`,
//!   `Callstack`, `SourceLocation`, `UnsymbolizedSourceLocation`,
//!   `LogMessageBody`), and `TestEvent` (`TracePacket.for_testing`, the bulk
//!   of the genuine SDK trace) with every message under it (`TestPayload`
//!   recursively, with its `DebugAnnotation`s, and the ProtoVM patch and
//!   state messages), so every row decodes the same subtrees as prost, which
//!   decodes the whole packet. The other message-typed fields (of
//!   `TracePacket`: `track_descriptor`, `clock_snapshot`, `trace_config`,
//!   ..., `trace_packet_defaults`; of `TrackEvent`: `callstack`,
//!   `task_execution`, `log_message`, `legacy_event`) only count as present.
//!   The probes' packets (`ftrace_events`, `process_tree`, `sys_stats`) are
//!   fields `protos/proto`'s `TracePacket` does not declare, so every
//!   library, prost included, skips them as unknown fields.
//!   Strings are read as `&str` (UTF-8 checked), repeated fields element by
//!   element, enums as their number.
//! - **lazy** (`lazy`): per packet only `TracePacket.timestamp` and the
//!   `TrackEvent`'s name: `name_iid` if set, else the string `name`. This is
//!   what a user who wants one field writes with each library: prost,
//!   quick-protobuf and rust-protobuf decode the whole packet anyway; ours
//!   and the floor skip the rest.
//!
//! # Checksum rule
//!
//! The checksum is the wrapping (mod 2^64) sum, over every value a task
//! reads, of `1 + weight(value)`:
//!
//! - integers and enums: the value converted to `u64` by `as` from its
//!   declared Rust type (`int32`/enums as `i32`, so negative numbers
//!   sign-extend; `uint32` as `u32`; `int64`, `uint64`, `fixed64` as is);
//! - `bool`: 0 or 1; `double`: `f64::to_bits`;
//! - `string` and `bytes`: the length in bytes;
//! - a message: 0 (so a present message adds 1, plus what its fields add
//!   when the task reads them).
//!
//! A value is read when present on the wire: singular fields when set, each
//! element of a repeated field, the member of a oneof that is set. The `1 +`
//! makes zeros, `false` and empty strings count. The order of the values
//! does not matter (each library visits in its own order), and a packet a
//! library refuses to decode adds nothing. All five must agree on both data
//! sets (`tests/agree.rs`), which is what keeps the bench honest.
//!
//! # Where the libraries differ (none of it occurs in the data sets)
//!
//! - **UTF-8**: ours and the floor check exactly the strings the task reads
//!   (ours when an accessor returns `&str`: an invalid string reads as
//!   `None`; the floor refuses the packet). prost, quick-protobuf and
//!   rust-protobuf decode the whole packet and check every `string` field
//!   in it, also inside the messages the tasks only count as present (e.g.
//!   `trace_config`, `track_descriptor`, `for_testing`), and refuse the
//!   whole packet on invalid UTF-8 (ours' `try_` paths report it).
//! - **Packed repeated scalars** of fields declared unpacked (proto2's
//!   default, every repeated scalar here): ours, prost, rust-protobuf and
//!   the floor accept both encodings; quick-protobuf's generated code
//!   matches only the unpacked tag and skips packed payloads as unknown.
//! - **Unknown enum numbers**: quick-protobuf maps them to the enum's
//!   default (0); the others keep the number.
//! - **Oneofs**: the owned decoders keep the last member on the wire; ours
//!   and the floor read every member present (for the full task).
//! - **Repeated singular message fields** (legal protobuf: merged): prost
//!   and rust-protobuf merge them, quick-protobuf and ours keep the last
//!   (ours offers every occurrence through the `_all` accessors, to merge).
//! - **Malformed input**: the tasks use ours' lenient paths (`new`, `read`),
//!   which never fail (a malformed field reads as absent); the strict ones
//!   (`try_new`, `try_read`) refuse as the others refuse the packet. A known field with an
//!   unexpected wire type reads as absent with ours, is skipped as unknown
//!   by quick-protobuf, rust-protobuf and the floor (which match on the
//!   whole tag), and makes prost refuse the packet.

//!
//! # Running
//!
//! ```sh
//! cargo xtask decode-data                                   # records the data sets, first
//! cargo bench -p zerotrace-decode-bench --bench decode -- --warm-up-time 1 --measurement-time 3
//! python3 protos/decode-bench/benches/decode_ratios.py   # MB/s and ratios to the floor
//! cargo test -p zerotrace-decode-bench                      # the libraries agree
//! ```

pub mod data;
pub mod floor;
pub mod generated;
pub mod ours;
pub mod ours_fields;
pub mod owned;
pub mod prost_decode;
pub mod quick_protobuf_decode;
pub mod rust_protobuf_decode;

/// A task run by one library over a trace's packets, returning its checksum.
pub type TaskFn = fn(&[&[u8]]) -> u64;

/// The libraries compared, by the names the bench reports, with their
/// `full` and `lazy` tasks; the floor first.
pub const LIBRARIES: [(&str, TaskFn, TaskFn); 6] = [
    ("floor", floor::full, floor::lazy),
    ("ours", ours::full, ours::lazy),
    ("ours_fields", ours_fields::full, ours_fields::lazy),
    ("prost", prost_decode::full, prost_decode::lazy),
    (
        "quick_protobuf",
        quick_protobuf_decode::full,
        quick_protobuf_decode::lazy,
    ),
    (
        "rust_protobuf",
        rust_protobuf_decode::full,
        rust_protobuf_decode::lazy,
    ),
];

/// What a value adds to a [`Checksum`] besides its 1 (see the crate docs).
pub trait Weight {
    /// The value's weight.
    fn weight(self) -> u64;
}

impl Weight for u64 {
    #[inline]
    fn weight(self) -> u64 {
        self
    }
}

impl Weight for u32 {
    #[inline]
    fn weight(self) -> u64 {
        u64::from(self)
    }
}

impl Weight for i64 {
    #[inline]
    fn weight(self) -> u64 {
        self as u64
    }
}

impl Weight for i32 {
    #[inline]
    fn weight(self) -> u64 {
        self as u64
    }
}

impl Weight for bool {
    #[inline]
    fn weight(self) -> u64 {
        u64::from(self)
    }
}

impl Weight for f64 {
    #[inline]
    fn weight(self) -> u64 {
        self.to_bits()
    }
}

impl Weight for &str {
    #[inline]
    fn weight(self) -> u64 {
        self.len() as u64
    }
}

impl Weight for &[u8] {
    #[inline]
    fn weight(self) -> u64 {
        self.len() as u64
    }
}

/// The running checksum of a task: the wrapping sum of `1 + weight` over
/// the values read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Checksum(pub u64);

impl Checksum {
    /// Adds a value that is present.
    #[inline]
    pub fn add<T: Weight>(&mut self, value: T) {
        self.0 = self.0.wrapping_add(1).wrapping_add(value.weight());
    }

    /// Adds `value` if it is present.
    #[inline]
    pub fn opt<T: Weight>(&mut self, value: Option<T>) {
        if let Some(v) = value {
            self.add(v);
        }
    }

    /// Adds every element of a repeated field.
    #[inline]
    pub fn all<T: Weight>(&mut self, values: impl IntoIterator<Item = T>) {
        for v in values {
            self.add(v);
        }
    }

    /// Adds a present message (its fields are added separately, if read).
    #[inline]
    pub fn message(&mut self) {
        self.0 = self.0.wrapping_add(1);
    }

    /// Adds a message if `present`.
    #[inline]
    pub fn message_if(&mut self, present: bool) {
        self.0 = self.0.wrapping_add(u64::from(present));
    }
}
