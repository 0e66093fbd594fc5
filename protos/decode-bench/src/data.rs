//! The data sets the decoders are compared on, so every library reads the
//! very same bytes: a TrackEvent trace recorded in this process through
//! zerotrace's real TrackEvent API (threads of nested slices with debug
//! annotations of every scalar kind and a few nested ones, interned names,
//! flows between threads, counters, an async track), the genuine
//! Perfetto SDK trace committed with zerotrace-core's interop tests, and
//! Perfetto's synthetic TrackEvent trace; plus the split of a `Trace` into
//! its packets.

use std::path::PathBuf;
use std::sync::mpsc;

use zerotrace_core::track_event::{
    Category, DebugValue, InProcessConfig, InProcessSession, TrackEvent, TrackSpec,
};
use zerotrace_core::{trace_begin, trace_counter, trace_end, trace_event, trace_instant};
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};

/// Why a data set could not be had.
#[derive(Debug)]
pub enum DataError {
    /// The in-process session failed to start or stop.
    Record(String),
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// The bytes are not a `Trace` made of field-1 packets.
    Malformed(String),
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataError::Record(e) => write!(f, "recording the TrackEvent trace: {e}"),
            DataError::Io(e) => write!(f, "{e}"),
            DataError::Malformed(e) => write!(f, "not a trace: {e}"),
        }
    }
}

impl std::error::Error for DataError {}

impl From<std::io::Error> for DataError {
    fn from(e: std::io::Error) -> Self {
        DataError::Io(e)
    }
}

/// Splits a serialized `Trace` (a run of field-1 length-delimited
/// `TracePacket`s) into the packets' bytes, borrowed from `trace`.
pub fn packets(trace: &[u8]) -> Result<Vec<&[u8]>, DataError> {
    let mut out = Vec::new();
    for field in protozero::Decoder::new(trace) {
        let field = field.map_err(|e| DataError::Malformed(e.to_string()))?;
        if field.id != 1 {
            return Err(DataError::Malformed(format!(
                "field {} in a Trace",
                field.id
            )));
        }
        out.push(
            field
                .as_bytes()
                .map_err(|e| DataError::Malformed(e.to_string()))?,
        );
    }
    Ok(out)
}

/// The total size of `packets`: what the benches report as throughput.
pub fn total_bytes(packets: &[&[u8]]) -> u64 {
    packets.iter().map(|p| p.len() as u64).sum()
}

#[path = "../../examples/synthetic_trace/scenarios.rs"]
mod scenarios;

/// Perfetto's synthetic TrackEvent trace: the four scenarios of its
/// "writing TrackEvent protos synthetically" guide (sync and async slices,
/// a flow, a counter), as `protos/examples/synthetic_trace` writes them.
pub fn synthetic_trace() -> Result<Vec<u8>, DataError> {
    scenarios::synthetic_trace().map_err(|e| DataError::Malformed(e.to_string()))
}

/// The genuine Perfetto SDK trace (about 300 KB) committed at
/// `tracing-core/tests/vectors/genuine-session.pftrace`.
pub fn genuine_trace() -> Result<Vec<u8>, DataError> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tracing-core/tests/vectors/genuine-session.pftrace");
    Ok(std::fs::read(path)?)
}

/// How much the TrackEvent recording writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceSize {
    /// Worker threads (each its own sequence, with its own interned data).
    pub workers: u32,
    /// Frames per worker; a frame is about 11 slices and 2 counter samples.
    pub frames: u32,
    /// How long the system probes record, at least (0: no probes; see
    /// [`record_track_event_trace`]).
    pub probes_ms: u64,
}

impl TraceSize {
    /// The benchmark's size: about 5 MB of TrackEvent packets, and the
    /// probes' packets of the same seconds.
    pub const BENCH: TraceSize = TraceSize {
        workers: 4,
        frames: 1_800,
        probes_ms: 2_000,
    };
    /// A quick recording for tests in debug builds (about 130 KB of
    /// TrackEvent, and the probes' packets of 300 ms).
    pub const SMALL: TraceSize = TraceSize {
        workers: 3,
        frames: 60,
        probes_ms: 300,
    };
}

static FRAME: Category = Category::with("frame", &[], "Frames of the workers");
static WORK: Category = Category::with("work", &[], "Work items, requests, uploads");
static IO: Category = Category::with("io", &[], "Reads and writes");
static CATEGORIES: [&Category; 3] = [&FRAME, &WORK, &IO];
static QUEUE: TrackSpec = TrackSpec::counter(0xdec0_0001, "queue depth", None, 2, "items");
static LOAD: TrackSpec = TrackSpec::counter(0xdec0_0002, "load", None, 2, "fraction");

/// Names that string annotations take, so their lengths vary.
const PASSES: [&str; 5] = ["opaque", "transparent", "shadow", "post-processing", "ui"];

