//! The in-process backend: one call starts recording with the embedded
//! service, one stops it and writes a trace holding the enabled categories'
//! events (and only those), with the service's packets around them.
//! (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession};
use zerotrace_core::{trace_event, trace_instant};
use zerotrace_protos::protos::TracePacketDecoder;

static ON: Category = Category::new("on");
static OFF: Category = Category::new("off");
static CATEGORIES: [&Category; 2] = [&ON, &OFF];

#[test]
fn start_record_stop_and_write() {
    let cfg = InProcessConfig {
        enabled_categories: vec!["on".into()],
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&CATEGORIES, cfg).unwrap();
    assert!(ON.is_enabled() && !OFF.is_enabled());
    for i in 0..100i64 {
        let _a = trace_event!(ON, "work", "i" => i);
        let _b = trace_event!(OFF, "hidden");
        trace_instant!(ON, "tick");
    }
    let path = std::env::temp_dir().join(format!("zt-inproc-{}.pftrace", std::process::id()));
    let bytes = session.stop(&path).unwrap();
    let trace = std::fs::read(&path).unwrap();
    assert_eq!(trace.len(), bytes);
    let _ = std::fs::remove_file(&path);
    let mut begins = 0;
    let mut instants = 0;
    let mut service = 0;
    for f in protozero::Decoder::new(&trace) {
        let raw = f.unwrap().as_bytes().unwrap();
        let p = TracePacketDecoder::new(raw);
        if p.trusted_packet_sequence_id() == Some(1) {
            service += 1;
        }
        if let Some(i) = p.interned_data() {
            assert!(i.event_categories().all(|c| c.name() == Some("on")));
        }
        match p.track_event().and_then(|e| e.type_raw()) {
            Some(1) => begins += 1,
            Some(3) => instants += 1,
            _ => {}
        }
    }
    assert_eq!((begins, instants), (100, 100));
    assert!(service > 5, "the service's own packets are there");
}
