//! `linux.process_stats`: at start, with `scan_all_processes_on_start`, a
//! `process_tree` of every process and thread (names with
//! `record_thread_names`); every `proc_stats_poll_ms`, a `process_stats`
//! packet of every process's memory counters and `oom_score_adj`.
//!
//! Processes that appear during the session are described when the ftrace
//! data source reports their pids, as traced_probes does; until that data
//! source exists, only the start scan and the polls describe them.

use super::ds_config;
use super::probe::{DataSource, ErrorLog, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use super::schedule::Schedule;
use crate::procfs::config::ProcessStatsOptions;
use crate::procfs::packets::{self, TreeOptions};
use crate::procfs::walk;
use crate::protos::data_source_field;

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
}

impl ProcessStatsProbe {
    /// An instance with `options`, not yet started.
    pub fn new(options: ProcessStatsOptions, ctx: ProbeContext) -> Self {
        ProcessStatsProbe {
            options,
            ctx,
            schedule: Schedule::new(0, []),
            errors: ErrorLog::default(),
            packets: 0,
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
        let end = (self.ctx.clock)();
        let options = TreeOptions {
            record_thread_names: self.options.record_thread_names,
            record_process_age: self.options.record_process_age,
        };
        sink.packet(&mut |p| {
            packets::write_process_tree(p, now_ns, &processes, options, Some(end));
        });
        self.packets += 1;
    }

    fn write_stats(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let (memory, errors) = match walk::scan_memory(&self.ctx.root) {
            Ok(r) => r,
            Err(e) => {
                self.errors.record(&self.ctx, NAME, &[e]);
                return;
            }
        };
        self.errors.record(&self.ctx, NAME, &errors);
        let end = (self.ctx.clock)();
        let runtime = self.options.record_process_runtime;
        sink.packet(&mut |p| {
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

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.packets,
            read_errors: self.errors.count(),
            skipped_polls: self.schedule.skipped(),
        }
    }
}
