//! Tests of the parts of Chrome's JSON format that Perfetto reads past
//! without importing them, so that ours does the same: the object phases
//! (`O` snapshots, `N` creations, `D` deletions), which make their thread
//! and process but no slice, counter or failure; and the top-level
//! `stackFrames` and `samples` of the old sampling format, skipped whole
//! (wherever they sit beside `traceEvents`, however the bytes are cut),
//! without frames, callsites or samples.

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

/// `O`, `N` and `D` events give their thread (in its process) and
/// nothing else: no slice, counter, track or arg, and no failure
/// counted; the slice beside them loads as usual.
#[test]
fn object_phases_make_their_thread_and_nothing_else() {
    let text = r#"[
      {"ph":"N","pid":5,"tid":6,"ts":1,"name":"Layer","cat":"cc","id":"0x1"},
      {"ph":"O","pid":5,"tid":7,"ts":2,"name":"Layer","cat":"cc","id":"0x1",
       "args":{"snapshot":{"bounds":[0,0,10,10],"opaque":true}}},
      {"ph":"D","pid":8,"tid":9,"ts":3,"name":"Layer","cat":"cc","id":"0x1"},
      {"ph":"X","pid":5,"tid":6,"ts":4,"dur":1,"name":"work"}
    ]"#;
    for step in [text.len(), 5] {
        let st = load(text, step);
        let slices: Vec<&str> = st.slices.iter().map(|s| name(&st, s.name)).collect();
        assert_eq!(slices, ["work"], "step {step}");
        assert!(st.counters.is_empty());
        for tid in [6, 7, 9] {
            let t = st.threads.iter().find(|t| t.tid == tid).unwrap();
            let upid = t.upid.expect("the thread has its process");
            let pid = st.processes[upid as usize].pid;
            assert_eq!(pid, if tid == 9 { 8 } else { 5 }, "tid {tid}");
        }
        // Only the slice's thread has a track; the snapshot's args are
        // stored nowhere.
        assert_eq!(st.tracks.len(), 1);
        assert!(
            st.args
                .rows()
                .all(|r| !name(&st, r.arg.key).starts_with("args.")),
            "an event's args were stored"
        );
        assert_eq!(st.stats.get("json_parser_failure"), 0);
        assert_eq!(st.stats.get("json_tokenizer_failure"), 0);
    }
}

/// `stackFrames` and `samples` before and after `traceEvents` are skipped
/// whole, brackets and braces inside their strings included: the events
/// load, and no frame, callsite or sample is made.
#[test]
fn stack_frames_and_samples_are_skipped() {
    let text = r#"{
      "stackFrames": {"1": {"name": "main ]}", "category": "app"},
                      "2": {"name": "f{[", "parent": "1"}},
      "traceEvents": [
        {"ph":"B","pid":1,"tid":1,"ts":10,"name":"a","sf":2},
        {"ph":"E","pid":1,"tid":1,"ts":20}
      ],
      "samples": [{"cpu":0,"tid":1,"ts":15,"name":"cycles","sf":"2","weight":1},
                  {"cpu":0,"tid":1,"ts":16,"name":"cycles","sf":"1","weight":1}],
      "displayTimeUnit": "ms"
    }"#;
    for step in [text.len(), 1, 3, 16] {
        let st = load(text, step);
        let slices: Vec<(i64, i64, &str)> = st
            .slices
            .iter()
            .map(|s| (s.ts, s.dur, name(&st, s.name)))
            .collect();
        assert_eq!(slices, [(10_000, 10_000, "a")], "step {step}");
        assert!(st.profiling.frames.is_empty());
        assert!(st.profiling.callsites.is_empty());
        assert!(st.profiling.samples.is_empty());
        assert!(st.sched.slices.is_empty());
        assert_eq!(st.stats.get("json_display_time_unit"), 1);
        assert_eq!(st.stats.get("json_tokenizer_failure"), 0);
    }
}

/// Like upstream's reader, which skips an unknown key's value by its
/// strings and brackets alone, a `stackFrames` object whose insides do
/// not read as JSON is skipped all the same, and the events load.
#[test]
fn stack_frames_are_skipped_by_their_brackets_alone() {
    let text = r#"{"stackFrames": {"1": {"name": tru, "x": [1 2]}}, "traceEvents": [
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"a"}]}"#;
    for step in [text.len(), 2] {
        let st = load(text, step);
        assert_eq!(st.slices.len(), 1, "step {step}");
        assert!(st.profiling.frames.is_empty());
    }
}
