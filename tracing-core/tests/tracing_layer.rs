//! The `tracing` Layer: spans become slices (nested as entered), their and
//! events' fields debug annotations, events instants.
//! (Its own test binary: a process registers TrackEvent, and installs
//! `log`'s logger, once.)
#![cfg(target_os = "linux")]

use tracing_subscriber::layer::SubscriberExt;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, PerfettoLayer};
use zerotrace_protos::protos::TracePacketDecoder;

static TRACING: Category = Category::new("tracing");
static CATEGORIES: [&Category; 1] = [&TRACING];

#[test]
fn spans_and_events_become_track_events() {
    tracing_log::LogTracer::init().unwrap();
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default()).unwrap();
    let subscriber = tracing_subscriber::registry().with(PerfettoLayer::new(&TRACING));
    tracing::subscriber::with_default(subscriber, || {
        let outer = tracing::span!(tracing::Level::INFO, "request", id = 7u64, path = "/index");
        let _o = outer.enter();
        for i in 0..3 {
            let inner = tracing::span!(tracing::Level::DEBUG, "parse", attempt = i);
            let _i = inner.enter();
            tracing::event!(
                tracing::Level::INFO,
                bytes = 512u64,
                ok = true,
                "parsed chunk"
            );
            tracing::event!(tracing::Level::INFO, counter.queue = 10 * i as i64);
        }
        // A `log` record, through tracing-log's LogTracer.
        log::warn!("disk {} almost full", 3);
    });
    let path = std::env::temp_dir().join(format!("zt-layer-{}.pftrace", std::process::id()));
    session.stop(&path).unwrap();
    let trace = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);

    let mut names = std::collections::HashMap::new();
    let mut ann_names = std::collections::HashMap::new();
    let mut stack: Vec<String> = Vec::new();
    let mut log = Vec::new();
    let mut counters = Vec::new();
    let mut counter_track = None;
    for f in protozero::Decoder::new(&trace) {
        let raw = f.unwrap().as_bytes().unwrap();
        let p = TracePacketDecoder::new(raw);
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
            for e in i.debug_annotation_names() {
                ann_names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
        }
        if let Some(d) = p.track_descriptor().filter(|d| d.has_counter()) {
            counter_track = d.name().map(str::to_owned);
        }
        let Some(e) = p.track_event() else { continue };
        let anns: Vec<String> = e
            .debug_annotations()
            .map(|a| {
                let v = a
                    .string_value()
                    .map(str::to_owned)
                    .or(a.uint_value().map(|v| v.to_string()))
                    .or(a.int_value().map(|v| v.to_string()))
                    .or(a.bool_value().map(|v| v.to_string()))
                    .unwrap_or_default();
                format!("{}={v}", ann_names[&a.name_iid().unwrap()])
            })
            .collect();
        match e.type_raw() {
            Some(1) => {
                let n = names[&e.name_iid().unwrap()].clone();
                log.push(format!("B {n} [{}] depth {}", anns.join(","), stack.len()));
                stack.push(n);
            }
            Some(2) => {
                stack.pop().expect("balanced");
            }
            Some(3) => log.push(format!("I [{}] depth {}", anns.join(","), stack.len())),
            Some(4) => counters.push(e.counter_value().unwrap()),
            t => panic!("{t:?}"),
        }
    }
    assert!(stack.is_empty());
    assert_eq!(log[0], "B request [id=7,path=/index] depth 0");
    assert_eq!(log[1], "B parse [attempt=0] depth 1");
    assert_eq!(log[2], "I [message=parsed chunk,bytes=512,ok=true] depth 2");
    assert_eq!(log.len(), 1 + 3 * 2 + 1);
    assert!(
        log[7].starts_with("I [message=disk 3 almost full,log.target=tracing_layer"),
        "{}",
        log[7]
    );
    assert_eq!(
        counters,
        [0, 10, 20],
        "counter.queue fields are counter samples"
    );
    assert_eq!(counter_track.as_deref(), Some("queue"));
}
