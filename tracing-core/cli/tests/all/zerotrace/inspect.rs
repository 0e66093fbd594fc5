//! `zerotrace dump`, `stats` and `convert` on recorded and genuine traces,
//! compressed packets included.

use super::*;

#[test]
fn demo_then_dump_stats_and_convert() {
    let d = dir("demo");
    let out = d.join("demo.pftrace");
    let o = zerotrace()
        .arg("demo")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.contains("slices") && said.contains("flows"), "{said}");

    let o = zerotrace().arg("stats").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("track_event") && s.contains("buffers:"), "{s}");
    assert!(s.contains("data losses: none"), "{s}");

    let o = zerotrace().arg("dump").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("track_event {"), "named fields");
    assert!(s.contains("name_iid 1 = \""), "interned names resolved");
    assert!(
        s.contains("# name_iid") && s.contains("\"frame\""),
        "resolved frame"
    );

    let o = zerotrace()
        .args(["convert", "--json"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("B"), count("E"));
    assert!(count("B") > 100 && count("C") > 10, "{}", events.len());
    assert_eq!(count("s"), count("f"), "every flow starts and ends");
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "frame" && e["args"]["worker"].is_number())
    );

    // The trace processor over the same trace: no loss, and per slice name
    // the count and total duration `convert --json` gives (B/E paired per
    // thread; its times are µs with three decimals, so exact in ns).
    let tp = tp_support::load(&std::fs::read(&out).unwrap());
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    let mut json: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
    let mut open: std::collections::HashMap<(i64, i64), Vec<(String, i64)>> = Default::default();
    let ns = |e: &serde_json::Value| (e["ts"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
    let mut sorted: Vec<&serde_json::Value> = events.iter().collect();
    sorted.sort_by_key(|e| ns(e));
    for e in sorted {
        let key = (
            e["pid"].as_i64().unwrap_or(0),
            e["tid"].as_i64().unwrap_or(0),
        );
        match e["ph"].as_str() {
            Some("B") => open
                .entry(key)
                .or_default()
                .push((e["name"].as_str().unwrap_or("").to_owned(), ns(e))),
            Some("E") => {
                let (name, start) = open.get_mut(&key).and_then(Vec::pop).expect("paired");
                let t = json.entry(name).or_default();
                t.0 += 1;
                t.1 += ns(e) - start;
            }
            Some("i" | "I") => {
                json.entry(e["name"].as_str().unwrap_or("").to_owned())
                    .or_default()
                    .0 += 1;
            }
            _ => {}
        }
    }
    let tp_slices: std::collections::BTreeMap<String, (i64, i64)> = tp_support::rows(
        &tp,
        "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name",
    )
    .into_iter()
    .map(|r| match (&r[0], &r[1], &r[2]) {
        (
            zerotrace_trace_processor::Value::Text(n),
            zerotrace_trace_processor::Value::Int(c),
            zerotrace_trace_processor::Value::Int(d),
        ) => (n.clone(), (*c, *d)),
        other => panic!("{other:?}"),
    })
    .collect();
    assert_eq!(tp_slices, json, "slices per name: count, total duration");
}

#[test]
fn dump_names_the_fields_of_the_genuine_trace() {
    let genuine =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/genuine-session.pftrace");
    let o = zerotrace().arg("dump").arg(&genuine).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for want in [
        "trace_config {",
        "clock_snapshot {",
        "track_event {",
        "trusted_packet_sequence_id:",
    ] {
        assert!(s.contains(want), "{want}");
    }
    // A trace of Perfetto's own service and SDK loads without a loss, and
    // its TrackEvents count the same in the trace processor as in dump.
    let tp = tp_support::load(&std::fs::read(&genuine).unwrap());
    tp_support::assert_no_unexplained_stats(&tp, &[]);
    // Each event but a slice's end makes a row.
    let events = s.matches("track_event {").count() as i64
        - s.matches("type: TYPE_SLICE_END").count() as i64;
    let counted = tp_support::rows(
        &tp,
        "SELECT (SELECT COUNT(*) FROM slice) + (SELECT COUNT(*) FROM counter c \
         JOIN counter_track t ON c.track_id = t.id WHERE t.type GLOB '*counter_track_event')",
    );
    assert!(events > 0);
    assert_eq!(
        counted,
        vec![vec![zerotrace_trace_processor::Value::Int(events)]],
        "one slice or counter value per begin, instant and counter event"
    );
}

/// `stats` lists the ftrace setup errors a trace's `ftrace_stats` name
/// (unknown and failed events, refused fields, atrace errors), each once.
#[test]
fn stats_names_the_ftrace_setup_errors() {
    let d = dir("setup-errors");
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 3
          ftrace_stats {
            phase: START_OF_TRACE
            unknown_ftrace_events: "nosuch/event"
            failed_ftrace_events: "kmem/kmalloc"
            failed_ftrace_events: "FtraceConfig.kprobe_events: not supported by these probes, recorded without it"
            atrace_errors: "atrace is Android-only"
          }
        }
        packet {
          trusted_packet_sequence_id: 3
          ftrace_stats {
            phase: END_OF_TRACE
            unknown_ftrace_events: "nosuch/event"
            failed_ftrace_events: "kmem/kmalloc"
          }
        }
        "#,
    );
    let path = d.join("t.pftrace");
    std::fs::write(&path, trace).unwrap();
    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "setup errors: 4",
        "unknown ftrace event nosuch/event",
        "ftrace event kmem/kmalloc could not be enabled",
        "FtraceConfig.kprobe_events: not supported",
        "atrace: atrace is Android-only",
    ] {
        assert!(out.contains(want), "{want} in\n{out}");
    }
    // A trace without any: said too.
    let o = zerotrace()
        .args(["demo", "-o"])
        .arg(d.join("demo.pftrace"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = zerotrace()
        .arg("stats")
        .arg(d.join("demo.pftrace"))
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("setup errors: none recorded"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn dump_and_stats_name_packets_of_data_sources_we_do_not_model() {
    let d = dir("unmodeled");
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 7
          ftrace_events {
            cpu: 2
            event { timestamp: 1000 pid: 42 sched_switch { prev_comm: "worker" prev_pid: 42 next_comm: "idle" next_pid: 0 } }
          }
        }
        packet {
          trusted_packet_sequence_id: 8
          timestamp: 2000
          process_tree { processes { pid: 42 ppid: 1 cmdline: "worker" } }
        }
        packet {
          trusted_packet_sequence_id: 8
          timestamp: 3000
          process_stats { processes { pid: 42 vm_rss_kb: 1024 } }
        }
        "#,
    );
    let path = d.join("unmodeled.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let o = zerotrace().arg("dump").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for want in [
        "ftrace_events {",
        "sched_switch {",
        "prev_comm: \"worker\"",
        "process_tree {",
        "cmdline: [\"worker\"]",
        "process_stats {",
        "vm_rss_kb: 1024",
    ] {
        assert!(s.contains(want), "{want} in\n{s}");
    }
    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    let s = stdout(&o);
    for want in ["ftrace_events", "process_tree", "process_stats"] {
        assert!(s.contains(want), "{want} in\n{s}");
    }
}

#[test]
fn dump_stats_and_convert_inflate_compressed_packets() {
    let d = dir("compressed");
    let path = d.join("compressed.pftrace");
    std::fs::write(&path, compressed_trace()).unwrap();

    let o = zerotrace().arg("dump").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("name: \"work\""), "{s}");
    assert!(!s.contains("compressed_packets"), "{s}");

    let o = zerotrace().arg("stats").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains(": 3 packets"), "{s}");
    assert!(s.contains("track_event 2"), "{s}");

    // No --json: JSON is the only format.
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let begin = events
        .iter()
        .find(|e| e["ph"] == "B")
        .unwrap_or_else(|| panic!("a slice in {v}"));
    assert_eq!(begin["name"], "work");
    assert_eq!(begin["tid"], 11);
    assert_eq!(
        begin["args"]["d"],
        serde_json::json!({"a": 1, "b": ["x", true]})
    );
    assert_eq!(begin["args"]["arr"], serde_json::json!([1, 2]));
    assert_eq!(events.iter().filter(|e| e["ph"] == "E").count(), 1);
}

