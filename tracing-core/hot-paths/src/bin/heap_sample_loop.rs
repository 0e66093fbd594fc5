//! Instruction counts of the heap profiler's sample: with a session that
//! samples every allocation (`sampling_interval_bytes: 1`), `N` blocks of
//! 48 bytes allocated and freed in a function of their own
//! (`heap_sample_loop::run_sample`), so that callgrind counts the hook's
//! work in the allocating thread alone (the registers and stack copied,
//! the record queued, the free of a sampled block queued), not the
//! profiler's thread:
//!
//! ```sh
//! cargo build --release -p zerotrace-hot-paths --bin heap_sample_loop
//! valgrind --tool=callgrind --toggle-collect='heap_sample_loop::run_*' \
//!     target/release/heap_sample_loop 32
//! ```
//!
//! `cargo xtask instructions` runs it at two counts and divides the
//! difference of the totals by the difference of the counts. The counts
//! stay below the queue's recycled stack buffers (64), and a warm-up
//! before the session's counted part fills them, so each sample reuses
//! one as in a long-running program.

use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, register};
use zerotrace_protos::protos::DataSourceConfig;

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

/// The session's config: every allocation of this process sampled, and
/// room for all of this program's records (no waiting for the profiler's
/// thread).
fn config() -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let mut w = HeapWriter::new();
    {
        let mut c = DataSourceConfig::from_message(w.root());
        c.set_name("android.heapprofd");
        c.begin_heapprofd_config()
            .set_sampling_interval_bytes(1)
            .add_pid(u64::from(std::process::id()))
            .set_shmem_size_bytes(64 << 20)
            .set_block_client(true);
    }
    Ok(w.finish()?)
}

/// `n` blocks allocated and freed, each sampled.
#[inline(never)]
fn run_sample(n: u64) {
    for _ in 0..n {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(48)));
    }
}

/// The same outside the counted function.
#[inline(never)]
fn warm_up(n: u64) {
    for _ in 0..n {
        drop(std::hint::black_box(Vec::<u8>::with_capacity(48)));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args().nth(1).as_deref().unwrap_or("32").parse()?;
    let out = std::env::temp_dir().join(format!("zt-heap-loop-{}.pftrace", std::process::id()));
    let session = InProcessSession::start(
        &[],
        InProcessConfig {
            data_source_configs: vec![config()?],
            ..InProcessConfig::default()
        },
    )?;
    register(session.producer())?;
    session
        .producer()
        .wait_for_start("android.heapprofd", Duration::from_secs(60))?;
    warm_up(64);
    // The profiler's thread takes the warm-up's records and gives their
    // stack buffers back meanwhile.
    std::thread::sleep(Duration::from_secs(2));
    run_sample(n);
    session.stop(&out)?;
    let size = std::fs::metadata(&out)?.len();
    let _ = std::fs::remove_file(&out);
    println!("{n} sampled allocations: a profile of {size} bytes");
    Ok(())
}
