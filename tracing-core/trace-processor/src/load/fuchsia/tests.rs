//! The Fuchsia reader against traces written here by a small FXT writer
//! of our own, made from the format's specification (fuchsia.dev, "Fuchsia
//! trace format"), not from the reader: every record and event type,
//! string and thread references inline and by table, pushes split
//! anywhere, gzip, and hostile records. No real FXT file was available to
//! check against (Perfetto keeps its samples in a cloud bucket).

use crate::Loader;
use crate::storage::Storage;
use crate::storage::args::ArgValue;

mod fxt_writer;

use fxt_writer::*;

fn load_chunks(bytes: &[u8], step: usize) -> Storage {
    let mut l = Loader::new();
    for c in bytes.chunks(step.max(1)) {
        l.push(c).unwrap();
    }
    l.finish().unwrap()
}

fn s(st: &Storage, id: crate::column_store::strings::StrId) -> &str {
    st.strings.get(id).unwrap_or("")
}

/// Args of a set as (key, value text).
fn args(st: &Storage, set: Option<u32>) -> Vec<(String, String)> {
    let Some(set) = set else { return Vec::new() };
    st.args
        .set(set)
        .map(|a| {
            let v = match a.value {
                ArgValue::Int(i) => format!("int {i}"),
                ArgValue::Uint(i) => format!("uint {i}"),
                ArgValue::Real(r) => format!("real {r}"),
                ArgValue::String(x) => format!("str {}", s(st, x)),
                ArgValue::Pointer(p) => format!("ptr {p:#x}"),
                ArgValue::Bool(b) => format!("bool {b}"),
                other => format!("{other:?}"),
            };
            (s(st, a.key).to_owned(), v)
        })
        .collect()
}

/// A trace of every event type, on two providers, with table and inline
/// references, at 2 GHz ticks.
fn every_event() -> Vec<u8> {
    let mut f = Fxt::new();
    f.provider_info(7, "test_provider");
    f.initialization(2_000_000_000);
    f.string(1, "cat");
    f.string(2, "table_name");
    f.thread(1, 100, 101);
    f.kernel_object(1, 100, S::Inline("my_process"), &[]);
    f.kernel_object(2, 101, S::Table(2), &[A::Koid(S::Inline("process"), 100)]);
    // Begin at 1 µs (2000 ticks) with args, end at 5 µs with one more.
    f.event(
        BEGIN,
        2_000,
        T::Table(1),
        S::Table(1),
        S::Inline("outer"),
        &[
            A::I32(S::Inline("Someint32"), -7),
            A::U32(S::Inline("Someuint32"), 2145),
            A::I64(S::Inline("Someint64"), -234_516_543_631_231),
            A::U64(S::Inline("Someuint64"), 423_621_626_134_123_415),
            A::F64(S::Inline("Somedouble"), 2.5),
            A::Str(S::Inline("ping"), S::Inline("pong")),
            A::Ptr(S::Inline("somepointer"), 0xabcd),
            A::Koid(S::Inline("somekoid"), 18),
            A::Bool(S::Inline("somebool"), true),
            A::Null(S::Inline("SomeNullArg")),
        ],
        &[],
    );
    f.event(
        COMPLETE,
        4_000,
        T::Inline(100, 101),
        S::Inline("cat"),
        S::Inline("inner"),
        &[],
        &[6_000],
    );
    f.event(
        INSTANT,
        6_000,
        T::Table(1),
        S::Table(1),
        S::Inline("mark"),
        &[],
        &[],
    );
    f.event(
        END,
        10_000,
        T::Table(1),
        S::Inline(""),
        S::Inline(""),
        &[A::Str(S::Inline("result"), S::Table(2))],
        &[],
    );
    // A counter with two series and a string (not numeric).
    f.event(
        COUNTER,
        12_000,
        T::Table(1),
        S::Table(1),
        S::Inline("cpu_usage"),
        &[
            A::F64(S::Inline("average"), 30.5),
            A::U32(S::Inline("max"), 90),
            A::Str(S::Inline("note"), S::Inline("x")),
        ],
        &[3],
    );
    // Async slices of correlation id 42, on a second provider whose
    // string 1 means something else.
    f.provider_info(8, "other");
    f.string(1, "async_cat");
    f.event(
        ASYNC_BEGIN,
        20,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("load"),
        &[],
        &[42],
    );
    f.event(
        ASYNC_INSTANT,
        30,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("load"),
        &[],
        &[42],
    );
    f.event(
        ASYNC_END,
        40,
        T::Inline(200, 202),
        S::Table(1),
        S::Inline("load"),
        &[],
        &[42],
    );
    // A flow from a slice on 201 to a slice on 202 through a step.
    f.event(
        COMPLETE,
        50,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("send"),
        &[],
        &[60],
    );
    f.event(
        FLOW_BEGIN,
        50,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("f"),
        &[],
        &[9],
    );
    f.event(
        COMPLETE,
        70,
        T::Inline(200, 202),
        S::Table(1),
        S::Inline("relay"),
        &[],
        &[80],
    );
    f.event(
        FLOW_STEP,
        70,
        T::Inline(200, 202),
        S::Table(1),
        S::Inline("f"),
        &[],
        &[9],
    );
    f.event(
        COMPLETE,
        90,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("recv"),
        &[],
        &[95],
    );
    f.event(
        FLOW_END,
        90,
        T::Inline(200, 201),
        S::Table(1),
        S::Inline("f"),
        &[],
        &[9],
    );
    // Back to the first provider: its tables still hold.
    f.provider_section(7);
    f.event(
        INSTANT,
        200_000,
        T::Table(1),
        S::Table(1),
        S::Table(2),
        &[],
        &[],
    );
    f.bytes()
}

