//! The C allocator's entry points, interposed: each forwards to glibc's own
//! (`__libc_malloc` and friends, which glibc exports for this purpose) and
//! tells the heap profiler, when it samples, of the block allocated or
//! about to be freed. With no session the hot ones are a check and a tail
//! call. A free is told before glibc gets the memory back, so
//! that a reuse of the address is always told after it.

use std::sync::atomic::{AtomicPtr, Ordering};

use libc::{c_int, c_void, size_t};
use zerotrace_heap_profile::preload::{record_alloc, record_free, sampling};

unsafe extern "C" {
    fn __libc_malloc(size: size_t) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_calloc(n: size_t, size: size_t) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: size_t) -> *mut c_void;
    fn __libc_memalign(align: size_t, size: size_t) -> *mut c_void;
    fn __libc_valloc(size: size_t) -> *mut c_void;
    fn __libc_pvalloc(size: size_t) -> *mut c_void;
}

/// The page size glibc's `pvalloc` rounds to (`AT_PAGESZ`, which glibc's
/// own page size comes from; reading it allocates nothing).
fn page_size() -> usize {
    // SAFETY: getauxval reads the auxiliary vector, no side effects.
    match unsafe { libc::getauxval(libc::AT_PAGESZ) } {
        0 => 4096,
        n => usize::try_from(n).unwrap_or(4096),
    }
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
        record_free(p as u64);
    }
}

/// `malloc(3)`.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: size_t) -> *mut c_void {
    if !sampling() {
        // SAFETY: forwarded as received (a tail call: no session, no cost).
        return unsafe { __libc_malloc(size) };
    }
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
    if !sampling() {
        // SAFETY: forwarded as received (glibc checks the product).
        return unsafe { __libc_calloc(n, size) };
    }
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
    if !sampling() {
        // SAFETY: forwarded as received.
        return unsafe { __libc_realloc(ptr, size) };
    }
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

/// `pvalloc(3)`: glibc rounds the size up to a multiple of the page
/// size, and the block is counted at that size.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: size_t) -> *mut c_void {
    // SAFETY: forwarded as received.
    let p = unsafe { __libc_pvalloc(size) };
    let page = page_size();
    // An overflowing size got null from glibc, so is never counted.
    allocated(p, size.checked_next_multiple_of(page).unwrap_or(size))
}

/// `reallocarray(3)` (glibc 2.26): `realloc` of `n * size` bytes, null and
/// `ENOMEM` when the product overflows (the old block kept). glibc's own
/// calls its `realloc` internally, past this library, hence this one.
///
/// # Safety
/// As glibc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(ptr: *mut c_void, n: size_t, size: size_t) -> *mut c_void {
    let Some(bytes) = n.checked_mul(size) else {
        // SAFETY: errno is this thread's.
        unsafe { *libc::__errno_location() = libc::ENOMEM };
        return std::ptr::null_mut();
    };
    // SAFETY: as glibc's reallocarray, once the product is known.
    unsafe { realloc(ptr, bytes) }
}

/// `free_sized` (C23; glibc 2.39): a `free` told the block's size, which
/// glibc ignores, and so does this. Exported whatever the glibc: a program
/// built against a newer one calls it here.
///
/// # Safety
/// As `free`: `ptr` is null or a live block of this allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free_sized(ptr: *mut c_void, _size: size_t) {
    // SAFETY: as `free`.
    unsafe { free(ptr) }
}

/// `free_aligned_sized` (C23; glibc 2.39): `free` of an aligned block
/// told its alignment and size (both ignored, as glibc does).
///
/// # Safety
/// As `free`: `ptr` is null or a live block of this allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free_aligned_sized(ptr: *mut c_void, _align: size_t, _size: size_t) {
    // SAFETY: as `free`.
    unsafe { free(ptr) }
}

/// glibc's `malloc_usable_size`, which has no `__libc_` alias: found
/// with `dlsym(RTLD_NEXT)` at load (or at the first call, if earlier).
static REAL_USABLE_SIZE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Looks up glibc's `malloc_usable_size` (from the library's initialiser).
pub(crate) fn resolve() -> *mut c_void {
    let known = REAL_USABLE_SIZE.load(Ordering::Acquire);
    if !known.is_null() {
        return known;
    }
    // SAFETY: dlsym with a NUL-terminated name; RTLD_NEXT finds the next
    // definition after this library (glibc's).
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, c"malloc_usable_size".as_ptr()) };
    REAL_USABLE_SIZE.store(f, Ordering::Release);
    f
}

/// `malloc_usable_size(3)`: every block is glibc's, so glibc answers.
///
/// # Safety
/// As glibc's: `ptr` is null or a live block of this allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc_usable_size(ptr: *mut c_void) -> size_t {
    let f = resolve();
    if f.is_null() {
        return 0;
    }
    // SAFETY: `f` is glibc's malloc_usable_size, of this signature.
    let real: unsafe extern "C" fn(*mut c_void) -> size_t = unsafe { std::mem::transmute(f) };
    // SAFETY: forwarded as received.
    unsafe { real(ptr) }
}
