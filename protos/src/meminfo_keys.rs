//! The `/proc/meminfo` key upstream names for each `MeminfoCounters`
//! value: the probes map the kernel's lines to counters with it, and the
//! trace processor names the `meminfo` counter tracks with it, so both read
//! the one table. (The values `Gpu`, `Zram`, `Misc`, `ION_heap` and
//! `ION_heap_pool` are Android's; mainline kernels print no such lines.)

use crate::protos::MeminfoCounters as M;

/// `(key, counter)` for every counter upstream names, in enum order.
pub const MEMINFO_KEYS: &[(&str, M)] = &[
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
    ("Gpu", M::MeminfoGpu),
    ("Zram", M::MeminfoZram),
    ("Misc", M::MeminfoMisc),
    ("ION_heap", M::MeminfoIonHeap),
    ("ION_heap_pool", M::MeminfoIonHeapPool),
];

/// The key of a `MeminfoCounters` number, if upstream names one.
pub fn meminfo_key(counter: i32) -> Option<&'static str> {
    MEMINFO_KEYS
        .iter()
        .find(|(_, c)| *c as i32 == counter)
        .map(|(k, _)| *k)
}

/// The counter of a `/proc/meminfo` key, if upstream names one.
pub fn meminfo_counter(key: &str) -> Option<M> {
    MEMINFO_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|&(_, c)| c)
}