/// Every event type loads into upstream's tables, whatever the chunks:
/// slices with their args (an end's args joining its begin's), the tick
/// rate applied, counters named `event:arg:id`, async slices on one
/// legacy async track, a flow chain across threads, and the names the
/// kernel objects give.
#[test]
fn every_event_type_loads_into_the_tables() {
    let bytes = every_event();
    for step in [bytes.len(), 1, 3, 8, 13] {
        let st = load_chunks(&bytes, step);
        let slices: Vec<(i64, i64, &str, u32)> = st
            .slices
            .iter()
            .map(|x| (x.ts, x.dur, s(&st, x.name), x.depth))
            .collect();
        assert_eq!(
            slices,
            [
                (20, 20, "load", 0),
                (30, 0, "load", 1),
                (50, 10, "send", 0),
                (70, 10, "relay", 0),
                (90, 5, "recv", 0),
                (1_000, 4_000, "outer", 0),
                (2_000, 1_000, "inner", 1),
                (3_000, 0, "mark", 1),
                (100_000, 0, "table_name", 0),
            ],
            "step {step}"
        );
        let outer = &st.slices[5];
        assert_eq!(s(&st, outer.category), "cat");
        let a = args(&st, outer.arg_set_id.get());
        let expect = [
            ("Someint32", "int -7"),
            ("Someuint32", "int 2145"),
            ("Someint64", "int -234516543631231"),
            ("Someuint64", "int 423621626134123415"),
            ("Somedouble", "real 2.5"),
            ("ping", "str pong"),
            ("somepointer", "ptr 0xabcd"),
            ("somekoid", "int 18"),
            ("somebool", "bool true"),
            ("SomeNullArg", "str null"),
            ("result", "str table_name"),
        ];
        let expect: Vec<(String, String)> = expect
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(a, expect);
        // The first provider's thread 101 of process 100, named by the
        // kernel objects.
        let track = &st.tracks[outer.track_id as usize];
        let thread = &st.threads[track.utid.unwrap() as usize];
        assert_eq!((thread.tid, s(&st, thread.name)), (101, "table_name"));
        let process = &st.processes[thread.upid.unwrap() as usize];
        assert_eq!((process.pid, s(&st, process.name)), (100, "my_process"));
        // The second provider's category.
        assert_eq!(s(&st, st.slices[0].category), "async_cat");
        // The async slices share one legacy async track.
        let async_track = &st.tracks[st.slices[0].track_id as usize];
        assert_eq!(st.slices[1].track_id, st.slices[0].track_id);
        assert_eq!(
            s(&st, async_track.classification),
            "legacy_async_global_slice"
        );
        // Counters: one track per numeric arg, the string counted.
        let counters: Vec<(i64, f64, &str)> = st
            .counters
            .iter()
            .map(|c| (c.ts, c.value, s(&st, st.tracks[c.track_id as usize].name)))
            .collect();
        assert_eq!(
            counters,
            [
                (6_000, 30.5, "cpu_usage:average:3"),
                (6_000, 90.0, "cpu_usage:max:3")
            ]
        );
        assert_eq!(st.stats.get("fuchsia_non_numeric_counters"), 1);
        let flows: Vec<(u32, u32)> = st.flows.iter().map(|f| (f.slice_out, f.slice_in)).collect();
        assert_eq!(flows, [(2, 3), (3, 4)]);
    }
}

