//! What the allocation hook hands the profiler's thread, in order: sampled
//! allocations (address, sizes, thread, time, registers and stack copy)
//! and the frees of sampled addresses. The in-process counterpart of
//! heapprofd's shared ring buffer, bounded the same way (`shmem_size_bytes`
//! of pending records; adaptive sampling doubles the interval above a
//! threshold; a full queue either stops the profile, `buffer_overran`, or
//! makes the allocating thread wait, `block_client`).
//!
//! A free is queued only when a filter of atomic counts says a sampled
//! block may live at its address, so most frees (of blocks never sampled)
//! cost one load. The hook adds to an address's count when it queues a
//! sampled allocation; the profiler's thread takes one off when a block
//! leaves its books (the live-block table is the profiler's alone: the
//! hook keeps no set of its own, whose memory would grow with the live
//! sampled blocks beside the books'). A free the filter lets through that
//! matches no live block is dropped by the books. A free is queued before
//! the memory goes back to the allocator, so a reuse of the address is
//! always queued after it.
//!
//! The queue and its filter make one [`Recorder`]; the process has one,
//! [`QUEUE`]. Under `--cfg zerotrace_loom` the filter's slots are loom's
//! atomics (and the lock loom's, see `spin_lock.rs`), so the loom models in
//! `tracing-core/loom/tests/loom_heap.rs` race this very code on recorders
//! of their own.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
#[cfg(not(zerotrace_loom))]
use std::sync::atomic::{AtomicU16, AtomicU64};

#[cfg(zerotrace_loom)]
use loom::sync::atomic::{AtomicU16, AtomicU64};

use super::filter_bucket::bucket_index;
use super::spin_lock::{SpinGuard, SpinLock};

/// One record.
#[derive(Debug)]
pub enum Record {
    /// A sampled allocation.
    Alloc(AllocRecord),
    /// The free of a sampled allocation.
    Free {
        /// Its address.
        addr: u64,
    },
}

/// A sampled allocation.
#[derive(Debug)]
pub struct AllocRecord {
    /// Its address.
    pub addr: u64,
    /// The bytes it counts for (its size, or whole intervals).
    pub sample_size: u64,
    /// The allocating thread's registers (ip, sp, bp) and stack copy, if
    /// they could be captured.
    pub(crate) stack: Option<super::capture::Captured>,
}

impl AllocRecord {
    /// An allocation of `sample_size` bytes at `addr`, without registers or
    /// stack (the loom models' records).
    pub fn without_stack(addr: u64, sample_size: u64) -> Self {
        AllocRecord {
            addr,
            sample_size,
            stack: None,
        }
    }

    /// Its registers (ip, sp, bp), stack bytes and whether the copy was
    /// cut, if captured: what the ring's loom models check a frame by.
    #[cfg(zerotrace_loom)]
    pub fn stack_parts(&self) -> Option<(u64, u64, u64, &[u8], bool)> {
        self.stack
            .as_ref()
            .map(|c| (c.ip, c.sp, c.bp, &c.stack[..], c.maxed))
    }
}

impl Record {
    fn bytes(&self) -> usize {
        match self {
            Record::Alloc(a) => 64 + a.stack.as_ref().map_or(0, |c| c.stack.len()),
            Record::Free { .. } => 16,
        }
    }
}

/// How the queue behaves for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Pending record bytes allowed.
    pub cap: usize,
    /// Wait for room instead of stopping the profile.
    pub block: bool,
    /// How long to wait (0: as long as it takes).
    pub block_timeout_us: u32,
    /// Above this many pending bytes, double the interval (0: never).
    pub adaptive_threshold: usize,
    /// Up to this interval (0: no cap).
    pub adaptive_max_interval: u64,
}

/// Why the hook stopped queueing (the profile ends; the dump says why).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// The queue was full and the config did not allow waiting.
    Full,
    /// Waited `block_client_timeout_us` for room in vain.
    Timeout,
}

