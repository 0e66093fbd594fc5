//! Which CPUs `linux.perf` opens its events on, as upstream's
//! `CreateCpuMask` decides it: the CPUs the kernel says are online
//! (`/sys/devices/system/cpu/online`, a list such as `0-3,5`), narrowed to
//! `PerfEventConfig.target_cpu` where the config names any. A target CPU
//! that does not exist or is offline is dropped (said in the log); when
//! none remains the data source cannot run, and says so.

/// Why no CPU is left to sample.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuSelectError {
    /// Every `target_cpu` is offline or does not exist.
    #[error(
        "PerfEventConfig.target_cpu: none of {targets:?} is an online CPU (online: {online:?})"
    )]
    NoneOnline {
        /// The CPUs the config named.
        targets: Vec<u32>,
        /// The CPUs online.
        online: Vec<u32>,
    },
}

/// The CPUs chosen, and the target CPUs dropped as not online.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSelection {
    /// The CPUs to open events on, ascending.
    pub cpus: Vec<u32>,
    /// The `target_cpu`s left out: no such CPU, or offline.
    pub dropped: Vec<u32>,
}

/// The most CPUs one range of a list may name (a hostile `0-4294967295`
/// stays bounded).
const MAX_RANGE: u32 = 4096;

/// The CPUs of a kernel CPU list (`0-3,5`); malformed parts are skipped.
pub fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            cpus.extend(a..=b.min(a.saturating_add(MAX_RANGE)));
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The CPUs of `online` that `targets` names (all of them when `targets`
/// is empty); the targets not online are returned as dropped.
pub fn select_cpus(targets: &[u32], online: &[u32]) -> Result<CpuSelection, CpuSelectError> {
    if targets.is_empty() {
        return Ok(CpuSelection {
            cpus: online.to_vec(),
            dropped: Vec::new(),
        });
    }
    let (cpus, dropped): (Vec<u32>, Vec<u32>) =
        targets.iter().partition(|cpu| online.contains(cpu));
    if cpus.is_empty() {
        return Err(CpuSelectError::NoneOnline {
            targets: targets.to_vec(),
            online: online.to_vec(),
        });
    }
    Ok(CpuSelection { cpus, dropped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_as_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0-3,5\n"), [0, 1, 2, 3, 5]);
        assert_eq!(parse_cpu_list("0"), [0]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("x,2"), [2]);
        assert_eq!(parse_cpu_list("0-4294967295").len(), 4097);
    }

    #[test]
    fn targets_are_narrowed_to_online_cpus() {
        let online = [0, 1, 3];
        assert_eq!(
            select_cpus(&[], &online),
            Ok(CpuSelection {
                cpus: vec![0, 1, 3],
                dropped: vec![]
            })
        );
        // CPU 2 is offline, CPU 64 does not exist.
        assert_eq!(
            select_cpus(&[1, 2, 64], &online),
            Ok(CpuSelection {
                cpus: vec![1],
                dropped: vec![2, 64]
            })
        );
        let e = select_cpus(&[2, 64], &online).unwrap_err();
        assert!(e.to_string().contains("none of [2, 64]"), "{e}");
    }
}
