//! Switch between `std` atomics and `loom`'s model-checked ones.
//!
//! The chunk state transitions are written once, against [`AtomicWord`], so the
//! code that runs on real shared memory is the code that `loom` explores
//! (build with `RUSTFLAGS="--cfg zerotrace_loom"`). Real shared memory is always viewed
//! through `std` atomics; `loom` atomics only back the model's own words.

use core::sync::atomic::Ordering;

/// The operations a page header word needs.
pub trait AtomicWord {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u32;
    /// Strong compare-and-swap.
    fn compare_exchange(
        &self,
        current: u32,
        new: u32,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u32, u32>;
}

impl AtomicWord for core::sync::atomic::AtomicU32 {
    #[inline]
    fn load(&self, order: Ordering) -> u32 {
        core::sync::atomic::AtomicU32::load(self, order)
    }

    #[inline]
    fn compare_exchange(
        &self,
        current: u32,
        new: u32,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u32, u32> {
        core::sync::atomic::AtomicU32::compare_exchange(self, current, new, success, failure)
    }
}

#[cfg(zerotrace_loom)]
impl AtomicWord for loom::sync::atomic::AtomicU32 {
    #[inline]
    fn load(&self, order: Ordering) -> u32 {
        loom::sync::atomic::AtomicU32::load(self, order)
    }

    #[inline]
    fn compare_exchange(
        &self,
        current: u32,
        new: u32,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u32, u32> {
        loom::sync::atomic::AtomicU32::compare_exchange(self, current, new, success, failure)
    }
}

/// Hint used between failed compare-and-swap attempts.
#[inline]
pub fn spin_hint() {
    #[cfg(zerotrace_loom)]
    loom::thread::yield_now();
    #[cfg(not(zerotrace_loom))]
    core::hint::spin_loop();
}
