//! Writes a small Perfetto trace (a process, a thread, nested slices and an
//! instant) with raw `protozero::Message` calls, to show the writer API end to
//! end. Open the output in the Perfetto UI.
//!
//! `cargo run -p protozero --example write_trace -- trace.pftrace`

use std::process::ExitCode;

use protozero::{HeapWriter, Message};

// Field numbers from Perfetto's trace.proto / trace_packet.proto / track_event.proto.
const TRACE_PACKET: u32 = 1;
const PACKET_TIMESTAMP: u32 = 8;
const PACKET_SEQUENCE_ID: u32 = 10;
const PACKET_TRACK_EVENT: u32 = 11;
const PACKET_TRACK_DESCRIPTOR: u32 = 60;
const TRACK_UUID: u32 = 1;
const TRACK_PARENT_UUID: u32 = 5;
const TRACK_PROCESS: u32 = 3;
const TRACK_THREAD: u32 = 4;
const PROCESS_PID: u32 = 1;
const PROCESS_NAME: u32 = 6;
const THREAD_PID: u32 = 1;
const THREAD_TID: u32 = 2;
const THREAD_NAME: u32 = 5;
const EVENT_TYPE: u32 = 9;
const EVENT_TRACK_UUID: u32 = 11;
const EVENT_NAME: u32 = 23;
const TYPE_SLICE_BEGIN: i32 = 1;
const TYPE_SLICE_END: i32 = 2;
const TYPE_INSTANT: i32 = 3;

const SEQUENCE: u32 = 3_903_809;
const PROCESS_TRACK: u64 = 894_893_984;
const THREAD_TRACK: u64 = 49_083_589_894;

fn event(trace: &mut Message<'_>, ts: u64, kind: i32, name: Option<&str>) {
    let mut packet = trace.begin_nested(TRACE_PACKET);
    packet.append_uint64(PACKET_TIMESTAMP, ts);
    let mut ev = packet.begin_nested(PACKET_TRACK_EVENT);
    ev.append_enum(EVENT_TYPE, kind);
    ev.append_uint64(EVENT_TRACK_UUID, THREAD_TRACK);
    if let Some(name) = name {
        ev.append_string(EVENT_NAME, name);
    }
    ev.finalize();
    packet.append_uint32(PACKET_SEQUENCE_ID, SEQUENCE);
}

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: write_trace OUT.pftrace");
        return ExitCode::from(2);
    };
    let mut w = HeapWriter::new();
    {
        let mut trace = w.root();
        {
            let mut packet = trace.begin_nested(TRACE_PACKET);
            let mut track = packet.begin_nested(PACKET_TRACK_DESCRIPTOR);
            track.append_uint64(TRACK_UUID, PROCESS_TRACK);
            let mut process = track.begin_nested(TRACK_PROCESS);
            process.append_int32(PROCESS_PID, 1234);
            process.append_string(PROCESS_NAME, "zerotrace example");
        }
        {
            let mut packet = trace.begin_nested(TRACE_PACKET);
            let mut track = packet.begin_nested(PACKET_TRACK_DESCRIPTOR);
            track.append_uint64(TRACK_UUID, THREAD_TRACK);
            track.append_uint64(TRACK_PARENT_UUID, PROCESS_TRACK);
            let mut thread = track.begin_nested(TRACK_THREAD);
            thread.append_int32(THREAD_PID, 1234);
            thread.append_int64(THREAD_TID, 5678);
            thread.append_string(THREAD_NAME, "main");
        }
        event(&mut trace, 200, TYPE_SLICE_BEGIN, Some("parent"));
        event(&mut trace, 250, TYPE_SLICE_BEGIN, Some("child"));
        event(&mut trace, 285, TYPE_INSTANT, Some("instant"));
        event(&mut trace, 290, TYPE_SLICE_END, None);
        event(&mut trace, 300, TYPE_SLICE_END, None);
    }
    let bytes = match w.finish() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("encoding failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&out, &bytes) {
        eprintln!("cannot write {out}: {e}");
        return ExitCode::FAILURE;
    }
    println!("wrote {} bytes to {out}", bytes.len());
    ExitCode::SUCCESS
}
