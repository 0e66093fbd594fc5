//! An allocation hook's per-thread state, the same for the in-process
//! `HeapProfiler` and the preloaded client (each keeps its own
//! thread-local of it): the busy flag that keeps the hook from recording
//! itself, the sampler and the epoch it was drawn for, the thread's stack
//! top. Its thread-local is plain data with a constant initialiser (no
//! lazy set-up, no destructor), valid in any thread at any time, before
//! any runtime is set up. The hook works on it in place: the busy flag is
//! a cell of its own, so a re-entered hook reads the flag and nothing
//! else while the outer one holds the state (copying the state out and
//! back, as a `Cell` of it would, cost a sample more than its stack copy).

use std::cell::{Cell, UnsafeCell};
use std::thread::LocalKey;

use super::capture::StackBounds;
use super::sampler::Sampler;
use super::shared_ring::ReadSeen;

/// One thread's hook state.
#[derive(Clone, Copy)]
pub(crate) struct ThreadState {
    /// The epoch `sampler` was drawn for.
    pub epoch: u32,
    /// This thread's sampler.
    pub sampler: Sampler,
    /// This thread's stack (read at its first sample).
    pub stack: StackBounds,
    /// The session of the shared ring this thread last wrote (the
    /// preloaded client's), and the ring's read position as it last loaded
    /// it then, with the reader's lap count (see `RingWriter::reserve`).
    /// Unused in the loom build, which leaves the client out.
    #[cfg_attr(zerotrace_loom, allow(dead_code))]
    pub ring_session: u32,
    #[cfg_attr(zerotrace_loom, allow(dead_code))]
    pub read_seen: Option<ReadSeen>,
}

impl ThreadState {
    /// A thread's state before its first allocation.
    pub(crate) const NEW: ThreadState = ThreadState {
        epoch: u32::MAX,
        sampler: Sampler::UNSET,
        stack: StackBounds::UNREAD,
        ring_session: 0,
        read_seen: None,
    };

    /// Follows the shared ring to `session` (whose ring starts empty): the
    /// read position seen in another session, and its lap count, mean
    /// nothing in this one.
    #[cfg_attr(zerotrace_loom, allow(dead_code))]
    pub(crate) fn follow_ring(&mut self, session: u32) {
        if self.ring_session != session {
            self.ring_session = session;
            self.read_seen = None;
        }
    }
}

/// A thread's hook: whether it is busy, and its state, which only the
/// outermost hook call on the thread touches.
pub(crate) struct ThreadHook {
    /// Inside the hook, or the profiler's own thread: not profiled.
    busy: Cell<bool>,
    /// Accessed only while `busy` is false (the common case's countdown)
    /// or by the call that set it ([`unless_busy`]).
    state: UnsafeCell<ThreadState>,
}

impl ThreadHook {
    /// A thread's hook before its first allocation.
    pub(crate) const fn new() -> ThreadHook {
        ThreadHook {
            busy: Cell::new(false),
            state: UnsafeCell::new(ThreadState::NEW),
        }
    }
}

/// A hook's thread-local.
pub(crate) type ThreadKey = LocalKey<ThreadHook>;

/// The common case, inline: whether an allocation of `size` bytes is not
/// sampled (counted by the thread's countdown, drawn for `epoch`, on a
/// thread not busy). `false` sends it out of line.
#[inline]
pub(crate) fn skips(key: &'static ThreadKey, epoch: u32, size: usize) -> bool {
    key.try_with(|h| {
        if h.busy.get() {
            return false;
        }
        let t = h.state.get();
        // SAFETY: this thread's own state, and the thread is not busy, so
        // no reference to it lives (`unless_busy` holds one only while
        // busy); nothing here allocates, so the hook is not re-entered.
        unsafe { (*t).epoch == epoch && (*t).sampler.skip(size as u64) }
    })
    .unwrap_or(true)
}

/// Whether this thread is busy (inside the hook, or the profiler's own).
#[inline]
pub(crate) fn is_busy(key: &'static ThreadKey) -> bool {
    key.try_with(|h| h.busy.get()).unwrap_or(false)
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

/// Runs `f` on this thread's state, in place, with the thread marked busy
/// meanwhile, unless it already is. A panic in `f` leaves the thread busy
/// for good: unprofiled, never unsound.
#[inline]
pub(crate) fn unless_busy(key: &'static ThreadKey, f: impl FnOnce(&mut ThreadState)) -> Ran {
    key.try_with(|h| {
        if h.busy.get() {
            return Ran::Busy;
        }
        h.busy.set(true);
        // SAFETY: this thread's own state; the busy flag set above keeps
        // every other access out until it is cleared below: a hook
        // re-entered meanwhile (`f` allocating, a signal handler that
        // allocates) reads the flag and returns.
        f(unsafe { &mut *h.state.get() });
        h.busy.set(false);
        Ran::Yes
    })
    .unwrap_or(Ran::Gone)
}

/// Marks this thread busy for good (the profiler's own thread).
pub(crate) fn mark_busy(key: &'static ThreadKey) {
    let _ = key.try_with(|h| h.busy.set(true));
}

/// A sampler seed per thread and epoch: the address of this thread's
/// state mixed with the allocation's.
pub(crate) fn seed(key: &'static ThreadKey, addr: u64, epoch: u32) -> u64 {
    let here = key.try_with(|h| h as *const _ as u64).unwrap_or(0);
    (here ^ addr.rotate_left(17) ^ u64::from(epoch).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1
}

#[cfg(test)]
mod tests {
    use super::{Ran, ThreadHook, ThreadKey, is_busy, mark_busy, seed, skips, unless_busy};
    use crate::sampler::Sampler;

    thread_local! {
        static HOOK: ThreadHook = const { ThreadHook::new() };
        static OWN: ThreadHook = const { ThreadHook::new() };
    }

    fn key() -> &'static ThreadKey {
        &HOOK
    }

    #[test]
    fn the_state_is_kept_in_place_and_a_reentered_hook_sees_only_the_flag() {
        // A new thread: no epoch drawn yet, so the common case sends the
        // allocation out of line.
        assert!(!skips(key(), 7, 16));
        let ran = unless_busy(key(), |t| {
            t.epoch = 7;
            t.sampler = Sampler::new(1 << 20, 12345);
            assert!(is_busy(key()));
            // Re-entered (the hook allocating): neither path runs.
            assert!(!skips(key(), 7, 16));
            assert_eq!(unless_busy(key(), |_| unreachable!()), Ran::Busy);
            t.ring_session = 3;
        });
        assert_eq!(ran, Ran::Yes);
        assert!(!is_busy(key()));
        // What the outer call wrote stayed: the countdown now skips.
        assert!(skips(key(), 7, 16));
        assert!(!skips(key(), 8, 16), "another epoch is drawn anew");
        unless_busy(key(), |t| assert_eq!((t.epoch, t.ring_session), (7, 3)));
        // Each thread its own hook, and the seed tells threads apart.
        let there = std::thread::spawn(|| {
            assert!(!is_busy(key()));
            seed(key(), 64, 1)
        })
        .join()
        .unwrap();
        assert_ne!(seed(key(), 64, 1), there);
    }

    #[test]
    fn a_thread_marked_busy_is_never_profiled() {
        mark_busy(&OWN);
        assert!(is_busy(&OWN));
        assert!(!skips(&OWN, 0, 1));
        assert_eq!(unless_busy(&OWN, |_| unreachable!()), Ran::Busy);
    }
}