/// The queue of the running session.
pub struct Queue {
    /// The session these records belong to (0: none).
    pub session: u32,
    records: VecDeque<Record>,
    bytes: usize,
    limits: QueueLimits,
    /// Why queueing stopped, if it did.
    pub overrun: Option<Overrun>,
    /// Nanoseconds allocating threads waited for room.
    pub blocked_ns: u64,
    /// Stack buffers handed back by the profiler's thread, for the next
    /// samples: after warm-up a sample allocates nothing (a fresh buffer
    /// of a few KiB per sample made glibc consolidate its fast bins on
    /// the allocating thread, and freeing it on another thread cost
    /// more).
    spare: Vec<Vec<u8>>,
}

/// Spare stack buffers kept at most.
const MAX_SPARE: usize = 64;

/// Slots of the filter: 524,288 (1 MiB, the preloaded client's filter's
/// size: with 100 MiB of small blocks live, sampled at 4096 bytes, about
/// one free in twenty passes it); 64 under Miri (which checks each
/// atomic's every access, and a session's start clears them all); 2 in
/// the loom models (loom tracks every atomic; two slots make distinct
/// addresses share one).
#[cfg(all(not(zerotrace_loom), not(miri)))]
const FILTER_SLOTS: usize = 1 << 19;
#[cfg(all(not(zerotrace_loom), miri))]
const FILTER_SLOTS: usize = 64;
#[cfg(zerotrace_loom)]
const FILTER_SLOTS: usize = 2;

/// Slots of the filter's record of addresses freed since (4096: 32 KiB; 2
/// under Miri and loom).
#[cfg(all(not(zerotrace_loom), not(miri)))]
const FREED_SLOTS: usize = 1 << 12;
#[cfg(any(zerotrace_loom, miri))]
const FREED_SLOTS: usize = 2;

/// Per slot, how many sampled blocks queued or in the books hash there: a
/// free whose slot is empty costs one load. Counts, not bits, so that a
/// slot empties again when its blocks are freed (a program that reuses its
/// addresses, as any does, would otherwise set every bit in time and take
/// the lock on every free). A slot's count never falls below the live
/// sampled blocks there: the hook adds one as it queues an allocation, the
/// profiler's thread takes one off only after the block left its books. A
/// full slot stays full (its frees all pass).
///
/// Beside the counts, a direct-mapped record of addresses whose free was
/// queued with no sampled allocation there since: no sampled block can be
/// live at such an address, so its frees are not queued. Without it, an
/// address the allocator hands out again at once (glibc's per-thread
/// caches do) would send each of its frees through the lock until the
/// profiler's thread released the sampled block's count. A slot an
/// address shares with another only loses it its shortcut.
///
/// Both change only under the queue's lock, so a load and a store make
/// each change; the hook reads them without it.
struct Filter {
    counts: [AtomicU16; FILTER_SLOTS],
    freed: [AtomicU64; FREED_SLOTS],
}

impl Filter {
    #[cfg(not(zerotrace_loom))]
    const fn new() -> Self {
        Filter {
            counts: [const { AtomicU16::new(0) }; FILTER_SLOTS],
            freed: [const { AtomicU64::new(0) }; FREED_SLOTS],
        }
    }

