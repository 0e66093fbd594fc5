//! `genuine-producer`: a Perfetto app built on the genuine C SDK (system
//! backend) that writes the interop workload (`zerotrace_genuine_sdk::workload`)
//! to whatever tracing service listens on `PERFETTO_PRODUCER_SOCK_NAME`.
//!
//! It registers the track event data source (categories `oracle` and
//! `oracle_off`) and the custom data source `oracle.custom`, waits until a
//! session enables both, writes every event and packet, flushes, then waits
//! for the session to stop the custom data source and exits.
//!
//! Progress goes to stdout, one word a line, for the test that drives it:
//! `registered`, `started`, `written`, `stopped`. Options:
//! `--timeout-s N` (default 60): give up (exit 2) when a session does not
//! start, or stop, within N seconds.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perfetto_sdk::data_source::{
    DataSource, DataSourceArgsBuilder, DataSourceBufferExhaustedPolicy, DataSourceTimestamp,
    TraceContext,
};
use perfetto_sdk::producer::{Backends, Producer, ProducerInitArgsBuilder};
use perfetto_sdk::protos::trace::test_event::TestEvent;
use perfetto_sdk::protos::trace::trace_packet::TracePacket;
use perfetto_sdk::track_event::{
    EventContext, TrackEvent, TrackEventCounter, TrackEventDebugArg, TrackEventFlow,
    TrackEventTrack,
};
use perfetto_sdk::{
    track_event_begin, track_event_categories, track_event_category_enabled, track_event_counter,
    track_event_end, track_event_instant,
};
use zerotrace_genuine_sdk::workload;

track_event_categories! {
    pub(crate) mod oracle_te_ns {
        ("oracle", "Interop workload events (enabled by the interop configs)", []),
        ("oracle_off", "Registered but never enabled by the interop configs", []),
    }
}
use oracle_te_ns as perfetto_te_ns;

static CUSTOM_STARTED: AtomicBool = AtomicBool::new(false);
static CUSTOM_STOPPED: AtomicBool = AtomicBool::new(false);

fn say(word: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{word}");
    let _ = out.flush();
}

fn wait_until(deadline: Instant, what: &str, ready: impl Fn() -> bool) {
    while !ready() {
        if Instant::now() > deadline {
            eprintln!("genuine-producer: timed out waiting for {what}");
            std::process::exit(2);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn main() {
    let mut timeout = Duration::from_secs(60);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--timeout-s" => {
                let v = args.next().and_then(|v| v.parse().ok()).unwrap_or(60);
                timeout = Duration::from_secs(v);
            }
            other => {
                eprintln!("genuine-producer: unknown argument {other}");
                std::process::exit(64);
            }
        }
    }

    Producer::init(
        ProducerInitArgsBuilder::new()
            .backends(Backends::SYSTEM)
            .build(),
    );
    TrackEvent::init();
    perfetto_te_ns::register().expect("register the track event categories");
    // A registered data source must stay where it is: it lives as long as
    // the process.
    let custom: &'static mut DataSource<'static> = Box::leak(Box::new(DataSource::new()));
    let args = DataSourceArgsBuilder::new()
        .will_notify_on_stop(false)
        .handles_incremental_state_clear(true)
        .buffer_exhausted_policy(DataSourceBufferExhaustedPolicy::StallAndDrop)
        .on_start(|_, _| CUSTOM_STARTED.store(true, Ordering::SeqCst))
        .on_stop(|_, _| CUSTOM_STOPPED.store(true, Ordering::SeqCst))
        .build();
    custom
        .register(workload::CUSTOM_DATA_SOURCE, args)
        .expect("register the custom data source");
    say("registered");

    let deadline = Instant::now() + timeout;
    wait_until(deadline, "a session", || {
        track_event_category_enabled!("oracle") && CUSTOM_STARTED.load(Ordering::SeqCst)
    });
    say("started");

    write_track_events();
    write_custom_packets(custom);
    say("written");

    let deadline = Instant::now() + timeout;
    wait_until(deadline, "the session to stop", || {
        CUSTOM_STOPPED.load(Ordering::SeqCst)
    });
    say("stopped");
}

