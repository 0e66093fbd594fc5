//! The heap dump reader, heap folded stacks and heap pprof over synthetic
//! heapprofd traces (`tests/heap_support`: zerotrace's own dump writer,
//! and dumps laid out by hand).

use crate::heap_support;
use crate::perf_support;
use crate::support::framed;

use std::io::Read as _;

use heap_support::{HeapSeq, header, hf};
use perf_support::Trace;
use zerotrace_protos::pprof::ProfileDecoder;

use zerotrace_trace_processor::profile_view::*;

fn packets_of(trace: &Trace) -> Vec<Vec<u8>> {
    protozero::Decoder::new(trace.bytes())
        .map(|f| f.unwrap().as_bytes().unwrap().to_vec())
        .collect()
}

fn profile_of(packets: &[Vec<u8>]) -> Profile {
    Profile::from_trace(&framed(packets)).unwrap()
}

/// Each sample of `d`: (names root first, allocated, freed, allocs, frees).
fn lines(p: &Profile, d: &HeapDump) -> Vec<(Vec<String>, u64, u64, u64, u64)> {
    d.samples
        .iter()
        .map(|s| {
            (
                p.names_of(&s.stack),
                s.allocated,
                s.freed,
                s.alloc_count,
                s.free_count,
            )
        })
        .collect()
}

fn v(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_dump_by_the_heap_profiler_writer_resolves_root_first() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(5);
    let (main, work, leak) = (hf("main", 1), hf("work", 2), hf("leak", 3));
    let mut h = header(42, "libc.malloc", 1000, 4096);
    h.buffer_overran = true;
    h.stats.unwinding_errors = 3;
    h.stats.heap_samples = 77;
    s.dump(
        &mut t,
        &h,
        &[
            (&[main.clone(), work.clone()], 8192, 4096, 2, 1),
            (&[main.clone(), leak.clone()], 40960, 0, 10, 0),
        ],
    );
    let p = profile_of(&packets_of(&t));
    assert!(p.samples().is_empty(), "no CPU samples");
    let [d] = p.heap_dumps() else {
        panic!("{:?}", p.heap_dumps())
    };
    assert_eq!(
        (d.pid, d.heap_name.as_str(), d.ts, d.sampling_interval_bytes),
        (42, "libc.malloc", 1000, 4096)
    );
    assert_eq!(d.sequence, 5);
    assert!(d.flags.buffer_overran && !d.flags.hit_guardrail);
    assert_eq!(d.flags.problems(), ["buffer_overran"]);
    let stats = d.stats.clone().unwrap();
    assert_eq!((stats.unwinding_errors, stats.heap_samples), (3, 77));
    assert_eq!(
        lines(&p, d),
        [
            (v(&["main", "work"]), 8192, 4096, 2, 1),
            (v(&["main", "leak"]), 40960, 0, 10, 0)
        ]
    );
    assert_eq!(d.totals(), (49152, 4096, 12, 1));
    assert_eq!(d.unreleased(), 45056);
    assert!(!d.unfinished);
    let c = p.heap_counts();
    assert_eq!(
        (c.dumps, c.samples, c.unresolved, c.malformed),
        (1, 2, 0, 0)
    );
    assert_eq!(c.missing_packets, 0);
    // Frames are the profile's, shared with the CPU side.
    let f = &p.frames()[d.samples[1].stack[1]];
    assert_eq!(f.name.as_deref(), Some("leak"));
    assert_eq!(p.mappings()[f.mapping.unwrap()].path, "/bin/app");
}

