//! A tour of the TrackEvent API beyond the macros: explicit timestamps, an
//! async track under the process, a flow from one thread to another, nested
//! debug annotations and a double counter, written with [`EventWriter`]s on
//! the in-process backend's producer.
//!
//! `cargo run -p zerotrace-core --example track_event -- trace.pftrace`

use std::path::Path;
use std::time::Duration;

use zerotrace_core::boottime_ns;
use zerotrace_core::track_event::{
    Category, DebugValue, EventWriter, InProcessConfig, InProcessSession, ThreadTrack, TrackSpec,
};

static NET: Category = Category::with("net", &[], "Requests");
static CATEGORIES: [&Category; 1] = [&NET];

const PROCESS: u64 = 0x70_0001;
const REQUESTS: u64 = 0x70_0002;
const LATENCY: u64 = 0x70_0003;
const FLOW: u64 = 0xf10;
static PROCESS_TRACK: TrackSpec = TrackSpec::process(PROCESS, "", 4242, "tour");
static REQUEST_TRACK: TrackSpec = TrackSpec::named(REQUESTS, "in-flight requests", Some(PROCESS));
static LATENCY_TRACK: TrackSpec = TrackSpec::counter(LATENCY, "latency", Some(PROCESS), 1, "ns");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "track_event.pftrace".into());
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default())?;
    let instance = session
        .producer()
        .wait_for_start("track_event", Duration::from_secs(10))?;
    let writer = |tid: i64| -> Result<EventWriter, Box<dyn std::error::Error>> {
        let tw = session
            .producer()
            .create_trace_writer(instance.target_buffer)?;
        let thread = ThreadTrack {
            uuid: 0x71_0000 + tid as u64,
            pid: 4242,
            tid,
        };
        Ok(EventWriter::new(
            tw,
            thread,
            Some(if tid == 1 { "client" } else { "server" }),
        ))
    };
    let (mut client, mut server) = (writer(1)?, writer(2)?);
    let t0 = boottime_ns();
    client.define_track(t0, &PROCESS_TRACK);
    client.define_track(t0, &REQUEST_TRACK);
    client.define_track(t0, &LATENCY_TRACK);
    let headers = [
        ("host", DebugValue::Str("example.com")),
        ("port", DebugValue::Int(443)),
    ];
    client.slice_begin_with(
        t0,
        &NET,
        "send request",
        None,
        &[("headers", DebugValue::Dict(&headers))],
        &[FLOW],
        &[],
        |_| {},
    );
    client.slice_begin_with(
        t0 + 10,
        &NET,
        "GET /",
        Some(REQUESTS),
        &[],
        &[],
        &[],
        |_| {},
    );
    client.slice_end(t0 + 50_000, &NET);
    server.slice_begin_with(t0 + 80_000, &NET, "handle", None, &[], &[], &[FLOW], |_| {});
    server.slice_end(t0 + 400_000, &NET);
    client.slice_end_on(t0 + 450_000, &NET, Some(REQUESTS));
    client.counter_f64(t0 + 450_000, LATENCY, 450_000.0);
    client.writer().flush(None);
    server.writer().flush(None);
    let bytes = session.stop(Path::new(&out))?;
    println!("wrote {bytes} bytes to {out}");
    Ok(())
}
