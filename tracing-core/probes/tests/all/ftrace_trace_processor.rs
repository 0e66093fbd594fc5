//! Our own recordings answer correctly: the committed raw pages of a real
//! kernel, translated by the probes into `ftrace_events` bundles as they
//! write them (typed events, and `compact_sched`), loaded into the trace
//! processor; "context switches per thread" and "CPU time per thread" from
//! `sched_slice` must equal what an independent reading of the same
//! bundles gives (the bundles decoded here with `zerotrace_protos`'
//! decoders, the switches counted and the time between a CPU's successive
//! switches summed by hand).

use crate::ftrace_common;

use std::collections::BTreeMap;

use ftrace_common::{Recording, fixture_dir};
use protozero::HeapWriter;
use zerotrace_probes::ftrace::{Options, Page, Translator};
use zerotrace_protos::protos::{FtraceEventBundleDecoder, TracePacket};
use zerotrace_protos::upstream_tables::packet_field;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// The trace the probes would write: a `system_info` naming the kernel,
/// then one packet per bundle; also the bundles' payloads.
fn record(rec: &Recording, compact_sched: bool) -> (Vec<u8>, Vec<Vec<u8>>) {
    let (table, layout) = rec.layout();
    let mut tr = Translator::new(&table, Options { compact_sched }).expect("translator");
    let mut packets = Vec::new();
    {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.begin_system_info()
                .begin_utsname()
                .set_release(&rec.kernel);
        }
        packets.push(w.finish().expect("writes"));
    }
    let mut bundles = Vec::new();
    for (cpu, raw) in rec.raw.iter().enumerate() {
        let pages: Vec<Page<'_>> = layout.pages(raw).map(|p| p.expect("page")).collect();
        let mut rest = &pages[..];
        while !rest.is_empty() {
            let mut w = HeapWriter::new();
            let n = {
                let mut p = TracePacket::from_message(w.root());
                p.set_trusted_packet_sequence_id(1);
                tr.write_bundle(p.message(), cpu as u32, rest)
            };
            assert!(n > 0);
            rest = &rest[n..];
            let bytes = w.finish().expect("writes");
            let bundle = protozero::Decoder::new(&bytes)
                .find_last(packet_field::FTRACE_EVENTS)
                .and_then(|f| f.as_bytes().ok())
                .expect("bundle")
                .to_vec();
            bundles.push(bundle);
            packets.push(bytes);
        }
    }
    let mut trace = Vec::new();
    for p in &packets {
        // Trace.packet, field 1.
        trace.push(0x0a);
        let mut n = p.len() as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                trace.push(b);
                break;
            }
            trace.push(b | 0x80);
        }
        trace.extend_from_slice(p);
    }
    (trace, bundles)
}

/// One switch as read back: (ts, prev_pid, next_pid); prev_pid is None in
/// compact form (the CPU's previous switch names it).
type Switch = (i64, Option<i64>, i64);

/// The switches of every CPU, in time order, decoded here.
fn switches(bundles: &[Vec<u8>]) -> BTreeMap<u32, Vec<Switch>> {
    let mut by_cpu: BTreeMap<u32, Vec<Switch>> = BTreeMap::new();
    for b in bundles {
        let d = FtraceEventBundleDecoder::new(b);
        let cpu = d.cpu().expect("cpu");
        let list = by_cpu.entry(cpu).or_default();
        for e in d.event() {
            if let Some(s) = e.sched_switch() {
                let ts = e.timestamp().expect("ts") as i64;
                list.push((
                    ts,
                    Some(i64::from(s.prev_pid().expect("prev"))),
                    i64::from(s.next_pid().expect("next")),
                ));
            }
        }
        if let Some(c) = d.compact_sched() {
            let mut ts = 0i64;
            for (dt, pid) in c.switch_timestamp().zip(c.switch_next_pid()) {
                ts += dt as i64;
                list.push((ts, None, i64::from(pid)));
            }
        }
    }
    for list in by_cpu.values_mut() {
        list.sort_by_key(|s| s.0);
    }
    by_cpu
}

/// Per tid: (times switched in, ns run in closed slices), as upstream
/// builds `sched_slice`: each switch opens a slice of its next task and
/// closes the CPU's open slice when its prev task is the one that ran; in
/// compact form the CPU's first switch only says who runs.
fn by_hand(by_cpu: &BTreeMap<u32, Vec<Switch>>) -> BTreeMap<i64, (i64, i64)> {
    let mut out: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for list in by_cpu.values() {
        let mut open: Option<(i64, i64)> = None;
        let mut seen_first = false;
        for &(ts, prev, next) in list {
            if prev.is_none() && !seen_first {
                seen_first = true;
                continue;
            }
            seen_first = true;
            if let Some((start, tid)) = open {
                if prev.is_none_or(|p| p == tid) {
                    out.entry(tid).or_default().1 += ts - start;
                }
            }
            out.entry(next).or_default().0 += 1;
            open = Some((ts, next));
        }
    }
    out
}

/// The same two figures from SQL.
fn by_sql(tp: &TraceProcessor) -> BTreeMap<i64, (i64, i64)> {
    let r = tp
        .query(
            "SELECT t.tid, COUNT(*), SUM(CASE WHEN s.dur >= 0 THEN s.dur ELSE 0 END)
             FROM sched_slice s JOIN thread t USING (utid) GROUP BY t.tid",
        )
        .expect("query");
    r.rows
        .iter()
        .map(|row| match row.as_slice() {
            [Value::Int(tid), Value::Int(n), Value::Int(ns)] => (*tid, (*n, *ns)),
            other => panic!("row {other:?}"),
        })
        .collect()
}

fn check(compact_sched: bool) -> BTreeMap<i64, (i64, i64)> {
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    let (trace, bundles) = record(&rec, compact_sched);
    let by_cpu = switches(&bundles);
    let n: usize = by_cpu.values().map(Vec::len).sum();
    assert!(n > 100, "the fixture holds switches ({n})");
    let expected = by_hand(&by_cpu);
    let tp = TraceProcessor::from_bytes(&trace).expect("loads");
    let got = by_sql(&tp);
    assert_eq!(got, expected);
    // Every slice of a thread is a Running state of it.
    let r = tp
        .query(
            "SELECT (SELECT COUNT(*) FROM sched_slice WHERE utid != 0),
                    (SELECT COUNT(*) FROM thread_state WHERE state = 'Running')",
        )
        .expect("query");
    assert_eq!(r.rows[0][0], r.rows[0][1]);
    // Nothing in the recording is malformed.
    let r = tp
        .query(
            "SELECT name, value FROM stats WHERE value > 0 AND name IN
             ('ftrace_bundle_tokenizer_errors', 'compact_sched_has_parse_errors',
              'mismatched_sched_switch_tids', 'task_state_invalid')",
        )
        .expect("query");
    assert_eq!(r.rows, Vec::<Vec<Value>>::new());
    got
}

#[test]
fn switches_and_cpu_time_per_thread_from_typed_events() {
    let got = check(false);
    // The workload's ping-pong threads ran.
    assert!(got.len() > 3, "{got:?}");
}

#[test]
fn switches_and_cpu_time_per_thread_from_compact_sched() {
    let typed = check(false);
    let compact = check(true);
    // Both forms tell the same story but for each CPU's first switch,
    // which compact form cannot turn into a slice.
    let total = |m: &BTreeMap<i64, (i64, i64)>| m.values().map(|v| v.0).sum::<i64>();
    let rec = Recording::load(&fixture_dir()).expect("fixtures");
    assert_eq!(total(&typed) - total(&compact), rec.raw.len() as i64);
}
