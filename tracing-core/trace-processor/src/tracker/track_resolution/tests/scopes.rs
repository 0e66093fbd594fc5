//! Uuids scoped per (file, machine), and the import logs of descriptors
//! that cannot be used, through whole loads: the same uuid in two files or
//! from two machines names two tracks; a conflicting later descriptor and
//! a chain of parents that does not resolve are logged as upstream logs
//! them (no time, no place, the uuid asked for).

use std::io::Write;

use zerotrace_protos::protos::track_event::Type::Counter;

use super::{Instant, arg, descriptor, event, load, named, packet, text, track_name, track_of};
use crate::Loader;
use crate::stat_vocabulary::stat_index;
use crate::storage::Storage;
use crate::storage::args::ArgValue;

/// Frames packets as a trace.
fn trace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        out.push(0x0a);
        let mut n = p.len() as u64;
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(p);
    }
    out
}

/// The packet `p` made to come from machine `machine`.
fn on_machine(machine: u32, p: &[u8]) -> Vec<u8> {
    let mut out = p.to_vec();
    // machine_id (field 98, varint): tag 0x90 0x06.
    out.extend_from_slice(&[0x90, 0x06]);
    out.push(u8::try_from(machine).expect("small id"));
    out
}

/// (track uuid arg, byte offset, ts) of each import log of `stat`.
fn logs(s: &Storage, stat: &str) -> Vec<(Option<u64>, Option<i64>, Option<i64>)> {
    let key = i64::try_from(stat_index(stat).expect("stat")).expect("index");
    s.import_logs
        .iter()
        .filter(|r| r.stat_key == key)
        .map(|r| {
            let uuid = r.arg_set_id.and_then(|set| {
                s.args
                    .set(set)
                    .find(|a| text(s, a.key) == Some("track_uuid"))
                    .and_then(|a| match a.value {
                        ArgValue::Uint(v) => Some(v),
                        _ => None,
                    })
            });
            (uuid, r.byte_offset, r.ts)
        })
        .collect()
}

#[test]
fn the_same_uuid_in_two_files_names_two_tracks() {
    let file = |name: &str, slice: &str| trace(&[named(5, name), event(10, 5, Instant, slice)]);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (path, bytes) in [("a.pb", file("first", "a")), ("b.pb", file("second", "b"))] {
        w.start_file(path, options).expect("zip");
        w.write_all(&bytes).expect("zip");
    }
    let archive = w.finish().expect("zip").into_inner();
    let mut loader = Loader::new();
    loader.push(&archive).expect("push");
    let s = loader.finish().expect("finish");
    let (a, b) = (track_of(&s, "a"), track_of(&s, "b"));
    assert_ne!(a, b);
    assert_eq!(track_name(&s, a), Some("first"));
    assert_eq!(track_name(&s, b), Some("second"));
    assert!(logs(&s, "track_descriptor_conflicting_reservation").is_empty());
}

#[test]
fn the_same_uuid_from_two_machines_names_two_tracks() {
    let s = load(&[
        named(5, "host"),
        event(10, 5, Instant, "on host"),
        on_machine(7, &named(5, "remote")),
        on_machine(7, &event(11, 5, Instant, "on remote")),
    ]);
    let (host, remote) = (track_of(&s, "on host"), track_of(&s, "on remote"));
    assert_ne!(host, remote);
    assert_eq!(track_name(&s, host), Some("host"));
    assert_eq!(track_name(&s, remote), Some("remote"));
    assert_ne!(
        s.tracks[host as usize].machine_id,
        s.tracks[remote as usize].machine_id
    );
}

#[test]
fn a_conflicting_descriptor_is_logged_with_its_uuid() {
    let s = load(&[
        named(1, "p1"),
        named(2, "p2"),
        descriptor(3, |td| {
            td.set_parent_uuid(1);
        }),
        descriptor(3, |td| {
            td.set_parent_uuid(2);
        }),
        // The same track again: no conflict.
        descriptor(3, |td| {
            td.set_parent_uuid(1);
        }),
    ]);
    assert_eq!(
        logs(&s, "track_descriptor_conflicting_reservation"),
        [(Some(3), None, None)]
    );
    assert_eq!(s.stats.get("track_descriptor_conflicting_reservation"), 1);
}

#[test]
fn a_default_track_descriptor_with_a_parent_is_refused() {
    let s = load(&[
        named(5, "elsewhere"),
        descriptor(0, |td| {
            td.set_parent_uuid(5);
            td.set_name("renamed");
        }),
        packet(|p| {
            p.set_timestamp(10);
            let mut e = p.begin_track_event();
            e.set_name("a");
            e.set_type(Instant);
        }),
    ]);
    let key =
        i64::try_from(stat_index("track_descriptor_default_track_with_parent").expect("stat"))
            .expect("index");
    let logged: Vec<_> = s.import_logs.iter().filter(|r| r.stat_key == key).collect();
    assert_eq!(logged.len(), 1);
    let set = logged[0].arg_set_id.expect("args");
    let parent = s
        .args
        .set(set)
        .find(|a| text(&s, a.key) == Some("parent_uuid"));
    assert_eq!(parent.map(|a| a.value), Some(ArgValue::Uint(5)));
    let a = track_of(&s, "a");
    assert_eq!(track_name(&s, a), Some("Default Track"));
    assert_eq!(s.tracks[a as usize].parent_id, None);
}

