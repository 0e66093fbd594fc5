//! The `android.memory.*` modules that join a process's memory with other
//! timelines, on traces built here: `android.memory.process` lays the OOM
//! adjustment score over the RSS and swap counters, one row per span in
//! which neither changed.

use zerotrace_trace_processor::{TraceProcessor, Value};

use crate::common;
use common::{i, packet, rows, s, trace};

/// `TracePacket.process_tree`.
const PROCESS_TREE: u32 = 2;
/// `TracePacket.process_stats`.
const PROCESS_STATS: u32 = 9;

/// One `process_stats` reading of pid 100 at `ts`: anon and file RSS in
/// KB, swap in KB when given, and its OOM score adjustment when given.
fn stats(ts: u64, anon: u64, file: u64, swap: Option<u64>, oom: Option<i64>) -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(ts);
        let mut st = p.message().begin_nested(PROCESS_STATS);
        let mut proc_ = st.begin_nested(1);
        proc_.append_int32(1, 100);
        proc_.append_uint64(4, anon);
        proc_.append_uint64(5, file);
        if let Some(v) = swap {
            proc_.append_uint64(7, v);
        }
        if let Some(v) = oom {
            proc_.append_int64(10, v);
        }
    })
}

fn app_tree() -> Vec<u8> {
    packet(|p| {
        p.set_timestamp(1);
        let mut tree = p.message().begin_nested(PROCESS_TREE);
        let mut proc_ = tree.begin_nested(1);
        proc_.append_int32(1, 100);
        proc_.append_int32(2, 1);
        proc_.append_string(3, "com.example.app");
    })
}

#[test]
fn oom_scores_and_memory_split_each_other_into_spans() {
    // The score is 900 from 10 and 200 from 30; the memory changes at 20
    // (anon) and 30 (swap appears). The score is known from 10, the
    // memory too: three spans, the last until the trace's end.
    let tp = TraceProcessor::from_bytes(&trace(&[
        app_tree(),
        stats(10, 100, 50, None, Some(900)),
        stats(20, 120, 50, None, Some(900)),
        stats(30, 120, 50, Some(5), Some(200)),
        stats(40, 120, 50, Some(5), None),
    ]))
    .expect("trace");
    let kb = |v: i64| i(v * 1024);
    let got = rows(
        &tp,
        "INCLUDE PERFETTO MODULE android.memory.process;
         SELECT ts, dur, score, bucket, process_name, pid, oom_adj_reason,
                anon_rss, file_rss, shmem_rss, rss, swap, anon_rss_and_swap, rss_and_swap
         FROM memory_oom_score_with_rss_and_swap_per_process
         WHERE score IS NOT NULL AND anon_rss IS NOT NULL
         ORDER BY ts",
    );
    let row = |ts: i64, dur: i64, score: i64, bucket: &str, anon: i64, swap: Option<i64>| {
        vec![
            i(ts),
            i(dur),
            i(score),
            s(bucket),
            s("com.example.app"),
            i(100),
            Value::Null,
            kb(anon),
            kb(50),
            Value::Null,
            kb(anon + 50),
            swap.map_or(Value::Null, kb),
            kb(anon + swap.unwrap_or(0)),
            kb(anon + 50 + swap.unwrap_or(0)),
        ]
    };
    assert_eq!(
        got,
        vec![
            row(10, 10, 900, "cached", 100, None),
            row(20, 10, 900, "cached", 120, None),
            row(30, 10, 200, "foreground_service", 120, Some(5)),
        ]
    );
}
