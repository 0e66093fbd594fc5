//! The ordered stage's side of the parallel load: the loader takes a
//! [`Batch`] the pre-stage split (and partly inflated) exactly as it takes
//! the same bytes through `Loader::push`: the same accounting of the bytes
//! read, the same packets at the same offsets, in the same order, and the
//! splitter's error after the packets before it; each packet's walk,
//! bundle split and inflation made ahead are taken where the loader would
//! make them. The splitter itself moves
//! to the pre-stage once the trace is told to be protobuf, and back at the
//! end, so that a truncated last packet is reported as before.

use super::batch::{Ahead, Batch};
use crate::error::TraceError;
use crate::load::Loader;
use crate::load::dispatch::Content;
use crate::load::ftrace_bundle::{self, BundleEvent};
use crate::load::tokenizer::TraceTokenizer;
use crate::packet_fields::PacketFields;

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

    /// The walk of a packet (`PacketFields::walk`), made ahead when
    /// `bytes` are the top-level packet the pre-stage walked.
    pub(in crate::load) fn walk_packet<'a>(&mut self, bytes: &'a [u8]) -> PacketFields<'a> {
        match self.ahead.take_walked().and_then(|w| w.fields(bytes)) {
            Some(fields) => fields,
            None => PacketFields::walk(bytes, crate::parser::registry::has_importer),
        }
    }

    /// An ftrace bundle's events (`ftrace_bundle::split`), split ahead when
    /// `bundle` is the top-level packet's bundle the pre-stage split.
    pub(in crate::load) fn split_bundle<'a>(&mut self, bundle: &'a [u8]) -> Vec<BundleEvent<'a>> {
        match self.ahead.take_bundle().and_then(|b| b.events(bundle)) {
            Some(events) => events,
            None => ftrace_bundle::split(bundle, &mut self.parser.storage.stats),
        }
    }

    /// Reads a batch of a protobuf trace, as `push` reads its bytes.
    pub(crate) fn push_batch(&mut self, batch: &mut Batch) -> Result<(), TraceError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let data = batch.data();
        self.bytes_pushed += data.len() as u64;
        self.parser.storage.work.take(data.len() as u64);
        if let Err(e) = self.check_budget() {
            self.failed = Some(e.clone());
            return Err(e);
        }
        self.identity.on_bytes(data);
        for i in 0..batch.packets.len() {
            let (ahead, offset) = match batch.packets.get_mut(i) {
                Some(p) => (std::mem::take(&mut p.ahead), p.offset),
                None => break,
            };
            self.ahead = ahead;
            self.on_top_packet(batch.bytes(&batch.packets[i]), offset);
            self.ahead = Ahead::default();
        }
        let error = batch.error.take();
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
