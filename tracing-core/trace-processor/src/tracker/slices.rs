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
//!
//! A slice may carry its args open on the stack (`slice_args.rs`), as
//! upstream keeps them: they are stored when the slice leaves the stack,
//! after its end event added its own; what is still on a stack when the
//! trace ends is stored by [`SliceTracker::flush`].

use crate::hash::HashMap;

use super::slice_args::{PendingArgs, PendingPool};
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
    /// Per entry of `slices`: its args not stored yet, when it has some.
    args: Vec<Option<Box<PendingArgs>>>,
}

impl Stack {
    /// Pushes slice `id` (the row it was made from) with its open args.
    fn push(&mut self, id: u32, row: &SliceRow, args: Option<Box<PendingArgs>>) {
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
        self.args.push(args);
    }

    /// Pops every entry from position `len` up, innermost first, storing
    /// the open args of each as it leaves.
    fn truncate(&mut self, len: usize, storage: &mut Storage, pool: &mut PendingPool) {
        while self.args.len() > len {
            let id = self.slices.get(self.args.len() - 1).copied();
            if let (Some(Some(p)), Some(id)) = (self.args.pop(), id) {
                pool.commit(storage, id, p);
            }
        }
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
    storage: &mut Storage,
    pool: &mut PendingPool,
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
            stack.truncate(stack.slices.len() - 1, storage, pool);
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
    /// Open arg sets kept for reuse.
    pool: PendingPool,
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
        let pool = &mut self.pool;
        loop {
            pop_over(stack, storage, pool, ts, new_dur, &mut self.steps)?;
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
            stack.truncate(pos, storage, pool);
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
    pub fn begin(&mut self, storage: &mut Storage, row: SliceRow) -> Option<u32> {
        self.begin_with_args(storage, row, None)
    }

    /// As [`SliceTracker::begin`], with the slice's args kept open on the
    /// stack (`slice_args.rs`) until it leaves it.
    pub fn begin_with_args(
        &mut self,
        storage: &mut Storage,
        mut row: SliceRow,
        args: Option<Box<PendingArgs>>,
    ) -> Option<u32> {
        if let Err(conflicting) = self.close(storage, row.track_id, row.ts, row.dur) {
            Self::log_overlap(storage, &row, conflicting);
            self.give_back(args);
            return None;
        }
        let stack = self.stacks.entry(row.track_id).or_default();
        if stack.slices.len() >= MAX_DEPTH {
            storage.stats.incr("slice_max_depth_exceeded");
            self.give_back(args);
            return None;
        }
        row.depth = u32::try_from(stack.slices.len()).unwrap_or(u32::MAX);
        row.parent_id = stack.slices.last().copied();
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        stack.push(id, &row, args);
        self.steps += 1;
        storage.slices.push(row);
        Some(id)
    }

    /// An empty open arg set for a slice to come.
    pub fn open_args(&mut self) -> Box<PendingArgs> {
        self.pool.take()
    }

    /// Takes back an open arg set no slice kept.
    fn give_back(&mut self, args: Option<Box<PendingArgs>>) {
        if let Some(p) = args {
            self.pool.give(p);
        }
    }

    /// Adds a slice of known duration read from a trace (a legacy `X`
    /// event): one with a negative duration is dropped and logged in
    /// `slice_negative_duration`; otherwise as [`SliceTracker::begin`].
    pub fn complete(&mut self, storage: &mut Storage, row: SliceRow) -> Option<u32> {
        self.complete_with_args(storage, row, None)
    }

    /// As [`SliceTracker::complete`], with the slice's args kept open on
    /// the stack until it leaves it.
    pub fn complete_with_args(
        &mut self,
        storage: &mut Storage,
        row: SliceRow,
        args: Option<Box<PendingArgs>>,
    ) -> Option<u32> {
        if row.dur < 0 {
            let place = LogPlace {
                ts: Some(row.ts),
                byte_offset: None,
            };
            storage.record_import_log_typed("slice_negative_duration", place, &[]);
            self.give_back(args);
            return None;
        }
        self.begin_with_args(storage, row, args)
    }

    /// Adds an instant: a complete slice of duration 0, nested like one;
    /// another instant at its time nests in it. None when the track's
    /// stack is [`MAX_DEPTH`] deep (the instant is dropped).
    pub fn instant(&mut self, storage: &mut Storage, row: SliceRow) -> Option<u32> {
        self.instant_with_args(storage, row, None)
    }

    /// As [`SliceTracker::instant`], with the instant's args kept open on
    /// the stack until it leaves it.
    pub fn instant_with_args(
        &mut self,
        storage: &mut Storage,
        mut row: SliceRow,
        args: Option<Box<PendingArgs>>,
    ) -> Option<u32> {
        row.dur = 0;
        self.begin_with_args(storage, row, args)
    }

    /// The innermost slice open on a track at `ts` (complete slices over
    /// by then are popped first).
    pub fn topmost(&mut self, storage: &mut Storage, track: u32, ts: i64) -> Option<u32> {
        let stack = self.stacks.get_mut(&track)?;
        // A duration not known yet never conflicts.
        let _ = pop_over(stack, storage, &mut self.pool, ts, -1, &mut self.steps);
        stack.slices.last().copied()
    }

    /// The open args of the slice an end at `ts` on `track` would close
    /// (the stack first brought to `ts`, as [`SliceTracker::end`] does),
    /// taken out so that the end's args join them: an empty set when the
    /// slice kept none (holding the args it stored already, if any), None
    /// when nothing is open. Give them back through
    /// [`SliceTracker::end_with_args`].
    pub fn args_for_end(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
    ) -> Option<Box<PendingArgs>> {
        // A duration not known yet never conflicts.
        let _ = self.close(storage, track, ts, -1);
        let stack = self.stacks.get_mut(&track)?;
        let pos = stack.open.iter().rev().copied().find(|&pos| {
            stack
                .slices
                .get(pos)
                .and_then(|&id| storage.slices.get(id as usize))
                .is_some_and(|s| s.dur < 0)
        })?;
        if let Some(p) = stack.args.get_mut(pos).and_then(Option::take) {
            return Some(p);
        }
        let mut p = self.pool.take();
        let stored = stack
            .slices
            .get(pos)
            .and_then(|&id| storage.slices.get(id as usize))
            .and_then(|s| s.arg_set_id);
        if let Some(set) = stored {
            for a in storage.args.set(set) {
                p.args.add(a.flat_key, a.key, a.value);
            }
        }
        Some(p)
    }

    /// As [`SliceTracker::end`], the slice closed taking `args` as its open
    /// args (those [`SliceTracker::args_for_end`] gave, the end's added),
    /// stored as it leaves the stack.
    pub fn end_with_args(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
        args: Box<PendingArgs>,
    ) -> Option<u32> {
        self.end_inner(storage, track, ts, thread_ts, Some(args))
    }

    /// The open args of slice `id` while it is on its track's stack (made
    /// empty when it has none yet), so that an importer adding an arg to a
    /// slice it just made adds it there; None once the slice left the
    /// stack (its args are stored).
    pub fn open_args_of(&mut self, storage: &Storage, id: u32) -> Option<&mut PendingArgs> {
        let track = storage.slices.get(id as usize)?.track_id;
        let stack = self.stacks.get_mut(&track)?;
        let pos = stack.slices.iter().rposition(|&s| s == id)?;
        let slot = stack.args.get_mut(pos)?;
        if slot.is_none() {
            *slot = Some(self.pool.take());
        }
        slot.as_deref_mut()
    }

    /// Stores the open args of every slice still on a stack, as upstream
    /// does once the trace is read: track by track in id order, each
    /// stack innermost first. The stacks stay as they are.
    pub fn flush(&mut self, storage: &mut Storage) {
        let mut tracks: Vec<u32> = self.stacks.keys().copied().collect();
        tracks.sort_unstable();
        for track in tracks {
            let Some(stack) = self.stacks.get_mut(&track) else {
                continue;
            };
            for pos in (0..stack.args.len()).rev() {
                let id = stack.slices.get(pos).copied();
                if let (Some(p), Some(id)) = (stack.args.get_mut(pos).and_then(Option::take), id) {
                    self.pool.commit(storage, id, p);
                }
            }
        }
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
        self.end_inner(storage, track, ts, thread_ts, None)
    }

    /// [`SliceTracker::end`]'s body: `args`, when given, replace the
    /// closed slice's open args before it leaves the stack.
    fn end_inner(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
        mut args: Option<Box<PendingArgs>>,
    ) -> Option<u32> {
        // A duration not known yet never conflicts.
        let _ = self.close(storage, track, ts, -1);
        let Some(stack) = self.stacks.get_mut(&track) else {
            self.give_back(args);
            return None;
        };
        let (pos, id) = loop {
            let Some(pos) = stack.open.pop() else {
                if let Some(p) = args.take() {
                    self.pool.give(p);
                }
                return None;
            };
            self.steps += 1;
            if let Some(&id) = stack.slices.get(pos) {
                if storage.slices.get(id as usize).is_some_and(|s| s.dur < 0) {
                    break (pos, id);
                }
            }
        };
        self.steps += (stack.slices.len() - pos) as u64;
        if let Some(p) = args {
            if let Some(slot) = stack.args.get_mut(pos) {
                if let Some(old) = slot.replace(p) {
                    self.pool.give(old);
                }
            }
        }
        if let Some(s) = storage.slices.get_mut(id as usize) {
            s.dur = ts.saturating_sub(s.ts).max(0);
            if let (Some(end), Some(start)) = (thread_ts, s.thread_times().ts) {
                s.update_thread_times(|t| t.dur = Some(end.saturating_sub(start)));
            }
        }
        stack.truncate(pos, storage, &mut self.pool);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column_store::strings::StrId;

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

    /// A slice's args stay open on the stack: the end's args join the
    /// begin's (a key given again takes the end's value), the set is
    /// stored once, when the slice leaves the stack, so an inner slice's
    /// set is stored before its parent's; what is left open at the end of
    /// the trace is stored by `flush`.
    #[test]
    fn open_args_are_stored_once_as_the_slice_leaves_the_stack() {
        let mut st = Storage::default();
        let mut t = SliceTracker::default();
        let (a, b, c) = (
            st.strings.intern("a"),
            st.strings.intern("b"),
            st.strings.intern("c"),
        );
        let open = |ts| SliceRow {
            ts,
            dur: -1,
            ..SliceRow::default()
        };
        let mut outer_args = t.open_args();
        outer_args.args.add(a, a, ArgValue::Int(1));
        outer_args.args.add(b, b, ArgValue::Int(2));
        let outer = t
            .begin_with_args(&mut st, open(0), Some(outer_args))
            .unwrap();
        let mut inner_args = t.open_args();
        inner_args.args.add(c, c, ArgValue::Int(3));
        let inner = t
            .begin_with_args(&mut st, open(1), Some(inner_args))
            .unwrap();
        assert_eq!(st.slices[outer as usize].arg_set_id, None);
        assert!(st.args.is_empty());
        assert_eq!(t.end(&mut st, 0, 2, None), Some(inner));
        assert_eq!(st.slices[inner as usize].arg_set_id, Some(0));
        let mut end_args = t.args_for_end(&mut st, 0, 3).unwrap();
        end_args.args.add(b, b, ArgValue::Int(20));
        end_args.args.add(c, c, ArgValue::Int(30));
        assert_eq!(t.end_with_args(&mut st, 0, 3, None, end_args), Some(outer));
        let set = st.slices[outer as usize].arg_set_id.unwrap();
        assert_eq!(set, 1);
        let got: Vec<(StrId, ArgValue)> = st.args.set(set).map(|x| (x.key, x.value)).collect();
        assert_eq!(
            got,
            [
                (a, ArgValue::Int(1)),
                (b, ArgValue::Int(20)),
                (c, ArgValue::Int(30))
            ]
        );
        assert_eq!(st.args.len(), 4);
        // Nothing open: the end's args are not taken.
        assert!(t.args_for_end(&mut st, 0, 4).is_none());
        // An instant's args wait for the next event on its track; a slice
        // never ended has its args stored by `flush`.
        let mut i_args = t.open_args();
        i_args.args.add(a, a, ArgValue::Int(7));
        let i = t.instant_with_args(&mut st, open(5), Some(i_args)).unwrap();
        assert_eq!(st.slices[i as usize].arg_set_id, None);
        let mut l_args = t.open_args();
        l_args.args.add(a, a, ArgValue::Int(8));
        let left = t.begin_with_args(&mut st, open(6), Some(l_args)).unwrap();
        assert!(st.slices[i as usize].arg_set_id.is_some());
        assert_eq!(st.slices[left as usize].arg_set_id, None);
        t.flush(&mut st);
        assert!(st.slices[left as usize].arg_set_id.is_some());
    }
}
