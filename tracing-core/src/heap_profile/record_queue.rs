//! What the allocation hook hands the profiler's thread, in order: sampled
//! allocations (address, sizes, thread, time, registers and stack copy)
//! and the frees of sampled addresses. The in-process counterpart of
//! heapprofd's shared ring buffer, bounded the same way (`shmem_size_bytes`
//! of pending records; adaptive sampling doubles the interval above a
//! threshold; a full queue either stops the profile, `buffer_overran`, or
//! makes the allocating thread wait, `block_client`).
//!
//! A free is queued only for an address the hook sampled and has not seen
//! freed: the set of live sampled addresses lives here, behind the same
//! lock, with an atomic bitmap in front of it so that most frees (of
//! blocks never sampled) cost one load. A free is queued before the
//! memory goes back to the allocator, so a reuse of the address is always
//! queued after it.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxBuildHasher;

use super::spin_lock::SpinLock;

/// One record.
#[derive(Debug)]
pub(crate) enum Record {
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
pub(crate) struct AllocRecord {
    /// Its address.
    pub addr: u64,
    /// The bytes it counts for (its size, or whole intervals).
    pub sample_size: u64,
    /// The allocating thread's registers (ip, sp, bp) and stack copy, if
    /// they could be captured.
    pub stack: Option<super::capture::Captured>,
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
pub(crate) struct QueueLimits {
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
pub(crate) enum Overrun {
    /// The queue was full and the config did not allow waiting.
    Full,
    /// Waited `block_client_timeout_us` for room in vain.
    Timeout,
}

/// The queue and the live sampled addresses of the running session.
pub(crate) struct Queue {
    /// The session these records belong to (0: none).
    pub session: u32,
    records: VecDeque<Record>,
    bytes: usize,
    limits: QueueLimits,
    live: HashSet<u64, FxBuildHasher>,
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

/// The one queue of this process.
pub(crate) static QUEUE: SpinLock<Queue> = SpinLock::new(Queue {
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
    live: HashSet::with_hasher(FxBuildHasher),
    overrun: None,
    blocked_ns: 0,
    spare: Vec::new(),
});

const FILTER_WORDS: usize = 4096;
/// One bit per hash of a live sampled address (never cleared within a
/// session: a stale bit costs a lock, never a missed free).
static FILTER: [AtomicU64; FILTER_WORDS] = [const { AtomicU64::new(0) }; FILTER_WORDS];

fn filter_bit(addr: u64) -> (usize, u64) {
    let h = (addr >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 46; // 18 bits
    ((h >> 6) as usize % FILTER_WORDS, 1 << (h & 63))
}

/// Whether `addr` may be a live sampled address.
#[inline]
pub(crate) fn maybe_sampled(addr: u64) -> bool {
    let (w, b) = filter_bit(addr);
    FILTER[w].load(Ordering::Relaxed) & b != 0
}

/// What pushing an allocation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Queued.
    Queued {
        /// Adaptive sampling asks for this interval from now on.
        new_interval: Option<u64>,
    },
    /// Not queued: another session's record, or the profile stopped.
    Refused(Option<Overrun>),
}

impl Queue {
    /// Starts session `session` afresh.
    pub(crate) fn begin(&mut self, session: u32, limits: QueueLimits) {
        self.session = session;
        self.records = VecDeque::new();
        self.bytes = 0;
        self.limits = limits;
        self.live = HashSet::with_hasher(FxBuildHasher);
        self.overrun = None;
        self.blocked_ns = 0;
        for w in &FILTER {
            w.store(0, Ordering::Relaxed);
        }
    }

    /// Ends the session: nothing more is queued, the spare buffers go.
    pub(crate) fn end(&mut self) {
        self.begin(0, self.limits);
        self.spare = Vec::new();
    }

    /// Takes every pending record, oldest first.
    pub(crate) fn drain(&mut self) -> VecDeque<Record> {
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

    /// Sampled addresses not yet freed.
    #[cfg(test)]
    pub(crate) fn live_count(&self) -> usize {
        self.live.len()
    }

    /// Queues the free of `addr` if it is a live sampled address.
    pub(crate) fn free(&mut self, session: u32, addr: u64) {
        if self.session == session && self.session != 0 && self.live.remove(&addr) {
            // Frees are always taken: they are small, bounded by the live
            // sampled blocks, and dropping one would leave a block live
            // forever.
            let r = Record::Free { addr };
            self.bytes += r.bytes();
            self.records.push_back(r);
        }
    }

    /// Tries once to queue `rec` for session `session`: `Err(rec)` when
    /// there is no room and the config says to wait.
    pub(crate) fn try_push(
        &mut self,
        session: u32,
        interval: u64,
        rec: AllocRecord,
    ) -> Result<Pushed, AllocRecord> {
        if self.session != session || self.session == 0 || self.overrun.is_some() {
            return Ok(Pushed::Refused(self.overrun));
        }
        let r = Record::Alloc(rec);
        let size = r.bytes();
        if self.bytes + size > self.limits.cap {
            if self.limits.block {
                let Record::Alloc(rec) = r else {
                    unreachable!("built as an allocation above")
                };
                return Err(rec);
            }
            self.overrun = Some(Overrun::Full);
            return Ok(Pushed::Refused(self.overrun));
        }
        let addr = match &r {
            Record::Alloc(a) => a.addr,
            Record::Free { addr } => *addr,
        };
        self.bytes += size;
        self.records.push_back(r);
        // A block at an address still live (its free was not seen) is
        // replaced; the books count the old one freed.
        self.live.insert(addr);
        let (w, b) = filter_bit(addr);
        FILTER[w].fetch_or(b, Ordering::Relaxed);
        let l = self.limits;
        let new_interval = (l.adaptive_threshold > 0
            && self.bytes > l.adaptive_threshold
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

    /// The limits in force.
    pub(crate) fn limits(&self) -> QueueLimits {
        self.limits
    }

    /// Records that waiting for room failed: the profile stops.
    pub(crate) fn timed_out(&mut self) {
        self.overrun = Some(Overrun::Timeout);
    }
}

#[cfg(test)]
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

    fn fresh() -> Queue {
        Queue {
            session: 0,
            records: VecDeque::new(),
            bytes: 0,
            limits: limits(0, false),
            live: HashSet::with_hasher(FxBuildHasher),
            overrun: None,
            blocked_ns: 0,
            spare: Vec::new(),
        }
    }

    #[test]
    fn frees_follow_their_allocations_and_only_sampled_ones_are_queued() {
        let mut q = fresh();
        q.begin(1, limits(1 << 20, false));
        assert!(matches!(
            q.try_push(1, 8, rec(0x1000)),
            Ok(Pushed::Queued { new_interval: None })
        ));
        q.free(1, 0x2000); // never sampled
        q.free(1, 0x1000);
        q.free(1, 0x1000); // a second free of it matches nothing
        q.free(2, 0x1000); // another session's
        let kinds: Vec<_> = q
            .drain()
            .into_iter()
            .map(|r| match r {
                Record::Alloc(a) => ("alloc", a.addr),
                Record::Free { addr } => ("free", addr),
            })
            .collect();
        assert_eq!(kinds, [("alloc", 0x1000), ("free", 0x1000)]);
        assert_eq!(q.live_count(), 0);
    }

    #[test]
    fn a_full_queue_stops_the_profile_or_asks_to_wait() {
        let mut q = fresh();
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
        let mut q = fresh();
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
