//! The `tracing` Layer end to end, as a user's program drives it: a
//! workload on named threads records through the in-process backend, and
//! the trace, decoded with the generated decoders and rebuilt into slices
//! per track, must show every point a user relies on: balanced slices,
//! their counts and nesting, span fields of five types (one recorded after
//! creation, one while its slice is open), events as instants inside their
//! span, thread tracks named after their threads and the process track
//! after the process, `follows_from` as a flow marked at both ends (cause
//! before follower; a cause whose slice is over ends with the flow), a
//! span entered on two threads as one slice on each thread's track, `counter.*` fields as counter tracks (a text one, and
//! an unsigned one above `i64::MAX`, as an exact annotation), a plain
//! message and a `log` record.
//! (Its own test binary: a process registers TrackEvent, and installs
//! `log`'s logger, once.)
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::sync::Barrier;

use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;
use zerotrace_core::track_event::{Category, InProcessConfig, InProcessSession, PerfettoLayer};
use zerotrace_protos::protos::TracePacketDecoder;

static TRACING: Category = Category::new("tracing");
static CATEGORIES: [&Category; 1] = [&TRACING];

/// A debug annotation's value.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(String),
}

/// One decoded TrackEvent.
#[derive(Debug, Clone)]
struct Ev {
    ts: u64,
    kind: i32,
    name: Option<String>,
    track: u64,
    flows: Vec<u64>,
    terminating: Vec<u64>,
    anns: Vec<(String, Val)>,
    counter: Option<Val>,
}

/// A slice rebuilt from its begin and end.
#[derive(Debug, Clone)]
struct Slice {
    name: String,
    track: u64,
    begin: Ev,
    end: Option<Ev>,
    depth: usize,
    parent: Option<usize>,
}

/// An instant, and the slice it falls in.
#[derive(Debug, Clone)]
struct Instant {
    ev: Ev,
    depth: usize,
    parent: Option<usize>,
}

/// The decoded trace.
#[derive(Debug, Default)]
struct Trace {
    events: Vec<Ev>,
    thread_names: HashMap<u64, Option<String>>,
    process_names: Vec<Option<String>>,
    counter_tracks: HashMap<u64, String>,
}

fn decode(trace: &[u8]) -> Trace {
    let mut out = Trace::default();
    // Interning and the default track are per sequence.
    let mut names: HashMap<(u32, u64), String> = HashMap::new();
    let mut ann_names: HashMap<(u32, u64), String> = HashMap::new();
    let mut default_track: HashMap<u32, u64> = HashMap::new();
    for f in protozero::Decoder::new(trace) {
        let f = f.expect("a well-formed Trace");
        let p = TracePacketDecoder::new(f.as_bytes().expect("a packet"));
        let seq = p.trusted_packet_sequence_id().unwrap_or(0);
        if let Some(d) = p
            .trace_packet_defaults()
            .and_then(|d| d.track_event_defaults())
            && let Some(t) = d.track_uuid()
        {
            default_track.insert(seq, t);
        }
        if let Some(i) = p.interned_data() {
            for e in i.event_names() {
                names.insert((seq, e.iid().unwrap()), e.name().unwrap().to_owned());
            }
            for e in i.debug_annotation_names() {
                ann_names.insert((seq, e.iid().unwrap()), e.name().unwrap().to_owned());
            }
        }
        if let Some(d) = p.track_descriptor() {
            let uuid = d.uuid().unwrap();
            if let Some(t) = d.thread() {
                out.thread_names
                    .insert(uuid, t.thread_name().map(str::to_owned));
            }
            if let Some(pr) = d.process() {
                out.process_names.push(pr.process_name().map(str::to_owned));
            }
            if d.has_counter() {
                out.counter_tracks
                    .insert(uuid, d.name().unwrap_or_default().to_owned());
            }
        }
        let Some(e) = p.track_event() else { continue };
        let anns = e
            .debug_annotations()
            .map(|a| {
                let name = ann_names[&(seq, a.name_iid().expect("interned name"))].clone();
                let v = if let Some(v) = a.int_value() {
                    Val::Int(v)
                } else if let Some(v) = a.uint_value() {
                    Val::Uint(v)
                } else if let Some(v) = a.double_value() {
                    Val::Double(v)
                } else if let Some(v) = a.bool_value() {
                    Val::Bool(v)
                } else {
                    Val::Str(a.string_value().expect("a value").to_owned())
                };
                (name, v)
            })
            .collect();
        let counter = e
            .counter_value()
            .map(Val::Int)
            .or(e.double_counter_value().map(Val::Double));
        out.events.push(Ev {
            ts: p.timestamp().expect("a timestamp"),
            kind: e.type_raw().expect("a type"),
            name: e.name_iid().map(|i| names[&(seq, i)].clone()),
            track: e
                .track_uuid()
                .or(default_track.get(&seq).copied())
                .expect("a track"),
            flows: e.flow_ids().collect(),
            terminating: e.terminating_flow_ids().collect(),
            anns,
            counter,
        });
    }
    out
}

