//! `zerotrace demo`: records a trace with no daemon and no config. An
//! embedded service, a demo producer (worker threads with nested slices and
//! annotations, an async track of uploads begun on one thread and ended on
//! another, a flow from a request to its handler, a counter track) and a
//! consumer, all in this process; then says what the trace holds.

use std::path::Path;
use std::time::Duration;

use zerotrace_core::track_event::{
    Category, InProcessConfig, InProcessSession, TrackEvent, TrackSpec,
};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};
use zerotrace_protos::protos::TracePacketDecoder;

use super::summary::human_bytes;
use super::trace_reader::packets;
use super::{CliError, print_out};

static FRAME: Category = Category::with("frame", &[], "The demo's frames");
static WORK: Category = Category::with("work", &[], "Work items and uploads");
static CATEGORIES: [&Category; 2] = [&FRAME, &WORK];
static QUEUE: TrackSpec = TrackSpec::counter(0xde_0001, "queue depth", None, 2, "items");

/// One worker: frames of nested slices; every few frames a request whose
/// flow ends at the handler thread.
fn worker(id: i64, handler: std::sync::mpsc::Sender<u64>) {
    for frame in 0..40i64 {
        let _f = trace_event!(FRAME, "frame", "worker" => id, "n" => frame);
        {
            let _u = trace_event!(WORK, "update", "entities" => 100 + frame);
            std::thread::sleep(Duration::from_micros(200));
        }
        {
            let _r = trace_event!(WORK, "render");
            std::thread::sleep(Duration::from_micros(300));
        }
        if frame % 8 == 0 {
            let flow = TrackEvent::new_flow_id();
            trace_instant!(WORK, "request", "frame" => frame; flow = flow);
            let _ = handler.send(flow);
        }
        trace_counter!(WORK, QUEUE, (frame * (id + 1)) % 13);
    }
}

/// Runs `demo`.
pub fn run(out: &Path) -> Result<(), CliError> {
    let mut o = String::new();
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default())
        .map_err(|e| CliError::Session(e.to_string()))?;
    let uploads = TrackSpec::named(0xde_0002, "uploads", Some(TrackEvent::process_track().uuid));
    trace_begin!(WORK, "upload", "file" => "frames.bin"; track = &uploads);
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let handler = std::thread::spawn(move || {
        for flow in rx {
            let _h = trace_event!(WORK, "handle request"; terminating_flow = flow);
            std::thread::sleep(Duration::from_micros(100));
        }
        // The upload ends on this thread.
        trace_end!(WORK; track = &uploads);
    });
    let workers: Vec<_> = (0..3)
        .map(|id| {
            let tx = tx.clone();
            std::thread::spawn(move || worker(id, tx))
        })
        .collect();
    drop(tx);
    for w in workers {
        let _ = w.join();
    }
    let _ = handler.join();
    let bytes = session
        .stop(out)
        .map_err(|e| CliError::io(out.display(), e))?;
    let trace = std::fs::read(out).map_err(|e| CliError::io(out.display(), e))?;
    let name = out.display().to_string();
    let mut slices = 0;
    let mut flows = 0;
    let mut samples = 0;
    let mut threads = 0;
    let all = packets(&name, &trace)?;
    for raw in &all {
        let p = TracePacketDecoder::new(raw);
        if p.track_descriptor().is_some_and(|d| d.has_thread()) {
            threads += 1;
        }
        if let Some(e) = p.track_event() {
            match e.type_raw() {
                Some(1) => slices += 1,
                Some(4) => samples += 1,
                _ => {}
            }
            flows += e.terminating_flow_ids().count();
        }
    }
    outln!(
        o,
        "wrote {} to {}",
        human_bytes(bytes as u64),
        out.display()
    );
    outln!(
        o,
        "  {} packets: {slices} slices on {threads} thread tracks and the \"uploads\" async \
         track, {flows} flows between threads, {samples} samples of the \"queue depth\" counter",
        all.len()
    );
    outln!(
        o,
        "  open it at https://ui.perfetto.dev, or: zerotrace stats {}",
        out.display()
    );
    print_out(o.as_bytes())
}
