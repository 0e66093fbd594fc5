//! The system probes in the decode bench's recording, as `zerotraced
//! --probes` runs them: their three data sources' configs (`linux.ftrace`
//! with scheduling, task, timer and irq events in a tracefs instance of its
//! own, `linux.process_stats`, `linux.sys_stats`), that tracefs instance,
//! and the probes' producer connected to the in-process service.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use zerotrace_core::track_event::InProcessSession;
use zerotrace_probes::producer::{ProbesOptions, ProbesProducer, Registry};

/// The tracefs instance's name (the machine's own tracing state is left
/// alone).
const FTRACE_INSTANCE: &str = "zerotrace-decode-bench";

/// The tracefs instance `linux.ftrace` records into, removed when dropped.
pub struct FtraceInstance(PathBuf);

impl FtraceInstance {
    /// Creates the instance; `None`, said in one line, where tracefs cannot
    /// be had (it needs root).
    pub fn create() -> Option<FtraceInstance> {
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

/// The field numbers of upstream's config messages that [`configs`]
/// writes (`perfetto/config/data_source_config.proto`,
/// `ftrace/ftrace_config.proto`, `process_stats/process_stats_config.proto`,
/// `sys_stats/sys_stats_config.proto`). Written by number so that this tool
/// does not depend on where the generated writers of those messages live.
mod field {
    /// `DataSourceConfig.name`.
    pub const NAME: u32 = 1;
    /// `DataSourceConfig.ftrace_config`.
    pub const FTRACE_CONFIG: u32 = 100;
    /// `DataSourceConfig.process_stats_config`.
    pub const PROCESS_STATS_CONFIG: u32 = 103;
    /// `DataSourceConfig.sys_stats_config`.
    pub const SYS_STATS_CONFIG: u32 = 104;
    /// `FtraceConfig.ftrace_events`.
    pub const FTRACE_EVENTS: u32 = 1;
    /// `FtraceConfig.buffer_size_kb`.
    pub const BUFFER_SIZE_KB: u32 = 10;
    /// `FtraceConfig.drain_period_ms`.
    pub const DRAIN_PERIOD_MS: u32 = 11;
    /// `FtraceConfig.instance_name`.
    pub const INSTANCE_NAME: u32 = 25;
    /// `ProcessStatsConfig.scan_all_processes_on_start`.
    pub const SCAN_ALL_PROCESSES_ON_START: u32 = 2;
    /// `ProcessStatsConfig.record_thread_names`.
    pub const RECORD_THREAD_NAMES: u32 = 3;
    /// `ProcessStatsConfig.proc_stats_poll_ms`.
    pub const PROC_STATS_POLL_MS: u32 = 4;
    /// `SysStatsConfig.meminfo_period_ms`.
    pub const MEMINFO_PERIOD_MS: u32 = 1;
    /// `SysStatsConfig.stat_period_ms`.
    pub const STAT_PERIOD_MS: u32 = 5;
}

/// The ftrace events recorded: scheduling, task, timer and irq.
const FTRACE_EVENTS: [&str; 12] = [
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
];

/// The probes' three data sources of the session, each an encoded
/// `DataSourceConfig`.
pub fn configs() -> Vec<Vec<u8>> {
    /// A `DataSourceConfig` named `name` whose config message (field
    /// `config`) `f` writes.
    fn config(name: &str, config: u32, f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut root = w.root();
            root.append_string(field::NAME, name);
            f(&mut root.begin_nested(config));
        }
        w.finish().unwrap_or_default()
    }
    vec![
        config("linux.ftrace", field::FTRACE_CONFIG, |c| {
            for e in FTRACE_EVENTS {
                c.append_string(field::FTRACE_EVENTS, e);
            }
            c.append_varint(field::BUFFER_SIZE_KB, 8192);
            c.append_varint(field::DRAIN_PERIOD_MS, 100);
            c.append_string(field::INSTANCE_NAME, FTRACE_INSTANCE);
        }),
        config("linux.process_stats", field::PROCESS_STATS_CONFIG, |c| {
            c.append_varint(field::SCAN_ALL_PROCESSES_ON_START, 1);
            c.append_varint(field::RECORD_THREAD_NAMES, 1);
            c.append_varint(field::PROC_STATS_POLL_MS, 100);
        }),
        config("linux.sys_stats", field::SYS_STATS_CONFIG, |c| {
            c.append_varint(field::MEMINFO_PERIOD_MS, 50);
            c.append_varint(field::STAT_PERIOD_MS, 50);
        }),
    ]
}

/// Connects the system probes to `session`'s service and waits until its
/// three data sources have started, or failed to (`linux.ftrace` without
/// tracefs: the trace then holds the other two).
pub fn start(session: &InProcessSession) -> Result<ProbesProducer, String> {
    let probes = ProbesProducer::start(
        session.producer_endpoint(),
        Registry::standard(),
        ProbesOptions {
            name: "zerotrace-decode-bench-probes".into(),
            ..ProbesOptions::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(10);
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
        if Instant::now() > deadline {
            return Err(format!("the probes' data sources did not start: {s:?}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