#[test]
fn a_missing_parent_is_logged_at_each_attempt() {
    let s = load(&[
        descriptor(2, |td| {
            td.set_parent_uuid(99);
            td.set_name("orphan");
        }),
        event(10, 2, Instant, "a"),
        event(11, 2, Instant, "b"),
        named(4, "fine"),
        event(12, 4, Instant, "c"),
    ]);
    // The descriptor's parsing and both events tried to resolve uuid 2.
    assert_eq!(
        logs(&s, "track_hierarchy_missing_uuid"),
        [(Some(2), None, None); 3]
    );
    assert_eq!(s.stats.get("track_hierarchy_missing_uuid"), 3);
    assert_eq!(s.stats.get("track_event_parser_errors"), 3);
    assert!(s.slices.iter().all(|r| text(&s, r.name) == Some("c")));
}

#[test]
fn a_parent_loop_and_a_self_parent_are_logged() {
    let s = load(&[
        descriptor(1, |td| {
            td.set_parent_uuid(2);
        }),
        descriptor(2, |td| {
            td.set_parent_uuid(1);
        }),
        descriptor(3, |td| {
            td.set_parent_uuid(3);
        }),
    ]);
    let uuids: Vec<_> = logs(&s, "track_event_track_hierarchy_loop")
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(uuids, [Some(1), Some(2), Some(3)]);
}

#[test]
fn a_chain_past_the_bound_is_too_deep() {
    // Uuids 1..=120, each the parent of the next.
    let mut packets = vec![named(1, "root")];
    for uuid in 2..=120u64 {
        packets.push(descriptor(uuid, |td| {
            td.set_parent_uuid(uuid - 1);
        }));
    }
    packets.push(event(10, 120, Instant, "deep"));
    packets.push(event(11, 50, Instant, "shallow"));
    let s = load(&packets);
    assert!(s.slices.iter().all(|r| text(&s, r.name) == Some("shallow")));
    let deep = logs(&s, "track_event_track_hierarchy_too_deep");
    assert!(deep.contains(&(Some(120), None, None)), "{deep:?}");
    assert!(!deep.iter().any(|l| l.0 == Some(50)));
    let shallow = track_of(&s, "shallow");
    assert!(arg(&s, s.tracks[shallow as usize].source_arg_set_id, "trace_id").is_some());
}

/// A counter value is kept only for a uuid a counter descriptor of its file
/// and machine reserved before it: else it is dropped before the sort and
/// logged with the uuid, as upstream's tokenizer drops it; an event's extra
/// counters are held to upstream's bound of 8.
#[test]
fn counter_values_need_a_counter_descriptor_read_before_them() {
    let counter = |uuid: u64| {
        descriptor(uuid, |td| {
            td.begin_counter().set_is_incremental(false);
        })
    };
    let value = |ts: u64, uuid: u64| {
        packet(|p| {
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_type(Counter);
            e.set_track_uuid(uuid);
            e.set_counter_value(1);
        })
    };
    let extras = |ts: u64, uuids: &[u64]| {
        let uuids = uuids.to_vec();
        packet(move |p| {
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_type(Instant);
            e.set_track_uuid(1);
            e.set_name("with extras");
            for &u in &uuids {
                e.add_extra_counter_track_uuids(u);
                e.add_extra_counter_values(2);
            }
        })
    };
    let s = load(&[
        named(1, "slices"),
        counter(2),
        value(10, 2),
        // Not a counter; not described; described only on another machine;
        // described after the value.
        value(11, 1),
        value(12, 3),
        on_machine(7, &counter(4)),
        value(13, 4),
        value(14, 5),
        counter(5),
        extras(15, &[2, 1]),
        extras(16, &[2; 9]),
        extras(17, &[2; 8]),
    ]);
    let invalid: Vec<_> = logs(&s, "track_event_counter_invalid_track_uuid")
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(invalid, [Some(1), Some(3), Some(4), Some(5)]);
    let invalid_extra: Vec<_> = logs(&s, "track_event_extra_counter_invalid_track")
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(invalid_extra, [Some(1)]);
    assert_eq!(s.stats.get("track_event_extra_counter_exceeds_max"), 1);
    // The first value, and the 8 extra values of the last event.
    assert_eq!(s.counters.len(), 9);
    let slices: Vec<_> = s.slices.iter().map(|r| text(&s, r.name)).collect();
    assert_eq!(slices, [Some("with extras")]);
}
