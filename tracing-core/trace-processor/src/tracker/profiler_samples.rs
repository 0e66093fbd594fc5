//! The generic profiler samples: task and execution contexts made once
//! each, counter sets (the counter values of one sample), and the CPU rows
//! samples point at, as upstream's profiler sample tracker makes them.

use crate::hash::HashMap;

use crate::storage::Storage;
use crate::storage::profiling_rows::{ExecutionContextRow, ProfilerSampleRow, TaskContextRow};
use crate::storage::rows::CpuRow;

/// Makes sample rows and their contexts.
#[derive(Debug, Default)]
pub struct ProfilerSampleTracker {
    task_contexts: HashMap<TaskContextRow, u32>,
    execution_contexts: HashMap<ExecutionContextRow, u32>,
}

impl ProfilerSampleTracker {
    /// The one task context of these values.
    pub fn task_context(&mut self, storage: &mut Storage, row: TaskContextRow) -> u32 {
        *self.task_contexts.entry(row).or_insert_with(|| {
            let id = u32::try_from(storage.profiling.task_contexts.len()).unwrap_or(u32::MAX);
            storage.profiling.task_contexts.push(row);
            id
        })
    }

    /// The one execution context of these values.
    pub fn execution_context(&mut self, storage: &mut Storage, row: ExecutionContextRow) -> u32 {
        *self.execution_contexts.entry(row).or_insert_with(|| {
            let id = u32::try_from(storage.profiling.execution_contexts.len()).unwrap_or(u32::MAX);
            storage.profiling.execution_contexts.push(row);
            id
        })
    }

    /// A new counter set of these counter rows (None when there are none).
    pub fn counter_set(storage: &mut Storage, counters: &[u32]) -> Option<u32> {
        if counters.is_empty() {
            return None;
        }
        let set = u32::try_from(storage.profiling.counter_sets.len()).unwrap_or(u32::MAX);
        for c in counters {
            storage
                .profiling
                .counter_sets
                .push(crate::storage::profiling_rows::CounterSetRow {
                    counter_set_id: set,
                    counter_id: *c,
                });
        }
        Some(set)
    }

    /// Appends a sample; its id.
    pub fn add_sample(storage: &mut Storage, row: ProfilerSampleRow) -> u32 {
        let id = u32::try_from(storage.profiling.samples.len()).unwrap_or(u32::MAX);
        storage.profiling.samples.push(row);
        id
    }
}

/// The ucpu of a CPU of this machine (its number), made when new; rows in
/// between are left without a CPU number.
pub fn ucpu(storage: &mut Storage, cpu: u32) -> u32 {
    let idx = cpu as usize;
    if storage.cpus.len() <= idx {
        storage.cpus.resize_with(idx + 1, CpuRow::default);
    }
    if let Some(row) = storage.cpus.get_mut(idx) {
        if row.cpu.is_none() {
            row.cpu = Some(i64::from(cpu));
        }
    }
    cpu
}
