//! Slices on tracks: a stack per track gives each new slice its depth and
//! parent; an end closes the innermost open slice and fills its duration
//! and thread duration.
//!
//! A hostile trace must not make this quadratic: a stack is at most
//! [`MAX_DEPTH`] deep (upstream's cap; a begin or instant past it is
//! dropped and counted in `slice_max_depth_exceeded`), and each stack keeps
//! the positions of its open slices apart, so an end finds the innermost
//! open one without walking the complete slices above it. Every stack
//! entry looked at is counted in [`SliceTracker::steps`], the work a test
//! and the fuzz harness bound per input byte.
//!
//! Complete slices (a known duration) follow upstream's rules: one that
//! starts inside a complete slice of its track and ends after it cannot
//! nest, so it is dropped and logged in
//! `slice_drop_overlapping_complete_event` with the overlap; one with a
//! negative duration (taken through [`SliceTracker::complete`]) is dropped
//! and logged in `slice_negative_duration`.

use crate::hash::HashMap;

use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::SliceRow;

/// Deepest a track's slice stack goes, as upstream's slice tracker caps
/// it: a slice that would sit at this depth is dropped.
pub const MAX_DEPTH: usize = 512;

/// One track's stack.
#[derive(Debug, Default)]
struct Stack {
    /// Slice ids, outermost first: open slices and complete ones whose end
    /// has not passed.
    slices: Vec<u32>,
    /// Positions in `slices` of its open slices (dur -1), ascending.
    open: Vec<usize>,
}

/// Open slices per track.
#[derive(Debug, Default)]
pub struct SliceTracker {
    stacks: HashMap<u32, Stack>,
    /// Stack entries pushed, popped or looked at so far.
    steps: u64,
}

impl SliceTracker {
    /// Stack entries pushed, popped or looked at so far: linear in the
    /// slice events read, whatever their nesting.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Drops open slices that end before `ts` (complete slices nested
    /// under nothing once their end passed).
    fn pop_finished(&mut self, storage: &Storage, track: u32, ts: i64) {
        if let Some(stack) = self.stacks.get_mut(&track) {
            while let Some(&top) = stack.slices.last() {
                self.steps += 1;
                let Some(s) = storage.slices.get(top as usize) else {
                    break;
                };
                if s.dur >= 0 && s.ts.saturating_add(s.dur) <= ts {
                    stack.slices.pop();
                } else {
                    break;
                }
            }
        }
    }

    /// The depth and parent a new slice on `track` gets, or None (counted)
    /// when the stack is full.
    fn place(&mut self, storage: &mut Storage, row: &mut SliceRow) -> Option<()> {
        self.pop_finished(storage, row.track_id, row.ts);
        let stack = self.stacks.entry(row.track_id).or_default();
        if stack.slices.len() >= MAX_DEPTH {
            storage.stats.incr("slice_max_depth_exceeded");
            return None;
        }
        row.depth = u32::try_from(stack.slices.len()).unwrap_or(u32::MAX);
        row.parent_id = stack.slices.last().copied();
        Some(())
    }

    /// The complete slice on top of `row`'s track that `row` (complete)
    /// starts inside of and outlasts, once finished slices are popped.
    /// Only the top is looked at: every complete slice is checked when it
    /// is added, so those above the innermost open slice nest, and the top
    /// one ends first.
    fn overlapped(&mut self, storage: &Storage, row: &SliceRow) -> Option<u32> {
        let stack = self.stacks.get(&row.track_id)?;
        let &top = stack.slices.last()?;
        self.steps += 1;
        let s = storage.slices.get(top as usize)?;
        let end = s.ts.saturating_add(s.dur);
        (s.dur >= 0 && row.ts < end && row.ts.saturating_add(row.dur) > end).then_some(top)
    }

    /// Logs a complete slice dropped because it partly overlaps the slice
    /// `conflicting`: the time both share and the slice it conflicts with.
    fn log_overlap(storage: &mut Storage, row: &SliceRow, conflicting: u32) {
        let Some(c) = storage.slices.get(conflicting as usize) else {
            return;
        };
        let (c_ts, c_dur, c_name) = (c.ts, c.dur, c.name);
        let args = [
            ("overlap_start", ArgValue::Int(row.ts)),
            ("overlap_end", ArgValue::Int(c_ts.saturating_add(c_dur))),
            ("conflicting_slice_name", ArgValue::String(c_name)),
            ("conflicting_slice_ts", ArgValue::Int(c_ts)),
            ("conflicting_slice_dur", ArgValue::Int(c_dur)),
        ];
        let place = LogPlace {
            ts: Some(row.ts),
            byte_offset: None,
        };
        storage.record_import_log_typed("slice_drop_overlapping_complete_event", place, &args);
    }

