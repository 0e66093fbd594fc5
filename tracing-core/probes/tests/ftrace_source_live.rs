//! `linux.ftrace`, the data source, against the running kernel. A config
//! naming a tracefs instance of the test's own is started through
//! [`FtraceSource`]; a known workload runs (two named threads waking each
//! other through a socket pair, a spawned process, `trace_marker` writes);
//! the kernel's own text of the instance's buffer is read just before the
//! probe's last drain, and the probe's packets, read back with upstream's
//! schema, must hold the same events per CPU in the same order: names,
//! pids, fields where we render them, timestamps to the µs the text
//! prints. Two sessions on one instance each get only their own events,
//! and the instance is given back as it was. Where tracefs cannot be had
//! the live tests say so in one line and pass, unless
//! `ZEROTRACE_REQUIRE_TRACEFS=1`.
//! (Its own test binary, not a module of `all/`: it records from the kernel,
//! which other tests' work beside it would disturb.)

mod ftrace_common;
mod producer_common;

use std::sync::{Arc, Mutex};

use ftrace_common::read_back::{Back, read_back};
use ftrace_common::{Instance, parse_text, tracecmd, tracefs, workload};
use producer_common::{ds_config, payload};
use zerotrace_probes::procfs::ProcRoot;
use zerotrace_probes::producer::ftrace::{FtraceSource, RawCopy};
use zerotrace_probes::producer::{BufferSink, DataSource, ProbeContext};
use zerotrace_protos::protos::{
    FtraceConfig, FtraceEventBundleDecoder, FtraceStatsDecoder, ftrace_stats::Phase,
};
use zerotrace_protos::upstream_tables::{
    data_source_field, interned_data_field, interned_string_field, packet_field,
};

/// Live recordings in this binary run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What the session records: the events of the shared workload's
/// recordings but the syscalls and irqs (unfiltered here, they would flood
/// the buffer).
fn events() -> Vec<&'static str> {
    ftrace_common::EVENTS
        .iter()
        .copied()
        .filter(|e| !e.starts_with("raw_syscalls/") && !e.starts_with("irq/"))
        .collect()
}

/// tracefs, or `None` (after saying so) where it cannot be had.
fn live_tracefs(test: &str) -> Option<std::path::PathBuf> {
    let required = std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_ok_and(|v| v == "1");
    match tracefs() {
        Ok(root) => Some(root),
        Err(why) => {
            assert!(
                !required,
                "ZEROTRACE_REQUIRE_TRACEFS=1 but tracefs is unavailable: {why}"
            );
            println!("{test} did not run: {why}");
            None
        }
    }
}

/// A `linux.ftrace` DataSourceConfig for `instance`.
fn config(instance: &str, events: &[&str], compact: bool) -> Vec<u8> {
    ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        for e in events {
            c.add_ftrace_events(e);
        }
        c.set_buffer_size_kb(2048)
            .set_drain_period_ms(50)
            .set_instance_name(instance);
        c.begin_compact_sched().set_enabled(compact);
    })
}

/// The probes' context, its log kept.
fn context() -> (ProbeContext, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let keep = lines.clone();
    let ctx = ProbeContext {
        root: ProcRoot::system(),
        clock: Arc::new(zerotrace_core::platform::boottime_ns),
        log: Arc::new(move |l| keep.lock().unwrap().push(l.to_owned())),
        wake: zerotrace_probes::producer::no_waker(),
    };
    (ctx, lines)
}

fn now() -> u64 {
    zerotrace_core::platform::boottime_ns()
}

/// The `ftrace_events` payloads among `packets`.
fn bundles(packets: &[Vec<u8>]) -> Vec<Vec<u8>> {
    packets
        .iter()
        .filter_map(|p| payload(p, packet_field::FTRACE_EVENTS).map(|(_, b)| b))
        .collect()
}

/// The `ftrace_stats` payloads among `packets`, in order.
fn stats(packets: &[Vec<u8>]) -> Vec<Vec<u8>> {
    packets
        .iter()
        .filter_map(|p| payload(p, packet_field::FTRACE_STATS).map(|(_, b)| b))
        .collect()
}

/// What a recording through the data source gave.
struct Taken {
    /// The kernel's text of the buffer, read just before the last drain.
    text: String,
    /// The probe's packets.
    packets: Vec<Vec<u8>>,
    /// What trace-cmd needs to decode the raw reads.
    layout: ftrace_common::Recording,
}

