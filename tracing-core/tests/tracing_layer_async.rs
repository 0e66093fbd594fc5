//! The `tracing` Layer with one async track per span instance, and
//! `follows_from` as a flow; callsites become source locations, and a field
//! recorded after a slice began annotates its end.
//! (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

use std::collections::HashMap;

use tracing_subscriber::layer::SubscriberExt;
use zerotrace_core::track_event::{
    Category, InProcessConfig, InProcessSession, PerfettoLayer, TrackEvent,
};
use zerotrace_protos::protos::TracePacketDecoder;

static TRACING: Category = Category::new("tracing");
static CATEGORIES: [&Category; 1] = [&TRACING];

#[test]
fn span_instances_get_tracks_and_follows_from_is_a_flow() {
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default()).unwrap();
    let layer = PerfettoLayer::new(&TRACING).with_async_tracks();
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        let first = tracing::info_span!("task", n = 1u64);
        let second = tracing::info_span!("task", n = 2u64);
        // Entered many times, on other threads: still one slice each.
        for _ in 0..3 {
            let _e = first.enter();
        }
        let follower = tracing::info_span!("follower", done = tracing::field::Empty);
        follower.follows_from(&first);
        // Recorded after its slice began: on its end.
        follower.record("done", true);
        drop(first);
        std::thread::scope(|s| {
            s.spawn(|| drop(second));
        });
        drop(follower);
    });
    TrackEvent::flush();
    let path = std::env::temp_dir().join(format!("zt-layer-async-{}.pftrace", std::process::id()));
    session.stop(&path).unwrap();
    let trace = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);

    let process = TrackEvent::process_track().uuid;
    let mut names = HashMap::new();
    let mut files = HashMap::new();
    let mut parents = HashMap::new();
    // (type, name, track, flows, location file, terminating flows,
    // annotations)
    let mut events = Vec::new();
    for f in protozero::Decoder::new(&trace) {
        let p = TracePacketDecoder::new(f.unwrap().as_bytes().unwrap());
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
            for l in i.source_locations() {
                files.insert(l.iid().unwrap(), l.file_name().unwrap().to_owned());
            }
        }
        if let Some(d) = p.track_descriptor() {
            parents.insert(d.uuid().unwrap(), d.parent_uuid());
        }
        if let Some(e) = p.track_event() {
            events.push((
                e.type_raw().unwrap(),
                e.name_iid().map(|i| names[&i].clone()),
                e.track_uuid().unwrap(),
                e.flow_ids().collect::<Vec<_>>(),
                e.source_location_iid().map(|i| files[&i].clone()),
                e.terminating_flow_ids().collect::<Vec<_>>(),
                e.debug_annotations().count(),
            ));
        }
    }
    let begins: Vec<_> = events.iter().filter(|e| e.0 == 1).collect();
    let ends: Vec<_> = events.iter().filter(|e| e.0 == 2).collect();
    assert_eq!(begins.len(), 3, "{events:?}");
    assert_eq!(ends.len(), 3, "{events:?}");
    let mut tracks: Vec<u64> = begins.iter().map(|b| b.2).collect();
    tracks.sort();
    tracks.dedup();
    assert_eq!(tracks.len(), 3, "a track per span instance");
    for b in &begins {
        assert_eq!(parents[&b.2], Some(process), "under the process track");
        assert!(
            ends.iter().any(|e| e.2 == b.2),
            "each slice ends on its track"
        );
        let file = b.4.as_deref().unwrap();
        assert!(file.ends_with("tracing_layer_async.rs"), "{file}");
    }
    // The flow: out of the first task's slice (an instant inside it, on
    // its track, when follows_from is called) into the follower's (its
    // end terminates it: its slice began when the span was created).
    let first_track = begins[0].2;
    let first_begin = events.iter().position(|e| e.0 == 1 && e.2 == first_track);
    let first_end = events.iter().position(|e| e.0 == 2 && e.2 == first_track);
    let follower_track = begins
        .iter()
        .find(|b| b.1.as_deref() == Some("follower"))
        .unwrap()
        .2;
    let follower_end = events
        .iter()
        .position(|e| e.0 == 2 && e.2 == follower_track)
        .unwrap();
    let out: Vec<usize> = (0..events.len())
        .filter(|&i| !events[i].3.is_empty())
        .collect();
    assert_eq!(out.len(), 1, "one event starts a flow: {events:?}");
    let out = out[0];
    assert_eq!(events[out].0, 3, "an instant");
    assert_eq!(events[out].2, first_track, "on the cause's track");
    assert!(
        first_begin < Some(out) && Some(out) < first_end,
        "inside the cause's slice: {events:?}"
    );
    assert_eq!(events[out].3.len(), 1);
    assert_eq!(
        events[follower_end].5, events[out].3,
        "the follower's end terminates it: {events:?}"
    );
    assert!(out < follower_end, "the flow runs from cause to follower");
    assert_eq!(events[follower_end].6, 1, "the field recorded later");
    assert!(
        ends.iter().filter(|e| e.6 > 0).count() == 1,
        "no other end is annotated"
    );
}
