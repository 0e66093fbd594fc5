//! Slices on tracks: a stack per track gives each new slice its depth and
//! parent; an end closes the innermost open slice and fills its duration
//! and thread duration.

use crate::hash::HashMap;

use crate::storage::Storage;
use crate::storage::rows::SliceRow;

/// Open slices per track.
#[derive(Debug, Default)]
pub struct SliceTracker {
    stacks: HashMap<u32, Vec<u32>>,
}

impl SliceTracker {
    /// Drops open slices that end before `ts` (complete slices nested
    /// under nothing once their end passed).
    fn pop_finished(&mut self, storage: &Storage, track: u32, ts: i64) {
        if let Some(stack) = self.stacks.get_mut(&track) {
            while let Some(&top) = stack.last() {
                let s = &storage.slices[top as usize];
                if s.dur >= 0 && s.ts.saturating_add(s.dur) <= ts {
                    stack.pop();
                } else {
                    break;
                }
            }
        }
    }

    /// Opens a slice (dur -1) or adds a complete one (dur >= 0, kept on the
    /// stack until its end passes so later slices nest in it).
    pub fn begin(&mut self, storage: &mut Storage, mut row: SliceRow) -> u32 {
        self.pop_finished(storage, row.track_id, row.ts);
        let stack = self.stacks.entry(row.track_id).or_default();
        row.depth = u32::try_from(stack.len()).unwrap_or(u32::MAX);
        row.parent_id = stack.last().copied();
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        storage.slices.push(row);
        stack.push(id);
        id
    }

    /// Adds an instant: nested like a slice, never left open.
    pub fn instant(&mut self, storage: &mut Storage, mut row: SliceRow) -> u32 {
        row.dur = 0;
        self.pop_finished(storage, row.track_id, row.ts);
        let stack = self.stacks.entry(row.track_id).or_default();
        row.depth = u32::try_from(stack.len()).unwrap_or(u32::MAX);
        row.parent_id = stack.last().copied();
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        storage.slices.push(row);
        id
    }

    /// The innermost slice open on a track at `ts`.
    pub fn topmost(&mut self, storage: &Storage, track: u32, ts: i64) -> Option<u32> {
        self.pop_finished(storage, track, ts);
        self.stacks.get(&track)?.last().copied()
    }

    /// Closes the innermost open slice of a track; its id, or None when
    /// nothing is open.
    pub fn end(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
    ) -> Option<u32> {
        self.pop_finished(storage, track, ts);
        let stack = self.stacks.get_mut(&track)?;
        let pos = stack
            .iter()
            .rposition(|id| storage.slices[*id as usize].dur < 0)?;
        let id = stack[pos];
        stack.truncate(pos);
        let s = &mut storage.slices[id as usize];
        s.dur = ts.saturating_sub(s.ts).max(0);
        if let (Some(end), Some(start)) = (thread_ts, s.thread_ts) {
            s.thread_dur = Some(end.saturating_sub(start));
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_ends() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let row = |ts| SliceRow {
            ts,
            dur: -1,
            ..SliceRow::default()
        };
        let a = t.begin(&mut st, row(10));
        let b = t.begin(&mut st, row(20));
        assert_eq!(st.slices[b as usize].depth, 1);
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
        assert_eq!(t.end(&mut st, 0, 30, None), Some(b));
        assert_eq!(t.end(&mut st, 0, 40, None), Some(a));
        assert_eq!(st.slices[a as usize].dur, 30);
        assert_eq!(t.end(&mut st, 0, 50, None), None);
        // A complete slice holds later ones until its end.
        let c = t.begin(
            &mut st,
            SliceRow {
                ts: 100,
                dur: 10,
                ..SliceRow::default()
            },
        );
        let d = t.instant(&mut st, row(105));
        assert_eq!(st.slices[d as usize].parent_id, Some(c));
        let e = t.instant(&mut st, row(110));
        assert_eq!(st.slices[e as usize].depth, 0);
    }

    /// A complete slice whose end lies past `i64::MAX` (a hostile
    /// timestamp and duration) overflowed when a later slice asked whether
    /// it had ended; it now ends at `i64::MAX` and holds what follows.
    #[test]
    fn a_complete_slice_ending_past_the_last_timestamp_does_not_overflow() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let c = t.begin(
            &mut st,
            SliceRow {
                ts: i64::MAX - 10,
                dur: i64::MAX,
                ..SliceRow::default()
            },
        );
        let d = t.instant(
            &mut st,
            SliceRow {
                ts: i64::MAX - 5,
                ..SliceRow::default()
            },
        );
        assert_eq!(st.slices[d as usize].parent_id, Some(c));
    }
}
