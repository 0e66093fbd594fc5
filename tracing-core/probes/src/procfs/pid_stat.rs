//! `/proc/PID/stat`: one line whose second field, the command name in
//! parentheses, may itself contain spaces and parentheses (a thread can
//! name itself `a) b (c`), so the name ends at the LAST `)` and the
//! numeric fields are counted from there.

use super::ProcError;

const FILE: &str = "/proc/PID/stat";

/// The fields of `/proc/PID/stat` the probes use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    /// Field 1: the process (or thread) id.
    pub pid: i32,
    /// Field 2: the command name, without its parentheses.
    pub comm: String,
    /// Field 3: the state letter (`R`, `S`, `D`, `Z`, ...).
    pub state: char,
    /// Field 4: the parent's pid.
    pub ppid: i32,
    /// Field 14: user-mode time, in clock ticks.
    pub utime: u64,
    /// Field 15: kernel-mode time, in clock ticks.
    pub stime: u64,
    /// Field 22: start time after boot, in clock ticks.
    pub starttime: u64,
}

/// Parses the contents of `/proc/PID/stat`.
pub fn parse(bytes: &[u8]) -> Result<PidStat, ProcError> {
    let open = bytes
        .iter()
        .position(|&b| b == b'(')
        .ok_or_else(|| ProcError::malformed(FILE, "no '(' before the command name"))?;
    let close = bytes
        .iter()
        .rposition(|&b| b == b')')
        .filter(|&c| c > open)
        .ok_or_else(|| ProcError::malformed(FILE, "no ')' after the command name"))?;
    let pid = std::str::from_utf8(&bytes[..open])
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
        .ok_or_else(|| ProcError::malformed(FILE, "the pid is not a number"))?;
    let comm = String::from_utf8_lossy(&bytes[open + 1..close]).into_owned();
    let rest = std::str::from_utf8(&bytes[close + 1..])
        .map_err(|_| ProcError::malformed(FILE, "fields after the name are not text"))?;
    // `rest` starts at field 3.
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<&str, ProcError> {
        fields
            .get(n - 3)
            .copied()
            .ok_or_else(|| ProcError::malformed(FILE, format!("field {n} missing")))
    };
    let num = |n: usize| -> Result<u64, ProcError> {
        field(n)?
            .parse()
            .map_err(|_| ProcError::malformed(FILE, format!("field {n} is not a number")))
    };
    let state = field(3)?
        .chars()
        .next()
        .ok_or_else(|| ProcError::malformed(FILE, "empty state"))?;
    let ppid = field(4)?
        .parse()
        .map_err(|_| ProcError::malformed(FILE, "the ppid is not a number"))?;
    Ok(PidStat {
        pid,
        comm,
        state,
        ppid,
        utime: num(14)?,
        stime: num(15)?,
        starttime: num(22)?,
    })
}