/// Records the workload through the data source (its raw reads copied
/// into `layout.raw`, per CPU).
fn record(root: &std::path::Path, name: &str, compact: bool) -> Taken {
    let inst = Instance::create(root, name).expect("instance");
    let (ctx, log) = context();
    let copy: RawCopy = Arc::default();
    let source = FtraceSource::at(root).with_raw_copy(copy.clone());
    let mut probe = source
        .create(&config(name, &events(), compact), &ctx)
        .expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    assert_eq!(inst.read("tracing_on").expect("tracing_on").trim(), "1");
    assert!(
        inst.read("trace_clock")
            .expect("trace_clock")
            .contains("[boot]"),
        "the probe sets the boot clock"
    );
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "1"
    );
    workload(&inst).expect("workload");
    // The kernel stops writing; its text is of the same buffer the last
    // drain then reads.
    inst.write("tracing_on", "0").expect("tracing_on");
    let text = inst.read("trace").expect("trace");
    let cmdlines = ftrace_common::read_text(&root.join("saved_cmdlines")).expect("cmdlines");
    probe.stop(now(), &mut sink);
    let log = log.lock().unwrap().clone();
    assert!(!log.iter().any(|l| l.contains("not recording")), "{log:?}");
    // The last session gave the instance back: events off again.
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "0"
    );
    assert_eq!(probe.stats().read_errors, 0, "{log:?}");
    let formats = events()
        .iter()
        .map(|ev| {
            let t = inst.read(&format!("events/{ev}/format")).expect("format");
            ((*ev).to_owned(), t)
        })
        .collect();
    let subbuf_size = match inst.read("buffer_subbuf_size_kb") {
        Ok(kb) => kb.trim().parse::<usize>().expect("subbuf") * 1024,
        Err(_) => 4096,
    };
    let copy = copy.lock().unwrap();
    let cpus = copy.iter().map(|(c, _)| *c as usize + 1).max().unwrap_or(0);
    let mut raw = vec![Vec::new(); cpus];
    for (cpu, bytes) in copy.iter() {
        raw[*cpu as usize].extend_from_slice(bytes);
    }
    let layout = ftrace_common::Recording {
        header_page: ftrace_common::read_text(&root.join("events/header_page")).expect("header"),
        formats,
        raw,
        text: text.clone(),
        cmdlines,
        cmdlines_before: String::new(),
        subbuf_size,
        kernel: String::new(),
        overrun: 0,
    };
    Taken {
        text,
        packets: sink.packets,
        layout,
    }
}

/// Our events per CPU, in timestamp order.
fn by_cpu(back: &[Back], cpu: usize) -> Vec<&Back> {
    let mut v: Vec<&Back> = back.iter().filter(|b| b.cpu as usize == cpu).collect();
    v.sort_by_key(|b| b.ts);
    v
}

/// Every event of the kernel's text is in our packets, per CPU in the same
/// order, and nothing else is; returns how many were compared field by
/// field.
fn compare(text: &str, packets: &[Vec<u8>], compact: bool) -> usize {
    let (want, lost) = parse_text(text);
    assert_eq!(lost, 0, "the buffer overflowed");
    let back = read_back(&bundles(packets));
    assert_eq!(back.len(), want.len(), "event counts");
    let cpus = want.iter().map(|t| t.cpu + 1).max().unwrap_or(0);
    let mut rendered = 0;
    for cpu in 0..cpus {
        let ours = by_cpu(&back, cpu);
        let theirs: Vec<_> = want.iter().filter(|t| t.cpu == cpu).collect();
        assert_eq!(ours.len(), theirs.len(), "cpu{cpu}");
        for (o, w) in ours.iter().zip(&theirs) {
            assert_eq!((o.ts + 500) / 1000, w.ts_us, "{o:?} vs {w:?}");
            if o.name != "print" {
                assert_eq!(o.name, w.name, "{o:?} vs {w:?}");
            }
            // compact_sched leaves out the pid of the task switching out.
            if let Some(pid) = o.pid {
                assert_eq!(pid, w.pid, "{o:?} vs {w:?}");
            } else {
                assert!(compact, "{o:?} has no pid");
            }
            if let Some(f) = &o.fields {
                // Compact switches render without the prev_* fields
                // (derived from the switch before): compare the rest.
                assert!(w.fields.ends_with(f.as_str()), "{o:?} vs {w:?}");
                rendered += 1;
            }
        }
    }
    for name in ["sched_switch", "sched_waking", "print"] {
        assert!(back.iter().any(|b| b.name == name), "no {name}");
    }
    rendered
}

/// The first and last packets are `ftrace_stats` START and END; returns
/// the END one's total overrun.
fn check_stats(packets: &[Vec<u8>]) -> u64 {
    let st = stats(packets);
    assert_eq!(st.len(), 2, "a START and an END ftrace_stats");
    let start = FtraceStatsDecoder::new(&st[0]);
    let end = FtraceStatsDecoder::new(&st[1]);
    assert_eq!(start.phase(), Some(Phase::StartOfTrace));
    assert_eq!(end.phase(), Some(Phase::EndOfTrace));
    assert!(start.cpu_stats().count() > 0);
    assert_eq!(start.cpu_stats().count(), end.cpu_stats().count());
    assert_eq!(start.unknown_ftrace_events().count(), 0);
    assert_eq!(start.failed_ftrace_events().count(), 0);
    assert!(payload(&packets[0], packet_field::FTRACE_STATS).is_some());
    assert!(payload(packets.last().expect("packets"), packet_field::FTRACE_STATS).is_some());
    end.cpu_stats().map(|c| c.overrun().unwrap_or(0)).sum()
}

#[test]
fn typed_events_through_the_data_source_match_the_kernel_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-typed-{}", std::process::id());
    let taken = record(&root, &name, false);
    let (text, packets) = (&taken.text, &taken.packets);
    let rendered = compare(text, packets, false);
    assert_eq!(check_stats(packets), 0);
    println!("{rendered} events compared field by field");
    assert!(rendered > 300, "{rendered}");
    assert!(!root.join("instances").join(&name).exists());
}