    #[cfg(zerotrace_loom)]
    fn new() -> Self {
        Filter {
            counts: std::array::from_fn(|_| AtomicU16::new(0)),
            freed: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The slot of the freed addresses `addr` would be in.
    #[inline]
    fn freed_slot(&self, addr: u64) -> &AtomicU64 {
        &self.freed[(addr >> 4) as usize % FREED_SLOTS]
    }

    #[inline]
    fn may_contain(&self, addr: u64) -> bool {
        self.counts[filter_slot(addr)].load(Ordering::Relaxed) != 0
            && self.freed_slot(addr).load(Ordering::Relaxed) != addr
    }

    /// A free of `addr` was queued.
    fn freed(&self, addr: u64) {
        self.freed_slot(addr).store(addr, Ordering::Relaxed);
    }

    fn insert(&self, addr: u64) {
        let freed = self.freed_slot(addr);
        if freed.load(Ordering::Relaxed) == addr {
            freed.store(0, Ordering::Relaxed);
        }
        let slot = &self.counts[filter_slot(addr)];
        let n = slot.load(Ordering::Relaxed);
        if n != u16::MAX {
            slot.store(n + 1, Ordering::Relaxed);
        }
    }

    fn remove(&self, addr: u64) {
        let slot = &self.counts[filter_slot(addr)];
        let n = slot.load(Ordering::Relaxed);
        if n != 0 && n != u16::MAX {
            slot.store(n - 1, Ordering::Relaxed);
        }
    }

    fn clear(&self) {
        for w in &self.counts {
            if w.load(Ordering::Relaxed) != 0 {
                w.store(0, Ordering::Relaxed);
            }
        }
        for w in &self.freed {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// The filter slot of `addr` (the preloaded client's filter's mapping,
/// `shared_ring/free_filter.rs`: neighbouring blocks, neighbouring slots).
pub fn filter_slot(addr: u64) -> usize {
    bucket_index(addr, FILTER_SLOTS)
}

/// The queue behind its lock and, in front of it, the filter of the
/// addresses it may hold live: what the allocation hook records into.
pub struct Recorder {
    filter: Filter,
    queue: SpinLock<Queue>,
}

impl Recorder {
    /// A recorder of no session.
    #[cfg(not(zerotrace_loom))]
    pub const fn new() -> Self {
        Recorder {
            filter: Filter::new(),
            queue: SpinLock::new(Queue::new()),
        }
    }

    /// A recorder of no session (loom's atomics are not `const`).
    #[cfg(zerotrace_loom)]
    pub fn new() -> Self {
        Recorder {
            filter: Filter::new(),
            queue: SpinLock::new(Queue::new()),
        }
    }

    /// The count of `addr`'s filter slot.
    #[cfg(all(test, not(zerotrace_loom)))]
    fn count(&self, addr: u64) -> u16 {
        self.filter.counts[filter_slot(addr)].load(Ordering::Relaxed)
    }

    /// Whether `addr` may be a live sampled address: two relaxed loads,
    /// and no lock. `false` means it is not, so its free is not queued.
    #[inline]
    pub fn maybe_sampled(&self, addr: u64) -> bool {
        self.filter.may_contain(addr)
    }

    /// Takes the queue's lock.
    #[inline]
    pub fn lock(&self) -> QueueGuard<'_> {
        QueueGuard {
            queue: self.queue.lock(),
            filter: &self.filter,
        }
    }

    /// Takes the queue's lock and leaves it taken (a `fork` prepare
    /// handler); [`Recorder::force_unlock`] releases it.
    pub fn lock_forever(&self) {
        self.queue.lock_forever();
    }

    /// Releases a lock taken by [`Recorder::lock_forever`].
    ///
    /// # Safety
    /// The caller took it with `lock_forever` and no guard of it exists.
    pub unsafe fn force_unlock(&self) {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.queue.force_unlock() };
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

/// The one recorder of this process.
#[cfg(not(zerotrace_loom))]
pub(crate) static QUEUE: Recorder = Recorder::new();

#[cfg(zerotrace_loom)]
loom::lazy_static! {
    /// The one recorder of this process (under loom, one per execution
    /// that touches it; the models make recorders of their own).
    pub(crate) static ref QUEUE: Recorder = Recorder::new();
}

/// Whether `addr` may be a live sampled address of [`QUEUE`] (see
/// [`Recorder::maybe_sampled`]).
#[inline]
pub(crate) fn maybe_sampled(addr: u64) -> bool {
    QUEUE.maybe_sampled(addr)
}

/// What pushing an allocation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued.
    Queued {
        /// Adaptive sampling asks for this interval from now on.
        new_interval: Option<u64>,
    },
    /// Not queued: another session's record, or the profile stopped.
    Refused(Option<Overrun>),
}

/// The queue, locked: the queue's own methods through `Deref`, and those
/// that keep the filter in step with the sampled blocks.
pub struct QueueGuard<'a> {
    queue: SpinGuard<'a, Queue>,
    filter: &'a Filter,
}

impl std::ops::Deref for QueueGuard<'_> {
    type Target = Queue;
    fn deref(&self) -> &Queue {
        &self.queue
    }
}

impl std::ops::DerefMut for QueueGuard<'_> {
    fn deref_mut(&mut self) -> &mut Queue {
        &mut self.queue
    }
}

impl QueueGuard<'_> {
    /// Starts session `session` afresh.
    pub fn begin(&mut self, session: u32, limits: QueueLimits) {
        let q = &mut *self.queue;
        q.session = session;
        q.records = VecDeque::new();
        q.bytes = 0;
        q.limits = limits;
        q.overrun = None;
        q.blocked_ns = 0;
        self.filter.clear();
    }