/// TrackEvent counter tracks (typed `*_counter_track_event`, as upstream)
/// become `C` events named after their track.
#[test]
fn convert_writes_track_event_counters() {
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 3
          timestamp: 1000
          track_descriptor { uuid: 20 name: "mem" counter { } }
        }
        packet {
          trusted_packet_sequence_id: 3
          timestamp: 2000
          track_event { type: TYPE_COUNTER track_uuid: 20 counter_value: 5 }
        }
        "#,
    );
    let path = dir("convert-counter").join("t.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert_eq!(
        events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == "mem")
            .count(),
        1,
        "{v}"
    );
}

/// `convert` writes what the trace processor derives, not what a decoder
/// of the packets alone would: times converted to the trace clock
/// through a clock snapshot, a thread named by `process_tree`, an
/// interned debug annotation string resolved; and its slices are the
/// trace processor's `slice` rows.
#[test]
fn convert_writes_the_trace_processors_tables() {
    // A clock snapshot, a process tree, a thread's track, a slice on it.
    let trace = protoc_encode_trace(
        r#"
        packet {
          trusted_packet_sequence_id: 1
          clock_snapshot {
            clocks { clock_id: 6 timestamp: 1000000 }
            clocks { clock_id: 1 timestamp: 5000000 }
            primary_trace_clock: BUILTIN_CLOCK_BOOTTIME
          }
        }
        packet {
          trusted_packet_sequence_id: 2
          timestamp: 1000000
          process_tree {
            processes { pid: 10 ppid: 1 cmdline: "app" }
            threads { tid: 11 tgid: 10 name: "render" }
          }
        }
        packet {
          trusted_packet_sequence_id: 3
          timestamp: 1000000
          track_descriptor { uuid: 7 thread { pid: 10 tid: 11 } }
        }
        packet {
          trusted_packet_sequence_id: 3
          sequence_flags: 3
          timestamp: 5001000
          timestamp_clock_id: 1
          interned_data {
            event_names { iid: 1 name: "draw" }
            debug_annotation_names { iid: 1 name: "layer" }
            debug_annotation_string_values { iid: 1 str: "background" }
          }
          track_event {
            type: TYPE_SLICE_BEGIN
            track_uuid: 7
            name_iid: 1
            debug_annotations { name_iid: 1 string_value_iid: 1 }
          }
        }
        packet {
          trusted_packet_sequence_id: 3
          sequence_flags: 2
          timestamp: 5003000
          timestamp_clock_id: 1
          track_event { type: TYPE_SLICE_END track_uuid: 7 }
        }
        "#,
    );
    let path = dir("convert-tp").join("t.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let one = |ph: &str| {
        let all: Vec<_> = events.iter().filter(|e| e["ph"] == ph).collect();
        assert_eq!(all.len(), 1, "one {ph} in {v}");
        all[0].clone()
    };
    // REALTIME 5_001_000 ns is BOOTTIME 1_001_000 ns: 1001 µs.
    assert_eq!(
        one("B"),
        serde_json::json!({"ph": "B", "name": "draw", "cat": "", "ts": 1001.0, "pid": 10,
                           "tid": 11, "args": {"layer": "background"}})
    );
    assert_eq!(
        one("E"),
        serde_json::json!({"ph": "E", "ts": 1003.0, "pid": 10, "tid": 11})
    );
    assert!(
        events.contains(
            &serde_json::json!({"ph": "M", "name": "thread_name", "pid": 10,
                                            "tid": 11, "args": {"name": "render"}})
        ),
        "{v}"
    );
    // The same slice in the trace processor.
    let tp = tp_support::load(&trace);
    assert_eq!(
        tp_support::rows(&tp, "SELECT ts, dur, name FROM slice"),
        vec![vec![
            zerotrace_trace_processor::Value::Int(1_001_000),
            zerotrace_trace_processor::Value::Int(2_000),
            zerotrace_trace_processor::Value::Text("draw".into()),
        ]]
    );
    // Cut inside its last packet: an invalid trace (exit 5), as for `dump`
    // and `stats`, not a part of it converted.
    std::fs::write(&path, &trace[..trace.len() - 1]).unwrap();
    let o = zerotrace().arg("convert").arg(&path).output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ends inside a packet"),
        "{}",
        stderr(&o)
    );
}
