//! The only place that turns addresses inside the shared memory buffer into
//! atomic references.
//!
//! The page header word and the three chunk header fields are shared with
//! another process (or thread) that accesses them concurrently, so they must be
//! touched only through atomics. Callers guarantee the address is in the
//! mapping, aligned, and that the mapping outlives the returned reference.

use core::sync::atomic::{AtomicU16, AtomicU32};

/// Views 4 bytes of shared memory at `p` as an atomic u32.
///
/// # Safety
/// `p` must be 4-byte aligned, point to 4 bytes inside a live mapping that
/// outlives `'a`, and those bytes must only ever be accessed atomically.
#[inline(always)]
pub(crate) unsafe fn atomic_u32<'a>(p: *mut u8) -> &'a AtomicU32 {
    debug_assert_eq!(p as usize % 4, 0);
    // SAFETY: alignment, validity and atomic-only access are the caller's
    // contract, which is exactly what `from_ptr` requires.
    unsafe { AtomicU32::from_ptr(p.cast::<u32>()) }
}

/// Views 2 bytes of shared memory at `p` as an atomic u16.
///
/// # Safety
/// As for [`atomic_u32`], with 2-byte alignment.
#[inline(always)]
pub(crate) unsafe fn atomic_u16<'a>(p: *mut u8) -> &'a AtomicU16 {
    debug_assert_eq!(p as usize % 2, 0);
    // SAFETY: see `atomic_u32`; the caller guarantees the same for 2 bytes.
    unsafe { AtomicU16::from_ptr(p.cast::<u16>()) }
}
