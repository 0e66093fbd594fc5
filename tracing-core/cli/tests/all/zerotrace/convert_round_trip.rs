//! `zerotrace convert` read back (issue 65): a trace with nested slices
//! on two threads, counters and flows (v1 `flow_ids` and v2
//! `terminating_flow_ids`) is converted to Chrome JSON, the JSON is
//! loaded into the trace processor again, and its slices, counters and
//! flows are the original's.
//!
//! What the format cannot carry, and the comparisons therefore leave out:
//! - table ids (rows are compared by content, flows by their slices' names);
//! - a counter track's name: the JSON reader names a `C` event's track
//!   after the event and its arg's key (`mem value`), as upstream's does,
//!   so the original track name is compared as that name's prefix.

use super::*;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// Two threads of process 10; thread 11 has `outer` > `mid` > `inner`
/// and a second top-level `tail`; thread 12 has `work` > `step`. Flows:
/// `mid` -> `work` (v1 id 7, both ends `flow_ids`), `work` -> `tail`
/// (v2: `flow_ids` 9 then `terminating_flow_ids` 9). A counter track
/// `mem` with three values (one fractional).
const TRACE: &str = r#"
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  track_descriptor { uuid: 1 process { pid: 10 process_name: "app" } }
}
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  track_descriptor { uuid: 11 thread { pid: 10 tid: 11 thread_name: "main" } }
}
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  track_descriptor { uuid: 12 thread { pid: 10 tid: 12 thread_name: "worker" } }
}
packet {
  trusted_packet_sequence_id: 1
  timestamp: 1000
  track_descriptor { uuid: 20 parent_uuid: 1 name: "mem" counter { } }
}
packet { trusted_packet_sequence_id: 1 timestamp: 10000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name: "outer" categories: "ui" } }
packet { trusted_packet_sequence_id: 1 timestamp: 12000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name: "mid" categories: "ui" flow_ids: 7 } }
packet { trusted_packet_sequence_id: 1 timestamp: 13000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name: "inner" categories: "gfx" } }
packet { trusted_packet_sequence_id: 1 timestamp: 14000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 15000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 16000
  track_event { type: TYPE_INSTANT track_uuid: 11 name: "mark" categories: "ui" } }
packet { trusted_packet_sequence_id: 1 timestamp: 20000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 17000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 12 name: "work" categories: "bg" flow_ids: 7 flow_ids: 9 } }
packet { trusted_packet_sequence_id: 1 timestamp: 18000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 12 name: "step" categories: "bg" } }
packet { trusted_packet_sequence_id: 1 timestamp: 19000
  track_event { type: TYPE_SLICE_END track_uuid: 12 } }
packet { trusted_packet_sequence_id: 1 timestamp: 21000
  track_event { type: TYPE_SLICE_END track_uuid: 12 } }
packet { trusted_packet_sequence_id: 1 timestamp: 22000
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 11 name: "tail" categories: "ui" terminating_flow_ids: 9 } }
packet { trusted_packet_sequence_id: 1 timestamp: 25000
  track_event { type: TYPE_SLICE_END track_uuid: 11 } }
packet { trusted_packet_sequence_id: 1 timestamp: 11000
  track_event { type: TYPE_COUNTER track_uuid: 20 counter_value: 5 } }
packet { trusted_packet_sequence_id: 1 timestamp: 16000
  track_event { type: TYPE_COUNTER track_uuid: 20 double_counter_value: 7.5 } }
packet { trusted_packet_sequence_id: 1 timestamp: 24000
  track_event { type: TYPE_COUNTER track_uuid: 20 counter_value: 0 } }
"#;

/// Every thread slice: ts, dur, name, category ("" for none), the
/// thread's tid and name, depth.
const SLICES: &str = "SELECT s.ts, s.dur, s.name, COALESCE(s.category, ''), t.tid, t.name, s.depth \
     FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid) \
     ORDER BY s.ts, s.depth, s.name, t.tid";

/// Every counter value with its track's name.
const COUNTERS: &str = "SELECT c.ts, c.value, t.name FROM counter c \
     JOIN counter_track t ON c.track_id = t.id ORDER BY c.ts, t.name";

