//! The ART method reader against traces written here from the formats'
//! descriptions (Android's `dmtrace` layout: the text header, the `SLOW`
//! data header and its records; the streaming layout; the v2 entries with
//! LEB128 deltas), not from the reader. No real method trace was available
//! to check against (Perfetto keeps its samples in a cloud bucket).

use crate::Loader;
use crate::storage::Storage;
use crate::storage::args::ArgValue;

const METHODS: &str = "0x1000\tcom/example/Main\trun\t()V\tMain.java\t12\n\
0x1004\tjava/lang/Object\t<init>\t()V\tObject.java\n";

/// A `SLOW` data header: version, start µs, record size (v3).
fn data_header(version: u16, start_us: u64, record_size: u16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(b"SLOW");
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&32u16.to_le_bytes());
    h.extend_from_slice(&start_us.to_le_bytes());
    h.extend_from_slice(&record_size.to_le_bytes());
    h.resize(32, 0);
    h
}

/// A v2/v3 record: thread, method | action, the clocks' µs deltas.
fn record(tid: u16, method: u32, action: u32, deltas: &[u32]) -> Vec<u8> {
    let mut r = tid.to_le_bytes().to_vec();
    r.extend_from_slice(&(method | action).to_le_bytes());
    for d in deltas {
        r.extend_from_slice(&d.to_le_bytes());
    }
    r
}

/// Method calls on two threads: 7 runs Main.run from 10 to 50 µs with
/// Object.<init> inside from 20 to 30; 8 enters Main.run at 40 and never
/// leaves.
fn calls(dual: bool) -> Vec<Vec<u8>> {
    let d = |wall: u32| {
        if dual {
            vec![wall / 2, wall]
        } else {
            vec![wall]
        }
    };
    vec![
        record(7, 0x1000, 0, &d(10)),
        record(7, 0x1004, 0, &d(20)),
        record(7, 0x1004, 1, &d(30)),
        record(8, 0x1000, 0, &d(40)),
        record(7, 0x1000, 2, &d(50)),
    ]
}

fn load(bytes: &[u8], step: usize) -> Storage {
    let mut l = Loader::new();
    for c in bytes.chunks(step) {
        l.push(c).unwrap();
    }
    l.finish().unwrap()
}

fn text(st: &Storage, id: crate::column_store::strings::StrId) -> &str {
    st.strings.get(id).unwrap_or("")
}

/// The slices of a method trace: (ts, dur, name, thread name, pathname,
/// line).
fn slices(st: &Storage) -> Vec<(i64, i64, String, String, String, Option<i64>)> {
    st.slices
        .iter()
        .map(|s| {
            let track = &st.tracks[s.track_id as usize];
            assert_eq!(text(st, track.classification), "art_method_tracing");
            let thread = &st.threads[track.utid.unwrap() as usize];
            let mut path = String::new();
            let mut line = None;
            for a in st.args.set(s.arg_set_id.get().unwrap_or(u32::MAX)) {
                match (text(st, a.key), a.value) {
                    ("pathname", ArgValue::String(p)) => path = text(st, p).to_owned(),
                    ("line_number", ArgValue::Int(l)) => line = Some(l),
                    _ => {}
                }
            }
            (
                s.ts,
                s.dur,
                text(st, s.name).to_owned(),
                text(st, thread.name).to_owned(),
                path,
                line,
            )
        })
        .collect()
}

fn expected(start_ns: i64) -> Vec<(i64, i64, String, String, String, Option<i64>)> {
    let run = "com/example/Main.run: ()V".to_owned();
    let init = "java/lang/Object.<init>: ()V".to_owned();
    let main_path = "com/example/Main.java".to_owned();
    vec![
        (
            start_ns + 10_000,
            40_000,
            run.clone(),
            "main".into(),
            main_path.clone(),
            Some(12),
        ),
        (
            start_ns + 20_000,
            10_000,
            init,
            "main".into(),
            "Object.java".into(),
            None,
        ),
        (
            start_ns + 40_000,
            -1,
            run,
            "worker".into(),
            main_path,
            Some(12),
        ),
    ]
}

