//! One recording of a trace, in this process: an in-process session of
//! zerotrace's service with the TrackEvent data source and, for a while,
//! the system probes ([`super::probes`]; `linux.perf` sampling this process
//! when asked), while the [`super::workload`] runs; then the session's
//! trace, read back. The decode bench's data sets and the trace
//! processor's bench trace (`cargo xtask tp-data`, sized by a target byte
//! count, [`Size::for_bytes`]) are both recorded here. The decode bench's
//! session keeps everything in its buffer and is read once at its end; the
//! trace processor's is recorded as Perfetto records a long trace
//! ([`LongTrace`]): written into its file while it runs, with periodic
//! flushes, so it carries the service's flush and read events that bound
//! the trace processor's sort window.

use std::sync::Arc;
use std::time::{Duration, Instant};

use protozero::HeapWriter;
use zerotrace_core::consumer::{ConsumerClient, SessionEnd};
use zerotrace_core::daemon::{DaemonConfig, DaemonThread};
use zerotrace_core::ipc::Endpoint;
use zerotrace_core::producer::{ProducerClient, ProducerOptions};
use zerotrace_core::track_event::{InProcessConfig, InProcessSession, TrackEvent};
use zerotrace_protos::protos::TraceConfig;

use super::{probes, workload};

/// How much a recording writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Worker threads (each its own sequence, with its own interned data).
    pub workers: u32,
    /// Frames per worker; a frame is about 11 slices and 2 counter samples.
    pub frames: u32,
    /// How long the system probes record, at least (0: no probes).
    pub probes_ms: u64,
    /// The session's trace buffer in KiB (big enough for all of it: the
    /// trace is read once the session stops).
    pub buffer_kb: u32,
    /// Whether `linux.perf` samples this process's CPU time with
    /// callstacks while the probes record.
    pub perf: bool,
    /// Record as a long trace is (written into the file while it runs),
    /// or `None`: read once the session stops.
    pub long_trace: Option<LongTrace>,
}

/// How Perfetto's long-trace config (`test/configs/long_trace.cfg`)
/// records: `write_into_file`, the service draining the buffer into the
/// file every `file_write_period_ms` and the data sources flushed
/// periodically (`write_flush_mode` left unset: the service's AUTO rule
/// flushes every 5 s at these write periods and ignores
/// `flush_period_ms`, as upstream's does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongTrace {
    /// `file_write_period_ms`.
    pub file_write_period_ms: u32,
    /// `flush_period_ms`.
    pub flush_period_ms: u32,
}

/// `test/configs/long_trace.cfg`'s periods.
pub const LONG_TRACE: LongTrace = LongTrace {
    file_write_period_ms: 2_500,
    flush_period_ms: 20_000,
};

impl Size {
    /// The benchmark's: about 5 MB of TrackEvent packets, and the probes'
    /// packets of the same two seconds.
    pub const BENCH: Size = Size {
        workers: 4,
        frames: 1_800,
        probes_ms: 2_000,
        buffer_kb: DEFAULT_BUFFER_KB,
        perf: false,
        long_trace: None,
    };
    /// The tests': about 130 KB of TrackEvent packets, and the probes'
    /// packets of 300 ms.
    pub const SMALL: Size = Size {
        workers: 3,
        frames: 60,
        probes_ms: 300,
        buffer_kb: DEFAULT_BUFFER_KB,
        perf: false,
        long_trace: None,
    };

    /// A recording of about `bytes` (at least, give or take the machine's
    /// share of ftrace and perf): four workers with as many frames as
    /// [`FRAME_BYTES`] says they take, a buffer with room for the
    /// TrackEvent bytes, the probes and a margin, and `linux.perf` on.
    pub fn for_bytes(bytes: u64) -> Size {
        const WORKERS: u32 = 4;
        // The workers' share, with a margin: what the probes add on top
        // varies with the machine.
        let frames = bytes.div_ceil(FRAME_BYTES * u64::from(WORKERS)) * 21 / 20;
        let frames = u32::try_from(frames.max(1)).unwrap_or(u32::MAX);
        // The trace plus half again (probes, losses of a full buffer
        // would be worse than a large one), at least the default.
        let kb = (bytes / 1024).saturating_mul(3) / 2 + 64 * 1024;
        Size {
            workers: WORKERS,
            frames,
            probes_ms: 3_000,
            buffer_kb: u32::try_from(kb).unwrap_or(u32::MAX).max(DEFAULT_BUFFER_KB),
            perf: true,
            long_trace: None,
        }
    }
}

/// The in-process session's default trace buffer, 32 MiB.
const DEFAULT_BUFFER_KB: u32 = 32 * 1024;

/// The bytes one worker's frame writes, measured on [`Size::BENCH`]'s
/// recording (about 5 MB of TrackEvent packets for 4 × 1800 frames).
pub const FRAME_BYTES: u64 = 700;

/// Records a trace of `size` and returns its bytes (a serialized `Trace`).
/// The TrackEvent backend registers once per process, so a process records
/// once: a second call fails.
///
/// The session's file goes to the temporary directory and is removed once
/// read.
pub fn record(size: Size) -> Result<Vec<u8>, String> {
    if let Some(long) = size.long_trace {
        return record_long_trace(size, long);
    }
    let with_probes = size.probes_ms > 0;
    let cfg = InProcessConfig {
        data_source_configs: if with_probes {
            probes::configs(size.perf)
        } else {
            Vec::new()
        },
        buffer_kb: size.buffer_kb,
        ..InProcessConfig::default()
    };
    let session = InProcessSession::start(&workload::CATEGORIES, cfg)
        .map_err(|e| format!("starting the in-process session: {e}"))?;
    let instance = if with_probes {
        probes::FtraceInstance::create()
    } else {
        None
    };
    let producer = if with_probes {
        Some(probes::start(
            session.producer_endpoint(),
            if size.perf { 4 } else { 3 },
        )?)
    } else {
        None
    };
    run_workload(size)?;
    let file = temp_trace_path();
    let stopped = session.stop(&file);
    drop(producer);
    drop(instance);
    let read = std::fs::read(&file);
    let _ = std::fs::remove_file(&file);
    stopped.map_err(|e| format!("stopping the session: {e}"))?;
    read.map_err(|e| format!("reading {}: {e}", file.display()))
}

