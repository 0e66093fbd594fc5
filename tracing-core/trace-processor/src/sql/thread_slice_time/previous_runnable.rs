//! `sched.runnable`'s `sched_previous_runnable_on_thread` as one pass over
//! the thread states instead of two window functions over a sort of every
//! state. Of a thread's states in id order that are `R`, `R+` or
//! `Running` and finished (`dur` not -1), each `Running` one gets the
//! latest earlier `R`/`R+` state of its thread (`prev_runnable_id`) and
//! the latest such state up to and including itself that a wakeup not
//! from interrupt context made (`waker_utid` set, `irq_context` NULL or
//! not 1: `prev_wakeup_runnable_id`), NULL when there is none; rows by id.

use crate::hash::HashMap;

use super::inputs::{Tables, column};

/// The rows' columns.
pub(crate) const COLUMNS: &[&str] = &["id", "prev_runnable_id", "prev_wakeup_runnable_id"];

/// One row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Previous {
    /// The `Running` state's id.
    pub id: i64,
    /// The latest earlier runnable state of its thread.
    pub runnable: Option<i64>,
    /// The latest state (itself included) a wakeup made.
    pub wakeup: Option<i64>,
}

/// The rows, by id.
pub(crate) fn compute(t: &Tables) -> Vec<Previous> {
    let Some(states) = t.thread_state.as_deref() else {
        return Vec::new();
    };
    let col = |name: &str| column(states, name);
    let (id, state, dur, utid) = (col("id"), col("state"), col("dur"), col("utid"));
    let (waker, irq) = (col("waker_utid"), col("irq_context"));
    let Some(id) = id else {
        return Vec::new();
    };
    let mut rows: Vec<(i64, usize)> = (0..states.len)
        .filter_map(|r| Some((id.int_at(r)?, r)))
        .collect();
    if !rows.windows(2).all(|w| w[0].0 <= w[1].0) {
        rows.sort_by_key(|&(k, _)| k);
    }
    // Per thread (NULL one partition): the latest runnable and wakeup ids.
    let mut latest: HashMap<Option<i64>, (Option<i64>, Option<i64>)> = HashMap::default();
    let mut out = Vec::new();
    for (k, r) in rows {
        let name = state
            .and_then(|c| c.str_at(r))
            .and_then(|s| states.strings.get(s));
        let running = match name {
            Some("Running") => true,
            Some("R" | "R+") => false,
            _ => continue,
        };
        if dur.and_then(|c| c.int_at(r)).is_none_or(|d| d == -1) {
            continue;
        }
        let entry = latest
            .entry(utid.and_then(|c| c.int_at(r)))
            .or_insert((None, None));
        let woken =
            waker.and_then(|c| c.int_at(r)).is_some() && irq.and_then(|c| c.int_at(r)) != Some(1);
        if woken {
            entry.1 = Some(k);
        }
        if running {
            out.push(Previous {
                id: k,
                runnable: entry.0,
                wakeup: entry.1,
            });
        } else {
            entry.0 = Some(k);
        }
    }
    out
}