#[test]
fn compact_sched_through_the_data_source_matches_the_kernel_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-compact-{}", std::process::id());
    let taken = record(&root, &name, true);
    let (text, packets) = (&taken.text, &taken.packets);
    let rendered = compare(text, packets, true);
    assert_eq!(check_stats(packets), 0);
    assert!(rendered > 300, "{rendered}");
    // The switches and wakings went into compact_sched.
    let back = read_back(&bundles(packets));
    assert!(
        back.iter()
            .any(|b| b.name == "sched_switch" && b.pid.is_none())
    );
}

/// The second oracle, for exact nanoseconds: the raw pages the probe read
/// (copied as read), decoded by Debian's `trace-cmd`, against the probe's
/// packets: every event's CPU, timestamp to the ns, pid, name, print text,
/// and sched_switch's comms, pids and priorities.
#[test]
fn packets_match_trace_cmd_on_the_pages_the_probe_read() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-tracecmd-{}", std::process::id());
    let taken = record(&root, &name, false);
    let Some(lines) = tracecmd::report_or_skip(&taken.layout, "source", "packets_match_trace_cmd")
    else {
        return;
    };
    let back = read_back(&bundles(&taken.packets));
    assert_eq!(back.len(), lines.len());
    let mut switches = 0;
    for cpu in 0..taken.layout.raw.len() {
        let ours = by_cpu(&back, cpu);
        let theirs: Vec<_> = lines.iter().filter(|l| l.cpu == cpu).collect();
        assert_eq!(ours.len(), theirs.len(), "cpu{cpu}");
        for (o, w) in ours.iter().zip(&theirs) {
            let ctx = format!("{o:?} vs {w:?}");
            assert_eq!(o.ts, w.ts, "{ctx}");
            assert_eq!(o.pid, Some(w.pid), "{ctx}");
            assert_eq!(o.name, w.name, "{ctx}");
            let fields = o.fields.as_deref().unwrap_or("");
            match o.name.as_str() {
                "print" => {
                    let shown = w.fields.split_once(": ").map_or("", |x| x.1);
                    assert_eq!(fields, shown, "{ctx}");
                }
                "sched_switch" => {
                    // Ours as the kernel's text prints it; trace-cmd's own
                    // form is `comm:pid [prio] S ==> comm:pid [prio]`.
                    // A value runs to the next key (a comm may hold spaces:
                    // rustc's `lto cgu.10` threads).
                    let kv = |k: &str, next: &str| {
                        let at = fields.find(&format!("{k}=")).expect(k) + k.len() + 1;
                        let rest = &fields[at..];
                        let end = rest.find(&format!(" {next}=")).unwrap_or(rest.len());
                        rest[..end].to_owned()
                    };
                    let prev = format!(
                        "{}:{} [{}]",
                        kv("prev_comm", "prev_pid"),
                        kv("prev_pid", "prev_prio"),
                        kv("prev_prio", "prev_state")
                    );
                    let next = format!(
                        "==> {}:{} [{}]",
                        kv("next_comm", "next_pid"),
                        kv("next_pid", "next_prio"),
                        kv("next_prio", "")
                    );
                    assert!(
                        w.fields.starts_with(&prev) && w.fields.ends_with(&next),
                        "{ctx}: {prev} … {next}"
                    );
                    switches += 1;
                }
                _ => {}
            }
        }
    }
    assert!(switches > 100, "{switches}");
    println!("{} events match trace-cmd to the nanosecond", back.len());
}

#[test]
fn two_sessions_on_one_instance_get_their_own_events_and_give_it_back() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-two-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    inst.write("trace_clock", "local").expect("clock");
    inst.write("buffer_size_kb", "256").expect("size");
    let before_size = inst.read("buffer_size_kb").expect("size");
    let (ctx, log) = context();
    let source = FtraceSource::at(&root);
    let mut sched = source
        .create(&config(&name, &["sched/sched_switch"], false), &ctx)
        .expect("sched config");
    let mut marks = source
        .create(
            &config(&name, &["ftrace/print", "nosuchgroup/nosuchevent"], false),
            &ctx,
        )
        .expect("marker config");
    let (mut a, mut b) = (BufferSink::default(), BufferSink::default());
    sched.start(now(), &mut a);
    marks.start(now(), &mut b);
    for i in 0..20 {
        inst.write("trace_marker", &format!("zt-two {i}"))
            .expect("marker");
        std::thread::sleep(std::time::Duration::from_millis(2));
        if i % 5 == 4 {
            // Either session's drain reads for both.
            sched.poll(now(), &mut a);
            marks.poll(now(), &mut b);
        }
    }
    marks.stop(now(), &mut b);
    // One session left: the instance still records for it.
    assert_eq!(inst.read("tracing_on").expect("on").trim(), "1");
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "1"
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    sched.stop(now(), &mut a);
    drop((sched, marks));
    let log = log.lock().unwrap().clone();

    let a_back = read_back(&bundles(&a.packets));
    // Bundles are per CPU: the markers of a thread that moved between CPUs
    // come back in CPU order, so compare them in time order (the session's
    // clock is BOOTTIME, one clock for every CPU).
    let mut b_back = read_back(&bundles(&b.packets));
    b_back.sort_by_key(|e| e.ts);
    assert!(!a_back.is_empty(), "{log:?}");
    assert!(
        a_back.iter().all(|e| e.name == "sched_switch"),
        "{a_back:?}"
    );
    let texts: Vec<&str> = b_back
        .iter()
        .map(|e| {
            assert_eq!(e.name, "print");
            e.fields.as_deref().expect("print text")
        })
        .collect();
    let want: Vec<String> = (0..20).map(|i| format!("zt-two {i}")).collect();
    assert_eq!(texts, want, "{log:?}");
    let b_stats = stats(&b.packets);
    let start = FtraceStatsDecoder::new(&b_stats[0]);
    assert_eq!(
        start.unknown_ftrace_events().collect::<Vec<_>>(),
        ["nosuchgroup/nosuchevent"]
    );
    // Given back as the first session found it.
    assert!(inst.read("trace_clock").expect("clock").contains("[local]"));
    assert_eq!(inst.read("buffer_size_kb").expect("size"), before_size);
    assert_eq!(
        inst.read("events/sched/sched_switch/enable")
            .expect("enable")
            .trim(),
        "0"
    );
}

