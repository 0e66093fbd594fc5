//! [`TracePacketHandle`]: the packet being written by a
//! [`TraceWriter`](crate::producer::TraceWriter); dropping it finishes the packet.
//!
//! The handle lends out the packet's root `protozero::Message` through
//! [`TracePacketHandle::root`], so a generated writer can wrap it
//! (`TracePacket::from_message(handle.root())`). A root message carries no
//! state of its own, so borrowing it several times in a row appends to the
//! same packet.

use protozero::{Message, StreamWriter};
use zerotrace_protos::protos::TracePacket;

use crate::producer::trace_writer::WriterCore;

/// An open trace packet.
#[derive(Debug)]
pub struct TracePacketHandle<'a> {
    stream: &'a mut StreamWriter,
    core: &'a mut WriterCore,
}

impl<'a> TracePacketHandle<'a> {
    pub(crate) fn new(
        stream: &'a mut StreamWriter,
        core: &'a mut WriterCore,
    ) -> TracePacketHandle<'a> {
        TracePacketHandle { stream, core }
    }

    /// The packet's root message, to append fields to.
    pub fn root(&mut self) -> Message<'_> {
        // SAFETY: `stream` only ever received slices from `core` (its delegate
        // in `TraceWriter`), so its current slice is valid under `core`'s contract.
        unsafe { Message::new_root(self.stream, self.core) }
    }

    /// The packet as the generated `TracePacket` writer. Borrowing it again
    /// appends to the same packet.
    pub fn packet(&mut self) -> TracePacket<'_> {
        TracePacket::from_message(self.root())
    }

    /// Total bytes the writer's stream has produced (for size accounting).
    pub fn written(&self) -> usize {
        self.stream.written()
    }
}

impl Drop for TracePacketHandle<'_> {
    fn drop(&mut self) {
        self.core.finish_trace_packet(self.stream);
    }
}
