//! What a `ProcessStatsConfig` or `SysStatsConfig` asks of the procfs
//! probes: the options they implement, read into plain values, and every
//! other field that is set named in `not_implemented`, so a data source can
//! refuse it by name instead of silently recording less.

use zerotrace_protos::protos::{ProcessStatsConfigDecoder, SysStatsConfigDecoder};

use super::packets::Selection;

/// A config that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} does not decode: {error}")]
pub struct ConfigError {
    /// Which message.
    pub message: &'static str,
    /// Why.
    pub error: protozero::DecodeError,
}

/// The smallest `sys_stats` period upstream allows; shorter ones are
/// raised to it.
pub const MIN_PERIOD_MS: u32 = 10;

/// The smallest `proc_stats_poll_ms` upstream allows (a scan of every
/// process is costly); shorter ones are raised to it.
pub const MIN_PROC_STATS_POLL_MS: u32 = 100;

fn period(ms: Option<u32>) -> Option<u32> {
    ms.filter(|&ms| ms > 0).map(|ms| ms.max(MIN_PERIOD_MS))
}

/// `linux.process_stats` options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessStatsOptions {
    /// `scan_all_processes_on_start`: a `process_tree` of everything at start.
    pub scan_all_processes_on_start: bool,
    /// `record_thread_names`: threads carry their names.
    pub record_thread_names: bool,
    /// `record_process_age`: processes carry their start time.
    pub record_process_age: bool,
    /// `record_process_runtime`: `process_stats` carry user and kernel time.
    pub record_process_runtime: bool,
    /// `proc_stats_poll_ms`: a `process_stats` packet every so often.
    pub proc_stats_poll_ms: Option<u32>,
    /// Whether the tasks the session's ftrace sees are described as they
    /// appear (the `DISABLE_ON_DEMAND` quirk turns it off).
    pub on_demand: bool,
    /// `proc_stats_cache_ttl_ms` (0: unset): between two clears of the
    /// cache, every so many polls, a poll writes only the counters that
    /// changed (and only the processes with one).
    pub proc_stats_cache_ttl_ms: u32,
    /// `scan_smaps_rollup`: `process_stats` carry the PSS counters of
    /// `/proc/PID/smaps_rollup`.
    pub scan_smaps_rollup: bool,
    /// `resolve_process_fds`: `process_stats` name each process's open
    /// descriptors (each once per session).
    pub resolve_process_fds: bool,
    /// Fields set in the config that these probes do not implement.
    pub not_implemented: Vec<&'static str>,
}

impl ProcessStatsOptions {
    /// Reads a `ProcessStatsConfig`.
    pub fn from_config(bytes: &[u8]) -> Result<Self, ConfigError> {
        let c = ProcessStatsConfigDecoder::new(bytes);
        if let Some(error) = c.decode_error() {
            return Err(ConfigError {
                message: "ProcessStatsConfig",
                error,
            });
        }
        // Every field is implemented; the list stays for configs of a newer
        // schema and for the data sources that share it.
        let not_implemented = Vec::new();
        // DISABLE_ON_DEMAND: no describing of the tasks ftrace saw.
        // DISABLE_INITIAL_DUMP is deprecated and ignored upstream too.
        let on_demand = !c.quirks_raw().any(|q| {
            q == zerotrace_protos::protos::process_stats_config::Quirks::DisableOnDemand as i32
        });
        Ok(ProcessStatsOptions {
            on_demand,
            scan_all_processes_on_start: c.scan_all_processes_on_start() == Some(true),
            record_thread_names: c.record_thread_names() == Some(true),
            record_process_age: c.record_process_age() == Some(true),
            record_process_runtime: c.record_process_runtime() == Some(true),
            proc_stats_poll_ms: c
                .proc_stats_poll_ms()
                .filter(|&ms| ms > 0)
                .map(|ms| ms.max(MIN_PROC_STATS_POLL_MS)),
            proc_stats_cache_ttl_ms: c.proc_stats_cache_ttl_ms().unwrap_or(0),
            scan_smaps_rollup: c.scan_smaps_rollup() == Some(true),
            resolve_process_fds: c.resolve_process_fds() == Some(true),
            not_implemented,
        })
    }
}

/// `linux.sys_stats` options: a period per source (`None`: not polled;
/// below [`MIN_PERIOD_MS`] raised to it) and the counter selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SysStatsOptions {
    /// `meminfo_period_ms`.
    pub meminfo_ms: Option<u32>,
    /// `vmstat_period_ms`.
    pub vmstat_ms: Option<u32>,
    /// `stat_period_ms`.
    pub stat_ms: Option<u32>,
    /// `cpufreq_period_ms`.
    pub cpufreq_ms: Option<u32>,
    /// `psi_period_ms`.
    pub psi_ms: Option<u32>,
    /// `thermal_period_ms`.
    pub thermal_ms: Option<u32>,
    /// `diskstat_period_ms`.
    pub diskstat_ms: Option<u32>,
    /// `devfreq_period_ms`.
    pub devfreq_ms: Option<u32>,
    /// `buddyinfo_period_ms`.
    pub buddyinfo_ms: Option<u32>,
    /// `cpuidle_period_ms`.
    pub cpuidle_ms: Option<u32>,
    /// The `*_counters` lists.
    pub selection: Selection,
    /// Fields set in the config that these probes do not implement.
    pub not_implemented: Vec<&'static str>,
}

impl SysStatsOptions {
    /// Reads a `SysStatsConfig`.
    pub fn from_config(bytes: &[u8]) -> Result<Self, ConfigError> {
        let c = SysStatsConfigDecoder::new(bytes);
        if let Some(error) = c.decode_error() {
            return Err(ConfigError {
                message: "SysStatsConfig",
                error,
            });
        }
        let mut not_implemented = Vec::new();
        for (name, ms) in [("gpufreq_period_ms", c.gpufreq_period_ms())] {
            if ms.unwrap_or(0) > 0 {
                not_implemented.push(name);
            }
        }
        Ok(SysStatsOptions {
            meminfo_ms: period(c.meminfo_period_ms()),
            vmstat_ms: period(c.vmstat_period_ms()),
            stat_ms: period(c.stat_period_ms()),
            cpufreq_ms: period(c.cpufreq_period_ms()),
            psi_ms: period(c.psi_period_ms()),
            thermal_ms: period(c.thermal_period_ms()),
            diskstat_ms: period(c.diskstat_period_ms()),
            devfreq_ms: period(c.devfreq_period_ms()),
            buddyinfo_ms: period(c.buddyinfo_period_ms()),
            cpuidle_ms: period(c.cpuidle_period_ms()),
            selection: Selection::from_config(&c),
            not_implemented,
        })
    }
}