/// v1 with its text header (version 3, the dual clock: the wall delta is
/// the second): each enter opens a slice on its thread's track, each exit
/// closes it, whatever the chunks.
#[test]
fn a_v1_trace_with_a_text_header_becomes_slices() {
    let mut b = format!(
        "*version\n3\ndata-file-overflow=false\nclock=dual\n*threads\n7\tmain\n8\tworker\n*methods\n{METHODS}*end\n"
    )
    .into_bytes();
    b.extend(data_header(3, 1_000, 14));
    for r in calls(true) {
        b.extend(r);
    }
    for step in [b.len(), 1, 5] {
        assert_eq!(slices(&load(&b, step)), expected(1_000_000), "step {step}");
    }
}

/// v1 streaming: the header first, methods and threads as records of
/// thread 0, the records read once the summary gives the clock (wall).
#[test]
fn a_streaming_v1_trace_becomes_slices() {
    let mut b = data_header(0xf3, 2_000, 14);
    for line in METHODS.lines() {
        b.extend_from_slice(&[0, 0, 1]);
        b.extend_from_slice(&(line.len() as u16).to_le_bytes());
        b.extend_from_slice(line.as_bytes());
    }
    for (tid, name) in [(7u16, "main"), (8, "worker")] {
        b.extend_from_slice(&[0, 0, 2]);
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&(name.len() as u16).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
    }
    for mut r in calls(false) {
        // v3 records are 14 bytes: pad the wall-only ones.
        r.resize(14, 0);
        b.extend(r);
    }
    let summary = "*version\n3\nclock=wall\n*threads\n7\tmain\n*methods\n*end\n";
    b.extend_from_slice(&[0, 0, 3]);
    b.extend_from_slice(&(summary.len() as u32).to_le_bytes());
    b.extend_from_slice(summary.as_bytes());
    for step in [b.len(), 3] {
        assert_eq!(slices(&load(&b, step)), expected(2_000_000), "step {step}");
    }
}

/// A signed LEB128 number.
fn sleb(mut v: i64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        out.push(if done { byte } else { byte | 0x80 });
        if done {
            return;
        }
    }
}

/// v2: thread and method entries, a block of LEB128-packed records per
/// thread (an exit's method is the top of the thread's stack), and the
/// summary's `key=value` lines stored as metadata.
#[test]
fn a_v2_trace_becomes_slices_and_metadata() {
    let mut b = Vec::new();
    b.extend_from_slice(b"SLOW");
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&1_000_000u64.to_le_bytes()); // start, ns
    b.extend_from_slice(&0u64.to_le_bytes()); // start tsc
    b.extend_from_slice(&0u64.to_le_bytes()); // tsc frequency: ns
    b.resize(32, 0);
    for (tid, name) in [(7u32, "main\n"), (8, "worker")] {
        b.push(0);
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&(name.len() as u16).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
    }
    for (id, m) in [
        (0x1000u64, "com/example/Main\trun\t()V\tMain.java\t12"),
        (0x1004, "java/lang/Object\t<init>\t()V\tObject.java"),
    ] {
        b.push(1);
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&(m.len() as u16).to_le_bytes());
        b.extend_from_slice(m.as_bytes());
    }
    // (time ns, action, method on enter)
    let block = |records: &[(i64, i64, Option<i64>)]| {
        let mut out = Vec::new();
        let (mut prev_t, mut prev_m) = (0, 0);
        for &(t, action, m) in records {
            let v = (t << 2) | action;
            sleb(v - prev_t, &mut out);
            prev_t = v;
            if let Some(m) = m {
                sleb(m - prev_m, &mut out);
                prev_m = m;
            }
        }
        out
    };
    let t7 = block(&[
        (10_000, 0, Some(0x1000)),
        (20_000, 0, Some(0x1004)),
        (30_000, 1, None),
        (50_000, 2, None),
    ]);
    let t8 = block(&[(40_000, 0, Some(0x1000))]);
    for (tid, n, blk) in [(7u32, 4u32, t7), (8, 1, t8)] {
        b.push(2);
        b.extend_from_slice(&tid.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes()[..3]);
        b.extend_from_slice(&(blk.len() as u32).to_le_bytes());
        b.extend(blk);
    }
    b.extend_from_slice(&[3, 0]);
    b.extend_from_slice(b"vm=art\npid=1234\n*end\n");
    for step in [b.len(), 2] {
        let st = load(&b, step);
        assert_eq!(slices(&st), expected(1_000_000), "step {step}");
        assert_eq!(st.metadata_int("pid"), Some(1234));
    }
}

