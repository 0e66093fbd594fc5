//! The four scenarios of Perfetto's synthetic TrackEvent document
//! (perfetto.dev/docs/reference/synthetic-track-event, value for value: the
//! async track's process is pid 1234, and the flow's three slices all carry
//! `flow_ids`) (thread
//! slices with an instant, overlapping async slices on two tracks, a flow
//! across two threads, a counter), produced through the TrackEvent API
//! (`EventWriter` and `TrackSpec`, no raw-field closure), recorded through
//! the service, and compared with the document semantically: the same
//! processes, threads, tracks and parents, slice nesting and names, flows and
//! counter values.

use crate::service_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use service_support::*;
use zerotrace_core::service::ConsumerCall;
use zerotrace_core::track_event::{Category, EventWriter, ThreadTrack, TrackSpec};
use zerotrace_protos::protos::TracePacketDecoder;

static CAT: Category = Category::new("synthetic");

// Scenario 1: a process and a thread with nested slices and an instant.
const P1: u64 = 894_893_984;
const T1: u64 = 49_083_589_894;
static PROCESS_1: TrackSpec = TrackSpec::process(P1, "", 1234, "My process name");
static THREAD_1: TrackSpec = TrackSpec::thread(T1, Some(P1), 1234, 5678, "My thread name");
// Scenario 2: two async tracks named alike, the second under the first.
const A1: u64 = 48_948;
const A2: u64 = 2_390_190_934;
static ASYNC_1: TrackSpec = TrackSpec {
    process: Some((1234, "My process name")),
    ..TrackSpec::named(A1, "My special track", None)
};
static ASYNC_2: TrackSpec = TrackSpec::named(A2, "My special track", Some(A1));
// Scenario 3: a flow from the main thread to a background thread and back.
const MAIN: u64 = 93_094;
const BACKGROUND: u64 = 40_489_498;
const FLOW: u64 = 1_055_895_987;
static BACKGROUND_THREAD: TrackSpec =
    TrackSpec::thread(BACKGROUND, None, 100, 101, "Background thread");
// Scenario 4: a counter under a process.
const P4: u64 = 1388;
const COUNTER: u64 = 4_489_498;
static PROCESS_4: TrackSpec = TrackSpec::process(P4, "", 1024, "MySpecialProcess");
static COUNTER_TRACK: TrackSpec =
    TrackSpec::counter(COUNTER, "My special counter", Some(P4), 0, "");

/// A track: (name, parent, process (pid, name), thread (pid, tid, name), counter).
type TrackMeaning = (
    String,
    Option<u64>,
    Option<(i32, String)>,
    Option<(i32, i64, String)>,
    bool,
);

/// What a trace says, as a reader of the document sees it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Meaning {
    /// uuid → what the track is
    tracks: BTreeMap<u64, TrackMeaning>,
    /// track → slices (begin, end, depth, name) and instants (ts, name)
    slices: BTreeMap<u64, Vec<(u64, u64, usize, String)>>,
    instants: BTreeMap<u64, Vec<(u64, String)>>,
    /// flow id → names of the slices it links, and of the one that ends it
    flows: BTreeMap<u64, (BTreeSet<String>, Option<String>)>,
    counters: BTreeMap<u64, Vec<(u64, i64)>>,
}

fn meaning(packets: &[Vec<u8>]) -> Meaning {
    let mut m = Meaning::default();
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut default_track = None;
    let mut open: HashMap<u64, Vec<(u64, String)>> = HashMap::new();
    for raw in packets.iter().filter(|p| varint(p, 10) != Some(1)) {
        let p = TracePacketDecoder::new(raw);
        if p.sequence_flags().unwrap_or(0) & 1 != 0 {
            names.clear();
        }
        if let Some(t) = p
            .trace_packet_defaults()
            .and_then(|d| d.track_event_defaults())
            .and_then(|d| d.track_uuid())
        {
            default_track = Some(t);
        }
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
        }
        if let Some(d) = p.track_descriptor() {
            m.tracks.insert(
                d.uuid().unwrap(),
                (
                    d.name().unwrap_or("").to_owned(),
                    d.parent_uuid(),
                    d.process()
                        .map(|p| (p.pid().unwrap(), p.process_name().unwrap_or("").to_owned())),
                    d.thread().map(|t| {
                        (
                            t.pid().unwrap(),
                            t.tid().unwrap(),
                            t.thread_name().unwrap_or("").to_owned(),
                        )
                    }),
                    d.has_counter(),
                ),
            );
        }
        let Some(e) = p.track_event() else { continue };
        let ts = p.timestamp().unwrap();
        let track = e.track_uuid().or(default_track).expect("a track");
        let name = e
            .name_iid()
            .map(|i| names[&i].clone())
            .or(e.name().map(str::to_owned))
            .unwrap_or_default();
        for f in e.flow_ids() {
            m.flows.entry(f).or_default().0.insert(name.clone());
        }
        for f in e.terminating_flow_ids() {
            m.flows.entry(f).or_default().1 = Some(name.clone());
        }
        match e.type_raw() {
            Some(1) => open.entry(track).or_default().push((ts, name)),
            Some(2) => {
                let stack = open.get_mut(&track).expect("an open slice");
                let (begin, name) = stack.pop().expect("an open slice");
                let depth = stack.len();
                m.slices
                    .entry(track)
                    .or_default()
                    .push((begin, ts, depth, name));
            }
            Some(3) => m.instants.entry(track).or_default().push((ts, name)),
            Some(4) => m
                .counters
                .entry(track)
                .or_default()
                .push((ts, e.counter_value().unwrap())),
            t => panic!("{t:?}"),
        }
    }
    for v in m.slices.values_mut() {
        v.sort();
    }
    m
}