    /// Queues the free of `addr`, which the filter let through, for
    /// `session`: whether it was a sampled block is for the books to say.
    pub fn free(&mut self, session: u32, addr: u64) {
        // Looked at again under the lock: a release since the hook's look
        // may have emptied the slot.
        if self.filter.may_contain(addr) && self.queue.free(session, addr) {
            self.filter.freed(addr);
        }
    }

    /// The blocks at `addrs` left `session`'s books (freed, or their
    /// address sampled again without a free seen): their slots are taken
    /// off, unless another session began since.
    pub fn release(&mut self, session: u32, addrs: impl IntoIterator<Item = u64>) {
        if self.queue.session == session && session != 0 {
            for a in addrs {
                self.filter.remove(a);
            }
        }
    }

    /// Ends the session: nothing more is queued, the spare buffers go.
    pub fn end(&mut self) {
        let limits = self.queue.limits;
        self.begin(0, limits);
        self.queue.spare = Vec::new();
    }

    /// Tries once to queue `rec` for session `session`: `Err(rec)` when
    /// there is no room and the config says to wait.
    pub fn try_push(
        &mut self,
        session: u32,
        interval: u64,
        rec: AllocRecord,
    ) -> Result<Pushed, AllocRecord> {
        let q = &mut *self.queue;
        if q.session != session || q.session == 0 || q.overrun.is_some() {
            return Ok(Pushed::Refused(q.overrun));
        }
        let r = Record::Alloc(rec);
        let size = r.bytes();
        if q.bytes + size > q.limits.cap {
            if q.limits.block {
                let Record::Alloc(rec) = r else {
                    unreachable!("built as an allocation above")
                };
                return Err(rec);
            }
            q.overrun = Some(Overrun::Full);
            return Ok(Pushed::Refused(q.overrun));
        }
        let addr = match &r {
            Record::Alloc(a) => a.addr,
            Record::Free { addr } => *addr,
        };
        q.bytes += size;
        q.records.push_back(r);
        // A block at an address still live (its free was not seen) is
        // replaced: the books count the old one freed and release it.
        self.filter.insert(addr);
        let l = q.limits;
        let new_interval = (l.adaptive_threshold > 0
            && q.bytes > l.adaptive_threshold
            && (l.adaptive_max_interval == 0 || interval < l.adaptive_max_interval))
            .then(|| {
                let doubled = interval.saturating_mul(2);
                if l.adaptive_max_interval > 0 {
                    doubled.min(l.adaptive_max_interval)
                } else {
                    doubled
                }
            });
        Ok(Pushed::Queued { new_interval })
    }
}

impl Queue {
    /// No session, nothing queued.
    const fn new() -> Self {
        Queue {
            session: 0,
            records: VecDeque::new(),
            bytes: 0,
            limits: QueueLimits {
                cap: 0,
                block: false,
                block_timeout_us: 0,
                adaptive_threshold: 0,
                adaptive_max_interval: 0,
            },
            overrun: None,
            blocked_ns: 0,
            spare: Vec::new(),
        }
    }

    /// Takes every pending record, oldest first.
    pub fn drain(&mut self) -> VecDeque<Record> {
        self.bytes = 0;
        std::mem::take(&mut self.records)
    }

