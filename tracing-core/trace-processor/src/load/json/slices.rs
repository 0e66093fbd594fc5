//! The slice stacks of a JSON trace, with Perfetto's rules for events
//! that do not nest cleanly: a slice that ended before a new one begins
//! leaves the stack (one that ends at the same time too, unless both are
//! instants), a complete event that starts inside another and ends after
//! it is reported as overlapping (the importer moves it to an overflow
//! track), an end closes the innermost open slice of its name and
//! category, open slices under a complete one that has ended are cut at
//! its end (`misplaced_end_event`). A slice's args are gathered while it is
//! on the stack (its end event adds to them) and stored when it leaves.

use crate::hash::HashMap;

use crate::column_store::strings::StrId;
use crate::storage::Storage;
use crate::storage::args::ArgSetBuilder;
use crate::storage::rows::SliceRow;
use crate::tracker::slices::MAX_DEPTH;

/// A slice on a stack and the args it gathers, with the fields of its row
/// the stack rules read (kept here so that walking a stack does not read
/// the slice table's rows).
#[derive(Debug)]
struct Entry {
    id: u32,
    ts: i64,
    /// -1 while open.
    dur: i64,
    cat: StrId,
    name: StrId,
    args: ArgSetBuilder,
}

impl Entry {
    fn end(&self) -> i64 {
        self.ts.saturating_add(self.dur)
    }
}

/// Emptied arg builders kept for reuse (their memory with them).
const MAX_SPARE_BUILDERS: usize = 64;

/// A complete event that starts inside an earlier slice and ends after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// The slice it overlaps.
    pub conflicting: u32,
}

/// The stacks, per track.
#[derive(Debug, Default)]
pub struct JsonSlices {
    stacks: HashMap<u32, Vec<Entry>>,
    /// Tracks in the order their stacks were made (flushed in that order).
    order: Vec<u32>,
    /// Stack entries looked at (the load's work).
    pub steps: u64,
    /// Arg builders of slices that left their stacks, emptied.
    spare: Vec<ArgSetBuilder>,
}

impl JsonSlices {
    /// An empty arg builder (one of a slice that left its stack, so that
    /// an event's args cost no allocation).
    pub fn builder(&mut self) -> ArgSetBuilder {
        self.spare.pop().unwrap_or_default()
    }

    /// Gives back a builder [`JsonSlices::builder`] gave.
    pub fn recycle(&mut self, mut b: ArgSetBuilder) {
        if self.spare.len() < MAX_SPARE_BUILDERS {
            b.clear();
            self.spare.push(b);
        }
    }

    fn pop(storage: &mut Storage, spare: &mut Vec<ArgSetBuilder>, stack: &mut Vec<Entry>) {
        if let Some(mut e) = stack.pop() {
            if let Some(set) = storage.args.add_set(&e.args) {
                if let Some(s) = storage.slices.get_mut(e.id as usize) {
                    s.arg_set_id = Some(set).into();
                }
            }
            if spare.len() < MAX_SPARE_BUILDERS {
                e.args.clear();
                spare.push(e.args);
            }
        }
    }

    /// Sets the duration of a slice on a stack, in its row and its entry.
    fn set_dur(storage: &mut Storage, e: &mut Entry, dur: i64) {
        e.dur = dur;
        if let Some(s) = storage.slices.get_mut(e.id as usize) {
            s.dur = dur;
        }
    }

    /// Pops what ended before `ts` (upstream's closing of the stack before
    /// a new slice of `dur`, -1 for one still open); the overlap when a
    /// complete slice cannot nest.
    fn close(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        dur: i64,
    ) -> Result<(), Overlap> {
        let Some(stack) = self.stacks.get_mut(&track) else {
            return Ok(());
        };
        let spare = &mut self.spare;
        let mut incomplete_below = false;
        let mut i = stack.len();
        while i > 0 {
            i -= 1;
            self.steps += 1;
            let Some(e) = stack.get(i) else { break };
            let (sdur, end) = (e.dur, e.end());
            if sdur == -1 {
                incomplete_below = true;
                continue;
            }
            if incomplete_below {
                if ts <= end {
                    continue;
                }
                storage.stats.incr("misplaced_end_event");
                while stack.len() > i + 1 {
                    if let Some(top) = stack.last_mut() {
                        let cut = end.saturating_sub(top.ts);
                        Self::set_dur(storage, top, cut);
                    }
                    Self::pop(storage, spare, stack);
                }
                Self::pop(storage, spare, stack);
                incomplete_below = false;
                continue;
            }
            let ends_before = end < ts;
            let same_end_drops = end == ts && !(sdur == 0 && dur == 0);
            if ends_before || same_end_drops {
                Self::pop(storage, spare, stack);
                continue;
            }
            if dur == -1 {
                continue;
            }
            if ts < end && ts.saturating_add(dur) > end {
                return Err(Overlap { conflicting: e.id });
            }
        }
        Ok(())
    }

