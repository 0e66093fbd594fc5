//! The counting filter of live sampled addresses that the preloaded
//! client and its helper share (beside the ring, `shared_ring/mod.rs`): the
//! client writes a free into the ring only when the freed address's bucket
//! says a sampled block may live there, so most frees cost one load; and
//! the helper's releases of buckets, made a few records late so that the
//! line's transfer from the client's core overlaps other work.

use std::sync::atomic::{AtomicU16, Ordering};

use super::FILTER_BUCKETS;
use super::mem::prefetch_for_write;
use crate::filter_bucket::bucket_index;

const _: () = assert!(FILTER_BUCKETS.is_power_of_two());

/// log2 of the bytes of address space a run of `FILTER_BUCKETS` buckets
/// covers: 16 bytes (the least a block is apart from the next) a bucket.
#[cfg(test)]
const REGION_SHIFT: u32 = 4 + FILTER_BUCKETS.trailing_zeros();

/// The free filter the two sides share: per bucket, how many live sampled
/// blocks hash there. The client adds one when it writes a sampled
/// allocation; the helper takes one off when a block leaves its books (a
/// matched free, an address reused); the client writes a free only when
/// the address's bucket is not empty, so most frees cost one load and none
/// of a live sampled block is missed (a bucket empties only after every
/// block in it left the books, and a free is written after its
/// allocation). A full bucket stays full (its frees are all written).
#[derive(Clone, Copy)]
pub(crate) struct FreeFilter<'a> {
    buckets: &'a [AtomicU16],
}

impl<'a> FreeFilter<'a> {
    /// The filter at `at`.
    ///
    /// # Safety
    /// `at` is 2-aligned and valid for `FILTER_BUCKETS` `u16`s for `'a`,
    /// accessed by everyone with atomic operations only.
    pub(crate) unsafe fn new(at: *const u8) -> Self {
        // SAFETY: caller contract; atomics may alias other processes'
        // atomic accesses.
        let buckets = unsafe { std::slice::from_raw_parts(at.cast::<AtomicU16>(), FILTER_BUCKETS) };
        FreeFilter { buckets }
    }

    /// An address's bucket ([`bucket_index`]).
    #[inline]
    fn bucket(&self, addr: u64) -> &'a AtomicU16 {
        &self.buckets[bucket_index(addr, FILTER_BUCKETS)]
    }

    /// Whether a live sampled block may be at `addr`.
    #[inline]
    pub(crate) fn may_hold(&self, addr: u64) -> bool {
        self.bucket(addr).load(Ordering::Relaxed) != 0
    }

    /// A sampled block is live at `addr` (the client).
    pub(crate) fn add(&self, addr: u64) {
        let _ = self
            .bucket(addr)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| v.checked_add(1));
    }

    /// The block at `addr` left the books (the helper).
    pub(crate) fn release(&self, addr: u64) {
        let _ = self
            .bucket(addr)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                (v != 0 && v != u16::MAX).then(|| v - 1)
            });
    }

    /// Asks for `addr`'s bucket's line, to be written soon (a hint only).
    #[inline]
    pub(crate) fn prefetch_for_write(&self, addr: u64) {
        prefetch_for_write(std::ptr::from_ref(self.bucket(addr)).cast(), 1);
    }

    /// Empties every bucket (the helper, before a session's first record).
    pub(crate) fn clear(&self) {
        for b in self.buckets {
            if b.load(Ordering::Relaxed) != 0 {
                b.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// How many releases [`LaggedReleases`] holds back.
pub(crate) const RELEASE_LAG: usize = 8;

/// The helper's releases of filter buckets, each made [`RELEASE_LAG`]
/// releases after it is asked for. The client wrote the bucket last (its
/// line is on the client's core); asking for the line when the release is
/// queued and writing it later lets the transfer overlap the records taken
/// meanwhile. A release made late only lets a few more frees through.
#[derive(Debug, Default)]
pub(crate) struct LaggedReleases {
    queue: [u64; RELEASE_LAG],
    queued: usize,
}

impl LaggedReleases {
    /// The block at `addr` left the books.
    pub(crate) fn release(&mut self, filter: FreeFilter<'_>, addr: u64) {
        let slot = self.queued % RELEASE_LAG;
        if self.queued >= RELEASE_LAG {
            filter.release(self.queue[slot]);
        }
        filter.prefetch_for_write(addr);
        self.queue[slot] = addr;
        self.queued += 1;
    }

    /// Makes every release held back.
    pub(crate) fn flush(&mut self, filter: FreeFilter<'_>) {
        for i in self.queued.saturating_sub(RELEASE_LAG)..self.queued {
            filter.release(self.queue[i % RELEASE_LAG]);
        }
        self.queued = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::{FILTER_BUCKETS, FreeFilter, REGION_SHIFT};
    use std::sync::atomic::AtomicU16;

    fn index(f: &FreeFilter<'_>, addr: u64) -> usize {
        let b = std::ptr::from_ref(f.bucket(addr)) as usize;
        (b - f.buckets.as_ptr() as usize) / 2
    }

    #[test]
    fn neighbours_share_lines_and_same_offsets_in_other_regions_do_not_collide() {
        let buckets: Vec<AtomicU16> = (0..FILTER_BUCKETS).map(|_| AtomicU16::new(0)).collect();
        // SAFETY: FILTER_BUCKETS atomics, 2-aligned, for the test's life.
        let f = unsafe { FreeFilter::new(buckets.as_ptr().cast()) };
        let base = 0x5555_5555_0000u64;
        // 16-byte neighbours: neighbouring buckets, 32 to a 64-byte line.
        let first = index(&f, base);
        for i in 1..32u64 {
            assert_eq!(index(&f, base + 16 * i) / 32, first / 32);
        }
        // The same offset in the next regions (glibc's arenas are 64 MiB
        // apart): other buckets.
        let region = 1u64 << REGION_SHIFT;
        let others: std::collections::HashSet<usize> =
            (1..9).map(|r| index(&f, base + r * region)).collect();
        assert!(!others.contains(&first));
        assert!(others.len() >= 7, "{others:?}");
        // Add, hold, release.
        f.add(base);
        assert!(f.may_hold(base));
        assert!(!f.may_hold(base + 16));
        f.release(base);
        assert!(!f.may_hold(base));
    }
}
