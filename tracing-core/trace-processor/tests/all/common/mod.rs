//! Building traces for the tests with `zerotrace_protos`' writers, and
//! reading query results back.

#![allow(dead_code)]

use zerotrace_protos::protos::TracePacket;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// One packet's bytes, written by `f`.
pub fn packet(f: impl FnOnce(&mut TracePacket<'_>)) -> Vec<u8> {
    let mut w = protozero::HeapWriter::new();
    {
        let mut p = TracePacket::from_message(w.root());
        f(&mut p);
    }
    w.finish().expect("heap writer")
}

/// Packets framed as a `Trace` (field 1 each).
pub fn trace(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        out.push(0x0a);
        let mut n = p.len() as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(p);
    }
    out
}

/// The rows of a query.
pub fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect("query").rows
}

/// A text value.
pub fn s(v: &str) -> Value {
    Value::Text(v.to_owned())
}

/// An integer value.
pub fn i(v: i64) -> Value {
    Value::Int(v)
}