    /// Opens a slice (dur < 0) or adds a complete one (dur >= 0, kept on
    /// the stack until its end passes so later slices nest in it); None
    /// when the track's stack is [`MAX_DEPTH`] deep or a complete slice
    /// partly overlaps the one it starts in (the slice is dropped, counted
    /// and logged).
    pub fn begin(&mut self, storage: &mut Storage, mut row: SliceRow) -> Option<u32> {
        if row.dur >= 0 {
            self.pop_finished(storage, row.track_id, row.ts);
            if let Some(conflicting) = self.overlapped(storage, &row) {
                Self::log_overlap(storage, &row, conflicting);
                return None;
            }
        }
        self.place(storage, &mut row)?;
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        let open = row.dur < 0;
        let stack = self.stacks.entry(row.track_id).or_default();
        if open {
            stack.open.push(stack.slices.len());
        }
        stack.slices.push(id);
        self.steps += 1;
        storage.slices.push(row);
        Some(id)
    }

    /// Adds a slice of known duration read from a trace (a legacy `X`
    /// event): one with a negative duration is dropped and logged in
    /// `slice_negative_duration`; otherwise as [`SliceTracker::begin`].
    pub fn complete(&mut self, storage: &mut Storage, row: SliceRow) -> Option<u32> {
        if row.dur < 0 {
            let place = LogPlace {
                ts: Some(row.ts),
                byte_offset: None,
            };
            storage.record_import_log_typed("slice_negative_duration", place, &[]);
            return None;
        }
        self.begin(storage, row)
    }

    /// Adds an instant: nested like a slice, never left open; None when
    /// the track's stack is [`MAX_DEPTH`] deep (the instant is dropped).
    pub fn instant(&mut self, storage: &mut Storage, mut row: SliceRow) -> Option<u32> {
        row.dur = 0;
        self.place(storage, &mut row)?;
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        storage.slices.push(row);
        Some(id)
    }

    /// The innermost slice open on a track at `ts`.
    pub fn topmost(&mut self, storage: &Storage, track: u32, ts: i64) -> Option<u32> {
        self.pop_finished(storage, track, ts);
        self.stacks.get(&track)?.slices.last().copied()
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
        // Positions past the stack's top were popped with their slices.
        let (pos, id) = loop {
            let pos = stack.open.pop()?;
            self.steps += 1;
            if let Some(&id) = stack.slices.get(pos) {
                if storage.slices.get(id as usize).is_some_and(|s| s.dur < 0) {
                    break (pos, id);
                }
            }
        };
        self.steps += (stack.slices.len() - pos) as u64;
        stack.slices.truncate(pos);
        let s = storage.slices.get_mut(id as usize)?;
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
        let a = t.begin(&mut st, row(10)).unwrap();
        let b = t.begin(&mut st, row(20)).unwrap();
        assert_eq!(st.slices[b as usize].depth, 1);
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
        assert_eq!(t.end(&mut st, 0, 30, None), Some(b));
        assert_eq!(t.end(&mut st, 0, 40, None), Some(a));
        assert_eq!(st.slices[a as usize].dur, 30);
        assert_eq!(t.end(&mut st, 0, 50, None), None);
        // A complete slice holds later ones until its end.
        let c = t
            .begin(
                &mut st,
                SliceRow {
                    ts: 100,
                    dur: 10,
                    ..SliceRow::default()
                },
            )
            .unwrap();
        let d = t.instant(&mut st, row(105)).unwrap();
        assert_eq!(st.slices[d as usize].parent_id, Some(c));
        let e = t.instant(&mut st, row(110)).unwrap();
        assert_eq!(st.slices[e as usize].depth, 0);
    }

