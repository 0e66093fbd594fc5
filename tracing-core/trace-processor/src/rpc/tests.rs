//! The RPC core end to end, bytes in and bytes out, read back with the
//! generated decoders: batch splitting, cell encoding, errors, status, the
//! framed stream's sequence numbers, loading in chunks and restoring.

use zerotrace_protos::protos::trace_processor_rpc::TraceProcessorMethod;
use zerotrace_protos::protos::{
    AppendTraceDataResultDecoder, QueryArgs, QueryResultDecoder, StatusResultDecoder, TracePacket,
    TraceProcessorRpcDecoder, TraceProcessorRpcStream, TraceProcessorRpcStreamDecoder,
};

use super::batches::BatchLimits;
use super::decode::{DecodedResult, decode_query_result};
use super::*;
use crate::Value;

fn query_args(sql: &str) -> Vec<u8> {
    let mut w = HeapWriter::new();
    QueryArgs::from_message(w.root()).set_sql_query(sql);
    w.to_vec()
}

fn query(s: &mut RpcSession, sql: &str) -> (Vec<Vec<u8>>, DecodedResult) {
    let frames = s.query(&query_args(sql));
    let all: Vec<u8> = frames.concat();
    let d = decode_query_result(&all).expect("decodes");
    (frames, d)
}

/// `n` rows of (i, i * 0.5, 'sN').
fn series(n: usize) -> String {
    format!(
        "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < {n}) \
         SELECT i, i * 0.5 AS half, 's' || i AS name FROM s"
    )
}

#[test]
fn rows_come_back_in_batches_of_whole_rows() {
    let mut s = RpcSession::new().unwrap();
    s.set_batch_limits(BatchLimits {
        cells_per_batch: 10,
        split_threshold: usize::MAX,
    });
    let (frames, d) = query(&mut s, &series(7));
    // Three cells a row, ten cells a batch at most: three rows a batch.
    assert_eq!(frames.len(), 3);
    assert_eq!(d.batches, 3);
    assert!(d.complete);
    assert_eq!(d.columns, ["i", "half", "name"]);
    assert_eq!(d.rows.len(), 7);
    for (i, row) in d.rows.iter().enumerate() {
        assert_eq!(
            row,
            &[
                Value::Int(i as i64),
                Value::Real(i as f64 * 0.5),
                Value::Text(format!("s{i}"))
            ]
        );
    }
    // Only the first message names the columns; only the last is last.
    for (k, f) in frames.iter().enumerate() {
        let r = QueryResultDecoder::new(f);
        assert_eq!(r.column_names().count(), if k == 0 { 3 } else { 0 });
        let b = r.batch().next().unwrap();
        assert_eq!(b.is_last_batch(), (k == 2).then_some(true));
        assert_eq!(b.cells().count(), if k == 2 { 3 } else { 9 });
    }
}

#[test]
fn a_batch_ends_once_its_estimate_passes_the_threshold() {
    let mut s = RpcSession::new().unwrap();
    // Each row: 4 (int) + 8 (real) + "sN\0" + 4: past 16 + 40 after two rows.
    s.set_batch_limits(BatchLimits {
        cells_per_batch: 1000,
        split_threshold: 40,
    });
    let (frames, d) = query(&mut s, &series(5));
    assert_eq!(d.rows.len(), 5);
    let sizes: Vec<usize> = frames
        .iter()
        .map(|f| {
            QueryResultDecoder::new(f)
                .batch()
                .next()
                .unwrap()
                .cells()
                .count()
                / 3
        })
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
}

#[test]
fn upstream_limits_cut_a_large_result_at_fifty_thousand_cells() {
    let mut s = RpcSession::new().unwrap();
    let (frames, d) = query(
        &mut s,
        "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < 60000) \
         SELECT NULL FROM s",
    );
    assert_eq!(d.rows.len(), 60000);
    assert_eq!(frames.len(), 2);
    let first = QueryResultDecoder::new(&frames[0]);
    assert_eq!(first.batch().next().unwrap().cells().count(), 50000);
    // Integers count 4 bytes each towards 128 KiB (from 16): the batch
    // ends before the row that finds the estimate past it.
    let (frames, d) = query(
        &mut s,
        "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < 60000) \
         SELECT i FROM s",
    );
    assert_eq!(d.rows.len(), 60000);
    let first = QueryResultDecoder::new(&frames[0]);
    assert_eq!(first.batch().next().unwrap().cells().count(), 32765);
}

