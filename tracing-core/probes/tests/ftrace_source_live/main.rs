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
//! which other tests' work beside it would disturb.) This file holds the
//! recording and comparing helpers; the tests are in its modules, one per
//! kind of check.

#[path = "../ftrace_common/mod.rs"]
mod ftrace_common;
#[path = "../producer_common/mod.rs"]
mod producer_common;

mod against_the_kernel_text;
mod config_options;
mod drains_and_clocks;
mod stats_and_symbols;

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
