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
//!
//! The sink reaches the chunks through the buffer itself ([`SmbView`],
//! shared with its arbiter), not through the arbiter: nothing in the
//! commit path points back at the arbiter that owns the sink.

use std::sync::Arc;

use super::outbox::{Outbox, Outgoing};
use crate::producer::smb_view::SmbView;
use crate::producer::{CommitSink, FlushCallback};
use crate::protocol::CommitDataRequest;

/// The arbiter's commits, queued for the endpoint.
pub(super) struct IpcSink {
    outbox: Arc<Outbox>,
    /// The connection it belongs to.
    generation: u64,
    /// The service cannot map our buffer: chunks travel inline.
    emulation: bool,
    /// The buffer its arbiter hands out (to read inline chunks and free
    /// stale ones).
    smb: Arc<SmbView>,
}

impl IpcSink {
    /// A sink for the current connection, over the buffer `smb`.
    pub(super) fn new(outbox: &Arc<Outbox>, emulation: bool, smb: &Arc<SmbView>) -> Arc<IpcSink> {
        Arc::new(IpcSink {
            outbox: outbox.clone(),
            generation: outbox.generation(),
            emulation,
            smb: smb.clone(),
        })
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
                smb: self.smb.clone(),
            },
        );
    }
}

/// A commit that came too late for its connection: frees its chunks here,
/// as the service would have, and runs its callback.
pub(super) fn discard(
    smb: &SmbView,
    request: &mut CommitDataRequest,
    callback: Option<FlushCallback>,
) {
    let abi = &smb.abi;
    for mv in &request.chunks_to_move {
        if let Ok(c) = abi.try_acquire_chunk_for_reading(mv.page as usize, mv.chunk as usize) {
            let _ = abi.release_chunk_as_free(c);
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
            discard(&self.smb, request, on_complete);
            return;
        }
        if !self.emulation {
            // A copy: the arbiter keeps the request's storage for its next
            // batch.
            self.send(request.clone(), on_complete);
            return;
        }
        // SMB emulation: chunks travel inline, so one request may exceed
        // the frame limit; send them in requests that fit, the patches, the
        // flush id and the callback with the last one.
        inline_chunks(&self.smb, request);
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
fn inline_chunks(smb: &SmbView, request: &mut CommitDataRequest) {
    let abi = &smb.abi;
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::abi::{ChunkHeader, PageLayout};
    use crate::protocol::ChunkToMove;
    use crate::shm::HeapShm;

    /// A buffer with one complete chunk (page 0, chunk 0) and its commit.
    fn committed_chunk() -> (Arc<SmbView>, CommitDataRequest) {
        let smb = SmbView::claim(Arc::new(HeapShm::new(4 * 4096).unwrap()), 4096).unwrap();
        smb.abi.try_partition_page(0, PageLayout::Div4).unwrap();
        let header = ChunkHeader {
            chunk_id: 1,
            writer_id: 1,
            ..ChunkHeader::default()
        };
        let chunk = smb
            .abi
            .try_acquire_chunk_for_writing(0, 0, &header)
            .unwrap();
        smb.abi.release_chunk_as_complete(chunk).unwrap();
        let request = CommitDataRequest {
            chunks_to_move: vec![ChunkToMove {
                page: 0,
                chunk: 0,
                target_buffer: 1,
                ..ChunkToMove::default()
            }],
            ..CommitDataRequest::default()
        };
        (smb, request)
    }

    /// A commit made after its connection was replaced frees its chunks in
    /// the buffer itself (its writers go on), runs its callback and sends
    /// nothing; the sink needs no arbiter for it.
    #[test]
    fn a_stale_commit_frees_its_chunks_through_the_buffer() {
        let outbox = Arc::new(Outbox::default());
        outbox.set_generation(1);
        let (smb, mut request) = committed_chunk();
        let sink = IpcSink::new(&outbox, false, &smb);
        outbox.set_generation(2);
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        sink.commit_data(
            &mut request,
            Some(Box::new(move || r.store(true, Ordering::SeqCst))),
        );
        assert!(ran.load(Ordering::SeqCst));
        // Its page's only chunk in use was freed: the page is free again.
        assert!(smb.abi.is_page_free(0));
        assert!(request.chunks_to_move.is_empty());
        assert!(outbox.drain().is_empty());
    }

    /// Under SMB emulation the chunk travels inline (header and payload)
    /// and is freed at once; the queued commit carries the buffer for a
    /// late discard.
    #[test]
    fn emulation_inlines_and_frees_the_chunk() {
        let outbox = Arc::new(Outbox::default());
        let (smb, mut request) = committed_chunk();
        let sink = IpcSink::new(&outbox, true, &smb);
        sink.commit_data(&mut request, None);
        // Its page's only chunk in use was freed: the page is free again.
        assert!(smb.abi.is_page_free(0));
        let queued = outbox.drain();
        let [
            (
                _,
                Outgoing::Commit {
                    request, smb: with, ..
                },
            ),
        ] = queued.as_slice()
        else {
            panic!("one commit queued");
        };
        assert!(Arc::ptr_eq(with, &smb));
        let data = request.chunks_to_move[0].data.as_ref().expect("inline");
        assert!(data.len() > 16 && data.len() <= 4096 / 4, "{}", data.len());
    }
}
