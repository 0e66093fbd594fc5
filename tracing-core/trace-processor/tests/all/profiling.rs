//! The profiling tables end to end on small traces written with
//! protozero: heapprofd dumps (deltas per callsite, windows, missing
//! packets), perf samples (sessions, counter tracks, counter sets, lost
//! records), symbols, deobfuscation, StackSample and smaps.

use protozero::Message;
use zerotrace_protos::protos::TracePacket;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, rows, s, trace};

/// One packet's bytes, written by `f`.
fn packet(f: impl FnOnce(&mut Message<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(p.message());
    }
    w.finish().expect("heap writer")
}

fn stat(tp: &TraceProcessor, name: &str) -> i64 {
    let r = rows(
        tp,
        &format!("SELECT coalesce(sum(value), 0) FROM stats WHERE name = '{name}'"),
    );
    match r.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        _ => 0,
    }
}

/// BOOTTIME 0 is MONOTONIC_COARSE 100.
fn clocks() -> Vec<u8> {
    packet(|p| {
        let mut snap = p.begin_nested(6);
        for (id, ts) in [(6u64, 0u64), (4, 100)] {
            let mut c = snap.begin_nested(1);
            c.append_uint64(1, id);
            c.append_uint64(2, ts);
        }
    })
}

fn interned_string(m: &mut Message<'_>, field: u32, iid: u64, s: &[u8]) {
    let mut e = m.begin_nested(field);
    e.append_uint64(1, iid);
    e.append_bytes(2, s);
}

/// A mapping (iid 1, "/lib/libx.so", build id "ab"), frames 1 ("f1",
/// pc 0x10) and 2 ("f2", pc 0x20) on it, callstacks 1 = [1, 2] and 2 = [1].
fn stack_of(m: &mut Message<'_>, strings_field: u32, with_kind_fields: bool) {
    // ProfilePacket: strings = 1, frames = 2, callstacks = 3, mappings = 4.
    // InternedData: function_names = 5, frames = 6, callstacks = 7,
    // build_ids = 16, mapping_paths = 17, mappings = 19.
    let (frames, callstacks, mappings) = if with_kind_fields {
        (6, 7, 19)
    } else {
        (2, 3, 4)
    };
    let (names, builds, paths) = if with_kind_fields {
        (5, 16, 17)
    } else {
        (strings_field, strings_field, strings_field)
    };
    interned_string(m, names, 1, b"f1");
    interned_string(m, names, 2, b"f2");
    interned_string(m, builds, 3, &[0xab]);
    interned_string(m, paths, 4, b"lib");
    interned_string(m, paths, 5, b"libx.so");
    {
        let mut mp = m.begin_nested(mappings);
        mp.append_uint64(1, 1);
        mp.append_uint64(2, 3);
        mp.append_uint64(7, 4);
        mp.append_uint64(7, 5);
    }
    for (iid, name, pc) in [(1u64, 1u64, 0x10u64), (2, 2, 0x20)] {
        let mut f = m.begin_nested(frames);
        f.append_uint64(1, iid);
        f.append_uint64(2, name);
        f.append_uint64(3, 1);
        f.append_uint64(4, pc);
    }
    for (iid, ids) in [(1u64, &[1u64, 2][..]), (2, &[1][..])] {
        let mut c = m.begin_nested(callstacks);
        c.append_uint64(1, iid);
        for id in ids {
            c.append_uint64(2, *id);
        }
    }
}

/// A dump of pid 7 at MONOTONIC_COARSE `ts`: (callstack, allocated,
/// freed, allocs, frees).
fn dump(index: u64, ts: u64, with_stack: bool, samples: &[(u64, u64, u64, u64, u64)]) -> Vec<u8> {
    packet(|p| {
        p.append_uint32(10, 1);
        let mut pp = p.begin_nested(37);
        if with_stack {
            stack_of(&mut pp, 1, false);
        }
        {
            let mut d = pp.begin_nested(5);
            d.append_uint64(1, 7);
            d.append_uint64(9, ts);
            for (cs, alloc, freed, na, nf) in samples {
                let mut smp = d.begin_nested(2);
                smp.append_uint64(1, *cs);
                smp.append_uint64(2, *alloc);
                smp.append_uint64(3, *freed);
                smp.append_uint64(5, *na);
                smp.append_uint64(6, *nf);
            }
        }
        pp.append_uint64(7, index);
    })
}