/// The document's scenarios, as stated there.
fn document() -> Meaning {
    let s = |x: &str| x.to_owned();
    let mut m = Meaning::default();
    m.tracks.insert(
        P1,
        (s(""), None, Some((1234, s("My process name"))), None, false),
    );
    m.tracks.insert(
        T1,
        (
            s(""),
            Some(P1),
            None,
            Some((1234, 5678, s("My thread name"))),
            false,
        ),
    );
    m.tracks.insert(
        A1,
        (
            s("My special track"),
            None,
            Some((1234, s("My process name"))),
            None,
            false,
        ),
    );
    m.tracks
        .insert(A2, (s("My special track"), Some(A1), None, None, false));
    m.tracks.insert(
        MAIN,
        (s(""), None, None, Some((100, 100, s("Main thread"))), false),
    );
    m.tracks.insert(
        BACKGROUND,
        (
            s(""),
            None,
            None,
            Some((100, 101, s("Background thread"))),
            false,
        ),
    );
    m.tracks.insert(
        P4,
        (
            s(""),
            None,
            Some((1024, s("MySpecialProcess"))),
            None,
            false,
        ),
    );
    m.tracks.insert(
        COUNTER,
        (s("My special counter"), Some(P4), None, None, true),
    );
    m.slices.insert(
        T1,
        vec![
            (200, 300, 0, s("My special parent")),
            (250, 290, 1, s("My special child")),
        ],
    );
    m.instants.insert(T1, vec![(285, s(""))]);
    m.slices.insert(
        A1,
        vec![
            (200, 300, 0, s("My special parent A")),
            (250, 290, 1, s("My special child")),
        ],
    );
    m.slices.insert(
        A2,
        vec![
            (230, 295, 0, s("My special parent A")),
            (260, 270, 1, s("My special child")),
        ],
    );
    m.slices.insert(
        MAIN,
        vec![
            (200, 300, 0, s("Request generation")),
            (400, 500, 0, s("Process background result")),
        ],
    );
    m.slices
        .insert(BACKGROUND, vec![(310, 385, 0, s("Background work"))]);
    m.flows.insert(
        FLOW,
        (
            [
                s("Request generation"),
                s("Background work"),
                s("Process background result"),
            ]
            .into_iter()
            .collect(),
            None,
        ),
    );
    m.counters.insert(
        COUNTER,
        vec![(200, 34_567), (250, 67_890), (300, 12_345), (400, 12_345)],
    );
    m
}

#[test]
fn the_synthetic_document_through_the_api() {
    let mut h = Harness::new();
    let p = h.producer("synthetic", 1);
    h.register(p, "track_event", false, false);
    let c = h.consumer(1);
    h.enable(c, config(&[(1024, false)], &[("track_event", 0)], |_| {}));
    let b = h.svc.sessions()[0].buffers[0].0.0;
    // The writing thread is scenario 3's main thread.
    let main = ThreadTrack {
        uuid: MAIN,
        pid: 100,
        tid: 100,
    };
    let mut ev = EventWriter::new(h.writer(p, b), main, Some("Main thread"));

    // 1. Thread slices with an instant.
    for t in [&PROCESS_1, &THREAD_1] {
        ev.define_track(0, t);
    }
    ev.slice_begin_with(
        200,
        &CAT,
        "My special parent",
        Some(T1),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.slice_begin_with(
        250,
        &CAT,
        "My special child",
        Some(T1),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.instant_on(285, &CAT, None, Some(T1));
    ev.slice_end_on(290, &CAT, Some(T1));
    ev.slice_end_on(300, &CAT, Some(T1));
    // 2. Overlapping async slices on two tracks.
    ev.define_track(0, &ASYNC_1);
    ev.slice_begin_with(
        200,
        &CAT,
        "My special parent A",
        Some(A1),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.slice_begin_with(
        250,
        &CAT,
        "My special child",
        Some(A1),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.slice_end_on(290, &CAT, Some(A1));
    ev.slice_end_on(300, &CAT, Some(A1));
    ev.define_track(0, &ASYNC_2);
    ev.slice_begin_with(
        230,
        &CAT,
        "My special parent A",
        Some(A2),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.slice_begin_with(
        260,
        &CAT,
        "My special child",
        Some(A2),
        &[],
        &[],
        &[],
        |_| {},
    );
    ev.slice_end_on(270, &CAT, Some(A2));
    ev.slice_end_on(295, &CAT, Some(A2));
    // 3. A flow across threads.
    ev.slice_begin_with(
        200,
        &CAT,
        "Request generation",
        None,
        &[],
        &[FLOW],
        &[],
        |_| {},
    );
    ev.slice_end(300, &CAT);
    ev.slice_begin_with(
        400,
        &CAT,
        "Process background result",
        None,
        &[],
        &[FLOW],
        &[],
        |_| {},
    );
    ev.slice_end(500, &CAT);
    ev.define_track(0, &BACKGROUND_THREAD);
    ev.slice_begin_with(
        310,
        &CAT,
        "Background work",
        Some(BACKGROUND),
        &[],
        &[FLOW],
        &[],
        |_| {},
    );
    ev.slice_end_on(385, &CAT, Some(BACKGROUND));
    // 4. A counter.
    for t in [&PROCESS_4, &COUNTER_TRACK] {
        ev.define_track(0, t);
    }
    for (ts, v) in [(200, 34_567), (250, 67_890), (300, 12_345), (400, 12_345)] {
        ev.counter(ts, COUNTER, v);
    }
    ev.writer().flush(None);
    h.pump(p);
    h.ccall(c, ConsumerCall::DisableTracing);
    let packets = h.read(c);
    assert_eq!(meaning(&packets), document());
}
