//! After warm-up, writing events allocates nothing on the writing thread:
//! a counting global allocator watches a thread that records slices with
//! annotations, instants and counters across many chunks, and `tracing`
//! events and spans through the Layer.
//! (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, TrackSpec};
use zerotrace_core::{trace_counter, trace_event, trace_instant};

#[global_allocator]
static GLOBAL: zerotrace_test_alloc::CountingAlloc = zerotrace_test_alloc::CountingAlloc;

use zerotrace_test_alloc::allocations;

static ON: Category = Category::new("on");
static CATEGORIES: [&Category; 1] = [&ON];
static DEPTH: TrackSpec = TrackSpec::counter(0x77, "depth", None, 2, "");

fn events(n: i64) {
    for i in 0..n {
        let _s = trace_event!(ON, "work", "i" => i, "what" => "parse");
        trace_instant!(ON, "tick");
        trace_counter!(ON, DEPTH, i);
    }
}

#[test]
fn enabled_events_allocate_nothing_after_warm_up() {
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default()).unwrap();
    // Warm-up: the thread's writer, its first chunk, the interning tables,
    // and the arbiter's recycled requests (filled by the committer thread
    // as batches go out).
    events(20_000);
    let before = allocations();
    // About 5 MB of packets: many chunks acquired and committed.
    events(50_000);
    let made = allocations() - before;
    // The same for `tracing` events through the Layer.
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber =
        tracing_subscriber::registry().with(zerotrace_core::track_event::PerfettoLayer::new(&ON));
    let made_by_layer = tracing::subscriber::with_default(subscriber, || {
        // One call site for warm-up and measurement (a new call site is a
        // new source location, interned once).
        let emit = |range: std::ops::Range<u64>| {
            for i in range {
                tracing::info!(n = i, what = "steady", "event");
            }
        };
        // Spans with two fields, created, entered, exited and closed.
        let spans = |range: std::ops::Range<u64>| {
            for i in range {
                let s = tracing::info_span!("span", n = i, what = "steady");
                let _e = s.enter();
            }
        };
        emit(0..1000);
        spans(0..1000);
        let before = allocations();
        emit(0..20_000);
        let by_events = allocations() - before;
        let before = allocations();
        spans(0..20_000);
        (by_events, allocations() - before)
    });
    let path = std::env::temp_dir().join(format!("zt-alloc-{}.pftrace", std::process::id()));
    let bytes = session.stop(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(bytes > 1 << 20, "the events were recorded ({bytes} bytes)");
    assert_eq!(made, 0, "heap allocations while tracing");
    assert_eq!(made_by_layer.0, 0, "heap allocations per tracing event");
    assert_eq!(made_by_layer.1, 0, "heap allocations per tracing span");
}
