//! UFS storage controller ftrace events as upstream imports them:
//! `ufshcd_command` (FtraceEvent 406) gives how many commands occupy the
//! queue (`io.ufs.command.count`: the doorbell's set bits, or 1 while a
//! command without doorbell is sent and 0 once it completes) and each
//! command as a slice on its tag's track (`io.ufs.command.tag[NNN]`, named
//! by its SCSI opcode, with its group id when one is set), from send to
//! completion; `ufshcd_clk_gating` (407) gives the clock's gating state
//! (`io.ufs.clkgating`, OFF 0, REQ_OFF 1, REQ_ON 2, ON 3).
//!
//! The opcode names, track names and the state order are facts of
//! upstream's ftrace parser; the events are read with protozero's
//! schema-less decoder.

use protozero::Decoder;

use super::Parser;
use super::importer::{FtraceHandler, FtraceInput};
use crate::storage::args::ArgValue;
use crate::storage::rows::{CounterRow, SliceRow};
use crate::tables::opt_u32::OptU32;
use crate::tracker::tracks::{EventType, TrackSpec};

const UFSHCD_COMMAND: u32 = 406;
const UFSHCD_CLK_GATING: u32 = 407;

/// The events (gathered by `ftrace_registry.rs`).
pub const FTRACE_HANDLERS: &[(u32, FtraceHandler)] = &[
    (UFSHCD_COMMAND, ufshcd_command),
    (UFSHCD_CLK_GATING, ufshcd_clk_gating),
];

fn uint(body: &[u8], id: u32) -> u64 {
    Decoder::new(body)
        .find_last(id)
        .and_then(|f| f.as_u64().ok())
        .unwrap_or(0)
}

/// A SCSI opcode's name as upstream prints it.
fn opcode_name(opcode: u32) -> &'static str {
    match opcode {
        0 => "TEST UNIT READY",
        3 => "REQUEST SENSE",
        4 => "FORMAT UNIT",
        8 => "READ (6)",
        10 => "WRITE (6)",
        18 => "INQUIRY",
        27 => "START STOP UNIT",
        29 => "SEND DIAGNOSTIC",
        37 => "READ CAPACITY (10)",
        40 => "READ (10)",
        42 => "WRITE (10)",
        47 => "VERIFY",
        52 => "PRE-FETCH (10)",
        53 => "SYNCHRONIZE CACHE (10)",
        59 => "WRITE BUFFER",
        60 => "READ BUFFER",
        66 => "UNMAP",
        85 => "MODE SELECT (10)",
        90 => "MODE SENSE (10)",
        136 => "READ (16)",
        138 => "WRITE (16)",
        144 => "PRE-FETCH (16)",
        145 => "SYNCHRONIZE CACHE (16)",
        158 => "READ CAPACITY (16)",
        160 => "REPORT LUNS",
        162 => "SECURITY PROTOCOL IN",
        181 => "SECURITY PROTOCOL OUT",
        _ => "UNDEFINED",
    }
}

fn ufshcd_command(p: &mut Parser, e: &FtraceInput<'_>) {
    let b = e.body;
    let doorbell = uint(b, 2) as u32;
    let str_t = uint(b, 10) as u32;
    let occupied = if doorbell > 0 {
        doorbell.count_ones()
    } else {
        u32::from(str_t != 1)
    };
    let spec = TrackSpec::new(
        Some("io.ufs.command.count"),
        "ufs_command_count",
        EventType::Counter,
    );
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: f64::from(occupied),
        arg_set_id: OptU32::NONE,
    });

    let tag = uint(b, 7) as u32;
    let name = format!("io.ufs.command.tag[{tag:03}]");
    let mut spec = TrackSpec::new(Some(&name), "ufs_command_tag", EventType::Slice);
    spec.dimensions = vec![("ufs_tag", ArgValue::Int(i64::from(tag)))];
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    if str_t == 0 {
        let opcode = uint(b, 5) as u32;
        let group = uint(b, 9) as u32;
        let mut command = opcode_name(opcode).to_owned();
        if group > 0 {
            command.push_str(&format!(" (GID=0x{group:x})"));
        }
        let name = p.storage.strings.intern(&command);
        p.slices.begin(
            &mut p.storage,
            SliceRow {
                ts: e.ts,
                dur: -1,
                track_id: track,
                name,
                ..Default::default()
            },
        );
    } else {
        p.slices.end(&mut p.storage, track, e.ts, None);
    }
}

