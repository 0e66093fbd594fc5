//! No request holds the session hostage: a query stops when told (its
//! client went away) or past the session's time limit, its answer saying
//! why; the rows of a statement before the last are stepped through, never
//! held; the status board follows the trace without taking the session.

use std::time::Duration;

use super::*;

/// A statement that steps for a long time and sends one row at its end.
const SLOW: &str = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s \
                    WHERE i + 1 < 5000000) SELECT count(*) FROM s";

#[test]
fn a_cancelled_query_stops_and_says_why() {
    let mut s = RpcSession::new().unwrap();
    let cancel = s.new_cancel();
    cancel.cancel("the client went away");
    let (_, d) = query(&mut s, SLOW);
    assert_eq!(
        d.error.as_deref(),
        Some("The query was interrupted: the client went away")
    );
    assert!(d.rows.is_empty());
    // A new handle for the next request: the old cancel no longer counts.
    let _ = s.new_cancel();
    let (_, d) = query(&mut s, "SELECT 1 AS one");
    assert_eq!(d.error, None);
    assert_eq!(d.rows, [[Value::Int(1)]]);
}

#[test]
fn a_query_stops_while_its_rows_stream_once_cancelled() {
    let mut s = RpcSession::new().unwrap();
    s.set_batch_limits(BatchLimits {
        cells_per_batch: 30,
        split_threshold: usize::MAX,
    });
    let cancel = s.new_cancel();
    let mut sent = Vec::new();
    // As the server does when a chunk cannot be written.
    s.query_into(&query_args(&series(1_000_000)), &mut |f| {
        sent.push(f.to_vec());
        cancel.cancel("the client went away");
    });
    let d = decode_query_result(&sent.concat()).unwrap();
    assert!(d.rows.len() < 1_000_000, "{} rows", d.rows.len());
    assert!(d.complete);
    assert!(d.error.unwrap().contains("client went away"));
}

#[test]
fn a_query_past_the_time_limit_stops_naming_it() {
    let mut s = RpcSession::new().unwrap();
    s.set_query_timeout(Some(Duration::ZERO));
    let _ = s.new_cancel();
    let (_, d) = query(&mut s, SLOW);
    let e = d.error.expect("interrupted");
    assert!(e.contains("time limit of 0 s"), "{e}");
    assert!(d.rows.is_empty());
    // The same over the framed stream.
    let q = TraceProcessorMethod::TpmQueryStreaming as i32;
    let out = s.rpc(&request(1, q, Some(SLOW)));
    let answers = responses(&out);
    let r = TraceProcessorRpcDecoder::new(&answers[0]);
    let result = QueryResultDecoder::new(r.query_result_bytes().unwrap());
    assert!(result.error().unwrap().contains("time limit"));
    // No limit: it runs to its end.
    s.set_query_timeout(None);
    let (_, d) = query(&mut s, SLOW);
    assert_eq!(d.rows, [[Value::Int(5_000_000)]]);
}

#[test]
fn rows_of_a_statement_before_the_last_are_stepped_not_held() {
    let s = RpcSession::new().unwrap();
    let big = format!("{}; SELECT 1 AS one", series(200_000));
    let mut sent = Vec::new();
    let (_, peak) = s.run_query_peak(&big, Framing::Query, 0, &mut |f| sent.push(f.to_vec()));
    let d = decode_query_result(&sent.concat()).unwrap();
    assert_eq!(d.columns, ["one"]);
    assert_eq!(d.rows, [[Value::Int(1)]]);
    // 200000 rows of three cells were never more than a batch at once
    // (nothing of them, in fact: they are not encoded).
    assert!(peak < 1024, "held {peak} bytes");
    // The last statement's own rows stream out: at most one batch held.
    let (_, peak) = s.run_query_peak(&series(200_000), Framing::Query, 0, &mut |_| {});
    assert!(
        peak <= 2 * batches::BATCH_SPLIT_THRESHOLD,
        "held {peak} bytes"
    );
}

#[test]
fn the_status_board_follows_the_trace() {
    let mut s = RpcSession::new().unwrap();
    let board = s.status_board();
    assert_eq!(board.get(), s.status());
    let tp = TraceProcessor::from_bytes(&thread_trace()).unwrap();
    let mut named = RpcSession::with_trace(tp, Some("t.pftrace".into()));
    let named_board = named.status_board();
    assert_eq!(
        StatusResultDecoder::new(&named_board.get()).loaded_trace_name(),
        Some("t.pftrace")
    );
    // A new trace over /parse drops the name, on the board too.
    named.parse(&thread_trace());
    named.notify_eof().unwrap();
    assert_eq!(named_board.get(), named.status());
    assert_eq!(
        StatusResultDecoder::new(&named_board.get()).loaded_trace_name(),
        Some("")
    );
    s.parse(&thread_trace());
    assert_eq!(board.get(), s.status());
}