/// The workload, then the rest of the probes' time: their periods
/// (ftrace drained every 100 ms, stats every 50-100 ms) get `probes_ms`
/// of the machine, the workload's among them.
fn run_workload(size: Size) -> Result<(), String> {
    let started = Instant::now();
    workload::run(size.workers, size.frames).map_err(|e| e.to_string())?;
    if size.probes_ms > 0 {
        let left = Duration::from_millis(size.probes_ms).saturating_sub(started.elapsed());
        std::thread::sleep(left);
    }
    Ok(())
}

/// Where a recording's file goes for the while it is read.
fn temp_trace_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "zerotrace-decode-bench-{}.pftrace",
        std::process::id()
    ))
}

/// Records `size` as a long trace: the same data sources as
/// [`InProcessSession`] records them (the TrackEvent categories, then the
/// probes' configs), but the session passes its file with EnableTracing
/// and the service writes into it while it runs ([`LongTrace`]).
fn record_long_trace(size: Size, long: LongTrace) -> Result<Vec<u8>, String> {
    let base = format!("zerotrace-tp-data-{}", std::process::id());
    let service = DaemonThread::spawn(DaemonConfig {
        producer_sockets: vec![Endpoint::Abstract(format!("{base}-p"))],
        consumer_socket: Endpoint::Abstract(format!("{base}-c")),
        producer_socket_mode: None,
        consumer_socket_mode: None,
        log_level: 0,
        tcp_peers_are_local: true,
        ..DaemonConfig::default()
    })
    .map_err(|e| format!("starting the in-process service: {e}"))?;
    let p_ep = service.producer_endpoints()[0].clone();
    let producer = Arc::new(
        ProducerClient::connect(
            &p_ep,
            ProducerOptions {
                name: "zerotrace-tp-data".into(),
                ..Default::default()
            },
        )
        .map_err(|e| format!("connecting the producer: {e}"))?,
    );
    TrackEvent::register(producer.clone(), &workload::CATEGORIES)
        .map_err(|e| format!("registering track_event: {e}"))?;
    let with_probes = size.probes_ms > 0;
    let mut w = HeapWriter::new();
    {
        let mut c = TraceConfig::from_message(w.root());
        c.add_buffers().set_size_kb(size.buffer_kb);
        c.add_data_sources().begin_config().set_name("track_event");
        if with_probes {
            for raw in probes::configs(size.perf) {
                c.add_data_sources().set_config_raw(&raw);
            }
        }
        c.set_write_into_file(true);
        c.set_file_write_period_ms(long.file_write_period_ms);
        c.set_flush_period_ms(long.flush_period_ms);
    }
    let config = w
        .finish()
        .map_err(|e| format!("encoding the config: {e}"))?;
    let path = temp_trace_path();
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let result = (|| {
        let mut consumer = ConsumerClient::connect(service.consumer_endpoint())
            .map_err(|e| format!("connecting the consumer: {e}"))?;
        let session = consumer
            .enable_tracing(&config, Some(&file))
            .map_err(|e| format!("enabling tracing: {e}"))?;
        producer
            .wait_for_start("track_event", Duration::from_secs(10))
            .map_err(|e| format!("starting track_event: {e}"))?;
        let instance = if with_probes {
            probes::FtraceInstance::create()
        } else {
            None
        };
        let probes_producer = if with_probes {
            Some(probes::start(&p_ep, if size.perf { 4 } else { 3 })?)
        } else {
            None
        };
        run_workload(size)?;
        TrackEvent::flush();
        let _ = producer.flush_blocking(Duration::from_secs(10));
        consumer
            .disable_tracing()
            .map_err(|e| format!("disabling tracing: {e}"))?;
        let end = consumer
            .wait_for_end(session, Some(Duration::from_secs(60)))
            .map_err(|e| format!("waiting for the session's end: {e}"))?;
        drop(probes_producer);
        drop(instance);
        if let SessionEnd::Error(e) = end {
            return Err(format!("the session failed: {e}"));
        }
        Ok(())
    })();
    drop(file);
    drop(service);
    let read = std::fs::read(&path);
    let _ = std::fs::remove_file(&path);
    result?;
    read.map_err(|e| format!("reading {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_for_bytes_writes_at_least_that_much_and_holds_it() {
        for mb in [1u64, 50, 200, 1000] {
            let bytes = mb * 1_000_000;
            let s = Size::for_bytes(bytes);
            let written = u64::from(s.workers) * u64::from(s.frames) * FRAME_BYTES;
            assert!(written >= bytes, "{mb} MB: {written}");
            assert!(
                written <= bytes * 11 / 10 + 4 * FRAME_BYTES,
                "{mb} MB: {written}"
            );
            assert!(
                u64::from(s.buffer_kb) * 1024 > written,
                "{mb} MB: {}",
                s.buffer_kb
            );
            assert!(s.perf && s.probes_ms > 0);
            assert_eq!(
                s.long_trace, None,
                "read at the end unless tp-data --long-trace asks"
            );
        }
        assert!(Size::for_bytes(1).buffer_kb >= DEFAULT_BUFFER_KB);
        assert_eq!(
            Size::BENCH.long_trace,
            None,
            "the decode bench's: read at the end"
        );
    }
}
