//! Where TrackEvents land, as upstream places them: descriptors that reuse
//! a tid or pid under a new uuid make a new thread or process; an explicit
//! `track_uuid: 0` with a type goes on the "Default Track"; legacy events
//! fall back to pid/tid overrides and scoped instant tracks; v1 legacy
//! flows (`s`/`t`/`f`) bind to enclosing or next slices; legacy complete
//! (`X`) events that partly overlap or last a negative time are dropped.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_protos::protos::{TracePacket, TrackEvent, track_event};
use zerotrace_trace_processor::{TraceProcessor, Value};

fn thread_descriptor(seq: u32, uuid: u64, pid: i32, tid: i64, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(seq);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        let mut th = td.begin_thread();
        th.set_pid(pid);
        th.set_tid(tid);
        th.set_thread_name(name);
    })
}

fn event(ts: u64, f: impl FnOnce(&mut TrackEvent<'_>)) -> Vec<u8> {
    packet(|p: &mut TracePacket<'_>| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        f(&mut e);
    })
}

#[test]
fn a_reused_tid_under_a_new_uuid_is_a_new_thread() {
    let t = trace(&[
        thread_descriptor(1, 1, 5, 1, "first"),
        event(10, |e| {
            e.set_track_uuid(1);
            e.set_name("a");
            e.set_type(track_event::Type::Instant);
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(2);
            p.set_timestamp(100);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(3);
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(1);
            th.set_thread_name("second");
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT tid, name FROM thread WHERE tid = 1 ORDER BY utid"
        ),
        vec![
            vec![Value::Int(1), s("first")],
            vec![Value::Int(1), s("second")]
        ]
    );
    // The first thread's slice stays on the first thread.
    assert_eq!(
        rows(
            &tp,
            "SELECT thread.name FROM slice JOIN thread_track t ON slice.track_id = t.id \
             JOIN thread USING (utid)"
        ),
        vec![vec![s("first")]]
    );
}

#[test]
fn explicit_uuid_zero_with_a_type_goes_on_the_default_track() {
    let t = trace(&[
        thread_descriptor(1, 1, 5, 1, "t1"),
        event(10, |e| {
            e.set_track_uuid(0);
            e.set_name("typed");
            e.set_type(track_event::Type::Instant);
        }),
        event(20, |e| {
            // No type and no thread descriptor on the sequence: a legacy
            // instant has no thread to fall back to.
            e.set_track_uuid(0);
            e.set_name("legacy");
            e.begin_legacy_event().set_phase(i32::from(b'I'));
        }),
        event(30, |e| {
            e.set_track_uuid(0);
            e.set_name("override");
            e.set_type(track_event::Type::Instant);
            let mut l = e.begin_legacy_event();
            l.set_pid_override(5);
            l.set_tid_override(1);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.name, COALESCE(track.name, thread.name) FROM slice \
             JOIN track ON slice.track_id = track.id \
             LEFT JOIN thread_track tt ON tt.id = track.id LEFT JOIN thread USING (utid) \
             ORDER BY slice.ts"
        ),
        vec![
            vec![s("typed"), s("Default Track")],
            vec![s("override"), s("t1")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'track_event_parser_errors'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

/// Upstream's "Default Track" is a merged global track (merged by name
/// under no parent): one track for every event of every sequence without
/// a track or thread, whose dimensions name the merge key and pool index
/// and whose args are a root descriptor track's.
#[test]
fn the_default_track_is_one_merged_global_track() {
    let t = trace(&[
        event(10, |e| {
            e.set_name("a");
            e.set_type(track_event::Type::SliceBegin);
        }),
        event(20, |e| {
            e.set_name("b");
            e.set_type(track_event::Type::Instant);
        }),
        event(30, |e| {
            e.set_type(track_event::Type::SliceEnd);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT COUNT(DISTINCT track_id), COUNT(*) FROM slice"),
        vec![vec![Value::Int(1), Value::Int(2)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT track.name, type FROM track \
             WHERE id IN (SELECT track_id FROM slice)"
        ),
        vec![vec![s("Default Track"), s("global_merged_track_event")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT key, display_value FROM args WHERE arg_set_id = \
             (SELECT dimension_arg_set_id FROM track WHERE name = 'Default Track') \
             ORDER BY key"
        ),
        vec![
            vec![s("merge_key_type"), s("0")],
            vec![s("merge_key_value"), s("Default Track")],
            vec![s("parent_track_uuid"), s("0")],
            vec![s("track_compressor_idx"), s("0")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT key, display_value FROM args WHERE arg_set_id = \
             (SELECT source_arg_set_id FROM track WHERE name = 'Default Track') \
             ORDER BY key"
        ),
        vec![
            vec![s("is_root_in_scope"), s("true")],
            vec![s("source"), s("descriptor")],
            vec![s("trace_id"), s("0")],
        ]
    );
}

#[test]
fn process_scoped_legacy_instants_get_the_process_instant_track() {
    let t = trace(&[
        thread_descriptor(1, 1, 5, 7, "t"),
        event(10, |e| {
            e.set_track_uuid(1);
            e.set_name("p");
            let mut l = e.begin_legacy_event();
            l.set_phase(i32::from(b'I'));
            l.set_instant_event_scope(track_event::legacy_event::InstantEventScope::ScopeProcess);
        }),
        event(20, |e| {
            e.set_track_uuid(1);
            e.set_name("g");
            let mut l = e.begin_legacy_event();
            l.set_phase(i32::from(b'I'));
            l.set_instant_event_scope(track_event::legacy_event::InstantEventScope::ScopeGlobal);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.name, track.type, EXTRACT_ARG(track.source_arg_set_id, 'source') \
             FROM slice JOIN track ON slice.track_id = track.id ORDER BY slice.ts"
        ),
        vec![
            vec![s("p"), s("chrome_process_instant"), s("chrome")],
            vec![s("g"), s("legacy_chrome_global_instants"), s("chrome")],
        ]
    );
}

fn complete(ts: u64, uuid: u64, name: &str) -> Vec<u8> {
    complete_for(ts, uuid, name, 10)
}

fn complete_for(ts: u64, uuid: u64, name: &str, dur_us: i64) -> Vec<u8> {
    event(ts, |e| {
        e.set_track_uuid(uuid);
        e.set_name(name);
        e.add_categories("c");
        let mut l = e.begin_legacy_event();
        l.set_phase(i32::from(b'X'));
        l.set_duration_us(dur_us);
    })
}

/// Upstream's slice tracker rules for complete events: one nested in
/// another is kept under it, one that starts inside another and ends after
/// it is dropped (`slice_drop_overlapping_complete_event`, logged), one with
/// a negative duration is dropped (`slice_negative_duration`).
#[test]
fn overlapping_and_negative_complete_events_are_dropped_and_counted() {
    let t = trace(&[
        thread_descriptor(1, 1, 1, 1, "t1"),
        complete_for(10_000, 1, "outer", 10),
        complete_for(12_000, 1, "inner", 5),
        complete_for(18_000, 1, "overlapping", 10),
        complete_for(30_000, 1, "negative", -5),
        complete_for(40_000, 1, "after", 1),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT name, depth, dur FROM slice ORDER BY ts"),
        vec![
            vec![s("outer"), Value::Int(0), Value::Int(10_000)],
            vec![s("inner"), Value::Int(1), Value::Int(5_000)],
            vec![s("after"), Value::Int(0), Value::Int(1_000)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name IN \
             ('slice_drop_overlapping_complete_event', 'slice_negative_duration') \
             ORDER BY name"
        ),
        vec![
            vec![s("slice_drop_overlapping_complete_event"), Value::Int(1)],
            vec![s("slice_negative_duration"), Value::Int(1)],
        ]
    );
}

fn flow(ts: u64, uuid: u64, phase: u8, id: u64, enclosing: bool) -> Vec<u8> {
    event(ts, |e| {
        e.set_track_uuid(uuid);
        e.set_name("flow");
        e.add_categories("c");
        let mut l = e.begin_legacy_event();
        l.set_phase(i32::from(phase));
        l.set_unscoped_id(id);
        if enclosing {
            l.set_bind_to_enclosing(true);
        }
    })
}

#[test]
fn v1_flows_bind_to_enclosing_and_next_slices() {
    let t = trace(&[
        thread_descriptor(1, 1, 1, 1, "t1"),
        thread_descriptor(1, 2, 2, 2, "t2"),
        complete(10_000, 1, "begin"),
        flow(10_000, 1, b's', 7, false),
        // Not enclosed: binds to the next slice on t2.
        flow(29_999, 2, b'f', 7, false),
        complete(30_000, 2, "end1"),
        flow(30_001, 2, b's', 8, false),
        complete(50_000, 1, "step"),
        flow(50_100, 1, b't', 8, false),
        complete(55_000, 2, "end2"),
        flow(55_100, 2, b'f', 8, true),
        // A flow step with nothing open is counted, not bound.
        flow(90_000, 1, b't', 8, false),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT o.name, i.name, EXTRACT_ARG(f.arg_set_id, 'cat') FROM flow f \
             JOIN slice o ON f.slice_out = o.id JOIN slice i ON f.slice_in = i.id \
             ORDER BY f.id"
        ),
        vec![
            vec![s("begin"), s("end1"), s("c")],
            vec![s("end1"), s("step"), s("c")],
            vec![s("step"), s("end2"), s("c")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT value FROM stats WHERE name = 'flow_no_enclosing_slice'"
        ),
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn streaming_profile_deltas_move_the_sequence_clock_and_saturate() {
    use zerotrace_protos::protos::StreamingProfilePacket;
    let profile = |deltas: &[i64]| {
        let deltas = deltas.to_vec();
        packet(move |p| {
            p.set_trusted_packet_sequence_id(1);
            let mut sp = StreamingProfilePacket::from_message(p.message().begin_nested(54));
            for d in deltas {
                sp.add_timestamp_delta_us(d);
            }
        })
    };
    let legacy_instant = |name: &'static str, delta_us: i64| {
        packet(move |p| {
            p.set_trusted_packet_sequence_id(1);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_name(name);
            e.set_type(track_event::Type::Instant);
            e.set_timestamp_delta_us(delta_us);
        })
    };
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_sequence_flags(1);
            p.begin_track_descriptor().set_uuid(1).set_name("t");
        }),
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.begin_thread_descriptor().set_reference_timestamp_us(10);
        }),
        // Deltas of a profile advance the clock events read deltas from.
        profile(&[5, 5]),
        legacy_instant("after_profile", 1),
        // A delta that saturates leaves the clock negative: what follows
        // on the sequence is dropped and counted.
        profile(&[i64::MIN / 1000 - 1]),
        profile(&[0]),
        legacy_instant("dropped", 0),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(&tp, "SELECT name, ts FROM slice"),
        vec![vec![s("after_profile"), Value::Int(21_000)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name IN ('streaming_profile_invalid_timestamp', \
             'track_event_invalid_timestamp') ORDER BY name"
        ),
        vec![
            vec![s("streaming_profile_invalid_timestamp"), Value::Int(2)],
            vec![s("track_event_invalid_timestamp"), Value::Int(1)],
        ]
    );
}

#[test]
fn a_descriptors_child_ordering_and_sibling_rank_are_track_args() {
    let descriptor = |uuid: u64, f: &dyn Fn(&mut zerotrace_protos::protos::TrackDescriptor<'_>)| {
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            f(&mut td);
        })
    };
    use zerotrace_protos::protos::track_descriptor::ChildTracksOrdering;
    let t = trace(&[
        descriptor(1, &|td| {
            td.set_name("parent");
            td.set_child_ordering(ChildTracksOrdering::Explicit);
            td.set_sibling_order_rank(-10);
        }),
        descriptor(2, &|td| {
            td.set_name("child");
            td.set_parent_uuid(1);
            td.set_sibling_order_rank(5);
            td.set_description("about the child");
        }),
        event(10, |e| {
            e.set_track_uuid(2);
            e.set_name("a");
            e.set_type(track_event::Type::Instant);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT name, extract_arg(source_arg_set_id, 'child_ordering'), \
             extract_arg(source_arg_set_id, 'sibling_order_rank'), \
             extract_arg(source_arg_set_id, 'description') FROM track ORDER BY name"
        ),
        vec![
            vec![s("child"), Value::Null, Value::Int(5), s("about the child")],
            vec![s("parent"), s("explicit"), Value::Int(-10), Value::Null],
        ]
    );
}

#[test]
fn descriptor_tracks_have_upstreams_types_by_scope_and_kind() {
    let descriptor = |uuid: u64, f: &dyn Fn(&mut zerotrace_protos::protos::TrackDescriptor<'_>)| {
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(uuid);
            f(&mut td);
        })
    };
    let t = trace(&[
        descriptor(1, &|td| {
            td.set_name("global");
        }),
        descriptor(2, &|td| {
            td.begin_process().set_pid(7);
        }),
        descriptor(3, &|td| {
            td.set_name("in process");
            td.set_parent_uuid(2);
        }),
        thread_descriptor(1, 4, 7, 8, "t"),
        descriptor(5, &|td| {
            td.set_name("in thread");
            td.set_parent_uuid(4);
        }),
        descriptor(6, &|td| {
            td.set_name("counter in thread");
            td.set_parent_uuid(4);
            td.begin_counter();
        }),
        // Slice tracks merge with their siblings: their tracks are made by
        // the slices that need them.
        event(10, |e| {
            e.set_track_uuid(1);
            e.set_type(track_event::Type::Instant);
        }),
        event(20, |e| {
            e.set_track_uuid(3);
            e.set_type(track_event::Type::Instant);
        }),
        event(30, |e| {
            e.set_track_uuid(5);
            e.set_type(track_event::Type::Instant);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    let types = rows(&tp, "SELECT name, type FROM track ORDER BY id");
    for (name, ty) in [
        ("global", "global_merged_track_event"),
        ("in process", "process_merged_track_event"),
        ("in thread", "thread_merged_track_event"),
        ("counter in thread", "thread_counter_track_event"),
    ] {
        assert!(
            types.contains(&vec![s(name), s(ty)]),
            "{name}: {ty} not in {types:?}"
        );
    }
    // The process's own descriptor track.
    assert_eq!(
        rows(
            &tp,
            "SELECT count(*) FROM track WHERE type = 'process_track_event' AND name IS NULL"
        ),
        vec![vec![Value::Int(1)]]
    );
}

/// A descriptor whose parent is uuid 0 (the default track's uuid) is a
/// root, as upstream reads it: no parent track, and no track made for
/// uuid 0 beside it.
#[test]
fn a_parent_uuid_of_zero_is_no_parent() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            let mut td = p.begin_track_descriptor();
            td.set_uuid(7);
            td.set_parent_uuid(0);
            td.set_name("root-ish");
        }),
        event(10, |e| {
            e.set_track_uuid(7);
            e.set_name("a");
            e.set_type(track_event::Type::Instant);
        }),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT track.name, track.parent_id IS NULL FROM track \
             WHERE id IN (SELECT track_id FROM slice)"
        ),
        vec![vec![s("root-ish"), Value::Int(1)]]
    );
    assert_eq!(
        rows(&tp, "SELECT COUNT(*) FROM track WHERE name IS NULL"),
        vec![vec![Value::Int(0)]]
    );
}
