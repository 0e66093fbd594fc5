//! The CPU time a process has used, as the kernel accounts it (user plus
//! system, all its threads), read before and after a phase so a service's
//! own cost of a workload is their difference (its `rusage`, read from
//! outside while it runs): the process's CPU clock, in nanoseconds, else
//! `/proc/<pid>/stat`'s clock ticks (10 ms here, too coarse for a short
//! phase of a quiet service).

use std::time::Duration;

/// Why a process's CPU time could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// `/proc/<pid>/stat` could not be read (the process is gone?).
    #[error("reading /proc/{pid}/stat: {source}")]
    Read {
        /// The process.
        pid: u32,
        /// The error.
        source: std::io::Error,
    },
    /// The file did not have the expected form.
    #[error("/proc/{pid}/stat: {what}")]
    Malformed {
        /// The process.
        pid: u32,
        /// What was wrong.
        what: &'static str,
    },
}

/// User plus system CPU time of process `pid` so far (all its threads).
pub fn process_cpu(pid: u32) -> Result<Duration, CpuError> {
    match process_clock(pid) {
        Some(t) => Ok(t),
        None => process_cpu_ticks(pid),
    }
}

/// The process CPU clock of `pid` (`clock_getcpuclockid`), if it can be read.
fn process_clock(pid: u32) -> Option<Duration> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid out-pointer for the call's duration.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for the call's duration.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    Some(Duration::new(secs, nanos))
}

/// [`process_cpu`] from `/proc/<pid>/stat` (clock-tick resolution).
fn process_cpu_ticks(pid: u32) -> Result<Duration, CpuError> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|source| CpuError::Read { pid, source })?;
    let ticks = cpu_ticks(&text).ok_or(CpuError::Malformed {
        pid,
        what: "no utime and stime after the command name",
    })?;
    let per_second = rustix::param::clock_ticks_per_second();
    if per_second == 0 {
        return Err(CpuError::Malformed {
            pid,
            what: "the kernel's clock tick rate is 0",
        });
    }
    Ok(Duration::from_nanos(
        (u128::from(ticks) * 1_000_000_000 / u128::from(per_second)) as u64,
    ))
}

/// utime + stime (fields 14 and 15) of a `stat` line, in clock ticks. The
/// command name (field 2) is in parentheses and may hold spaces and
/// parentheses itself, so the fields are counted after the last `)`.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After the name: state (3), ppid (4), ... utime (14), stime (15).
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    utime.checked_add(stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_after_the_last_parenthesis() {
        let line = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 5 0 0";
        assert_eq!(cpu_ticks(line), Some(10));
        assert_eq!(cpu_ticks("42 (x) S 1"), None);
        assert_eq!(cpu_ticks("no parenthesis"), None);
        assert_eq!(cpu_ticks("1 (x) S 1 1 1 0 -1 0 0 0 0 0 y 3"), None);
    }

    #[test]
    fn this_process_has_used_some() {
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let pid = std::process::id();
        let clock = process_clock(pid).expect("the process CPU clock");
        assert!(clock > Duration::ZERO);
        assert!(process_cpu_ticks(pid).is_ok());
        // Both count the same time, the ticks to within their resolution.
        let ticks = process_cpu_ticks(pid).unwrap_or_default();
        assert!(ticks <= process_clock(pid).unwrap_or_default() + Duration::from_millis(20));
    }
}