#[test]
fn every_cell_type_round_trips_and_doubles_sit_on_8_byte_boundaries() {
    let mut s = RpcSession::new().unwrap();
    let (frames, d) = query(
        &mut s,
        "SELECT NULL, -5, 1.25, 'héllo', x'00ff', 'a' || char(0) || 'b', 9223372036854775807",
    );
    assert_eq!(
        d.rows,
        [[
            Value::Null,
            Value::Int(-5),
            Value::Real(1.25),
            Value::Text("héllo".into()),
            Value::Blob(vec![0, 0xff]),
            // A string ends at its first NUL, as upstream copies it.
            Value::Text("a".into()),
            Value::Int(i64::MAX),
        ]]
    );
    let f = &frames[0];
    let at = f
        .windows(10)
        .position(|w| w[0] == 0x1a && w[1] == 8 && w[2..] == 1.25f64.to_le_bytes())
        .expect("the doubles' field");
    assert_eq!((at + 2) % 8, 0, "payload at {}", at + 2);
}

#[test]
fn only_the_last_statement_answers_and_statements_are_counted() {
    let mut s = RpcSession::new().unwrap();
    let frames = s.query(&query_args(
        "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2); SELECT 7 AS a; SELECT x FROM t",
    ));
    let r = QueryResultDecoder::new(&frames[0]);
    assert_eq!(r.statement_count(), Some(4));
    assert_eq!(r.statement_with_output_count(), Some(2));
    assert_eq!(r.last_statement_sql(), Some("SELECT x FROM t"));
    let d = decode_query_result(&frames.concat()).unwrap();
    assert_eq!(d.columns, ["x"]);
    assert_eq!(d.rows, [[Value::Int(1)], [Value::Int(2)]]);
}

#[test]
fn bad_sql_is_reported_in_the_result_with_a_traceback() {
    let mut s = RpcSession::new().unwrap();
    let (frames, d) = query(&mut s, "SELECT 1;\nSELECT nope FROM thread");
    assert_eq!(frames.len(), 1);
    assert!(d.columns.is_empty() && d.rows.is_empty());
    assert_eq!(d.batches, 1);
    assert!(d.complete);
    let e = d.error.unwrap();
    assert!(
        e.starts_with("Traceback (most recent call last):\n  File \"stdin\" line 2 col 8\n"),
        "{e}"
    );
    assert!(e.ends_with("no such column: nope"), "{e}");
}

#[test]
fn status_names_the_loaded_trace_and_the_api_version() {
    let s = RpcSession::new().unwrap();
    let st = s.status();
    let d = StatusResultDecoder::new(&st);
    assert_eq!(d.loaded_trace_name(), Some(""));
    assert_eq!(d.api_version(), Some(API_VERSION));
    assert!(
        d.human_readable_version()
            .unwrap()
            .starts_with("zerotrace v")
    );
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let s = RpcSession::with_trace(tp, Some("t.pftrace".into()));
    assert_eq!(
        StatusResultDecoder::new(&s.status()).loaded_trace_name(),
        Some("t.pftrace")
    );
}

/// A trace naming one thread, as `Trace` bytes.
fn thread_trace() -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        p.set_trusted_packet_sequence_id(1);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(10);
        let mut th = td.begin_thread();
        th.set_pid(5).set_tid(6).set_thread_name("worker");
    }
    let packet = w.to_vec();
    let mut out = vec![0x0a];
    let mut len = [0u8; 10];
    let n = batches_put_varint(&mut len, packet.len() as u64);
    out.extend_from_slice(&len[..n]);
    out.extend_from_slice(&packet);
    out
}

