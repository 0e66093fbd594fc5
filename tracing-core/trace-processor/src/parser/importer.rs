//! What an importer of a `TracePacket` payload is: the function each
//! parser module lists in its `IMPORTERS`, and what it is given (the
//! payload's bytes and where its packet stands). Below both the modules
//! and the registry that gathers their lists.

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
