//! Legacy TrackEvents whose phase letter upstream keeps as the
//! `legacy_event.phase` arg of the slice they make (for JSON export): an
//! async begin (`S`), a mark (`R`) and an async step (`T`); a nestable
//! async begin (`b`) and a plain instant (`I`) keep none.

use crate::common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// A legacy event at `ts` on the thread of sequence 1, with `phase` and
/// global id 7.
fn legacy(ts: u64, name: &str, phase: u8) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(ts);
        let mut e = p.begin_track_event();
        e.add_categories("cat");
        e.set_name(name);
        let mut l = e.begin_legacy_event();
        l.set_phase(i32::from(phase));
        l.set_global_id(7);
    })
}

#[test]
fn async_begins_marks_and_steps_keep_their_phase() {
    let t = trace(&[
        packet(|p| {
            p.set_trusted_packet_sequence_id(1);
            p.set_timestamp(0);
            p.set_incremental_state_cleared(true);
            let mut td = p.begin_thread_descriptor();
            td.set_pid(5);
            td.set_tid(1);
        }),
        legacy(1000, "async", b'S'),
        legacy(2000, "step", b'T'),
        legacy(3000, "async", b'F'),
        legacy(4000, "nestable", b'b'),
        legacy(5000, "nestable", b'e'),
        legacy(6000, "mark", b'R'),
        legacy(7000, "instant", b'I'),
    ]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT slice.name, args.string_value FROM slice \
             LEFT JOIN args ON args.arg_set_id = slice.arg_set_id \
               AND args.key = 'legacy_event.phase' \
             ORDER BY slice.ts"
        ),
        vec![
            vec![s("async"), s("S")],
            vec![s("step"), s("T")],
            vec![s("nestable"), Value::Null],
            vec![s("mark"), s("R")],
            vec![s("instant"), Value::Null],
        ]
    );
}
