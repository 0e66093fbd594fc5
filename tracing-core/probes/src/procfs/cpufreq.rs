//! CPU frequencies from sysfs: `cpuN/cpufreq/scaling_cur_freq` (the
//! current frequency, kHz, readable without root) and
//! `scaling_available_frequencies` (the frequencies a CPU can run at),
//! `cpu_capacity` (a CPU's relative capacity on heterogeneous systems),
//! and the list of CPUs under `/sys/devices/system/cpu`.

use super::{ProcError, ProcRoot};

const CPU_DIR: &str = "sys/devices/system/cpu";
const CAP: usize = 4096;

fn parse_u32(file: &'static str, bytes: &[u8]) -> Result<u32, ProcError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ProcError::malformed(file, "not a number"))
}

/// Parses a single kHz number (`scaling_cur_freq`).
pub fn parse_khz(bytes: &[u8]) -> Result<u32, ProcError> {
    parse_u32("scaling_cur_freq", bytes)
}

/// Parses `cpuN/cpu_capacity` (the CPU's relative capacity, up to 1024).
pub fn parse_capacity(bytes: &[u8]) -> Result<u32, ProcError> {
    parse_u32("cpu_capacity", bytes)
}

/// Parses `scaling_available_frequencies` (kHz numbers separated by spaces).
pub fn parse_available(bytes: &[u8]) -> Result<Vec<u32>, ProcError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ProcError::malformed("scaling_available_frequencies", "not text"))?;
    text.split_ascii_whitespace()
        .map(|w| {
            w.parse()
                .map_err(|_| ProcError::malformed("scaling_available_frequencies", "not a number"))
        })
        .collect()
}

/// The CPU numbers with a `cpuN` directory, ascending.
pub fn cpus(root: &ProcRoot) -> Result<Vec<u32>, ProcError> {
    let mut cpus: Vec<u32> = root
        .list(CPU_DIR)?
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    Ok(cpus)
}

/// CPU `cpu`'s current frequency in kHz.
pub fn read_cur_khz(root: &ProcRoot, cpu: u32) -> Result<u32, ProcError> {
    parse_khz(&root.read(format!("{CPU_DIR}/cpu{cpu}/cpufreq/scaling_cur_freq"), CAP)?)
}

/// CPU `cpu`'s available frequencies in kHz.
pub fn read_available(root: &ProcRoot, cpu: u32) -> Result<Vec<u32>, ProcError> {
    parse_available(&root.read(
        format!("{CPU_DIR}/cpu{cpu}/cpufreq/scaling_available_frequencies"),
        CAP,
    )?)
}

/// The current frequency of every CPU, kHz, in CPU order, 0 for a CPU
/// whose frequency cannot be read; `None` when no CPU has one (no cpufreq
/// on this machine), so nothing is recorded.
pub fn read_all_cur_khz(root: &ProcRoot) -> Option<Vec<u32>> {
    let cpus = cpus(root).ok()?;
    let freqs: Vec<Option<u32>> = cpus.iter().map(|&c| read_cur_khz(root, c).ok()).collect();
    if freqs.iter().all(Option::is_none) {
        return None;
    }
    Some(freqs.into_iter().map(|f| f.unwrap_or(0)).collect())
}
