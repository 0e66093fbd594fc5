//! The ordered stage's side of the parallel load: the loader takes a
//! [`Batch`] the pre-stage split (and partly inflated) exactly as it takes
//! the same bytes through `Loader::push`: the same accounting of the bytes
//! read, the same packets at the same offsets, in the same order, and the
//! splitter's error after the packets before it. The splitter itself moves
//! to the pre-stage once the trace is told to be protobuf, and back at the
//! end, so that a truncated last packet is reported as before.

use super::batch::Batch;
use crate::error::TraceError;
use crate::load::Loader;
use crate::load::dispatch::Content;
use crate::load::tokenizer::TraceTokenizer;

impl Loader {
    /// Whether the bytes pushed so far were told to be a protobuf `Trace`
    /// (the only format whose reads the pre-stage splits).
    pub(crate) fn is_proto(&self) -> bool {
        matches!(self.content, Content::Proto)
    }

    /// Whether the loader still waits for enough bytes to tell the format.
    pub(crate) fn is_sniffing(&self) -> bool {
        matches!(self.content, Content::Sniffing(_))
    }

    /// Hands the stream splitter, with the unfinished packet it holds, to
    /// the pre-stage.
    pub(crate) fn take_splitter(&mut self) -> TraceTokenizer {
        std::mem::take(&mut self.tokenizer)
    }

    /// Takes the stream splitter back from the pre-stage at the end.
    pub(crate) fn put_splitter(&mut self, tokenizer: TraceTokenizer) {
        self.tokenizer = tokenizer;
    }

    /// Reads a batch of a protobuf trace, as `push` reads its bytes.
    pub(crate) fn push_batch(&mut self, mut batch: Batch) -> Result<(), TraceError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let data = &batch.data;
        self.bytes_pushed += data.len() as u64;
        self.parser.storage.work.take(data.len() as u64);
        if let Err(e) = self.check_budget() {
            self.failed = Some(e.clone());
            return Err(e);
        }
        self.identity.on_bytes(data);
        let packets = std::mem::take(&mut batch.packets);
        let error = batch.error.take();
        for mut p in packets {
            self.pre_inflated = p.ready.take();
            self.on_top_packet(batch.bytes(&p), p.offset);
            self.pre_inflated = None;
        }
        if let Some(e) = error {
            return Err(e);
        }
        if self.failed.is_none() {
            if let Err(e) = self.check_budget() {
                self.failed = Some(e);
            }
        }
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
