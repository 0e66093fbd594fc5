//! An allocation hook's per-thread state, the same for the in-process
//! `HeapProfiler` and the preloaded client (each keeps its own
//! thread-local of it): the busy flag that keeps the hook from recording
//! itself, the sampler and the epoch it was drawn for, the thread's stack
//! top. Its thread-local is a `Cell` of plain data with a constant
//! initialiser (no lazy set-up, no destructor), valid in any thread at
//! any time, before any runtime is set up.

use std::cell::Cell;
use std::thread::LocalKey;

use super::capture::StackBounds;
use super::sampler::Sampler;

/// One thread's hook state.
#[derive(Clone, Copy)]
pub(crate) struct ThreadState {
    /// Inside the hook, or the profiler's own thread: not profiled.
    pub busy: bool,
    /// The epoch `sampler` was drawn for.
    pub epoch: u32,
    /// This thread's sampler.
    pub sampler: Sampler,
    /// This thread's stack (read at its first sample).
    pub stack: StackBounds,
    /// The session of the shared ring this thread last wrote (the
    /// preloaded client's), and the ring's read position as it last loaded
    /// it then (see `RingWriter::reserve`).
    pub ring_session: u32,
    pub read_seen: Option<u64>,
}

impl ThreadState {
    /// A thread's state before its first allocation.
    pub(crate) const NEW: ThreadState = ThreadState {
        busy: false,
        epoch: u32::MAX,
        sampler: Sampler::UNSET,
        stack: StackBounds::UNREAD,
        ring_session: 0,
        read_seen: None,
    };

    /// Follows the shared ring to `session` (whose ring starts empty): the
    /// read position seen in another session means nothing in this one.
    pub(crate) fn follow_ring(&mut self, session: u32) {
        if self.ring_session != session {
            self.ring_session = session;
            self.read_seen = None;
        }
    }
}

/// A hook's thread-local.
pub(crate) type ThreadKey = LocalKey<Cell<ThreadState>>;

/// The common case, inline: whether an allocation of `size` bytes is not
/// sampled (counted by the thread's countdown, drawn for `epoch`, on a
/// thread not busy). `false` sends it out of line.
#[inline]
pub(crate) fn skips(key: &'static ThreadKey, epoch: u32, size: usize) -> bool {
    key.try_with(|c| {
        let t = c.as_ptr();
        // SAFETY: this thread's own cell, and no reference to it lives
        // (nothing here allocates, so the hook is not re-entered).
        unsafe { !(*t).busy && (*t).epoch == epoch && (*t).sampler.skip(size as u64) }
    })
    .unwrap_or(true)
}

/// Whether this thread is busy (inside the hook, or the profiler's own).
#[inline]
pub(crate) fn is_busy(key: &'static ThreadKey) -> bool {
    key.try_with(|c| {
        // SAFETY: as in `skips`: a read while no reference to it lives.
        unsafe { (*c.as_ptr()).busy }
    })
    .unwrap_or(false)
}

/// What [`unless_busy`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// `f` ran, the thread marked busy meanwhile.
    Yes,
    /// The thread was busy: `f` did not run.
    Busy,
    /// The thread-local is gone (the thread is ending): `f` did not run.
    Gone,
}

/// Runs `f` with this thread marked busy, unless it already is.
#[inline]
pub(crate) fn unless_busy(key: &'static ThreadKey, f: impl FnOnce(&mut ThreadState)) -> Ran {
    let Ok(mut t) = key.try_with(Cell::get) else {
        return Ran::Gone;
    };
    if t.busy {
        return Ran::Busy;
    }
    t.busy = true;
    let _ = key.try_with(|c| c.set(t));
    f(&mut t);
    t.busy = false;
    let _ = key.try_with(|c| c.set(t));
    Ran::Yes
}

/// Marks this thread busy for good (the profiler's own thread).
pub(crate) fn mark_busy(key: &'static ThreadKey) {
    let _ = key.try_with(|c| {
        let mut t = c.get();
        t.busy = true;
        c.set(t);
    });
}

/// A sampler seed per thread and epoch: the address of this thread's
/// state mixed with the allocation's.
pub(crate) fn seed(key: &'static ThreadKey, addr: u64, epoch: u32) -> u64 {
    let here = key.try_with(|c| c as *const _ as u64).unwrap_or(0);
    (here ^ addr.rotate_left(17) ^ u64::from(epoch).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1
}
