//! [`SharedMemoryRegion`]: what the arbiter and the service need from a buffer,
//! whatever backs it (a mapped memfd, a tmpfile, or heap memory).

/// A writable, 4 KiB aligned memory region that stays valid while the value lives.
///
/// # Safety
/// Implementors guarantee that `as_ptr()..as_ptr()+size()` is mapped readable
/// and writable, 4096-byte aligned, and not freed or moved before the value is
/// dropped; and that [`SharedMemoryRegion::claim`] returns `true` at most once
/// for the same memory in this process (no other region value that maps the
/// same memory may claim it again).
pub unsafe trait SharedMemoryRegion: Send + Sync + core::fmt::Debug {
    /// Start of the region.
    fn as_ptr(&self) -> *mut u8;
    /// Size in bytes.
    fn size(&self) -> usize;

    /// Claims the region for the one producer-side arbiter of this process:
    /// `true` the first time, `false` afterwards. An arbiter cuts the memory
    /// into pages of its chosen size and hands out chunks that it alone
    /// tracks; a second arbiter over the same memory could hand the same
    /// bytes to two writers.
    fn claim(&self) -> bool;

    /// Copies the whole region (for tests and debugging), reading each byte
    /// once with an atomic load.
    ///
    /// # Safety
    /// No thread of this process may write the region during the call except
    /// with 8-byte atomic stores to 8-byte aligned words (writes by another
    /// process are fine: they can only make the copy a mix of old and new
    /// bytes). A `TraceWriter` writing on another thread breaks this.
    unsafe fn snapshot(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.size()];
        // SAFETY: the region is valid for `size()` bytes while `self` lives
        // (trait contract), and the caller rules out racing in-process writes.
        unsafe { crate::abi::copy_from_shared(self.as_ptr(), &mut v) };
        v
    }
}