/// Every flow as the names and starts of the slices it links.
const FLOWS: &str = "SELECT o.name, o.ts, i.name, i.ts FROM flow f \
     JOIN slice o ON f.slice_out = o.id JOIN slice i ON f.slice_in = i.id \
     ORDER BY o.ts, i.ts, o.name, i.name";

fn rows(tp: &TraceProcessor, sql: &str) -> Vec<Vec<Value>> {
    tp_support::rows(tp, sql)
}

#[test]
fn convert_round_trip_keeps_slices_counters_and_flows() {
    let trace = protoc_encode_trace(TRACE);
    let original = tp_support::load(&trace);
    let path = dir("convert-round-trip").join("t.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let back = TraceProcessor::from_bytes(&o.stdout).expect("the JSON loads");

    // The original has what the test means to carry over.
    let slices = rows(&original, SLICES);
    assert_eq!(slices.len(), 7, "{slices:?}");
    assert_eq!(rows(&back, SLICES), slices, "{}", stdout(&o));

    let flows = rows(&original, FLOWS);
    assert_eq!(flows.len(), 2, "{flows:?}");
    assert_eq!(rows(&back, FLOWS), flows, "{}", stdout(&o));

    let counters = rows(&original, COUNTERS);
    assert_eq!(counters.len(), 3, "{counters:?}");
    let back_counters = rows(&back, COUNTERS);
    assert_eq!(back_counters.len(), counters.len(), "{back_counters:?}");
    for (a, b) in counters.iter().zip(&back_counters) {
        assert_eq!(a[..2], b[..2], "{counters:?} {back_counters:?}");
        let (Value::Text(name), Value::Text(back_name)) = (&a[2], &b[2]) else {
            panic!("unnamed counter track: {a:?} {b:?}");
        };
        assert_eq!(back_name, &format!("{name} value"));
    }
}

/// The same comparisons on a real recording: `zerotrace demo`'s workers
/// (nested slices on several threads, flows between them, a counter)
/// recorded through the service. Its async `uploads` track has no place
/// in Chrome's model, which has threads only: `convert` writes its slices
/// on a thread of their own named after the track, so they come back as
/// that thread's slices (with their times and names).
#[test]
fn convert_round_trip_of_a_recording() {
    let path = dir("convert-round-trip-demo").join("demo.pftrace");
    let o = zerotrace()
        .arg("demo")
        .arg("-o")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let original = tp_support::load(&std::fs::read(&path).unwrap());
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let back = TraceProcessor::from_bytes(&o.stdout).expect("the JSON loads");

    let slices = rows(&original, SLICES);
    assert!(slices.len() > 10, "{slices:?}");
    let (threads, lanes): (Vec<_>, Vec<_>) = rows(&back, SLICES)
        .into_iter()
        .partition(|r| slices.iter().any(|s| s[4] == r[4]));
    assert_eq!(threads, slices);
    // The async track's slices: on the lane named after their track.
    let async_slices = rows(
        &original,
        "SELECT s.ts, s.dur, s.name, t.name FROM slice s JOIN track t ON s.track_id = t.id \
         WHERE s.track_id NOT IN (SELECT id FROM thread_track) ORDER BY s.ts, s.depth, s.name",
    );
    assert!(!async_slices.is_empty());
    let lanes: Vec<_> = lanes
        .into_iter()
        .map(|r| vec![r[0].clone(), r[1].clone(), r[2].clone(), r[5].clone()])
        .collect();
    assert_eq!(lanes, async_slices);
    let flows = rows(&original, FLOWS);
    assert!(!flows.is_empty());
    assert_eq!(rows(&back, FLOWS), flows);
    let counters = rows(&original, COUNTERS);
    let back_counters = rows(&back, COUNTERS);
    assert!(!counters.is_empty());
    assert_eq!(back_counters.len(), counters.len());
    for (a, b) in counters.iter().zip(&back_counters) {
        assert_eq!(a[..2], b[..2]);
    }
}
