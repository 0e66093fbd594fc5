//! A lock an allocation hook can take: no allocation, no syscall while
//! uncontended, usable before any runtime is set up, and one that a
//! `fork` handler can hold across the fork and release in both processes
//! (a `std::sync::Mutex` guard cannot be carried across `pthread_atfork`'s
//! callbacks). Critical sections are a few pointer moves; a waiter spins a
//! little, then yields.
//!
//! Under `--cfg zerotrace_loom` the flag and the cell are loom's (a guard
//! holds the cell's tracked access for as long as it lives), so the loom
//! models in `tracing-core/loom/tests/loom_heap.rs` check this very code.

#[cfg(not(zerotrace_loom))]
use std::cell::UnsafeCell;
#[cfg(not(zerotrace_loom))]
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

#[cfg(zerotrace_loom)]
use loom::cell::UnsafeCell;
#[cfg(zerotrace_loom)]
use loom::sync::atomic::AtomicBool;

/// A value behind a spinning lock.
pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one holder at a time, so it is
// `Sync` whenever `T` may move between threads.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    /// An unlocked lock around `value`.
    #[cfg(not(zerotrace_loom))]
    pub const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// An unlocked lock around `value` (loom's atomics are not `const`).
    #[cfg(zerotrace_loom)]
    pub fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock (spinning, then yielding, until it is free).
    pub fn lock(&self) -> SpinGuard<'_, T> {
        self.acquire();
        SpinGuard {
            lock: self,
            #[cfg(zerotrace_loom)]
            access: std::mem::ManuallyDrop::new(self.value.get_mut()),
        }
    }

    /// Takes the lock and leaves it taken, for a `fork` prepare handler;
    /// [`SpinLock::force_unlock`] releases it.
    pub fn lock_forever(&self) {
        self.acquire();
    }

    /// Releases a lock taken by [`SpinLock::lock_forever`].
    ///
    /// # Safety
    /// The caller took it with `lock_forever` and no guard of it exists.
    pub unsafe fn force_unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }

    /// Sets the flag, once it is clear.
    #[inline]
    fn acquire(&self) {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            back_off(spins);
        }
    }
}

/// Waits a little after the `spins`th failed attempt to take the lock.
#[inline]
fn back_off(spins: u32) {
    #[cfg(not(zerotrace_loom))]
    {
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    // Loom explores a spin loop only if it yields to the other threads.
    #[cfg(zerotrace_loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
}

/// The lock, held.
pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    /// Loom's record of this holder's access to the value, ended before
    /// the flag is cleared.
    #[cfg(zerotrace_loom)]
    access: std::mem::ManuallyDrop<loom::cell::MutPtr<T>>,
}

impl<T> SpinGuard<'_, T> {
    /// The value's address.
    #[cfg(not(zerotrace_loom))]
    #[inline]
    fn value(&self) -> *mut T {
        self.lock.value.get()
    }

    /// The value's address (under loom's access held by the guard).
    #[cfg(zerotrace_loom)]
    fn value(&self) -> *mut T {
        self.access.with(|p| p)
    }
}

impl<T> std::ops::Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard's existence means this holder alone has the
        // lock.
        unsafe { &*self.value() }
    }
}

impl<T> std::ops::DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes it unique.
        unsafe { &mut *self.value() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        #[cfg(zerotrace_loom)]
        {
            // SAFETY: dropped once, here, and never used again (the guard
            // is going away).
            unsafe { std::mem::ManuallyDrop::drop(&mut self.access) };
        }
        self.lock.locked.store(false, Ordering::Release);
    }
}

// Loom's atomics work inside a model only: these run on std's.
#[cfg(all(test, not(zerotrace_loom)))]
mod tests {
    use super::*;

    #[test]
    fn holders_never_overlap() {
        static LOCK: SpinLock<(u64, u64)> = SpinLock::new((0, 0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2_000 {
                        let mut g = LOCK.lock();
                        g.0 += 1;
                        g.1 += 1;
                        assert_eq!(g.0, g.1);
                    }
                });
            }
        });
        assert_eq!(LOCK.lock().0, 8_000);
        LOCK.lock_forever();
        // SAFETY: taken just above, no guard alive.
        unsafe { LOCK.force_unlock() };
        assert_eq!(LOCK.lock().1, 8_000);
    }
}
