//! One poll of the system counters: reads the files a `sys_stats` packet
//! (or the one-off `cpu_info`) is made from, each only when due, and
//! leaves out what this machine does not have (no pressure files, no
//! cpufreq, no thermal class) instead of failing the whole poll.

use super::packets::{CpuDescription, SysStatsSample};
use super::{
    ProcError, ProcRoot, buddyinfo, cpufreq, cpuidle, cpuinfo, devfreq, diskstats, meminfo, psi,
    stat, thermal, vmstat,
};

/// Which sources a poll reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due {
    /// `/proc/meminfo`.
    pub meminfo: bool,
    /// `/proc/vmstat`.
    pub vmstat: bool,
    /// `/proc/stat`.
    pub stat: bool,
    /// `scaling_cur_freq` of every CPU.
    pub cpufreq: bool,
    /// `/proc/pressure/*`.
    pub psi: bool,
    /// `/sys/class/thermal/thermal_zone*`.
    pub thermal: bool,
    /// `/proc/diskstats`.
    pub diskstats: bool,
    /// `/proc/buddyinfo`.
    pub buddyinfo: bool,
    /// `cpuN/cpuidle/state*`.
    pub cpuidle: bool,
    /// `/sys/class/devfreq/*/cur_freq`.
    pub devfreq: bool,
}

impl Due {
    /// Everything.
    pub const ALL: Due = Due {
        meminfo: true,
        vmstat: true,
        stat: true,
        cpufreq: true,
        psi: true,
        thermal: true,
        diskstats: true,
        buddyinfo: true,
        cpuidle: true,
        devfreq: true,
    };
}

/// `r`'s value, its error kept in `errors`.
fn keep<T>(errors: &mut Vec<ProcError>, r: Result<T, ProcError>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
}

/// Reads the due sources. The first three are required where asked
/// (every Linux has them): their errors are returned next to the sample;
/// the others are left `None` when the machine lacks them.
pub fn read_sample(root: &ProcRoot, due: Due) -> (SysStatsSample, Vec<ProcError>) {
    let mut errors = Vec::new();
    let cap = super::root::DEFAULT_CAP;
    let mut sample = SysStatsSample::default();
    if due.meminfo {
        sample.meminfo = keep(
            &mut errors,
            root.read("proc/meminfo", cap)
                .and_then(|b| meminfo::parse(&b)),
        );
    }
    if due.vmstat {
        sample.vmstat = keep(
            &mut errors,
            root.read("proc/vmstat", cap)
                .and_then(|b| vmstat::parse(&b)),
        );
    }
    if due.stat {
        sample.stat = keep(
            &mut errors,
            root.read("proc/stat", cap).and_then(|b| stat::parse(&b)),
        );
    }
    if due.diskstats {
        sample.diskstats = root
            .read("proc/diskstats", cap)
            .ok()
            .and_then(|b| keep(&mut errors, diskstats::parse(&b)));
    }
    if due.buddyinfo {
        sample.buddyinfo = root
            .read("proc/buddyinfo", cap)
            .ok()
            .and_then(|b| keep(&mut errors, buddyinfo::parse(&b)));
    }
    if due.cpuidle {
        let idle = cpuidle::read_all(root);
        sample.cpuidle = (!idle.is_empty()).then_some(idle);
    }
    if due.devfreq {
        let devices = devfreq::read_all(root);
        sample.devfreq = (!devices.is_empty()).then_some(devices);
    }
    if due.cpufreq {
        sample.cpufreq_khz = cpufreq::read_all_cur_khz(root);
    }
    if due.psi {
        let files: Vec<_> = psi::Resource::ALL
            .into_iter()
            .filter_map(|r| {
                let bytes = root.read(r.path(), cap).ok()?;
                Some((r, keep(&mut errors, psi::parse(&bytes))?))
            })
            .collect();
        sample.psi = (!files.is_empty()).then_some(files);
    }
    if due.thermal {
        let zones = thermal::read_zones(root);
        sample.thermal = (!zones.is_empty()).then_some(zones);
    }
    (sample, errors)
}

/// The CPUs of `/proc/cpuinfo` with their available frequencies (empty
/// where cpufreq has none) and capacity, for the `cpu_info` packet.
pub fn read_cpu_descriptions(root: &ProcRoot) -> Result<Vec<CpuDescription>, ProcError> {
    let entries = cpuinfo::parse(&root.read("proc/cpuinfo", super::root::DEFAULT_CAP)?)?;
    Ok(entries
        .into_iter()
        .map(|entry| CpuDescription {
            frequencies_khz: cpufreq::read_available(root, entry.index).unwrap_or_default(),
            capacity: root
                .read(
                    format!("sys/devices/system/cpu/cpu{}/cpu_capacity", entry.index),
                    4096,
                )
                .ok()
                .and_then(|b| cpufreq::parse_capacity(&b).ok()),
            entry,
        })
        .collect())
}
