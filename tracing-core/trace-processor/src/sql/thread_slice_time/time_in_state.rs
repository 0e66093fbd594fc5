//! `__intrinsic_thread_slice_time_in_state`, the operator behind
//! `slices.time_in_state`: for each thread slice (as `inputs.rs` reads
//! them), how long its overlaps with its thread's states of a positive
//! duration last, summed per (state, io_wait, blocked_function). Rows:
//! `id` (the slice), `state_id` (a `thread_state` row of that key, the
//! first in row order, for the module to read the key's values from) and
//! `dur`; by slice id, then by the key as SQL orders it (NULL first,
//! strings by their bytes), which is the order a GROUP BY of the key
//! gives. A slice that overlaps no state has no row.

use crate::hash::HashMap;

use crate::column_store::strings::StrId;

use super::inputs::{Lanes, Tables, column, thread_slices};

/// The table's columns.
pub(crate) const COLUMNS: &[&str] = &["id", "state_id", "dur"];

/// A state's key: state, io_wait, blocked_function.
type Key = (StrId, Option<i64>, StrId);

/// The rows, `COLUMNS` values each.
pub(crate) fn compute(t: &Tables) -> Vec<i64> {
    let Some(states) = t.thread_state.as_deref() else {
        return Vec::new();
    };
    let lanes = Lanes::of(Some(states));
    let str_col = |name: &str| {
        states
            .columns
            .iter()
            .position(|c| c.name == name)
            .map(|i| move |row: usize| states.str_id(row, i).unwrap_or(StrId::NULL))
    };
    let (state, blocked) = (str_col("state"), str_col("blocked_function"));
    let io_wait = column(states, "io_wait");
    let key_of = |row: usize| -> Key {
        (
            state.as_ref().map_or(StrId::NULL, |f| f(row)),
            io_wait.and_then(|c| c.int_at(row)),
            blocked.as_ref().map_or(StrId::NULL, |f| f(row)),
        )
    };
    // Each distinct key's first row, then the keys ranked as SQL orders
    // them; `rank_of_row` gives each row's rank.
    let mut first_row: HashMap<Key, usize> = HashMap::default();
    let mut key_index = vec![usize::MAX; states.len];
    let mut keys: Vec<(Key, usize)> = Vec::new();
    for (row, slot) in key_index.iter_mut().enumerate() {
        let k = key_of(row);
        let n = *first_row.entry(k).or_insert_with(|| {
            keys.push((k, row));
            keys.len() - 1
        });
        *slot = n;
    }
    let text = |id: StrId| states.strings.get(id).filter(|_| !id.is_null());
    let mut ranked: Vec<usize> = (0..keys.len()).collect();
    ranked.sort_by(|&a, &b| {
        let (ka, kb) = (keys[a].0, keys[b].0);
        (text(ka.0), ka.1, text(ka.2)).cmp(&(text(kb.0), kb.1, text(kb.2)))
    });
    let mut rank_of_key = vec![0usize; keys.len()];
    for (rank, &k) in ranked.iter().enumerate() {
        rank_of_key[k] = rank;
    }
    let rep_of_rank: Vec<i64> = ranked.iter().map(|&k| keys[k].1 as i64).collect();
    let mut out = Vec::new();
    let mut parts: Vec<(usize, i64)> = Vec::new();
    for s in thread_slices(t) {
        parts.clear();
        lanes.overlaps(s.utid, s.start, s.end, |row, dur| {
            let rank = key_index
                .get(row)
                .and_then(|&k| rank_of_key.get(k))
                .copied()
                .unwrap_or(0);
            parts.push((rank, dur));
        });
        parts.sort_unstable_by_key(|p| p.0);
        let mut i = 0;
        while let Some(&(rank, _)) = parts.get(i) {
            let mut sum = 0i64;
            while let Some(&(r, d)) = parts.get(i) {
                if r != rank {
                    break;
                }
                sum = sum.saturating_add(d);
                i += 1;
            }
            let rep = rep_of_rank.get(rank).copied().unwrap_or(0);
            out.extend([s.id as i64, rep, sum]);
        }
    }
    out
}
