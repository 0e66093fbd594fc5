//! The TrackEvent system backend through a real `zerotraced` loop: only the
//! categories the session's TrackEventConfig enables are recorded, every
//! thread gets its own sequence and thread track (named after the thread),
//! scoped slices nest, and disabled trace points do not evaluate their
//! arguments. (Its own test binary: a process registers TrackEvent once.)
#![cfg(target_os = "linux")]

mod service_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use protozero::{Decoder, HeapWriter};
use service_support::DaemonThread;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::DaemonConfig;
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{ProducerClient, ProducerOptions};
use zerotrace_core::track_event::{Category, TrackEvent, TrackSpec};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};
use zerotrace_protos::protos::{TraceConfig, TracePacketDecoder};

static RENDER: Category = Category::new("render");
static IO: Category = Category::new("io");
static SLOW: Category = Category::with("physics", &["slow"], "expensive");
static CATEGORIES: [&Category; 3] = [&RENDER, &IO, &SLOW];

static EVALUATED: AtomicUsize = AtomicUsize::new(0);

static QUEUE: TrackSpec = TrackSpec::counter(4242, "queue depth", None, 2, "");

fn costly() -> i64 {
    EVALUATED.fetch_add(1, Ordering::Relaxed);
    1
}

#[test]
fn categories_threads_and_scoped_slices() {
    let dir = std::env::temp_dir().join(format!("zt-te-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = DaemonConfig {
        producer_sockets: vec![Endpoint::Path(dir.join("p"))],
        consumer_socket: Endpoint::Path(dir.join("c")),
        log_level: 1,
        ..DaemonConfig::default()
    };
    let (p_ep, c_ep) = (cfg.producer_sockets[0].clone(), cfg.consumer_socket.clone());
    let daemon = DaemonThread::spawn(cfg).unwrap();

    let producer = Arc::new(
        ProducerClient::connect(
            &p_ep,
            ProducerOptions {
                name: "te".into(),
                ..Default::default()
            },
        )
        .unwrap(),
    );
    TrackEvent::register(producer.clone(), &CATEGORIES).unwrap();
    assert!(!RENDER.is_enabled());
    {
        let _g = trace_event!(RENDER, "before the session", "x" => costly());
    }
    assert_eq!(
        EVALUATED.load(Ordering::Relaxed),
        0,
        "arguments of a disabled trace point are not evaluated"
    );

    // Exactly "render": everything else disabled by pattern.
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(4096);
        let mut ds = c.add_data_sources();
        let mut cfg = ds.begin_config();
        cfg.set_name("track_event");
        let mut te = cfg.message().begin_nested(113);
        te.append_string(1, "*");
        te.append_string(2, "render");
    }
    let mut consumer = ConsumerClient::connect(&c_ep).unwrap();
    let session = consumer.enable_tracing(&w.finish().unwrap(), None).unwrap();
    producer
        .wait_for_start("track_event", Duration::from_secs(10))
        .unwrap();
    assert!(RENDER.is_enabled() && !IO.is_enabled() && !SLOW.is_enabled());

    let work = |n: i64| {
        for i in 0..n {
            let _outer = trace_event!(RENDER, "frame", "i" => i);
            {
                let _inner = trace_event!(RENDER, "draw", "what" => "triangles");
                trace_instant!(RENDER, "vsync");
            }
            trace_begin!(RENDER, "explicit", "k" => true);
            trace_end!(RENDER);
            trace_counter!(RENDER, QUEUE, i);
            let _off = trace_event!(IO, "read", "x" => costly());
            let _slow = trace_event!(SLOW, "step");
        }
    };
    let threads: Vec<_> = (0..3)
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("te-worker-{i}"))
                .spawn(move || work(10))
                .unwrap()
        })
        .collect();
    work(5);
    for t in threads {
        t.join().unwrap();
    }
    // A thread that stays alive and idle, its writer never flushed: the
    // service salvages its events by scraping the SMB at stop.
    let (wrote_tx, wrote) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let idle = std::thread::spawn(move || {
        work(5);
        // Unnamed in Rust: its track takes the kernel's name for it.
        let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
        wrote_tx.send(comm.trim_end().to_owned()).unwrap();
        let _ = release_rx.recv();
    });
    let idle_comm = wrote.recv().unwrap();
    TrackEvent::flush();
    producer.flush_blocking(Duration::from_secs(10)).unwrap();
    consumer.disable_tracing().unwrap();
    assert_eq!(
        consumer
            .wait_for_end(session, Some(Duration::from_secs(20)))
            .unwrap(),
        SessionEnd::Disabled
    );
    assert!(!RENDER.is_enabled(), "off again once the session stops");
    let trace = consumer.read_trace().unwrap();
    assert_eq!(EVALUATED.load(Ordering::Relaxed), 0);

    // Per sequence: resolve names, check nesting, count frames.
    /// Per sequence: interned names, open slices, frames seen.
    type SeqState = (std::collections::HashMap<u64, String>, Vec<String>, i32);
    let mut per_seq: std::collections::HashMap<u64, SeqState> = Default::default();
    let mut threads_seen = std::collections::HashMap::new();
    let mut counter_tracks: std::collections::HashMap<u32, i32> = Default::default();
    let mut counter_sum = 0i64;
    for f in Decoder::new(&trace) {
        let raw = f.unwrap().as_bytes().unwrap();
        let p = TracePacketDecoder::new(raw);
        let Some(seq) = p.trusted_packet_sequence_id().filter(|&s| s != 1) else {
            continue;
        };
        let (names, stack, frames) = per_seq.entry(seq as u64).or_default();
        if let Some(t) = p.track_descriptor().and_then(|d| d.thread()) {
            threads_seen.insert(t.tid().unwrap(), t.thread_name().map(str::to_owned));
        }
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert(e.iid().unwrap(), e.name().unwrap().to_owned());
            }
            for c in i.event_categories() {
                assert_eq!(
                    c.name(),
                    Some("render"),
                    "only the enabled category is written"
                );
            }
        }
        if let Some(d) = p.track_descriptor().filter(|d| d.uuid() == Some(4242)) {
            assert_eq!(d.name(), Some("queue depth"));
            assert_eq!(d.counter().and_then(|c| c.unit_raw()), Some(2));
            *counter_tracks.entry(seq).or_insert(0) += 1;
        }
        let Some(e) = p.track_event() else { continue };
        match e.type_raw() {
            Some(1) => {
                let name = names[&e.name_iid().unwrap()].clone();
                if name == "frame" {
                    *frames += 1;
                    assert!(stack.is_empty());
                } else {
                    assert_eq!(
                        stack.last().map(String::as_str),
                        Some("frame"),
                        "draw nests in frame"
                    );
                }
                stack.push(name);
            }
            Some(2) => {
                stack.pop().expect("an end matches a begin");
            }
            Some(3) => assert_eq!(names[&e.name_iid().unwrap()], "vsync"),
            Some(4) => {
                assert_eq!(e.track_uuid(), Some(4242));
                counter_sum += e.counter_value().unwrap();
            }
            t => panic!("{t:?}"),
        }
    }
    let frames: i32 = per_seq.values().map(|v| v.2).sum();
    assert_eq!(
        frames, 40,
        "3 threads x 10 + 5, and 5 salvaged from the idle thread"
    );
    assert_eq!(
        counter_sum,
        3 * 45 + 10 + 10,
        "every counter sample arrived"
    );
    assert_eq!(
        counter_tracks.len(),
        5,
        "each sequence describes the counter track"
    );
    assert!(
        counter_tracks.values().all(|&n| n == 1),
        "once per sequence"
    );
    assert_eq!(threads_seen.len(), 5, "a thread track per thread");
    // Every thread track is named: by the Rust name, else the kernel's.
    let mut names: Vec<String> = threads_seen.into_values().map(Option::unwrap).collect();
    names.sort();
    let me = std::thread::current().name().unwrap().to_owned();
    let mut want = vec![
        "te-worker-0".to_owned(),
        "te-worker-1".into(),
        "te-worker-2".into(),
        me,
        idle_comm,
    ];
    want.sort();
    assert_eq!(names, want, "thread names");
    release.send(()).unwrap();
    idle.join().unwrap();
    assert!(
        per_seq.values().all(|v| v.1.is_empty()),
        "every slice ended"
    );

    drop(daemon);
    let _ = std::fs::remove_dir_all(&dir);
}