#[test]
fn heap_dumps_become_deltas_per_callsite() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        clocks(),
        dump(0, 110, true, &[(1, 100, 40, 2, 1), (2, 8, 0, 1, 0)]),
        dump(1, 120, true, &[(1, 150, 40, 3, 1), (2, 8, 8, 1, 1)]),
    ]))
    .unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT m.name, m.build_id, f.name, f.rel_pc FROM stack_profile_frame f \
             JOIN stack_profile_mapping m ON f.mapping = m.id ORDER BY f.id"
        ),
        vec![
            vec![s("/lib/libx.so"), s("ab"), s("f1"), i(16)],
            vec![s("/lib/libx.so"), s("ab"), s("f2"), i(32)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, depth, parent_id, frame_id FROM stack_profile_callsite"
        ),
        vec![
            vec![i(0), i(0), Value::Null, i(0)],
            vec![i(1), i(1), i(0), i(1)],
        ]
    );
    let pid7 = "(SELECT upid FROM process WHERE pid = 7)";
    assert_eq!(
        rows(
            &tp,
            &format!(
                "SELECT ts, upid = {pid7}, heap_name, callsite_id, count, size \
                 FROM heap_profile_allocation ORDER BY id"
            )
        ),
        vec![
            vec![i(10), i(1), s("unknown"), i(1), i(2), i(100)],
            vec![i(10), i(1), s("unknown"), i(1), i(-1), i(-40)],
            vec![i(10), i(1), s("unknown"), i(0), i(1), i(8)],
            vec![i(20), i(1), s("unknown"), i(1), i(1), i(50)],
            vec![i(20), i(1), s("unknown"), i(0), i(-1), i(-8)],
        ]
    );
    // Live bytes per callsite: what was allocated less what was freed.
    assert_eq!(
        rows(
            &tp,
            "SELECT callsite_id, sum(size) FROM heap_profile_allocation GROUP BY 1 ORDER BY 1"
        ),
        vec![vec![i(0), i(0)], vec![i(1), i(110)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, ts_end, dur, heap_name FROM heap_profile ORDER BY id"
        ),
        vec![
            vec![i(10), i(10), i(0), Value::Null],
            vec![i(20), i(20), i(0), Value::Null],
        ]
    );
    assert_eq!(stat(&tp, "heapprofd_missing_packet"), 0);
}

#[test]
fn heap_dump_losses_and_bad_ids_are_counted() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        clocks(),
        dump(0, 110, true, &[(1, 100, 0, 1, 0)]),
        // Index 2 after 0: one packet lost. Callstack 9 is nobody's.
        dump(2, 120, false, &[(9, 1, 0, 1, 0)]),
        // Totals going down are malformed.
        dump(3, 130, true, &[(1, 50, 0, 1, 0)]),
    ]))
    .unwrap();
    assert_eq!(stat(&tp, "heapprofd_missing_packet"), 1);
    assert_eq!(stat(&tp, "stackprofile_invalid_callstack_id"), 1);
    assert_eq!(stat(&tp, "heapprofd_malformed_packet"), 1);
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM heap_profile_allocation"),
        vec![vec![i(1)]]
    );
}

/// Sequence 2's defaults: timebase cpu-clock, followers instructions
/// and a named one.
fn perf_defaults() -> Vec<u8> {
    packet(|p| {
        p.append_uint32(10, 2);
        p.append_uint32(13, 1);
        let mut d = p.begin_nested(59);
        let mut psd = d.begin_nested(12);
        {
            let mut tb = psd.begin_nested(1);
            tb.append_uint64(2, 100);
            tb.append_int32(4, 1);
        }
        {
            let mut f = psd.begin_nested(4);
            f.append_int32(1, 11);
        }
        {
            let mut f = psd.begin_nested(4);
            f.append_string(4, "mine");
        }
        drop(psd);
        drop(d);
        let mut id = p.begin_nested(12);
        stack_of(&mut id, 0, true);
    })
}

fn perf_sample(ts: u64, cpu: u32, tid: u32, counts: &[u64], callstack: Option<u64>) -> Vec<u8> {
    packet(|p| {
        p.append_uint32(10, 2);
        p.append_uint64(8, ts);
        let mut s = p.begin_nested(66);
        s.append_uint32(1, cpu);
        s.append_uint32(2, 40);
        s.append_uint32(3, tid);
        s.append_int32(5, 2);
        if let Some((tb, followers)) = counts.split_first() {
            s.append_uint64(6, *tb);
            for f in followers {
                s.append_uint64(7, *f);
            }
        }
        if let Some(cs) = callstack {
            s.append_uint64(4, cs);
        }
    })
}

