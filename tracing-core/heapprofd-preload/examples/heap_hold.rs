//! The heap profiler's memory benchmark, Rust side (run by
//! `cargo xtask heap-cost`): `heap_hold MIB idle|profiled [TRACE]` keeps MIB MiB
//! of small blocks (16 to 112 bytes) live, with `HeapProfiler` installed
//! and, when `profiled`, an in-process session sampling this process at
//! 4096 bytes; it waits for the profiler to take every record, then exits.
//! The benchmark compares the peak RSS of the two modes at two heap sizes.

use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, register};
use zerotrace_protos::protos::DataSourceConfig;

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let session = if args.get(2).map(String::as_str) == Some("profiled") {
        let mut w = HeapWriter::new();
        {
            let mut c = DataSourceConfig::from_message(w.root());
            c.set_name("android.heapprofd");
            c.begin_heapprofd_config()
                .set_sampling_interval_bytes(4096)
                .set_block_client(true)
                .add_pid(u64::from(std::process::id()));
        }
        let session = InProcessSession::start(
            &[],
            InProcessConfig {
                data_source_configs: vec![w.finish()?],
                ..InProcessConfig::default()
            },
        )?;
        register(session.producer())?;
        session
            .producer()
            .wait_for_start("android.heapprofd", Duration::from_secs(10))?;
        Some(session)
    } else {
        None
    };
    let mut keep: Vec<Box<[u8]>> = Vec::new();
    let (mut total, mut i) = (0usize, 0usize);
    while total < mib << 20 {
        let n = 16 + (i * 37) % 97;
        keep.push(vec![1u8; n].into_boxed_slice());
        total += n;
        i += 1;
    }
    std::thread::sleep(Duration::from_millis(300));
    println!("{} blocks, {total} bytes", keep.len());
    if let Some(s) = session {
        let out = args.get(3).map_or("/dev/null", String::as_str);
        s.stop(std::path::Path::new(out))?;
    }
    Ok(())
}
