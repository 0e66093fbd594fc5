//! `/proc/meminfo`: `Key:   value kB` lines, and the mapping from the
//! kernel's key names to upstream's `MeminfoCounters` numbers (values are
//! reported in kB, as the kernel prints them and as upstream records them).

use super::ProcError;
use zerotrace_protos::protos::MeminfoCounters as M;

const FILE: &str = "/proc/meminfo";

/// The kernel's `/proc/meminfo` keys upstream's `MeminfoCounters` names
/// (the one table, in `zerotrace_protos`).
pub use zerotrace_protos::meminfo_keys::MEMINFO_KEYS as KEYS;

/// The counter a `/proc/meminfo` key maps to, if upstream names one.
pub fn counter(key: &str) -> Option<M> {
    zerotrace_protos::meminfo_keys::meminfo_counter(key)
}

/// Every `key: value` line of `/proc/meminfo`, in file order, values as
/// printed (kB for sizes, a count for `HugePages_*`).
pub fn parse(bytes: &[u8]) -> Result<Vec<(String, u64)>, ProcError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ProcError::malformed(FILE, "not text"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (key, rest) = line
            .split_once(':')
            .ok_or_else(|| ProcError::malformed(FILE, format!("no ':' in {line:?}")))?;
        let value = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ProcError::malformed(FILE, format!("no number in {line:?}")))?;
        out.push((key.trim().to_owned(), value));
    }
    Ok(out)
}
