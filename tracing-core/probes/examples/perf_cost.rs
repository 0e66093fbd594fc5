//! What does `linux.perf` cost next to `perf record`, sampling the same
//! CPU-bound workload at the same rate (issue #39)? This program runs the
//! comparison that `cargo xtask perf-cost` reports: two instances of the
//! oracle's fixture program (`tests/perf_fixture/fixture.rs`, `work`
//! mode: fixed loop counts for a fixed wall time, the loop turns printed
//! at the end) keep both CPUs busy, unprofiled, then sampled at 1 kHz per
//! CPU with DWARF unwinding by our data source (a process of its own, this
//! program's `sample` command), then by `perf record --call-graph dwarf`
//! (its default 8 KiB stack copy, and the 64 KiB of ours) read back by
//! `perf script`. Per run it measures:
//!
//! * the workload's loop turns per second of wall time, and per second of
//!   its own CPU time (the slowdown against the unprofiled runs' median;
//!   the second leaves out other processes' competition for the CPUs and
//!   keeps what sampling costs inside the workload: the kernel's stack
//!   copies, the interrupts);
//! * the sampler's CPU time: the rusage of the reaped children, our
//!   sampler process (all its threads) or `perf record` plus the
//!   `perf script` that turns its file into stacks;
//! * samples, samples lost (ours: `kernel_records_lost`; perf's: its
//!   `PERF_RECORD_LOST` records), and the bytes written per sample.
//!
//! It prints the medians of the rounds and the ratios. Root and `perf`
//! (`/usr/bin/perf`) and `rustc` are needed.
//!
//! ```sh
//! cargo run --release -p zerotrace-probes --example perf_cost -- run --rounds 3 --seconds 5
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::{Parser, Subcommand};
use protozero::{Decoder, HeapWriter, Message};
use zerotrace_probes::producer::perf::PerfSource;
use zerotrace_probes::producer::{BufferSink, DataSource, ProbeContext};
use zerotrace_protos::protos::perf_event_config::UnwindMode;
use zerotrace_protos::protos::perf_events::Counter;
use zerotrace_protos::protos::{PerfEventConfig, PerfSampleDecoder};
use zerotrace_protos::upstream_tables::{data_source_field, packet_field};

/// The fixture's source, built here with `rustc` as the oracle tests do.
const FIXTURE_SOURCE: &str = include_str!("../tests/perf_fixture/fixture.rs");

#[derive(Debug, Parser)]
#[command(about = "linux.perf's cost next to perf record's")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The comparison: rounds of (unprofiled, ours, perf 8 KiB, perf 64 KiB).
    Run {
        /// Rounds; the table takes each figure's median.
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Seconds each workload runs.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Our ring buffer's data pages per CPU (0: the default, 256).
        #[arg(long, default_value_t = 0)]
        pages: u32,
        /// Sampling frequency per CPU, Hz.
        #[arg(long, default_value_t = 1000)]
        frequency: u64,
        /// Where the fixture, the trace and perf.data go (default: a
        /// directory under the system's temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Our sampler (internal): `linux.perf` on the given pids until stdin
    /// closes; writes the trace to `--out` and prints what it counted.
    Sample {
        /// A process to sample (repeatable).
        #[arg(long = "pid", required = true)]
        pids: Vec<u32>,
        /// The trace file written at the end.
        #[arg(long)]
        out: PathBuf,
        /// Ring buffer data pages per CPU (0: the default).
        #[arg(long, default_value_t = 0)]
        pages: u32,
        /// Sampling frequency per CPU, Hz.
        #[arg(long, default_value_t = 1000)]
        frequency: u64,
    },
}

fn main() {
    match Cli::parse().command {
        Cmd::Run {
            rounds,
            seconds,
            pages,
            frequency,
            dir,
        } => {
            let dir = dir.unwrap_or_else(|| {
                std::env::temp_dir().join(format!("zt-perf-cost-{}", std::process::id()))
            });
            run(rounds.max(1), seconds, pages, frequency, &dir);
        }
        Cmd::Sample {
            pids,
            out,
            pages,
            frequency,
        } => sample(&pids, &out, pages, frequency),
    }
}

