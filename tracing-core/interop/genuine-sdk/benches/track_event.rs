//! TrackEvent cost per slice (begin + end), all in one run:
//!
//! * `zerotrace/*`: our macros with an in-process session recording
//!   (ring buffer), with and without two debug annotations (int, string),
//!   and with the category disabled;
//! * `perfetto_c_sdk/*`: the same through Google's C SDK (`perfetto-sdk`,
//!   in-process backend) in the same process;
//! * `floor/*`: two clock reads plus encoding the two packets into a
//!   preallocated slice (what any implementation must at least do);
//! * `tracing/*`: one `tracing` span (created, entered, exited, closed, two
//!   fields) through a registry with no layer, a registry with a layer
//!   that does nothing (`Identity`: spans are closed and their slots
//!   reused), with our Layer, with Google's
//!   `tracing-perfetto-sdk` layer and with `tracing-perfetto` (writing to a
//!   sink).
//!
//! `cargo xtask interop --bench` runs it; `benches/track_event_ratios.py`
//! turns criterion's estimates into the README's ratios.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use perfetto_sdk::tracing_session::TracingSession;
use perfetto_sdk::track_event::{EventContext, TrackEventDebugArg};
use perfetto_sdk::{track_event_begin, track_event_end};
use protozero::{HeapWriter, SliceWriter};
use tracing_subscriber::layer::SubscriberExt;
use zerotrace_core::platform::boottime_ns;
use zerotrace_core::trace_event;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, PerfettoLayer};
use zerotrace_protos::protos::{TraceConfig, TracePacket};

static ZT: Category = Category::new("zt");
static ZT_OFF: Category = Category::new("zt_off");
static ZT_TRACING: Category = Category::new("zt_tracing");
static ZT_CATEGORIES: [&Category; 3] = [&ZT, &ZT_OFF, &ZT_TRACING];

/// The C SDK's categories for this benchmark (its macro writes the module).
#[allow(missing_docs)]
mod c_sdk_categories {
    use perfetto_sdk::track_event_categories;
    track_event_categories! {
        pub mod bench_te_ns {
        ("sdk", "Benchmark slices", []),
            ("sdk_off", "Never enabled", []),
        }
    }
}
use c_sdk_categories::bench_te_ns as perfetto_te_ns;

/// The C SDK's in-process session recording `sdk` and `tracing` (the
/// category of `tracing-perfetto-sdk`), into a ring buffer.
fn start_c_sdk_session() -> TracingSession {
    tracing_perfetto_sdk::init_in_process();
    perfetto_te_ns::register().expect("C SDK categories");
    let mut w = HeapWriter::new();
    {
        let mut cfg = TraceConfig::from_message(w.root());
        cfg.add_buffers()
            .set_size_kb(32 * 1024)
            .set_fill_policy_raw(1);
        let mut ds = cfg.add_data_sources();
        let mut c = ds.begin_config();
        c.set_name("track_event");
        let mut te = c.begin_track_event_config();
        te.add_enabled_categories("sdk");
        te.add_enabled_categories("tracing");
        te.add_disabled_categories("*");
    }
    let mut session = TracingSession::in_process().expect("C SDK session");
    session.setup(&w.finish().expect("config"));
    session.start_blocking();
    session
}