/// Scheduler records fill `sched_slice` and `thread_state`: a switch
/// closes the outgoing thread's slice in the state it gives and runs the
/// incoming one at its weight; a wakeup opens `W` with its waker; idle
/// weights and the legacy switch's idle threads are left out.
#[test]
fn scheduler_records_fill_sched_and_thread_state() {
    let mut f = Fxt::new();
    f.kernel_object(2, 11, S::Inline("a"), &[A::Koid(S::Inline("process"), 10)]);
    f.kernel_object(2, 12, S::Inline("b"), &[A::Koid(S::Inline("process"), 10)]);
    let weight = |w: i32| {
        [
            A::I32(S::Inline("incoming_weight"), w),
            A::I32(S::Inline("outgoing_weight"), i32::MIN),
        ]
    };
    f.context_switch(100, 1, 0, 99, 11, &weight(3122));
    f.wakeup(
        150,
        2,
        12,
        &[
            A::I32(S::Inline("weight"), 5),
            A::Koid(S::Inline("waker"), 11),
        ],
    );
    // 11 blocks (3: S), 12 runs.
    f.context_switch(
        200,
        1,
        3,
        11,
        12,
        &[
            A::I32(S::Inline("incoming_weight"), 7),
            A::I32(S::Inline("outgoing_weight"), 3122),
        ],
    );
    // A legacy switch from 12 (pid 10, prio 20) to an idle thread.
    f.legacy_switch(300, 1, 1, T::Inline(10, 12), T::Inline(0, 0), 20, 0);
    // A weight of the wrong type drops the record.
    f.context_switch(
        400,
        1,
        0,
        12,
        11,
        &[A::U32(S::Inline("incoming_weight"), 1)],
    );
    let st = load_chunks(&f.bytes(), 5);
    let tid = |utid: u32| st.threads[utid as usize].tid;
    let sched: Vec<(i64, i64, i64, &str, i32, u32)> = st
        .sched
        .slices
        .iter()
        .map(|r| {
            (
                r.ts,
                r.dur,
                tid(r.utid),
                s(&st, r.end_state),
                r.priority,
                r.ucpu,
            )
        })
        .collect();
    assert_eq!(
        sched,
        [(100, 100, 11, "S", 3122, 1), (200, 100, 12, "R", 7, 1)]
    );
    let states: Vec<(i64, i64, i64, &str)> = st
        .sched
        .thread_states
        .iter()
        .map(|r| (r.ts, r.dur, tid(r.utid), s(&st, r.state)))
        .collect();
    assert_eq!(
        states,
        [
            (100, 100, 11, "Running"),
            (150, 50, 12, "W"),
            (200, -1, 11, "S"),
            (200, 100, 12, "Running"),
            (300, -1, 12, "R"),
        ]
    );
    let wake = &st.sched.thread_states[1];
    assert_eq!(wake.waker_utid.map(tid), Some(11));
    assert_eq!(wake.waker_id, Some(0));
    assert_eq!(st.stats.get("fuchsia_invalid_event_arg_type"), 1);
}

/// Hostile records are counted, not read past: an argument running past
/// its record, a reference to a string no table holds, a record of an
/// undescribed provider; a record of size 0 ends the load with an error.
#[test]
fn hostile_records_are_counted_and_size_zero_is_an_error() {
    let mut f = Fxt::new();
    f.event(
        INSTANT,
        1,
        T::Inline(1, 2),
        S::Table(5),
        S::Inline("x"),
        &[],
        &[],
    );
    // An i64 argument whose value word is missing: cut the last word and
    // shrink the record's size to match.
    f.event(
        INSTANT,
        2,
        T::Inline(1, 2),
        S::Inline("c"),
        S::Inline("y"),
        &[A::I64(S::Inline("v"), 1)],
        &[],
    );
    f.words.pop();
    let header = f.words.len() - 8;
    f.words[header] -= 1 << 4;
    // A complete event without its end.
    f.event(
        COMPLETE,
        3,
        T::Inline(1, 2),
        S::Inline("c"),
        S::Inline("z"),
        &[],
        &[],
    );
    f.provider_section(99);
    f.event(
        INSTANT,
        4,
        T::Inline(1, 2),
        S::Inline("c"),
        S::Inline("w"),
        &[],
        &[],
    );
    let st = load_chunks(&f.bytes(), 4);
    assert!(st.slices.is_empty());
    assert_eq!(st.stats.get("fuchsia_invalid_string_ref"), 1);
    assert_eq!(st.stats.get("fuchsia_record_read_error"), 2);
    assert_eq!(st.stats.get("fuchsia_invalid_event"), 1);

    let mut bytes = Fxt::new().bytes();
    bytes.extend_from_slice(&[4, 0, 0, 0, 0, 0, 0, 0]);
    let mut l = Loader::new();
    let err = l.push(&bytes).and_then(|()| l.finish().map(|_| ()));
    assert!(err.is_err());
}

