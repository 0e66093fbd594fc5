//! Records a trace on embedded defaults: starts the tracing service inside
//! this process (no `zerotraced` needed), instruments a few worker threads
//! with the TrackEvent API (nested slices with debug annotations, instants,
//! a counter track) and writes the trace, which opens in the Perfetto UI.
//!
//! `cargo run -p zerotrace-core --example record -- trace.pftrace [MS]`

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, TrackSpec};
use zerotrace_core::{trace_counter, trace_event, trace_instant};

static FRAME: Category = Category::with("frame", &[], "One frame of the demo's main loop");
static PHYSICS: Category = Category::with("physics", &[], "Simulation steps");
static IO: Category = Category::with("io", &[], "File and network work");
static VERBOSE: Category = Category::with("verbose", &["debug"], "Off unless asked for");
static CATEGORIES: [&Category; 4] = [&FRAME, &PHYSICS, &IO, &VERBOSE];

static QUEUE: TrackSpec = TrackSpec::counter(0x7a_0001, "work queue", None, 2, "items");

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: record OUT [DURATION_MS]");
        return ExitCode::from(2);
    };
    let ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let session = match InProcessSession::start(&CATEGORIES, InProcessConfig::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("record: {e}");
            return ExitCode::FAILURE;
        }
    };
    let deadline = Instant::now() + Duration::from_millis(ms);
    let workers: Vec<_> = (0..3)
        .map(|w| std::thread::spawn(move || work(w, deadline)))
        .collect();
    for w in workers {
        let _ = w.join();
    }
    match session.stop(Path::new(&out)) {
        Ok(bytes) => {
            println!("wrote {bytes} bytes to {out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("record: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A worker's loop: frames with physics steps and occasional I/O.
fn work(worker: i64, deadline: Instant) {
    let mut frame = 0i64;
    while Instant::now() < deadline {
        let _f = trace_event!(FRAME, "frame", "worker" => worker, "n" => frame);
        for step in 0..3i64 {
            let _s = trace_event!(PHYSICS, "step", "substep" => step);
            std::thread::sleep(Duration::from_micros(300));
        }
        if frame % 10 == 0 {
            let _io = trace_event!(IO, "save", "path" => "/tmp/state.bin");
            trace_instant!(IO, "checkpoint");
            std::thread::sleep(Duration::from_micros(500));
        }
        trace_counter!(FRAME, QUEUE, (frame % 17) * (worker + 1));
        let _v = trace_event!(VERBOSE, "details");
        frame += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
}
