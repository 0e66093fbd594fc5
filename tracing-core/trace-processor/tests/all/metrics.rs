//! `RUN_METRIC`: a v1 metric file of the trace processor's registry runs
//! with its `{{key}}` placeholders filled from the call, creates the views
//! the caller's next statement reads, may run other metric files, and the
//! call itself is no output; a bad call fails with upstream's message.

use crate::common;

use common::{packet, trace};
use zerotrace_trace_processor::{TraceProcessor, Value};

/// A track descriptor of process `pid` named `name` with a
/// `ChromeProcessDescriptor` of type `chrome_type` (none: empty).
fn chrome_process(uuid: u64, pid: i32, name: &str, chrome_type: Option<i32>) -> Vec<u8> {
    packet(|p| {
        p.set_trusted_packet_sequence_id(1);
        p.set_timestamp(0);
        let mut td = p.begin_track_descriptor();
        td.set_uuid(uuid);
        td.begin_process().set_pid(pid).set_process_name(name);
        let mut c = td.begin_chrome_process();
        if let Some(t) = chrome_type {
            c.set_process_type(t);
        }
    })
}

/// A Chrome JSON trace of process 1's counters: `(name, ts in µs, value)`
/// each, the value under arg `v` (so the counter track is `<name> v`).
fn counters(events: &[(&str, i64, f64)]) -> TraceProcessor {
    let events: Vec<String> = events
        .iter()
        .map(|(name, ts, v)| {
            format!(r#"{{"ph":"C","pid":1,"tid":1,"ts":{ts},"name":"{name}","args":{{"v":{v}}}}}"#)
        })
        .collect();
    let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    TraceProcessor::from_bytes(json.as_bytes()).expect("json trace")
}

fn error(tp: &TraceProcessor, sql: &str) -> String {
    match tp.query_outputs(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_metric_file_runs_with_its_arguments_and_its_views_serve_the_next_statement() {
    let tp = counters(&[
        ("HWComposer: Total Layer(0)", 1, 2.0),
        ("HWComposer: Total Layer(0)", 2, 4.0),
        ("HWComposer: Total Layer(0)", 3, -1.0),
        ("HWComposer: Total Layer(1)", 4, 6.0),
        ("12(7)", 5, 1.0),
        ("12(7)", 6, 1.0),
        ("1.500000(8)", 7, 1.0),
        ("1.500000(8)", 8, 1.0),
    ]);
    // android_hwcomposer.sql runs composition_layers.sql once per layer
    // kind, each with its own track name and output view.
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('android/android_hwcomposer.sql');
             SELECT display_id, AVG(value) AS v FROM total_layers
             GROUP BY display_id ORDER BY display_id",
        )
        .expect("query");
    // The call is no output; each reading is stamped with the time of the
    // one before it, the first and the negative ones left out.
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        out[0].rows,
        vec![
            vec![Value::Text("0".into()), Value::Real(4.0)],
            vec![Value::Text("1".into()), Value::Real(6.0)],
        ]
    );
    let rows = tp
        .query("SELECT ts, display_id, value FROM total_layers ORDER BY ts")
        .expect("query")
        .rows;
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(1000), Value::Text("0".into()), Value::Real(4.0)],
            vec![Value::Int(3000), Value::Text("1".into()), Value::Real(6.0)],
        ]
    );
    // An integer value is substituted in decimal, a real with six decimals.
    let rows = tp
        .query(
            "SELECT RUN_METRIC('android/composition_layers.sql',
                'track_name', 12, 'output', 'by_int');
             SELECT RUN_METRIC('android/composition_layers.sql',
                'track_name', 1.5, 'output', 'by_real');
             SELECT (SELECT display_id FROM by_int), (SELECT display_id FROM by_real)",
        )
        .expect("query")
        .rows;
    assert_eq!(
        rows,
        vec![vec![Value::Text("7".into()), Value::Text("8".into())]]
    );
}

#[test]
fn metric_files_run_the_files_they_depend_on() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    // chrome_reliable_range.sql runs chrome_browser_main_thread_duration.sql,
    // which runs chrome_processes.sql.
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('chrome/chrome_reliable_range.sql');
             SELECT start, debug_limiting_upid FROM chrome_reliable_range;
             SELECT COUNT(*) FROM chrome_thread",
        )
        .expect("query");
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0].rows, vec![vec![Value::Int(0), Value::Null]]);
    assert_eq!(out[1].rows, vec![vec![Value::Int(0)]]);
    // Running a file again replaces what it made.
    tp.query("SELECT RUN_METRIC('chrome/chrome_reliable_range.sql')")
        .expect("again");
}