#[test]
fn perf_samples_have_sessions_counter_tracks_and_counter_sets() {
    let lost = packet(|p| {
        p.append_uint32(10, 2);
        p.append_uint64(8, 40);
        let mut s = p.begin_nested(66);
        s.append_uint32(1, 1);
        s.append_uint64(17, 5);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[
        perf_defaults(),
        perf_sample(10, 0, 41, &[1000, 7, 9], Some(1)),
        perf_sample(20, 1, 42, &[2000, 8, 10], Some(2)),
        perf_sample(30, 1, 42, &[3000], None),
        lost,
    ]))
    .unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ps.ts, t.tid, ps.cpu, ps.cpu_mode, ps.callsite_id, ps.perf_session_id \
             FROM perf_sample ps JOIN thread t USING (utid) ORDER BY ps.ts"
        ),
        vec![
            vec![i(10), i(41), i(0), s("user"), i(1), i(0)],
            vec![i(20), i(42), i(1), s("user"), i(0), i(0)],
            vec![i(30), i(42), i(1), s("user"), Value::Null, i(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, cpu, perf_session_id, is_timebase FROM perf_counter_track ORDER BY id"
        ),
        vec![
            vec![s("cpu-clock"), i(0), i(0), i(1)],
            vec![s("instructions"), i(0), i(0), i(0)],
            vec![s("mine"), i(0), i(0), i(0)],
            vec![s("cpu-clock"), i(1), i(0), i(1)],
            vec![s("instructions"), i(1), i(0), i(0)],
            vec![s("mine"), i(1), i(0), i(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT ps.ts, group_concat(CAST(c.value AS INT), ' ') FROM perf_sample ps \
             JOIN __intrinsic_profiler_sample x ON x.id = ps.id \
             JOIN __intrinsic_profiler_counter_set cs ON cs.counter_set_id = x.counter_set_id \
             JOIN counter c ON c.id = cs.counter_id GROUP BY ps.id ORDER BY ps.ts"
        ),
        vec![
            vec![i(10), s("1000 7 9")],
            vec![i(20), s("2000 8 10")],
            vec![i(30), s("3000")],
        ]
    );
    // Samples per function (the leaf frame of each sample).
    assert_eq!(
        rows(
            &tp,
            "SELECT f.name, count(*) FROM perf_sample ps \
             JOIN stack_profile_callsite c ON c.id = ps.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY 1 ORDER BY 1"
        ),
        vec![vec![s("f1"), i(1)], vec![s("f2"), i(1)]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT source, timebase_unit FROM __intrinsic_profiler_session"
        ),
        vec![vec![s("linux.perf"), s("ns")]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT idx, value FROM stats WHERE name = 'perf_cpu_lost_records'"
        ),
        vec![vec![i(1), i(5)]]
    );
}

#[test]
fn module_symbols_attach_to_frames_and_unknown_binaries_count() {
    let symbols = |path: &str, build_id: &[u8], addr: u64| {
        let path = path.to_owned();
        let build_id = build_id.to_vec();
        packet(move |p| {
            let mut m = p.begin_nested(61);
            m.append_string(1, &path);
            m.append_bytes(2, &build_id);
            let mut a = m.begin_nested(3);
            a.append_uint64(1, addr);
            for (name, line) in [("inner", 3u32), ("outer", 9)] {
                let mut l = a.begin_nested(2);
                l.append_string(1, name);
                l.append_string(2, "x.cc");
                l.append_uint32(3, line);
            }
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        clocks(),
        dump(0, 110, true, &[(1, 1, 0, 1, 0)]),
        symbols("/lib/libx.so", &[0xab], 0x20),
        symbols("/lib/other.so", &[0xab], 0x20),
        symbols("/lib/libx.so", &[0xab], 0x30),
    ]))
    .unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT f.name, s.name, s.source_file, s.line_number FROM stack_profile_frame f \
             JOIN stack_profile_symbol s USING (symbol_set_id) ORDER BY s.id"
        ),
        vec![
            vec![s("f2"), s("inner"), s("x.cc"), i(3)],
            vec![s("f2"), s("outer"), s("x.cc"), i(9)],
        ]
    );
    assert_eq!(stat(&tp, "stackprofile_invalid_mapping_id"), 1);
    assert_eq!(stat(&tp, "stackprofile_invalid_frame_id"), 1);
}

