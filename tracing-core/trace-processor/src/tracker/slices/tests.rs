//! The slice tracker's tests: nesting, ends, upstream's rules for complete
//! slices and instants, the depth cap, and args kept open on the stack.

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
    let mut end_args = t.args_for_end(&mut st, 0, 3, EndKey::default()).unwrap();
    end_args.args.add(b, b, ArgValue::Int(20));
    end_args.args.add(c, c, ArgValue::Int(30));
    assert_eq!(
        t.end_with_args(&mut st, 0, 3, None, end_args, EndKey::default()),
        Some(outer)
    );
    let set = st.slices[outer as usize].arg_set_id.get().unwrap();
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
    assert!(t.args_for_end(&mut st, 0, 4, EndKey::default()).is_none());
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

#[test]
fn an_end_with_a_category_closes_the_innermost_open_slice_of_it() {
    let mut st = Storage::default();
    let cat = st.strings.intern("cat");
    let mut t = SliceTracker::default();
    let open = |ts, category| SliceRow {
        ts,
        dur: -1,
        category,
        ..SliceRow::default()
    };
    // A TrackEvent slice of "cat", and a slice with no category inside it.
    let outer = t.begin(&mut st, open(20, cat)).unwrap();
    let inner = t.begin(&mut st, open(21, StrId::NULL)).unwrap();
    let key = EndKey {
        category: cat,
        name: StrId::NULL,
    };
    // The end of "cat" skips the inner slice and closes the outer one,
    // which stays on the stack under the inner.
    assert_eq!(t.end_matching(&mut st, 0, 28, None, key), Some(outer));
    assert_eq!(st.slices[outer as usize].dur, 8);
    assert_eq!(st.slices[inner as usize].dur, -1);
    // The inner one's end comes after its parent's: it is cut to the
    // parent's end and counted, and nothing is left to close.
    assert_eq!(t.end(&mut st, 0, 29, None), None);
    assert_eq!(st.slices[inner as usize].dur, 7);
    assert_eq!(st.stats.get("misplaced_end_event"), 1);
    // An end whose category no open slice has closes nothing.
    let other = t.begin(&mut st, open(30, StrId::NULL)).unwrap();
    assert_eq!(t.end_matching(&mut st, 0, 31, None, key), None);
    assert_eq!(t.end(&mut st, 0, 32, None), Some(other));
}

#[test]
fn an_end_with_a_name_skips_open_slices_named_otherwise() {
    let mut st = Storage::default();
    let (a, b) = (st.strings.intern("a"), st.strings.intern("b"));
    let mut t = SliceTracker::default();
    let open = |ts, name| SliceRow {
        ts,
        dur: -1,
        name,
        ..SliceRow::default()
    };
    let sa = t.begin(&mut st, open(10, a)).unwrap();
    let sb = t.begin(&mut st, open(11, b)).unwrap();
    let key = |name| EndKey {
        category: StrId::NULL,
        name,
    };
    assert_eq!(t.end_matching(&mut st, 0, 12, None, key(a)), Some(sa));
    // The closed outer slice stays until the inner one leaves.
    assert_eq!(t.end_matching(&mut st, 0, 12, None, key(b)), Some(sb));
    assert_eq!(st.slices[sb as usize].dur, 1);
    assert_eq!(st.slices[sa as usize].dur, 2);
}
