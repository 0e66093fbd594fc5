//! [`HeapProfiler`], the `GlobalAlloc` a Rust program installs to be heap
//! profiled: it forwards every call to the allocator it wraps and, while a
//! session profiles this process, samples allocations as heapprofd's
//! client does and queues them (with the thread's registers and stack)
//! for the profiler's thread. With no session, an allocation costs one
//! relaxed load and a branch more than the inner allocator's.
//!
//! Rules the hook keeps, whatever the program does:
//! - it never allocates through itself: a thread inside the hook (or the
//!   profiler's own thread) is marked busy in a thread-local, and any
//!   allocation it makes meanwhile goes straight to the inner allocator
//!   (so the queue's own growth, a signal handler that allocates, the
//!   unwinder's work are never recorded, never re-entered);
//! - its thread-local state is plain data with a constant initialiser
//!   (no lazy set-up, no destructor), valid in any thread at any time,
//!   worked on in place behind its busy flag (`thread_hook.rs`);
//! - a `fork` child is not profiled (heapprofd's default): the queue's
//!   lock is held across the fork and released in both processes, and the
//!   child switches the hook off;
//! - a free is queued before the inner allocator gets the memory back.
//!
//! The session, the interval and their epoch are one [`SamplingParams`],
//! which each thread's sampler follows; under `--cfg zerotrace_loom`
//! their atomics are loom's, so the loom models in
//! `tracing-core/loom/tests/loom_heap.rs` check this very protocol (the
//! `ACTIVE` switch of the hot path stays a plain `std` atomic).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
#[cfg(not(zerotrace_loom))]
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::{Duration, Instant};

#[cfg(zerotrace_loom)]
use loom::sync::atomic::{AtomicU32, AtomicU64};

use super::capture::{Regs, StackBounds, capture, here};
use super::record_queue::{AllocRecord, Overrun, Pushed, QUEUE, maybe_sampled};
use super::sampler::Sampler;
use super::thread_hook::{self, Ran, ThreadHook, ThreadState};

/// The name of the heap this allocator's blocks are profiled as.
pub const RUST_HEAP: &str = "rust.global_alloc";

/// The most stack bytes copied per sample (deeper frames are cut, and the
/// sample says so).
pub const STACK_COPY_BYTES: usize = 64 << 10;

/// Whether a session profiles this process now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Heap bytes the profiler itself holds (allocated by busy threads, less
/// what they freed) since the session began.
static OWN_BYTES: AtomicI64 = AtomicI64::new(0);

/// What every thread's sampler follows: the running session (records of
/// another are dropped), the sampling interval, and an epoch bumped
/// (Release) after either changes, so that a thread that sees the new
/// epoch (Acquire) sees them too and draws its sampler anew.
pub struct SamplingParams {
    session: AtomicU32,
    epoch: AtomicU32,
    interval: AtomicU64,
}

impl SamplingParams {
    /// No session, interval 0, epoch 0.
    #[cfg(not(zerotrace_loom))]
    pub const fn new() -> Self {
        SamplingParams {
            session: AtomicU32::new(0),
            epoch: AtomicU32::new(0),
            interval: AtomicU64::new(0),
        }
    }

    /// No session, interval 0, epoch 0 (loom's atomics are not `const`).
    #[cfg(zerotrace_loom)]
    pub fn new() -> Self {
        SamplingParams {
            session: AtomicU32::new(0),
            epoch: AtomicU32::new(0),
            interval: AtomicU64::new(0),
        }
    }

