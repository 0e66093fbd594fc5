//! A walk through every field of every message a `Trace` reaches, through
//! the generated API only and naming no message type: each message is read
//! with its generated field enum (`FooField::read`: every field in wire
//! order, converted as the accessors convert it, then rendered through its
//! `Debug`, which also runs packed runs to their end), the generated
//! decoder's pass runs over the same bytes (`FooDecoder::new`), and every
//! nested message is followed through `FieldEnum::visit_message`, which
//! hands it over typed by its decoder, down to [`MAX_WALK_DEPTH`] levels.
//! A `Trace` of at most [`MAX_RENDERED_BYTES`] is then rendered through its
//! decoder's `Debug`, which prints every declared field through the
//! decoders, nested messages to `protozero`'s own depth cap. (`Debug`
//! scans a message once per repeated or high-numbered field it declares,
//! in every message: rendering every input of a corpus grown from the
//! schema skeleton seed took 87% of the target's time. Small inputs keep
//! that path fuzzed.)
//!
//! The walk is generic over the 941 message types, so it is instantiated
//! here, where the fuzz build gives the generated code an opt-level of its
//! own (see fuzz/Cargo.toml), rather than in the fuzz targets' crate. It
//! allocates nothing itself and reports what it saw; the
//! `trace_full_schema` fuzz target holds the invariants.

use core::fmt::{self, Write as _};

use protozero::{DecodeError, Lazy, MessageDecoder, MessageFields, MessageVisitor};

use crate::protos::TraceDecoder;

/// How many messages deep the walk follows nested messages (the `Trace` is
/// at depth 0, its packets at 1). Real traces nest a dozen levels at most
/// (debug annotations in dictionaries in arrays); arbitrary bytes can nest
/// as deep as they are long, and each level costs a frame of the walk.
pub const MAX_WALK_DEPTH: usize = 48;

/// The largest input [`walk_trace`] also renders through the decoders'
/// `Debug` (see the module docs).
pub const MAX_RENDERED_BYTES: usize = 1024;

/// What one walk saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WalkStats {
    /// Messages read (the `Trace` included).
    pub messages: u64,
    /// Fields read, every message's together.
    pub fields: u64,
    /// The deepest message read.
    pub max_depth: usize,
    /// Nested messages not entered because of [`MAX_WALK_DEPTH`].
    pub cut: u64,
    /// Messages whose bytes end in a malformed field.
    pub malformed: u64,
    /// Whether the trace was also rendered through `Debug`.
    pub rendered: bool,
    /// The first message whose field enum and decoder disagree on where
    /// its bytes stop being readable: its full name, and what each said.
    pub disagreement: Option<Disagreement>,
}

/// A message whose field enum and decoder stopped at different places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disagreement {
    /// The message's full protobuf name.
    pub message: &'static str,
    /// `Fields::error` after the field enum's scan.
    pub fields: Option<DecodeError>,
    /// The decoder's `decode_error`.
    pub decoder: Option<DecodeError>,
}

/// A `fmt::Write` that keeps nothing: formatting into it runs every
/// `Debug` impl without allocating.
struct Sink;

impl fmt::Write for Sink {
    fn write_str(&mut self, _: &str) -> fmt::Result {
        Ok(())
    }
}

/// The walk's state: where it is, and what it saw.
struct Walk {
    depth: usize,
    stats: WalkStats,
}

impl<'a> MessageVisitor<'a> for Walk {
    fn message<D: MessageFields<'a>>(&mut self, message: Lazy<'a, D>) {
        if self.depth >= MAX_WALK_DEPTH {
            self.stats.cut += 1;
            return;
        }
        self.depth += 1;
        self.read::<D>(message);
        self.depth -= 1;
    }
}

impl Walk {
    /// Reads one message, at `self.depth`, and everything it nests.
    fn read<'a, D: MessageFields<'a>>(&mut self, message: Lazy<'a, D>) {
        self.stats.messages += 1;
        self.stats.max_depth = self.stats.max_depth.max(self.depth);
        let decoder = message.decode();
        let mut fields = message.fields();
        for field in fields.by_ref() {
            self.stats.fields += 1;
            // The sink never fails, and generated `Debug` impls do not either.
            let _ = write!(Sink, "{field:?}");
            protozero::FieldEnum::visit_message(&field, self);
        }
        if fields.error().is_some() {
            self.stats.malformed += 1;
        }
        if fields.error() != decoder.decode_error() && self.stats.disagreement.is_none() {
            self.stats.disagreement = Some(Disagreement {
                message: D::FULL_NAME,
                fields: fields.error(),
                decoder: decoder.decode_error(),
            });
        }
    }
}

/// Walks `data` as a `Trace` (see the module docs), then, if it is at
/// most [`MAX_RENDERED_BYTES`] long, renders it through `TraceDecoder`'s
/// `Debug`.
pub fn walk_trace(data: &[u8]) -> WalkStats {
    let mut walk = Walk {
        depth: 0,
        stats: WalkStats::default(),
    };
    walk.read(Lazy::<TraceDecoder<'_>>::new(data));
    if data.len() <= MAX_RENDERED_BYTES {
        let _ = write!(Sink, "{:?}", TraceDecoder::decode(data));
        walk.stats.rendered = true;
    }
    walk.stats
}
