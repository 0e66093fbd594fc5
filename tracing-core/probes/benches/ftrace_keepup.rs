//! Does `linux.ftrace` keep up with a busy machine, and what does it cost
//! next to a naive tool that reads the kernel's text? Two threads pinned
//! to different CPUs ping-pong a byte through socket pairs, paced to a
//! fixed rate of context switches per second (each round trip is four
//! switches and two wakeups), for a few seconds, twice:
//!
//! * `probes`: our data source records `sched_switch` and `sched_waking`
//!   (compact_sched, `buffer_size_kb: 4096`, `drain_period_ms: 100`) into
//!   a tracefs instance of its own, drained on its own thread;
//! * `text path`: the same events enabled on an instance read through its
//!   `trace_pipe`, every line parsed into its fields, on its own thread.
//!
//! For each: events recorded per second, the reading thread's CPU time
//! (user + system, so the kernel's formatting of the text counts) per
//! event and per 100k events/s, and the kernel's overruns. Needs root
//! (tracefs); it says so and exits otherwise. Not a criterion bench: what
//! it measures is a live system's CPU accounting, one run per variant.
//!
//! Run: `cargo bench -p zerotrace-probes --bench ftrace_keepup` (optional
//! arguments: switches per second, seconds; default 200000 and 3).

#[path = "../tests/ftrace_common/mod.rs"]
mod ftrace_common;

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ftrace_common::{Instance, tracefs};
use protozero::{Decoder, HeapWriter};
use zerotrace_probes::procfs::ProcRoot;
use zerotrace_probes::producer::ftrace::FtraceSource;
use zerotrace_probes::producer::{DataSource, PacketSink, ProbeContext};
use zerotrace_protos::protos::TracePacket;
use zerotrace_protos::protos::{FtraceConfig, FtraceEventBundleDecoder, FtraceStatsDecoder};
use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