/// One worker thread: `frames` frames of nested slices whose annotations
/// cover ints, uints, strings (fixed and formatted), bools, doubles,
/// pointers, a dictionary and an array; a request with a flow to the
/// handler thread every 8 frames; two counters every frame.
fn worker(id: u32, frames: u32, handler: mpsc::Sender<u64>) {
    let id = i64::from(id);
    let mut path = String::new();
    for frame in 0..i64::from(frames) {
        let _f = trace_event!(FRAME, "frame", "worker" => id, "n" => frame);
        {
            let _u = trace_event!(
                WORK,
                "update",
                "entities" => 100 + frame % 50,
                "dt" => 0.016 + (frame % 7) as f64 * 1e-4,
                "paused" => frame % 5 == 0
            );
            for step in 0..3u64 {
                let _s = trace_event!(WORK, "physics step", "step" => step);
            }
        }
        {
            let pass = PASSES[(frame as usize + id as usize) % PASSES.len()];
            let _r = trace_event!(WORK, "render", "pass" => pass, "draw calls" => frame % 300);
            let _c = trace_event!(
                WORK,
                "cull",
                "visible" => (frame * 7) % 1000,
                "ratio" => (frame % 100) as f64 / 100.0,
                "frustum" => "perspective",
                "stale" => false
            );
        }
        {
            path.clear();
            use std::fmt::Write as _;
            let _ = write!(path, "/assets/worker-{id}/chunk-{:05}.bin", frame % 977);
            let _io = trace_event!(
                IO,
                "read",
                "path" => path.as_str(),
                "bytes" => (4096 + frame as u64 * 13) % 65536,
                "cached" => frame % 3 == 0,
                "buffer" => DebugValue::Pointer(0x7f00_0000_0000 + frame as u64 * 64)
            );
        }
        if frame % 16 == 0 {
            let _l = trace_event!(
                WORK,
                "layout",
                "bounds" => DebugValue::Dict(&[
                    ("width", DebugValue::Int(1920)),
                    ("height", DebugValue::Int(1080)),
                    ("scale", DebugValue::Double(1.5)),
                ]),
                "dirty" => DebugValue::Array(&[
                    DebugValue::Uint(frame as u64),
                    DebugValue::Str("header"),
                    DebugValue::Bool(true),
                ])
            );
        }
        if frame % 8 == 0 {
            let flow = TrackEvent::new_flow_id();
            trace_instant!(WORK, "request", "frame" => frame; flow = flow);
            let _ = handler.send(flow);
        }
        trace_counter!(WORK, QUEUE, (frame * (id + 1)) % 13);
        trace_counter!(WORK, LOAD, (frame % 10) as f64 / 10.0);
    }
}

/// Records a TrackEvent trace of `size` in this process and returns its
/// bytes (a serialized `Trace`). The TrackEvent backend registers once per
/// process, so a process can record only once: a second call fails.
///
/// With `size.probes_ms`, zerotrace's system probes record into the same
/// session, as `zerotraced --probes` would: `linux.ftrace` (scheduling,
/// task, timer and irq events, in a tracefs instance of its own;
/// only where tracefs can be had, as root), `linux.process_stats` and `linux.sys_stats`. The
/// tasks visit their packets as TracePacket fields.
///
/// The session's file goes to the temporary directory and is removed
/// once read; nothing is kept on disk.
pub fn record_track_event_trace(size: TraceSize) -> Result<Vec<u8>, DataError> {
    let cfg = InProcessConfig {
        data_source_configs: if size.probes_ms > 0 {
            probes_configs()
        } else {
            Vec::new()
        },
        ..InProcessConfig::default()
    };
    let session =
        InProcessSession::start(&CATEGORIES, cfg).map_err(|e| DataError::Record(e.to_string()))?;
    let instance = if size.probes_ms > 0 {
        FtraceInstance::create()
    } else {
        None
    };
    let probes = if size.probes_ms > 0 {
        Some(start_probes(&session)?)
    } else {
        None
    };
    let started = std::time::Instant::now();
    let uploads = TrackSpec::named(
        0xdec0_0003,
        "uploads",
        Some(TrackEvent::process_track().uuid),
    );
    trace_begin!(WORK, "upload", "file" => "frames.bin"; track = &uploads);
    let (tx, rx) = mpsc::channel::<u64>();
    let handler = std::thread::spawn(move || {
        for (n, flow) in rx.into_iter().enumerate() {
            let _h = trace_event!(WORK, "handle request", "n" => n as u64; terminating_flow = flow);
        }
        // The upload ends on this thread.
        trace_end!(WORK; track = &uploads);
    });
    let workers: Vec<_> = (0..size.workers)
        .map(|id| {
            let tx = tx.clone();
            std::thread::spawn(move || worker(id, size.frames, tx))
        })
        .collect();
    drop(tx);
    for w in workers {
        w.join()
            .map_err(|_| DataError::Record("a worker thread panicked".into()))?;
    }
    handler
        .join()
        .map_err(|_| DataError::Record("the handler thread panicked".into()))?;
    if probes.is_some() {
        // The probes' periods (ftrace drained every 100 ms, stats every
        // 50-100 ms) get `probes_ms` of the machine, the workload's among
        // them.
        let left =
            std::time::Duration::from_millis(size.probes_ms).saturating_sub(started.elapsed());
        std::thread::sleep(left);
    }
    let file = std::env::temp_dir().join(format!(
        "zerotrace-decode-bench-{}.pftrace",
        std::process::id()
    ));
    let stopped = session.stop(&file);
    drop(probes);
    drop(instance);
    let read = std::fs::read(&file);
    let _ = std::fs::remove_file(&file);
    stopped.map_err(|e| DataError::Record(e.to_string()))?;
    Ok(read?)
}

