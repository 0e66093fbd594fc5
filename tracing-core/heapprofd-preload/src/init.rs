//! What the library does when it is loaded and when the process exits.
//! At load (an `.init_array` entry, before `main`): the helper process is
//! forked (the producer and the profiler, `zerotrace_heap_profile`'s
//! `preload`), so the program itself starts no thread; with
//! `PERFETTO_HEAPPROFD_BLOCKING_INIT=1` the load waits (up to
//! [`BLOCKING_INIT_TIMEOUT`]) until a session profiles the process. At
//! exit (`atexit`): the helper writes the last dump and hands it to the
//! service before the process goes.

use std::time::Duration;

use zerotrace_heap_profile::LIBC_MALLOC_HEAP;
use zerotrace_heap_profile::preload;

/// How long a blocking init waits for a session.
pub const BLOCKING_INIT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the exit waits for the last dump to reach the service.
const EXIT_FLUSH_TIMEOUT: Duration = Duration::from_secs(3);

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    super::interpose::resolve();
    let blocking = std::env::var_os("PERFETTO_HEAPPROFD_BLOCKING_INIT").is_some_and(|v| v == "1");
    if let Err(e) = preload::start(LIBC_MALLOC_HEAP, blocking) {
        eprintln!("libzerotrace_heapprofd: {e}; this process is not profiled");
        return;
    }
    // SAFETY: registers a plain function to run at exit.
    unsafe {
        libc::atexit(at_exit);
    }
    if blocking {
        preload::wait_for_session(BLOCKING_INIT_TIMEOUT);
    }
}

extern "C" fn at_exit() {
    preload::at_exit(EXIT_FLUSH_TIMEOUT);
}
