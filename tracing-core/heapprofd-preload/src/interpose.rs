//! The C allocator's entry points, interposed: each forwards to glibc's own
//! (`__libc_malloc` and friends, which glibc exports for this purpose) and
//! tells the heap profiler, when it samples, of the block allocated or
//! about to be freed. A free is told before glibc gets the memory back, so
//! that a reuse of the address is always told after it.

use libc::{c_int, c_void, size_t};
use zerotrace_core::heap_profile::{record_alloc, record_free, sampling};

unsafe extern "C" {
    fn __libc_malloc(size: size_t) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_calloc(n: size_t, size: size_t) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: size_t) -> *mut c_void;
    fn __libc_memalign(align: size_t, size: size_t) -> *mut c_void;
    fn __libc_valloc(size: size_t) -> *mut c_void;
    fn __libc_pvalloc(size: size_t) -> *mut c_void;
}

#[inline]
fn allocated(p: *mut c_void, size: usize) -> *mut c_void {
    if !p.is_null() && sampling() {
        record_alloc(p as u64, size);
    }
    p
}

#[inline]
fn freeing(p: *mut c_void) {
    if !p.is_null() && sampling() {
        record_free(p as u64, 0);
    }
}

/// `malloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    allocated(unsafe { __libc_malloc(size) }, size)
}

/// `free(3)`.
///
/// # Safety
/// As glibc's: `ptr` is null or from this allocator, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(ptr: *mut c_void) {
    freeing(ptr);
    // SAFETY: forwarded as received.
    unsafe { __libc_free(ptr) }
}

/// `calloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: size_t, size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received (glibc checks the product).
    let p = unsafe { __libc_calloc(n, size) };
    allocated(p, n.saturating_mul(size))
}

/// `realloc(3)`: a free of the old block and an allocation of the new
/// one, as heapprofd counts it.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: size_t) -> *mut c_void {
    freeing(ptr);
    // SAFETY: forwarded as received.
    let p = unsafe { __libc_realloc(ptr, size) };
    allocated(p, size)
}

/// `posix_memalign(3)`.
///
/// # Safety
/// As glibc's: `memptr` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(
    memptr: *mut *mut c_void,
    align: size_t,
    size: size_t,
) -> c_int {
    if !align.is_power_of_two() || align % std::mem::size_of::<*mut c_void>() != 0 {
        return libc::EINVAL;
    }
    // SAFETY: forwarded with an alignment checked as posix_memalign's.
    let p = unsafe { __libc_memalign(align, size) };
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller passes a writable `memptr`.
    unsafe { *memptr = allocated(p, size) };
    0
}

/// `aligned_alloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: size_t, size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    allocated(unsafe { __libc_memalign(align, size) }, size)
}

/// `memalign(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: size_t, size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    allocated(unsafe { __libc_memalign(align, size) }, size)
}

/// `valloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn valloc(size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    allocated(unsafe { __libc_valloc(size) }, size)
}

/// `pvalloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    allocated(unsafe { __libc_pvalloc(size) }, size)
}
