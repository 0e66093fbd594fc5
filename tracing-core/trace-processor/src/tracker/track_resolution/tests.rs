//! Sibling descriptor tracks merged as upstream merges them, through a
//! whole load: by name by default, by merge key, never with `NONE`;
//! overlapping slices spread over a pool's tracks; thread, process and
//! global scopes; the legacy phases that find no merged track.

use zerotrace_protos::protos::track_descriptor::SiblingMergeBehavior;
use zerotrace_protos::protos::{TracePacket, TrackDescriptor, TrackEvent, track_event};

use crate::Loader;
use crate::storage::Storage;

mod scopes;
use crate::storage::args::ArgValue;

fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_trusted_packet_sequence_id(1);
        f(&mut p);
    }
    w.finish().expect("heap writer")
}

fn load(packets: &[Vec<u8>]) -> Storage {
    let mut trace = Vec::new();
    for p in packets {
        trace.push(0x0a);
        let mut n = p.len() as u64;
        while n >= 0x80 {
            trace.push((n as u8) | 0x80);
            n >>= 7;
        }
        trace.push(n as u8);
        trace.extend_from_slice(p);
    }
    let mut loader = Loader::new();
    loader.push(&trace).expect("push");
    loader.finish().expect("finish")
}

fn descriptor(uuid: u64, f: impl FnOnce(&mut TrackDescriptor<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        f(&mut td);
    })
}

fn named(uuid: u64, name: &str) -> Vec<u8> {
    descriptor(uuid, |td| {
        td.set_name(name);
    })
}

fn child(uuid: u64, parent: u64, name: &str) -> Vec<u8> {
    descriptor(uuid, |td| {
        td.set_parent_uuid(parent);
        if !name.is_empty() {
            td.set_name(name);
        }
    })
}

fn event(ts: u64, uuid: u64, ty: track_event::Type, name: &str) -> Vec<u8> {
    event_with(ts, uuid, name, |e| {
        e.set_type(ty);
    })
}

fn event_with(ts: u64, uuid: u64, name: &str, f: impl FnOnce(&mut TrackEvent<'_>)) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_track_uuid(uuid);
        if !name.is_empty() {
            e.set_name(name);
        }
        f(&mut e);
    })
}

use track_event::Type::{Instant, SliceBegin, SliceEnd};

fn text(s: &Storage, id: crate::column_store::strings::StrId) -> Option<&str> {
    s.strings.get(id)
}

/// The track a slice of this name is on.
fn track_of(s: &Storage, slice: &str) -> u32 {
    let row = s.slices.iter().find(|r| text(s, r.name) == Some(slice));
    row.expect("slice").track_id
}

fn track_type(s: &Storage, id: u32) -> &str {
    text(s, s.tracks[id as usize].classification).unwrap_or("")
}

fn track_name(s: &Storage, id: u32) -> Option<&str> {
    text(s, s.tracks[id as usize].name)
}

/// An arg of an arg set, as an integer or a string.
fn arg(s: &Storage, set: Option<u32>, key: &str) -> Option<String> {
    s.args
        .set(set?)
        .find(|a| text(s, a.key) == Some(key))
        .map(|a| match a.value {
            ArgValue::Int(v) => v.to_string(),
            ArgValue::String(v) => text(s, v).unwrap_or("").to_owned(),
            other => format!("{other:?}"),
        })
}

fn dimension(s: &Storage, id: u32, key: &str) -> Option<String> {
    arg(s, s.tracks[id as usize].dimension_arg_set_id, key)
}

