//! Tests of the stdlib modules built on the stack profile tables
//! (`callstacks.stack_profile`, `stacks.cpu_profiling`,
//! `linux.perf.samples`, `linux.perf.counters`) over a small synthetic
//! profile.

use crate::storage::Storage;
use crate::storage::profiling_rows::{
    CallsiteRow, FrameRow, HeapAllocationRow, HeapProfileRow, MappingRow, ProfilerSampleRow,
    ProfilerSessionRow, SymbolRow,
};
use crate::{TraceProcessor, Value};

/// The mapping's build id.
const BUILD_ID: &str = "0123456789abcdef0123456789abcdef01234567";

/// Callsites (frame `i` at rel_pc 16 * i): 0 `main` > 1 (a frame whose symbols are `inner`, inlined
/// into `outer`) > 2 `_Z3foov`; 0 > 3 (a frame without a name). Samples
/// of session 0 (on time): 2, 2, 1, 3; of session 1 (on page faults): 0.
fn trace() -> TraceProcessor {
    let mut s = Storage::default();
    let name = s.strings.intern("/lib/x.so");
    let build_id = s.strings.intern(BUILD_ID);
    s.profiling.mappings.push(MappingRow {
        name,
        build_id,
        ..Default::default()
    });
    let frames = [("main", None), ("", Some(7)), ("_Z3foov", None), ("", None)];
    for (i, (n, set)) in frames.into_iter().enumerate() {
        let name = s.strings.intern(n);
        s.profiling.frames.push(FrameRow {
            name,
            mapping: 0,
            rel_pc: 16 * i as i64,
            symbol_set_id: set,
            ..Default::default()
        });
    }
    for n in ["inner", "outer"] {
        let name = s.strings.intern(n);
        s.profiling.symbols.push(SymbolRow {
            symbol_set_id: 7,
            name,
            ..Default::default()
        });
    }
    for (depth, parent_id, frame_id) in [
        (0, None, 0),
        (1, Some(0), 1),
        (2, Some(1), 2),
        (1, Some(0), 3),
    ] {
        s.profiling.callsites.push(CallsiteRow {
            depth,
            parent_id,
            frame_id,
        });
    }
    let source = s.strings.intern("linux.perf");
    for unit in ["ns", "count"] {
        let timebase_unit = s.strings.intern(unit);
        s.profiling.sessions.push(ProfilerSessionRow {
            source,
            timebase_unit,
            ..Default::default()
        });
    }
    for (ts, callsite, session) in [(10, 2, 0), (20, 2, 0), (30, 1, 0), (40, 3, 0), (50, 0, 1)] {
        s.profiling.samples.push(ProfilerSampleRow {
            ts,
            source,
            callsite_id: Some(callsite),
            session_id: Some(session),
            ..Default::default()
        });
    }
    let heap = s.strings.intern("malloc");
    for (ts, ts_end) in [(100, 200), (300, 300)] {
        s.profiling.heap_profiles.push(HeapProfileRow {
            ts,
            ts_end,
            upid: 0,
            heap_name: heap,
        });
    }
    for (ts, callsite_id, count, size) in [
        (200, 2, 1, 100),
        (200, 2, -1, -40),
        (200, 3, 1, 30),
        (300, 1, 1, 8),
    ] {
        s.profiling.heap_allocations.push(HeapAllocationRow {
            ts,
            upid: 0,
            heap_name: heap,
            callsite_id,
            count,
            size,
        });
    }
    TraceProcessor::from_storage(s).expect("engine")
}

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<String> {
    tp.query(sql)
        .expect(sql)
        .rows
        .into_iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_owned(),
                    Value::Int(i) => i.to_string(),
                    Value::Real(f) => f.to_string(),
                    Value::Text(t) => t.clone(),
                    Value::Blob(_) => "blob".to_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn the_forest_unfolds_inlined_symbols_and_names_unknown_frames() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE callstacks.stack_profile;
             SELECT id, parent_id, name, callsite_id, is_leaf_function_in_callsite_frame
             FROM _callstack_spc_forest ORDER BY id"
        ),
        vec![
            "0 NULL main 0 1",
            "1 2 inner 1 1",
            "2 0 outer 1 0",
            "3 1 foo() 2 1",
            "4 0 unknown 3 1",
        ]
    );
}

