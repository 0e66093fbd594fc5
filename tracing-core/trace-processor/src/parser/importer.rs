//! What an importer of a `TracePacket` payload is: the function each
//! parser module lists in its `IMPORTERS`, and what it is given (the
//! payload's bytes and where its packet stands); and likewise what a
//! handler of one ftrace event kind is (`FTRACE_HANDLERS`). Below both
//! the modules and the registries that gather their lists.

use super::Parser;
use crate::packet_view::PacketView;
use crate::sequence_state::Generation;

/// What an importer gets: the payload and where its packet stands.
pub struct Input<'a> {
    /// The payload's bytes.
    pub bytes: &'a [u8],
    /// The packet's time on the trace clock.
    pub ts: i64,
    /// The packet as the loader queued it.
    pub packet: &'a PacketView<'a>,
    /// The packet's sequence's generation.
    pub generation: &'a Generation,
}

/// An importer of one payload field.
pub type Importer = fn(&mut Parser, &Input<'_>);

/// What an ftrace event's handler gets: its one payload and the event's
/// envelope, read by the event's one walk (`parser/ftrace.rs`).
pub struct FtraceInput<'a> {
    /// The CPU the event was recorded on.
    pub cpu: u32,
    /// The event's time on the trace clock.
    pub ts: i64,
    /// The emitting thread (`FtraceEvent.pid`).
    pub tid: i64,
    /// The payload's bytes (the event's own message).
    pub body: &'a [u8],
    /// The packet's sequence's generation.
    pub generation: &'a Generation,
}

/// A handler of one ftrace event kind.
pub type FtraceHandler = fn(&mut Parser, &FtraceInput<'_>);
