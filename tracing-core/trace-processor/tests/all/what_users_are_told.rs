//! What a user is told (issue 61): a trace cut inside a packet loads what
//! comes before the cut and says where the cut is and what was dropped;
//! PerfettoSQL's own statements run (issue 63), on the library's query and
//! on the RPC's alike, and their errors say where.

use zerotrace_protos::protos::QueryArgs;
use zerotrace_protos::protos::track_event;
use zerotrace_trace_processor::rpc::RpcSession;
use zerotrace_trace_processor::rpc::decode::decode_query_result;
use zerotrace_trace_processor::{Error, LoadWarning, TraceProcessor, Value};

use crate::common::{packet, trace};

/// A track and one slice on it, begun and ended.
fn one_slice() -> Vec<u8> {
    let mut packets = vec![packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_sequence_flags(1);
        p.begin_track_descriptor().set_uuid(1);
    })];
    for (ts, ty) in [
        (100, track_event::Type::SliceBegin),
        (200, track_event::Type::SliceEnd),
    ] {
        packets.push(packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(ts);
            let mut e = p.begin_track_event();
            e.set_track_uuid(1);
            e.set_type(ty);
            if ts == 100 {
                e.set_name("work");
            }
        }));
    }
    trace(&packets)
}

#[test]
fn a_trace_cut_inside_a_packet_loads_the_rest_and_says_where() {
    let whole = one_slice();
    // Half of a packet: it claims 64 bytes and 32 came.
    let mut cut = whole.clone();
    cut.extend_from_slice(&[0x0a, 64]);
    cut.extend_from_slice(&[0; 32]);
    let tp = TraceProcessor::from_bytes(&cut).unwrap();
    assert_eq!(
        tp.query("SELECT count(*) FROM slice").unwrap().rows,
        vec![vec![Value::Int(1)]]
    );
    let w = tp.load_warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].offset, whole.len() as u64);
    let told = w[0].to_string();
    assert!(
        told.starts_with(&format!("at byte {}: ", whole.len())) && told.contains("dropped"),
        "{told}"
    );
    // A whole trace has nothing to tell.
    let tp = TraceProcessor::from_bytes(&whole).unwrap();
    assert_eq!(tp.load_warnings(), &[] as &[LoadWarning]);
}

fn rpc_error(s: &mut RpcSession, sql: &str) -> Option<String> {
    let mut w = protozero::HeapWriter::new();
    QueryArgs::from_message(w.root()).set_sql_query(sql);
    decode_query_result(&s.query(&w.to_vec()).concat())
        .unwrap()
        .error
}

#[test]
fn perfetto_sql_statements_run_and_their_errors_say_where() {
    let tp = TraceProcessor::from_bytes(&[]).unwrap();
    let sql = "SELECT 1;\n  INCLUDE PERFETTO MODULE no_such_package.startups;";
    match tp.query(sql) {
        Err(Error::Sql {
            message,
            offset: Some(o),
        }) => {
            assert_eq!(
                message,
                "INCLUDE: Package 'no_such_package.startups' not found"
            );
            assert!(sql[o..].starts_with("INCLUDE"), "{o}");
        }
        other => panic!("{other:?}"),
    }
    let r = tp
        .query(
            "INCLUDE PERFETTO MODULE time.conversion;
             CREATE PERFETTO TABLE t AS SELECT time_from_ms(2) AS ts;
             SELECT ts FROM t",
        )
        .unwrap();
    assert_eq!(r.rows, [[Value::Int(2_000_000)]]);
    // The RPC's queries go through the same engine.
    let mut s = RpcSession::new().unwrap();
    let e = rpc_error(&mut s, "INCLUDE PERFETTO MODULE nothing.here").unwrap();
    assert!(
        e.contains("INCLUDE: Package 'nothing.here' not found"),
        "{e}"
    );
    assert_eq!(
        rpc_error(
            &mut s,
            "CREATE PERFETTO MACRO m() RETURNS Expr AS 1; SELECT m!() AS x"
        ),
        None
    );
    // Other syntax errors are SQLite's.
    let e = tp.query("SELEC 1").unwrap_err().to_string();
    assert!(e.contains("syntax error"), "{e}");
}
