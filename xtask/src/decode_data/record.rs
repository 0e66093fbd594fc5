//! One recording of the decode bench's trace, in this process: an
//! in-process session of zerotrace's service with the TrackEvent data
//! source and, for a while, the system probes ([`super::probes`]), while the
//! [`super::workload`] runs; then the session's trace, read back.

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
}

impl Size {
    /// The benchmark's: about 5 MB of TrackEvent packets, and the probes'
    /// packets of the same two seconds.
    pub const BENCH: Size = Size {
        workers: 4,
        frames: 1_800,
        probes_ms: 2_000,
    };
    /// The tests': about 130 KB of TrackEvent packets, and the probes'
    /// packets of 300 ms.
    pub const SMALL: Size = Size {
        workers: 3,
        frames: 60,
        probes_ms: 300,
    };
}

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
            probes::configs()
        } else {
            Vec::new()
        },
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
        Some(probes::start(&session)?)
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
