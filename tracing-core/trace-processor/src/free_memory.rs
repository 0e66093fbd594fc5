//! Giving the heap's free memory back to the system once a load is done.
//! A load frees more than it keeps (the packets' bytes, the rows once their
//! columns exist), and glibc's allocator keeps much of what was freed in
//! its arenas: on a 231 MB trace, 51 MB stayed resident that no table
//! used. `malloc_trim` returns it. Other allocators (musl's, or a global
//! allocator the embedding program chose) are left alone.

/// Returns the allocator's free memory to the system where the platform
/// allows it (glibc on Linux); elsewhere does nothing.
pub fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer, is thread-safe in glibc, and
        // only returns free pages of the heap to the system; allocations
        // stay valid whichever allocator Rust uses (with another global
        // allocator it merely trims glibc's unused heap).
        unsafe {
            malloc_trim(0);
        }
    }
}