// ---------------------------------------------------------------- sampler

/// The `linux.perf` config: the CPU clock at `frequency` per CPU, DWARF
/// user frames, the pids in scope.
fn config(pids: &[u32], pages: u32, frequency: u64) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root: Message<'_> = w.root();
        root.append_string(data_source_field::NAME, "linux.perf");
        let mut c =
            PerfEventConfig::from_message(root.begin_nested(data_source_field::PERF_EVENT_CONFIG));
        c.begin_timebase()
            .set_frequency(frequency)
            .set_counter(Counter::SwCpuClock);
        if pages != 0 {
            c.set_ring_buffer_pages(pages);
        }
        let mut cs = c.begin_callstack_sampling();
        cs.set_user_frames(UnwindMode::UnwindDwarf);
        let mut scope = cs.begin_scope();
        for &p in pids {
            scope.add_target_pid(p as i32);
        }
    }
    w.finish().expect("the config encodes")
}

/// Drives one `linux.perf` instance as the probes' thread does (polled at
/// its deadline, or at once when its drain thread wakes it) until stdin
/// closes, then stops it, writes the trace and prints
/// `result samples=N lost=N skipped=N bytes=N`.
fn sample(pids: &[u32], out: &Path, pages: u32, frequency: u64) {
    let (tx, woken) = std::sync::mpsc::channel::<()>();
    let done = Arc::new(AtomicBool::new(false));
    {
        let (tx, done) = (tx.clone(), done.clone());
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
            done.store(true, Ordering::SeqCst);
            let _ = tx.send(());
        });
    }
    let mut ctx = ProbeContext::system();
    ctx.wake = Arc::new(move || {
        let _ = tx.send(());
    });
    let now = zerotrace_core::platform::boottime_ns;
    let mut probe = PerfSource::system()
        .create(&config(pids, pages, frequency), &ctx)
        .expect("linux.perf starts (root?)");
    let mut sink = BufferSink::default();
    probe.start(now(), &mut sink);
    println!("started");
    let _ = std::io::stdout().flush();
    while !done.load(Ordering::SeqCst) {
        let t = now();
        if probe.next_deadline().is_some_and(|d| d <= t) {
            probe.poll(t, &mut sink);
        }
        let wait = probe
            .next_deadline()
            .map_or(100_000_000, |d| d.saturating_sub(now()));
        let _ = woken.recv_timeout(Duration::from_nanos(wait));
    }
    probe.stop(now(), &mut sink);
    drop(probe);
    let trace = trace_file(&sink.packets);
    std::fs::write(out, &trace).expect("the trace is written");
    let (samples, lost, skipped) = count(&sink.packets);
    println!(
        "result samples={samples} lost={lost} skipped={skipped} bytes={}",
        trace.len()
    );
}

/// The packets as a trace file (`Trace.packet`, field 1).
fn trace_file(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut w = HeapWriter::new();
    {
        let mut root = w.root();
        for p in packets {
            root.append_bytes(1, p);
        }
    }
    w.finish().expect("the trace encodes")
}

/// Samples with a callstack, kernel records lost, samples skipped.
fn count(packets: &[Vec<u8>]) -> (u64, u64, u64) {
    let (mut samples, mut lost, mut skipped) = (0, 0, 0);
    for p in packets {
        for f in Decoder::new(p).flatten() {
            if f.id != packet_field::PERF_SAMPLE {
                continue;
            }
            let Ok(bytes) = f.as_bytes() else { continue };
            let s = PerfSampleDecoder::new(bytes);
            if s.callstack_iid().is_some() {
                samples += 1;
            }
            if s.sample_skipped_reason_raw().is_some() {
                skipped += 1;
            }
            lost += s.kernel_records_lost().unwrap_or(0);
        }
    }
    (samples, lost, skipped)
}

// ----------------------------------------------------------------- runner

