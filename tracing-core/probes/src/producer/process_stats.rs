//! `linux.process_stats`: at start, with `scan_all_processes_on_start`, a
//! `process_tree` of every process and thread (names with
//! `record_thread_names`); every `proc_stats_poll_ms`, a `process_stats`
//! packet of every process's memory counters and `oom_score_adj`.
//!
//! Processes that appear during the session are described when the ftrace
//! data source of the same session reports their pids, as traced_probes
//! does: each task not described yet is looked up (its process, with its
//! threads) and written as a `process_tree` packet of the new ones.

use super::ds_config;
use super::probe::{DataSource, ErrorLog, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use super::schedule::Schedule;
use super::stats_cache::StatsCache;
use crate::procfs::config::ProcessStatsOptions;
use crate::procfs::packets::{self, TreeOptions};
use crate::procfs::walk;
use zerotrace_protos::upstream_tables::data_source_field;

/// The data source's name.
pub const NAME: &str = "linux.process_stats";

/// The `linux.process_stats` data source.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProcessStatsSource;

impl DataSource for ProcessStatsSource {
    fn name(&self) -> &'static str {
        NAME
    }

    fn create(&self, config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError> {
        let options = ProcessStatsOptions::from_config(ds_config::nested(
            config,
            data_source_field::PROCESS_STATS_CONFIG,
        )?)?;
        if !options.not_implemented.is_empty() {
            (ctx.log)(&format!(
                "{NAME}: not implemented, ignored: {}",
                options.not_implemented.join(", ")
            ));
        }
        Ok(Box::new(ProcessStatsProbe::new(options, ctx.clone())))
    }
}

/// A running `linux.process_stats` instance.
pub struct ProcessStatsProbe {
    options: ProcessStatsOptions,
    ctx: ProbeContext,
    schedule: Schedule<()>,
    errors: ErrorLog,
    packets: u64,
    /// Tasks (pids and tids) already described in this session.
    described: std::collections::HashSet<i32>,
    /// `resolve_process_fds`: the descriptors already named, per process
    /// (as upstream, each once per session).
    seen_fds: std::collections::HashMap<i32, std::collections::HashSet<u64>>,
    /// `proc_stats_cache_ttl_ms`: what was written, so that a poll writes
    /// what changed.
    cache: StatsCache,
}

impl ProcessStatsProbe {
    /// An instance with `options`, not yet started.
    pub fn new(options: ProcessStatsOptions, ctx: ProbeContext) -> Self {
        let cache = StatsCache::new(
            options.proc_stats_cache_ttl_ms,
            options.proc_stats_poll_ms.unwrap_or(0),
        );
        ProcessStatsProbe {
            options,
            ctx,
            schedule: Schedule::new(0, []),
            errors: ErrorLog::default(),
            packets: 0,
            described: std::collections::HashSet::new(),
            seen_fds: std::collections::HashMap::new(),
            cache,
        }
    }

    fn write_tree(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let (processes, errors) =
            match walk::scan_processes(&self.ctx.root, self.options.record_thread_names) {
                Ok(r) => r,
                Err(e) => {
                    self.errors.record(&self.ctx, NAME, &[e]);
                    return;
                }
            };
        self.errors.record(&self.ctx, NAME, &errors);
        self.write_processes(now_ns, &processes, sink);
    }

    /// One `process_tree` packet of `processes`, remembered as described.
    fn write_processes(
        &mut self,
        now_ns: u64,
        processes: &[walk::ProcessInfo],
        sink: &mut dyn PacketSink,
    ) {
        self.remember(processes);
        let end = (self.ctx.clock)();
        let options = TreeOptions {
            record_thread_names: self.options.record_thread_names,
            record_process_age: self.options.record_process_age,
        };
        sink.write_packet(&mut |p| {
            packets::write_process_tree(p, now_ns, processes, options, Some(end));
        });
        self.packets += 1;
    }

    fn remember(&mut self, processes: &[walk::ProcessInfo]) {
        for p in processes {
            self.described.insert(p.pid);
            self.described.extend(p.threads.iter().map(|t| t.tid));
        }
    }

    /// Describes the processes of the tasks in `pids` not described yet.
    fn describe(&mut self, now_ns: u64, pids: &[i32], sink: &mut dyn PacketSink) {
        let mut new = Vec::new();
        let mut errors = Vec::new();
        for &pid in pids {
            if pid <= 0 || self.described.contains(&pid) {
                continue;
            }
            // A task that is gone (or a kernel idle task) is not asked again.
            self.described.insert(pid);
            let Some(tgid) = walk::tgid(&self.ctx.root, pid) else {
                continue;
            };
            if tgid != pid && !self.described.insert(tgid) {
                continue;
            }
            match walk::read_process(&self.ctx.root, tgid, self.options.record_thread_names) {
                Ok(Some(p)) => new.push(p),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        self.errors.record(&self.ctx, NAME, &errors);
        if !new.is_empty() {
            self.write_processes(now_ns, &new, sink);
        }
    }

    fn write_stats(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let opts = walk::MemoryOptions {
            smaps_rollup: self.options.scan_smaps_rollup,
            fds: self.options.resolve_process_fds,
        };
        let (mut memory, errors) = match walk::scan_memory_with(&self.ctx.root, opts) {
            Ok(r) => r,
            Err(e) => {
                self.errors.record(&self.ctx, NAME, &[e]);
                return;
            }
        };
        self.errors.record(&self.ctx, NAME, &errors);
        if self.options.resolve_process_fds {
            // Processes gone are forgotten (their pids may come back).
            let live: std::collections::HashSet<i32> = memory.iter().map(|m| m.pid).collect();
            self.seen_fds.retain(|pid, _| live.contains(pid));
            for m in &mut memory {
                let seen = self.seen_fds.entry(m.pid).or_default();
                m.fds.retain(|(fd, _)| seen.insert(*fd));
            }
        }
        self.cache.keep_changed(&mut memory);
        let end = (self.ctx.clock)();
        let runtime = self.options.record_process_runtime;
        sink.write_packet(&mut |p| {
            packets::write_process_stats(p, now_ns, &memory, runtime, Some(end));
        });
        self.packets += 1;
    }
}

impl Probe for ProcessStatsProbe {
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        self.schedule = Schedule::new(now_ns, self.options.proc_stats_poll_ms.map(|ms| ((), ms)));
        if self.options.scan_all_processes_on_start {
            self.write_tree(now_ns, sink);
        }
        self.poll(now_ns, sink);
    }

    fn next_deadline(&self) -> Option<u64> {
        self.schedule.next_deadline()
    }

    fn poll(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        if !self.schedule.due(now_ns).is_empty() {
            self.write_stats(now_ns, sink);
        }
    }

    fn on_pids(&mut self, now_ns: u64, pids: &[i32], sink: &mut dyn PacketSink) {
        if self.options.on_demand {
            self.describe(now_ns, pids, sink);
        }
    }

    fn on_renamed_pids(&mut self, now_ns: u64, pids: &[i32], sink: &mut dyn PacketSink) {
        if !self.options.on_demand {
            return;
        }
        // Described before the exec or rename: describe them again.
        for pid in pids {
            self.described.remove(pid);
            if let Some(tgid) = walk::tgid(&self.ctx.root, *pid) {
                self.described.remove(&tgid);
            }
        }
        self.describe(now_ns, pids, sink);
    }

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.packets,
            read_errors: self.errors.count(),
            skipped_polls: self.schedule.skipped(),
        }
    }
}
