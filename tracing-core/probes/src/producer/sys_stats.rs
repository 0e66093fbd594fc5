//! `linux.sys_stats`: every source of a `SysStatsConfig` on its own period
//! (meminfo, vmstat, stat, cpufreq, psi, thermal, diskstat, devfreq,
//! buddyinfo, cpuidle), one `sys_stats` packet per poll holding the
//! sources due then, the counters chosen by the config's lists.

use super::ds_config;
use super::probe::{DataSource, ErrorLog, PacketSink, Probe, ProbeContext, ProbeError, ProbeStats};
use super::schedule::Schedule;
use crate::procfs::config::SysStatsOptions;
use crate::procfs::packets;
use crate::procfs::sample::{self, Due};
use zerotrace_protos::upstream_tables::data_source_field;

/// The data source's name.
pub const NAME: &str = "linux.sys_stats";

/// The `linux.sys_stats` data source.
#[derive(Debug, Default, Clone, Copy)]
pub struct SysStatsSource;

impl DataSource for SysStatsSource {
    fn name(&self) -> &'static str {
        NAME
    }

    fn create(&self, config: &[u8], ctx: &ProbeContext) -> Result<Box<dyn Probe>, ProbeError> {
        let options = SysStatsOptions::from_config(ds_config::nested(
            config,
            data_source_field::SYS_STATS_CONFIG,
        )?)?;
        if !options.not_implemented.is_empty() {
            (ctx.log)(&format!(
                "{NAME}: not implemented, ignored: {}",
                options.not_implemented.join(", ")
            ));
        }
        Ok(Box::new(SysStatsProbe::new(options, ctx.clone())))
    }
}

/// The sources of a `sys_stats` packet, each with its own timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Meminfo,
    Vmstat,
    Stat,
    Cpufreq,
    Psi,
    Thermal,
    Diskstats,
    Devfreq,
    Buddyinfo,
    Cpuidle,
}

/// A running `linux.sys_stats` instance.
pub struct SysStatsProbe {
    options: SysStatsOptions,
    ctx: ProbeContext,
    schedule: Schedule<Source>,
    errors: ErrorLog,
    packets: u64,
}

impl SysStatsProbe {
    /// An instance with `options`, not yet started.
    pub fn new(options: SysStatsOptions, ctx: ProbeContext) -> Self {
        SysStatsProbe {
            options,
            ctx,
            schedule: Schedule::new(0, []),
            errors: ErrorLog::default(),
            packets: 0,
        }
    }

    fn periods(&self) -> [(Source, u32); 10] {
        let o = &self.options;
        let ms = |p: Option<u32>| p.unwrap_or(0);
        [
            (Source::Meminfo, ms(o.meminfo_ms)),
            (Source::Vmstat, ms(o.vmstat_ms)),
            (Source::Stat, ms(o.stat_ms)),
            (Source::Cpufreq, ms(o.cpufreq_ms)),
            (Source::Psi, ms(o.psi_ms)),
            (Source::Thermal, ms(o.thermal_ms)),
            (Source::Diskstats, ms(o.diskstat_ms)),
            (Source::Devfreq, ms(o.devfreq_ms)),
            (Source::Buddyinfo, ms(o.buddyinfo_ms)),
            (Source::Cpuidle, ms(o.cpuidle_ms)),
        ]
    }
}

fn due_of(sources: &[Source]) -> Due {
    let mut due = Due::default();
    for s in sources {
        match s {
            Source::Meminfo => due.meminfo = true,
            Source::Vmstat => due.vmstat = true,
            Source::Stat => due.stat = true,
            Source::Cpufreq => due.cpufreq = true,
            Source::Psi => due.psi = true,
            Source::Thermal => due.thermal = true,
            Source::Diskstats => due.diskstats = true,
            Source::Devfreq => due.devfreq = true,
            Source::Buddyinfo => due.buddyinfo = true,
            Source::Cpuidle => due.cpuidle = true,
        }
    }
    due
}

impl Probe for SysStatsProbe {
    fn start(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        self.schedule = Schedule::new(now_ns, self.periods());
        self.poll(now_ns, sink);
    }

    fn next_deadline(&self) -> Option<u64> {
        self.schedule.next_deadline()
    }

    fn poll(&mut self, now_ns: u64, sink: &mut dyn PacketSink) {
        let due = self.schedule.due(now_ns);
        if due.is_empty() {
            return;
        }
        let (sample, errors) = sample::read_sample(&self.ctx.root, due_of(&due));
        self.errors.record(&self.ctx, NAME, &errors);
        let end = (self.ctx.clock)();
        let selection = &self.options.selection;
        sink.write_packet(&mut |p| {
            packets::write_sys_stats(p, now_ns, selection, &sample, Some(end));
        });
        self.packets += 1;
    }

    fn stats(&self) -> ProbeStats {
        ProbeStats {
            packets: self.packets,
            read_errors: self.errors.count(),
            skipped_polls: self.schedule.skipped(),
        }
    }
}
