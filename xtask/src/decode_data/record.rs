//! One recording of a trace, in this process: an in-process session of
//! zerotrace's service with the TrackEvent data source and, for a while,
//! the system probes ([`super::probes`]; `linux.perf` sampling this process
//! when asked), while the [`super::workload`] runs; then the session's
//! trace, read back. The decode bench's data sets and the trace
//! processor's bench trace (`cargo xtask tp-data`, sized by a target byte
//! count, [`Size::for_bytes`]) are both recorded here.

use std::time::{Duration, Instant};

use zerotrace_core::track_event::{InProcessConfig, InProcessSession};

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
}

impl Size {
    /// The benchmark's: about 5 MB of TrackEvent packets, and the probes'
    /// packets of the same two seconds.
    pub const BENCH: Size = Size {
        workers: 4,
        frames: 1_800,
        probes_ms: 2_000,
        buffer_kb: DEFAULT_BUFFER_KB,
        perf: false,
    };
    /// The tests': about 130 KB of TrackEvent packets, and the probes'
    /// packets of 300 ms.
    pub const SMALL: Size = Size {
        workers: 3,
        frames: 60,
        probes_ms: 300,
        buffer_kb: DEFAULT_BUFFER_KB,
        perf: false,
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
        Some(probes::start(&session, if size.perf { 4 } else { 3 })?)
    } else {
        None
    };
    let started = Instant::now();
    workload::run(size.workers, size.frames).map_err(|e| e.to_string())?;
    if producer.is_some() {
        // The probes' periods (ftrace drained every 100 ms, stats every
        // 50-100 ms) get `probes_ms` of the machine, the workload's among
        // them.
        let left = Duration::from_millis(size.probes_ms).saturating_sub(started.elapsed());
        std::thread::sleep(left);
    }
    let file = std::env::temp_dir().join(format!(
        "zerotrace-decode-bench-{}.pftrace",
        std::process::id()
    ));
    let stopped = session.stop(&file);
    drop(producer);
    drop(instance);
    let read = std::fs::read(&file);
    let _ = std::fs::remove_file(&file);
    stopped.map_err(|e| format!("stopping the session: {e}"))?;
    read.map_err(|e| format!("reading {}: {e}", file.display()))
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
        }
        assert!(Size::for_bytes(1).buffer_kb >= DEFAULT_BUFFER_KB);
    }
}