/// Incomplete traces are errors; mutated ones never panic.
#[test]
fn incomplete_traces_are_errors_and_mutations_never_panic() {
    let mut v2 = b"SLOW\x04\x00".to_vec();
    v2.resize(32, 0);
    let mut l = Loader::new();
    l.push(&v2).unwrap();
    assert!(l.finish().is_err());
    let mut v1 = format!("*version\n3\nclock=wall\n*threads\n7\tmain\n*methods\n{METHODS}*end\n")
        .into_bytes();
    v1.extend(data_header(3, 0, 14));
    v1.extend_from_slice(&[7, 0, 0]);
    let mut l = Loader::new();
    let res = l.push(&v1).and_then(|()| l.finish().map(|_| ()));
    assert!(res.is_err());

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..300 {
        let mut b = v1.clone();
        for _ in 0..(round % 5 + 1) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed as usize) % b.len();
            b[i] = (seed >> 40) as u8;
        }
        let mut l = Loader::new();
        let _ = l.push(&b).and_then(|()| l.finish().map(|_| ()));
    }
}

/// Upstream's diff-test query answers: method slices by duration on
/// `thread_slice` with their thread names and pathnames, on
/// `art_method_tracing` thread tracks.
#[cfg(feature = "sql")]
#[test]
fn upstreams_queries_answer() {
    use crate::{TraceProcessor, Value};
    let mut b =
        format!("*version\n3\nclock=dual\n*threads\n7\tmain\n8\tworker\n*methods\n{METHODS}*end\n")
            .into_bytes();
    b.extend(data_header(3, 1_000, 14));
    for r in calls(true) {
        b.extend(r);
    }
    let tp = TraceProcessor::from_bytes(&b).expect("load");
    let rows = |sql: &str| tp.query(sql).expect(sql).rows;
    let t = |v: &str| Value::Text(v.to_owned());
    assert_eq!(
        rows(
            "INCLUDE PERFETTO MODULE slices.with_context; \
             SELECT ts, dur, name, thread_name, extract_arg(arg_set_id, 'pathname') AS pathname \
             FROM thread_slice ORDER BY dur DESC"
        ),
        [
            vec![
                Value::Int(1_010_000),
                Value::Int(40_000),
                t("com/example/Main.run: ()V"),
                t("main"),
                t("com/example/Main.java")
            ],
            vec![
                Value::Int(1_020_000),
                Value::Int(10_000),
                t("java/lang/Object.<init>: ()V"),
                t("main"),
                t("Object.java")
            ],
            vec![
                Value::Int(1_040_000),
                Value::Int(-1),
                t("com/example/Main.run: ()V"),
                t("worker"),
                t("com/example/Main.java")
            ],
        ]
    );
    assert_eq!(
        rows(
            "SELECT DISTINCT t.type, t.name, thread.name FROM track t \
             JOIN slice s ON s.track_id = t.id JOIN thread_track tt ON tt.id = t.id \
             JOIN thread USING (utid) ORDER BY thread.name"
        ),
        [
            vec![t("art_method_tracing"), Value::Null, t("main")],
            vec![t("art_method_tracing"), Value::Null, t("worker")],
        ]
    );
}
