//! Finding the intervals of a list sorted by start that overlap a span,
//! with upstream's rules for instants: an instant (zero duration) overlaps
//! an interval that holds it (its start counted, its end not) and an
//! instant at the same time; the overlap's span is the instant. A segment
//! tree of the largest end over the list's indexes skips every run of
//! intervals that end before the span, so a query costs its overlaps
//! times the tree's depth, however the list's intervals nest or overlap.

use super::set::Interval;

/// The intervals of one list, sorted by start, ready for queries.
pub(crate) struct Finder<'a> {
    intervals: &'a [Interval],
    /// Node `n`'s largest end over its range of indexes; the root is 1,
    /// node `n`'s children `2n` and `2n + 1`, the leaves from `leaves` on.
    max_end: Vec<i64>,
    /// How many leaves (a power of two, at least the list's length).
    leaves: usize,
}

impl<'a> Finder<'a> {
    /// The finder of `intervals`, which are sorted by start.
    pub(crate) fn new(intervals: &'a [Interval]) -> Self {
        let leaves = intervals.len().next_power_of_two().max(1);
        let mut max_end = vec![i64::MIN; 2 * leaves];
        for (slot, iv) in max_end.iter_mut().skip(leaves).zip(intervals) {
            *slot = iv.end;
        }
        for n in (1..leaves).rev() {
            let left = max_end.get(2 * n).copied().unwrap_or(i64::MIN);
            let right = max_end.get(2 * n + 1).copied().unwrap_or(i64::MIN);
            if let Some(slot) = max_end.get_mut(n) {
                *slot = left.max(right);
            }
        }
        Finder {
            intervals,
            max_end,
            leaves,
        }
    }

    /// Calls `found(interval, start, end)` for each interval overlapping
    /// `[s, e)` (an instant when `s == e`), with the overlap's span, in
    /// the order of the list.
    pub(crate) fn overlaps(&self, s: i64, e: i64, mut found: impl FnMut(&Interval, i64, i64)) {
        // Only intervals starting by `e` can overlap.
        let candidates = self.intervals.partition_point(|iv| iv.start <= e);
        let instant = s == e;
        // (node, first index of its range, one past its last).
        let mut stack = vec![(1usize, 0usize, self.leaves)];
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= candidates || self.max_end.get(node).is_none_or(|&m| m < s) {
                continue;
            }
            if node < self.leaves {
                let mid = lo + (hi - lo) / 2;
                stack.push((2 * node + 1, mid, hi));
                stack.push((2 * node, lo, mid));
                continue;
            }
            let Some(iv) = self.intervals.get(lo) else {
                continue;
            };
            let iv_instant = iv.start == iv.end;
            let hit = match (instant, iv_instant) {
                (true, true) => s == iv.start,
                (true, false) => iv.start <= s && s < iv.end,
                (false, true) => s <= iv.start && iv.start < e,
                (false, false) => e > iv.start && s < iv.end,
            };
            if !hit {
                continue;
            }
            let (start, end) = if instant {
                (s, s)
            } else if iv_instant {
                (iv.start, iv.start)
            } else {
                (s.max(iv.start), e.min(iv.end))
            };
            found(iv, start, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every overlap of `[s, e)` by looking at each interval.
    fn by_hand(list: &[Interval], s: i64, e: i64) -> Vec<(i64, i64, i64)> {
        let mut out = Vec::new();
        for iv in list {
            let (i, j) = (s == e, iv.start == iv.end);
            let hit = match (i, j) {
                (true, true) => s == iv.start,
                (true, false) => iv.start <= s && s < iv.end,
                (false, true) => s <= iv.start && iv.start < e,
                (false, false) => s < iv.end && iv.start < e,
            };
            if hit {
                let span = if i {
                    (s, s)
                } else if j {
                    (iv.start, iv.start)
                } else {
                    (s.max(iv.start), e.min(iv.end))
                };
                out.push((iv.id, span.0, span.1));
            }
        }
        out
    }

    #[test]
    fn the_tree_finds_what_a_scan_of_every_interval_finds() {
        // Nested, overlapping and instant intervals, from a fixed LCG;
        // one long interval first, which a running maximum of the ends
        // could not skip past.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            i64::try_from((x >> 33) % m).unwrap_or(0)
        };
        let mut list = vec![Interval {
            id: 0,
            start: 0,
            end: 10_000,
        }];
        for id in 1..300 {
            let start = next(1000);
            let dur = if next(4) == 0 { 0 } else { next(50) };
            list.push(Interval {
                id,
                start,
                end: start + dur,
            });
        }
        list.sort_by_key(|iv| (iv.start, iv.end, iv.id));
        let finder = Finder::new(&list);
        for _ in 0..500 {
            let s = next(1100);
            let e = s + if next(3) == 0 { 0 } else { next(80) };
            let mut got = Vec::new();
            finder.overlaps(s, e, |iv, a, b| got.push((iv.id, a, b)));
            assert_eq!(got, by_hand(&list, s, e), "[{s}, {e})");
        }
        let empty = Finder::new(&[]);
        empty.overlaps(0, 10, |_, _, _| panic!("nothing to find"));
    }
}