    /// Starts a slice of `dur` (-1: open until its end event) with the
    /// args in `args` (taken, an empty builder left); its id, None when the
    /// stack is too deep (counted), or the overlap that keeps a complete
    /// slice from nesting (nothing added, `args` left as they were).
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        dur: i64,
        cat: StrId,
        name: StrId,
        args: &mut ArgSetBuilder,
    ) -> Result<Option<u32>, Overlap> {
        self.close(storage, track, ts, dur)?;
        if !self.stacks.contains_key(&track) {
            self.order.push(track);
        }
        let stack = self.stacks.entry(track).or_default();
        if stack.len() >= MAX_DEPTH {
            storage.stats.incr("slice_max_depth_exceeded");
            return Ok(None);
        }
        let args = std::mem::take(args);
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        storage.slices.push(SliceRow {
            ts,
            dur,
            track_id: track,
            category: cat,
            name,
            depth: u32::try_from(stack.len()).unwrap_or(u32::MAX),
            parent_id: stack.last().map(|e| e.id).into(),
            ..SliceRow::default()
        });
        stack.push(Entry {
            id,
            ts,
            dur,
            cat,
            name,
            args,
        });
        self.steps += 1;
        Ok(Some(id))
    }

    /// Ends the innermost open slice of this category and name (a NULL one
    /// matches any) at `ts`, adding `args` to its own; its id.
    pub fn end(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        cat: StrId,
        name: StrId,
        args: &ArgSetBuilder,
    ) -> Option<u32> {
        if !self.stacks.contains_key(&track) {
            return None;
        }
        let _ = self.close(storage, track, ts, -1);
        let stack = self.stacks.get_mut(&track)?;
        let mut found = None;
        for (i, e) in stack.iter().enumerate().rev() {
            self.steps += 1;
            if e.dur != -1 {
                continue;
            }
            if !cat.is_null() && (e.cat.is_null() || e.cat != cat) {
                continue;
            }
            if !name.is_null() && !e.name.is_null() && e.name != name {
                continue;
            }
            found = Some(i);
            break;
        }
        let i = found?;
        let e = stack.get_mut(i)?;
        let id = e.id;
        for a in args.args() {
            e.args.add(a.flat_key, a.key, a.value);
        }
        let dur = ts.saturating_sub(e.ts);
        Self::set_dur(storage, e, dur);
        if i + 1 == stack.len() {
            Self::pop(storage, &mut self.spare, stack);
        }
        Some(id)
    }

    /// The innermost slice on a track's stack.
    pub fn topmost(&self, track: u32) -> Option<u32> {
        self.stacks.get(&track)?.last().map(|e| e.id)
    }

    /// Stores the args of the slices still on the stacks (the end of the
    /// trace); open slices stay open.
    pub fn flush(&mut self, storage: &mut Storage) {
        for track in std::mem::take(&mut self.order) {
            if let Some(mut stack) = self.stacks.remove(&track) {
                while !stack.is_empty() {
                    Self::pop(storage, &mut self.spare, &mut stack);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> ArgSetBuilder {
        ArgSetBuilder::default()
    }

    #[test]
    fn instants_at_one_time_nest_and_slices_ending_there_leave() {
        let mut st = Storage::default();
        let mut s = JsonSlices::default();
        let n = StrId::NULL;
        let a = s
            .begin(&mut st, 0, 10, 0, n, n, &mut none())
            .unwrap()
            .unwrap();
        let b = s
            .begin(&mut st, 0, 10, 0, n, n, &mut none())
            .unwrap()
            .unwrap();
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
        let c = s
            .begin(&mut st, 0, 10, 5, n, n, &mut none())
            .unwrap()
            .unwrap();
        assert_eq!(st.slices[c as usize].depth, 0);
        let d = s
            .begin(&mut st, 0, 15, 5, n, n, &mut none())
            .unwrap()
            .unwrap();
        assert_eq!(st.slices[d as usize].depth, 0);
    }

    #[test]
    fn a_partial_overlap_is_reported_and_an_end_matches_by_name() {
        let mut st = Storage::default();
        let mut s = JsonSlices::default();
        let n = StrId::NULL;
        let a = s
            .begin(&mut st, 0, 0, 10, n, n, &mut none())
            .unwrap()
            .unwrap();
        assert_eq!(
            s.begin(&mut st, 0, 5, 10, n, n, &mut none()),
            Err(Overlap { conflicting: a })
        );
        let x = st.strings.intern("x");
        let y = st.strings.intern("y");
        let open = s
            .begin(&mut st, 1, 0, -1, n, x, &mut none())
            .unwrap()
            .unwrap();
        assert_eq!(s.end(&mut st, 1, 5, n, y, &none()), None);
        assert_eq!(s.end(&mut st, 1, 5, n, x, &none()), Some(open));
        assert_eq!(st.slices[open as usize].dur, 5);
    }
}
