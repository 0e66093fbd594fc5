//! The arbiter's commits over the socket: a [`CommitSink`] that sends
//! CommitData (with chunks inline under SMB emulation, split under the
//! frame limit) and writer (un)registrations, and the committer thread's
//! trigger.
//!
//! A sink belongs to the connection its arbiter's SMB came with. After a
//! reconnect, writers of the old arbiter may live on (held by threads or
//! by the application); their commits name chunks of the old SMB, which the
//! new service does not know, and their writer ids may have been reused by
//! the new arbiter. Such a *stale* sink sends nothing: it frees the chunks
//! of a commit locally (the data is lost, the writers go on without
//! stalling) and drops (un)registrations.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};

use super::{Inner, encode, lock};
use crate::producer::{CommitSink, FlushCallback, SharedMemoryArbiter};
use crate::protocol::CommitDataRequest;

/// The arbiter's commits, sent over the socket.
pub(super) struct IpcSink {
    inner: Weak<Inner>,
    /// The connection (`Inner::connection`) it belongs to.
    connection: u64,
    /// Its arbiter, once made (to free the chunks of stale commits).
    arbiter: OnceLock<Weak<SharedMemoryArbiter>>,
}

impl IpcSink {
    /// A sink for the current connection of `inner`.
    pub(super) fn new(inner: &Arc<Inner>) -> Arc<IpcSink> {
        Arc::new(IpcSink {
            inner: Arc::downgrade(inner),
            connection: inner.connection.load(Ordering::Acquire),
            arbiter: OnceLock::new(),
        })
    }

    /// Tells the sink its arbiter.
    pub(super) fn set_arbiter(&self, arbiter: &Arc<SharedMemoryArbiter>) {
        let _ = self.arbiter.set(Arc::downgrade(arbiter));
    }

    /// The client, if this sink's connection is still the current one.
    fn current(&self) -> Option<Arc<Inner>> {
        self.inner
            .upgrade()
            .filter(|i| i.connection.load(Ordering::Acquire) == self.connection)
    }

    /// A stale commit: frees its chunks here, as the service would have.
    fn discard(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        if let Some(a) = self.arbiter.get().and_then(Weak::upgrade) {
            let abi = a.abi();
            for mv in &request.chunks_to_move {
                if let Ok(c) =
                    abi.try_acquire_chunk_for_reading(mv.page as usize, mv.chunk as usize)
                {
                    let _ = abi.release_chunk_as_free(c);
                }
            }
        }
        request.clear();
        if let Some(cb) = on_complete {
            cb();
        }
    }
}

/// Largest CommitData sent with inline chunks (the IPC frame limit, less
/// the frame's own fields).
const MAX_INLINE_REQUEST: usize = 120 * 1024;

impl IpcSink {
    fn send(&self, inner: &Inner, request: &CommitDataRequest, on_complete: Option<FlushCallback>) {
        let mut wire = lock(&inner.wire);
        let drop_reply = on_complete.is_none();
        match wire.invoke("CommitData", request.encode(), drop_reply) {
            Ok(id) => {
                if let Some(cb) = on_complete {
                    lock(&inner.callbacks).insert(id, cb);
                }
            }
            Err(_) => {
                // The service is gone; nobody will ack.
                drop(wire);
                if let Some(cb) = on_complete {
                    cb();
                }
            }
        }
    }
}

impl CommitSink for IpcSink {
    fn commit_data(&self, request: &mut CommitDataRequest, on_complete: Option<FlushCallback>) {
        let Some(inner) = self.current() else {
            self.discard(request, on_complete);
            return;
        };
        let arbiter = {
            let st = lock(&inner.state);
            st.emulation.then(|| st.arbiter.clone()).flatten()
        };
        let Some(a) = arbiter else {
            self.send(&inner, request, on_complete);
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
                self.send(&inner, &part, on_complete);
                return;
            }
            self.send(&inner, &part, None);
        }
        self.send(&inner, request, on_complete);
    }

    fn commits_in_background(&self) -> bool {
        // The committer thread flushes the current arbiter only: a stale
        // one flushes on its writers' threads (into `discard`).
        self.current().is_some()
    }

    fn commit_pending(&self) {
        // Perfetto posts this as a task; here the committer thread does it,
        // once for however many batches started meanwhile.
        if let Some(inner) = self.current() {
            *lock(&inner.commit_requested) = true;
            inner.commit_wanted.notify_one();
        }
    }

    fn register_trace_writer(&self, writer_id: u16, target_buffer: u16) {
        if let Some(inner) = self.current() {
            let args = encode(|m| {
                let mut m = m;
                m.append_uint32(1, writer_id as u32);
                m.append_uint32(2, target_buffer as u32);
            });
            let _ = lock(&inner.wire).invoke("RegisterTraceWriter", args, true);
        }
    }

    fn unregister_trace_writer(&self, writer_id: u16) {
        if let Some(inner) = self.current() {
            let args = encode(|mut m| m.append_uint32(1, writer_id as u32));
            let _ = lock(&inner.wire).invoke("UnregisterTraceWriter", args, true);
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
