//! Instruction counts of the TrackEvent hot path: `N` slices (begin + end)
//! through `trace_event!` with an in-process session recording, or the
//! floor (two clock reads and the two packets encoded by hand into a
//! reused buffer), in a function of their own so that callgrind can count
//! it alone:
//!
//! ```sh
//! cargo build --release -p zerotrace-hot-paths --bin trace_event_loop
//! valgrind --tool=callgrind --toggle-collect='trace_event_loop::run_*' \
//!     target/release/trace_event_loop 100000 two_args
//! ```
//!
//! Variants: `no_args`, `two_args` (an int and a string), `floor_no_args`,
//! `floor_two_args`; and `tracing` spans with the same two fields
//! (created, entered, exited, closed): `span_layer` through our Layer,
//! `span_registry` through a registry with a layer that does nothing.
//! Divide the instruction total by `N`; the session's start and stop are
//! outside the counted function.

use std::hint::black_box;

use protozero::SliceWriter;
use zerotrace_core::platform::boottime_ns;
use zerotrace_core::trace_event;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, PerfettoLayer};
use zerotrace_protos::protos::TracePacket;

static BENCH: Category = Category::new("bench");
static CATEGORIES: [&Category; 1] = [&BENCH];

#[inline(never)]
fn run_no_args(n: u64) {
    for _ in 0..n {
        let _s = trace_event!(BENCH, "slice");
    }
}

#[inline(never)]
fn run_two_args(n: u64) {
    for i in 0..n {
        let _s = trace_event!(BENCH, "slice", "count" => black_box(i as i64), "what" => black_box("parse"));
    }
}

/// The two packets of a slice, by hand (as the criterion bench's floor).
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
    }
    w.finish().map_or(0, |b| b.len())
}

#[inline(never)]
fn run_floor_no_args(n: u64, buf: &mut [u8]) {
    for _ in 0..n {
        black_box(floor(buf, None));
    }
}

#[inline(never)]
fn run_floor_two_args(n: u64, buf: &mut [u8]) {
    for i in 0..n {
        black_box(floor(buf, Some((black_box(i as i64), black_box("parse")))));
    }
}

#[inline(never)]
fn run_span(n: u64) {
    for i in 0..n {
        let s = tracing::info_span!(
            "span",
            count = black_box(i as i64),
            what = black_box("parse")
        );
        let _e = s.enter();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use tracing_subscriber::layer::SubscriberExt;
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().as_deref().unwrap_or("100000").parse()?;
    let variant = args.next().unwrap_or_else(|| "two_args".into());
    let cfg = InProcessConfig {
        enabled_categories: vec!["bench".into()],
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&CATEGORIES, cfg)?;
    let mut buf = vec![0u8; 1024];
    match variant.as_str() {
        "no_args" => run_no_args(n),
        "two_args" => run_two_args(n),
        "floor_no_args" => run_floor_no_args(n, &mut buf),
        "floor_two_args" => run_floor_two_args(n, &mut buf),
        "span_layer" => {
            let s = tracing_subscriber::registry().with(PerfettoLayer::new(&BENCH));
            tracing::subscriber::with_default(s, || run_span(n));
        }
        "span_registry" => {
            let s = tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
            tracing::subscriber::with_default(s, || run_span(n));
        }
        other => return Err(format!("unknown variant {other}").into()),
    }
    let path = std::env::temp_dir().join(format!("zt-loop-{}.pftrace", std::process::id()));
    session.stop(&path)?;
    let size = std::fs::metadata(&path)?.len();
    let _ = std::fs::remove_file(&path);
    println!("{n} slices ({variant}): a trace of {size} bytes");
    Ok(())
}