#[test]
fn deobfuscation_names_jit_frames() {
    let profile = packet(|p| {
        p.append_uint32(10, 1);
        let mut pp = p.begin_nested(37);
        interned_string(&mut pp, 1, 1, b"a.b");
        interned_string(&mut pp, 1, 2, b"memfd:jit-cache");
        {
            let mut mp = pp.begin_nested(4);
            mp.append_uint64(1, 1);
            mp.append_uint64(7, 2);
        }
        let mut f = pp.begin_nested(2);
        f.append_uint64(1, 1);
        f.append_uint64(2, 1);
        f.append_uint64(3, 1);
    });
    let mapping = packet(|p| {
        let mut d = p.begin_nested(64);
        d.append_string(1, "com.example");
        let mut c = d.begin_nested(3);
        c.append_string(1, "a");
        c.append_string(2, "Foo");
        let mut m = c.begin_nested(4);
        m.append_string(1, "b");
        m.append_string(2, "run");
    });
    let tp = TraceProcessor::from_bytes(&trace(&[profile, mapping])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT name, deobfuscated_name FROM stack_profile_frame"
        ),
        vec![vec![s("a.b"), s("Foo.run")]]
    );
}

#[test]
fn stack_samples_with_inline_callstacks_and_weights() {
    let defaults = packet(|p| {
        p.append_uint32(10, 3);
        p.append_uint32(13, 1);
        let mut d = p.begin_nested(59);
        let mut ssd = d.begin_nested(100);
        ssd.append_string(1, "py.cpu");
        let mut pd = ssd.begin_nested(2);
        pd.append_string(2, "cpu-time");
        pd.append_int32(3, 1);
    });
    let sample = packet(|p| {
        p.append_uint32(10, 3);
        p.append_uint64(8, 50);
        let mut s = p.begin_nested(135);
        {
            let mut t = s.begin_nested(1);
            t.append_uint32(2, 9);
            t.append_uint32(3, 10);
        }
        {
            let mut cs = s.begin_nested(5);
            for (name, line) in [("main", 1u32), ("work", 2)] {
                let mut f = cs.begin_nested(1);
                f.append_string(1, name);
                f.append_string(2, "a.py");
                f.append_uint32(3, line);
            }
        }
        s.append_uint64(11, 777);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[defaults, sample])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ss.ts, ss.source, f.name, sym.line_number, CAST(c.value AS INT), ct.name, ct.unit \
             FROM stack_sample ss JOIN stack_profile_callsite cs ON cs.id = ss.callsite_id \
             JOIN stack_profile_frame f ON f.id = cs.frame_id \
             JOIN stack_profile_symbol sym USING (symbol_set_id) \
             JOIN stack_sample_counter c ON c.stack_sample_id = ss.id \
             JOIN stack_sample_counter_track ct ON ct.id = c.track_id"
        ),
        vec![vec![
            i(50),
            s("py.cpu"),
            s("work"),
            i(2),
            i(777),
            s("cpu-time"),
            s("ns")
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT p.pid, t.tid FROM stack_sample_task_context tc \
             JOIN process p USING (upid) JOIN thread t USING (utid)"
        ),
        vec![vec![i(9), i(10)]]
    );
}

#[test]
fn smaps_entries_are_rows() {
    let smaps = packet(|p| {
        p.append_uint64(8, 5);
        let mut s = p.begin_nested(68);
        s.append_uint32(1, 3);
        let mut e = s.begin_nested(2);
        e.append_string(1, "/tmp/x (deleted)");
        e.append_uint64(2, 12);
        e.append_uint64(3, 4);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[smaps])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, path, path_trimmed, is_deleted, size_kb, private_dirty_kb, swap_kb \
             FROM profiler_smaps"
        ),
        vec![vec![
            i(5),
            s("/tmp/x (deleted)"),
            s("/tmp/x"),
            i(1),
            i(12),
            i(4),
            i(0)
        ]]
    );
}

#[test]
fn pid_zero_samples_belong_to_the_swapper() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        perf_defaults(),
        packet(|p| {
            p.append_uint32(10, 2);
            p.append_uint64(8, 10);
            let mut s = p.begin_nested(66);
            s.append_uint32(1, 0);
            s.append_uint64(6, 1);
        }),
    ]))
    .unwrap();
    assert_eq!(rows(&tp, "SELECT utid FROM perf_sample"), vec![vec![i(0)]]);
}