fn pin(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// Two pinned threads waking each other at `switches_per_s` (four
/// switches per round trip) until `stop`.
fn ping_pong(switches_per_s: u64, stop: Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    let (a, b) = std::os::unix::net::UnixStream::pair().expect("pair");
    let (mut a2, mut b2) = (a.try_clone().expect("clone"), b.try_clone().expect("clone"));
    let round_trips_per_s = (switches_per_s / 4).max(1);
    let pong = std::thread::spawn(move || {
        pin(1);
        let mut byte = [0u8; 1];
        while b2.read_exact(&mut byte).is_ok() && byte[0] != 0 {
            if b2.write_all(&byte).is_err() {
                break;
            }
        }
    });
    let ping = std::thread::spawn(move || {
        pin(0);
        let start = Instant::now();
        let mut n: u64 = 0;
        let mut byte = [1u8; 1];
        while !stop.load(Ordering::Relaxed) {
            if a2.write_all(&byte).is_err() || a2.read_exact(&mut byte).is_err() {
                break;
            }
            n += 1;
            // Paced: spin (no switches) until the next round trip is due.
            let due = Duration::from_nanos(n * 1_000_000_000 / round_trips_per_s);
            while start.elapsed() < due && !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
        let _ = a2.write_all(&[0]);
        drop((a, b));
    });
    vec![ping, pong]
}

/// Lets the reader settle, runs the ping-pong for `secs`, then raises
/// `stop`; the seconds the load ran.
fn drive_load(rate: u64, secs: u64, stop: &Arc<AtomicBool>) -> f64 {
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let load = ping_pong(rate, stop.clone());
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for t in load {
        let _ = t.join();
    }
    started.elapsed().as_secs_f64()
}

/// Keeps what a probe writes.
#[derive(Default)]
struct Keep {
    packets: Vec<Vec<u8>>,
}

impl PacketSink for Keep {
    fn packet(&mut self, f: &mut dyn FnMut(&mut TracePacket<'_>)) {
        let mut w = HeapWriter::new();
        {
            let mut p = TracePacket::from_message(w.root());
            f(&mut p);
        }
        self.packets.push(w.finish().unwrap_or_default());
    }
}

struct Outcome {
    events: u64,
    cpu_ns: u64,
    overruns: u64,
    secs: f64,
}

fn report(name: &str, o: &Outcome) {
    let per_s = o.events as f64 / o.secs;
    let ns_per_event = o.cpu_ns as f64 / o.events.max(1) as f64;
    let cpu_share = o.cpu_ns as f64 / (o.secs * 1e9);
    println!(
        "{name:<10} {:>10.0} events/s  {:>7.1} ns CPU/event  {:>6.2}% of a CPU ({:.2}% per 100k events/s)  overruns {}",
        per_s,
        ns_per_event,
        cpu_share * 100.0,
        cpu_share * 100.0 / (per_s / 100_000.0).max(f64::MIN_POSITIVE),
        o.overruns
    );
}

fn run_probes(root: &std::path::Path, rate: u64, secs: u64) -> Outcome {
    let name = format!("zt-keepup-probes-{}", std::process::id());
    let _inst = Instance::create(root, &name).expect("instance");
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        root.append_string(data_source_field::NAME, "linux.ftrace");
        let mut c = FtraceConfig::from_message(root.begin_nested(data_source_field::FTRACE_CONFIG));
        c.add_ftrace_events("sched/sched_switch")
            .add_ftrace_events("sched/sched_waking")
            .set_buffer_size_kb(4096)
            .set_drain_period_ms(100)
            .set_instance_name(&name);
    }
    let cfg = w.finish().expect("config");
    let ctx = ProbeContext {
        root: ProcRoot::system(),
        clock: Arc::new(zerotrace_core::platform::boottime_ns),
        log: Arc::new(|l| eprintln!("{l}")),
        wake: zerotrace_probes::producer::no_waker(),
    };
    let source = FtraceSource::at(root);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_probe = stop.clone();
    let reader = std::thread::Builder::new()
        .name("zt-probes-read".into())
        .spawn(move || {
            let mut probe = source.create(&cfg, &ctx).expect("config");
            let mut sink = Keep::default();
            let now = zerotrace_core::platform::boottime_ns;
            let cpu0 = thread_cpu_ns();
            probe.start(now(), &mut sink);
            while !stop_probe.load(Ordering::Relaxed) {
                let due = probe.next_deadline().unwrap_or(0);
                let t = now();
                if due > t {
                    std::thread::sleep(
                        Duration::from_nanos(due - t).min(Duration::from_millis(20)),
                    );
                    continue;
                }
                probe.poll(t, &mut sink);
            }
            probe.stop(now(), &mut sink);
            let cpu = thread_cpu_ns() - cpu0;
            (sink, cpu)
        })
        .expect("spawn");
    let secs = drive_load(rate, secs, &stop);
    let (sink, cpu_ns) = reader.join().expect("reader");
    let mut events = 0u64;
    let mut overruns = 0u64;
    for p in &sink.packets {
        for f in Decoder::new(p).flatten() {
            match f.id {
                packet_field::FTRACE_EVENTS => {
                    let b = FtraceEventBundleDecoder::new(f.as_bytes().unwrap_or_default());
                    events += b.event().count() as u64;
                    if let Some(c) = b.compact_sched() {
                        events +=
                            (c.switch_timestamp().count() + c.waking_timestamp().count()) as u64;
                    }
                }
                packet_field::FTRACE_STATS => {
                    let s = FtraceStatsDecoder::new(f.as_bytes().unwrap_or_default());
                    if s.phase() == Some(zerotrace_protos::protos::ftrace_stats::Phase::EndOfTrace)
                    {
                        overruns = s.cpu_stats().map(|c| c.overrun().unwrap_or(0)).sum();
                    }
                }
                _ => {}
            }
        }
    }
    Outcome {
        events,
        cpu_ns,
        overruns,
        secs,
    }
}

/// One `trace_pipe` line split into its fields, as a naive tool does.
fn parse_line(line: &str) -> Option<usize> {
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let task = line[..open].trim_start();
    let dash = task.rfind('-')?;
    let _pid: i64 = task[dash + 1..].trim().parse().ok()?;
    let _cpu: usize = line[open + 2..close].parse().ok()?;
    let rest = line[close + 1..].trim_start();
    let rest = rest.split_once(' ')?.1.trim_start();
    let (ts, rest) = rest.split_once(": ")?;
    let (secs, usecs) = ts.split_once('.')?;
    let _ts = secs.parse::<u64>().ok()? * 1_000_000 + usecs.parse::<u64>().ok()?;
    let (_name, fields) = rest.split_once(": ")?;
    Some(
        fields
            .split(' ')
            .filter_map(|kv| kv.split_once('='))
            .count(),
    )
}

fn run_text(root: &std::path::Path, rate: u64, secs: u64) -> Outcome {
    let name = format!("zt-keepup-text-{}", std::process::id());
    let inst = Instance::create(root, &name).expect("instance");
    inst.write("buffer_size_kb", "4096").expect("size");
    inst.write("trace_clock", "boot").expect("clock");
    inst.write("events/sched/sched_switch/enable", "1")
        .expect("enable");
    inst.write("events/sched/sched_waking/enable", "1")
        .expect("enable");
    let pipe = inst.dir.join("trace_pipe");
    let stop = Arc::new(AtomicBool::new(false));
    let stop_reader = stop.clone();
    let reader = std::thread::Builder::new()
        .name("zt-text-read".into())
        .spawn(move || {
            let mut f = std::fs::File::open(&pipe).expect("trace_pipe");
            let mut buf = vec![0u8; 1 << 16];
            let mut carry = String::new();
            let mut events = 0u64;
            let cpu0 = thread_cpu_ns();
            loop {
                // trace_pipe blocks while empty; the marker below ends it.
                let n = match f.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                carry.push_str(&String::from_utf8_lossy(&buf[..n]));
                let mut done = false;
                let last_nl = carry.rfind('\n').map_or(0, |i| i + 1);
                for line in carry[..last_nl].lines() {
                    if line.contains("zt-keepup-end") {
                        done = true;
                    } else if parse_line(line).is_some() {
                        events += 1;
                    }
                }
                carry.drain(..last_nl);
                if done && stop_reader.load(Ordering::Relaxed) {
                    break;
                }
            }
            (events, thread_cpu_ns() - cpu0)
        })
        .expect("spawn");
    let secs = drive_load(rate, secs, &stop);
    inst.write("trace_marker", "zt-keepup-end").expect("marker");
    let (events, cpu_ns) = reader.join().expect("reader");
    let overruns = ftrace_common::overruns(&inst).expect("overruns");
    Outcome {
        events,
        cpu_ns,
        overruns,
        secs,
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let rate: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let secs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let root = match tracefs() {
        Ok(r) => r,
        Err(why) => {
            println!("ftrace_keepup did not run: {why}");
            return;
        }
    };
    println!("ping-pong paced at {rate} context switches/s across CPUs 0 and 1, {secs} s each");
    let ours = run_probes(&root, rate, secs);
    report("probes", &ours);
    let text = run_text(&root, rate, secs);
    report("text path", &text);
    let ours_ns = ours.cpu_ns as f64 / ours.events.max(1) as f64;
    let text_ns = text.cpu_ns as f64 / text.events.max(1) as f64;
    println!(
        "CPU per event: the text path costs {:.1}x ours",
        text_ns / ours_ns.max(f64::MIN_POSITIVE)
    );
}