#[test]
fn siblings_of_one_name_merge_and_others_do_not() {
    let s = load(&[
        named(1, "parent"),
        child(2, 1, "same"),
        child(3, 1, "same"),
        child(4, 1, "other"),
        event(10, 2, Instant, "a"),
        event(20, 3, Instant, "b"),
        event(30, 4, Instant, "c"),
    ]);
    let (a, b, c) = (track_of(&s, "a"), track_of(&s, "b"), track_of(&s, "c"));
    assert_eq!(a, b, "two uuids named alike, never overlapping: one track");
    assert_ne!(a, c);
    assert_eq!(track_type(&s, a), "global_merged_track_event");
    assert_eq!(track_name(&s, a), Some("same"));
    let parent = s.tracks[a as usize].parent_id.expect("a parent");
    assert_eq!(track_name(&s, parent), Some("parent"));
    // The parent, a global root, is merged by its name too.
    assert_eq!(track_type(&s, parent), "global_merged_track_event");
    assert_eq!(dimension(&s, a, "parent_track_uuid").as_deref(), Some("1"));
    assert_eq!(dimension(&s, a, "merge_key_type").as_deref(), Some("0"));
    assert_eq!(dimension(&s, a, "merge_key_value").as_deref(), Some("same"));
    assert_eq!(
        dimension(&s, a, "track_compressor_idx").as_deref(),
        Some("0")
    );
    // The merged track's args are those of the uuid that made it.
    let src = s.tracks[a as usize].source_arg_set_id;
    assert_eq!(arg(&s, src, "trace_id").as_deref(), Some("2"));
    assert_eq!(
        s.tracks
            .iter()
            .filter(|t| text(&s, t.name) == Some("same"))
            .count(),
        1
    );
}

#[test]
fn overlapping_slices_of_merged_siblings_spread_over_the_pool() {
    let s = load(&[
        named(1, "parent"),
        child(2, 1, "same"),
        child(3, 1, "same"),
        event(10, 2, SliceBegin, "a"),
        event(20, 3, SliceBegin, "b"),
        event(30, 2, SliceEnd, ""),
        event(40, 3, SliceEnd, ""),
        // Both tracks free again: 3 goes back to the one it held.
        event(50, 3, Instant, "c"),
        event(60, 2, Instant, "d"),
    ]);
    let (a, b) = (track_of(&s, "a"), track_of(&s, "b"));
    assert_ne!(a, b, "overlapping: two tracks of one pool");
    assert_eq!(
        dimension(&s, b, "track_compressor_idx").as_deref(),
        Some("1")
    );
    assert_eq!(dimension(&s, b, "merge_key_value").as_deref(), Some("same"));
    assert_eq!(track_of(&s, "c"), b);
    assert_eq!(track_of(&s, "d"), a);
    // Each slice ended on its own track, at depth 0.
    let durs: Vec<(i64, u32)> = s.slices.iter().take(2).map(|r| (r.dur, r.depth)).collect();
    assert_eq!(durs, [(20, 0), (20, 0)]);
}

/// Each pool of merged tracks is one track group, numbered in the order
/// the pools were made, as upstream's compressor numbers its sets.
#[test]
fn each_pool_of_merged_tracks_is_one_group() {
    let s = load(&[
        named(1, "parent"),
        child(2, 1, "same"),
        child(3, 1, "same"),
        child(4, 1, "other"),
        event(10, 2, SliceBegin, "a"),
        event(20, 3, SliceBegin, "b"),
        event(25, 4, Instant, "c"),
        event(30, 2, SliceEnd, ""),
        event(40, 3, SliceEnd, ""),
    ]);
    let group = |t: u32| s.tracks[t as usize].track_group_id;
    let (a, b, c) = (track_of(&s, "a"), track_of(&s, "b"), track_of(&s, "c"));
    assert_ne!(a, b);
    let parent = s.tracks[a as usize].parent_id.expect("parent");
    assert_eq!(group(parent), Some(0));
    assert_eq!((group(a), group(b)), (Some(1), Some(1)));
    assert_eq!(group(c), Some(2));
}