/// Every event of `workload::expected_events`, in that order, on this
/// thread's track event sequence; the last one flushes the writer.
fn write_track_events() {
    // Static names, as the SDK's slice macros take them.
    const NAMES: [&std::ffi::CStr; workload::SLICES as usize] = [
        c"slice_00",
        c"slice_01",
        c"slice_02",
        c"slice_03",
        c"slice_04",
        c"slice_05",
        c"slice_06",
        c"slice_07",
        c"slice_08",
        c"slice_09",
    ];
    for (i, name) in (0..workload::SLICES).zip(NAMES) {
        let label = workload::label(i);
        perfetto_sdk::track_event!(
            "oracle",
            perfetto_sdk::track_event::TrackEventType::SliceBegin(name.as_ptr()),
            |ctx: &mut EventContext| {
                ctx.add_debug_arg("idx", TrackEventDebugArg::Int64(i as i64));
                ctx.add_debug_arg("uidx", TrackEventDebugArg::Uint64(i));
                ctx.add_debug_arg("label", TrackEventDebugArg::String(&label));
                ctx.add_debug_arg("even", TrackEventDebugArg::Bool(i % 2 == 0));
                ctx.add_debug_arg("ratio", TrackEventDebugArg::Double(i as f64 / 4.0));
            }
        );
        track_event_end!("oracle");
    }
    track_event_begin!("oracle", "outer");
    track_event_begin!("oracle", "inner");
    track_event_end!("oracle");
    track_event_end!("oracle");

    let process = TrackEventTrack::process_track_uuid();
    let named = TrackEventTrack::register_named_track("oracle_track", 0, process)
        .expect("register the named track");
    track_event_begin!("oracle", "on_named_track", |ctx: &mut EventContext| {
        ctx.set_track(&named);
    });
    track_event_end!("oracle", |ctx: &mut EventContext| {
        ctx.set_track(&named);
    });

    let counter = TrackEventTrack::register_counter_track("oracle_counter", process)
        .expect("register the counter track");
    for v in workload::COUNTER_VALUES {
        track_event_counter!("oracle", |ctx: &mut EventContext| {
            ctx.set_track(&counter);
            ctx.set_counter(TrackEventCounter::Int64(v));
        });
    }
    track_event_counter!("oracle", |ctx: &mut EventContext| {
        ctx.set_track(&counter);
        ctx.set_counter(TrackEventCounter::Double(workload::COUNTER_DOUBLE));
    });

    let flow = TrackEventFlow::global_flow(workload::FLOW_ID);
    track_event_begin!("oracle", "flow_src", |ctx: &mut EventContext| {
        ctx.set_flow(&flow);
    });
    track_event_end!("oracle");
    track_event_instant!("oracle", "flow_dst", |ctx: &mut EventContext| {
        ctx.set_terminating_flow(&flow);
    });

    for n in 0..workload::INSTANTS {
        track_event_instant!("oracle", "instant_marker", |ctx: &mut EventContext| {
            ctx.add_debug_arg("n", TrackEventDebugArg::Int64(n as i64));
        });
    }
    let blob = workload::big_annotation();
    track_event_instant!("oracle", "big_event", |ctx: &mut EventContext| {
        ctx.add_debug_arg("blob", TrackEventDebugArg::String(&blob));
    });
    track_event_instant!("oracle", "done_marker", |ctx: &mut EventContext| {
        ctx.set_flush();
    });
}

/// Every packet of `workload::expected_test_packets` on the custom data
/// source, then a flush, waiting for its completion.
fn write_custom_packets(custom: &DataSource<'static>) {
    let packets = workload::expected_test_packets();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let done_tx = std::sync::Mutex::new(done_tx);
    custom.trace(|ctx: &mut TraceContext| {
        for p in &packets {
            ctx.add_packet(|packet: &mut TracePacket| {
                packet.set_timestamp(DataSourceTimestamp::now().timestamp());
                packet.set_for_testing(|t: &mut TestEvent| {
                    t.set_str(p.str.as_str());
                    t.set_seq_value(p.seq_value);
                    if let Some(c) = p.counter {
                        t.set_counter(c);
                    }
                    if p.is_last {
                        t.set_is_last(true);
                    }
                });
            });
        }
        let tx = done_tx.lock().unwrap().clone();
        ctx.flush(move || {
            let _ = tx.send(());
        });
    });
    // The SDK may never call back (a service that went away): bounded.
    let _ = done_rx.recv_timeout(Duration::from_secs(30));
}