fn track_event(c: &mut Criterion) {
    let zt_cfg = InProcessConfig {
        enabled_categories: vec!["zt".into(), "zt_tracing".into()],
        ..InProcessConfig::default()
    };
    let zt_session = InProcessSession::start(&ZT_CATEGORIES, zt_cfg).expect("zerotrace session");
    let mut sdk_session = start_c_sdk_session();
    assert!(ZT.is_enabled() && !ZT_OFF.is_enabled());

    let mut g = c.benchmark_group("track_event");
    g.measurement_time(Duration::from_secs(4));
    // Interleaved so machine drift affects each pair alike.
    g.bench_function("zerotrace/no_args", |b| {
        b.iter(|| {
            let _s = trace_event!(ZT, "slice");
        })
    });
    g.bench_function("perfetto_c_sdk/no_args", |b| {
        b.iter(|| {
            track_event_begin!("sdk", "slice");
            track_event_end!("sdk");
        })
    });
    g.bench_function("floor/no_args", |b| {
        let mut buf = vec![0u8; 1024];
        b.iter(|| black_box(floor(&mut buf, None)))
    });
    let mut i = 0i64;
    g.bench_function("zerotrace/two_args", |b| {
        b.iter(|| {
            i += 1;
            let _s =
                trace_event!(ZT, "slice", "count" => black_box(i), "what" => black_box("parse"));
        })
    });
    g.bench_function("perfetto_c_sdk/two_args", |b| {
        b.iter(|| {
            i += 1;
            let (n, s) = (black_box(i), black_box("parse"));
            track_event_begin!("sdk", "slice", |ctx: &mut EventContext| {
                ctx.add_debug_arg("count", TrackEventDebugArg::Int64(n));
                ctx.add_debug_arg("what", TrackEventDebugArg::String(s));
            });
            track_event_end!("sdk");
        })
    });
    g.bench_function("floor/two_args", |b| {
        let mut buf = vec![0u8; 1024];
        b.iter(|| {
            i += 1;
            black_box(floor(&mut buf, Some((black_box(i), black_box("parse")))))
        })
    });
    g.bench_function("zerotrace/disabled", |b| {
        b.iter(|| {
            let _s = trace_event!(ZT_OFF, "slice", "count" => black_box(1i64));
        })
    });
    g.bench_function("perfetto_c_sdk/disabled", |b| {
        b.iter(|| {
            track_event_begin!("sdk_off", "slice");
            track_event_end!("sdk_off");
        })
    });
    g.finish();

    let mut g = c.benchmark_group("tracing_span");
    g.measurement_time(Duration::from_secs(4));
    let span = || {
        let s = tracing::info_span!("span", count = black_box(7i64), what = black_box("parse"));
        let _e = s.enter();
    };
    let registry = tracing_subscriber::registry();
    tracing::subscriber::with_default(registry, || {
        g.bench_function("registry_no_layer", |b| b.iter(span));
    });
    // A bare registry never frees a closed span's slot (only a `Layered`
    // registry closes spans), so its slab grows for the whole run and its
    // time includes page faults; with a layer that does nothing, spans
    // are closed and their slots reused, as under any real layer.
    let identity = tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
    tracing::subscriber::with_default(identity, || {
        g.bench_function("registry_identity_layer", |b| b.iter(span));
    });
    let ours = tracing_subscriber::registry().with(PerfettoLayer::new(&ZT_TRACING));
    tracing::subscriber::with_default(ours, || {
        g.bench_function("zerotrace_layer", |b| b.iter(span));
    });
    let google = tracing_subscriber::registry().with(tracing_perfetto_sdk::PerfettoLayer::new());
    tracing::subscriber::with_default(google, || {
        g.bench_function("tracing_perfetto_sdk_layer", |b| b.iter(span));
    });
    let pure = tracing_subscriber::registry().with(
        tracing_perfetto::PerfettoLayer::new(std::io::sink as fn() -> std::io::Sink)
            .with_debug_annotations(true),
    );
    tracing::subscriber::with_default(pure, || {
        g.bench_function("tracing_perfetto_layer", |b| b.iter(span));
    });
    g.finish();

    sdk_session.stop_blocking();
    let path = std::env::temp_dir().join(format!("zt-bench-{}.pftrace", std::process::id()));
    zt_session.stop(&path).expect("zerotrace session stop");
    let _ = std::fs::remove_file(&path);
}

/// The floor: two clock reads and the two TracePackets of a slice (begin
/// with interned category and name ids and the annotations, end), as the
/// writers lay them out in a chunk, into a preallocated slice.
fn floor(buf: &mut [u8], args: Option<(i64, &str)>) -> usize {
    let mut w = SliceWriter::new(buf);
    {
        let mut root = w.root();
        let mut p = TracePacket::from_message(root.begin_nested(1));
        p.set_timestamp(boottime_ns());
        p.set_sequence_flags(2);
        let mut e = p.begin_track_event();
        e.set_type_raw(1);
        e.add_category_iids(1);
        e.set_name_iid(1);
        if let Some((n, s)) = args {
            let mut a = e.add_debug_annotations();
            a.set_name_iid(1);
            a.set_int_value(n);
            drop(a);
            let mut a = e.add_debug_annotations();
            a.set_name_iid(2);
            a.set_string_value(s);
        }
    }
    {
        let mut root = w.root();
        let mut p = TracePacket::from_message(root.begin_nested(1));
        p.set_timestamp(boottime_ns());
        p.set_sequence_flags(2);
        let mut e = p.begin_track_event();
        e.set_type_raw(2);
        e.add_category_iids(1);
    }
    w.finish().map_or(0, |b| b.len())
}

criterion_group!(benches, track_event);
criterion_main!(benches);