/// No tracefs where the source looks: the start says so in an
/// `ftrace_stats` packet (every requested event failed) and in the log,
/// and nothing panics. Runs everywhere.
#[test]
fn without_tracefs_the_stats_and_the_log_say_so() {
    let (ctx, log) = context();
    let source = FtraceSource::at("/nonexistent/tracefs");
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("sched/sched_switch")
            .add_ftrace_events("print");
    });
    let mut probe = source.create(&cfg, &ctx).expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(1, &mut sink);
    assert_eq!(probe.next_deadline(), None);
    probe.stop(2, &mut sink);
    let st = stats(&sink.packets);
    assert_eq!(st.len(), 1);
    let d = FtraceStatsDecoder::new(&st[0]);
    assert_eq!(d.phase(), Some(Phase::StartOfTrace));
    // Why, then every event asked for.
    let failed: Vec<&str> = d.failed_ftrace_events().collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert!(
        failed[0].starts_with("linux.ftrace not recording: "),
        "{failed:?}"
    );
    assert_eq!(failed[1..], ["sched/sched_switch", "print"]);
    let log = log.lock().unwrap();
    assert!(
        log.iter()
            .any(|l| l.starts_with("linux.ftrace: not recording")),
        "{log:?}"
    );
    drop(log);
    // A refused field does not stop the data source: the trace names it
    // (with the reason it records nothing here).
    let refused = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.set_enable_function_graph(true);
    });
    let mut probe = source.create(&refused, &ctx).expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(1, &mut sink);
    probe.stop(2, &mut sink);
    let st = stats(&sink.packets);
    let failed: Vec<&str> = FtraceStatsDecoder::new(&st[0])
        .failed_ftrace_events()
        .collect();
    assert_eq!(
        failed[1],
        zerotrace_probes::ftrace::config::refusal("enable_function_graph")
    );
}

/// `symbolize_ksyms`: the workqueue functions the kernel ran come as
/// indices, each named by an `interned_data.kernel_symbols` entry of the
/// same sequence (never the address itself), the first such packet
/// clearing the sequence's incremental state; the end's stats count the
/// symbols parsed.
#[test]
fn symbolize_ksyms_names_the_workqueue_functions() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-src-ksyms-{}", std::process::id());
    let _inst = Instance::create(&root, &name).expect("instance");
    let (ctx, log) = context();
    let source = FtraceSource::at(&root);
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("workqueue/workqueue_execute_start")
            .set_symbolize_ksyms(true)
            .set_instance_name(&name);
    });
    let mut probe = source.create(&cfg, &ctx).expect("config");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    for _ in 0..6 {
        // Writeback work items, besides the kernel's periodic ones.
        let _ = std::process::Command::new("sync").status();
        std::thread::sleep(std::time::Duration::from_millis(250));
        probe.poll(now(), &mut sink);
    }
    probe.stop(now(), &mut sink);
    let log = log.lock().unwrap().clone();

    let mut names = std::collections::HashMap::new();
    let mut used = Vec::new();
    let mut flags = Vec::new();
    for p in &sink.packets {
        let d = protozero::Decoder::new(p);
        let mut has_bundle = false;
        let mut packet_flags = None;
        for f in d {
            let f = f.expect("packet");
            match f.id {
                packet_field::FTRACE_EVENTS => {
                    has_bundle = true;
                    let b = FtraceEventBundleDecoder::new(f.as_bytes().expect("bundle"));
                    for ev in b.event() {
                        if let Some(w) = ev.workqueue_execute_start() {
                            used.push(w.function().expect("function"));
                        }
                    }
                }
                packet_field::INTERNED_DATA => {
                    for s in protozero::Decoder::new(f.as_bytes().expect("interned")) {
                        let s = s.expect("interned field");
                        assert_eq!(s.id, interned_data_field::KERNEL_SYMBOLS);
                        let mut iid = None;
                        let mut name = None;
                        for g in protozero::Decoder::new(s.as_bytes().expect("symbol")) {
                            let g = g.expect("symbol field");
                            match g.id {
                                interned_string_field::IID => iid = g.as_u64().ok(),
                                interned_string_field::STR => {
                                    name = Some(
                                        String::from_utf8(g.as_bytes().expect("str").to_vec())
                                            .expect("utf-8"),
                                    )
                                }
                                _ => {}
                            }
                        }
                        assert!(
                            names
                                .insert(iid.expect("iid"), name.expect("str"))
                                .is_none()
                        );
                    }
                }
                packet_field::SEQUENCE_FLAGS => packet_flags = f.as_u64().ok(),
                _ => {}
            }
        }
        if has_bundle {
            flags.push(packet_flags);
        }
    }
    assert!(!used.is_empty(), "no workqueue work ran: {log:?}");
    for iid in &used {
        let n = names
            .get(iid)
            .unwrap_or_else(|| panic!("index {iid} not named"));
        assert!(!n.is_empty() && !n.starts_with("0x"), "{n}");
        // An index, not a kernel address (KASLR is not disclosed).
        assert!(*iid < 1 << 32, "{iid:#x}");
    }
    // The first packet with symbols clears, later ones need the state.
    let first = flags.iter().position(|f| f.is_some()).expect("flags");
    assert_eq!(flags[first], Some(3));
    assert!(flags[first + 1..].iter().all(|f| *f == Some(2)));
    let st = stats(&sink.packets);
    let end = FtraceStatsDecoder::new(&st[1]);
    assert!(end.kernel_symbols_parsed().unwrap_or(0) > 1000);
    println!(
        "{} work items, {} symbols named: {:?}",
        used.len(),
        names.len(),
        names.values().take(3).collect::<Vec<_>>()
    );
}

