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
//!
//! Before every begin and end the stack is brought to the event's time as
//! upstream does: complete slices that are over are popped (a slice covers
//! its start but not its end, except that instants at one time nest in
//! each other); and a complete slice under an open one that ended before
//! the event cuts the open slices above it to its end, pops them and
//! itself, and counts `misplaced_end_event` (a child cannot outlast its
//! parent). Whether such a slice exists is one look, each stack entry
//! keeping the earliest end at or below it.

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
    /// Per entry of `slices`: the earliest end among the complete slices
    /// at or below it (`i64::MAX` when none), so an event finds out in one
    /// look whether a complete slice under an open one has ended.
    min_end: Vec<i64>,
}

impl Stack {
    /// Pushes slice `id` (the row it was made from).
    fn push(&mut self, id: u32, row: &SliceRow) {
        let end = if row.dur >= 0 {
            row.ts.saturating_add(row.dur)
        } else {
            i64::MAX
        };
        let below = self.min_end.last().copied().unwrap_or(i64::MAX);
        if row.dur < 0 {
            self.open.push(self.slices.len());
        }
        self.slices.push(id);
        self.min_end.push(end.min(below));
    }

    /// Pops every entry from position `len` up.
    fn truncate(&mut self, len: usize) {
        self.slices.truncate(len);
        self.min_end.truncate(len);
        while self.open.last().is_some_and(|&p| p >= len) {
            self.open.pop();
        }
    }
}

/// Whether the complete slice `s` is over for an event at `ts` of
/// duration `new_dur` (negative: not known yet). A slice covers its start
/// but not its end, so one ending at `ts` is over, except that an instant
/// stays for another instant at its time: instants at one time nest.
fn is_over(s: &SliceRow, ts: i64, new_dur: i64) -> bool {
    let end = s.ts.saturating_add(s.dur);
    s.dur >= 0 && (end < ts || (end == ts && !(s.dur == 0 && new_dur == 0)))
}