fn batches_put_varint(out: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        out[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    i + 1
}

#[test]
fn a_trace_parsed_in_chunks_answers_after_notify_eof() {
    let mut s = RpcSession::new().unwrap();
    let trace = thread_trace();
    let (a, b) = trace.split_at(trace.len() / 2);
    for chunk in [a, b] {
        let r = s.parse(chunk);
        assert_eq!(AppendTraceDataResultDecoder::new(&r).error(), None);
    }
    // Not yet whole: the query says so.
    let (_, d) = query(&mut s, "SELECT tid FROM thread");
    assert!(d.error.unwrap().contains("still loading"));
    s.notify_eof().unwrap();
    let (_, d) = query(&mut s, "SELECT name FROM thread WHERE tid = 6");
    assert_eq!(d.rows, [[Value::Text("worker".into())]]);
    // A new trace after the end replaces it.
    s.parse(&[]);
    s.notify_eof().unwrap();
    let (_, d) = query(&mut s, "SELECT name FROM thread WHERE tid = 6");
    assert!(d.rows.is_empty());
}

#[test]
fn bytes_that_do_not_load_are_an_append_error() {
    let mut s = RpcSession::new().unwrap();
    let r = s.parse(b"this is not a trace at all");
    let err = AppendTraceDataResultDecoder::new(&r)
        .error()
        .map(str::to_owned);
    let err = err.or_else(|| s.notify_eof().err()).expect("an error");
    assert!(!err.is_empty());
    let (_, d) = query(&mut s, "SELECT 1");
    assert!(d.error.is_some());
}

#[test]
fn restoring_drops_what_the_client_created() {
    let mut s = RpcSession::new().unwrap();
    query(
        &mut s,
        "CREATE TABLE mine(x); CREATE VIEW v AS SELECT 1; CREATE INDEX i ON mine(x)",
    );
    let (_, d) = query(&mut s, "SELECT count(*) FROM mine");
    assert_eq!(d.error, None);
    s.restore_initial_tables();
    for q in ["SELECT * FROM mine", "SELECT * FROM v"] {
        let (_, d) = query(&mut s, q);
        assert!(d.error.unwrap().contains("no such table"), "{q}");
    }
    let (_, d) = query(&mut s, "SELECT count(*) FROM thread");
    assert_eq!(d.error, None);
}

#[test]
fn restoring_forgets_perfetto_sql_so_an_include_runs_again() {
    let mut s = RpcSession::new().unwrap();
    let setup = "INCLUDE PERFETTO MODULE time.conversion;
         CREATE PERFETTO MACRO m() RETURNS Expr AS 7;
         CREATE PERFETTO FUNCTION mine() RETURNS LONG AS SELECT 1;
         CREATE PERFETTO TABLE t AS SELECT m!() AS x";
    let (_, d) = query(&mut s, setup);
    assert_eq!(d.error, None);
    s.restore_initial_tables();
    for (q, why) in [
        ("SELECT * FROM t", "no such table"),
        ("SELECT m!()", "macro 'm' does not exist"),
        ("SELECT mine()", "no such function"),
    ] {
        let (_, d) = query(&mut s, q);
        assert!(
            d.error.as_deref().unwrap_or_default().contains(why),
            "{q}: {d:?}"
        );
    }
    // The same statements run again: the module is included anew, the
    // function is created without OR REPLACE.
    let (_, d) = query(&mut s, setup);
    assert_eq!(d.error, None);
    let (_, d) = query(&mut s, "SELECT x, time_to_us(3000), mine() FROM t");
    assert_eq!(d.error, None);
}

/// One stream entry requesting `method` with sequence number `seq`.
fn request(seq: i64, method: i32, sql: Option<&str>) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut s = TraceProcessorRpcStream::from_message(w.root());
        let mut m = s.add_msg();
        m.set_seq(seq).set_request_raw(method);
        if let Some(sql) = sql {
            m.begin_query_args().set_sql_query(sql);
        }
    }
    w.to_vec()
}

