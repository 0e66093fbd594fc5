//! Small Perfetto traces of ftrace events built byte by byte, for the
//! ftrace importers' tests (`ftrace_importers_tests.rs`,
//! `ftrace_tracks_tests.rs`): the protobuf encoding they need, a trace of
//! one bundle after a `system_info` naming the kernel, and query helpers.

use crate::{TraceProcessor, Value};

/// Appends a varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An unsigned varint field.
pub fn uint(field: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, u64::from(field) << 3);
    varint(&mut out, v);
    out
}

/// A signed varint field (two's complement).
pub fn int(field: u32, v: i64) -> Vec<u8> {
    uint(field, v as u64)
}

/// A length-delimited field.
pub fn bytes(field: u32, b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, (u64::from(field) << 3) | 2);
    varint(&mut out, b.len() as u64);
    out.extend_from_slice(b);
    out
}

/// A string field.
pub fn text(field: u32, s: &str) -> Vec<u8> {
    bytes(field, s.as_bytes())
}

/// A message field of the given parts.
pub fn msg(field: u32, parts: &[Vec<u8>]) -> Vec<u8> {
    bytes(field, &parts.concat())
}

/// An `FtraceEvent`: timestamp, pid, and the payload at `field`.
pub fn event(ts: u64, pid: u64, field: u32, payload: &[Vec<u8>]) -> Vec<u8> {
    msg(2, &[uint(1, ts), uint(2, pid), msg(field, payload)])
}

/// A trace of one packet holding one bundle of CPU `cpu` with `parts`
/// (events and other bundle fields), after a system_info naming `release`.
pub fn trace(release: &str, cpu: u64, parts: &[Vec<u8>]) -> TraceProcessor {
    let system_info = msg(45, &[msg(1, &[text(1, "Linux"), text(3, release)])]);
    let mut bundle = vec![uint(1, cpu)];
    bundle.extend_from_slice(parts);
    let packet = [msg(1, &bundle), uint(10, 1)].concat();
    let mut t = bytes(1, &system_info);
    t.extend(bytes(1, &packet));
    TraceProcessor::from_bytes(&t).expect("trace")
}

/// The rows of a query.
pub fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp.query(sql).expect("query").rows
}

/// A text value.
pub fn s(v: &str) -> Value {
    Value::Text(v.to_owned())
}

/// A `GenericEventDescriptor` for field `id`: the event's name and its
/// fields (name, number, type).
pub fn descriptor(id: u64, name: &str, fields: &[(&str, u64, u64)]) -> Vec<u8> {
    let mut d = vec![text(1, name)];
    for (fname, number, ty) in fields {
        d.push(msg(2, &[text(1, fname), uint(3, *number), uint(5, *ty)]));
    }
    msg(11, &[uint(1, id), msg(2, &d)])
}

/// A trace of these `TracePacket`s' bodies.
pub fn trace_of(packets: &[Vec<u8>]) -> TraceProcessor {
    let t: Vec<u8> = packets.iter().flat_map(|p| bytes(1, p)).collect();
    TraceProcessor::from_bytes(&t).expect("trace")
}

/// A packet of one ftrace bundle of CPU `cpu` on sequence 1.
pub fn bundle_packet(cpu: u64, parts: &[Vec<u8>]) -> Vec<u8> {
    let mut bundle = vec![uint(1, cpu)];
    bundle.extend_from_slice(parts);
    [msg(1, &bundle), uint(10, 1)].concat()
}

/// A `process_tree` packet of one process (pid, cmdline) with its main
/// thread.
pub fn process_packet(pid: u64, cmdline: &str) -> Vec<u8> {
    msg(
        2,
        &[
            msg(1, &[uint(1, pid), text(3, cmdline)]),
            msg(2, &[uint(1, pid), uint(3, pid)]),
        ],
    )
}
