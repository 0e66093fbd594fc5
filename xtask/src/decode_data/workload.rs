//! What the decode bench's recorded trace holds, as an app writes it: worker
//! threads of nested TrackEvent slices with debug annotations of every
//! scalar kind and a few nested ones, interned names, flows between threads,
//! counters and an async track, written through zerotrace's real TrackEvent
//! API into whatever session is running in this process.

use std::sync::mpsc;

use zerotrace_core::track_event::{Category, DebugValue, TrackEvent, TrackSpec};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};

static FRAME: Category = Category::with("frame", &[], "Frames of the workers");
static WORK: Category = Category::with("work", &[], "Work items, requests, uploads");
static IO: Category = Category::with("io", &[], "Reads and writes");
/// The categories the workload writes in (all enabled by the session).
pub static CATEGORIES: [&Category; 3] = [&FRAME, &WORK, &IO];
static QUEUE: TrackSpec = TrackSpec::counter(0xdec0_0001, "queue depth", None, 2, "items");
static LOAD: TrackSpec = TrackSpec::counter(0xdec0_0002, "load", None, 2, "fraction");

/// Names that string annotations take, so their lengths vary.
const PASSES: [&str; 5] = ["opaque", "transparent", "shadow", "post-processing", "ui"];

/// Why the workload did not finish.
#[derive(Debug, thiserror::Error)]
#[error("the {0} thread panicked")]
pub struct Panicked(&'static str);

/// Runs `workers` threads of `frames` frames each and a handler thread
/// that ends every flow they start, and returns when all have finished.
/// An upload slice on an async track of the process begins here and ends on
/// the handler thread.
pub fn run(workers: u32, frames: u32) -> Result<(), Panicked> {
    let uploads = TrackSpec::named(
        0xdec0_0003,
        "uploads",
        Some(TrackEvent::process_track().uuid),
    );
    trace_begin!(WORK, "upload", "file" => "frames.bin"; track = &uploads);
    let (tx, rx) = mpsc::channel::<u64>();
    let handler = std::thread::spawn(move || {
        for (n, flow) in rx.into_iter().enumerate() {
            let _h = trace_event!(WORK, "handle request", "n" => n as u64; terminating_flow = flow);
        }
        // The upload ends on this thread.
        trace_end!(WORK; track = &uploads);
    });
    let threads: Vec<_> = (0..workers)
        .map(|id| {
            let tx = tx.clone();
            std::thread::spawn(move || worker(id, frames, tx))
        })
        .collect();
    drop(tx);
    for t in threads {
        t.join().map_err(|_| Panicked("worker"))?;
    }
    handler.join().map_err(|_| Panicked("handler"))
}

/// One worker thread: `frames` frames of nested slices whose annotations
/// cover ints, uints, strings (fixed and formatted), bools, doubles,
/// pointers, a dictionary and an array; a request with a flow to the
/// handler thread every 8 frames; two counters every frame.
fn worker(id: u32, frames: u32, handler: mpsc::Sender<u64>) {
    let id = i64::from(id);
    let mut path = String::new();
    for frame in 0..i64::from(frames) {
        let _f = trace_event!(FRAME, "frame", "worker" => id, "n" => frame);
        {
            let _u = trace_event!(
                WORK,
                "update",
                "entities" => 100 + frame % 50,
                "dt" => 0.016 + (frame % 7) as f64 * 1e-4,
                "paused" => frame % 5 == 0
            );
            for step in 0..3u64 {
                let _s = trace_event!(WORK, "physics step", "step" => step);
            }
        }
        {
            let pass = PASSES[(frame as usize + id as usize) % PASSES.len()];
            let _r = trace_event!(WORK, "render", "pass" => pass, "draw calls" => frame % 300);
            let _c = trace_event!(
                WORK,
                "cull",
                "visible" => (frame * 7) % 1000,
                "ratio" => (frame % 100) as f64 / 100.0,
                "frustum" => "perspective",
                "stale" => false
            );
        }
        {
            path.clear();
            use std::fmt::Write as _;
            let _ = write!(path, "/assets/worker-{id}/chunk-{:05}.bin", frame % 977);
            let _io = trace_event!(
                IO,
                "read",
                "path" => path.as_str(),
                "bytes" => (4096 + frame as u64 * 13) % 65536,
                "cached" => frame % 3 == 0,
                "buffer" => DebugValue::Pointer(0x7f00_0000_0000 + frame as u64 * 64)
            );
        }
        if frame % 16 == 0 {
            let _l = trace_event!(
                WORK,
                "layout",
                "bounds" => DebugValue::Dict(&[
                    ("width", DebugValue::Int(1920)),
                    ("height", DebugValue::Int(1080)),
                    ("scale", DebugValue::Double(1.5)),
                ]),
                "dirty" => DebugValue::Array(&[
                    DebugValue::Uint(frame as u64),
                    DebugValue::Str("header"),
                    DebugValue::Bool(true),
                ])
            );
        }
        if frame % 8 == 0 {
            let flow = TrackEvent::new_flow_id();
            trace_instant!(WORK, "request", "frame" => frame; flow = flow);
            let _ = handler.send(flow);
        }
        trace_counter!(WORK, QUEUE, (frame * (id + 1)) % 13);
        trace_counter!(WORK, LOAD, (frame % 10) as f64 / 10.0);
    }
}