/// The oracle with the probe draining as it does in a session: a second
/// instance records the same events for the kernel's own text while the
/// probe reads its instance every 10 ms during the workload. Markers
/// written to both instances bound a window; within it, per CPU, the same
/// events (names, pids, rendered fields), each matched to its copy within
/// 1 ms and at least 99% of them within ±5 µs (each instance stamps its
/// own copy, and a VM under load can be interrupted in between, which can
/// also swap neighbours in one copy; the text prints µs). Only events
/// within 1 ms of the window's edges may lack a copy (the two marker
/// writes are not simultaneous); the markers are left out.
#[test]
fn with_periodic_drains_the_packets_match_a_second_instances_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    let ours = Instance::create(&root, &format!("zt-src-drain-{pid}")).expect("instance");
    let theirs = Instance::create(&root, &format!("zt-src-oracle-{pid}")).expect("instance");
    theirs.write("tracing_on", "0").expect("off");
    theirs.write("trace_clock", "boot").expect("clock");
    theirs.write("buffer_size_kb", "2048").expect("size");
    for ev in events() {
        if !ev.starts_with("ftrace/") {
            theirs
                .write(&format!("events/{ev}/enable"), "1")
                .expect("enable");
        }
    }
    theirs.write("tracing_on", "1").expect("on");

    let (ctx, log) = context();
    let source = FtraceSource::at(&root);
    let name = ours.dir.file_name().and_then(|n| n.to_str()).expect("name");
    let mut probe = source
        .create(&config(name, &events(), false), &ctx)
        .expect("config");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    ours.write("trace_marker", "zt-window-begin")
        .expect("marker");
    theirs
        .write("trace_marker", "zt-window-begin")
        .expect("marker");
    let work = std::thread::spawn(pinged_workload);
    let mut polls = 0;
    while !work.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(10));
        probe.poll(now(), &mut sink);
        polls += 1;
    }
    work.join().expect("workload");
    theirs
        .write("trace_marker", "zt-window-end")
        .expect("marker");
    ours.write("trace_marker", "zt-window-end").expect("marker");
    theirs.write("tracing_on", "0").expect("off");
    let text = theirs.read("trace").expect("trace");
    probe.stop(now(), &mut sink);
    let log = log.lock().unwrap().clone();
    assert!(polls > 3, "{polls} drains during the workload");

    let back = read_back(&bundles(&sink.packets));
    let (want, lost) = parse_text(&text);
    assert_eq!(lost, 0);
    // The window, in µs, from the second instance's markers (written
    // inside the first's).
    let marker = |m: &str| {
        want.iter()
            .find(|t| t.name == "tracing_mark_write" && t.fields.contains(m))
            .map(|t| t.ts_us)
            .unwrap_or_else(|| panic!("no {m} in the text"))
    };
    let (begin, end) = (marker("zt-window-begin"), marker("zt-window-end"));
    let inside = |us: u64| us > begin + 10 && us + 10 < end;
    let cpus = want.iter().map(|t| t.cpu + 1).max().unwrap_or(0);
    let (mut compared, mut late) = (0, 0);
    for cpu in 0..cpus {
        let ours: Vec<&Back> = by_cpu(&back, cpu)
            .into_iter()
            .filter(|b| b.name != "print" && inside(b.ts / 1000))
            .collect();
        let theirs: Vec<_> = want
            .iter()
            .filter(|t| t.cpu == cpu && t.name != "tracing_mark_write" && inside(t.ts_us))
            .collect();
        // Each instance stamps its own copy of an event: an interrupt
        // between the two copies can order a CPU's events differently in
        // the two instances, and an event within the stamps' distance of
        // the window's edge can fall inside it in one instance only. So
        // each of ours is matched to the nearest unmatched event of theirs
        // with the same name, pid and fields within 1 ms, and only events
        // within 1 ms of an edge may be left unmatched.
        let near_edge = |us: u64| us < begin + 10 + 1000 || us + 10 + 1000 > end;
        let mut used = vec![false; theirs.len()];
        for o in &ours {
            let us = o.ts / 1000;
            let first = theirs.partition_point(|w| w.ts_us + 1000 < us);
            let found = (first..theirs.len())
                .take_while(|&j| theirs[j].ts_us <= us + 1000)
                .filter(|&j| !used[j])
                .filter(|&j| {
                    let w = theirs[j];
                    o.name == w.name
                        && o.pid == Some(w.pid)
                        && o.fields.as_ref().is_none_or(|f| f == &w.fields)
                })
                .min_by_key(|&j| theirs[j].ts_us.abs_diff(us));
            let Some(j) = found else {
                assert!(
                    near_edge(us),
                    "cpu{cpu}: {o:?} matches no event of the text within 1 ms: {log:?}"
                );
                continue;
            };
            used[j] = true;
            if theirs[j].ts_us.abs_diff(us) > 5 {
                late += 1;
            }
            compared += 1;
        }
        for (w, _) in theirs.iter().zip(&used).filter(|(_, u)| !**u) {
            assert!(
                near_edge(w.ts_us),
                "cpu{cpu}: {w:?} of the text matches none of ours within 1 ms: {log:?}"
            );
        }
    }
    println!("{compared} events matched across {polls} drains, {late} more than 5 µs apart");
    assert!(compared > 300, "{compared}");
    // The kernel stamps each instance's copy on its own; on a loaded VM an
    // interrupt or a preempted vCPU can land between the two copies. Nearly
    // all must be within 5 µs, every one within 1 ms.
    assert!(
        late * 100 <= compared,
        "{late} of {compared} more than 5 µs apart"
    );
}

