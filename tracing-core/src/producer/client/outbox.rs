//! The queue between the writers' threads and the endpoint: what the
//! arbiter's sink has to send (commits with their callbacks, writer
//! (un)registrations), each tagged with the connection it belongs to, and
//! the wake-ups of the client's timer thread (a batch of commits to send,
//! a deadline that moved, closing). The sink only pushes here; the driver
//! drains it into the endpoint under its own lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::producer::FlushCallback;
use crate::producer::smb_view::SmbView;
use crate::protocol::CommitDataRequest;

use super::lock;

/// One thing a sink has to send.
pub(super) enum Outgoing {
    /// A CommitData; its chunks are freed in `smb` if it comes too late
    /// for its connection.
    Commit {
        request: CommitDataRequest,
        callback: Option<FlushCallback>,
        smb: Arc<SmbView>,
    },
    /// RegisterTraceWriter.
    Register { writer_id: u16, target_buffer: u16 },
    /// UnregisterTraceWriter.
    Unregister { writer_id: u16 },
}

#[derive(Default)]
struct Queue {
    /// Messages with the connection (generation) they belong to.
    items: VecDeque<(u64, Outgoing)>,
    /// A batch of commits waits in the arbiter (`commit_pending`).
    commit_requested: bool,
    /// Something changed that the timer thread should look at.
    woken: bool,
    closing: bool,
    /// The timer thread waits on the condvar: only then does a wake-up
    /// need the condvar (a futex wake, a system call), so writers that
    /// hand over chunks while it is busy make none.
    waiting: bool,
    /// Its wait is a window gathering commits (see [`BATCH_WINDOW`]): a
    /// non-urgent commit waits for the window's end instead of waking it.
    gathering: bool,
}

/// How long the timer thread, once it sent a batch, gathers the next one
/// before sending it (while batches keep coming): a writer that fills
/// chunks fast then wakes no thread per chunk, only the window's end does.
/// Urgent batches (patches, half the buffer, a stalled writer) and
/// flushes go at once. Perfetto's arbiter has the same knob
/// (`batch_commits_duration_ms`).
pub(super) const BATCH_WINDOW: Duration = Duration::from_millis(1);

/// Why the timer thread woke.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Wake {
    /// Flush the arbiter's pending batch.
    pub(super) commit_requested: bool,
    /// The client is closing.
    pub(super) closing: bool,
    /// Something else asked for it (messages to send, a deadline moved).
    pub(super) woken: bool,
}

/// The queue and the current connection's number.
#[derive(Default)]
pub(super) struct Outbox {
    queue: Mutex<Queue>,
    wanted: Condvar,
    /// The endpoint's current connection (its generation).
    generation: AtomicU64,
}

impl Outbox {
    /// The current connection's number.
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A new connection is current (sinks of older ones are stale).
    pub(super) fn set_generation(&self, generation: u64) {
        self.generation.store(generation, Ordering::Release);
    }

    /// Queues `item` of connection `generation` and wakes the timer thread.
    pub(super) fn push(&self, generation: u64, item: Outgoing) {
        let mut q = lock(&self.queue);
        q.items.push_back((generation, item));
        q.woken = true;
        self.notify(&q);
    }

    /// Wakes the timer thread if it waits (called with the queue locked).
    fn notify(&self, q: &Queue) {
        if q.waiting {
            self.wanted.notify_one();
        }
    }

    /// Asks the timer thread to flush the arbiter's pending batch: at the
    /// end of its gathering window, or at once if `urgent`.
    pub(super) fn request_commit(&self, urgent: bool) {
        let mut q = lock(&self.queue);
        if q.commit_requested && !(urgent && q.gathering) {
            // Already asked for, and not yet taken: that request covers it.
            return;
        }
        q.commit_requested = true;
        if q.waiting && (urgent || !q.gathering) {
            self.wanted.notify_one();
        }
    }

    /// Wakes the timer thread (a deadline moved).
    pub(super) fn wake(&self) {
        let mut q = lock(&self.queue);
        q.woken = true;
        self.notify(&q);
    }

    /// Wakes the timer thread for good.
    pub(super) fn close(&self) {
        let mut q = lock(&self.queue);
        q.closing = true;
        self.wanted.notify_all();
    }

    /// Takes everything queued.
    pub(super) fn drain(&self) -> Vec<(u64, Outgoing)> {
        lock(&self.queue).items.drain(..).collect()
    }

    /// Waits until woken or `timeout` (`None`: no limit) passed; while
    /// `gathering`, a commit request alone does not end the wait.
    pub(super) fn wait(&self, timeout: Option<Duration>, gathering: bool) -> Wake {
        let mut q = lock(&self.queue);
        let commit = q.commit_requested && !gathering;
        if !(q.woken || commit || q.closing || !q.items.is_empty()) {
            q.waiting = true;
            q.gathering = gathering;
            q = match timeout {
                Some(t) => {
                    self.wanted
                        .wait_timeout(q, t)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self.wanted.wait(q).unwrap_or_else(|e| e.into_inner()),
            };
            q.waiting = false;
            q.gathering = false;
        }
        let woken = std::mem::take(&mut q.woken) || !q.items.is_empty();
        Wake {
            commit_requested: std::mem::take(&mut q.commit_requested),
            closing: q.closing,
            woken,
        }
    }
}
