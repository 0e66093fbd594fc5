//! `--crop-track-events` (`LoadOptions::crop_track_events`): the
//! TrackEvents before the trace's range of interest are dropped and
//! counted, whatever the range packet's place in the file (it is read as
//! the packet is tokenized); without the flag every event stays.

use protozero::Message;
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::{LoadOptions, Loader, TraceProcessor, Value};

use crate::common;
use common::{packet, rows, s, trace};

/// `TracePacket.track_event_range_of_interest`.
const RANGE_OF_INTEREST: u32 = 90;

/// An instant named `name` at `ts` on track 1.
fn instant(ts: u64, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_track_uuid(1);
        e.set_name(name);
        e.set_type(track_event::Type::Instant);
    })
}

/// Instants at 10, 11, 12 and 13 µs, with the range of interest starting
/// at 12 µs written last in the file (stamped at 20 µs).
fn cropped_trace() -> Vec<u8> {
    trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            p.set_incremental_state_cleared(true);
            p.begin_track_descriptor().set_uuid(1);
        }),
        instant(10_000, "a"),
        instant(11_000, "b"),
        instant(12_000, "c"),
        instant(13_000, "d"),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(20_000);
            let m: &mut Message<'_> = p.message();
            m.begin_nested(RANGE_OF_INTEREST).append_int64(1, 12);
        }),
    ])
}

fn load(bytes: &[u8], crop: bool) -> TraceProcessor {
    let mut loader = Loader::new();
    loader.apply_load_flags(&LoadOptions {
        crop_track_events: crop,
        ..LoadOptions::default()
    });
    loader.push(bytes).expect("push");
    TraceProcessor::from_storage(loader.finish().expect("finish")).expect("tables")
}

fn names(tp: &TraceProcessor) -> Vec<Vec<Value>> {
    rows(tp, "SELECT name FROM slice ORDER BY ts")
}

fn dropped(tp: &TraceProcessor) -> Vec<Vec<Value>> {
    rows(
        tp,
        "SELECT value FROM stats \
         WHERE name = 'track_event_dropped_packets_outside_of_range_of_interest'",
    )
}

#[test]
fn events_before_the_range_are_dropped_and_counted() {
    let tp = load(&cropped_trace(), true);
    assert_eq!(names(&tp), vec![vec![s("c")], vec![s("d")]]);
    assert_eq!(dropped(&tp), vec![vec![Value::Int(2)]]);
    assert_eq!(
        rows(
            &tp,
            "SELECT int_value FROM metadata WHERE name = 'range_of_interest_start_us'"
        ),
        vec![vec![Value::Int(12)]]
    );
}

#[test]
fn without_the_flag_every_event_stays() {
    let tp = load(&cropped_trace(), false);
    assert_eq!(names(&tp).len(), 4);
    assert_eq!(dropped(&tp), vec![vec![Value::Int(0)]]);
}