    /// A recycled stack buffer, or a new empty one.
    pub(crate) fn take_buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }

    /// Hands stack buffers back for reuse (beyond [`MAX_SPARE`] they are
    /// dropped).
    pub(crate) fn give_back(&mut self, buffers: impl IntoIterator<Item = Vec<u8>>) {
        for b in buffers {
            if self.spare.len() >= MAX_SPARE {
                break;
            }
            self.spare.push(b);
        }
    }

    /// Bytes of records waiting.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.bytes
    }

    /// Queues the free of `addr` if `session` is the queue's: whether it
    /// did.
    fn free(&mut self, session: u32, addr: u64) -> bool {
        if self.session == session && self.session != 0 {
            // Frees are always taken: they are small, and dropping one
            // would leave a block live forever.
            let r = Record::Free { addr };
            self.bytes += r.bytes();
            self.records.push_back(r);
            true
        } else {
            false
        }
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> QueueLimits {
        self.limits
    }

    /// Records that waiting for room failed: the profile stops.
    pub(crate) fn timed_out(&mut self) {
        self.overrun = Some(Overrun::Timeout);
    }
}

// Loom's atomics work inside a model only: these run on std's.
#[cfg(all(test, not(zerotrace_loom)))]
mod tests {
    use super::*;

    fn rec(addr: u64) -> AllocRecord {
        AllocRecord {
            addr,
            sample_size: 8,
            stack: None,
        }
    }

    fn limits(cap: usize, block: bool) -> QueueLimits {
        QueueLimits {
            cap,
            block,
            block_timeout_us: 0,
            adaptive_threshold: 0,
            adaptive_max_interval: 0,
        }
    }

    fn kinds(q: &mut QueueGuard<'_>) -> Vec<(&'static str, u64)> {
        q.drain()
            .into_iter()
            .map(|r| match r {
                Record::Alloc(a) => ("alloc", a.addr),
                Record::Free { addr } => ("free", addr),
            })
            .collect()
    }

    #[test]
    fn frees_follow_their_allocations_and_only_those_the_filter_passes_are_queued() {
        // A static: the filter's megabyte never sits on the test thread's stack.
        static R: Recorder = Recorder::new();
        let r = &R;
        let mut q = r.lock();
        q.begin(1, limits(1 << 20, false));
        assert!(matches!(
            q.try_push(1, 8, rec(0x1000)),
            Ok(Pushed::Queued { new_interval: None })
        ));
        let elsewhere = (0x2000u64..)
            .step_by(16)
            .find(|&a| filter_slot(a) != filter_slot(0x1000))
            .unwrap();
        // Never sampled, in 0x1000's slot: they pass while 0x1000 counts.
        let mut neighbours = (0x2000u64..)
            .step_by(16)
            .filter(|&a| filter_slot(a) == filter_slot(0x1000));
        let (neighbour, other) = (neighbours.next().unwrap(), neighbours.next().unwrap());
        q.free(1, elsewhere); // never sampled, its slot empty
        q.free(1, 0x1000);
        // The slot counts 0x1000 until the books release it, but its free
        // was queued and nothing sampled there since: not queued again.
        q.free(1, 0x1000);
        q.free(1, neighbour); // for the books to drop
        q.free(2, 0x1000); // another session's
        assert_eq!(
            kinds(&mut q),
            [("alloc", 0x1000), ("free", 0x1000), ("free", neighbour)]
        );
        // Sampled there again: its free is queued again.
        assert!(q.try_push(1, 8, rec(0x1000)).is_ok());
        q.free(1, 0x1000);
        assert_eq!(kinds(&mut q), [("alloc", 0x1000), ("free", 0x1000)]);
        q.release(2, [0x1000, 0x1000]); // another session's books: nothing
        q.free(1, other);
        assert_eq!(kinds(&mut q), [("free", other)]);
        q.release(1, [0x1000, 0x1000]);
        assert!(q.try_push(1, 8, rec(neighbour)).is_ok());
        q.release(1, [neighbour]);
        q.free(1, other);
        assert_eq!(kinds(&mut q), [("alloc", neighbour)], "the slot is empty");
    }