#[test]
fn cpu_profiling_keeps_time_based_sessions_and_counts_the_tree() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE stacks.cpu_profiling;
             SELECT ts, callsite_id, source FROM cpu_profiling_samples"
        ),
        vec![
            "10 2 linux.perf",
            "20 2 linux.perf",
            "30 1 linux.perf",
            "40 3 linux.perf"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT id, parent_id, name, mapping_name, self_count, cumulative_count
             FROM cpu_profiling_summary_tree ORDER BY id"
        ),
        vec![
            "0 NULL main /lib/x.so 0 4",
            "1 2 inner /lib/x.so 1 3",
            "2 0 outer /lib/x.so 0 3",
            "3 1 foo() /lib/x.so 2 2",
            "4 0 unknown /lib/x.so 1 1",
        ]
    );
}

#[test]
fn linux_perf_summary_tree_counts_every_perf_sample() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.perf.samples;
             SELECT id, name, self_count, cumulative_count
             FROM linux_perf_samples_summary_tree ORDER BY id"
        ),
        vec![
            "0 main 1 5",
            "1 inner 1 3",
            "2 outer 0 3",
            "3 foo() 2 2",
            "4 unknown 1 1",
        ]
    );
}

#[test]
fn linux_perf_counters_join_samples_without_counters_to_nothing() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE linux.perf.counters;
             SELECT count(*), linux_perf_counter_for_sample(0, 'cpu-clock')
             FROM linux_perf_sample_with_counters"
        ),
        vec!["0 NULL"]
    );
}

#[test]
fn heap_profile_intervals_window_each_dump_and_total_its_bytes() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_profile.intervals;
             SELECT id, upid, heap_name, ts, dur, retained, allocated, delta
             FROM _android_heap_profile_intervals ORDER BY ts"
        ),
        vec!["0 0 malloc 100 100 30 130 90", "3 0 malloc 201 99 8 8 8"]
    );
}

#[test]
fn heap_profile_trees_total_sizes_per_callsite_and_below() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_profile.summary_tree;
             SELECT id, name, self_size, cumulative_size, self_alloc_size, cumulative_alloc_size
             FROM android_heap_profile_summary_tree ORDER BY id"
        ),
        vec![
            "0 main 0 106 0 146",
            "1 inner 8 68 8 108",
            "2 outer 8 76 8 116",
            "3 foo() 60 60 100 100",
            "4 unknown 30 30 30 30",
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE android.memory.heap_profile.callstacks;
             SELECT id, self_size, self_count, self_alloc_size, self_alloc_count
             FROM _android_heap_profile_callstacks_for_allocations!((
               SELECT callsite_id, size, count,
                 max(size, 0) AS alloc_size, max(count, 0) AS alloc_count
               FROM heap_profile_allocation WHERE ts = 200
             )) ORDER BY id"
        ),
        vec![
            "0 0 0 0 0",
            "1 0 0 0 0",
            "2 0 0 0 0",
            "3 60 0 100 1",
            "4 30 1 30 1"
        ]
    );
}

#[test]
fn symbolization_candidates_are_the_unsymbolized_frames_reached() {
    let tp = trace();
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE stacks.symbolization_candidates;
             SELECT upid, module, build_id = (SELECT build_id FROM stack_profile_mapping),
               rel_pc, breakpad_module_id
             FROM _stacks_symbolization_candidates ORDER BY rel_pc"
        ),
        vec![
            "0 /lib/x.so 1 0 NULL",
            "0 /lib/x.so 1 32 NULL",
            "0 /lib/x.so 1 48 NULL"
        ]
    );
    assert_eq!(
        rows(
            &tp,
            &format!("SELECT _to_breakpad_module('/data/app/libchrome.so', '{BUILD_ID}')")
        ),
        vec!["67452301ab89efcd0123456789abcdef0"]
    );
}
