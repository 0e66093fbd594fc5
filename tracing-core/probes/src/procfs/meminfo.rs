//! `/proc/meminfo`: `Key:   value kB` lines, and the mapping from the
//! kernel's key names to upstream's `MeminfoCounters` numbers (values are
//! reported in kB, as the kernel prints them and as upstream records them).

use super::ProcError;
use zerotrace_protos::protos::MeminfoCounters as M;

const FILE: &str = "/proc/meminfo";

/// The kernel's `/proc/meminfo` keys upstream's `MeminfoCounters` names.
/// (Its Android-only values, `Gpu`, `Zram`, `Misc`, `IonHeap`,
/// `IonHeapPool`, have no mainline `/proc/meminfo` line.)
pub const KEYS: &[(&str, M)] = &[
    ("MemTotal", M::MeminfoMemTotal),
    ("MemFree", M::MeminfoMemFree),
    ("MemAvailable", M::MeminfoMemAvailable),
    ("Buffers", M::MeminfoBuffers),
    ("Cached", M::MeminfoCached),
    ("SwapCached", M::MeminfoSwapCached),
    ("Active", M::MeminfoActive),
    ("Inactive", M::MeminfoInactive),
    ("Active(anon)", M::MeminfoActiveAnon),
    ("Inactive(anon)", M::MeminfoInactiveAnon),
    ("Active(file)", M::MeminfoActiveFile),
    ("Inactive(file)", M::MeminfoInactiveFile),
    ("Unevictable", M::MeminfoUnevictable),
    ("Mlocked", M::MeminfoMlocked),
    ("SwapTotal", M::MeminfoSwapTotal),
    ("SwapFree", M::MeminfoSwapFree),
    ("Dirty", M::MeminfoDirty),
    ("Writeback", M::MeminfoWriteback),
    ("AnonPages", M::MeminfoAnonPages),
    ("Mapped", M::MeminfoMapped),
    ("Shmem", M::MeminfoShmem),
    ("Slab", M::MeminfoSlab),
    ("SReclaimable", M::MeminfoSlabReclaimable),
    ("SUnreclaim", M::MeminfoSlabUnreclaimable),
    ("KernelStack", M::MeminfoKernelStack),
    ("PageTables", M::MeminfoPageTables),
    ("CommitLimit", M::MeminfoCommitLimit),
    ("Committed_AS", M::MeminfoCommitedAs),
    ("VmallocTotal", M::MeminfoVmallocTotal),
    ("VmallocUsed", M::MeminfoVmallocUsed),
    ("VmallocChunk", M::MeminfoVmallocChunk),
    ("CmaTotal", M::MeminfoCmaTotal),
    ("CmaFree", M::MeminfoCmaFree),
];

/// The counter a `/proc/meminfo` key maps to, if upstream names one.
pub fn counter(key: &str) -> Option<M> {
    KEYS.iter().find(|(k, _)| *k == key).map(|&(_, c)| c)
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
