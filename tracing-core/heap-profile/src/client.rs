//! The profiled side of a preloaded library's heap profile (heapprofd's
//! client): the `malloc` hook samples, copies the allocating thread's
//! registers and stack into the ring it shares with its helper process,
//! and writes the frees the shared free filter says may be of a sampled
//! block. It starts no thread:
//! glibc's `malloc` keeps its single-thread fast path in a program that
//! has none of its own, and the unwinding, the books and the producer all
//! live in the helper (`helper.rs`).
//!
//! A thread waiting for room (`block_client`, however long its timeout)
//! gives up when the helper is gone, as heapprofd's client gives up when
//! its socket closes: the helper holds the write end of a pipe whose read
//! end hangs up when it dies, however it died, and the profile stops.
//!
//! With no session, an allocation costs two relaxed loads and a branch.
//! The hook's rules are the in-process allocator's (`allocator.rs`): it
//! never allocates through itself (a thread inside it is marked busy), its
//! thread-local state needs no set-up, a `fork` child is not profiled, and
//! a free is written before glibc gets the memory back.

use std::os::fd::{IntoRawFd, OwnedFd};
use std::ptr;
use std::sync::Once;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::allocator::STACK_COPY_BYTES;
use super::capture::{Regs, StackBounds, capture_with, here};
use super::sampler::Sampler;
use super::shared_ring::{
    ALLOC_FIXED, CONTROL_BYTES, Control, FreeFilter, NoRoom, OVERRUN_CORRUPT, OVERRUN_FULL,
    OVERRUN_HELPER_GONE, OVERRUN_TIMEOUT, RING_OFFSET, RingWriter, close_session, word_closed,
    word_session,
};
use super::thread_hook::{self, ThreadHook, ThreadState};

/// The control block (null: not attached, or a `fork` child).
static CTL: AtomicPtr<Control> = AtomicPtr::new(ptr::null_mut());
/// The ring's bytes and how many the mapping holds.
static DATA: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
static DATA_LEN: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD: ThreadHook = const { ThreadHook::new() };
}

/// The free filter shared with the helper (null until attached).
static FILTER_AT: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());

#[inline]
fn filter() -> Option<FreeFilter<'static>> {
    let at = FILTER_AT.load(Ordering::Relaxed);
    // SAFETY: non-null only once `attach` stored the filter of a mapping
    // that is never unmapped, accessed with atomics only.
    (!at.is_null()).then(|| unsafe { FreeFilter::new(at) })
}

/// The control block, while attached.
#[inline]
fn control() -> Option<&'static Control> {
    let c = CTL.load(Ordering::Acquire);
    // SAFETY: non-null only once `attach` stored the control block of a
    // mapping that is never unmapped.
    (!c.is_null()).then(|| unsafe { &*c })
}

/// Attaches the hook to the shared mapping at `base` (`len` bytes: the
/// control block's page, the free filter, then the ring's bytes).
///
/// # Safety
/// `base` is a 4096-aligned, zero-initialised mapping of `len` bytes that
/// stays mapped for the life of the process, shared with the helper only.
pub(crate) unsafe fn attach(base: *mut u8, len: usize) {
    if len <= RING_OFFSET {
        return;
    }
    install_fork_handlers();
    FILTER_AT.store(base.wrapping_add(CONTROL_BYTES), Ordering::Relaxed);
    DATA.store(base.wrapping_add(RING_OFFSET), Ordering::Relaxed);
    DATA_LEN.store(len - RING_OFFSET, Ordering::Relaxed);
    CTL.store(base.cast(), Ordering::Release);
}

/// The read end of the helper's liveness pipe (-1: none).
static HELPER_ALIVE: AtomicI32 = AtomicI32::new(-1);

/// Watches the helper's liveness through `alive`, the read end of a pipe
/// whose only write end the helper holds (kept for the life of the
/// process).
pub(crate) fn watch_helper(alive: OwnedFd) {
    HELPER_ALIVE.store(alive.into_raw_fd(), Ordering::Release);
}

/// Whether the helper is gone: its pipe hung up (the helper never writes
/// it, so any event is the end).
fn helper_gone() -> bool {
    let fd = HELPER_ALIVE.load(Ordering::Acquire);
    if fd < 0 {
        return false;
    }
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one descriptor this process keeps open, without
    // waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents != 0
}

/// Whether a session samples this process now.
#[inline]
pub fn sampling() -> bool {
    control().is_some_and(|c| c.active.load(Ordering::Relaxed) != 0)
}

