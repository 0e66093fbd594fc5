//! A counting global allocator, written once for every test that proves a
//! path allocates nothing (protozero's writers and decoders, the derive
//! macros' code, the ftrace page walk, the TrackEvent and `tracing` paths)
//! or that a flood leaves no heap behind (the hostile producers).
//!
//! A test binary installs it and asks how many allocations the current
//! thread made (parallel tests do not see each other's), or how many bytes
//! the whole process holds:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;
//!
//! let (n, _) = zerotrace_test_alloc::allocations_during(|| write_a_packet());
//! assert_eq!(n, 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the allocations of each thread and the
/// bytes the process holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

fn count(grow: isize) {
    // `try_with`: the slot may be gone while a thread is being torn down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    LIVE_BYTES.fetch_add(grow, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are a const-initialised thread-local cell and an atomic, neither
// of which allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The allocations (and reallocations) the current thread has made.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// The allocations the current thread makes while running `f`, and what
/// `f` returned.
pub fn allocations_during<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let before = allocations();
    let r = f();
    (allocations() - before, r)
}

/// The heap bytes the whole process holds through this allocator.
pub fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}
