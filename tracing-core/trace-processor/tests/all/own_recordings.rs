//! Our own recordings load into Perfetto's profiling tables: a CPU profile
//! written by the `linux.perf` probe's packet writers and a heap profile
//! written by our heapprofd's dump writer give, from SQL, the same
//! "samples per function" and "live heap bytes per callstack" as the
//! profile views' reading (`profile_view`: the samples' callsites walked,
//! heapprofd's running totals as written rather than the table's changes
//! between dumps) and as the test wrote them.

use std::collections::BTreeMap;

use zerotrace_heap_profile::{DumpSample, DumpWriter, ProcessHeader};
use zerotrace_probes::perf::config::{EventKind, EventSpec, Interval};
use zerotrace_probes::perf::packets::{Defaults, SampleHeader, write_sample, write_start};
use zerotrace_profiling::intern::{FrameDesc, Interner, MappingDesc};
use zerotrace_profiling::{BufferSink, PacketSink};
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_trace_processor::profile_view::Profile;
use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::trace;

/// `TracePacket.trusted_packet_sequence_id`, as the service stamps it.
fn stamp(mut packet: Vec<u8>, seq: u32) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    w.root().append_uint32(10, seq);
    packet.extend(w.finish().expect("heap writer"));
    packet
}

fn frame(path: &str, build_id: u8, rel_pc: u64, name: &str) -> FrameDesc {
    FrameDesc {
        mapping: MappingDesc {
            build_id: vec![build_id; 4],
            path: path.to_owned(),
            start: 0x1000 * u64::from(build_id),
            end: 0x1000 * u64::from(build_id) + 0x800,
            ..MappingDesc::default()
        },
        rel_pc,
        function: Some(name.to_owned()),
    }
}

/// Stacks, leaf first, as the unwinder hands them.
fn stacks() -> Vec<Vec<FrameDesc>> {
    let main = frame("/bin/app", 1, 0x10, "main");
    let work = frame("/bin/app", 1, 0x20, "work");
    let memcpy = frame("/lib/libc.so", 2, 0x30, "memcpy");
    let parse = frame("/bin/app", 1, 0x40, "parse");
    vec![
        vec![work.clone(), main.clone()],
        vec![memcpy.clone(), work.clone(), main.clone()],
        vec![memcpy, parse.clone(), main.clone()],
        vec![parse, main],
    ]
}

/// The leaf function of each sample and how many samples it has, from SQL.
fn sql_samples_per_function(tp: &TraceProcessor) -> BTreeMap<String, i64> {
    let r = tp
        .query(
            "SELECT f.name, count(*) FROM perf_sample ps \
             JOIN stack_profile_callsite c ON c.id = ps.callsite_id \
             JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY f.name",
        )
        .expect("query");
    r.rows
        .iter()
        .map(|row| match (&row[0], &row[1]) {
            (Value::Text(n), Value::Int(c)) => (n.clone(), *c),
            other => panic!("unexpected row {other:?}"),
        })
        .collect()
}

/// Each callsite's names root first, from the SQL tables.
fn callsite_paths(tp: &TraceProcessor) -> BTreeMap<i64, String> {
    let r = tp
        .query(
            "SELECT c.id, c.parent_id, f.name FROM stack_profile_callsite c \
             JOIN stack_profile_frame f ON f.id = c.frame_id ORDER BY c.id",
        )
        .expect("query");
    let mut paths: BTreeMap<i64, String> = BTreeMap::new();
    for row in &r.rows {
        let (Value::Int(id), Value::Text(name)) = (&row[0], &row[2]) else {
            panic!("unexpected row {row:?}");
        };
        // Parents come first: their ids are smaller.
        let path = match &row[1] {
            Value::Int(p) => format!("{};{name}", paths[p]),
            _ => name.clone(),
        };
        paths.insert(*id, path);
    }
    paths
}