    /// A complete slice whose end lies past `i64::MAX` (a hostile
    /// timestamp and duration) overflowed when a later slice asked whether
    /// it had ended; it now ends at `i64::MAX` and holds what follows.
    #[test]
    fn a_complete_slice_ending_past_the_last_timestamp_does_not_overflow() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let c = t
            .begin(
                &mut st,
                SliceRow {
                    ts: i64::MAX - 10,
                    dur: i64::MAX,
                    ..SliceRow::default()
                },
            )
            .unwrap();
        let d = t
            .instant(
                &mut st,
                SliceRow {
                    ts: i64::MAX - 5,
                    ..SliceRow::default()
                },
            )
            .unwrap();
        assert_eq!(st.slices[d as usize].parent_id, Some(c));
    }

    /// Upstream's cap: slices at depths 0 to 511 are kept, the begin and
    /// the instant that would sit at depth 512 are dropped and counted, and
    /// the stack's ends still close the slices that were kept.
    #[test]
    fn the_stack_stops_at_max_depth_and_counts_what_it_drops() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let open = |ts| SliceRow {
            ts,
            dur: -1,
            ..SliceRow::default()
        };
        for i in 0..MAX_DEPTH as i64 {
            assert!(t.begin(&mut st, open(i)).is_some(), "depth {i}");
        }
        assert_eq!(st.slices.last().unwrap().depth, 511);
        assert_eq!(t.begin(&mut st, open(600)), None);
        assert_eq!(t.instant(&mut st, open(601)), None);
        assert_eq!(st.slices.len(), MAX_DEPTH);
        assert_eq!(st.stats.get("slice_max_depth_exceeded"), 2);
        assert_eq!(t.end(&mut st, 0, 700, None), Some(511));
        // One level freed: the next begin is kept.
        assert!(t.begin(&mut st, open(701)).is_some());
    }

    fn complete(ts: i64, dur: i64) -> SliceRow {
        SliceRow {
            ts,
            dur,
            ..SliceRow::default()
        }
    }

    /// A complete slice starting inside another and ending after it is
    /// dropped, counted and logged with the overlap, as upstream does.
    #[test]
    fn a_partly_overlapping_complete_slice_is_dropped_and_logged() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let a = t.complete(&mut st, complete(0, 10)).unwrap();
        assert_eq!(t.complete(&mut st, complete(5, 10)), None);
        assert_eq!(st.slices.len(), 1);
        assert_eq!(st.stats.get("slice_drop_overlapping_complete_event"), 1);
        assert_eq!(st.import_logs.len(), 1);
        assert_eq!(st.import_logs[0].ts, Some(5));
        // The stack still holds the first slice: a nested one goes in it.
        let b = t.complete(&mut st, complete(6, 2)).unwrap();
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
    }

    /// A negative duration is dropped and counted, and leaves the stack
    /// alone (it is not taken for an open slice).
    #[test]
    fn a_negative_duration_complete_slice_is_dropped_and_counted() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        assert_eq!(t.complete(&mut st, complete(10, -5)), None);
        assert_eq!(t.complete(&mut st, complete(20, -1)), None);
        assert!(st.slices.is_empty());
        assert_eq!(st.stats.get("slice_negative_duration"), 2);
        assert_eq!(t.end(&mut st, 0, 30, None), None);
    }

    /// Nested complete slices (one ending with its parent too), one that
    /// starts as its parent ends, and one inside an open slice are kept.
    #[test]
    fn nested_and_following_complete_slices_are_kept() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let a = t.complete(&mut st, complete(0, 10)).unwrap();
        let b = t.complete(&mut st, complete(2, 8)).unwrap();
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
        let c = t.complete(&mut st, complete(10, 20)).unwrap();
        assert_eq!(st.slices[c as usize].depth, 0);
        let open = t.begin(&mut st, complete(40, -1)).unwrap();
        let d = t.complete(&mut st, complete(45, 100)).unwrap();
        assert_eq!(st.slices[d as usize].parent_id, Some(open));
        assert_eq!(st.stats.get("slice_drop_overlapping_complete_event"), 0);
        assert_eq!(st.slices.len(), 5);
    }

    /// An end with nothing open under many complete slices looks at one
    /// entry, not at every complete slice of the stack (the quadratic
    /// load of a crafted trace: N nested complete slices, N ends).
    #[test]
    fn an_end_does_not_walk_the_complete_slices_of_the_stack() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        for i in 0..MAX_DEPTH as i64 {
            t.begin(
                &mut st,
                SliceRow {
                    ts: i,
                    // Each inside the last (one that outlasted it would
                    // be dropped).
                    dur: 1_000_000 - 2 * i,
                    ..SliceRow::default()
                },
            )
            .unwrap();
        }
        let before = t.steps();
        for i in 0..1000 {
            assert_eq!(t.end(&mut st, 0, 1000 + i, None), None);
        }
        let per_end = (t.steps() - before) / 1000;
        assert!(per_end <= 2, "{per_end} steps per end");
    }
}
