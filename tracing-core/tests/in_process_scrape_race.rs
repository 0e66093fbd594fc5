//! The in-process backend's embedded service reads the producer's shared
//! memory buffer while this process's writer threads are writing it: a flush
//! or a stop scrapes the chunks still being written. That stays defined
//! because the service reads only through its own mapping of the memfd, with
//! atomic loads (see `track_event::in_process`). This test makes the race as
//! dense as it can: writer threads append events without pause while the
//! main thread stops the session (a flush and a scrape) under them. Natively it checks that the trace is whole; `cargo xtask tsan` runs
//! it under ThreadSanitizer, which reports any racing access to one
//! location. (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use zerotrace_core::trace_event;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession};
use zerotrace_protos::protos::TracePacketDecoder;

static RACE: Category = Category::new("race");
static CATEGORIES: [&Category; 1] = [&RACE];

#[test]
fn scrapes_while_writers_write() {
    // One session per process (TrackEvent registers once), stopped (flushed
    // and scraped) under writers that never pause.
    let cfg = InProcessConfig {
        enabled_categories: vec!["race".into()],
        buffer_kb: 4096,
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&CATEGORIES, cfg).expect("start");
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let (stop, count) = (Arc::clone(&stop), Arc::clone(&count));
            std::thread::Builder::new()
                .name(format!("racer-{t}"))
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let n = count.fetch_add(1, Ordering::Relaxed);
                        let _s = trace_event!(RACE, "step", "n" => n as i64);
                    }
                })
                .expect("spawn")
        })
        .collect();
    // Until the writers are well under way (no timing: a count).
    while count.load(Ordering::Relaxed) < 50_000 {
        std::hint::spin_loop();
    }
    let path = std::env::temp_dir().join(format!("zt-race-{}.pftrace", std::process::id()));
    // The stop flushes and scrapes with the writers still running.
    let result = session.stop(&path);
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    result.expect("stop");
    let written = count.load(Ordering::Relaxed);
    let trace = std::fs::read(&path).expect("trace file");
    let _ = std::fs::remove_file(&path);
    let mut begins = 0u64;
    for f in protozero::Decoder::new(&trace) {
        let raw = f
            .expect("well-formed packet list")
            .as_bytes()
            .expect("packet");
        let p = TracePacketDecoder::new(raw);
        if p.track_event().and_then(|e| e.type_raw()) == Some(1) {
            begins += 1;
        }
    }
    assert!(begins >= 10_000, "only {begins} slices in the trace");
    assert!(
        begins <= written,
        "{begins} slices found, {written} written"
    );
}