/// The two-thread ping-pong (paced, so it spans many drains) and a
/// spawned process, without markers.
fn pinged_workload() {
    use std::io::{Read, Write};
    let (a, b) = std::os::unix::net::UnixStream::pair().expect("pair");
    let (mut a2, mut b2) = (a.try_clone().expect("clone"), b.try_clone().expect("clone"));
    let pong = std::thread::Builder::new()
        .name("zt-pong".into())
        .spawn(move || {
            let mut byte = [0u8; 1];
            for _ in 0..300 {
                if b2.read_exact(&mut byte).is_err() || b2.write_all(&byte).is_err() {
                    break;
                }
            }
        })
        .expect("spawn");
    std::thread::Builder::new()
        .name("zt-ping".into())
        .spawn(move || {
            let mut byte = [7u8; 1];
            for _ in 0..300 {
                if a2.write_all(&byte).is_err() || a2.read_exact(&mut byte).is_err() {
                    break;
                }
                if byte[0] == 7 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        })
        .expect("spawn")
        .join()
        .expect("ping");
    pong.join().expect("pong");
    drop((a, b));
    let status = std::process::Command::new("/bin/true")
        .status()
        .expect("spawn /bin/true");
    assert!(status.success());
}

/// With `use_monotonic_raw_clock` the ring buffer runs on `mono_raw`, and
/// every bundle says so, as upstream's probes write it: `ftrace_clock`
/// MONO_RAW and a pair of readings (`ftrace_timestamp`, `boot_timestamp`)
/// from which a reader converts the events' times to BOOTTIME. Markers
/// written at known BOOTTIME instants convert back to within 10 µs.
#[test]
fn a_clock_other_than_boot_is_said_and_converts_back_to_boottime() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-clock-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    assert!(
        inst.read("trace_clock")
            .expect("trace_clock")
            .contains("mono_raw"),
        "this kernel offers no mono_raw clock"
    );
    let (ctx, log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_buffer_size_kb(1024)
            .set_drain_period_ms(10_000)
            .set_instance_name(&name)
            .set_use_monotonic_raw_clock(true);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    assert!(
        inst.read("trace_clock")
            .expect("trace_clock")
            .contains("[mono_raw]"),
        "the probe sets mono_raw"
    );
    use std::io::Write;
    let mut marker = std::fs::OpenOptions::new()
        .write(true)
        .open(root.join("instances").join(&name).join("trace_marker"))
        .expect("trace_marker");
    // (text, BOOTTIME at the write, half the write's window)
    let mut known = Vec::new();
    for i in 0..20 {
        let text = format!("zt-clock-{i}");
        let t0 = now();
        marker.write_all(text.as_bytes()).expect("marker");
        let t1 = now();
        known.push((text, t0 + (t1 - t0) / 2, (t1 - t0) / 2));
        if i % 5 == 4 {
            // A read pass soon after, as the drain period would.
            probe.flush(now(), &mut sink);
        }
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    probe.stop(now(), &mut sink);
    assert_eq!(probe.stats().read_errors, 0, "{:?}", log.lock().unwrap());
    let mut worst = 0i64;
    let mut worst_abs = 0i64;
    let mut found = 0;
    for b in bundles(&sink.packets) {
        let d = FtraceEventBundleDecoder::new(&b);
        let events = read_back(std::slice::from_ref(&b));
        if events.is_empty() {
            continue;
        }
        assert_eq!(d.ftrace_clock_raw(), Some(4), "FTRACE_CLOCK_MONO_RAW");
        let (fts, bts) = (
            d.ftrace_timestamp().expect("ftrace_timestamp"),
            d.boot_timestamp().expect("boot_timestamp"),
        );
        assert!(fts > 0 && bts > 0);
        for e in events {
            let Some((_, at, half)) = known
                .iter()
                .find(|(t, _, _)| e.fields.as_deref() == Some(t.as_str()))
            else {
                continue;
            };
            found += 1;
            let boot = e.ts as i64 - fts + bts;
            let abs = (boot - *at as i64).abs();
            worst_abs = worst_abs.max(abs);
            worst = worst.max(abs - *half as i64);
        }
    }
    assert_eq!(found, known.len(), "every marker in the bundles");
    println!(
        "mono_raw → BOOTTIME: worst error {worst_abs} ns ({worst} ns beyond half the write's window)"
    );
    assert!(worst <= 10_000, "converted within 10 µs: {worst} ns");
    // The instance is given back on the clock it had.
    assert!(
        !inst
            .read("trace_clock")
            .expect("trace_clock")
            .contains("[mono_raw]"),
        "the clock is restored"
    );
}

/// A refused `FtraceConfig` field does not stop the rest: the session
/// records its events, and the trace's first `ftrace_stats` names the
/// field among `failed_ftrace_events`, where Perfetto's importer shows
/// ftrace setup errors.
#[test]
fn a_refused_field_is_named_in_the_trace_and_the_rest_records() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-refused-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, _log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_buffer_size_kb(512)
            .set_instance_name(&name)
            .set_enable_function_graph(true);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted without the refused field");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    inst.write("trace_marker", "zt-refused").expect("marker");
    probe.stop(now(), &mut sink);
    let st = stats(&sink.packets);
    let start = FtraceStatsDecoder::new(&st[0]);
    let failed: Vec<&str> = start.failed_ftrace_events().collect();
    assert_eq!(
        failed,
        [zerotrace_probes::ftrace::config::refusal("enable_function_graph").as_str()]
    );
    let back = read_back(&bundles(&sink.packets));
    assert!(
        back.iter()
            .any(|b| b.fields.as_deref() == Some("zt-refused")),
        "the rest recorded"
    );
}

/// `drain_buffer_percent`: a burst many times the buffer, written faster
/// than the drain period reads, is read as each CPU's buffer passes the
/// watermark (the probe wakes its driver), and nothing is overrun. With
/// the period alone (10 s here) the same burst overruns.
#[test]
fn drain_buffer_percent_reads_a_burst_without_overruns() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    if !zerotrace_probes::ftrace::watermark::poll_supported(&release) {
        assert!(
            std::env::var("ZEROTRACE_REQUIRE_TRACEFS").is_err(),
            "Linux {release}: buffer_percent wake-ups need 6.9"
        );
        println!("drain_buffer_percent did not run: Linux {release} is older than 6.9");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-burst-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (mut ctx, log) = context();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let tx = Mutex::new(tx);
    ctx.wake = Arc::new(move || {
        let _ = tx.lock().unwrap().send(());
    });
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_buffer_size_kb(128)
            .set_drain_period_ms(10_000)
            .set_drain_buffer_percent(20)
            .set_instance_name(&name);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("config accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    assert_eq!(
        inst.read("buffer_percent").expect("buffer_percent").trim(),
        "20"
    );
    const MARKERS: usize = 10_000;
    let path = root.join("instances").join(&name).join("trace_marker");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let pad = "p".repeat(180);
        for i in 0..MARKERS {
            f.write_all(format!("zt-burst {i:06} {pad}").as_bytes())
                .unwrap();
            if i % 20 == 19 {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    });
    // The probes' thread, by hand: poll at the deadline or when woken.
    let mut wakes = 0;
    while !writer.is_finished() {
        let wait = probe
            .next_deadline()
            .map_or(100_000_000, |d| d.saturating_sub(now()))
            .min(100_000_000);
        if rx
            .recv_timeout(std::time::Duration::from_nanos(wait))
            .is_ok()
        {
            wakes += 1;
        }
        if probe.next_deadline().is_some_and(|d| d <= now()) {
            probe.poll(now(), &mut sink);
        }
    }
    writer.join().unwrap();
    probe.stop(now(), &mut sink);
    let st = stats(&sink.packets);
    let end = FtraceStatsDecoder::new(st.last().expect("stats"));
    let overrun: u64 = end.cpu_stats().map(|c| c.overrun().unwrap_or(0)).sum();
    let back = read_back(&bundles(&sink.packets));
    let got = back
        .iter()
        .filter(|b| {
            b.fields
                .as_deref()
                .is_some_and(|f| f.starts_with("zt-burst "))
        })
        .count();
    println!("drain_buffer_percent: {wakes} wake-ups, {got} markers, overrun {overrun}");
    assert!(
        wakes > 5,
        "woken by the watermark: {wakes}; {:?}",
        log.lock().unwrap()
    );
    assert_eq!(overrun, 0, "nothing overrun");
    assert_eq!(got, MARKERS, "every marker read");
}

/// `preserve_ftrace_buffer`: what the instance's ring buffer held before
/// the session started (a marker written while nobody recorded) is read
/// into the trace, as the kernel's own text of the buffer shows it, and
/// the start's `ftrace_stats` says the buffer was kept; without it the
/// start clears the buffer.
#[test]
fn preserve_ftrace_buffer_keeps_what_the_buffer_held() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for preserve in [true, false] {
        let name = format!("zt-preserve-{preserve}-{}", std::process::id());
        let inst = Instance::create(&root, &name).expect("instance");
        inst.write("tracing_on", "1").expect("tracing_on");
        inst.write("trace_marker", "zt-before").expect("marker");
        let (ctx, _log) = context();
        let cfg = ds_config("linux.ftrace", |m| {
            let mut c =
                FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
            c.add_ftrace_events("ftrace/print");
            c.set_instance_name(&name)
                .set_preserve_ftrace_buffer(preserve);
        });
        let mut probe = FtraceSource::at(&root)
            .create(&cfg, &ctx)
            .expect("accepted");
        let mut sink = BufferSink::default();
        probe.start(now(), &mut sink);
        inst.write("trace_marker", "zt-after").expect("marker");
        let text = inst.read("trace").expect("trace");
        probe.stop(now(), &mut sink);
        let st = stats(&sink.packets);
        assert_eq!(
            FtraceStatsDecoder::new(&st[0]).preserve_ftrace_buffer(),
            preserve.then_some(true)
        );
        let back = read_back(&bundles(&sink.packets));
        let ours: Vec<&str> = back
            .iter()
            .filter_map(|b| b.fields.as_deref())
            .filter(|f| f.starts_with("zt-"))
            .collect();
        let theirs: Vec<&str> = ["zt-before", "zt-after"]
            .into_iter()
            .filter(|m| text.contains(&format!(": {m}")))
            .collect();
        assert_eq!(
            ours, theirs,
            "as the kernel's text (preserve: {preserve})\n{text}"
        );
        let want: &[&str] = if preserve {
            &["zt-before", "zt-after"]
        } else {
            &["zt-after"]
        };
        assert_eq!(ours, want, "preserve: {preserve}");
    }
}