/// `android/cpu_info.sql` runs twice over (each run replaces what the last
/// made): its cluster numbers are named by core type, and without a
/// bundled power profile the views of the device's CPUs are empty.
#[test]
fn cpu_info_names_the_clusters_and_runs_again() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('android/cpu_info.sql');
             SELECT RUN_METRIC('android/cpu_info.sql');
             SELECT cluster, core_type FROM cluster_core_type ORDER BY cluster;
             SELECT (SELECT COUNT(*) FROM core_type_per_cpu)
               + (SELECT COUNT(*) FROM cpu_cluster_power)",
        )
        .expect("query");
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        out[0].rows,
        vec![
            vec![Value::Int(0), Value::Text("little".into())],
            vec![Value::Int(1), Value::Text("big".into())],
            vec![Value::Int(2), Value::Text("bigger".into())],
        ]
    );
    assert_eq!(out[1].rows, vec![vec![Value::Int(0)]]);
}

#[test]
fn a_bad_call_fails_with_upstreams_message() {
    let tp = TraceProcessor::from_bytes(&[]).expect("empty trace");
    for (sql, message) in [
        ("SELECT RUN_METRIC()", "RUN_METRIC: Invalid arguments"),
        ("SELECT RUN_METRIC(1)", "RUN_METRIC: Invalid arguments"),
        (
            "SELECT RUN_METRIC('no/such.sql')",
            "RUN_METRIC: Unknown filename provided no/such.sql",
        ),
        (
            "SELECT RUN_METRIC('android/composer_execution.sql', 1, 'x')",
            "RUN_METRIC: all keys must be strings",
        ),
        (
            "SELECT RUN_METRIC('android/composer_execution.sql', 'output')",
            "RUN_METRIC: missing value for key",
        ),
        (
            "SELECT RUN_METRIC('android/composer_execution.sql', 'output', NULL)",
            "RUN_METRIC: all values must be convertible to strings",
        ),
        (
            "SELECT RUN_METRIC('android/composer_execution.sql', 'other', 'x')",
            "RUN_METRIC: Error when performing substitutions",
        ),
    ] {
        let e = error(&tp, sql);
        assert!(e.contains(message), "{sql}: {e}");
    }
    // A failing file's error names it; the next query is not affected.
    let e = error(
        &tp,
        "SELECT RUN_METRIC('android/composer_execution.sql', 'output', 'no such')",
    );
    assert!(
        e.contains("RUN_METRIC('android/composer_execution.sql')"),
        "{e}"
    );
    assert_eq!(
        tp.query("SELECT 1").expect("query").rows,
        vec![vec![Value::Int(1)]]
    );
}

#[test]
fn chrome_processes_are_told_by_their_process_type_arg() {
    let tp = TraceProcessor::from_bytes(&trace(&[
        chrome_process(1, 10, "Browser", Some(1)),
        chrome_process(2, 20, "p20", None),
        chrome_process(3, 30, "", Some(2)),
    ]))
    .expect("trace");
    // Chrome's type is the process's `chrome.process_type` arg, NULL when
    // unspecified; a renderer's label names the process.
    let rows = tp
        .query(
            "SELECT pid, name, extract_arg(arg_set_id, 'chrome.process_type') FROM process
             WHERE pid > 0 ORDER BY pid",
        )
        .expect("query")
        .rows;
    assert_eq!(
        rows,
        vec![
            vec![
                Value::Int(10),
                Value::Text("Browser".into()),
                Value::Text("Browser".into())
            ],
            vec![Value::Int(20), Value::Text("p20".into()), Value::Null],
            vec![
                Value::Int(30),
                Value::Text("Renderer".into()),
                Value::Text("Renderer".into())
            ],
        ]
    );
    let out = tp
        .query_outputs(
            "SELECT RUN_METRIC('chrome/chrome_processes.sql');
             SELECT pid, process_type FROM chrome_process ORDER BY pid",
        )
        .expect("query");
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        out[0].rows,
        vec![
            vec![Value::Int(10), Value::Text("Browser".into())],
            vec![Value::Int(20), Value::Text(String::new())],
            vec![Value::Int(30), Value::Text("Renderer".into())],
        ]
    );
}

#[test]
fn import_includes_a_module_for_the_next_statement_and_is_no_output() {
    let tp = counters(&[("c", 1, 1.0)]);
    let out = tp
        .query_outputs(
            "SELECT IMPORT('time.conversion');
             INCLUDE PERFETTO MODULE time.conversion;
             SELECT time_to_us(5000) AS us",
        )
        .expect("query");
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].rows, vec![vec![Value::Int(5)]]);
    assert!(error(&tp, "SELECT IMPORT(1)").ends_with("IMPORT: argument must be string"));
    assert!(error(&tp, "SELECT IMPORT('no.such_module')").contains("no.such_module"));
}
