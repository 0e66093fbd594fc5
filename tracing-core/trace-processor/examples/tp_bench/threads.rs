//! The load on one core and on all of them (issue 62, item 4):
//! `TraceProcessor::open_with_options` with `LoadOptions::threads` 1 (the
//! one-thread load, the headline) and with the machine's cores (the
//! parallel pre-stage reading, inflating and splitting ahead of the
//! ordered parsing), interleaved run by run, each timed in wall time and
//! in the process's CPU time (user and system of every thread, live or
//! ended, `/proc/self/stat`). Wall time is the all-core figure's point;
//! it is only meaningful on a calm machine.
//!
//! `--compress-packets TRACE OUT` writes TRACE with its packets deflated
//! into `compressed_packets`, as a tracing service compressing its reads
//! does (zlib, groups of about [`GROUP`] bytes of packets), for the
//! compressed figure.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use zerotrace_trace_processor::{LoadOptions, TraceProcessor};

/// Bytes of packets (framed) deflated into one `compressed_packets`.
pub const GROUP: usize = 512 << 10;

/// The process's CPU time so far, every thread's (user + system of
/// `/proc/self/stat`, in the kernel's 1/100 s ticks).
pub fn process_cpu() -> Result<Duration, String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc: {e}"))?;
    // The fields after the command's closing parenthesis: utime and
    // stime are the 12th and 13th of them.
    let rest = stat.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|w| w.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Ok(Duration::from_millis(ticks * 10))
}

/// The calling thread's CPU time so far (`/proc/thread-self/schedstat`,
/// in ns).
fn thread_cpu() -> Result<Duration, String> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| format!("/proc: {e}"))?;
    let ns = s
        .split_whitespace()
        .next()
        .and_then(|w| w.parse::<u64>().ok())
        .unwrap_or(0);
    Ok(Duration::from_nanos(ns))
}

/// One load's wall and CPU time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Took {
    /// Wall time.
    pub wall: Duration,
    /// CPU time of all the process's threads.
    pub cpu: Duration,
    /// CPU time of the calling thread (the ordered stage, `finish` and
    /// the tables): the load's wall time on a machine that gives the
    /// pre-stage's threads cores of their own.
    pub main: Duration,
}

/// The medians of the loads on one thread and on `threads`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figures {
    /// The trace's size.
    pub bytes: u64,
    /// Threads of the all-core load.
    pub threads: usize,
    /// Median wall and CPU of the one-thread loads.
    pub one: Took,
    /// Median wall and CPU of the all-core loads.
    pub all: Took,
}

/// One load of `trace` on `threads` threads.
fn load(trace: &Path, threads: usize) -> Result<Took, String> {
    let options = LoadOptions {
        threads,
        ..LoadOptions::default()
    };
    let (c, m, t) = (process_cpu()?, thread_cpu()?, Instant::now());
    let tp = TraceProcessor::open_with_options(trace, options, |_| {})
        .map_err(|e| format!("{}: {e}", trace.display()))?;
    let took = Took {
        wall: t.elapsed(),
        cpu: process_cpu()?.saturating_sub(c),
        main: thread_cpu()?.saturating_sub(m),
    };
    drop(tp);
    Ok(took)
}

/// The median of some timings (the upper one of an even count).
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Loads `trace` `runs` times on one thread and as many on all cores,
/// interleaved, and gives the medians.
pub fn measure(trace: &Path, runs: u32) -> Result<Figures, String> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let bytes = std::fs::metadata(trace)
        .map_err(|e| format!("{}: {e}", trace.display()))?
        .len();
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for i in 0..runs {
        one.push(load(trace, 1)?);
        all.push(load(trace, threads.max(2))?);
        let (o, a) = (one[one.len() - 1], all[all.len() - 1]);
        eprintln!(
            "tp_bench: threads {i}: one {:?} wall / {:?} cpu / {:?} calling thread, all {:?} / {:?} / {:?}",
            o.wall, o.cpu, o.main, a.wall, a.cpu, a.main
        );
    }
    let med = |v: &[Took]| Took {
        wall: median(v.iter().map(|t| t.wall).collect()),
        cpu: median(v.iter().map(|t| t.cpu).collect()),
        main: median(v.iter().map(|t| t.main).collect()),
    };
    Ok(Figures {
        bytes,
        threads: threads.max(2),
        one: med(&one),
        all: med(&all),
    })
}

impl Figures {
    /// The two rows of the bench's table, for the trace named `what`.
    pub fn rows(&self, what: &str) -> String {
        let mb = |t: Duration| self.bytes as f64 / 1e6 / t.as_secs_f64().max(1e-9);
        let ms = |t: Duration| t.as_secs_f64() * 1e3;
        format!(
            "| load of {what}, one core (`LoadOptions::threads` 1; medians) | wall {:.0} ms ({:.1} MB/s), CPU {:.0} ms ({:.1} MB per CPU-second) | ≥ 200 MB/s | — |\n\
             | load of {what}, all cores ({} threads; medians) | wall {:.0} ms ({:.1} MB/s), CPU {:.0} ms, of which the calling thread's (the ordered stage, the sort, the parsers and the tables) {:.0} ms ({:.1} MB/s on that thread) | report | — |",
            ms(self.one.wall),
            mb(self.one.wall),
            ms(self.one.cpu),
            mb(self.one.cpu),
            self.threads,
            ms(self.all.wall),
            mb(self.all.wall),
            ms(self.all.cpu),
            ms(self.all.main),
            mb(self.all.main),
        )
    }
}

/// Appends `v` as a varint.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Writes `trace` to `out` with its packets deflated into
/// `compressed_packets` of about [`GROUP`] bytes each.
pub fn compress_packets(trace: &Path, out: &Path) -> Result<(), String> {
    let bytes = std::fs::read(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?,
    );
    let mut emit = |group: &[u8]| -> Result<(), String> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(group).map_err(|e| e.to_string())?;
        let z = z.finish().map_err(|e| e.to_string())?;
        // TracePacket { compressed_packets (50) }, framed as Trace.packet.
        let mut packet = Vec::new();
        varint(&mut packet, (50 << 3) | 2);
        varint(&mut packet, z.len() as u64);
        packet.extend_from_slice(&z);
        let mut framed = vec![0x0a];
        varint(&mut framed, packet.len() as u64);
        framed.extend_from_slice(&packet);
        file.write_all(&framed).map_err(|e| e.to_string())
    };
    // The trace's top-level fields, cut at packet boundaries.
    let mut start = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let (tag, n) = protozero::varint::decode_varint(&bytes[pos..])
            .map_err(|e| format!("the trace's tag at {pos}: {e:?}"))?;
        if tag & 7 != 2 {
            return Err(format!("field {} of Trace is not a message", tag >> 3));
        }
        let (len, m) = protozero::varint::decode_varint(&bytes[pos + n..])
            .map_err(|e| format!("the trace's length at {pos}: {e:?}"))?;
        pos += n + m + len as usize;
        if pos - start >= GROUP {
            emit(&bytes[start..pos.min(bytes.len())])?;
            start = pos;
        }
    }
    if start < bytes.len() {
        emit(&bytes[start..])?;
    }
    file.flush().map_err(|e| e.to_string())
}