#[test]
fn a_merge_key_merges_other_names_and_none_never_merges() {
    let keyed = |uuid: u64, name: &str, key: &str| {
        let (name, key) = (name.to_owned(), key.to_owned());
        descriptor(uuid, move |td| {
            td.set_name(&name);
            td.set_sibling_merge_behavior(SiblingMergeBehavior::BySiblingMergeKey);
            td.set_sibling_merge_key(&key);
        })
    };
    let apart = |uuid: u64| {
        descriptor(uuid, |td| {
            td.set_name("apart");
            td.set_sibling_merge_behavior(SiblingMergeBehavior::None);
        })
    };
    let s = load(&[
        keyed(1, "first", "k"),
        keyed(2, "second", "k"),
        keyed(3, "first", "j"),
        apart(4),
        apart(5),
        event(10, 1, Instant, "a"),
        event(20, 2, Instant, "b"),
        event(30, 3, Instant, "c"),
        event(40, 4, Instant, "d"),
        event(50, 5, Instant, "e"),
    ]);
    let (a, b, c) = (track_of(&s, "a"), track_of(&s, "b"), track_of(&s, "c"));
    assert_eq!(a, b, "one key: one track, whatever the names");
    assert_ne!(a, c, "another key: another pool");
    assert_eq!(
        track_name(&s, a),
        Some("first"),
        "the name of the uuid that made it"
    );
    assert_eq!(dimension(&s, a, "merge_key_type").as_deref(), Some("2"));
    assert_eq!(dimension(&s, a, "merge_key_value").as_deref(), Some("k"));
    let (d, e) = (track_of(&s, "d"), track_of(&s, "e"));
    assert_ne!(d, e, "NONE: a track per uuid");
    assert_eq!(track_type(&s, d), "global_track_event");
}

#[test]
fn unnamed_siblings_merge_by_their_first_event_name() {
    let s = load(&[
        named(1, "parent"),
        child(2, 1, ""),
        child(3, 1, ""),
        child(4, 1, ""),
        event(10, 2, Instant, "x"),
        event(20, 3, Instant, "x"),
        event(30, 4, Instant, "y"),
    ]);
    let x = track_of(&s, "x");
    assert_eq!(s.slices.iter().filter(|r| r.track_id == x).count(), 2);
    assert_eq!(track_name(&s, x), Some("x"));
    assert_ne!(track_of(&s, "y"), x);
}

#[test]
fn thread_and_process_children_merge_in_their_scope_as_roots() {
    let s = load(&[
        descriptor(1, |td| {
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
        }),
        descriptor(2, |td| {
            td.begin_process().set_pid(5);
        }),
        child(10, 1, "in thread"),
        child(11, 1, "in thread"),
        child(12, 10, "below"),
        child(20, 2, "in process"),
        child(21, 2, "in process"),
        event(10, 10, SliceBegin, "t1"),
        event(20, 11, SliceBegin, "t2"),
        event(30, 11, SliceEnd, ""),
        event(40, 10, SliceEnd, ""),
        event(50, 12, Instant, "t3"),
        event(60, 20, Instant, "p1"),
        event(70, 21, Instant, "p2"),
    ]);
    let (t1, t2) = (track_of(&s, "t1"), track_of(&s, "t2"));
    assert_ne!(t1, t2, "overlapping thread slices spread");
    assert_eq!(track_type(&s, t1), "thread_merged_track_event");
    let utid = s.tracks[t1 as usize].utid.expect("a thread");
    assert_eq!(s.tracks[t2 as usize].utid, Some(utid));
    assert_eq!(s.threads[utid as usize].tid, 6);
    // A child of a thread's own track is a root of that thread: no parent
    // track; a child of a child names its parent.
    assert_eq!(s.tracks[t1 as usize].parent_id, None);
    let t3 = track_of(&s, "t3");
    assert_eq!(s.tracks[t3 as usize].parent_id, Some(t1));
    let (p1, p2) = (track_of(&s, "p1"), track_of(&s, "p2"));
    assert_eq!(p1, p2);
    assert_eq!(track_type(&s, p1), "process_merged_track_event");
    assert!(s.tracks[p1 as usize].upid.is_some());
    assert_eq!(s.tracks[p1 as usize].parent_id, None);
    // Thread-scoped: begin/end on the thread (phase B/E), not async.
    assert_eq!(
        s.slices.iter().find(|r| r.track_id == t1).map(|r| r.dur),
        Some(30)
    );
}