#[test]
fn definitions_after_the_samples_split_over_several_packets_resolve_at_the_close() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(9);
    let stacks: Vec<Vec<_>> = (0..5u64)
        .map(|i| vec![hf("main", 1), hf(&format!("f{i}"), 10 + i)])
        .collect();
    let ls: Vec<heap_support::Line<'_>> = stacks
        .iter()
        .enumerate()
        .map(|(i, st)| (&st[..], 100 * (i as u64 + 1), 0, 1, 0))
        .collect();
    s.split_dump(&mut t, &header(7, "rust", 50, 1), &ls, 2, 60, 0);
    let packets = packets_of(&t);
    // The clear, three packets of samples, definitions in packets of their
    // own after them, the closing packet.
    let kinds: Vec<(bool, bool)> = packets
        .iter()
        .map(|raw| {
            let p = zerotrace_protos::protos::TracePacketDecoder::new(raw);
            let samples = p
                .profile_packet()
                .is_some_and(|pp| pp.process_dumps().any(|d| d.has_samples()));
            (samples, p.has_interned_data())
        })
        .collect();
    assert_eq!(kinds[1..4], [(true, false), (true, false), (true, true)]);
    assert!(
        kinds.len() >= 7,
        "definitions in several packets: {kinds:?}"
    );
    assert!(
        kinds[4..kinds.len() - 1]
            .iter()
            .all(|k| *k == (false, true))
    );

    let p = profile_of(&packets);
    let [d] = p.heap_dumps() else {
        panic!("one dump: {:?}", p.heap_dumps())
    };
    assert!(!d.unfinished);
    let got: Vec<(Vec<String>, u64)> = lines(&p, d).into_iter().map(|l| (l.0, l.1)).collect();
    assert_eq!(
        got,
        [
            (v(&["main", "f0"]), 100),
            (v(&["main", "f1"]), 200),
            (v(&["main", "f2"]), 300),
            (v(&["main", "f3"]), 400),
            (v(&["main", "f4"]), 500)
        ]
    );
    // Each sample says which packet held it.
    let held: Vec<u64> = d.samples.iter().map(|s| s.packet).collect();
    assert_eq!(held, [1, 1, 2, 2, 3]);
    assert_eq!(p.heap_counts().unresolved, 0);

    // Cut before the closing packet: the dump is unfinished, resolved with
    // what was defined; cut before the definitions: nothing resolves, all
    // counted.
    let p = profile_of(&packets[..packets.len() - 1]);
    assert_eq!(p.heap_counts().unfinished, 1);
    assert!(p.heap_dumps()[0].unfinished);
    assert_eq!(p.heap_counts().unresolved, 0);
    let p = profile_of(&packets[..3]);
    assert_eq!(p.heap_counts().samples, 4);
    assert_eq!(p.heap_counts().unresolved, 4);
    assert_eq!(
        p.heap_counts().unresolved_by_kind.get("callstack"),
        Some(&4)
    );
}

#[test]
fn an_unresolvable_callstack_is_counted_and_the_sample_kept() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(3);
    s.dump(
        &mut t,
        &header(1, "libc.malloc", 10, 4096),
        &[(&[hf("main", 1)], 4096, 0, 1, 0)],
    );
    // A second dump naming a callstack the sequence never defined.
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(3).set_timestamp(20);
        let mut pp = p.begin_profile_packet();
        {
            let mut d = pp.add_process_dumps();
            d.set_pid(1).set_timestamp(20).set_heap_name("libc.malloc");
            d.add_samples()
                .set_callstack_id(1)
                .set_self_allocated(8192)
                .set_alloc_count(2);
            d.add_samples()
                .set_callstack_id(999)
                .set_self_allocated(100)
                .set_alloc_count(1);
        }
        pp.set_continued(true).set_index(2);
    });
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(3).set_timestamp(20);
        p.begin_profile_packet().set_index(3);
    });
    let p = profile_of(&packets_of(&t));
    assert_eq!(p.heap_dumps().len(), 2);
    let c = p.heap_counts();
    assert_eq!((c.dumps, c.samples, c.unresolved), (2, 3, 1));
    assert_eq!(c.unresolved_by_kind.get("callstack"), Some(&1));
    let last = p.last_heap_dumps(None);
    let [d] = &last[..] else { panic!("{last:?}") };
    assert_eq!(d.ts, 20, "the later dump");
    assert_eq!(d.samples[1].unresolved, Some(Unresolved::Callstack(999)));
    assert!(d.samples[1].stack.is_empty());
    assert_eq!(d.samples[1].allocated, 100, "kept, with its values");
    let f = heap_folded(&p, None, HeapValue::Total);
    assert_eq!(f.lines(), ["main 8192"]);
    assert_eq!(f.without_stack, 1);
}