/// The block of `size` bytes at `addr` was just allocated (call only when
/// [`sampling`] and the block is not null).
/// Inlined, so that the registers a sample's stack copy starts from are the
/// caller's (the interposed function's): the hook's own frames are left
/// out of the copy.
#[inline(always)]
pub fn record_alloc(addr: u64, size: usize) {
    let Some(ctl) = control() else {
        return;
    };
    let skipped = thread_hook::skips(&THREAD, ctl.epoch.load(Ordering::Relaxed), size);
    if !skipped {
        alloc_slow(ctl, addr, size, here());
    }
}

#[cold]
#[inline(never)]
fn alloc_slow(ctl: &Control, addr: u64, size: usize, regs: Option<Regs>) {
    unless_busy(|t| {
        let epoch = ctl.epoch.load(Ordering::Acquire);
        if t.epoch != epoch {
            t.epoch = epoch;
            let interval = ctl.interval.load(Ordering::Relaxed).max(1);
            t.sampler = Sampler::new(interval, seed(addr, epoch));
        }
        let sample_size = t.sampler.sample_size(size as u64);
        if sample_size > 0 {
            // The block is counted in its bucket before its frame is
            // reserved, not after its stack copy: the count's locked
            // instruction waits until every store before it has reached
            // the cache, and the copy's stores, to ring lines last read on
            // the helper's core, are the slowest this thread makes. Here
            // it waits for the last sample's, long done, while this one's
            // drain as the program runs on. A count whose frame is never
            // written (the session ends, its ring overran) only lets that
            // bucket's frees through until the next session clears it.
            if let Some(f) = filter() {
                f.add(addr);
            }
            push_alloc(ctl, t, addr, sample_size, regs);
        }
    });
}

/// The block at `addr` is about to be freed (call only when [`sampling`],
/// before the memory goes back).
#[inline]
pub fn record_free(addr: u64) {
    if filter().is_some_and(|f| f.may_hold(addr)) {
        free_slow(addr);
    }
}

#[cold]
#[inline(never)]
fn free_slow(addr: u64) {
    unless_busy(|t| {
        let Some(ctl) = control() else {
            return;
        };
        let mut waited: Option<Instant> = None;
        let mut waits = 0u32;
        loop {
            let Some(ring) = turn(ctl, t) else {
                return;
            };
            match ring.push_free(addr, u64::MAX, &mut t.read_seen) {
                Ok(()) => {
                    account_wait(ctl, waited);
                    return;
                }
                Err(e) => {
                    if !wait_or_stop(ctl, ring.session(), e, &mut waited) {
                        return;
                    }
                }
            }
            pause(&mut waits);
        }
    });
}

/// The process is exiting: sampling stops, and the helper writes the last
/// dump (marked `disconnected`) before this returns, waiting at most
/// `timeout`.
pub fn at_exit(timeout: Duration) {
    let Some(ctl) = control() else {
        return;
    };
    CTL.store(ptr::null_mut(), Ordering::Release);
    if ctl.active.load(Ordering::SeqCst) == 0 {
        return;
    }
    ctl.exiting.store(1, Ordering::Release);
    let until = Instant::now() + timeout;
    while ctl.exit_done.load(Ordering::Acquire) == 0 && Instant::now() < until && !helper_gone() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A blocking start (after [`start`](super::helper::start) with
/// `starting_up`): waits (at most `timeout`) until a session profiles the
/// process, which it does `from_startup`; whether one does.
pub fn wait_for_session(timeout: Duration) -> bool {
    let Some(ctl) = control() else {
        return false;
    };
    let until = Instant::now() + timeout;
    while ctl.active.load(Ordering::Acquire) == 0 && Instant::now() < until && !helper_gone() {
        std::thread::sleep(Duration::from_millis(2));
    }
    ctl.starting_up.store(0, Ordering::Release);
    ctl.active.load(Ordering::Acquire) != 0
}

/// The ring's writer for the session the reservation word is open for,
/// followed by this thread; `None` when there is nothing to write for (no
/// session, or its word closed: the session is being set up or its
/// profile stopped; a ring of impossible size stops it). No lock: the
/// writer's reservations succeed only while the word stays open for that
/// session.
fn turn<'a>(ctl: &'a Control, t: &mut ThreadState) -> Option<RingWriter<'a>> {
    let w = ctl.reserved.load(Ordering::Acquire);
    let session = word_session(w);
    if word_closed(w) || session == 0 {
        return None;
    }
    t.follow_ring(session);
    // The ring's size is the session's: the helper set it before it opened
    // the word (whose load above was Acquire).
    let ring = ctl.ring_bytes.load(Ordering::Relaxed);
    // SAFETY: DATA holds DATA_LEN bytes mapped for the life of the process
    // (attach), 4096-aligned; each writer writes only the bytes it
    // reserved; the size the helper asked for is checked against DATA_LEN.
    let writer = unsafe {
        RingWriter::new(
            ctl,
            DATA.load(Ordering::Relaxed),
            DATA_LEN.load(Ordering::Relaxed),
            ring,
            session,
        )
    };
    if writer.is_none() {
        stop(ctl, session, OVERRUN_CORRUPT);
    }
    writer
}