#[test]
fn streaming_profile_samples_are_timed_on_the_legacy_clock() {
    let setup = packet(|p| {
        p.append_uint32(10, 4);
        p.append_uint32(13, 1);
        {
            // ThreadDescriptor: pid, tid, reference_timestamp_us.
            let mut td = p.begin_nested(44);
            td.append_int32(1, 5);
            td.append_int32(2, 6);
            td.append_int64(6, 1000);
        }
        let mut id = p.begin_nested(12);
        stack_of(&mut id, 0, true);
    });
    let samples = |iids: &[u64], deltas: &[i64], priority: i32| {
        let iids = iids.to_vec();
        let deltas = deltas.to_vec();
        packet(move |p| {
            p.append_uint32(10, 4);
            let mut s = p.begin_nested(54);
            for i in &iids {
                s.append_uint64(1, *i);
            }
            for d in &deltas {
                s.append_int64(2, *d);
            }
            if priority != 0 {
                s.append_int32(3, priority);
            }
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[
        setup,
        samples(&[1, 2], &[10, 5], 3),
        samples(&[9], &[1], 0),
        samples(&[], &[i64::MIN / 1000 - 1], 0),
    ]))
    .unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT s.ts, t.tid, s.callsite_id, s.process_priority \
             FROM cpu_profile_stack_sample s JOIN thread t USING (utid) ORDER BY s.ts"
        ),
        vec![
            vec![i(1_010_000), i(6), i(1), i(3)],
            vec![i(1_015_000), i(6), i(0), i(3)],
        ]
    );
    assert_eq!(stat(&tp, "stackprofile_invalid_callstack_id"), 1);
    assert_eq!(stat(&tp, "stackprofile_parser_error"), 1);
    assert_eq!(stat(&tp, "streaming_profile_invalid_timestamp"), 1);
}

#[test]
fn art_oome_stacks_are_heap_graph_callsites() {
    let meta = packet(|p| {
        p.append_uint64(8, 77);
        let mut m = p.begin_nested(131);
        m.append_int32(1, 12);
        m.append_int32(2, 10_123);
        m.append_string(3, "com.app");
        m.append_uint64(5, 4096);
        m.append_string(9, "no memory");
        let mut st = m.begin_nested(8);
        for (name, line) in [("void a.B.leaf(int)", 7), ("a.B.root()", 3)] {
            let mut f = st.begin_nested(1);
            f.append_string(1, name);
            f.append_string(2, "B.java");
            f.append_int32(3, line);
        }
    });
    let tp = TraceProcessor::from_bytes(&trace(&[meta])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT g.ts, p.pid, p.name, p.uid, g.dump_reason, o.allocation_size_bytes, o.error_msg \
             FROM heap_graph g JOIN process p USING (upid) \
             JOIN heap_graph_java_oome_details o ON o.heap_graph_id = g.id"
        ),
        vec![vec![
            i(77),
            i(12),
            s("com.app"),
            i(10_123),
            s("OOME"),
            i(4096),
            s("no memory")
        ]]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT c.depth, f.name, sym.line_number FROM heap_graph_thread_callsite t \
             JOIN stack_profile_callsite c ON c.id = t.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id \
             JOIN stack_profile_symbol sym USING (symbol_set_id)"
        ),
        vec![vec![i(1), s("a.B.leaf"), i(7)]]
    );
}

#[test]
fn annotated_callstacks_mark_art_frames() {
    // Frames root first: a libart interpreter frame, then a managed frame
    // of a .vdex; the leaf is the managed frame.
    let setup = packet(|p| {
        p.append_uint32(10, 5);
        p.append_uint32(13, 1);
        let mut id = p.begin_nested(12);
        interned_string(&mut id, 17, 1, b"libart.so");
        interned_string(&mut id, 17, 2, b"app.vdex");
        interned_string(&mut id, 5, 1, b"ExecuteSwitchImplAsm");
        interned_string(&mut id, 5, 2, b"_ZN3art9ArtMethod6InvokeEv");
        interned_string(&mut id, 5, 3, b"app.Main.run");
        for (iid, path) in [(1u64, 1u64), (2, 2)] {
            let mut m = id.begin_nested(19);
            m.append_uint64(1, iid);
            m.append_uint64(7, path);
        }
        for (iid, name, mapping) in [(1u64, 2u64, 1u64), (2, 1, 1), (3, 3, 2)] {
            let mut f = id.begin_nested(6);
            f.append_uint64(1, iid);
            f.append_uint64(2, name);
            f.append_uint64(3, mapping);
        }
        let mut c = id.begin_nested(7);
        c.append_uint64(1, 1);
        for f in [1u64, 3, 2] {
            c.append_uint64(2, f);
        }
    });
    let sample = packet(|p| {
        p.append_uint32(10, 5);
        p.append_uint64(8, 10);
        let mut s = p.begin_nested(66);
        s.append_uint32(2, 3);
        s.append_uint32(3, 3);
        s.append_uint64(4, 1);
    });
    let tp = TraceProcessor::from_bytes(&trace(&[setup, sample])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT a.depth, a.annotation, ifnull(demangle(f.name), f.name) \
             FROM experimental_annotated_callstack((SELECT callsite_id FROM perf_sample)) a \
             JOIN stack_profile_frame f ON f.id = a.frame_id ORDER BY a.depth"
        ),
        vec![
            vec![i(0), Value::Null, s("art::ArtMethod::Invoke()")],
            vec![i(1), s("interp"), s("app.Main.run")],
            vec![i(2), s("common-frame-interp"), s("ExecuteSwitchImplAsm")],
        ]
    );
}

