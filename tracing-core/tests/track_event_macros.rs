//! The macros' options through the in-process backend: async tracks under
//! the process track, flows across threads, explicit timestamps, counter
//! tracks, and source locations interned per sequence.
//! (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

use std::collections::HashMap;

use zerotrace_core::track_event::{
    Category, InProcessConfig, InProcessSession, TrackEvent, TrackSpec,
};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};
use zerotrace_protos::protos::TracePacketDecoder;

static ON: Category = Category::new("on");
static CATEGORIES: [&Category; 1] = [&ON];
static QUEUE: TrackSpec = TrackSpec::counter(0x51, "queue", None, 2, "items");

/// One decoded event, names resolved through its sequence's interned data.
#[derive(Debug, Clone)]
struct Ev {
    kind: i32,
    name: Option<String>,
    track: Option<u64>,
    ts: u64,
    flows: Vec<u64>,
    terminating: Vec<u64>,
    location: Option<(String, String, u32)>,
    counter: Option<i64>,
}

/// A track descriptor: name, parent, pid of a process descriptor.
type Track = (Option<String>, Option<u64>, Option<i32>);

#[derive(Default)]
struct Decoded {
    events: Vec<Ev>,
    tracks: HashMap<u64, Track>,
}

fn decode(trace: &[u8]) -> Decoded {
    type Names = HashMap<u64, String>;
    type Locations = HashMap<u64, (String, String, u32)>;
    let mut per_seq: HashMap<u32, (Names, Locations)> = HashMap::new();
    let mut out = Decoded::default();
    for f in protozero::Decoder::new(trace) {
        let p = TracePacketDecoder::new(f.unwrap().as_bytes().unwrap());
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        if p.sequence_flags().unwrap_or(0) & 1 != 0 {
            per_seq.remove(&seq);
        }
        let (names, locs) = per_seq.entry(seq).or_default();
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
            for l in i.source_locations() {
                let loc = (
                    l.file_name().unwrap().to_owned(),
                    l.function_name().unwrap().to_owned(),
                    l.line_number().unwrap(),
                );
                locs.insert(l.iid().unwrap(), loc);
            }
        }
        if let Some(d) = p.track_descriptor() {
            let pid = d.process().and_then(|p| p.pid());
            let name = d.name().map(str::to_owned);
            out.tracks
                .insert(d.uuid().unwrap(), (name, d.parent_uuid(), pid));
        }
        let Some(e) = p.track_event() else { continue };
        out.events.push(Ev {
            kind: e.type_raw().unwrap(),
            name: e.name_iid().map(|i| names[&i].clone()),
            track: e.track_uuid(),
            ts: p.timestamp().unwrap(),
            flows: e.flow_ids().collect(),
            terminating: e.terminating_flow_ids().collect(),
            location: e.source_location_iid().map(|i| locs[&i].clone()),
            counter: e.counter_value(),
        });
    }
    out
}

#[test]
fn options_tracks_flows_timestamps_and_locations() {
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default()).unwrap();
    let process = TrackEvent::process_track();
    let requests = TrackSpec::named(0xa5, "requests", Some(process.uuid));
    let flow = TrackEvent::new_flow_id();
    let scoped_line;
    {
        scoped_line = line!() + 1;
        let _s = trace_event!(ON, "scoped", "n" => 1i64; flow = flow);
        trace_begin!(ON, "request 1"; track = &requests);
        trace_instant!(ON, "in the past"; timestamp = 12_345);
        trace_counter!(ON, QUEUE, 3i64);
    }
    std::thread::spawn(move || {
        trace_instant!(ON, "received"; terminating_flow = flow);
        // The async slice ends on another thread.
        trace_end!(ON; track = &requests);
        TrackEvent::flush();
    })
    .join()
    .unwrap();
    let path = std::env::temp_dir().join(format!("zt-macros-{}.pftrace", std::process::id()));
    session.stop(&path).unwrap();
    let trace = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let d = decode(&trace);

    let by_name = |n: &str| {
        d.events
            .iter()
            .find(|e| e.name.as_deref() == Some(n))
            .unwrap()
    };
    // Source location of the scoped slice: this file, this module, its line.
    let scoped = by_name("scoped");
    let (file, function, line) = scoped.location.clone().unwrap();
    assert!(file.ends_with("track_event_macros.rs"), "{file}");
    assert_eq!(
        (function.as_str(), line),
        ("track_event_macros", scoped_line)
    );
    // The flow leaves the scoped slice and ends at the other thread's instant.
    assert_eq!(scoped.flows, vec![flow]);
    assert_eq!(by_name("received").terminating, vec![flow]);
    // The async slice: begun on one thread, ended on another, on its track
    // under the process track, which says the pid.
    let begin = by_name("request 1");
    assert_eq!(begin.track, Some(0xa5));
    let end = d
        .events
        .iter()
        .find(|e| e.kind == 2 && e.track == Some(0xa5))
        .expect("the async end");
    assert!(end.ts >= begin.ts);
    assert_eq!(d.tracks[&0xa5].1, Some(process.uuid));
    assert_eq!(d.tracks[&process.uuid].2, Some(std::process::id() as i32));
    // Thread tracks hang under the process track.
    let threads = d
        .tracks
        .iter()
        .filter(|(u, t)| **u != process.uuid && t.1 == Some(process.uuid) && **u != 0xa5)
        .count();
    assert_eq!(threads, 2, "{:?}", d.tracks);
    // Explicit timestamp, counter on its track.
    assert_eq!(by_name("in the past").ts, 12_345);
    let sample = d.events.iter().find(|e| e.kind == 4).unwrap();
    assert_eq!((sample.track, sample.counter), (Some(0x51), Some(3)));
    assert_eq!(d.tracks[&0x51].0.as_deref(), Some("queue"));
}
