//! The system probes in the recorded traces, as `zerotraced --probes` runs
//! them: their data sources' configs (`linux.ftrace` with scheduling,
//! task, timer and irq events in a tracefs instance of its own,
//! `linux.process_stats`, `linux.sys_stats`, and for the trace processor's
//! bench `linux.perf`: this process's CPU time sampled with DWARF
//! callstacks), that tracefs instance, and the probes' producer connected
//! to the in-process service.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use zerotrace_core::ipc::Endpoint;
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

/// `linux.perf`'s sampling frequency per CPU, Hz.
const PERF_FREQUENCY: u64 = 1000;

/// The probes' data sources of the session, each an encoded
/// `DataSourceConfig`: three, and `linux.perf` when `perf`.
pub fn configs(perf: bool) -> Vec<Vec<u8>> {
    use zerotrace_protos::protos::perf_event_config::UnwindMode;
    use zerotrace_protos::protos::perf_events::Counter;
    use zerotrace_protos::protos::{
        FtraceConfig, PerfEventConfig, ProcessStatsConfig, SysStatsConfig,
    };
    use zerotrace_protos::upstream_tables::data_source_field;
    fn config(name: &str, f: impl FnOnce(&mut protozero::Message<'_>)) -> Vec<u8> {
        let mut w = protozero::HeapWriter::new();
        {
            let mut root = w.root();
            root.append_string(data_source_field::NAME, name);
            f(&mut root);
        }
        w.finish().unwrap_or_default()
    }
    let mut out = vec![
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
    ];
    if perf {
        // As `cargo xtask perf-cost` configures it: the CPU clock at a
        // fixed rate per CPU, user frames unwound with DWARF, this
        // process (the workload's threads) in scope.
        out.push(config("linux.perf", |m| {
            let mut c =
                PerfEventConfig::from_message(m.begin_nested(data_source_field::PERF_EVENT_CONFIG));
            c.begin_timebase()
                .set_frequency(PERF_FREQUENCY)
                .set_counter(Counter::SwCpuClock);
            let mut cs = c.begin_callstack_sampling();
            cs.set_user_frames(UnwindMode::UnwindDwarf);
            cs.begin_scope().add_target_pid(std::process::id() as i32);
        }));
    }
    out
}

/// Connects the system probes to the in-process service at `endpoint` and
/// waits until its `sources` data sources have started, or failed to
/// (`linux.ftrace` without tracefs, `linux.perf` without perf events: the
/// trace then holds the others; said in one line).
pub fn start(endpoint: &Endpoint, sources: u64) -> Result<ProbesProducer, String> {
    let probes = ProbesProducer::start(
        endpoint,
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
        if s.started + s.failed >= sources {
            if s.started < sources {
                eprintln!(
                    "the probes started {} of {sources} data sources (ftrace needs root and \
                     tracefs, linux.perf root or perf_event_paranoid <= 1)",
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
