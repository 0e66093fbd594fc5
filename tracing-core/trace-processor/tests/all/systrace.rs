//! atrace async slices from `print` events: `S`/`F` per cookie with
//! back-to-back begins dropped, `G`/`H` on named tracks, tracks shared by
//! the compressor, malformed lines counted.

use crate::common;

use common::{packet, rows, s, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

fn prints(events: &[(u64, u32, &str)]) -> Vec<u8> {
    let events = events.to_vec();
    packet(move |p| {
        let m = p.message();
        let mut b = m.begin_nested(1);
        b.append_uint32(1, 0);
        for (ts, pid, buf) in events {
            let mut e = b.begin_nested(2);
            e.append_uint64(1, ts);
            e.append_uint32(2, pid);
            e.begin_nested(3).append_string(2, buf);
        }
    })
}

#[test]
fn async_slices_pair_by_cookie_and_share_tracks() {
    let t = trace(&[prints(&[
        (1000, 10, "S|99|load|0\n"),
        (1010, 11, "S|99|load|0\n"),
        (1015, 11, "S|99|load|7\n"),
        (1030, 12, "F|99|load|0\n"),
        (1040, 12, "S|99|load|0\n"),
        (1050, 12, "F|99|load|0\n"),
        (1060, 12, "F|99|load|7\n"),
        (1070, 12, "F|99|load|5\n"),
        (2000, 13, "G|99|Jobs|job|3\n"),
        (2500, 14, "H|99|Jobs|3\n"),
        (2600, 14, "C|99|bad|1.5\n"),
    ])]);
    let tp = TraceProcessor::from_bytes(&t).expect("load");
    assert_eq!(
        rows(
            &tp,
            "SELECT ts, dur, slice.name, EXTRACT_ARG(track.dimension_arg_set_id, \
             'track_compressor_idx') FROM slice JOIN track ON slice.track_id = track.id \
             ORDER BY ts"
        ),
        vec![
            vec![Value::Int(1000), Value::Int(30), s("load"), Value::Int(0)],
            vec![Value::Int(1015), Value::Int(45), s("load"), Value::Int(1)],
            // Cookie 0 again: the freed first track.
            vec![Value::Int(1040), Value::Int(10), s("load"), Value::Int(0)],
            vec![Value::Int(2000), Value::Int(500), s("job"), Value::Int(0)],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT DISTINCT track.name, track.type FROM slice JOIN track ON slice.track_id = track.id \
             ORDER BY 1"
        ),
        vec![
            vec![s("Jobs"), s("atrace_async_slice_for_track")],
            vec![s("load"), s("atrace_async_slice")],
        ]
    );
    assert_eq!(
        rows(
            &tp,
            "SELECT name, value FROM stats WHERE name IN ('misplaced_end_event', \
             'systrace_parse_failure') ORDER BY name"
        ),
        vec![
            vec![s("misplaced_end_event"), Value::Int(1)],
            vec![s("systrace_parse_failure"), Value::Int(1)],
        ]
    );
}
