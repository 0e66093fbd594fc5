//! What the ftrace importers without a module state of their own keep
//! between events: the events the trace describes itself
//! (`ftrace_generic.rs`), each thread's pending CMA migration facts
//! (`cma.rs`), how many times each wakeup source is active
//! (`ftrace_power.rs`), each thread's I2C transfer open
//! (`ftrace_i2c.rs`), the Adreno GPU's batches in flight
//! (`ftrace_adreno.rs`). One field of the parser holds it all, so adding an
//! importer's state does not touch the parser.

use crate::hash::HashMap;

/// The ftrace importers' state between events.
#[derive(Debug, Default)]
pub struct FtraceState {
    /// The self-described events, by `FtraceEvent` field number.
    pub generic: super::ftrace_generic::GenericEvents,
    /// Per thread (utid): the last `mm_alloc_contig_migrate_range_info`'s
    /// pages migrated, reclaimed and mapped, for the thread's CMA
    /// allocation in progress.
    pub cma_migration: HashMap<u32, [u64; 3]>,
    /// Per wakeup source name: how many activations are open.
    pub wakeup_sources: HashMap<String, u32>,
    /// The Adreno GPU's contexts and submissions in flight.
    pub adreno: super::ftrace_adreno::AdrenoState,
    /// Per thread (utid): its I2C transfer open.
    pub i2c: HashMap<u32, super::ftrace_i2c::OpenTransfer>,
}