#[test]
fn complete_events_and_counters_find_no_merged_track() {
    let s = load(&[
        descriptor(1, |td| {
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
        }),
        child(2, 1, "merged"),
        event_with(10, 2, "complete", |e| {
            let mut l = e.begin_legacy_event();
            l.set_phase(i32::from(b'X'));
            l.set_duration_us(1);
        }),
        event_with(20, 2, "", |e| {
            e.set_type(track_event::Type::Counter);
            e.set_counter_value(1);
        }),
        event(30, 2, Instant, "instant"),
    ]);
    assert!(
        s.slices
            .iter()
            .all(|r| text(&s, r.name) != Some("complete"))
    );
    assert!(s.counters.is_empty());
    // The counter was dropped before the sort: its track is no counter.
    assert_eq!(s.stats.get("track_event_counter_invalid_track_uuid"), 1);
    assert_eq!(s.stats.get("track_event_parser_errors"), 1);
    assert_eq!(
        track_type(&s, track_of(&s, "instant")),
        "thread_merged_track_event"
    );
}

#[test]
fn a_descriptor_without_events_makes_no_merged_track() {
    let s = load(&[
        named(1, "quiet"),
        descriptor(2, |td| {
            td.set_name("quiet child");
            td.set_parent_uuid(1);
        }),
    ]);
    assert!(
        s.tracks
            .iter()
            .all(|t| text(&s, t.classification) != Some("global_merged_track_event")),
        "tracks are made by the slices that need them"
    );
}

/// Names as upstream's reservations keep them: the first name a uuid's
/// descriptors give wins for a track that merges, the last for one that
/// never does (even after its first event), a descriptor read later
/// names an unnamed track before any event's name, and an event names a
/// track no descriptor names.
#[test]
fn descriptor_names_follow_upstreams_reservations() {
    let none = |uuid: u64, name: &str| {
        let name = name.to_owned();
        descriptor(uuid, move |td| {
            if !name.is_empty() {
                td.set_name(&name);
            }
            td.set_sibling_merge_behavior(SiblingMergeBehavior::None);
        })
    };
    let s = load(&[
        none(1, "First"),
        event(10, 1, Instant, "e1"),
        none(1, "Second"),
        none(1, ""),
        named(2, "Before"),
        event(20, 2, Instant, "e2"),
        named(2, "After"),
        descriptor(3, |_| {}),
        event(30, 3, Instant, "e3"),
        named(3, "Later"),
        none(4, ""),
        event(40, 4, Instant, "e4"),
    ]);
    let name = |slice: &str| track_name(&s, track_of(&s, slice)).map(str::to_owned);
    assert_eq!(name("e1").as_deref(), Some("Second"));
    assert_eq!(name("e2").as_deref(), Some("Before"));
    assert_eq!(name("e3").as_deref(), Some("Later"));
    assert_eq!(name("e4").as_deref(), Some("e4"));
}

/// A later descriptor of a uuid for another track (here another parent)
/// is refused: the first one's parent and args stay.
#[test]
fn a_conflicting_later_descriptor_is_refused() {
    let s = load(&[
        named(1, "p1"),
        named(2, "p2"),
        descriptor(3, |td| {
            td.set_name("child");
            td.set_parent_uuid(1);
            td.set_sibling_order_rank(4);
        }),
        descriptor(3, |td| {
            td.set_name("child");
            td.set_parent_uuid(2);
        }),
        event(10, 3, Instant, "a"),
    ]);
    let a = track_of(&s, "a");
    let parent = s.tracks[a as usize].parent_id.expect("parent");
    assert_eq!(track_name(&s, parent), Some("p1"));
    let src = s.tracks[a as usize].source_arg_set_id;
    assert_eq!(arg(&s, src, "sibling_order_rank").as_deref(), Some("4"));
}