/// The CPU time of the reaped children so far (user + system), in seconds.
fn children_cpu() -> f64 {
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Builds the fixture (release with debug info, no frame pointers: the
/// oracle's build) in `dir`.
fn build_fixture(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("the work directory");
    let src = dir.join("fixture.rs");
    std::fs::write(&src, FIXTURE_SOURCE).expect("the fixture's source");
    let bin = dir.join("fixture");
    let status = Command::new("rustc")
        .args(["--edition", "2024", "-C", "opt-level=2", "-g", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "the fixture builds");
    bin
}

/// A fixture in `work` mode, ready and waiting for its go.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Worker {
    fn start(bin: &Path, seconds: f64) -> Worker {
        let mut child = Command::new(bin)
            .args(["work", &seconds.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the fixture starts");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("its stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the fixture is ready");
        assert_eq!(line.trim(), "ready");
        Worker {
            child,
            stdin,
            stdout,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn go(&mut self) {
        if let Some(mut s) = self.stdin.take() {
            s.write_all(b"go\n").expect("go");
        }
    }

    /// Waits for the end: loop turns and their nanoseconds of wall time.
    fn finish(mut self) -> (f64, f64) {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the fixture's result");
        let status = self.child.wait().expect("the fixture ends");
        assert!(status.success(), "the fixture: {status}");
        let mut words = line.split_whitespace().skip(1);
        let turns: f64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0.0);
        let ns: f64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(1.0);
        (turns, ns)
    }
}

/// Two workers, started and ready.
fn workers(bin: &Path, seconds: f64) -> [Worker; 2] {
    [Worker::start(bin, seconds), Worker::start(bin, seconds)]
}

/// What the two workers did.
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    /// Loop turns per second of wall time, both summed.
    rate: f64,
    /// Loop turns per second of the workers' own CPU time (user +
    /// system): what is left when other processes compete for the CPUs.
    per_cpu: f64,
}

/// Lets both go and waits for both (reaping them: the caller's children
/// CPU time then includes theirs).
fn work(ws: [Worker; 2]) -> Work {
    let mut ws = ws;
    for w in &mut ws {
        w.go();
    }
    let before = children_cpu();
    let done: Vec<(f64, f64)> = ws.into_iter().map(Worker::finish).collect();
    let cpu = children_cpu() - before;
    let turns: f64 = done.iter().map(|d| d.0).sum();
    Work {
        rate: done.iter().map(|(t, ns)| t / (ns * 1e-9)).sum(),
        per_cpu: turns / cpu.max(1e-9),
    }
}

/// One sampled run's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    /// The workload's loop turns per second (both instances).
    rate: f64,
    /// The workload's loop turns per second of its own CPU time.
    per_cpu: f64,
    /// The sampler's CPU seconds (perf: `perf record` + `perf script`).
    cpu: f64,
    /// Of which `perf script`'s (perf only).
    script_cpu: f64,
    /// Samples written (ours) or shown by `perf script` (perf).
    samples: f64,
    /// Samples lost.
    lost: f64,
    /// Bytes of the trace / perf.data.
    bytes: f64,
}

impl Run {
    fn cpu_per_sample_us(&self) -> f64 {
        self.cpu * 1e6 / self.samples.max(1.0)
    }

    fn bytes_per_sample(&self) -> f64 {
        self.bytes / self.samples.max(1.0)
    }
}

fn run_ours(bin: &Path, seconds: f64, pages: u32, frequency: u64, dir: &Path) -> Run {
    let ws = workers(bin, seconds);
    let out = dir.join("ours.pftrace");
    let me = std::env::current_exe().expect("this program's path");
    let mut cmd = Command::new(me);
    cmd.arg("sample")
        .arg("--out")
        .arg(&out)
        .args(["--pages", &pages.to_string()])
        .args(["--frequency", &frequency.to_string()]);
    for w in &ws {
        cmd.args(["--pid", &w.pid().to_string()]);
    }
    let mut sampler = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("our sampler starts");
    let mut stdout = BufReader::new(sampler.stdout.take().expect("its stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("our sampler starts");
    assert_eq!(line.trim(), "started", "our sampler");
    let w = work(ws);
    let before = children_cpu();
    drop(sampler.stdin.take());
    let mut result = String::new();
    stdout.read_to_string(&mut result).expect("its result");
    let status = sampler.wait().expect("our sampler ends");
    assert!(status.success(), "our sampler: {status}");
    let cpu = children_cpu() - before;
    let field = |name: &str| -> f64 {
        result
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let _ = std::fs::remove_file(&out);
    Run {
        rate: w.rate,
        per_cpu: w.per_cpu,
        cpu,
        script_cpu: 0.0,
        samples: field("samples"),
        lost: field("lost"),
        bytes: field("bytes"),
    }
}

fn run_perf(bin: &Path, seconds: f64, frequency: u64, stack: Option<u32>, dir: &Path) -> Run {
    let ws = workers(bin, seconds);
    let data = dir.join("perf.data");
    let call_graph = match stack {
        Some(n) => format!("dwarf,{n}"),
        None => "dwarf".to_owned(),
    };
    let pids = format!("{},{}", ws[0].pid(), ws[1].pid());
    let mut record = Command::new("perf")
        .args(["record", "-F", &frequency.to_string(), "--call-graph"])
        .arg(&call_graph)
        .args(["-p", &pids, "-o"])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perf record starts");
    // perf attaches to the waiting workers; they only run after their go.
    std::thread::sleep(Duration::from_millis(500));
    let w = work(ws);
    let before = children_cpu();
    // perf record ends by itself when the processes it follows have
    // exited; stderr is read to the end first (a full pipe would block it).
    let mut err = String::new();
    if let Some(mut e) = record.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = record.wait().expect("perf record ends");
    assert!(status.success(), "perf record: {status}: {err}");
    let after_record = children_cpu();
    let script = Command::new("perf")
        .args([
            "script",
            "--show-lost-events",
            "-F",
            "pid,tid,ip,sym,dso",
            "-i",
        ])
        .arg(&data)
        .stderr(Stdio::null())
        .output()
        .expect("perf script runs");
    assert!(script.status.success(), "perf script: {}", script.status);
    let after_script = children_cpu();
    let text = String::from_utf8_lossy(&script.stdout);
    let (mut samples, mut lost) = (0.0, 0.0);
    for block in text.split("\n\n") {
        for l in block.lines().filter(|l| l.contains("PERF_RECORD_LOST")) {
            lost += l
                .split_whitespace()
                .last()
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(0.0);
        }
        let header = block.lines().find(|l| !l.trim().is_empty());
        if header.is_some_and(|h| !h.contains("PERF_RECORD_") && !h.starts_with([' ', '\t'])) {
            samples += 1.0;
        }
    }
    let bytes = std::fs::metadata(&data).map_or(0.0, |m| m.len() as f64);
    let _ = std::fs::remove_file(&data);
    Run {
        rate: w.rate,
        per_cpu: w.per_cpu,
        cpu: after_script - before,
        script_cpu: after_script - after_record,
        samples,
        lost,
        bytes,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Each figure's median over `runs`.
fn medians(runs: &[Run]) -> Run {
    let m = |f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
    Run {
        rate: m(|r| r.rate),
        per_cpu: m(|r| r.per_cpu),
        cpu: m(|r| r.cpu),
        script_cpu: m(|r| r.script_cpu),
        samples: m(|r| r.samples),
        lost: m(|r| r.lost),
        bytes: m(|r| r.bytes),
    }
}

fn run(rounds: usize, seconds: f64, pages: u32, frequency: u64, dir: &Path) {
    let bin = build_fixture(dir);
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!(
        "perf-cost: {rounds} rounds of {seconds} s, 2 fixtures in `work` mode on {cpus} CPUs, \
         {frequency} Hz per CPU, DWARF; ring buffer {} pages (ours)",
        if pages == 0 { 256 } else { pages }
    );
    const NAMES: [&str; 3] = [
        "linux.perf (ours, 64 KiB stacks)",
        "perf record + script (dwarf, 8 KiB default)",
        "perf record + script (dwarf,65280: ours' size)",
    ];
    let mut base = Vec::new();
    let mut runs: [Vec<Run>; 3] = Default::default();
    // The CPU-per-sample ratio of each round (ours / perf default).
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        // The four runs of a round in a rotated order, so that a trend in
        // the machine's other load does not always fall on the same one.
        let mut r = [Run::default(); 3];
        let mut unprofiled = Work::default();
        for k in 0..4 {
            match (k + round - 1) % 4 {
                0 => unprofiled = work(workers(&bin, seconds)),
                1 => r[0] = run_ours(&bin, seconds, pages, frequency, dir),
                2 => r[1] = run_perf(&bin, seconds, frequency, None, dir),
                _ => r[2] = run_perf(&bin, seconds, frequency, Some(65280), dir),
            }
        }
        base.push(unprofiled);
        println!(
            "round {round}: unprofiled {:.3} G turns/s ({:.3} G per CPU second); {}",
            base[round - 1].rate * 1e-9,
            base[round - 1].per_cpu * 1e-9,
            r.iter()
                .zip(NAMES)
                .map(|(r, n)| format!(
                    "{n}: {:.3} G/s ({:.3} G per CPU s), {:.3} s CPU ({:.3} s script), {} samples, {} lost, {:.0} B/sample",
                    r.rate * 1e-9,
                    r.per_cpu * 1e-9,
                    r.cpu,
                    r.script_cpu,
                    r.samples,
                    r.lost,
                    r.bytes_per_sample()
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        ratios.push(r[0].cpu_per_sample_us() / r[1].cpu_per_sample_us());
        for (all, one) in runs.iter_mut().zip(r) {
            all.push(one);
        }
    }
    let base = Work {
        rate: median(base.iter().map(|w| w.rate).collect()),
        per_cpu: median(base.iter().map(|w| w.per_cpu).collect()),
    };
    println!();
    println!(
        "medians of {rounds} rounds (unprofiled: {:.3} G loop turns/s, {:.3} G per CPU second)",
        base.rate * 1e-9,
        base.per_cpu * 1e-9
    );
    println!(
        "| sampler | slowdown (wall) | slowdown (per CPU s) | sampler CPU (s) | samples | lost | CPU µs/sample | bytes/sample |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let m: Vec<Run> = runs.iter().map(|r| medians(r)).collect();
    for (r, n) in m.iter().zip(NAMES) {
        let script = if r.script_cpu > 0.0 {
            format!(" (script {:.2})", r.script_cpu)
        } else {
            String::new()
        };
        println!(
            "| {n} | {:.1}% | {:.1}% | {:.2}{script} | {:.0} | {:.0} | {:.1} | {:.0} |",
            100.0 * (1.0 - r.rate / base.rate),
            100.0 * (1.0 - r.per_cpu / base.per_cpu),
            r.cpu,
            r.samples,
            r.lost,
            r.cpu_per_sample_us(),
            r.bytes_per_sample()
        );
    }
    let (ours, perf, perf64) = (m[0], m[1], m[2]);
    println!();
    println!(
        "CPU per sample, ours / perf's: {:.3} (8 KiB perf), {:.3} (64 KiB perf); per-round medians {:.3} (goal <= 0.5)",
        ours.cpu_per_sample_us() / perf.cpu_per_sample_us(),
        ours.cpu_per_sample_us() / perf64.cpu_per_sample_us(),
        median(ratios)
    );
    println!(
        "lost at {frequency} Hz x {cpus} CPUs: ours {:.0} (goal 0), perf {:.0} / {:.0}",
        ours.lost, perf.lost, perf64.lost
    );
    println!(
        "bytes per sample, ours / perf.data's: 1/{:.0} (8 KiB perf), 1/{:.0} (64 KiB perf) (goal <= 1/100)",
        perf.bytes_per_sample() / ours.bytes_per_sample().max(1e-9),
        perf64.bytes_per_sample() / ours.bytes_per_sample().max(1e-9)
    );
    let _ = std::fs::remove_dir_all(dir);
}
