//! A ring buffer keeps only the newest data, so the first packets of each
//! TrackEvent sequence (its track descriptors and the first definitions of
//! its interned names) are overwritten long before the session ends. With
//! `incremental_state_config.clear_period_ms` the service asks the writers
//! to clear their incremental state periodically, and each thread writes
//! its descriptors and interned data again: a trace cut from the ring then
//! resolves every event after the first clear it kept. Recorded through the
//! in-process backend (the embedded service's periodic task and the
//! TrackEvent writers of two threads), then read as a trace processor
//! would: per sequence, from a packet flagged "incremental state cleared"
//! on, until a packet says data was lost. (Its own test binary: a process
//! registers TrackEvent once.)
#![cfg(target_os = "linux")]

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession};
use zerotrace_core::{trace_event, trace_instant};
use zerotrace_protos::protos::TracePacketDecoder;

static CLEARED: Category = Category::new("cleared");
static CATEGORIES: [&Category; 1] = [&CLEARED];

/// Rounds of writing per thread; each writes a burst of events, then
/// sleeps a millisecond, so the ring (256 KiB) holds the last tens of
/// milliseconds while the whole run writes several times its size.
const ROUNDS: u64 = 300;
const BURST: u64 = 40;

/// Records the workload on two threads with incremental state cleared
/// every `clear_period_ms` (0: never); returns the trace.
fn record(clear_period_ms: u32) -> Vec<u8> {
    let cfg = InProcessConfig {
        buffer_kb: 256,
        enabled_categories: vec!["cleared".into()],
        incremental_state_clear_period_ms: clear_period_ms,
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&CATEGORIES, cfg).expect("in-process session");
    std::thread::scope(|s| {
        for t in 0..2u64 {
            std::thread::Builder::new()
                .name(format!("writer-{t}"))
                .spawn_scoped(s, move || {
                    for round in 0..ROUNDS {
                        for i in 0..BURST {
                            let _frame = trace_event!(CLEARED, "frame", "round" => round);
                            let _draw = trace_event!(CLEARED, "draw", "i" => i, "thread" => t);
                            trace_instant!(CLEARED, "vsync");
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
                .expect("a writer thread");
        }
    });
    let path = std::env::temp_dir().join(format!(
        "zt-periodic-clear-{}-{clear_period_ms}.pftrace",
        std::process::id()
    ));
    session.stop(&path).expect("the trace");
    let trace = std::fs::read(&path).expect("the trace file");
    let _ = std::fs::remove_file(&path);
    trace
}

/// What reading a trace per sequence found.
#[derive(Debug, Default)]
struct Readable {
    /// Track events in the trace.
    events: usize,
    /// Events after a clear the trace kept, every name and track resolved.
    resolved: usize,
    /// Sequences whose first packet in the trace is not a clear (the ring
    /// cut them).
    cut_sequences: usize,
}

/// Reads `trace` per sequence and checks that every event read after a
/// clear resolves its category, name, annotation names, source location
/// and track; panics naming the first that does not.
fn read(trace: &[u8]) -> Readable {
    #[derive(Default)]
    struct Sequence {
        /// Since a kept clear, without loss after it.
        valid: bool,
        started: bool,
        interned: HashMap<(u8, u64), String>,
        tracks: HashSet<u64>,
        default_track: Option<u64>,
    }
    let mut sequences: HashMap<u32, Sequence> = HashMap::new();
    let mut out = Readable::default();
    for field in protozero::Decoder::new(trace) {
        let raw = field.expect("a trace field").as_bytes().expect("a packet");
        let p = TracePacketDecoder::new(raw);
        let Some(seq) = p.trusted_packet_sequence_id().filter(|&s| s != 1) else {
            continue;
        };
        let s = sequences.entry(seq).or_default();
        let cleared = p.sequence_flags().unwrap_or(0) & 1 != 0;
        if !s.started {
            s.started = true;
            if !cleared {
                out.cut_sequences += 1;
            }
        }
        if p.previous_packet_dropped().is_some_and(|d| d != 0) {
            s.valid = false;
        }
        if cleared {
            *s = Sequence {
                valid: true,
                started: true,
                ..Sequence::default()
            };
        }
        if let Some(d) = p
            .trace_packet_defaults()
            .and_then(|d| d.track_event_defaults())
        {
            s.default_track = d.track_uuid();
        }
        if let Some(d) = p.track_descriptor() {
            s.tracks.extend(d.uuid());
        }
        if let Some(i) = p.interned_data() {
            for e in i.event_categories() {
                s.interned
                    .insert((1, e.iid().unwrap()), e.name().unwrap_or("").to_owned());
            }
            for e in i.event_names() {
                s.interned
                    .insert((2, e.iid().unwrap()), e.name().unwrap_or("").to_owned());
            }
            for e in i.debug_annotation_names() {
                s.interned
                    .insert((3, e.iid().unwrap()), e.name().unwrap_or("").to_owned());
            }
            for e in i.source_locations() {
                s.interned.insert(
                    (4, e.iid().unwrap()),
                    e.function_name().unwrap_or("").to_owned(),
                );
            }
        }
        let Some(e) = p.track_event() else {
            continue;
        };
        out.events += 1;
        if !s.valid {
            continue;
        }
        let resolve = |kind: u8, iid: u64| {
            assert!(
                s.interned.contains_key(&(kind, iid)),
                "sequence {seq}: interned id {iid} of kind {kind} is not defined since the last clear"
            );
        };
        for iid in e.category_iids() {
            resolve(1, iid);
        }
        if let Some(iid) = e.name_iid() {
            resolve(2, iid);
        }
        for a in e.debug_annotations() {
            if let Some(iid) = a.name_iid() {
                resolve(3, iid);
            }
        }
        if let Some(iid) = e.source_location_iid() {
            resolve(4, iid);
        }
        let track = e.track_uuid().or(s.default_track).expect("a track");
        assert!(
            s.tracks.contains(&track),
            "sequence {seq}: track {track} is not described since the last clear"
        );
        out.resolved += 1;
    }
    out
}

#[test]
fn a_ring_buffer_cut_still_resolves_every_name_after_periodic_clears() {
    let written = (2 * ROUNDS * BURST * 3) as usize;

    let cleared = read(&record(10));
    println!("{cleared:?} of {written} events written");
    assert!(
        cleared.events < written && cleared.cut_sequences > 0,
        "the ring overwrote the start: {cleared:?} of {written} events"
    );
    // Without periodic clears the only definitions were at the start, which
    // the ring overwrote, so nothing kept would resolve (one TrackEvent
    // registration per process: that run is not repeated here; with
    // `record(0)` this assertion fails with 0 resolved).
    assert!(
        cleared.resolved * 2 > cleared.events,
        "most of what the ring kept follows a clear and resolves: {cleared:?}"
    );
}
