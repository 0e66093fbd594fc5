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

use crate::storage::Storage;
use crate::storage::args::ArgSetBuilder;
use crate::storage::rows::SliceRow;
use crate::storage::strings::StrId;
use crate::tracker::slices::MAX_DEPTH;

/// A slice on a stack and the args it gathers.
#[derive(Debug)]
struct Entry {
    id: u32,
    args: ArgSetBuilder,
}

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
}

fn end_of(s: &SliceRow) -> i64 {
    s.ts.saturating_add(s.dur)
}

impl JsonSlices {
    fn pop(storage: &mut Storage, stack: &mut Vec<Entry>) {
        if let Some(e) = stack.pop() {
            if let Some(set) = storage.args.add_set(&e.args) {
                if let Some(s) = storage.slices.get_mut(e.id as usize) {
                    s.arg_set_id = Some(set);
                }
            }
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
        let mut incomplete_below = false;
        let mut i = stack.len();
        while i > 0 {
            i -= 1;
            self.steps += 1;
            let Some(e) = stack.get(i) else { break };
            let Some(s) = storage.slices.get(e.id as usize) else {
                break;
            };
            let (start, sdur, end) = (s.ts, s.dur, end_of(s));
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
                    if let Some(top) = stack.last() {
                        if let Some(c) = storage.slices.get_mut(top.id as usize) {
                            c.dur = end.saturating_sub(c.ts);
                        }
                    }
                    Self::pop(storage, stack);
                }
                Self::pop(storage, stack);
                incomplete_below = false;
                continue;
            }
            let ends_before = end < ts;
            let same_end_drops = end == ts && !(sdur == 0 && dur == 0);
            if ends_before || same_end_drops {
                Self::pop(storage, stack);
                continue;
            }
            if dur == -1 {
                continue;
            }
            if ts < end && ts.saturating_add(dur) > end {
                let _ = start;
                return Err(Overlap { conflicting: e.id });
            }
        }
        Ok(())
    }

    /// Starts a slice of `dur` (-1: open until its end event); its id, None
    /// when the stack is too deep (counted), or the overlap that keeps a
    /// complete slice from nesting (nothing added).
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &mut self,
        storage: &mut Storage,
        track: u32,
        ts: i64,
        dur: i64,
        cat: StrId,
        name: StrId,
        args: ArgSetBuilder,
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
        let id = u32::try_from(storage.slices.len()).unwrap_or(u32::MAX);
        storage.slices.push(SliceRow {
            ts,
            dur,
            track_id: track,
            category: cat,
            name,
            depth: u32::try_from(stack.len()).unwrap_or(u32::MAX),
            parent_id: stack.last().map(|e| e.id),
            ..SliceRow::default()
        });
        stack.push(Entry { id, args });
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
            let Some(s) = storage.slices.get(e.id as usize) else {
                continue;
            };
            if s.dur != -1 {
                continue;
            }
            if !cat.is_null() && (s.category.is_null() || s.category != cat) {
                continue;
            }
            if !name.is_null() && !s.name.is_null() && s.name != name {
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
        if let Some(s) = storage.slices.get_mut(id as usize) {
            s.dur = ts.saturating_sub(s.ts);
        }
        if i + 1 == stack.len() {
            Self::pop(storage, stack);
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
                    Self::pop(storage, &mut stack);
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
        let a = s.begin(&mut st, 0, 10, 0, n, n, none()).unwrap().unwrap();
        let b = s.begin(&mut st, 0, 10, 0, n, n, none()).unwrap().unwrap();
        assert_eq!(st.slices[b as usize].parent_id, Some(a));
        let c = s.begin(&mut st, 0, 10, 5, n, n, none()).unwrap().unwrap();
        assert_eq!(st.slices[c as usize].depth, 0);
        let d = s.begin(&mut st, 0, 15, 5, n, n, none()).unwrap().unwrap();
        assert_eq!(st.slices[d as usize].depth, 0);
    }

    #[test]
    fn a_partial_overlap_is_reported_and_an_end_matches_by_name() {
        let mut st = Storage::default();
        let mut s = JsonSlices::default();
        let n = StrId::NULL;
        let a = s.begin(&mut st, 0, 0, 10, n, n, none()).unwrap().unwrap();
        assert_eq!(
            s.begin(&mut st, 0, 5, 10, n, n, none()),
            Err(Overlap { conflicting: a })
        );
        let x = st.strings.intern("x");
        let y = st.strings.intern("y");
        let open = s.begin(&mut st, 1, 0, -1, n, x, none()).unwrap().unwrap();
        assert_eq!(s.end(&mut st, 1, 5, n, y, &none()), None);
        assert_eq!(s.end(&mut st, 1, 5, n, x, &none()), Some(open));
        assert_eq!(st.slices[open as usize].dur, 5);
    }
}
