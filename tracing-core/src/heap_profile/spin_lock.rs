//! A lock an allocation hook can take: no allocation, no syscall while
//! uncontended, usable before any runtime is set up, and one that a
//! `fork` handler can hold across the fork and release in both processes
//! (a `std::sync::Mutex` guard cannot be carried across `pthread_atfork`'s
//! callbacks). Critical sections are a few pointer moves; a waiter spins a
//! little, then yields.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a spinning lock.
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one holder at a time, so it is
// `Sync` whenever `T` may move between threads.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    /// An unlocked lock around `value`.
    pub(crate) const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock (spinning, then yielding, until it is free).
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        let mut spins = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        SpinGuard { lock: self }
    }

    /// Takes the lock and leaves it taken, for a `fork` prepare handler;
    /// [`SpinLock::force_unlock`] releases it.
    pub(crate) fn lock_forever(&self) {
        std::mem::forget(self.lock());
    }

    /// Releases a lock taken by [`SpinLock::lock_forever`].
    ///
    /// # Safety
    /// The caller took it with `lock_forever` and no guard of it exists.
    pub(crate) unsafe fn force_unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

/// The lock, held.
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> std::ops::Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard's existence means this holder alone has the
        // lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> std::ops::DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes it unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
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