    /// Starts `session` at `interval` bytes: the interval, the session,
    /// then a new epoch.
    pub fn start(&self, session: u32, interval: u64) {
        self.interval.store(interval, Ordering::Relaxed);
        self.session.store(session, Ordering::Release);
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Changes the interval (adaptive sampling raises it): the interval,
    /// then a new epoch.
    pub fn set_interval(&self, interval: u64) {
        self.interval.store(interval, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// The running session (0: none).
    #[inline]
    pub fn session(&self) -> u32 {
        self.session.load(Ordering::Acquire)
    }

    /// The sampling interval in force.
    #[inline]
    pub fn interval(&self) -> u64 {
        self.interval.load(Ordering::Relaxed)
    }

    /// The epoch now, for a thread's cheap "nothing changed" check (its
    /// redraw reads it again with `Acquire`).
    #[inline]
    pub fn epoch_now(&self) -> u32 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Draws `sampler` anew, seeded with `seed(epoch)`, if the parameters
    /// changed since `epoch`, the epoch it was drawn for (which becomes the
    /// new one): what a thread does before it samples an allocation. A
    /// sampler never drawn has the epoch `u32::MAX` ([`Sampler::UNSET`]).
    #[inline]
    pub fn redraw_if_changed(
        &self,
        epoch: &mut u32,
        sampler: &mut Sampler,
        seed: impl FnOnce(u32) -> u64,
    ) {
        let now = self.epoch.load(Ordering::Acquire);
        if *epoch != now {
            *epoch = now;
            *sampler = Sampler::new(self.interval.load(Ordering::Relaxed), seed(now));
        }
    }

    /// Forgets the session (a `fork` child: nothing it records is taken).
    fn forget_session(&self) {
        self.session.store(0, Ordering::Relaxed);
    }
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams::new()
    }
}

/// The parameters of this process.
#[cfg(not(zerotrace_loom))]
static PARAMS: SamplingParams = SamplingParams::new();

#[cfg(zerotrace_loom)]
loom::lazy_static! {
    /// The parameters of this process (under loom, one per execution that
    /// touches them; the models make their own).
    static ref PARAMS: SamplingParams = SamplingParams::new();
}

thread_local! {
    static THREAD: ThreadHook = const { ThreadHook::new() };
}

/// A `GlobalAlloc` that heap profiles the allocator `A` it wraps (the
/// system allocator by default):
///
/// ```no_run
/// use zerotrace_heap_profile::HeapProfiler;
///
/// #[global_allocator]
/// static ALLOC: HeapProfiler = HeapProfiler::system();
/// ```
///
/// then [`register`](super::register) the data source with the program's
/// producer; a session that enables `android.heapprofd` for this process
/// gets its profile.
#[derive(Debug, Default)]
pub struct HeapProfiler<A = System> {
    inner: A,
}

impl HeapProfiler<System> {
    /// Around the system allocator.
    pub const fn system() -> Self {
        HeapProfiler { inner: System }
    }
}

impl<A> HeapProfiler<A> {
    /// Around `inner`.
    pub const fn new(inner: A) -> Self {
        HeapProfiler { inner }
    }
}

// SAFETY: every call is forwarded to `inner` with the caller's arguments
// and its result returned unchanged; the hook only reads addresses and
// sizes and never touches the blocks.
unsafe impl<A: GlobalAlloc> GlobalAlloc for HeapProfiler<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        let p = unsafe { self.inner.alloc(layout) };
        if ACTIVE.load(Ordering::Relaxed) && !p.is_null() {
            on_alloc_fast(p as u64, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if ACTIVE.load(Ordering::Relaxed) && !p.is_null() {
            on_alloc_fast(p as u64, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ACTIVE.load(Ordering::Relaxed) {
            on_free_fast(ptr as u64, layout.size());
        }
        // SAFETY: forwarded as received.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // As heapprofd: a free of the old block and an allocation of the
        // new one (the free queued while the old address is still ours).
        let active = ACTIVE.load(Ordering::Relaxed);
        if active {
            on_free_fast(ptr as u64, layout.size());
        }
        // SAFETY: forwarded as received.
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if active && !p.is_null() {
            on_alloc_fast(p as u64, new_size);
        }
        p
    }
}

/// Whether a session samples this process now: the one relaxed load an
/// allocator that is not a [`HeapProfiler`] (a C `malloc` interposer)
/// makes before calling [`record_alloc`] or [`record_free`].
#[inline]
pub fn sampling() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// For an allocator other than [`HeapProfiler`]: the block of `size`
/// bytes at `addr` was just allocated (call after the allocation, only
/// when [`sampling`] and the block is not null).
pub fn record_alloc(addr: u64, size: usize) {
    on_alloc_fast(addr, size);
}

/// For an allocator other than [`HeapProfiler`]: the block at `addr` (of
/// `size` bytes, or 0 if unknown) is about to be freed (call before the
/// memory goes back, only when [`sampling`]).
pub fn record_free(addr: u64, size: usize) {
    on_free_fast(addr, size);
}

/// Runs `f` with this thread marked busy, unless it already is (or its
/// thread-local is gone): then `f` does not run, and `own` bytes are
/// counted as the profiler's own (positive for an allocation, negative for
/// a free).
#[inline]
fn unless_busy(own: i64, f: impl FnOnce(&mut ThreadState)) {
    if thread_hook::unless_busy(&THREAD, f) == Ran::Busy {
        OWN_BYTES.fetch_add(own, Ordering::Relaxed);
    }
}

/// The allocation hook's common case inline: an allocation that is not
/// sampled costs a thread-local countdown; the rest goes to [`on_alloc`],
/// with the registers of the allocating function this is inlined in (so
/// the hook's own frames are neither copied nor unwound: `capture::here`).
#[inline(always)]
fn on_alloc_fast(addr: u64, size: usize) {
    let skipped = thread_hook::skips(&THREAD, PARAMS.epoch_now(), size);
    if !skipped {
        on_alloc(addr, size, here());
    }
}

#[cold]
#[inline(never)]
fn on_alloc(addr: u64, size: usize, regs: Option<Regs>) {
    unless_busy(size as i64, |t| {
        PARAMS.redraw_if_changed(&mut t.epoch, &mut t.sampler, |epoch| seed(addr, epoch));
        let sample_size = t.sampler.sample_size(size as u64);
        if sample_size > 0 {
            queue_alloc(t, addr, sample_size, regs);
        }
    });
}

/// The free hook's common case inline: a block that cannot be a sampled
/// one, freed by a thread that is not the profiler's, costs a load.
#[inline]
fn on_free_fast(addr: u64, size: usize) {
    let busy = || thread_hook::is_busy(&THREAD);
    if maybe_sampled(addr) || busy() {
        on_free(addr, size);
    }
}

#[cold]
#[inline(never)]
fn on_free(addr: u64, size: usize) {
    let own = -(size as i64);
    if !maybe_sampled(addr) {
        // Only the busy check, for the profiler's own count.
        if thread_hook::is_busy(&THREAD) {
            OWN_BYTES.fetch_add(own, Ordering::Relaxed);
        }
        return;
    }
    unless_busy(own, |_| {
        let session = PARAMS.session();
        QUEUE.lock().free(session, addr);
    });
}

/// A seed per thread and epoch: the address of this thread's state mixed
/// with the allocation's.
fn seed(addr: u64, epoch: u32) -> u64 {
    thread_hook::seed(&THREAD, addr, epoch)
}

fn queue_alloc(t: &mut ThreadState, addr: u64, sample_size: u64, regs: Option<Regs>) {
    let session = PARAMS.session();
    if !t.stack.is_read() {
        let here = std::hint::black_box(&session) as *const u32 as u64;
        t.stack = StackBounds::of(here);
    }
    let stack = if !t.stack.is_known() {
        None
    } else {
        let buffer = QUEUE.lock().take_buffer();
        // SAFETY: `regs` were taken in `on_alloc_fast`, inlined in an
        // allocating function of this thread that has not returned.
        match unsafe { capture(&mut t.stack, regs, STACK_COPY_BYTES, buffer) } {
            Ok(c) => Some(c),
            Err(buffer) => {
                QUEUE.lock().give_back([buffer]);
                None
            }
        }
    };
    let mut rec = AllocRecord {
        addr,
        sample_size,
        stack,
    };
    let mut waited: Option<Instant> = None;
    loop {
        let outcome = {
            let mut q = QUEUE.lock();
            let interval = PARAMS.interval();
            match q.try_push(session, interval, rec) {
                Ok(p) => {
                    if let Some(start) = waited {
                        q.blocked_ns += start.elapsed().as_nanos() as u64;
                    }
                    Ok(p)
                }
                Err(back) => {
                    let limit = q.limits().block_timeout_us;
                    let start = *waited.get_or_insert_with(Instant::now);
                    if limit > 0 && start.elapsed() >= Duration::from_micros(u64::from(limit)) {
                        q.timed_out();
                        q.blocked_ns += start.elapsed().as_nanos() as u64;
                        Ok(Pushed::Refused(Some(Overrun::Timeout)))
                    } else {
                        Err(back)
                    }
                }
            }
        };
        match outcome {
            Ok(Pushed::Queued { new_interval }) => {
                if let Some(i) = new_interval {
                    PARAMS.set_interval(i);
                }
                return;
            }
            Ok(Pushed::Refused(Some(_))) => {
                // The profile stopped (heapprofd tears the client down):
                // nothing more is sampled in this session.
                ACTIVE.store(false, Ordering::Relaxed);
                return;
            }
            Ok(Pushed::Refused(None)) => return,
            Err(back) => {
                rec = back;
                std::thread::yield_now();
            }
        }
    }
}

/// Marks this thread as the profiler's own: nothing it allocates is
/// recorded.
pub(crate) fn exclude_this_thread() {
    thread_hook::mark_busy(&THREAD);
}

/// Starts sampling for `session` at `interval` bytes.
pub(crate) fn activate(session: u32, interval: u64) {
    install_fork_handlers();
    OWN_BYTES.store(0, Ordering::Relaxed);
    PARAMS.start(session, interval);
    ACTIVE.store(true, Ordering::Release);
}

/// Stops sampling (records already queued stay for the profiler).
pub(crate) fn deactivate() {
    ACTIVE.store(false, Ordering::Release);
}

/// Heap bytes the profiler holds, counted since the session began.
pub(crate) fn own_bytes() -> u64 {
    OWN_BYTES.load(Ordering::Relaxed).max(0) as u64
}

/// Whether sampling is on (a full queue or a fork child turns it off).
pub(crate) fn is_active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The sampling interval in force (adaptive sampling may have raised it).
pub(crate) fn current_interval() -> u64 {
    PARAMS.interval()
}

fn install_fork_handlers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        extern "C" fn prepare() {
            QUEUE.lock_forever();
        }
        extern "C" fn parent() {
            // SAFETY: `prepare` took the lock on this thread and kept no
            // guard.
            unsafe { QUEUE.force_unlock() };
        }
        extern "C" fn child() {
            ACTIVE.store(false, Ordering::Relaxed);
            PARAMS.forget_session();
            // SAFETY: as in `parent`; the child has only this thread.
            unsafe { QUEUE.force_unlock() };
        }
        // SAFETY: registration only stores the three function pointers,
        // which touch nothing but atomics and the queue's lock.
        unsafe {
            libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
        }
    });
}
