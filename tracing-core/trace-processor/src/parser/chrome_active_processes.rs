//! Chrome's processes whose data the trace lost, as upstream finds them:
//! Chrome writes the pids it has active (`TrackEvent.chrome_active_processes`
//! or ChromeTrackEvent's `active_processes` extension) each time it resets
//! its incremental state, and each process writes its process descriptor
//! then. A process listed at a time with no descriptor of it within 0.2 s
//! lost data; it is reliable again from its next descriptor, or, when it
//! has none later, from the next time any active-process list was written
//! (it ended before then), or never. The processes go into
//! `experimental_missing_chrome_processes` at the end of the trace.

use std::collections::BTreeSet;
use std::ops::Bound;

use super::Parser;
use crate::hash::HashMap;
use crate::storage::Storage;
use crate::tables::chrome::MissingChromeProcessRow;
use crate::tracker::process::ProcessTracker;

/// How far from an active-process list a process's descriptor may be to
/// count as written with it (less than Chrome's 5 s incremental state
/// reset interval).
const MAX_TIMESTAMP_DIFF: i64 = 200_000_000;

/// What one process was seen in.
#[derive(Debug, Default)]
struct ProcessTimes {
    /// When an active-process list named it.
    listed: BTreeSet<i64>,
    /// When a descriptor of it was written.
    descriptors: BTreeSet<i64>,
}

/// The lists and descriptors seen so far.
#[derive(Debug, Default)]
pub struct ActiveProcesses {
    /// By upid.
    processes: HashMap<u32, ProcessTimes>,
    /// When any list was written.
    lists: BTreeSet<i64>,
}

/// A process descriptor of `upid` at `ts`.
pub fn add_descriptor(p: &mut Parser, ts: i64, upid: u32) {
    let times = p.chrome_active_processes.processes.entry(upid).or_default();
    times.descriptors.insert(ts);
}

impl ActiveProcesses {
    /// An active-process list at `ts` naming `pid`.
    pub fn add_active(
        &mut self,
        processes: &mut ProcessTracker,
        storage: &mut Storage,
        ts: i64,
        pid: i64,
    ) {
        let upid = processes.get_or_create_process(storage, pid);
        self.processes.entry(upid).or_default().listed.insert(ts);
        self.lists.insert(ts);
    }
}

/// Where a process's data is reliable from after its last loss: None when
/// it lost none, Some(None) when never again.
fn reliable_from(times: &ProcessTimes, lists: &BTreeSet<i64>) -> Option<Option<i64>> {
    let mut loss = None;
    for &ts in &times.listed {
        let next = times
            .descriptors
            .range((Bound::Included(ts - MAX_TIMESTAMP_DIFF), Bound::Unbounded))
            .next();
        match next {
            Some(&d) if d > ts + MAX_TIMESTAMP_DIFF => loss = Some(Some(d)),
            Some(_) => {}
            None => {
                let after = lists.range((Bound::Excluded(ts), Bound::Unbounded)).next();
                loss = Some(after.copied());
            }
        }
    }
    loss
}

/// The end of the trace: the processes that lost data, by upid.
pub fn finish(p: &mut Parser) {
    let a = std::mem::take(&mut p.chrome_active_processes);
    let mut rows: Vec<MissingChromeProcessRow> = a
        .processes
        .iter()
        .filter_map(|(&upid, times)| {
            reliable_from(times, &a.lists).map(|reliable_from| MissingChromeProcessRow {
                upid,
                reliable_from,
            })
        })
        .collect();
    rows.sort_by_key(|r| r.upid);
    p.storage.missing_chrome_processes.extend(rows);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(listed: &[i64], descriptors: &[i64]) -> ProcessTimes {
        ProcessTimes {
            listed: listed.iter().copied().collect(),
            descriptors: descriptors.iter().copied().collect(),
        }
    }

    #[test]
    fn a_process_listed_without_a_near_descriptor_lost_data() {
        let s = 1_000_000_000;
        let lists: BTreeSet<i64> = [0, s, 2 * s].into_iter().collect();
        // A descriptor with each list: no loss.
        assert_eq!(reliable_from(&times(&[0, s], &[100, s + 5]), &lists), None);
        // Listed at 0, its descriptor only at 1 s: reliable from then.
        assert_eq!(reliable_from(&times(&[0, s], &[s]), &lists), Some(Some(s)));
        // No descriptor after its listing: reliable from the next list.
        assert_eq!(reliable_from(&times(&[s], &[]), &lists), Some(Some(2 * s)));
        // Listed last with no descriptor: never reliable.
        assert_eq!(reliable_from(&times(&[2 * s], &[]), &lists), Some(None));
    }
}