/// `print_filter`: of the `trace_marker` messages the kernel's own text of
/// the buffer holds, the trace keeps exactly those the rules allow (first
/// matching rule decides; no match keeps), atrace-style `B|PID|...` rules
/// included.
#[test]
fn print_filter_keeps_what_the_rules_allow_of_the_kernels_text() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-printf-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, _log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("ftrace/print");
        c.set_instance_name(&name);
        let mut f = c.begin_print_filter();
        f.add_rules().set_prefix("zt-drop").set_allow(false);
        {
            let mut r = f.add_rules();
            r.begin_atrace_msg().set_type("B").set_prefix("keep");
            r.set_allow(true);
        }
        f.add_rules().set_prefix("B|").set_allow(false);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    let sent = [
        "zt-drop 1",
        "zt-keep 2",
        "B|123|keep me",
        "B|123|other",
        "E|123",
        "zt-drop-too 3",
    ];
    for m in sent {
        inst.write("trace_marker", m).expect("marker");
    }
    let text = inst.read("trace").expect("trace");
    probe.stop(now(), &mut sink);
    // Every message is in the kernel's buffer...
    for m in sent {
        assert!(text.contains(&format!(": {m}")), "{m} in\n{text}");
    }
    // ... and the trace keeps those the rules allow, in order.
    let ours: Vec<&str> = read_back(&bundles(&sink.packets))
        .iter()
        .filter_map(|b| b.fields.clone())
        .map(|f| sent.into_iter().find(|m| *m == f).expect("a sent message"))
        .collect();
    assert_eq!(ours, ["zt-keep 2", "B|123|keep me", "E|123"]);
}