/// The messages of the answer frames.
fn responses(out: &RpcOutput) -> Vec<Vec<u8>> {
    out.frames
        .iter()
        .flat_map(|f| {
            TraceProcessorRpcStreamDecoder::new(f)
                .msg_bytes()
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_stream_answers_each_request_with_increasing_sequence_numbers() {
    let mut s = RpcSession::new().unwrap();
    s.set_batch_limits(BatchLimits {
        cells_per_batch: 3,
        split_threshold: usize::MAX,
    });
    let status = TraceProcessorMethod::TpmGetStatus as i32;
    let q = TraceProcessorMethod::TpmQueryStreaming as i32;
    let mut bytes = request(1, status, None);
    bytes.extend(request(2, q, Some(&series(2))));
    bytes.extend(request(3, 99, None));
    // Split anywhere: the answers are the same.
    let (a, b) = bytes.split_at(7);
    let mut out = s.rpc(a);
    let more = s.rpc(b);
    out.frames.extend(more.frames);
    assert!(!out.close && !more.close);
    let msgs = responses(&out);
    assert_eq!(msgs.len(), 4);
    let seqs: Vec<i64> = msgs
        .iter()
        .map(|m| TraceProcessorRpcDecoder::new(m).seq().unwrap())
        .collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    let m0 = TraceProcessorRpcDecoder::new(&msgs[0]);
    assert_eq!(m0.response(), Some(TraceProcessorMethod::TpmGetStatus));
    assert_eq!(m0.status().unwrap().api_version(), Some(API_VERSION));
    let mut body = Vec::new();
    for m in &msgs[1..3] {
        let m = TraceProcessorRpcDecoder::new(m);
        assert_eq!(m.response(), Some(TraceProcessorMethod::TpmQueryStreaming));
        body.extend_from_slice(m.query_result_bytes().unwrap());
    }
    let d = decode_query_result(&body).unwrap();
    assert_eq!(d.rows.len(), 2);
    assert!(d.complete);
    assert_eq!(
        TraceProcessorRpcDecoder::new(&msgs[3]).invalid_request_raw(),
        Some(99)
    );
}

#[test]
fn an_out_of_order_request_or_broken_framing_is_fatal() {
    let status = TraceProcessorMethod::TpmGetStatus as i32;
    let mut s = RpcSession::new().unwrap();
    assert!(!s.rpc(&request(1, status, None)).close);
    let out = s.rpc(&request(5, status, None));
    assert!(out.close);
    let msgs = responses(&out);
    let e = TraceProcessorRpcDecoder::new(&msgs[0])
        .fatal_error()
        .unwrap()
        .to_owned();
    assert_eq!(
        e,
        "RPC request out of order. Expected 2, got 5 (ERR:rpc_seq)"
    );
    // A restart from 0 is allowed.
    let mut s = RpcSession::new().unwrap();
    s.rpc(&request(1, status, None));
    assert!(!s.rpc(&request(0, status, None)).close);

    let mut s = RpcSession::new().unwrap();
    let out = s.rpc(&[0x08, 0x01]);
    assert!(out.close);
    let msgs = responses(&out);
    assert_eq!(
        TraceProcessorRpcDecoder::new(&msgs[0]).fatal_error(),
        Some("RPC framing error")
    );
}

#[test]
fn append_and_finalize_over_the_stream_load_a_trace() {
    let mut s = RpcSession::new().unwrap();
    let mut w = HeapWriter::new();
    {
        let mut st = TraceProcessorRpcStream::from_message(w.root());
        let mut m = st.add_msg();
        m.set_seq(1)
            .set_request(TraceProcessorMethod::TpmAppendTraceData)
            .set_append_trace_data(&thread_trace());
    }
    let mut bytes = w.to_vec();
    bytes.extend(request(
        2,
        TraceProcessorMethod::TpmFinalizeTraceData as i32,
        None,
    ));
    bytes.extend(request(
        3,
        TraceProcessorMethod::TpmQueryStreaming as i32,
        Some("SELECT name FROM thread WHERE tid = 6"),
    ));
    let msgs = responses(&s.rpc(&bytes));
    assert_eq!(msgs.len(), 3);
    let m = TraceProcessorRpcDecoder::new(&msgs[0]);
    assert_eq!(m.append_result().unwrap().error(), None);
    let m = TraceProcessorRpcDecoder::new(&msgs[1]);
    assert_eq!(m.finalize_data_result().unwrap().error(), None);
    let m = TraceProcessorRpcDecoder::new(&msgs[2]);
    let d = decode_query_result(m.query_result_bytes().unwrap()).unwrap();
    assert_eq!(d.rows, [[Value::Text("worker".into())]]);
}

#[test]
fn an_error_while_the_last_statement_steps_keeps_the_batches_already_sent() {
    let mut s = RpcSession::new().unwrap();
    s.set_batch_limits(BatchLimits {
        cells_per_batch: 3,
        split_threshold: usize::MAX,
    });
    let sql = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < 20) \
               SELECT CASE WHEN i < 7 THEN i ELSE abs(-9223372036854775807 - 1) END AS v FROM s";
    let mut sent = Vec::new();
    s.query_into(&query_args(sql), &mut |f| sent.push(f.to_vec()));
    let d = decode_query_result(&sent.concat()).unwrap();
    assert_eq!(d.columns, ["v"]);
    // Every row before the one that failed: two batches sent while
    // stepping, then the one being filled, ended by the error.
    assert_eq!(sent.len(), 3);
    assert_eq!(
        d.rows,
        (0..7).map(|i| vec![Value::Int(i)]).collect::<Vec<_>>()
    );
    assert!(d.complete);
    assert!(d.error.unwrap().contains("integer overflow"));
}

#[test]
fn whatever_follows_the_last_statement_the_answer_is_its_rows() {
    let mut s = RpcSession::new().unwrap();
    for sql in [
        "SELECT 1 AS a; SELECT 2 AS b",
        "SELECT 1 AS a; SELECT 2 AS b;;  \n",
        "SELECT 1 AS a; SELECT 2 AS b; -- a comment",
        "SELECT 2 AS b; /* c */",
    ] {
        let (_, d) = query(&mut s, sql);
        assert_eq!(d.columns, ["b"], "{sql}");
        assert_eq!(d.rows, [[Value::Int(2)]], "{sql}");
    }
}

mod hostage;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_gzip_trace_parsed_in_chunks_loads_as_the_plain_one() {
    // Two gzip members (as `cat a.gz b.gz` makes), cut into chunks of one
    // byte (the magic split), then of seven.
    let trace = thread_trace();
    let (a, b) = trace.split_at(5);
    let mut z = gzip(a);
    z.extend(gzip(b));
    let mut s = RpcSession::new().unwrap();
    s.parse(&z[..1]);
    for chunk in z[1..].chunks(7) {
        let r = s.parse(chunk);
        assert_eq!(AppendTraceDataResultDecoder::new(&r).error(), None);
    }
    s.notify_eof().unwrap();
    let (_, d) = query(&mut s, "SELECT name FROM thread WHERE tid = 6");
    assert_eq!(d.rows, [[Value::Text("worker".into())]]);
}

#[test]
fn a_gzip_trace_past_the_load_budget_is_an_append_error_naming_it() {
    let mut s = RpcSession::new().unwrap();
    s.set_load_options(LoadOptions {
        budget: crate::LoadBudget::with_max_memory(16),
        ..LoadOptions::default()
    });
    let r = s.parse(&gzip(&thread_trace()));
    // Said by this append or, if the inflater held the bytes back, by the end.
    let e = AppendTraceDataResultDecoder::new(&r)
        .error()
        .map(str::to_owned);
    let e = e.or_else(|| s.notify_eof().err()).expect("an error");
    assert!(e.contains("limit") || e.contains("budget"), "{e}");
    assert!(s.notify_eof().is_err());
}

#[test]
fn restoring_detaches_what_the_client_attached() {
    let mut s = RpcSession::new().unwrap();
    let (_, d) = query(
        &mut s,
        "ATTACH DATABASE ':memory:' AS other; CREATE TABLE other.t(x)",
    );
    assert_eq!(d.error, None);
    let list = "SELECT name FROM pragma_database_list WHERE name NOT IN ('main', 'temp')";
    let (_, d) = query(&mut s, list);
    assert_eq!(d.rows, [[Value::Text("other".into())]]);
    s.restore_initial_tables();
    let (_, d) = query(&mut s, list);
    assert_eq!(d.rows, Vec::<Vec<Value>>::new());
}

#[test]
fn methods_not_served_answer_their_result_with_an_error() {
    let mut s = RpcSession::new().unwrap();
    for (method, field) in [
        (TraceProcessorMethod::TpmComputeMetric as i32, 205),
        (TraceProcessorMethod::TpmSummarizeTrace as i32, 214),
        (TraceProcessorMethod::TpmDisableAndReadMetatrace as i32, 209),
        (21, 220),
    ] {
        let out = s.rpc(&request(0, method, None));
        assert!(!out.close);
        let r = &responses(&out)[0];
        let d = TraceProcessorRpcDecoder::new(r);
        assert_eq!(d.response_raw(), Some(method));
        assert_eq!(d.invalid_request_raw(), None);
        // The result sits in the method's own field, its error set.
        let mut tag = Vec::new();
        let mut v = (field as u64) << 3 | 2;
        while v >= 0x80 {
            tag.push(v as u8 | 0x80);
            v >>= 7;
        }
        tag.push(v as u8);
        assert!(r.windows(tag.len()).any(|w| w == tag), "{method}");
        assert!(
            String::from_utf8_lossy(r).contains("is not supported"),
            "{method}"
        );
    }
}
