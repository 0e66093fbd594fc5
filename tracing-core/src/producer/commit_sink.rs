//! [`CommitSink`]: where the arbiter sends its `CommitData` requests and writer
//! (un)registrations — the IPC client in a real producer, an in-memory channel
//! ([`ChannelCommitSink`]) in tests and in-process mode.

use std::sync::mpsc;

use crate::protocol::CommitDataRequest;

/// Called once the service has processed a commit (flush completion).
pub type FlushCallback = Box<dyn FnOnce() + Send>;

/// Receives the arbiter's outgoing messages.
///
/// Calls arrive from writer threads, in commit order (the arbiter serializes
/// them). Implementations must not call back into the arbiter's commit path
/// synchronously.
pub trait CommitSink: Send + Sync {
    /// Sends one request; `on_complete` must run once the service acked it.
    /// The sink may take what it needs out of `request`; the arbiter then
    /// clears it and fills it again for a later batch, so writers allocate
    /// nothing in steady state.
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>);

    /// Whether `commit_pending` has another thread send the batch soon: then
    /// an urgent batch (patches, or half the buffer waiting) only asks for it
    /// and the writer goes on, instead of sending it on the writer's thread.
    fn commits_in_background(&self) -> bool {
        false
    }

    /// A new batch of commits was started: the sink should arrange for
    /// `SharedMemoryArbiter::flush_pending_commit_data_requests` to run soon
    /// (Perfetto posts this as a task). Default: nothing (commits then go out on
    /// the next flush, on an urgent commit, or when a writer stalls).
    fn commit_pending(&self) {}

    /// As [`CommitSink::commit_pending`], for a batch that must not wait
    /// (patches to apply, half the buffer waiting, a writer stalled on a
    /// full buffer): a sink that gathers batches for a while sends this one
    /// at once. Default: [`CommitSink::commit_pending`].
    fn commit_urgent(&self) {
        self.commit_pending();
    }

    /// A writer was created (`RegisterTraceWriter`).
    fn register_trace_writer(&self, writer_id: u16, target_buffer: u16) {
        let _ = (writer_id, target_buffer);
    }

    /// A writer was destroyed (`UnregisterTraceWriter`).
    fn unregister_trace_writer(&self, writer_id: u16) {
        let _ = writer_id;
    }
}

/// A message a [`ChannelCommitSink`] forwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SinkMessage {
    /// A commit request.
    Commit(CommitDataRequest),
    /// A writer registration.
    RegisterTraceWriter {
        /// The writer.
        writer_id: u16,
        /// Its target buffer.
        target_buffer: u16,
    },
    /// A writer unregistration.
    UnregisterTraceWriter {
        /// The writer.
        writer_id: u16,
    },
}

/// Forwards everything into an `mpsc` channel; flush callbacks run as soon as
/// the request is queued.
#[derive(Debug)]
pub struct ChannelCommitSink {
    tx: mpsc::Sender<SinkMessage>,
}

impl ChannelCommitSink {
    /// A sink and the receiving end of its channel.
    pub fn new() -> (ChannelCommitSink, mpsc::Receiver<SinkMessage>) {
        let (tx, rx) = mpsc::channel();
        (ChannelCommitSink { tx }, rx)
    }
}

impl CommitSink for ChannelCommitSink {
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        let _ = self.tx.send(SinkMessage::Commit(std::mem::take(request)));
        if let Some(cb) = on_complete {
            cb();
        }
    }

    fn register_trace_writer(&self, writer_id: u16, target_buffer: u16) {
        let _ = self.tx.send(SinkMessage::RegisterTraceWriter {
            writer_id,
            target_buffer,
        });
    }

    fn unregister_trace_writer(&self, writer_id: u16) {
        let _ = self
            .tx
            .send(SinkMessage::UnregisterTraceWriter { writer_id });
    }
}
