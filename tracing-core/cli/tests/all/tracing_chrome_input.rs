//! A Chrome JSON trace as the `tracing-chrome` crate writes it (issue 65):
//! its layer turns `tracing` spans into `B`/`E` events (and events into
//! thread instants) in a JSON array, one numbered thread per OS thread
//! named by a `thread_name` metadata event, times in fractional
//! microseconds. A small workload with nested spans on two named threads
//! is recorded through it into a file, and every span must load as a
//! slice on its thread, under its parent span's slice.
//!
//! The layer numbers threads from 0, and a zero tid is read as the
//! pid's own thread (upstream's importer makes a `tid` of 0 the `pid`
//! when the pid is not 0; the layer's pid is always 1), so the first
//! thread that traces shares thread 1 with the second. The test's own
//! thread therefore traces first, a `setup` span that lands on the
//! thread numbered 1 (`alpha`, which traces next) before alpha's spans.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use tracing::{Level, dispatcher, span};
use tracing_subscriber::layer::SubscriberExt;
use zerotrace_trace_processor::{TraceProcessor, Value};

/// One thread's spans: (name, parent's name) with "" for a top-level span.
type Spans = BTreeSet<(String, String)>;

fn pair(name: &str, parent: &str) -> (String, String) {
    (name.to_owned(), parent.to_owned())
}

/// `prefix_outer` > `prefix_mid` > `prefix_inner` (entered twice), an
/// event inside `prefix_mid`, then a second top-level `prefix_again`.
fn workload(prefix: &str) {
    let outer = span!(Level::INFO, "outer", side = prefix);
    outer.in_scope(|| {
        let mid = span!(Level::INFO, "mid");
        mid.in_scope(|| {
            tracing::info!(step = 1, "inside mid");
            for _ in 0..2 {
                span!(Level::INFO, "inner").in_scope(|| std::hint::black_box(0));
            }
        });
    });
    span!(Level::INFO, "again").in_scope(|| std::hint::black_box(0));
}

#[test]
fn tracing_chrome_spans_load_as_nested_slices_per_thread() {
    let dir = std::env::temp_dir().join(format!("zt-cli-tracing-chrome-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trace.json");
    {
        let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
            .file(&path)
            .build();
        let dispatch = dispatcher::Dispatch::new(tracing_subscriber::registry().with(layer));
        // Thread 0, read as thread 1: see the module's doc.
        dispatcher::with_default(&dispatch, || {
            span!(Level::INFO, "setup").in_scope(|| std::hint::black_box(0));
        });
        // alpha traces first (thread 1), then beta (thread 2); then both
        // are inside their spans at once.
        let order = Arc::new(Barrier::new(2));
        let both = Arc::new(Barrier::new(2));
        let threads: Vec<_> = ["alpha", "beta"]
            .into_iter()
            .map(|name| {
                let (dispatch, order, both) = (dispatch.clone(), order.clone(), both.clone());
                std::thread::Builder::new()
                    .name(name.to_owned())
                    .spawn(move || {
                        if name == "beta" {
                            order.wait();
                        }
                        dispatcher::with_default(&dispatch, || {
                            span!(Level::INFO, "top").in_scope(|| {
                                if name == "alpha" {
                                    order.wait();
                                }
                                both.wait();
                                workload(name);
                            });
                        })
                    })
                    .unwrap()
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        drop(dispatch);
        // Dropping the guard ends the JSON array and closes the file.
        drop(guard);
    }
    let json = std::fs::read(&path).unwrap();
    let tp = TraceProcessor::from_bytes(&json).expect("the tracing-chrome JSON loads");

    let rows = tp
        .query(
            "SELECT t.name, s.name, COALESCE(p.name, ''), s.depth, s.dur, s.category \
             FROM slice s JOIN thread_track tt ON s.track_id = tt.id \
             JOIN thread t USING (utid) LEFT JOIN slice p ON s.parent_id = p.id \
             ORDER BY s.ts",
        )
        .expect("query")
        .rows;
    let text = |v: &Value| match v {
        Value::Text(s) => s.clone(),
        other => panic!("not text: {other:?} in {rows:?}"),
    };
    let mut spans: std::collections::BTreeMap<String, Spans> = Default::default();
    let mut count: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &rows {
        let (thread, name, parent) = (text(&r[0]), text(&r[1]), text(&r[2]));
        let Value::Int(depth) = r[3] else {
            panic!("{rows:?}")
        };
        let Value::Int(dur) = r[4] else {
            panic!("{rows:?}")
        };
        // The layer's category is the callsite's target: this module.
        assert_eq!(text(&r[5]), module_path!(), "{name} on {thread}: {rows:?}");
        let expected_depth = match name.as_str() {
            "top" | "setup" => 0,
            "outer" | "again" => 1,
            "mid" => 2,
            _ => 3,
        };
        assert_eq!(depth, expected_depth, "{name} on {thread}: {rows:?}");
        assert!(dur >= 0, "{name} on {thread} closed: {rows:?}");
        // The event is an instant (no duration) named after its callsite.
        let name = if parent == "mid" && name != "inner" {
            assert_eq!(dur, 0, "{name}: {rows:?}");
            "event".to_owned()
        } else {
            name
        };
        *count.entry(format!("{thread}/{name}")).or_default() += 1;
        spans.entry(thread).or_default().insert((name, parent));
    }
    let expected: Spans = [
        pair("top", ""),
        pair("outer", "top"),
        pair("mid", "outer"),
        pair("event", "mid"),
        pair("inner", "mid"),
        pair("again", "top"),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        spans.keys().collect::<Vec<_>>(),
        ["alpha", "beta"],
        "{rows:?}"
    );
    for (thread, s) in &spans {
        let mut expected = expected.clone();
        if thread == "alpha" {
            expected.insert(pair("setup", ""));
        }
        assert_eq!(s, &expected, "{thread}: {rows:?}");
        assert_eq!(count[&format!("{thread}/inner")], 2, "{rows:?}");
        assert_eq!(count[&format!("{thread}/top")], 1, "{rows:?}");
    }
    assert_eq!(rows.len(), 2 * 7 + 1, "{rows:?}");
    // setup ends before alpha's top begins.
    assert_eq!(rows[0][1], Value::Text("setup".into()), "{rows:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