/// `syscall_events`: the kernel records only the named syscalls
/// (`raw_syscalls` filtered by id), as its own text of the buffer shows,
/// and the trace holds exactly those records.
#[test]
fn syscall_events_record_only_the_named_syscalls() {
    let Some(root) = live_tracefs("ftrace_source_live") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = format!("zt-syscalls-{}", std::process::id());
    let inst = Instance::create(&root, &name).expect("instance");
    let (ctx, log) = context();
    let cfg = ds_config("linux.ftrace", |m| {
        let mut c = FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_syscall_events("sys_getppid");
        c.set_instance_name(&name).set_buffer_size_kb(1024);
    });
    let mut probe = FtraceSource::at(&root)
        .create(&cfg, &ctx)
        .expect("accepted");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    let getppid = zerotrace_probes::ftrace::syscalls::syscall_id("sys_getppid").expect("getppid");
    assert_eq!(
        inst.read("events/raw_syscalls/sys_enter/filter")
            .expect("filter")
            .trim(),
        format!("id == {getppid}")
    );
    for _ in 0..5 {
        std::hint::black_box(std::os::unix::process::parent_id());
        std::hint::black_box(std::process::id());
    }
    inst.write("tracing_on", "0").expect("tracing_on");
    let text = inst.read("trace").expect("trace");
    probe.stop(now(), &mut sink);
    assert_eq!(probe.stats().read_errors, 0, "{:?}", log.lock().unwrap());
    // The kernel's text: every record is getppid's.
    let count = |what: &str| text.lines().filter(|l| l.contains(what)).count();
    let (enters, exits) = (count(" sys_enter: NR "), count(" sys_exit: NR "));
    assert!(enters >= 5 && exits >= 5, "{text}");
    assert_eq!(
        count(&format!(" sys_enter: NR {getppid} ")),
        enters,
        "{text}"
    );
    // Ours: the same records.
    let back = read_back(&bundles(&sink.packets));
    let ours = |n: &str| back.iter().filter(|b| b.name == n).count();
    assert_eq!((ours("sys_enter"), ours("sys_exit")), (enters, exits));
    // The instance is given back without a filter.
    assert_eq!(
        inst.read("events/raw_syscalls/sys_enter/filter")
            .expect("filter")
            .trim(),
        "none"
    );
}
