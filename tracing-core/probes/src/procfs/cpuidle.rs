//! CPU idle states from sysfs, `cpuN/cpuidle/stateM/{name,time}`: each
//! state's name and the total time (µs) the CPU has spent in it.

use super::{ProcRoot, cpufreq};

const CAP: usize = 4096;

/// One CPU's idle states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuIdle {
    /// The CPU number.
    pub cpu: u32,
    /// (state name, µs spent in it), by state directory order.
    pub states: Vec<(String, u64)>,
}

/// The idle states of every CPU that has them; a state whose name or time
/// cannot be read is left out (as upstream does). No cpuidle: empty.
pub fn read_all(root: &ProcRoot) -> Vec<CpuIdle> {
    let Ok(cpus) = cpufreq::cpus(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cpu in cpus {
        let dir = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle");
        let Ok(mut names) = root.list(&dir) else {
            continue;
        };
        names.retain(|n| n.starts_with("state"));
        // state10 after state9.
        names.sort_by_key(|n| n["state".len()..].parse::<u32>().unwrap_or(u32::MAX));
        let states: Vec<(String, u64)> = names
            .iter()
            .filter_map(|s| {
                let name = root.read(format!("{dir}/{s}/name"), CAP).ok()?;
                let time = root.read(format!("{dir}/{s}/time"), CAP).ok()?;
                let time = std::str::from_utf8(&time).ok()?.trim().parse().ok()?;
                Some((String::from_utf8_lossy(&name).trim_end().to_owned(), time))
            })
            .collect();
        if !states.is_empty() {
            out.push(CpuIdle { cpu, states });
        }
    }
    out
}