/// The Default Track is interned without its event's sequence: it never
/// says `has_first_packet_on_sequence`; a descriptor track does when its
/// event's sequence began with a packet marked first on it.
#[test]
fn only_descriptor_tracks_say_their_sequence_had_a_first_packet() {
    let s = load(&[
        packet(|p| {
            p.set_first_packet_on_sequence(true);
            p.set_timestamp(1);
        }),
        named(1, "track"),
        event(10, 1, Instant, "on track"),
        packet(|p| {
            p.set_timestamp(20);
            let mut e = p.begin_track_event();
            e.set_name("on default");
            e.set_type(Instant);
        }),
    ]);
    let first = |slice: &str| {
        let t = track_of(&s, slice);
        arg(
            &s,
            s.tracks[t as usize].source_arg_set_id,
            "has_first_packet_on_sequence",
        )
    };
    assert_eq!(
        track_name(&s, track_of(&s, "on default")),
        Some("Default Track")
    );
    assert_eq!(first("on default"), None);
    assert!(first("on track").is_some());
}

fn legacy_async(ts: u64, phase: u8, id: u64, name: &str) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.set_name(name);
        e.add_categories("cat");
        let mut l = e.begin_legacy_event();
        l.set_phase(i32::from(phase));
        l.set_global_id(id);
    })
}

/// Legacy async ids of one scope and name share a pool as upstream's
/// compressor shares it: ids that never overlap one track, overlapping
/// ones spread; the name dimension is the id's first event's name, and the
/// args are upstream's (no `trace_id`).
#[test]
fn legacy_async_ids_share_their_scope_and_names_pool() {
    let s = load(&[
        legacy_async(10, b'b', 1, "a"),
        legacy_async(20, b'e', 1, "a"),
        legacy_async(30, b'b', 2, "a"),
        legacy_async(35, b'b', 3, "a"),
        legacy_async(40, b'e', 2, "a"),
        legacy_async(45, b'e', 3, "a"),
        legacy_async(50, b'n', 3, "step"),
    ]);
    let tracks: Vec<u32> = s.slices.iter().map(|r| r.track_id).collect();
    assert_eq!(tracks.len(), 4);
    assert_eq!(tracks[0], tracks[1], "id 2 takes the track id 1 freed");
    assert_ne!(tracks[1], tracks[2], "id 3 overlaps id 2");
    assert_eq!(tracks[3], tracks[2], "id 3's instant stays on its track");
    let t = tracks[2];
    assert_eq!(track_type(&s, t), "legacy_async_global_slice");
    assert_eq!(dimension(&s, t, "name").as_deref(), Some("a"));
    assert_eq!(dimension(&s, t, "scope").as_deref(), Some("cat"));
    assert_eq!(
        dimension(&s, t, "track_compressor_idx").as_deref(),
        Some("1")
    );
    let src = s.tracks[t as usize].source_arg_set_id;
    assert_eq!(arg(&s, src, "source").as_deref(), Some("chrome"));
    assert_eq!(arg(&s, src, "trace_id"), None);
}

/// A thread's or a process's own track is made by the first event on it
/// or by its first child's, as upstream interns it: a descriptor alone
/// names its thread but makes no track.
#[test]
fn own_tracks_of_threads_and_processes_are_made_when_used() {
    let s = load(&[
        descriptor(1, |td| {
            let mut th = td.begin_thread();
            th.set_pid(5);
            th.set_tid(6);
            th.set_thread_name("quiet thread");
        }),
        descriptor(2, |td| {
            td.set_name("parent process");
            td.begin_process().set_pid(7);
        }),
        child(3, 2, "child"),
        event(10, 3, Instant, "a"),
    ]);
    let named = |name: &str| s.threads.iter().any(|t| text(&s, t.name) == Some(name));
    assert!(named("quiet thread"));
    assert!(
        s.tracks
            .iter()
            .all(|t| text(&s, t.classification) != Some("thread"))
    );
    let process_tracks: Vec<Option<&str>> = s
        .tracks
        .iter()
        .filter(|t| text(&s, t.classification) == Some("process_track_event"))
        .map(|t| text(&s, t.name))
        .collect();
    assert_eq!(process_tracks, [Some("parent process")]);
    let a = track_of(&s, "a");
    assert_eq!(s.tracks[a as usize].parent_id, None);
}