/// Pops the complete slices over at `ts` from the top of `stack`, down to
/// the first open slice or the first complete one still running. A new
/// complete slice (`new_dur >= 0`) that starts inside that running one
/// and ends after it cannot nest: Err names the slice it overlaps.
fn pop_over(
    stack: &mut Stack,
    storage: &Storage,
    ts: i64,
    new_dur: i64,
    steps: &mut u64,
) -> Result<(), u32> {
    while let Some(&top) = stack.slices.last() {
        *steps += 1;
        let Some(s) = storage.slices.get(top as usize) else {
            break;
        };
        if s.dur < 0 {
            break;
        }
        if is_over(s, ts, new_dur) {
            stack.truncate(stack.slices.len() - 1);
            continue;
        }
        let end = s.ts.saturating_add(s.dur);
        if new_dur >= 0 && ts < end && ts.saturating_add(new_dur) > end {
            return Err(top);
        }
        break;
    }
    Ok(())
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

    /// Brings `track`'s stack to an event at `ts` of duration `new_dur`
    /// (negative: an end, or a begin whose end is not known), as upstream's
    /// slice tracker does before every begin and end: complete slices that
    /// are over are popped; a complete slice under an open one that ended
    /// before `ts` cuts every slice above it to its own end, and they and it
    /// are popped and counted in `misplaced_end_event` (their ends were
    /// misplaced: a slice cannot outlast its parent). Err names the complete
    /// slice a new complete one partly overlaps (nothing after it is done).
    fn close(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        new_dur: i64,
    ) -> Result<(), u32> {
        let Some(stack) = self.stacks.get_mut(&track) else {
            return Ok(());
        };
        loop {
            pop_over(stack, storage, ts, new_dur, &mut self.steps)?;
            let Some(&open) = stack.open.last() else {
                return Ok(());
            };
            if open == 0 || stack.min_end.get(open - 1).is_none_or(|&e| e >= ts) {
                return Ok(());
            }
            // The innermost complete slice under `open` that ended before
            // `ts`; every entry walked is popped below.
            let mut cut = None;
            for pos in (0..open).rev() {
                self.steps += 1;
                let Some(s) = stack
                    .slices
                    .get(pos)
                    .and_then(|&id| storage.slices.get(id as usize))
                else {
                    continue;
                };
                let end = s.ts.saturating_add(s.dur);
                if s.dur >= 0 && end < ts {
                    cut = Some((pos, end));
                    break;
                }
            }
            let Some((pos, end)) = cut else {
                return Ok(());
            };
            storage.stats.incr("misplaced_end_event");
            for &id in stack.slices.get(pos + 1..).unwrap_or_default() {
                self.steps += 1;
                if let Some(s) = storage.slices.get_mut(id as usize) {
                    s.dur = end.saturating_sub(s.ts);
                }
            }
            stack.truncate(pos);
        }
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
        if let Err(conflicting) = self.close(storage, row.track_id, row.ts, row.dur) {
            Self::log_overlap(storage, &row, conflicting);
            return None;
        }
        let stack = self.stacks.entry(row.track_id).or_default();
        if stack.slices.len() >= MAX_DEPTH {
            storage.stats.incr("slice_max_depth_exceeded");
            return None;
        }
        row.depth = u32::try_from(stack.slices.len()).unwrap_or(u32::MAX);
        row.parent_id = stack.slices.last().copied();
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        stack.push(id, &row);
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

    /// Adds an instant: a complete slice of duration 0, nested like one;
    /// another instant at its time nests in it. None when the track's
    /// stack is [`MAX_DEPTH`] deep (the instant is dropped).
    pub fn instant(&mut self, storage: &mut Storage, mut row: SliceRow) -> Option<u32> {
        row.dur = 0;
        self.begin(storage, row)
    }

    /// The innermost slice open on a track at `ts` (complete slices over
    /// by then are popped first).
    pub fn topmost(&mut self, storage: &Storage, track: u32, ts: i64) -> Option<u32> {
        let stack = self.stacks.get_mut(&track)?;
        // A duration not known yet never conflicts.
        let _ = pop_over(stack, storage, ts, -1, &mut self.steps);
        stack.slices.last().copied()
    }

    /// Closes the innermost open slice of a track; its id, or None when
    /// nothing is open (or a complete slice under it ended before `ts`
    /// and cut it there first, counted in `misplaced_end_event`).
    pub fn end(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
    ) -> Option<u32> {
        // A duration not known yet never conflicts.
        let _ = self.close(storage, track, ts, -1);
        let stack = self.stacks.get_mut(&track)?;
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
        stack.truncate(pos);
        let s = storage.slices.get_mut(id as usize)?;
        s.dur = ts.saturating_sub(s.ts).max(0);
        if let (Some(end), Some(start)) = (thread_ts, s.thread_times().ts) {
            s.update_thread_times(|t| t.dur = Some(end.saturating_sub(start)));
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
    /// An open slice that outlasts the complete slice it began in is cut
    /// to that slice's end once a later event passes it: both are popped
    /// (the next slice sits at depth 0) and `misplaced_end_event` counted.
    #[test]
    fn an_open_slice_outlasting_its_complete_parent_is_cut_and_counted() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let a = t.complete(&mut st, complete(0, 10)).unwrap();
        let b = t.begin(&mut st, complete(5, -1)).unwrap();
        let c = t.begin(&mut st, complete(6, -1)).unwrap();
        assert_eq!(st.slices[c as usize].parent_id, Some(b));
        let d = t.begin(&mut st, complete(15, -1)).unwrap();
        assert_eq!(st.slices[b as usize].dur, 5);
        assert_eq!(st.slices[c as usize].dur, 4);
        assert_eq!(st.slices[d as usize].depth, 0);
        assert_eq!(st.slices[d as usize].parent_id, None);
        assert_eq!(st.stats.get("misplaced_end_event"), 1);
        // Only d is left open.
        assert_eq!(t.end(&mut st, 0, 20, None), Some(d));
        assert_eq!(t.end(&mut st, 0, 21, None), None);
        assert_eq!(st.slices[a as usize].dur, 10);
        assert_eq!(st.stats.get("misplaced_end_event"), 1);
    }

    /// An end past the complete parent's end cuts the open slice at the
    /// parent's end and then finds nothing open; an end at the parent's
    /// end (a slice covers its start, not its end) closes it as usual.
    #[test]
    fn an_end_past_the_complete_parent_is_misplaced() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        t.complete(&mut st, complete(0, 10)).unwrap();
        let b = t.begin(&mut st, complete(5, -1)).unwrap();
        assert_eq!(t.end(&mut st, 0, 15, None), None);
        assert_eq!(st.slices[b as usize].dur, 5);
        assert_eq!(st.stats.get("misplaced_end_event"), 1);

        let c = t.complete(&mut st, complete(20, 10)).unwrap();
        let d = t.begin(&mut st, complete(22, -1)).unwrap();
        assert_eq!(t.end(&mut st, 0, 30, None), Some(d));
        assert_eq!(st.slices[d as usize].dur, 8);
        assert_eq!(st.stats.get("misplaced_end_event"), 1);
        // c is over at 30: a slice there is a sibling.
        let e = t.begin(&mut st, complete(30, -1)).unwrap();
        assert_eq!(st.slices[e as usize].depth, 0);
        assert_ne!(st.slices[e as usize].parent_id, Some(c));
    }

    /// A complete slice still running under an open one is left alone;
    /// the innermost complete one that ended cuts only what is above it.
    #[test]
    fn only_the_complete_slice_that_ended_cuts_the_stack() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let outer = t.complete(&mut st, complete(0, 100)).unwrap();
        let open = t.begin(&mut st, complete(1, -1)).unwrap();
        let inner = t.complete(&mut st, complete(2, 8)).unwrap();
        let b = t.begin(&mut st, complete(3, -1)).unwrap();
        assert_eq!(st.slices[b as usize].parent_id, Some(inner));
        let e = t.begin(&mut st, complete(20, -1)).unwrap();
        assert_eq!(st.slices[b as usize].dur, 7);
        assert_eq!(st.slices[open as usize].dur, -1);
        assert_eq!(st.slices[e as usize].parent_id, Some(open));
        assert_eq!(st.slices[e as usize].depth, 2);
        assert_eq!(st.slices[outer as usize].dur, 100);
        assert_eq!(st.stats.get("misplaced_end_event"), 1);
    }

    /// Instants at one time nest in each other, as upstream stacks them;
    /// anything else at that time, or an instant later, pops them.
    #[test]
    fn instants_at_one_time_nest() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let at = |ts| SliceRow {
            ts,
            ..SliceRow::default()
        };
        let i1 = t.instant(&mut st, at(5)).unwrap();
        let i2 = t.instant(&mut st, at(5)).unwrap();
        let i3 = t.complete(&mut st, complete(5, 0)).unwrap();
        assert_eq!(st.slices[i2 as usize].parent_id, Some(i1));
        assert_eq!(st.slices[i2 as usize].depth, 1);
        assert_eq!(st.slices[i3 as usize].parent_id, Some(i2));
        assert_eq!(st.slices[i3 as usize].depth, 2);
        // A slice with a duration at that time is not inside them.
        let s = t.complete(&mut st, complete(5, 3)).unwrap();
        assert_eq!(st.slices[s as usize].depth, 0);
        // Nor is a begin, nor an instant later.
        let i4 = t.instant(&mut st, at(8)).unwrap();
        let i5 = t.instant(&mut st, at(9)).unwrap();
        assert_eq!(st.slices[i4 as usize].depth, 0);
        assert_eq!(st.slices[i5 as usize].depth, 0);
        t.instant(&mut st, at(10)).unwrap();
        let b = t.begin(&mut st, complete(10, -1)).unwrap();
        assert_eq!(st.slices[b as usize].depth, 0);
        // An instant at a slice's end is past it.
        let c = t.complete(&mut st, complete(20, 5)).unwrap();
        let i6 = t.instant(&mut st, at(25)).unwrap();
        assert_eq!(st.slices[i6 as usize].parent_id, Some(b));
        assert_ne!(st.slices[i6 as usize].parent_id, Some(c));
    }
}