/// The tracefs instance `linux.ftrace` records into (the machine's own
/// tracing state is left alone), removed when dropped; `None` (said once)
/// where tracefs cannot be had.
struct FtraceInstance(std::path::PathBuf);

impl FtraceInstance {
    fn create() -> Option<FtraceInstance> {
        let root = match zerotrace_probes::ftrace::tracefs::find_or_mount() {
            Ok(root) => root,
            Err(e) => {
                eprintln!("no ftrace events in the recorded trace: {e}");
                return None;
            }
        };
        let dir = root.join("instances").join(FTRACE_INSTANCE);
        match std::fs::create_dir(&dir) {
            Ok(()) => Some(FtraceInstance(dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Some(FtraceInstance(dir)),
            Err(e) => {
                eprintln!(
                    "no ftrace events in the recorded trace: {}: {e}",
                    dir.display()
                );
                None
            }
        }
    }
}

impl Drop for FtraceInstance {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The tracefs instance's name.
const FTRACE_INSTANCE: &str = "zerotrace-decode-bench";

/// The probes' data sources of the benchmark's session, encoded.
fn probes_configs() -> Vec<Vec<u8>> {
    use zerotrace_probes::protos::{
        FtraceConfig, ProcessStatsConfig, SysStatsConfig, data_source_field,
    };
    fn config(name: &str, f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut root = w.root();
            root.append_string(data_source_field::NAME, name);
            f(&mut root);
        }
        w.finish().unwrap_or_default()
    }
    vec![
        config("linux.ftrace", |m| {
            let mut c =
                FtraceConfig::from_message(m.begin_nested(data_source_field::FTRACE_CONFIG));
            for e in [
                "sched/sched_switch",
                "sched/sched_waking",
                "sched/sched_wakeup_new",
                "sched/sched_process_exit",
                "sched/sched_process_free",
                "task/task_newtask",
                "task/task_rename",
                "timer/hrtimer_start",
                "timer/hrtimer_expire_entry",
                "timer/hrtimer_expire_exit",
                "irq/irq_handler_entry",
                "irq/irq_handler_exit",
            ] {
                c.add_ftrace_events(e);
            }
            c.set_buffer_size_kb(8192)
                .set_drain_period_ms(100)
                .set_instance_name(FTRACE_INSTANCE);
        }),
        config("linux.process_stats", |m| {
            ProcessStatsConfig::from_message(
                m.begin_nested(data_source_field::PROCESS_STATS_CONFIG),
            )
            .set_scan_all_processes_on_start(true)
            .set_record_thread_names(true)
            .set_proc_stats_poll_ms(100);
        }),
        config("linux.sys_stats", |m| {
            SysStatsConfig::from_message(m.begin_nested(data_source_field::SYS_STATS_CONFIG))
                .set_meminfo_period_ms(50)
                .set_stat_period_ms(50);
        }),
    ]
}

/// Connects the system probes to `session`'s service and waits until its
/// three data sources have started, or failed to (`linux.ftrace` without
/// tracefs: the trace then holds the other two).
fn start_probes(session: &InProcessSession) -> Result<ProbesProducer, DataError> {
    let probes = ProbesProducer::start(
        session.producer_endpoint(),
        Registry::standard(),
        ProbesOptions {
            name: "zerotrace-decode-bench-probes".into(),
            ..ProbesOptions::default()
        },
    )
    .map_err(|e| DataError::Record(e.to_string()))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let s = probes.stats();
        if s.started + s.failed >= 3 {
            if s.started < 3 {
                eprintln!(
                    "the probes started {} of 3 data sources (ftrace needs root and tracefs)",
                    s.started
                );
            }
            return Ok(probes);
        }
        if std::time::Instant::now() > deadline {
            return Err(DataError::Record(format!(
                "the probes' data sources did not start: {s:?}"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The benchmark's TrackEvent trace ([`TraceSize::BENCH`], about 5 MB);
/// see [`record_track_event_trace`].
pub fn track_event_trace() -> Result<Vec<u8>, DataError> {
    record_track_event_trace(TraceSize::BENCH)
}
