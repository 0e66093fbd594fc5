//! What a reader of a trace format other than protobuf promises the
//! loader: it takes the trace's bytes in pushes split anywhere and fills
//! the tables through the parser. The loader's dispatch (`dispatch.rs`)
//! holds readers by this trait; each format's reader implements it and
//! knows nothing of the dispatch.

use crate::error::TraceError;
use crate::parser::Parser;

/// A reader of a format other than protobuf and the two text formats
/// with their own variant: it takes the trace's bytes in pushes split
/// anywhere and writes the tables at the latest when the trace ends.
/// `Send`: a load moves between threads (the RPC server's parse thread).
pub trait FormatReader: std::fmt::Debug + Send {
    /// Reads the next bytes.
    fn push(&mut self, p: &mut Parser, data: &[u8]) -> Result<(), TraceError>;
    /// Memory the reader holds beyond the bytes pushed.
    fn held_bytes(&self) -> u64;
    /// Ends the trace: whatever is still held goes into the tables.
    fn finish(self: Box<Self>, p: &mut Parser) -> Result<(), TraceError>;
    /// Another trace of the same archive claimed the trace clock for
    /// BOOTTIME (the tracker's clock `boottime`): a format whose own
    /// times it relates to BOOTTIME (Instruments' clock-sync signposts)
    /// places them through it; the others keep their times.
    fn on_boottime_timeline(&mut self, _boottime: u64) {}
    /// Protobuf trace bytes the format carries inside it (FXT's Perfetto
    /// blobs), read since the last call: the loader feeds them to its
    /// protobuf core.
    fn take_embedded_proto(&mut self) -> Vec<u8> {
        Vec::new()
    }
    /// Protobuf trace bytes handed on in all: when some were, the trace
    /// ends through the protobuf core too.
    fn embedded_proto_bytes(&self) -> u64 {
        0
    }
}
