//! `__intrinsic_thread_slice_cpu_time`, the operator behind
//! `slices.cpu_time`: for each thread slice (as `inputs.rs` reads them),
//! the time its thread ran within it, the overlaps of the slice with the
//! thread's `sched` slices of a positive duration, summed. Rows: `id`,
//! `cpu_time`, by id; a slice its thread never ran in has no row.

use super::inputs::{Lanes, Tables, thread_slices};

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["id", "cpu_time"];

/// The rows, `COLUMNS` values each.
pub(crate) fn compute(t: &Tables) -> Vec<i64> {
    let lanes = Lanes::of(t.sched.as_deref());
    let mut out = Vec::new();
    for s in thread_slices(t) {
        let mut sum: Option<i64> = None;
        lanes.overlaps(s.utid, s.start, s.end, |_, dur| {
            sum = Some(sum.unwrap_or(0).saturating_add(dur));
        });
        if let Some(sum) = sum {
            out.extend([s.id as i64, sum]);
        }
    }
    out
}
