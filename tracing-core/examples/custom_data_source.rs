//! A data source of your own: it registers with the (embedded) tracing
//! service, is told when a session starts and stops, and writes its own
//! TracePackets through the generated writers — here a counter track of
//! a made-up "memory in use" sampled every millisecond.
//!
//! `cargo run -p zerotrace-core --example custom_data_source -- trace.pftrace`

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zerotrace_core::boottime_ns;
use zerotrace_core::producer::{DataSourceEvent, DataSourceSpec};
use zerotrace_core::track_event::{InProcessConfig, InProcessSession};

const TRACK: u64 = 0x6d656d; // "mem"

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "custom.pftrace".into());
    let cfg = InProcessConfig {
        data_sources: vec!["example.memory".into()],
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&[], cfg)?;
    let producer = session.producer().clone();
    let running = Arc::new(AtomicBool::new(false));
    let flag = running.clone();
    producer.register_data_source(
        DataSourceSpec {
            name: "example.memory".into(),
            will_notify_on_stop: true,
            ..Default::default()
        },
        move |e| match e {
            DataSourceEvent::Start(_) => flag.store(true, Ordering::Release),
            DataSourceEvent::Stop(_) => flag.store(false, Ordering::Release),
            _ => {}
        },
    )?;
    let instance = producer.wait_for_start("example.memory", Duration::from_secs(10))?;
    let mut w = producer.create_trace_writer_for(&instance)?;
    // The track, once; then samples.
    w.packet(|p| {
        p.set_timestamp(boottime_ns());
        p.set_sequence_flags(1);
        let mut t = p.begin_track_descriptor();
        t.set_uuid(TRACK).set_name("memory in use");
        t.begin_counter().set_unit_raw(3); // bytes
    });
    for i in 0..500i64 {
        w.packet(|p| {
            p.set_timestamp(boottime_ns());
            p.set_sequence_flags(2);
            let mut e = p.begin_track_event();
            e.set_type_raw(4)
                .set_track_uuid(TRACK)
                .set_counter_value((1 << 20) + (i * 4096) % (1 << 20));
        });
        std::thread::sleep(Duration::from_millis(1));
    }
    w.flush(None);
    let bytes = session.stop(Path::new(&out))?;
    println!(
        "wrote {bytes} bytes to {out} (running at the end: {})",
        running.load(Ordering::Acquire)
    );
    Ok(())
}
