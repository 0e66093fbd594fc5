//! The TrackEvent system backend against Perfetto's genuine service: our
//! producer registers `track_event` with its categories, the genuine service
//! enables them by its TrackEventConfig, and the trace it writes holds our
//! slices (nested, annotated), instants, counters, flows and an async track,
//! every name resolved through the interned data of its sequence. (The same
//! against `zerotraced` is `tracing-core/tests/track_event_backend.rs`.)
//! Our trace processor loads that trace with no error or data-loss stat
//! and shows the same slices, counter values, flows and async slice.
//! (Its own test binary, not a module of `all/`: a process registers
//! TrackEvent once.)
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::producer::{ProducerClient, ProducerOptions};
use zerotrace_core::track_event::{Category, TrackEvent, TrackSpec};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};
use zerotrace_interop::services::{Service, Which};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

#[path = "tp_check/mod.rs"]
mod tp_check;
use tp_check::rows;

const WAIT: Duration = Duration::from_secs(30);

static RENDER: Category = Category::new("render");
static IO: Category = Category::new("io");
static NOISY: Category = Category::new("noisy");
static CATEGORIES: [&Category; 3] = [&RENDER, &IO, &NOISY];
static FPS: TrackSpec = TrackSpec::counter(0xf75, "fps", None, 2, "frames");

fn config() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(4096);
        let mut ds = c.add_data_sources();
        let mut cfg = ds.begin_config();
        cfg.set_name("track_event");
        let mut te = cfg.begin_track_event_config();
        te.add_enabled_categories("render");
        te.add_enabled_categories("io");
        te.add_disabled_categories("*");
    }
    w.finish().unwrap()
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Interned names by iid.
type Names = HashMap<u64, String>;

/// Decoded events: (type, name, track, annotations, flows, counter).
type Event = (
    i32,
    Option<String>,
    Option<u64>,
    Vec<String>,
    Vec<u64>,
    Option<i64>,
);

