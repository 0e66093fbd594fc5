//! [`SharedMemoryRegion`]: what the arbiter and the service need from a buffer,
//! whatever backs it (a mapped memfd, a tmpfile, or heap memory).

/// A writable, 4 KiB aligned memory region that stays valid while the value lives.
///
/// # Safety
/// Implementors guarantee that `as_ptr()..as_ptr()+size()` is mapped readable
/// and writable, 4096-byte aligned, and not freed or moved before the value is
/// dropped.
pub unsafe trait SharedMemoryRegion: Send + Sync + core::fmt::Debug {
    /// Start of the region.
    fn as_ptr(&self) -> *mut u8;
    /// Size in bytes.
    fn size(&self) -> usize;

    /// Copies the whole region (for tests and debugging). Each byte is read
    /// once with an atomic load, so a concurrent writer (another thread or
    /// process) makes the copy a mix of old and new bytes, never undefined.
    fn snapshot(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.size()];
        // SAFETY: the region is valid for `size()` bytes while `self` lives
        // (trait contract); shared memory is only written through raw
        // pointers and atomics, never through references.
        unsafe { crate::abi::copy_from_shared(self.as_ptr(), &mut v) };
        v
    }
}