#[test]
fn the_last_dump_of_each_process_and_heap_and_index_gaps() {
    let mut t = Trace::default();
    let mut a = HeapSeq::new(1);
    let (main, grow) = (hf("main", 1), hf("grow", 2));
    for (ts, n) in [(100, 1), (200, 3)] {
        a.dump(
            &mut t,
            &header(10, "libc.malloc", ts, 1),
            &[(&[main.clone(), grow.clone()], 1000 * n, 500, 2 * n, 1)],
        );
        a.dump(
            &mut t,
            &header(10, "rust", ts, 1),
            &[(std::slice::from_ref(&main), 7 * n, 0, n, 0)],
        );
    }
    let mut b = HeapSeq::new(2);
    b.dump(
        &mut t,
        &header(20, "libc.malloc", 150, 1),
        &[(std::slice::from_ref(&grow), 64, 64, 1, 1)],
    );
    // A packet of sequence 2 was lost: index 2 comes after 5.
    t.packet(|p| {
        p.set_trusted_packet_sequence_id(2).set_timestamp(300);
        p.begin_profile_packet().set_index(5);
    });
    let p = profile_of(&packets_of(&t));
    assert_eq!(p.heap_counts().dumps, 5);
    assert_eq!(p.heap_counts().missing_packets, 3, "indices 2, 3, 4");
    let last: Vec<(u64, &str, u64)> = p
        .last_heap_dumps(None)
        .iter()
        .map(|d| (d.pid, d.heap_name.as_str(), d.ts))
        .collect();
    assert_eq!(
        last,
        [
            (10, "libc.malloc", 200),
            (10, "rust", 200),
            (20, "libc.malloc", 150)
        ]
    );
    assert_eq!(p.last_heap_dumps(Some(20)).len(), 1);
    let unreleased = heap_folded(&p, None, HeapValue::Unreleased);
    assert_eq!(unreleased.lines(), ["main 21", "main;grow 2500"]);
    let count = heap_folded(&p, Some(10), HeapValue::Count);
    assert_eq!(count.lines(), ["main 3", "main;grow 6"]);
    let total = heap_folded(&p, Some(20), HeapValue::Total);
    assert_eq!(total.lines(), ["grow 64"]);
}

#[test]
fn heap_pprof_has_go_heap_sample_types_and_our_values() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(4);
    s.dump(
        &mut t,
        &header(5, "libc.malloc", 9, 4096),
        &[
            (&[hf("main", 1), hf("keep", 2)], 10_000, 2_000, 5, 1),
            (&[hf("main", 1)], 300, 300, 3, 3),
        ],
    );
    let p = profile_of(&packets_of(&t));
    let gz = encode_heap_pprof(&p, None).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let d = ProfileDecoder::new(&raw);
    assert!(d.decode_error().is_none());
    let strings: Vec<&str> = d.string_table().collect();
    let s = |i: i64| strings[i as usize];
    let types: Vec<(&str, &str)> = d
        .sample_type()
        .map(|t| (s(t.r#type().unwrap()), s(t.unit().unwrap())))
        .collect();
    assert_eq!(
        types,
        [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("inuse_objects", "count"),
            ("inuse_space", "bytes")
        ]
    );
    assert_eq!(s(d.default_sample_type().unwrap()), "inuse_space");
    assert_eq!(d.period(), Some(4096));
    let mut values: Vec<Vec<i64>> = d.sample().map(|x| x.value().collect()).collect();
    values.sort();
    assert_eq!(values, [vec![3, 300, 0, 0], vec![5, 10_000, 4, 8_000]]);
}

#[test]
fn hostile_heap_traces_never_panic() {
    let mut t = Trace::default();
    let mut s = HeapSeq::new(6);
    s.dump(
        &mut t,
        &header(1, "h", 1, 1),
        &[(&[hf("a", 1), hf("b", 2)], 10, 5, 2, 1)],
    );
    let packets = packets_of(&t);
    for (i, p) in packets.iter().enumerate() {
        for cut in 0..p.len() {
            let mut mangled = packets.clone();
            mangled[i].truncate(cut);
            let mut flipped = packets.clone();
            flipped[i][cut] ^= 0xff;
            for ps in [mangled, flipped] {
                let prof = profile_of(&ps);
                for d in prof.heap_dumps() {
                    for smp in &d.samples {
                        let _ = prof.names_of(&smp.stack);
                    }
                }
                let _ = heap_folded(&prof, None, HeapValue::Unreleased);
                let _ = encode_heap_pprof(&prof, None).unwrap();
            }
        }
    }
}
