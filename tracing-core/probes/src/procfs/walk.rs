//! Walking `/proc`: the numeric entries (processes), each one's `task/`
//! (threads), and the files read for each, tolerating what a live system
//! does during a scan: processes and threads that exit between being
//! listed and being read are skipped, not errors.

use super::{ProcError, ProcRoot, cmdline, pid_stat, pid_status, smaps_rollup};

/// Cap for `cmdline` (longer ones are kept truncated, as `ps` does).
pub const CMDLINE_CAP: usize = 128 * 1024;
/// Cap for `status`, `comm`, `oom_score_adj`.
pub const SMALL_CAP: usize = 64 * 1024;

/// A thread of a process (not its main thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// The thread id.
    pub tid: i32,
    /// Its name (`task/TID/comm`), if read.
    pub name: Option<String>,
}

/// A process as the `process_tree` packet describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// The process id.
    pub pid: i32,
    /// The parent's pid (`PPid`).
    pub ppid: i32,
    /// The real uid, if known.
    pub uid: Option<u32>,
    /// The command name (`Name` in `status`).
    pub name: String,
    /// The arguments (empty for kernel threads and zombies).
    pub cmdline: Vec<String>,
    /// Whether it is a kernel thread, where the kernel says (6.4+).
    pub kthread: Option<bool>,
    /// Its start time after boot, clock ticks (`/proc/PID/stat`), if read.
    pub start_ticks: Option<u64>,
    /// The threads other than the main one, by tid.
    pub threads: Vec<ThreadInfo>,
}

/// A process's memory counters and `oom_score_adj`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessMemory {
    /// The process id.
    pub pid: i32,
    /// Its `status` (memory counters in kB).
    pub status: pid_status::PidStatus,
    /// Its `oom_score_adj`, if read.
    pub oom_score_adj: Option<i64>,
    /// User and kernel time, clock ticks (`/proc/PID/stat`), if read.
    pub runtime_ticks: Option<(u64, u64)>,
    /// `/proc/PID/smaps_rollup`, where asked for and readable.
    pub smaps_rollup: Option<smaps_rollup::SmapsRollup>,
    /// Its open file descriptors and what they name (`/proc/PID/fd`),
    /// where asked for.
    pub fds: Vec<(u64, String)>,
}

/// What [`read_memory_with`] reads beside `status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryOptions {
    /// `smaps_rollup` (`scan_smaps_rollup`).
    pub smaps_rollup: bool,
    /// The open descriptors (`resolve_process_fds`).
    pub fds: bool,
}

/// The descriptors of `pid` and their targets (`readlink` of each entry of
/// `/proc/PID/fd`), by number; entries that vanish meanwhile are skipped.
pub fn read_fds(root: &ProcRoot, pid: i32) -> Vec<(u64, String)> {
    let dir = root.path(format!("proc/{pid}/fd"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, String)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let fd: u64 = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(e.path()).ok()?;
            Some((fd, target.to_string_lossy().into_owned()))
        })
        .collect();
    out.sort_unstable();
    out
}

fn numeric(names: Vec<String>) -> Vec<i32> {
    let mut ids: Vec<i32> = names
        .iter()
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .collect();
    ids.sort_unstable();
    ids
}

/// The pids listed in `proc/`, ascending.
pub fn pids(root: &ProcRoot) -> Result<Vec<i32>, ProcError> {
    Ok(numeric(root.list("proc")?))
}

/// The tids listed in `proc/PID/task/`, ascending (empty if the process
/// is gone).
pub fn tids(root: &ProcRoot, pid: i32) -> Vec<i32> {
    root.list(format!("proc/{pid}/task"))
        .map(numeric)
        .unwrap_or_default()
}

/// `/proc/PID/stat`, if it can be read and parsed.
fn read_stat(root: &ProcRoot, pid: i32) -> Option<pid_stat::PidStat> {
    let bytes = root.read(format!("proc/{pid}/stat"), SMALL_CAP).ok()?;
    pid_stat::parse(&bytes).ok()
}

/// The process (thread group) of task `tid`, from `/proc/TID/status`;
/// `None` if the task is gone or its status does not parse.
pub fn tgid(root: &ProcRoot, tid: i32) -> Option<i32> {
    let bytes = root.read(format!("proc/{tid}/status"), SMALL_CAP).ok()?;
    pid_status::parse(&bytes).ok().map(|s| s.tgid)
}

