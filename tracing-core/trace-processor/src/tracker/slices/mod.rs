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

use crate::column_store::strings::StrId;
use crate::hash::HashMap;

use super::slice_args::{PendingArgs, PendingPool};
use crate::storage::Storage;
use crate::storage::args::ArgValue;
use crate::storage::import_logs::LogPlace;
use crate::storage::rows::SliceRow;

/// Deepest a track's slice stack goes, as upstream's slice tracker caps
/// it: a slice that would sit at this depth is dropped.
pub const MAX_DEPTH: usize = 512;

/// Which open slice an end closes, as upstream's slice tracker matches
/// them: the innermost open one whose category is the end's (when the end
/// names one) and whose name, when both have one, is the end's. The
/// default (no category, no name) closes the innermost open slice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndKey {
    /// The end's category (NULL: any).
    pub category: StrId,
    /// The end's name (NULL: any).
    pub name: StrId,
}

impl EndKey {
    /// Whether the open slice `s` is one this end may close.
    fn matches(&self, s: &SliceRow) -> bool {
        (self.category.is_null() || s.category == self.category)
            && (self.name.is_null() || s.name.is_null() || s.name == self.name)
    }
}

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

    /// The position of the open slice an end with `key` closes: the
    /// innermost open one it matches (`steps` counts the entries looked at).
    /// Innermost entries whose slice an importer completed meanwhile are
    /// no longer open and are dropped from `open` first.
    fn closing(&mut self, storage: &Storage, key: EndKey, steps: &mut u64) -> Option<usize> {
        while let Some(&pos) = self.open.last() {
            let id = self.slices.get(pos).copied();
            if id
                .and_then(|id| storage.slices.get(id as usize))
                .is_some_and(|s| s.dur < 0)
            {
                break;
            }
            *steps += 1;
            self.open.pop();
        }
        self.open.iter().rev().copied().find(|&pos| {
            *steps += 1;
            self.slices
                .get(pos)
                .and_then(|&id| storage.slices.get(id as usize))
                .is_some_and(|s| s.dur < 0 && key.matches(s))
        })
    }

    /// Marks the slice at `pos`, now ended at `end`, complete while it
    /// stays on the stack under the entries above it (they leave first).
    fn ended_below_top(&mut self, pos: usize, end: i64) {
        self.open.retain(|&p| p != pos);
        for m in self.min_end.iter_mut().skip(pos) {
            *m = (*m).min(end);
        }
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
        row.parent_id = stack.slices.last().copied().into();
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
        key: EndKey,
    ) -> Option<Box<PendingArgs>> {
        // A duration not known yet never conflicts.
        let _ = self.close(storage, track, ts, -1);
        let stack = self.stacks.get_mut(&track)?;
        let pos = stack.closing(storage, key, &mut self.steps)?;
        if let Some(p) = stack.args.get_mut(pos).and_then(Option::take) {
            return Some(p);
        }
        let mut p = self.pool.take();
        let stored = stack
            .slices
            .get(pos)
            .and_then(|&id| storage.slices.get(id as usize))
            .and_then(|s| s.arg_set_id.get());
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
        key: EndKey,
    ) -> Option<u32> {
        self.end_inner(storage, track, ts, thread_ts, Some(args), key)
    }

    /// As [`SliceTracker::end`], closing the innermost open slice `key`
    /// matches (an end that names a category skips open slices of
    /// another): None when none does.
    pub fn end_matching(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
        key: EndKey,
    ) -> Option<u32> {
        self.end_inner(storage, track, ts, thread_ts, None, key)
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
        self.end_inner(storage, track, ts, thread_ts, None, EndKey::default())
    }

    /// [`SliceTracker::end`]'s body: `args`, when given, replace the
    /// closed slice's open args before it leaves the stack. A slice closed
    /// under entries still on the stack stays there, complete, until they
    /// and it are over, as upstream pops only the top of a stack.
    fn end_inner(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        thread_ts: Option<i64>,
        args: Option<Box<PendingArgs>>,
        key: EndKey,
    ) -> Option<u32> {
        // A duration not known yet never conflicts.
        let _ = self.close(storage, track, ts, -1);
        let Some(stack) = self.stacks.get_mut(&track) else {
            self.give_back(args);
            return None;
        };
        let Some((pos, id)) = stack
            .closing(storage, key, &mut self.steps)
            .and_then(|pos| Some((pos, *stack.slices.get(pos)?)))
        else {
            self.give_back(args);
            return None;
        };
        self.steps += (stack.slices.len() - pos) as u64;
        if let Some(p) = args {
            if let Some(slot) = stack.args.get_mut(pos) {
                if let Some(old) = slot.replace(p) {
                    self.pool.give(old);
                }
            }
        }
        let mut end = ts;
        if let Some(s) = storage.slices.get_mut(id as usize) {
            s.dur = ts.saturating_sub(s.ts).max(0);
            end = s.ts.saturating_add(s.dur);
        }
        if let Some(thread_end) = thread_ts {
            if let Some(start) = storage.slice_threads.get(id).ts {
                storage
                    .slice_threads
                    .update(id, |t| t.dur = Some(thread_end.saturating_sub(start)));
            }
        }
        if pos + 1 == stack.slices.len() {
            stack.truncate(pos, storage, &mut self.pool);
        } else {
            stack.ended_below_top(pos, end);
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests;