fn ufshcd_clk_gating(p: &mut Parser, e: &FtraceInput<'_>) {
    // The kernel's order (ON, REQ_OFF, REQ_ON) made into OFF < ... < ON.
    let state = match Decoder::new(e.body)
        .find_last(2)
        .and_then(|f| f.as_i32().ok())
    {
        Some(1) => 3,
        Some(2) => 1,
        Some(3) => 2,
        _ => 0,
    };
    let spec = TrackSpec::new(
        Some("io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)"),
        "ufs_clkgating",
        EventType::Counter,
    );
    let track = p.tracks.interned_counter(&mut p.storage, &spec);
    p.storage.counters.push(CounterRow {
        ts: e.ts,
        track_id: track,
        value: f64::from(state),
        arg_set_id: OptU32::NONE,
    });
}

#[cfg(test)]
mod tests {
    use crate::{TraceProcessor, Value};
    use zerotrace_protos::protos::TracePacket;

    /// One ftrace event: (ts, event field, writer).
    type Event<'a> = (u64, u32, &'a dyn Fn(&mut protozero::Message<'_>));

    fn trace(events: &[Event<'_>]) -> TraceProcessor {
        let mut w = protozero::HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            p.set_trusted_packet_sequence_id(1);
            let mut b = p.message().begin_nested(1);
            b.append_uint32(1, 0);
            for (ts, field, f) in events {
                let mut e = b.begin_nested(2);
                e.append_uint64(1, *ts);
                e.append_uint32(2, 1);
                let mut body = e.begin_nested(*field);
                f(&mut body);
            }
        }
        let p = w.finish().expect("writer");
        let mut out = vec![0x0a];
        let mut n = p.len();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out.extend_from_slice(&p);
        TraceProcessor::from_bytes(&out).expect("trace")
    }

    fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
        tp.query(sql).expect("query").rows
    }

    fn s(v: &str) -> Value {
        Value::Text(v.to_owned())
    }

    #[test]
    fn commands_are_slices_per_tag_and_the_queue_is_counted() {
        let command = |str_t: u32, doorbell: u32, opcode: u32, group: u32| {
            move |m: &mut protozero::Message<'_>| {
                m.append_uint32(2, doorbell);
                m.append_uint32(5, opcode);
                m.append_uint32(7, 5);
                m.append_uint32(9, group);
                m.append_uint32(10, str_t);
            }
        };
        let (send, done, send_gid, done_no_bell) = (
            command(0, 0b1011, 40, 0),
            command(1, 0b0001, 40, 0),
            command(0, 0, 42, 0x1f),
            command(1, 0, 42, 0x1f),
        );
        let gating = |m: &mut protozero::Message<'_>| m.append_int32(2, 2);
        let tp = trace(&[
            (100, super::UFSHCD_COMMAND, &send),
            (180, super::UFSHCD_COMMAND, &done),
            (200, super::UFSHCD_COMMAND, &send_gid),
            (260, super::UFSHCD_COMMAND, &done_no_bell),
            (300, super::UFSHCD_CLK_GATING, &gating),
        ]);
        assert_eq!(
            rows(
                &tp,
                "SELECT s.ts, s.dur, s.name, t.name FROM slice s \
                 JOIN track t ON s.track_id = t.id ORDER BY s.ts"
            ),
            vec![
                vec![
                    Value::Int(100),
                    Value::Int(80),
                    s("READ (10)"),
                    s("io.ufs.command.tag[005]")
                ],
                vec![
                    Value::Int(200),
                    Value::Int(60),
                    s("WRITE (10) (GID=0x1f)"),
                    s("io.ufs.command.tag[005]")
                ],
            ]
        );
        assert_eq!(
            rows(
                &tp,
                "SELECT c.ts, t.name, c.value FROM counter c \
                 JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts"
            ),
            vec![
                vec![Value::Int(100), s("io.ufs.command.count"), Value::Real(3.0)],
                vec![Value::Int(180), s("io.ufs.command.count"), Value::Real(1.0)],
                vec![Value::Int(200), s("io.ufs.command.count"), Value::Real(1.0)],
                vec![Value::Int(260), s("io.ufs.command.count"), Value::Real(0.0)],
                vec![
                    Value::Int(300),
                    s("io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)"),
                    Value::Real(1.0)
                ],
            ]
        );
    }
}
