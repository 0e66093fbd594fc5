//! Loads of whole Chrome JSON traces: the tables they fill, upstream's
//! sort and nesting rules, pushes split anywhere, traces cut short.

use crate::Loader;
use crate::storage::Storage;

/// Loads `text` pushed in chunks of `step` bytes.
fn load(text: &str, step: usize) -> Storage {
    let mut l = Loader::new();
    for c in text.as_bytes().chunks(step) {
        l.push(c).unwrap();
    }
    l.finish().unwrap()
}

fn name(st: &Storage, id: crate::column_store::strings::StrId) -> &str {
    st.strings.get(id).unwrap_or("")
}

const TRACE: &str = r#"
{"traceEvents": [
  {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"worker"}},
  {"ph":"M","pid":1,"name":"process_name","args":{"name":"app"}},
  {"ph":"B","pid":1,"tid":2,"ts":10,"name":"outer","cat":"c","args":{"a":1}},
  {"ph":"X","pid":1,"tid":2,"ts":11,"dur":2.5,"name":"inner","cat":"c"},
  {"ph":"E","pid":1,"tid":2,"ts":20,"args":{"b":"x"}},
  {"ph":"C","pid":1,"tid":2,"ts":12,"name":"mem","args":{"used":5,"free":"7.5"}},
  {"ph":"b","pid":1,"tid":2,"ts":13,"name":"async","cat":"c","id":"0x5"},
  {"ph":"e","pid":1,"tid":2,"ts":15,"name":"async","cat":"c","id":"0x5"},
],
"displayTimeUnit": "ns",
"metadata": {"version": 3}}"#;

/// A complete event with a negative duration is dropped and counted
/// in `slice_negative_duration`, as upstream's slice tracker drops it;
/// the events around it keep their nesting.
#[test]
fn a_complete_event_with_a_negative_duration_is_dropped_and_counted() {
    let text = r#"[
      {"ph":"X","pid":1,"tid":2,"ts":10,"dur":10,"name":"outer"},
      {"ph":"X","pid":1,"tid":2,"ts":12,"dur":-3,"name":"backwards"},
      {"ph":"X","pid":1,"tid":2,"ts":13,"dur":2,"name":"inner"}
    ]"#;
    let st = load(text, text.len());
    let slices: Vec<(&str, u32)> = st
        .slices
        .iter()
        .map(|s| (name(&st, s.name), s.depth))
        .collect();
    assert_eq!(slices, vec![("outer", 0), ("inner", 1)]);
    assert_eq!(st.stats.get("slice_negative_duration"), 1);
}

/// A Chrome JSON trace loads into the same tables as a protobuf one
/// would fill: thread slices nested with their args (an end's merged
/// in), counters per arg key on the process, async slices on their own
/// track, names from metadata events; pushed whole or a byte at a time.
#[test]
fn a_chrome_json_trace_fills_slices_counters_and_names() {
    for step in [TRACE.len(), 1, 7] {
        let st = load(TRACE, step);
        let slices: Vec<(i64, i64, &str, u32)> = st
            .slices
            .iter()
            .map(|s| (s.ts, s.dur, name(&st, s.name), s.depth))
            .collect();
        assert_eq!(
            slices,
            vec![
                (10_000, 10_000, "outer", 0),
                (11_000, 2_500, "inner", 1),
                (13_000, 2_000, "async", 0),
            ],
            "step {step}"
        );
        let outer_args: Vec<&str> = st
            .args
            .set(st.slices[0].arg_set_id.get().unwrap())
            .map(|a| name(&st, a.key))
            .collect();
        assert_eq!(outer_args, ["args.a", "args.b"]);
        let thread = st.threads.iter().find(|t| t.tid == 2).unwrap();
        assert_eq!(name(&st, thread.name), "worker");
        let process = st.processes.iter().find(|p| p.pid == 1).unwrap();
        assert_eq!(name(&st, process.name), "app");
        let counters: Vec<(&str, f64)> = st
            .counters
            .iter()
            .map(|c| (name(&st, st.tracks[c.track_id as usize].name), c.value))
            .collect();
        assert_eq!(counters, vec![("mem used", 5.0), ("mem free", 7.5)]);
        assert_eq!(
            name(
                &st,
                st.tracks[st.slices[2].track_id as usize].classification
            ),
            "legacy_async_global_slice"
        );
        assert_eq!(st.metadata_int("json_metadata.version"), Some(3));
    }
}

/// Upstream's order of events at one time: an end before a begin, and
/// (once the trace has complete events) the longer complete event
/// first, so that the shorter nests in it whatever the file's order.
#[test]
fn equal_times_sort_ends_first_and_longer_complete_events_first() {
    let st = load(
        r#"[{"name":"Child","ph":"X","ts":1,"dur":5,"pid":1},
            {"name":"Parent","ph":"X","ts":1,"dur":10,"pid":1,"tid":1}]"#,
        usize::MAX,
    );
    let got: Vec<(&str, u32)> = st
        .slices
        .iter()
        .map(|s| (name(&st, s.name), s.depth))
        .collect();
    assert_eq!(got, vec![("Parent", 0), ("Child", 1)]);
}