/// Reads one process; `Ok(None)` if it exited meanwhile.
pub fn read_process(
    root: &ProcRoot,
    pid: i32,
    thread_names: bool,
) -> Result<Option<ProcessInfo>, ProcError> {
    let gone_is_none = |r: Result<_, ProcError>| match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_gone() => Ok(None),
        Err(e) => Err(e),
    };
    let Some(status) = gone_is_none(root.read(format!("proc/{pid}/status"), SMALL_CAP))? else {
        return Ok(None);
    };
    let status = pid_status::parse(&status)?;
    let cmd = match root.read_truncated(format!("proc/{pid}/cmdline"), CMDLINE_CAP) {
        Ok((bytes, _)) => cmdline::parse(&bytes),
        Err(e) if e.is_gone() => return Ok(None),
        Err(e) => return Err(e),
    };
    let threads = tids(root, pid)
        .into_iter()
        .filter(|&tid| tid != pid)
        .map(|tid| ThreadInfo {
            tid,
            name: thread_names
                .then(|| {
                    root.read(format!("proc/{pid}/task/{tid}/comm"), SMALL_CAP)
                        .ok()
                })
                .flatten()
                .map(|b| cmdline::parse_comm(&b)),
        })
        .collect();
    Ok(Some(ProcessInfo {
        pid,
        ppid: status.ppid,
        uid: status.uid,
        kthread: status.kthread,
        name: status.name,
        cmdline: cmd,
        start_ticks: read_stat(root, pid).map(|s| s.starttime),
        threads,
    }))
}

/// Every process under the root with its threads. Processes that exit
/// during the scan are left out; any other per-process error is returned
/// next to the processes read.
pub fn scan_processes(
    root: &ProcRoot,
    thread_names: bool,
) -> Result<(Vec<ProcessInfo>, Vec<ProcError>), ProcError> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for pid in pids(root)? {
        match read_process(root, pid, thread_names) {
            Ok(Some(p)) => out.push(p),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    Ok((out, errors))
}

/// Reads one process's memory counters; `Ok(None)` if it exited meanwhile.
pub fn read_memory(root: &ProcRoot, pid: i32) -> Result<Option<ProcessMemory>, ProcError> {
    read_memory_with(root, pid, MemoryOptions::default())
}

/// [`read_memory`], and what `opts` asks for beside.
pub fn read_memory_with(
    root: &ProcRoot,
    pid: i32,
    opts: MemoryOptions,
) -> Result<Option<ProcessMemory>, ProcError> {
    let status = match root.read(format!("proc/{pid}/status"), SMALL_CAP) {
        Ok(b) => pid_status::parse(&b)?,
        Err(e) if e.is_gone() => return Ok(None),
        Err(e) => return Err(e),
    };
    let oom_score_adj = root
        .read(format!("proc/{pid}/oom_score_adj"), SMALL_CAP)
        .ok()
        .and_then(|b| pid_status::parse_oom_score_adj(&b).ok());
    let has_memory = status.has_memory();
    let smaps_rollup = (opts.smaps_rollup && has_memory)
        .then(|| {
            root.read(format!("proc/{pid}/smaps_rollup"), SMALL_CAP)
                .ok()
        })
        .flatten()
        .map(|b| smaps_rollup::parse(&b));
    let fds = if opts.fds && has_memory {
        read_fds(root, pid)
    } else {
        Vec::new()
    };
    Ok(Some(ProcessMemory {
        pid,
        status,
        oom_score_adj,
        runtime_ticks: read_stat(root, pid).map(|s| (s.utime, s.stime)),
        smaps_rollup,
        fds,
    }))
}

/// Memory counters of every process that has an address space (kernel
/// threads have none and are left out), tolerating exits as
/// [`scan_processes`] does.
pub fn scan_memory(root: &ProcRoot) -> Result<(Vec<ProcessMemory>, Vec<ProcError>), ProcError> {
    scan_memory_with(root, MemoryOptions::default())
}

/// [`scan_memory`], reading what `opts` asks for beside.
pub fn scan_memory_with(
    root: &ProcRoot,
    opts: MemoryOptions,
) -> Result<(Vec<ProcessMemory>, Vec<ProcError>), ProcError> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for pid in pids(root)? {
        match read_memory_with(root, pid, opts) {
            Ok(Some(m)) if m.status.has_memory() => out.push(m),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    Ok((out, errors))
}