#[test]
fn track_events_through_the_genuine_service() {
    let svc = Service::start(Which::Genuine, "te-pf");
    let producer = Arc::new(
        ProducerClient::connect(
            &svc.producer_endpoint(),
            ProducerOptions {
                name: "zerotrace-track-event".into(),
                ..ProducerOptions::default()
            },
        )
        .unwrap(),
    );
    TrackEvent::register(producer.clone(), &CATEGORIES).unwrap();
    let mut consumer = ConsumerClient::connect(&svc.consumer_endpoint()).unwrap();
    let session = consumer.enable_tracing(&config(), None).unwrap();
    wait_until("the categories", || RENDER.is_enabled() && IO.is_enabled());
    assert!(!NOISY.is_enabled(), "disabled by the config");

    let requests = TrackSpec::named(0x5eed, "requests", Some(TrackEvent::process_track().uuid));
    let flow = TrackEvent::new_flow_id();
    for frame in 0..3i64 {
        let _f = trace_event!(RENDER, "frame", "n" => frame, "kind" => "vsync");
        {
            let _l = trace_event!(RENDER, "layout"; flow = flow + frame as u64);
            trace_instant!(NOISY, "never");
        }
        trace_counter!(RENDER, FPS, 60 - frame);
    }
    trace_begin!(IO, "fetch"; track = &requests);
    std::thread::spawn(move || {
        for frame in 0..3u64 {
            trace_instant!(IO, "received"; terminating_flow = flow + frame);
        }
        trace_end!(IO; track = &requests);
        TrackEvent::flush();
    })
    .join()
    .unwrap();
    TrackEvent::flush();
    producer.flush_blocking(WAIT).unwrap();

    assert!(consumer.flush(5000).unwrap(), "flush acknowledged");
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer.wait_for_end(session, Some(WAIT)).unwrap(),
        SessionEnd::Disabled
    );
    let trace = consumer.read_trace().unwrap();

    // Decode, resolving names through each sequence's interned data (reset
    // when a packet says its incremental state was cleared).
    let mut interned: HashMap<u32, (Names, Names)> = HashMap::new();
    let mut tracks: HashMap<u64, (Option<String>, Option<u64>)> = HashMap::new();
    let mut events: Vec<Event> = Vec::new();
    for f in protozero::Decoder::new(&trace) {
        let p = TracePacketDecoder::new(f.unwrap().as_bytes().unwrap());
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        if p.sequence_flags().unwrap_or(0) & 1 != 0 {
            interned.remove(&seq);
        }
        let (names, ann) = interned.entry(seq).or_default();
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
            for e in i.debug_annotation_names() {
                ann.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
        }
        if let Some(d) = p.track_descriptor() {
            tracks.insert(
                d.uuid().unwrap(),
                (d.name().map(str::to_owned), d.parent_uuid()),
            );
        }
        let Some(e) = p.track_event() else { continue };
        let anns = e
            .debug_annotations()
            .map(|a| {
                let v = a
                    .string_value()
                    .map(str::to_owned)
                    .or(a.int_value().map(|v| v.to_string()))
                    .unwrap_or_default();
                format!("{}={v}", ann[&a.name_iid().unwrap()])
            })
            .collect();
        events.push((
            e.type_raw().unwrap(),
            e.name_iid().map(|i| names[&i].clone()),
            e.track_uuid(),
            anns,
            e.flow_ids().chain(e.terminating_flow_ids()).collect(),
            e.counter_value(),
        ));
    }

    // The main thread's slices nest: frame > layout, three times.
    let main: Vec<String> = events
        .iter()
        .filter(|e| e.2.is_none() && e.0 != 3)
        .map(|e| format!("{} {}", e.0, e.1.as_deref().unwrap_or("")))
        .collect();
    let want: Vec<String> = (0..3)
        .flat_map(|_| ["1 frame", "1 layout", "2 ", "2 "])
        .map(str::to_owned)
        .collect();
    assert_eq!(main, want);
    let frames: Vec<&Vec<String>> = events
        .iter()
        .filter(|e| e.1.as_deref() == Some("frame"))
        .map(|e| &e.3)
        .collect();
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[2], &vec!["n=2".to_owned(), "kind=vsync".to_owned()]);
    assert!(
        events.iter().all(|e| e.1.as_deref() != Some("never")),
        "a disabled category wrote nothing"
    );
    // Counters on their track, flows matched across threads.
    let samples: Vec<i64> = events
        .iter()
        .filter(|e| e.0 == 4)
        .map(|e| e.5.unwrap())
        .collect();
    assert_eq!(samples, vec![60, 59, 58]);
    assert_eq!(tracks[&0xf75].0.as_deref(), Some("fps"));
    let out: Vec<u64> = events
        .iter()
        .filter(|e| e.1.as_deref() == Some("layout"))
        .flat_map(|e| e.4.clone())
        .collect();
    let back: Vec<u64> = events
        .iter()
        .filter(|e| e.1.as_deref() == Some("received"))
        .flat_map(|e| e.4.clone())
        .collect();
    assert_eq!(out, back);
    assert_eq!(out.len(), 3);
    // The async slice: begun on one thread, ended on another, on its track
    // under the process track.
    let on_async: Vec<i32> = events
        .iter()
        .filter(|e| e.2 == Some(0x5eed))
        .map(|e| e.0)
        .collect();
    assert_eq!(on_async, vec![1, 2]);
    assert_eq!(
        tracks[&0x5eed],
        (
            Some("requests".to_owned()),
            Some(TrackEvent::process_track().uuid)
        )
    );

    // The same trace through our trace processor: nothing lost or refused,
    // and the tables hold what the packets said.
    let tp = tp_check::load(&trace);
    tp_check::assert_no_unexplained_stats(&tp, &[]);
    let me = std::process::id();
    assert_eq!(
        rows(
            &tp,
            &format!(
                "SELECT s.name, s.depth, extract_arg(s.arg_set_id, 'debug.n'), \
                 extract_arg(s.arg_set_id, 'debug.kind') FROM slice s \
                 JOIN thread_track tt ON s.track_id = tt.id JOIN thread USING (utid) \
                 JOIN process p USING (upid) WHERE p.pid = {me} AND s.name != 'received' \
                 ORDER BY s.ts, s.depth"
            )
        ),
        (0..3)
            .flat_map(|n| [
                format!("frame|0|{n}|vsync"),
                "layout|1|NULL|NULL".to_owned()
            ])
            .collect::<Vec<_>>()
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.value FROM counter c JOIN counter_track t ON c.track_id = t.id \
             WHERE t.name = 'fps' ORDER BY c.ts"
        ),
        ["60", "59", "58"]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT o.name, i.name, i.dur FROM flow f JOIN slice o ON f.slice_out = o.id \
             JOIN slice i ON f.slice_in = i.id ORDER BY o.ts"
        ),
        [
            "layout|received|0",
            "layout|received|0",
            "layout|received|0"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT t.name, s.name, s.dur > 0 FROM slice s JOIN track t ON s.track_id = t.id \
             WHERE s.name = 'fetch'"
        ),
        ["requests|fetch|1"]
    );
    assert_eq!(
        tp_check::int(&tp, "SELECT count(*) FROM slice WHERE name = 'never'"),
        0
    );
}