#[test]
fn perf_samples_per_function_match_the_viewer() {
    let mut sink = BufferSink::default();
    let timebase = EventSpec {
        kind: EventKind::Counter(Counter::SwCpuClock),
        name: None,
        modifiers: None,
    };
    write_start(
        &mut sink,
        &Defaults {
            ts: 1_000,
            clock_id: 6,
            interval: Interval::Frequency(100),
            timebase: &timebase,
            followers: &[],
            shard: None,
        },
    );
    let mut interner = Interner::new();
    let stacks = stacks();
    // Sample k takes stack k % 4, k % 3 times out of... a skewed mix.
    let picks = [0usize, 1, 1, 2, 3, 3, 3, 0, 2, 1, 3];
    for (k, pick) in picks.iter().enumerate() {
        let h = SampleHeader {
            ts: 2_000 + k as u64 * 10,
            cpu: (k % 2) as u32,
            pid: 50,
            tid: 51 + (k % 2) as u32,
            cpu_mode: 2,
        };
        write_sample(
            &mut sink,
            &mut interner,
            &h,
            &[10_000_000],
            Some(&stacks[*pick]),
            None,
        );
    }
    let packets: Vec<Vec<u8>> = sink.packets.into_iter().map(|p| stamp(p, 3)).collect();

    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    let from_sql = sql_samples_per_function(&tp);

    let profile = Profile::from_trace(&trace(&packets)).unwrap();
    let mut from_view: BTreeMap<String, i64> = BTreeMap::new();
    for s in profile.samples() {
        let names = profile.stack_names(s);
        *from_view
            .entry(names.last().cloned().unwrap_or_default())
            .or_default() += 1;
    }
    assert_eq!(from_view.values().sum::<i64>(), picks.len() as i64);
    assert_eq!(from_sql, from_view);
    // As written: each pick's leaf (stacks are leaf first).
    let mut written: BTreeMap<String, i64> = BTreeMap::new();
    for pick in &picks {
        let leaf = stacks[*pick][0].function.clone().unwrap_or_default();
        *written.entry(leaf).or_default() += 1;
    }
    assert_eq!(from_view, written);
    // Every sample is on the session's timebase track.
    let r = tp
        .query("SELECT count(*) FROM counter c JOIN perf_counter_track t ON c.track_id = t.id")
        .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(picks.len() as i64)]]);
}

#[test]
fn live_heap_bytes_per_callstack_match_the_viewer() {
    let mut sink = BufferSink::default();
    // BOOTTIME and MONOTONIC_COARSE together (the dumps' clock).
    sink.packet(&mut |p| {
        let mut snap = p.message().begin_nested(6);
        for id in [6u64, 4] {
            let mut c = snap.begin_nested(1);
            c.append_uint64(1, id);
            c.append_uint64(2, 0);
        }
    });
    let mut writer = DumpWriter::new();
    let mut interner = Interner::new();
    let ids: Vec<u64> = stacks().iter().map(|s| interner.callstack(s)).collect();
    let header = |ts: u64| ProcessHeader {
        pid: 60,
        timestamp: ts,
        heap_name: "libc.malloc".to_owned(),
        sampling_interval_bytes: 4096,
        orig_sampling_interval_bytes: 4096,
        ..ProcessHeader::default()
    };
    let sample = |i: usize, allocated: u64, freed: u64| DumpSample {
        callstack_iid: ids[i],
        allocated,
        freed,
        alloc_count: allocated / 16,
        free_count: freed / 16,
        at_max: None,
    };
    // Two dumps: running totals.
    writer.dump(
        &mut sink,
        1_000,
        &header(1_000),
        &[
            sample(0, 4096, 0),
            sample(1, 8192, 4096),
            sample(2, 160, 160),
        ],
        &mut interner,
    );
    writer.dump(
        &mut sink,
        2_000,
        &header(2_000),
        &[
            sample(0, 8192, 4096),
            sample(1, 8192, 8192),
            sample(2, 320, 160),
            sample(3, 64, 0),
        ],
        &mut interner,
    );
    let packets: Vec<Vec<u8>> = sink.packets.into_iter().map(|p| stamp(p, 4)).collect();

    let tp = TraceProcessor::from_bytes(&trace(&packets)).unwrap();
    let paths = callsite_paths(&tp);
    let r = tp
        .query(
            "SELECT callsite_id, sum(size) FROM heap_profile_allocation \
             GROUP BY callsite_id",
        )
        .unwrap();
    let mut from_sql: BTreeMap<String, i64> = BTreeMap::new();
    for row in &r.rows {
        let (Value::Int(cs), Value::Int(live)) = (&row[0], &row[1]) else {
            panic!("unexpected row {row:?}");
        };
        *from_sql.entry(paths[cs].clone()).or_default() += live;
    }

    let profile = Profile::from_trace(&trace(&packets)).unwrap();
    let mut from_view: BTreeMap<String, i64> = BTreeMap::new();
    for d in profile.last_heap_dumps(Some(60)) {
        for s in &d.samples {
            let path = profile.names_of(&s.stack).join(";");
            *from_view.entry(path).or_default() += s.unreleased() as i64;
        }
    }
    assert_eq!(from_view.values().sum::<i64>(), 4096 + 160 + 64);
    assert_eq!(from_sql, from_view);
    // As written: the last dump's totals, each stack root first.
    let stacks = stacks();
    let written: BTreeMap<String, i64> = [(0, 8192 - 4096), (1, 0), (2, 320 - 160), (3, 64)]
        .into_iter()
        .map(|(i, live): (usize, i64)| {
            let names: Vec<String> = stacks[i]
                .iter()
                .rev()
                .map(|f| f.function.clone().unwrap_or_default())
                .collect();
            (names.join(";"), live)
        })
        .collect();
    assert_eq!(from_view, written);
    let r = tp
        .query("SELECT count(*) FROM heap_profile WHERE heap_name = 'libc.malloc'")
        .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(2)]]);
    let r = tp
        .query("SELECT value FROM stats WHERE name = 'heapprofd_missing_packet'")
        .unwrap();
    assert!(r.rows.iter().all(|row| row[0] == Value::Int(0)));
}