    #[test]
    fn the_filter_counts_each_sampled_block_until_the_books_release_it() {
        // A static: the filter's megabyte never sits on the test thread's stack.
        static R: Recorder = Recorder::new();
        let r = &R;
        assert!(!r.maybe_sampled(0x1000));
        r.lock().begin(1, limits(1 << 20, false));
        assert!(r.lock().try_push(1, 8, rec(0x1000)).is_ok());
        assert!(r.maybe_sampled(0x1000));
        // Two sampled blocks in one slot: it empties when both left the
        // books.
        let other = (0x2000u64..)
            .step_by(16)
            .find(|&a| filter_slot(a) == filter_slot(0x1000))
            .unwrap();
        assert!(r.lock().try_push(1, 8, rec(other)).is_ok());
        r.lock().free(1, 0x1000);
        assert_eq!(r.count(0x1000), 2, "a free alone releases nothing");
        r.lock().release(1, [0x1000]);
        assert!(r.maybe_sampled(other), "`other` is still live there");
        r.lock().release(1, [other]);
        assert!(!r.maybe_sampled(other), "the slot empties");
        r.lock().release(1, [other]); // a release too many takes nothing
        assert_eq!(r.count(0x1000), 0);
        assert!(r.lock().try_push(1, 8, rec(0x1000)).is_ok());
        assert_eq!(r.count(0x1000), 1, "not below zero");
        assert!(r.maybe_sampled(0x1000), "sampled again");
        r.lock().begin(2, limits(1 << 20, false));
        assert!(!r.maybe_sampled(0x1000), "a session starts empty");
        // Refused records count nothing.
        assert!(r.lock().try_push(1, 8, rec(0x1000)).is_ok());
        assert!(!r.maybe_sampled(0x1000));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "counting logic with no unsafe: 131,000 atomic accesses take Miri 20 s; runs in every other test run"
    )]
    fn a_full_slot_stays_full() {
        // A static: the filter's megabyte never sits on the test thread's stack.
        static F: Filter = Filter::new();
        let f = &F;
        for _ in 0..u16::MAX as usize + 5 {
            f.insert(0x1000);
        }
        for _ in 0..u16::MAX as usize + 5 {
            f.remove(0x1000);
        }
        assert!(
            f.may_contain(0x1000),
            "a saturated count cannot be trusted to empty"
        );
    }

    #[test]
    fn a_full_queue_stops_the_profile_or_asks_to_wait() {
        // A static: the filter's megabyte never sits on the test thread's stack.
        static R: Recorder = Recorder::new();
        let r = &R;
        let mut q = r.lock();
        q.begin(3, limits(100, false));
        assert!(matches!(
            q.try_push(3, 8, rec(1)),
            Ok(Pushed::Queued { .. })
        ));
        assert!(matches!(
            q.try_push(3, 8, rec(2)),
            Ok(Pushed::Refused(Some(Overrun::Full)))
        ));
        // Stopped for good, even once there is room.
        q.drain();
        assert!(matches!(
            q.try_push(3, 8, rec(3)),
            Ok(Pushed::Refused(Some(Overrun::Full)))
        ));

        q.begin(4, limits(100, true));
        assert!(q.try_push(4, 8, rec(1)).is_ok());
        assert!(q.try_push(4, 8, rec(2)).is_err(), "wait for room");
        q.drain();
        assert!(matches!(
            q.try_push(4, 8, rec(2)),
            Ok(Pushed::Queued { .. })
        ));
        assert!(matches!(
            q.try_push(5, 8, rec(9)),
            Ok(Pushed::Refused(None))
        ));
    }

    #[test]
    fn adaptive_sampling_doubles_the_interval_up_to_its_cap() {
        // A static: the filter's megabyte never sits on the test thread's stack.
        static R: Recorder = Recorder::new();
        let r = &R;
        let mut q = r.lock();
        q.begin(
            1,
            QueueLimits {
                cap: 1 << 20,
                block: false,
                block_timeout_us: 0,
                adaptive_threshold: 100,
                adaptive_max_interval: 48,
            },
        );
        assert!(matches!(
            q.try_push(1, 16, rec(1)),
            Ok(Pushed::Queued { new_interval: None })
        ));
        assert!(matches!(
            q.try_push(1, 16, rec(2)),
            Ok(Pushed::Queued {
                new_interval: Some(32)
            })
        ));
        assert!(matches!(
            q.try_push(1, 32, rec(3)),
            Ok(Pushed::Queued {
                new_interval: Some(48)
            })
        ));
        assert!(matches!(
            q.try_push(1, 48, rec(4)),
            Ok(Pushed::Queued { new_interval: None })
        ));
    }
}
