//! `libzerotrace_heapprofd.so`: heap profiling of any Linux process, as
//! Perfetto's heapprofd does it with its glibc preload library. Start a
//! program with `LD_PRELOAD=/path/to/libzerotrace_heapprofd.so`: the
//! library interposes `malloc`, `free`, `calloc`, `realloc`,
//! `reallocarray`, `posix_memalign`, `aligned_alloc`, `memalign`, `valloc`,
//! `pvalloc` (counted at its page-rounded size), `free_sized`,
//! `free_aligned_sized` (C23's, exported even where glibc predates them)
//! and `malloc_usable_size`, forwards each to glibc, and reports sampled
//! allocations as heap `libc.malloc` to the tracing service on the
//! standard producer socket (`PERFETTO_PRODUCER_SOCK_NAME`), as data
//! source `android.heapprofd`. A session whose `heapprofd_config` names the
//! process (`pid`, `process_cmdline`, `all`) gets its profile; the last
//! dump is written when the session stops or the process exits
//! (`disconnected`).
//!
//! As heapprofd splits it, the program itself starts no thread: at load
//! the library forks a helper process (`zt-heapprofd`), which is the
//! producer, unwinds the stack copies, keeps the books and writes the
//! dumps (under a guardian process, `zt-heapguard`, which says so in the
//! trace if the helper dies: a dump of the program marked
//! `disconnected`); the program's hook only samples and writes records into the
//! memory the two share (`zerotrace_heap_profile::preload`). So
//! glibc's `malloc` keeps its single-thread fast path, and with no session
//! an allocation costs a check and a tail call.
//!
//! `PERFETTO_HEAPPROFD_BLOCKING_INIT=1` makes the library wait at load
//! (up to five seconds) for a session to start profiling the process, so
//! that its allocations are profiled from its first line (`from_startup`).
//!
//! Safe in any C program, as the hook's rules say: the library never
//! allocates through itself (a busy thread's allocations go straight to
//! glibc), its thread-local state needs no set-up, a `fork` child is not
//! profiled. It must be preloaded, not `dlopen`ed: a preloaded library's
//! thread-locals live in the static TLS block, whose first access never
//! calls `malloc`, and the helper is forked while the process has one
//! thread. Files: `interpose.rs` (the C entry points), `init.rs` (load and
//! exit).

#[cfg(target_os = "linux")]
mod init;
#[cfg(target_os = "linux")]
mod interpose;
