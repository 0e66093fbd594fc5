//! What the library does when it is loaded and when the process exits.
//! At load (an `.init_array` entry, before `main`): the producer connects
//! to the service on a thread of its own, so a process with no service
//! around is not held up; with `PERFETTO_HEAPPROFD_BLOCKING_INIT=1` the
//! load waits (up to [`BLOCKING_INIT_TIMEOUT`]) until a session profiles
//! the process. At exit (`atexit`): the last dump is written and handed
//! to the service before the process goes.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use zerotrace_core::heap_profile::{
    LIBC_MALLOC_HEAP, finish_at_exit, profiling, register_heap, set_starting_up,
};
use zerotrace_core::ipc::{Endpoint, producer_socket_name};
use zerotrace_core::producer::{ProducerClient, ProducerOptions};

/// How long a blocking init waits for a session.
pub const BLOCKING_INIT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the exit waits for the last dump to reach the service.
const EXIT_FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// The producer, kept for the life of the process.
static PRODUCER: OnceLock<Arc<ProducerClient>> = OnceLock::new();

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    let blocking = std::env::var_os("PERFETTO_HEAPPROFD_BLOCKING_INIT").is_some_and(|v| v == "1");
    if blocking {
        set_starting_up(true);
    }
    let spawned = std::thread::Builder::new()
        .name("zt-heapprofd-connect".into())
        .spawn(connect);
    // SAFETY: registers a plain function to run at exit.
    unsafe {
        libc::atexit(at_exit);
    }
    if blocking && spawned.is_ok() {
        let until = Instant::now() + BLOCKING_INIT_TIMEOUT;
        while !profiling() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        set_starting_up(false);
    }
}

fn connect() {
    let endpoint = Endpoint::parse(&producer_socket_name());
    let name = format!("heapprofd.{}", std::process::id());
    let opts = ProducerOptions {
        name,
        ..ProducerOptions::default()
    };
    let Ok(p) = ProducerClient::connect(&endpoint, opts) else {
        return;
    };
    let p = Arc::new(p);
    if register_heap(&p, LIBC_MALLOC_HEAP).is_ok() {
        let _ = PRODUCER.set(p);
    }
}

extern "C" fn at_exit() {
    finish_at_exit(EXIT_FLUSH_TIMEOUT);
}