#[test]
fn hostile_profiling_packets_never_panic() {
    let good = trace(&[
        clocks(),
        dump(0, 110, true, &[(1, 100, 40, 2, 1), (2, 8, 0, 1, 0)]),
        perf_defaults(),
        perf_sample(10, 0, 41, &[1000, 7, 9], Some(1)),
        packet(|p| {
            let mut m = p.begin_nested(61);
            m.append_string(1, "/lib/libx.so");
            m.append_bytes(2, &[0xab]);
            let mut a = m.begin_nested(3);
            a.append_uint64(1, 0x10);
            a.begin_nested(2).append_string(1, "x");
        }),
    ]);
    assert!(TraceProcessor::from_bytes(&good).is_ok());
    for cut in 0..good.len() {
        if let Ok(tp) = TraceProcessor::from_bytes(&good[..cut]) {
            let _ = tp.query("SELECT * FROM stack_profile_callsite");
        }
    }
    for i in 0..good.len() {
        for flip in [0xa5u8, 0x01, 0x80] {
            let mut b = good.clone();
            b[i] ^= flip;
            if let Ok(tp) = TraceProcessor::from_bytes(&b) {
                let _ = tp.query(
                    "SELECT * FROM heap_profile_allocation, perf_sample LIMIT 1; \
                     SELECT * FROM experimental_annotated_callstack(0)",
                );
            }
        }
    }
}

#[test]
fn packed_smaps_are_rows_and_uneven_arrays_count() {
    let smaps = |aggregated: bool, sizes: &[u64]| {
        let sizes = sizes.to_vec();
        packet(move |p| {
            p.append_uint64(8, 9);
            let mut s = p.begin_nested(68);
            s.append_uint32(1, 3);
            let mut pk = s.begin_nested(3);
            pk.append_string(1, "/a.so");
            pk.append_string(1, "/b (deleted)");
            if aggregated {
                pk.append_uint32(3, 4);
                pk.append_uint32(3, 1);
            } else {
                for n in [1u32, 0, 1] {
                    pk.append_uint32(2, n);
                }
            }
            for v in &sizes {
                pk.append_uint64(4, *v);
            }
        })
    };
    let tp = TraceProcessor::from_bytes(&trace(&[smaps(false, &[10, 20, 30])])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT path_trimmed, is_deleted, aggregate_count, size_kb FROM profiler_smaps ORDER BY id"
        ),
        vec![
            vec![s("/b"), i(1), i(1), i(10)],
            vec![s("/a.so"), i(0), i(1), i(20)],
            vec![s("/b"), i(1), i(1), i(30)],
        ]
    );
    assert_eq!(stat(&tp, "smaps_parser_errors"), 0);
    let tp = TraceProcessor::from_bytes(&trace(&[smaps(true, &[7, 8])])).unwrap();
    assert_eq!(
        rows(
            &tp,
            "SELECT path, aggregate_count, size_kb FROM profiler_smaps ORDER BY id"
        ),
        vec![
            vec![s("/a.so"), i(4), i(7)],
            vec![s("/b (deleted)"), i(1), i(8)]
        ]
    );
    let tp = TraceProcessor::from_bytes(&trace(&[smaps(false, &[10])])).unwrap();
    assert_eq!(
        rows(&tp, "SELECT count(*) FROM profiler_smaps"),
        vec![vec![i(1)]]
    );
    assert_eq!(stat(&tp, "smaps_parser_errors"), 1);
}