fn push_alloc(ctl: &Control, t: &mut ThreadState, addr: u64, sample_size: u64, regs: Option<Regs>) {
    if !t.stack.is_read() {
        let here = std::hint::black_box(&sample_size) as *const u64 as u64;
        t.stack = StackBounds::of(here);
    }
    let mut waited: Option<Instant> = None;
    let mut waits = 0u32;
    loop {
        let Some(ring) = turn(ctl, t) else {
            return;
        };
        let mut slot = None;
        let mut refused = None;
        // A stack copy that could never fit this ring would have the
        // thread wait for room forever (block_client): cut to what fits.
        let max_stack = STACK_COPY_BYTES.min(ring.max_stack_bytes());
        let stack = if !t.stack.is_known() {
            None
        } else {
            // SAFETY: a slot this thread reserved holds the stack's length
            // after its fixed part, no other writer touches it, and the
            // reader does not look at it before the commit; `regs` were taken in
            // `record_alloc`, inlined in a caller that has not returned.
            unsafe {
                capture_with(&mut t.stack, regs, max_stack, |len| {
                    match ring.reserve(ALLOC_FIXED + len, u64::MAX, &mut t.read_seen) {
                        Ok(s) => {
                            slot = Some(s);
                            Some(ring.stack_ptr(s))
                        }
                        Err(e) => {
                            refused = Some(e);
                            None
                        }
                    }
                })
            }
        };
        if slot.is_none() && refused.is_none() {
            // No stack to copy: the allocation alone.
            match ring.reserve(ALLOC_FIXED, u64::MAX, &mut t.read_seen) {
                Ok(s) => slot = Some(s),
                Err(e) => refused = Some(e),
            }
        }
        if let Some(slot) = slot {
            let stack = stack.map(|(regs, n)| (regs, n, n >= max_stack));
            ring.commit_alloc(slot, addr, sample_size, stack);
            ring.prefetch_after(slot);
            adapt(ctl, || ring.pending());
            account_wait(ctl, waited);
            return;
        }
        let e = refused.unwrap_or(NoRoom::Corrupt);
        if !wait_or_stop(ctl, ring.session(), e, &mut waited) {
            return;
        }
        pause(&mut waits);
    }
}

