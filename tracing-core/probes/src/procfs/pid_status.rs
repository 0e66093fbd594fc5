//! `/proc/PID/status`: `Key:\tvalue` lines giving a task's name, thread
//! group, parent, uids and memory counters (kB), plus the task's
//! `oom_score_adj`, which lives in a file of its own.

use super::{ProcError, first_u64, key_values};

const FILE: &str = "/proc/PID/status";

/// The fields of `/proc/PID/status` the probes use. Memory counters are
/// absent for kernel threads (they have no address space).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidStatus {
    /// `Name`: the command name (as `comm`; the kernel escapes `\n` and `\\`).
    pub name: String,
    /// `Tgid`: the thread group (process) id.
    pub tgid: i32,
    /// `Pid`: this task's id.
    pub pid: i32,
    /// `PPid`: the parent process id.
    pub ppid: i32,
    /// `Uid`: the real uid (first of the four).
    pub uid: Option<u32>,
    /// `Kthread` (Linux 6.4+): whether the task is a kernel thread.
    pub kthread: Option<bool>,
    /// `VmSize`, kB.
    pub vm_size_kb: Option<u64>,
    /// `VmRSS`, kB.
    pub vm_rss_kb: Option<u64>,
    /// `RssAnon`, kB.
    pub rss_anon_kb: Option<u64>,
    /// `RssFile`, kB.
    pub rss_file_kb: Option<u64>,
    /// `RssShmem`, kB.
    pub rss_shmem_kb: Option<u64>,
    /// `VmSwap`, kB.
    pub vm_swap_kb: Option<u64>,
    /// `VmLck`, kB.
    pub vm_locked_kb: Option<u64>,
    /// `VmHWM`, kB.
    pub vm_hwm_kb: Option<u64>,
}

impl PidStatus {
    /// Whether any memory counter is present (false for kernel threads).
    pub fn has_memory(&self) -> bool {
        self.vm_size_kb.is_some() || self.vm_rss_kb.is_some()
    }
}

/// Parses the contents of `/proc/PID/status`. `Name`, `Tgid`, `Pid` and
/// `PPid` are required; everything else is optional.
pub fn parse(bytes: &[u8]) -> Result<PidStatus, ProcError> {
    let text = String::from_utf8_lossy(bytes);
    let mut s = PidStatus::default();
    let (mut name, mut tgid, mut pid, mut ppid) = (None, None, None, None);
    let id = |v: &str, key: &str| -> Result<i32, ProcError> {
        v.parse()
            .map_err(|_| ProcError::malformed(FILE, format!("{key} is not a number")))
    };
    for (key, value) in key_values(&text, ':') {
        match key {
            "Name" => name = Some(value.to_owned()),
            "Tgid" => tgid = Some(id(value, key)?),
            "Pid" => pid = Some(id(value, key)?),
            "PPid" => ppid = Some(id(value, key)?),
            "Uid" => s.uid = value.split_whitespace().next().and_then(|u| u.parse().ok()),
            "Kthread" => s.kthread = first_u64(value).map(|k| k != 0),
            "VmSize" => s.vm_size_kb = first_u64(value),
            "VmRSS" => s.vm_rss_kb = first_u64(value),
            "RssAnon" => s.rss_anon_kb = first_u64(value),
            "RssFile" => s.rss_file_kb = first_u64(value),
            "RssShmem" => s.rss_shmem_kb = first_u64(value),
            "VmSwap" => s.vm_swap_kb = first_u64(value),
            "VmLck" => s.vm_locked_kb = first_u64(value),
            "VmHWM" => s.vm_hwm_kb = first_u64(value),
            _ => {}
        }
    }
    let missing = |k: &str| ProcError::malformed(FILE, format!("no {k} line"));
    s.name = name.ok_or_else(|| missing("Name"))?;
    s.tgid = tgid.ok_or_else(|| missing("Tgid"))?;
    s.pid = pid.ok_or_else(|| missing("Pid"))?;
    s.ppid = ppid.ok_or_else(|| missing("PPid"))?;
    Ok(s)
}

/// Parses `/proc/PID/oom_score_adj` (one signed number, -1000..=1000).
pub fn parse_oom_score_adj(bytes: &[u8]) -> Result<i64, ProcError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ProcError::malformed("/proc/PID/oom_score_adj", "not a number"))
}