/// Rebuilds slices and instants per track, in time order (the order
/// Perfetto's importer reads them in); panics on an end without a begin.
fn rebuild(events: &[Ev]) -> (Vec<Slice>, Vec<Instant>, Vec<(u64, usize)>) {
    let mut by_track: HashMap<u64, Vec<&Ev>> = HashMap::new();
    for e in events.iter().filter(|e| e.kind != 4) {
        by_track.entry(e.track).or_default().push(e);
    }
    let (mut slices, mut instants, mut unclosed) = (Vec::new(), Vec::new(), Vec::new());
    for (track, mut evs) in by_track {
        evs.sort_by_key(|e| e.ts);
        let mut stack: Vec<usize> = Vec::new();
        for e in evs {
            match e.kind {
                1 => {
                    slices.push(Slice {
                        name: e.name.clone().expect("a named slice"),
                        track,
                        begin: e.clone(),
                        end: None,
                        depth: stack.len(),
                        parent: stack.last().copied(),
                    });
                    stack.push(slices.len() - 1);
                }
                2 => {
                    let i = stack.pop().expect("an end has a begin on its track");
                    slices[i].end = Some(e.clone());
                }
                3 => instants.push(Instant {
                    ev: e.clone(),
                    depth: stack.len(),
                    parent: stack.last().copied(),
                }),
                t => panic!("unexpected type {t}"),
            }
        }
        if !stack.is_empty() {
            unclosed.push((track, stack.len()));
        }
    }
    (slices, instants, unclosed)
}

fn ann<'a>(anns: &'a [(String, Val)], name: &str) -> Option<&'a Val> {
    anns.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn workload(dispatch: &Dispatch) {
    // follows_from a span whose slice is over (it is still open).
    let produce = tracing::info_span!("produce");
    produce.in_scope(|| tracing::info!("produced"));
    let consume = tracing::info_span!("consume");
    consume.follows_from(&produce);
    consume.in_scope(|| {});
    drop(consume);
    drop(produce);

    // The usual shape: a request returns, and a task it spawned (created
    // later) follows from it and runs; a second task follows from it too.
    let handle = tracing::info_span!("handle");
    handle.in_scope(|| {});
    let task = tracing::info_span!("task");
    task.follows_from(&handle);
    task.in_scope(|| {});
    let task2 = tracing::info_span!("task2");
    task2.follows_from(&handle);
    task2.in_scope(|| {});
    drop((task, task2, handle));

    let request = tracing::info_span!(
        "request",
        id = 7u64,
        delta = -3i64,
        ratio = 0.5f64,
        ok = true,
        path = "/index",
        status = tracing::field::Empty,
        sent = tracing::field::Empty,
    );
    request.record("status", 200u64);
    {
        let _r = request.enter();
        tracing::info!(bytes = 512u64, "parsed chunk");
        // Recorded while its slice is open.
        request.record("sent", 1024u64);
        {
            let parse = tracing::debug_span!("parse", attempt = 1i64);
            let _p = parse.enter();
            tracing::info!(stage = "lex");
        }
        tracing::info!(counter.queue = 10i64);
        tracing::info!(counter.queue = 20i64, counter.load = 0.75f64);
        tracing::info!(counter.state = "busy");
        // Above i64::MAX: an int64 counter_value would wrap it, a double
        // round it; it stays an exact annotation.
        tracing::info!(counter.big = u64::MAX - 1);
        tracing::info!("plain message");
        log::warn!("disk {} almost full", 3);
        // follows_from a span whose slice is open now.
        let batch = tracing::info_span!("batch");
        let _b = batch.enter();
        let item = tracing::info_span!("item");
        item.follows_from(&batch);
        item.in_scope(|| {});
    }
    drop(request);

    // follows_from a span whose slice is open on another thread.
    let remote = tracing::info_span!("remote");
    let (entered, done) = (Barrier::new(2), Barrier::new(2));
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("zt-cause".into())
            .spawn_scoped(s, || {
                tracing::dispatcher::with_default(dispatch, || {
                    let _e = remote.enter();
                    entered.wait();
                    done.wait();
                })
            })
            .unwrap();
        entered.wait();
        let local = tracing::info_span!("local");
        local.follows_from(&remote);
        local.in_scope(|| {});
        done.wait();
    });

    // follows_from a span that has had no slice yet: both ends carry the
    // flow when they happen.
    let later = tracing::info_span!("later");
    let early = tracing::info_span!("early");
    early.follows_from(&later);
    early.in_scope(|| {});
    later.in_scope(|| {});

    // One span entered on two threads at once.
    let shared = tracing::info_span!("shared", n = 2u64);
    let barrier = Barrier::new(2);
    std::thread::scope(|s| {
        for name in ["zt-worker-1", "zt-worker-2"] {
            let (shared, barrier) = (&shared, &barrier);
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, move || {
                    tracing::dispatcher::with_default(dispatch, || {
                        let _e = shared.enter();
                        barrier.wait();
                        tracing::info!(worker = name);
                        barrier.wait();
                    })
                })
                .unwrap();
        }
    });
}

