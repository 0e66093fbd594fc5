//! The arbiter's commits, bound for the socket: a [`CommitSink`] that
//! queues CommitData (with chunks inline under SMB emulation, split under
//! the frame limit) and writer (un)registrations in the client's
//! [`Outbox`], and asks the timer thread for a commit.
//!
//! A sink belongs to the connection its arbiter's SMB came with. After a
//! reconnect, writers of the old arbiter may live on (held by threads or
//! by the application); their commits name chunks of the old SMB, which the
//! new service does not know, and their writer ids may have been reused by
//! the new arbiter. Such a *stale* sink sends nothing: it frees the chunks
//! of a commit locally (the data is lost, the writers go on without
//! stalling) and drops (un)registrations. The driver applies the same rule
//! to what it drains after the connection changed.

use std::sync::{Arc, OnceLock, Weak};

use super::outbox::{Outbox, Outgoing};
use crate::producer::{CommitSink, FlushCallback, SharedMemoryArbiter};
use crate::protocol::CommitDataRequest;

/// The arbiter's commits, queued for the endpoint.
pub(super) struct IpcSink {
    outbox: Arc<Outbox>,
    /// The connection it belongs to.
    generation: u64,
    /// The service cannot map our buffer: chunks travel inline.
    emulation: bool,
    /// Its arbiter, once made (to read inline chunks and free stale ones).
    arbiter: OnceLock<Weak<SharedMemoryArbiter>>,
}

impl IpcSink {
    /// A sink for the current connection.
    pub(super) fn new(outbox: &Arc<Outbox>, emulation: bool) -> Arc<IpcSink> {
        Arc::new(IpcSink {
            outbox: outbox.clone(),
            generation: outbox.generation(),
            emulation,
            arbiter: OnceLock::new(),
        })
    }

    /// Tells the sink its arbiter.
    pub(super) fn set_arbiter(&self, arbiter: &Arc<SharedMemoryArbiter>) {
        let _ = self.arbiter.set(Arc::downgrade(arbiter));
    }

    fn arbiter(&self) -> Weak<SharedMemoryArbiter> {
        self.arbiter.get().cloned().unwrap_or_default()
    }

    /// Whether this sink's connection is still the current one.
    fn current(&self) -> bool {
        self.outbox.generation() == self.generation
    }

    fn send(&self, request: CommitDataRequest, callback: Option<FlushCallback>) {
        self.outbox.push(
            self.generation,
            Outgoing::Commit {
                request,
                callback,
                arbiter: self.arbiter(),
            },
        );
    }
}

/// A commit that came too late for its connection: frees its chunks here,
/// as the service would have, and runs its callback.
pub(super) fn discard(
    arbiter: &Weak<SharedMemoryArbiter>,
    request: &mut CommitDataRequest,
    callback: Option<FlushCallback>,
) {
    if let Some(a) = arbiter.upgrade() {
        let abi = a.abi();
        for mv in &request.chunks_to_move {
            if let Ok(c) = abi.try_acquire_chunk_for_reading(mv.page as usize, mv.chunk as usize) {
                let _ = abi.release_chunk_as_free(c);
            }
        }
    }
    request.clear();
    if let Some(cb) = callback {
        cb();
    }
}

/// Largest CommitData sent with inline chunks (the IPC frame limit, less
/// the frame's own fields).
const MAX_INLINE_REQUEST: usize = 120 * 1024;

impl CommitSink for IpcSink {
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        if !self.current() {
            discard(&self.arbiter(), request, on_complete);
            return;
        }
        let arbiter = self
            .emulation
            .then(|| self.arbiter.get().and_then(Weak::upgrade))
            .flatten();
        let Some(a) = arbiter else {
            // A copy: the arbiter keeps the request's storage for its next
            // batch.
            self.send(request.clone(), on_complete);
            return;
        };
        // SMB emulation: chunks travel inline, so one request may exceed
        // the frame limit; send them in requests that fit, the patches, the
        // flush id and the callback with the last one.
        inline_chunks(&a, request);
        let mut moves = std::mem::take(&mut request.chunks_to_move)
            .into_iter()
            .peekable();
        while moves.peek().is_some() {
            let mut part = CommitDataRequest::default();
            let mut size = 0;
            while let Some(mv) = moves.peek() {
                let len = mv.data.as_ref().map_or(0, Vec::len) + 32;
                if size > 0 && size + len > MAX_INLINE_REQUEST {
                    break;
                }
                size += len;
                part.chunks_to_move.extend(moves.next());
            }
            if moves.peek().is_none() {
                part.chunks_to_patch = std::mem::take(&mut request.chunks_to_patch);
                part.flush_request_id = request.flush_request_id.take();
                self.send(part, on_complete);
                request.clear();
                return;
            }
            self.send(part, None);
        }
        self.send(request.clone(), on_complete);
    }

    fn commits_in_background(&self) -> bool {
        // The timer thread flushes the current arbiter only: a stale one
        // flushes on its writers' threads (into `discard`).
        self.current()
    }

    fn commit_pending(&self) {
        // Perfetto posts this as a task; here the timer thread does it,
        // once for however many batches started meanwhile (while it
        // gathers commits, at the end of its window).
        if self.current() {
            self.outbox.request_commit(false);
        }
    }

    fn commit_urgent(&self) {
        if self.current() {
            self.outbox.request_commit(true);
        }
    }

    fn register_trace_writer(&self, writer_id: u16, target_buffer: u16) {
        if self.current() {
            self.outbox.push(
                self.generation,
                Outgoing::Register {
                    writer_id,
                    target_buffer,
                },
            );
        }
    }

    fn unregister_trace_writer(&self, writer_id: u16) {
        if self.current() {
            self.outbox
                .push(self.generation, Outgoing::Unregister { writer_id });
        }
    }
}

/// SMB emulation: the service cannot see our buffer, so every chunk to move
/// travels in the request (header and payload), and is freed here.
fn inline_chunks(arbiter: &SharedMemoryArbiter, request: &mut CommitDataRequest) {
    let abi = arbiter.abi();
    for mv in &mut request.chunks_to_move {
        let Ok(chunk) = abi.try_acquire_chunk_for_reading(mv.page as usize, mv.chunk as usize)
        else {
            continue;
        };
        let header = chunk.header();
        let mut payload = Vec::new();
        chunk.copy_payload(&mut payload);
        let _ = abi.release_chunk_as_free(chunk);
        let mut data = header.to_bytes().to_vec();
        data.extend_from_slice(&payload);
        mv.data = Some(data);
    }
}