/// A thread waiting for room lets the helper run: it yields a few times,
/// then sleeps a little (on a machine with few cores a thread that only
/// yields takes the time the helper needs to make room).
fn pause(waits: &mut u32) {
    *waits = waits.saturating_add(1);
    if *waits <= 8 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// No room: whether to wait and try again (`block_client`, within its
/// timeout, while the helper lives); otherwise the session's profile
/// stops, saying why (a closed word: the session is over, the record is
/// given up).
fn wait_or_stop(ctl: &Control, session: u32, e: NoRoom, waited: &mut Option<Instant>) -> bool {
    match e {
        NoRoom::Closed => {
            account_wait(ctl, *waited);
            return false;
        }
        NoRoom::Corrupt => {
            stop(ctl, session, OVERRUN_CORRUPT);
            return false;
        }
        NoRoom::Full => {}
    }
    if ctl.block.load(Ordering::Relaxed) == 0 {
        stop(ctl, session, OVERRUN_FULL);
        return false;
    }
    if helper_gone() {
        // No one will ever read the ring: the program goes on unprofiled.
        account_wait(ctl, *waited);
        stop(ctl, session, OVERRUN_HELPER_GONE);
        return false;
    }
    let start = *waited.get_or_insert_with(Instant::now);
    let limit = ctl.block_timeout_us.load(Ordering::Relaxed);
    if limit > 0 && start.elapsed() >= Duration::from_micros(u64::from(limit)) {
        account_wait(ctl, *waited);
        stop(ctl, session, OVERRUN_TIMEOUT);
        return false;
    }
    true
}

fn account_wait(ctl: &Control, waited: Option<Instant>) {
    if let Some(start) = waited {
        ctl.blocked_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// Stops the session's profile (heapprofd tears the client down): its
/// reservation word closed, so no thread writes for it any more; the
/// helper's last dump says why.
fn stop(ctl: &Control, session: u32, why: u64) {
    ctl.overrun
        .store(u64::from(session) << 32 | why, Ordering::Release);
    close_session(ctl, session);
    let _ = ctl
        .active
        .compare_exchange(session, 0, Ordering::SeqCst, Ordering::Relaxed);
}

/// Adaptive sampling: above the threshold of pending bytes, the interval
/// doubles (up to its cap), and every thread draws anew.
fn adapt(ctl: &Control, pending: impl FnOnce() -> u64) {
    let threshold = ctl.adaptive_threshold.load(Ordering::Relaxed);
    if threshold == 0 || pending() <= threshold {
        return;
    }
    let max = ctl.adaptive_max_interval.load(Ordering::Relaxed);
    let interval = ctl.interval.load(Ordering::Relaxed);
    if max > 0 && interval >= max {
        return;
    }
    let doubled = interval.saturating_mul(2);
    let new = if max > 0 { doubled.min(max) } else { doubled };
    ctl.interval.store(new, Ordering::Relaxed);
    ctl.epoch.fetch_add(1, Ordering::Release);
}

#[inline]
fn unless_busy(f: impl FnOnce(&mut ThreadState)) {
    let _ = thread_hook::unless_busy(&THREAD, f);
}

fn seed(addr: u64, epoch: u32) -> u64 {
    thread_hook::seed(&THREAD, addr, epoch)
}

fn install_fork_handlers() {
    if cfg!(miri) {
        // Miri runs no fork, and has no pthread_atfork.
        return;
    }
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // No lock to hand over: a thread of the parent that reserved a frame
        // commits it in the parent (the ring is shared, not copied).
        extern "C" fn child() {
            // A fork child is not profiled; it never writes the ring.
            CTL.store(ptr::null_mut(), Ordering::Relaxed);
        }
        // SAFETY: registration only stores a function pointer, which
        // stores an atomic only.
        unsafe {
            libc::pthread_atfork(None, None, Some(child));
        }
    });
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    //! The hook against a ring in this process's heap, read back as the
    //! helper reads it.
    use super::super::record_queue::Record;
    use super::super::shared_ring::RingReader;
    use super::*;

    #[test]
    fn sampled_allocations_and_their_frees_reach_the_ring_in_order() {
        const RING: usize = 1 << 16;
        let len = RING_OFFSET + RING;
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: a non-zero size; leaked, as `attach` requires.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!base.is_null());
        // SAFETY: zeroed, aligned, never freed, shared with no one.
        unsafe { attach(base, len) };
        let ctl = control().unwrap();
        ctl.interval.store(1, Ordering::Relaxed);
        ctl.ring_bytes.store(RING as u64, Ordering::Relaxed);
        ctl.epoch.fetch_add(1, Ordering::Release);
        super::super::shared_ring::open(ctl, 5);
        ctl.active.store(5, Ordering::SeqCst);
        assert!(sampling());
        record_alloc(0x10_0000, 24);
        record_free(0x20_0000); // never sampled: its bucket is empty
        record_free(0x10_0000);
        // The helper takes the block off its books, and the bucket.
        filter().unwrap().release(0x10_0000);
        record_free(0x10_0000); // a second free: nothing written
        ctl.active.store(0, Ordering::SeqCst);
        super::super::shared_ring::close(ctl);
        assert!(!sampling());
        // SAFETY: the ring's bytes follow the control block's page.
        let mut r = unsafe { RingReader::new(ctl, base.wrapping_add(RING_OFFSET), RING as u64, 5) };
        let mut buf = Vec::new();
        let (s, rec) = r.next(&mut buf).unwrap().unwrap();
        assert_eq!(s, 5);
        let Record::Alloc(a) = rec else {
            panic!("an allocation first")
        };
        assert_eq!((a.addr, a.sample_size), (0x10_0000, 24));
        if cfg!(miri) {
            // No registers nor kernel copy under Miri: the allocation
            // alone, as a sample whose stack could not be captured.
            assert!(a.stack.is_none());
        } else {
            let c = a.stack.expect("the stack was copied");
            assert!(!c.stack.is_empty() && c.ip != 0 && c.sp != 0);
        }
        let (_, rec) = r.next(&mut buf).unwrap().unwrap();
        assert!(matches!(rec, Record::Free { addr: 0x10_0000 }));
        assert!(r.next(&mut buf).unwrap().is_none());
        CTL.store(ptr::null_mut(), Ordering::Release);
    }
}