#[test]
fn a_workload_decodes_to_what_the_user_traced() {
    tracing_log::LogTracer::init().unwrap();
    let session = InProcessSession::start(&CATEGORIES, InProcessConfig::default()).unwrap();
    let dispatch = Dispatch::new(tracing_subscriber::registry().with(PerfettoLayer::new(&TRACING)));
    let d = dispatch.clone();
    std::thread::Builder::new()
        .name("zt-request".into())
        .spawn(move || tracing::dispatcher::with_default(&d, || workload(&d)))
        .unwrap()
        .join()
        .unwrap();
    let path = std::env::temp_dir().join(format!("zt-layer-wl-{}.pftrace", std::process::id()));
    session.stop(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);

    let trace = decode(&bytes);
    let (slices, instants, unclosed) = rebuild(&trace.events);
    // Every point is checked, and every failed one reported.
    let mut failed: Vec<String> = Vec::new();
    let mut check = |point: &str, ok: bool, detail: String| {
        if !ok {
            failed.push(format!("{point}: {detail}"));
        }
    };

    // Balanced, and as many slices as the workload made.
    check(
        "balanced begin/end",
        unclosed.is_empty(),
        format!("slices left open (track, how many): {unclosed:?}"),
    );
    let named =
        |n: &str| -> Vec<usize> { (0..slices.len()).filter(|&i| slices[i].name == n).collect() };
    for (name, count) in [
        ("produce", 1),
        ("consume", 1),
        ("handle", 1),
        ("task", 1),
        ("task2", 1),
        ("request", 1),
        ("parse", 1),
        ("batch", 1),
        ("item", 1),
        ("shared", 2),
        ("remote", 1),
        ("local", 1),
        ("early", 1),
        ("later", 1),
    ] {
        let n = named(name).len();
        check(
            "slice counts",
            n == count,
            format!("{n} {name} slices, not {count}"),
        );
    }
    let one = |n: &str| named(n).first().copied().expect("the slice");
    let (request, parse, batch, item) = (one("request"), one("parse"), one("batch"), one("item"));
    let end_ts = |i: usize| slices[i].end.as_ref().map_or(u64::MAX, |e| e.ts);

    // Thread tracks named after their threads; the process track after
    // the process (the first element of its cmdline, as Perfetto's SDK).
    let thread_of = |i: usize| trace.thread_names.get(&slices[i].track).cloned().flatten();
    let t = thread_of(request);
    check(
        "thread tracks named",
        t.as_deref() == Some("zt-request"),
        format!("request's thread is {t:?}"),
    );
    check(
        "thread tracks named",
        trace.thread_names.values().all(Option::is_some),
        format!("{:?}", trace.thread_names),
    );
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
    let argv0 = String::from_utf8_lossy(cmdline.split(|&b| b == 0).next().unwrap()).into_owned();
    check(
        "process track named",
        !trace.process_names.is_empty()
            && trace
                .process_names
                .iter()
                .all(|n| n.as_deref() == Some(argv0.as_str())),
        format!("{:?}, not {argv0}", trace.process_names),
    );

    // A span entered on two threads: one slice on each thread's track.
    let mut shared: Vec<_> = named("shared").into_iter().map(thread_of).collect();
    shared.sort();
    check(
        "a span entered on two threads",
        shared == [Some("zt-worker-1".into()), Some("zt-worker-2".into())],
        format!("its slices are on the tracks of {shared:?}"),
    );
    for i in named("shared") {
        check(
            "a span entered on two threads",
            slices[i].end.is_some() && ann(&slices[i].begin.anns, "n") == Some(&Val::Uint(2)),
            format!("{:?}", slices[i]),
        );
    }

    // Nesting.
    check(
        "nesting",
        slices[request].depth == 0,
        format!("{:?}", slices[request]),
    );
    check(
        "nesting",
        slices[parse].parent == Some(request),
        format!("{:?}", slices[parse]),
    );
    check(
        "nesting",
        slices[batch].parent == Some(request),
        format!("{:?}", slices[batch]),
    );
    check(
        "nesting",
        slices[item].parent == Some(batch) && slices[item].depth == 2,
        format!("{:?}", slices[item]),
    );

    // Span fields of five types, one recorded after creation.
    let a = &slices[request].begin.anns;
    for (k, v) in [
        ("id", Val::Uint(7)),
        ("delta", Val::Int(-3)),
        ("ratio", Val::Double(0.5)),
        ("ok", Val::Bool(true)),
        ("path", Val::Str("/index".into())),
    ] {
        check(
            "span fields",
            ann(a, k) == Some(&v),
            format!("{k} in {a:?}"),
        );
    }
    check(
        "a field recorded after creation",
        ann(a, "status") == Some(&Val::Uint(200)) && ann(a, "sent").is_none(),
        format!("{a:?}"),
    );
    let e = slices[request].end.as_ref().map(|e| e.anns.clone());
    check(
        "a field recorded after creation",
        e == Some(vec![("sent".into(), Val::Uint(1024))]),
        format!("recorded while open: on the end, {e:?}"),
    );
    let a = &slices[parse].begin.anns;
    check(
        "nested span fields",
        ann(a, "attempt") == Some(&Val::Int(1)),
        format!("{a:?}"),
    );

    // Events: instants with their fields, inside their span.
    let find = |pred: &dyn Fn(&Instant) -> bool| -> Option<&Instant> {
        let found: Vec<_> = instants.iter().filter(|i| pred(i)).collect();
        (found.len() == 1).then(|| found[0])
    };
    let chunk = find(&|i| ann(&i.ev.anns, "bytes").is_some());
    check(
        "events as instants inside their span",
        chunk.is_some_and(|c| {
            c.parent == Some(request)
                && ann(&c.ev.anns, "message") == Some(&Val::Str("parsed chunk".into()))
                && ann(&c.ev.anns, "bytes") == Some(&Val::Uint(512))
        }),
        format!("{chunk:?}"),
    );
    let lex = find(&|i| ann(&i.ev.anns, "stage").is_some());
    check(
        "events as instants inside their span",
        lex.is_some_and(|l| l.parent == Some(parse) && l.depth == 2),
        format!("{lex:?}"),
    );
    for worker in ["zt-worker-1", "zt-worker-2"] {
        let w = find(&|i| ann(&i.ev.anns, "worker") == Some(&Val::Str(worker.into())));
        let parent = w.and_then(|w| w.parent);
        check(
            "events as instants inside their span",
            parent.is_some_and(|p| {
                slices[p].name == "shared" && thread_of(p).as_deref() == Some(worker)
            }),
            format!("{worker}'s event in {:?}", parent.map(|p| &slices[p])),
        );
    }

    // A plain message.
    let plain = find(&|i| ann(&i.ev.anns, "message") == Some(&Val::Str("plain message".into())));
    check(
        "a plain event message",
        plain.is_some_and(|p| p.ev.anns.len() == 1 && p.parent == Some(request)),
        format!("{plain:?}"),
    );
    // A `log` record through tracing-log.
    let log = find(&|i| ann(&i.ev.anns, "message") == Some(&Val::Str("disk 3 almost full".into())));
    check(
        "a log record",
        log.is_some_and(|l| l.parent == Some(request) && ann(&l.ev.anns, "log.target").is_some()),
        format!("{log:?}"),
    );

    // `counter.*` fields: numeric ones counter tracks, a text one an
    // annotation of an instant (not dropped).
    let samples = |name: &str| -> Vec<Option<Val>> {
        trace
            .events
            .iter()
            .filter(|e| {
                e.kind == 4 && trace.counter_tracks.get(&e.track).map(String::as_str) == Some(name)
            })
            .map(|e| e.counter.clone())
            .collect()
    };
    for (name, want) in [
        ("queue", vec![Some(Val::Int(10)), Some(Val::Int(20))]),
        ("load", vec![Some(Val::Double(0.75))]),
        ("state", vec![]),
        ("big", vec![]),
    ] {
        let got = samples(name);
        check("counter tracks", got == want, format!("{name}: {got:?}"));
    }
    check(
        "counter-only events make no instant",
        !instants
            .iter()
            .any(|i| ann(&i.ev.anns, "counter.queue").is_some()),
        String::new(),
    );
    let state = find(&|i| ann(&i.ev.anns, "counter.state").is_some());
    check(
        "a text counter.* field is an annotation",
        state.is_some_and(|s| {
            ann(&s.ev.anns, "counter.state") == Some(&Val::Str("busy".into()))
                && s.parent == Some(request)
        }),
        format!("{state:?}"),
    );

    let big = find(&|i| ann(&i.ev.anns, "counter.big").is_some());
    check(
        "a counter.* value above i64::MAX is kept exactly",
        big.is_some_and(|b| {
            ann(&b.ev.anns, "counter.big") == Some(&Val::Uint(u64::MAX - 1))
                && b.parent == Some(request)
        }) && !trace.events.iter().any(|e| e.counter == Some(Val::Int(-2))),
        format!("{big:?}"),
    );

    // follows_from: a flow that leaves the cause's slice (an event inside
    // it starts it) and ends in the follower's, later.
    let within = |i: usize, ev: &Ev| {
        ev.track == slices[i].track && slices[i].begin.ts <= ev.ts && ev.ts <= end_ts(i)
    };
    for (cause, follower) in [
        ("produce", "consume"),
        ("handle", "task"),
        ("handle", "task2"),
        ("batch", "item"),
        ("remote", "local"),
    ] {
        let point = format!("follows_from as a flow ({cause} -> {follower})");
        let (c, f) = (one(cause), one(follower));
        let fs = &slices[f];
        let marks: Vec<&Ev> = [Some(&fs.begin), fs.end.as_ref()]
            .into_iter()
            .flatten()
            .filter(|e| !e.terminating.is_empty())
            .collect();
        let arrival = marks
            .iter()
            .find(|e| e.terminating.len() == 1)
            .filter(|_| marks.len() == 1);
        check(
            &point,
            arrival.is_some(),
            format!("the follower ends one flow: {marks:?}"),
        );
        let Some(arrival) = arrival else { continue };
        let flow = arrival.terminating[0];
        let starts: Vec<&Ev> = trace
            .events
            .iter()
            .filter(|e| e.flows.contains(&flow))
            .collect();
        check(
            &point,
            starts.len() == 1 && within(c, starts[0]),
            format!("one event in the cause's slice starts it: {starts:?}"),
        );
        check(
            &point,
            starts.iter().all(|s| s.ts < arrival.ts),
            "it runs from the cause to the follower".into(),
        );
    }
    // A cause whose slice is over when the follower arrives: the flow
    // starts at the cause's end, which carries it (`flow_ids`: Perfetto's
    // importer binds them to the slice the end closes), so a reader that
    // has already passed that time in a streamed trace still has it. The
    // first follower of a slice ends that flow; a second one starts from
    // an instant inside the slice.
    for (cause, follower) in [("produce", "consume"), ("handle", "task")] {
        let (c, f) = (&slices[one(cause)], &slices[one(follower)]);
        let end = c.end.as_ref();
        check(
            "follows_from a cause whose slice is over",
            end.is_some_and(|e| {
                e.flows.len() == 1 && f.begin.terminating == e.flows && e.ts < f.begin.ts
            }),
            format!("{cause}'s end {end:?}, {follower}'s begin {:?}", f.begin),
        );
    }
    let t = thread_of(one("remote"));
    check(
        "follows_from as a flow (remote -> local)",
        t.as_deref() == Some("zt-cause")
            && thread_of(one("local")).as_deref() == Some("zt-request"),
        format!("the cause on its own thread's track: {t:?}"),
    );
    // A cause with no slice yet: the flow on both begins, terminated by
    // neither (joined in the order they happen).
    let (early, later) = (&slices[one("early")].begin, &slices[one("later")].begin);
    check(
        "follows_from as a flow (later -> early)",
        early.flows.len() == 1
            && early.flows == later.flows
            && early.terminating.is_empty()
            && later.terminating.is_empty()
            && trace
                .events
                .iter()
                .filter(|e| e.flows == early.flows)
                .count()
                == 2,
        format!("{early:?} / {later:?}"),
    );
    assert!(
        failed.is_empty(),
        "{} failed:\n{}\n\nslices: {slices:#?}\ninstants: {instants:#?}",
        failed.len(),
        failed.join("\n")
    );
}