/// Random bytes after the magic never panic, and every push is read in
/// time linear in its bytes (bounded work per byte).
#[test]
fn mutated_traces_never_panic() {
    let base = every_event();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..300 {
        let mut b = base.clone();
        for _ in 0..(round % 7 + 1) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = 8 + (seed as usize) % (b.len() - 8);
            b[i] = (seed >> 32) as u8;
        }
        let mut l = Loader::new();
        let _ = l.push(&b).and_then(|()| l.finish().map(|_| ()));
    }
}

/// A gzip-compressed FXT file is told and read through the gzip layer.
#[test]
fn a_gzipped_trace_loads() {
    use std::io::Write;
    let bytes = every_event();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let gz = gz.finish().unwrap();
    let st = crate::driver::load_reader(&gz[..]).unwrap();
    assert_eq!(st.slices.len(), 9);
}

/// Upstream's diff-test queries answer over a loaded FXT trace: `sched`
/// joined to `thread`, `counters` by track name, `flow`, the `args` of
/// the slices and tracks.
#[cfg(feature = "sql")]
#[test]
fn upstreams_queries_answer() {
    use crate::{TraceProcessor, Value};
    let mut f = Fxt::new();
    f.kernel_object(2, 11, S::Inline("a"), &[A::Koid(S::Inline("process"), 10)]);
    f.context_switch(
        100,
        3,
        0,
        99,
        11,
        &[
            A::I32(S::Inline("incoming_weight"), 3122),
            A::I32(S::Inline("outgoing_weight"), i32::MIN),
        ],
    );
    f.context_switch(
        200,
        3,
        3,
        11,
        99,
        &[
            A::I32(S::Inline("incoming_weight"), i32::MIN),
            A::I32(S::Inline("outgoing_weight"), 3122),
        ],
    );
    let mut bytes = f.bytes();
    bytes.extend_from_slice(&every_event()[8..]);
    let tp = TraceProcessor::from_bytes(&bytes).expect("load");
    let rows = |sql: &str| tp.query(sql).expect(sql).rows;
    let t = |v: &str| Value::Text(v.to_owned());
    assert_eq!(
        rows(
            "SELECT ts, cpu, dur, end_state, priority, tid FROM sched JOIN thread USING(utid) ORDER BY ts"
        ),
        [vec![
            Value::Int(100),
            Value::Int(3),
            Value::Int(100),
            t("S"),
            Value::Int(3122),
            Value::Int(11)
        ]]
    );
    assert_eq!(
        rows("SELECT ts, value, name FROM counters ORDER BY ts, name"),
        [
            vec![
                Value::Int(6_000),
                Value::Real(30.5),
                t("cpu_usage:average:3")
            ],
            vec![Value::Int(6_000), Value::Real(90.0), t("cpu_usage:max:3")],
        ]
    );
    assert_eq!(
        rows("SELECT slice_out, slice_in FROM flow ORDER BY id"),
        [
            vec![Value::Int(2), Value::Int(3)],
            vec![Value::Int(3), Value::Int(4)]
        ]
    );
    let keys = rows(
        "SELECT key, value_type, display_value FROM args WHERE key GLOB 'Some*' OR key IN ('somepointer', 'somebool', 'scope', 'source') GROUP BY key ORDER BY key",
    );
    assert_eq!(
        keys,
        [
            vec![t("SomeNullArg"), t("string"), t("null")],
            vec![t("Somedouble"), t("real"), t("2.5")],
            vec![t("Someint32"), t("int"), t("-7")],
            vec![t("Someint64"), t("int"), t("-234516543631231")],
            vec![t("Someuint32"), t("int"), t("2145")],
            vec![t("Someuint64"), t("int"), t("423621626134123415")],
            vec![t("scope"), t("string"), Value::Null],
            vec![t("somebool"), t("bool"), t("true")],
            vec![t("somepointer"), t("pointer"), t("0xabcd")],
            vec![t("source"), t("string"), t("chrome")],
        ]
    );
}
