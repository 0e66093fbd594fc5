//! The heap-cost workload with `HeapProfiler` as the global allocator:
//! `idle` (no session: the cost of having it installed), `traced` (an
//! in-process session whose heap profile is of another process: the
//! tracing threads' cost, nothing sampled) or `profiled` (an in-process
//! session samples this process at the interval given, default 4096, and
//! the trace is written to the path given).
//!
//! `heap_workload_profiler ROUNDS idle|traced|profiled [INTERVAL] [TRACE]`
mod workload;

use std::time::Duration;

use protozero::HeapWriter;
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};
use zerotrace_heap_profile::{HeapProfiler, register};
use zerotrace_protos::protos::DataSourceConfig;

#[global_allocator]
static ALLOC: HeapProfiler = HeapProfiler::system();

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let rounds = workload::rounds();
    let mode = args.get(2).map(String::as_str);
    if mode != Some("profiled") && mode != Some("traced") {
        println!("{}", workload::run(rounds));
        return Ok(());
    }
    // `traced`: the same in-process session, its heapprofd config naming
    // another process: the service's and producer's threads run, nothing
    // is sampled.
    let target = if mode == Some("traced") {
        1
    } else {
        u64::from(std::process::id())
    };
    let interval: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(4096);
    let out = args.get(4).cloned().unwrap_or_else(|| "/dev/null".into());
    let mut w = HeapWriter::new();
    {
        let mut c = DataSourceConfig::from_message(w.root());
        c.set_name("android.heapprofd");
        c.begin_heapprofd_config()
            .set_sampling_interval_bytes(interval)
            .set_block_client(true)
            .add_pid(target);
    }
    let session = InProcessSession::start(
        &[],
        InProcessConfig {
            data_source_configs: vec![w.finish()?],
            ..InProcessConfig::default()
        },
    )?;
    register(session.producer())?;
    if mode == Some("profiled") {
        session
            .producer()
            .wait_for_start("android.heapprofd", Duration::from_secs(10))?;
    }
    println!("{}", workload::run(rounds));
    let bytes = session.stop(std::path::Path::new(&out))?;
    eprintln!("trace: {bytes} bytes");
    Ok(())
}