/// `process_sort_index` and `thread_sort_index` metadata events become
/// the `process_sort_index_hint` / `thread_sort_index_hint` args of
/// their process and thread, as upstream stores them.
#[test]
fn sort_index_events_become_hint_args() {
    let st = load(
        r#"[{"ph":"M","pid":30,"ts":1,"name":"process_sort_index","args":{"sort_index":-2}},
            {"ph":"M","pid":30,"tid":31,"ts":2,"name":"thread_sort_index","args":{"sort_index":5.0}}]"#,
        usize::MAX,
    );
    let arg = |set: Option<u32>, key: &str| {
        st.args
            .set(set?)
            .find(|a| name(&st, a.key) == key)
            .map(|a| a.value)
    };
    let process = st.processes.iter().find(|p| p.pid == 30).unwrap();
    assert_eq!(
        arg(process.arg_set_id, "process_sort_index_hint"),
        Some(crate::storage::args::ArgValue::Int(-2))
    );
    let thread = st.threads.iter().find(|t| t.tid == 31).unwrap();
    assert_eq!(
        arg(thread.arg_set_id, "thread_sort_index_hint"),
        Some(crate::storage::args::ArgValue::Int(5))
    );
}

/// A complete event partly overlapping an open one is counted and
/// logged with what both share and the slice it conflicts with.
#[test]
fn a_spilled_overlapping_complete_event_is_logged_with_its_overlap() {
    let st = load(
        r#"[{"name":"outer","ph":"X","ts":100,"dur":100,"pid":1,"tid":1},
            {"name":"inner","ph":"X","ts":150,"dur":100,"pid":1,"tid":1}]"#,
        usize::MAX,
    );
    assert_eq!(st.import_logs.len(), 1);
    let log = &st.import_logs[0];
    assert_eq!(log.ts, Some(150_000));
    let args: Vec<(&str, crate::storage::args::ArgValue)> = st
        .args
        .set(log.arg_set_id.unwrap())
        .map(|a| (name(&st, a.key), a.value))
        .collect();
    let text = |a: crate::storage::args::ArgValue| match a {
        crate::storage::args::ArgValue::String(s) => name(&st, s).to_owned(),
        crate::storage::args::ArgValue::Int(v) => v.to_string(),
        other => format!("{other:?}"),
    };
    let got: Vec<(&str, String)> = args.into_iter().map(|(k, v)| (k, text(v))).collect();
    let want: Vec<(&str, String)> = [
        ("event_name", "inner"),
        ("event_phase", "X"),
        ("overlap_start", "150000"),
        ("overlap_end", "200000"),
        ("conflicting_slice_name", "outer"),
        ("conflicting_slice_ts", "100000"),
        ("conflicting_slice_dur", "100000"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_owned()))
    .collect();
    assert_eq!(got, want);
}

/// Events larger than a chunk, cut by chunk ends anywhere (inside a
/// string, between events, inside the item the last chunk cut), load
/// as when pushed whole.
#[test]
fn events_cut_by_chunk_ends_load_as_when_pushed_whole() {
    let big = "x".repeat(150_000);
    let mut text = String::from("{\"traceEvents\":[");
    for i in 0..40 {
        let arg = if i % 7 == 3 { big.as_str() } else { "y" };
        text.push_str(&format!(
            r#"{{"ph":"X","pid":1,"tid":2,"ts":{i},"dur":1,"name":"e{i}","args":{{"s":"{arg}"}}}},"#
        ));
    }
    text.push_str("],\"metadata\":{\"k\":\"");
    text.push_str(&big);
    text.push_str("\"}}");
    let whole = load(&text, text.len());
    let names = |st: &Storage| -> Vec<String> {
        st.slices
            .iter()
            .map(|s| name(st, s.name).to_owned())
            .collect()
    };
    assert_eq!(whole.slices.len(), 40);
    for step in [1000, 65_536, 100_003, 1 << 20] {
        let st = load(&text, step);
        assert_eq!(names(&st), names(&whole), "step {step}");
        assert_eq!(st.args.len(), whole.args.len(), "step {step}");
        // The metadata value after the events was read whole.
        assert!(st.strings.find(&big).is_some(), "step {step}");
    }
}

/// Counter series of one name get one track per process (or thread
/// without a process) and key, however many series an event has.
#[test]
fn counter_series_get_a_track_per_owner_and_key() {
    let mut text = String::from("[");
    for pid in [1, 2] {
        for ts in [1, 2] {
            let series: Vec<String> = (0..20).map(|k| format!(r#""k{k}":{ts}"#)).collect();
            text.push_str(&format!(
                r#"{{"ph":"C","pid":{pid},"tid":{pid},"ts":{ts},"name":"c","args":{{{}}}}},"#,
                series.join(",")
            ));
        }
    }
    text.push(']');
    let st = load(&text, text.len());
    assert_eq!(st.counters.len(), 80);
    let tracks: crate::hash::HashSet<u32> = st.counters.iter().map(|c| c.track_id).collect();
    assert_eq!(tracks.len(), 40);
    for c in &st.counters {
        let track = &st.tracks[c.track_id as usize];
        assert!(name(&st, track.name).starts_with("c k"));
    }
}

/// A bare array cut short loads what it holds; an object cut short is
/// an error naming the offset.
#[test]
fn a_truncated_array_loads_and_a_truncated_object_fails() {
    let st = load(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1},"#, 3);
    assert_eq!(st.slices.len(), 1);
    let mut l = Loader::new();
    l.push(br#"{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1}"#)
        .unwrap();
    assert!(matches!(l.finish(), Err(crate::TraceError::Json { .. })));
}
