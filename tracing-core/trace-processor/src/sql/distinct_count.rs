//! How many distinct values a column holds, for the columnar virtual
//! table's estimate of an equality (the rows over the distinct values):
//! the runs of a value order already built, or, without one, a count
//! that sorts nothing and keeps nothing (a bit per value when the values
//! span little, else a set).

/// How many distinct keys rows `0..len` hold (a NULL key, None, counts
/// none): a bit per value when they span little (ids, string ids, small
/// numbers), else a set.
pub(super) fn count_distinct(len: usize, key: impl Fn(usize) -> Option<i64>) -> usize {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for r in 0..len {
        if let Some(k) = key(r) {
            lo = lo.min(k);
            hi = hi.max(k);
        }
    }
    if lo > hi {
        return 0;
    }
    let span = hi.abs_diff(lo);
    if span < (len as u64).saturating_mul(8).max(1 << 16) {
        let mut seen = vec![0u64; usize::try_from(span / 64 + 1).unwrap_or(0)];
        let mut n = 0;
        for r in 0..len {
            let Some(k) = key(r) else { continue };
            let at = k.abs_diff(lo);
            if let Some(word) = seen.get_mut(usize::try_from(at / 64).unwrap_or(usize::MAX)) {
                let bit = 1u64 << (at % 64);
                n += usize::from(*word & bit == 0);
                *word |= bit;
            }
        }
        return n;
    }
    let mut seen = crate::hash::HashSet::default();
    for r in 0..len {
        if let Some(k) = key(r) {
            seen.insert(k);
        }
    }
    seen.len()
}

/// The runs of equal keys along `order` (a NULL key, None, counts none).
pub(super) fn count_runs(order: &[u32], key: impl Fn(usize) -> Option<i64>) -> usize {
    let mut last = None;
    let mut n = 0;
    for &r in order {
        let k = key(r as usize);
        if k.is_some() && k != last {
            n += 1;
        }
        last = k;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::{count_distinct, count_runs};

    #[test]
    fn both_counts_agree_and_skip_nulls() {
        for (vals, want) in [
            (vec![Some(3), None, Some(3), Some(-1), Some(7)], 3),
            (vec![None, None], 0),
            (vec![], 0),
            (
                vec![Some(i64::MIN), Some(i64::MAX), Some(0), Some(i64::MAX)],
                3,
            ),
            ((0..1000).map(|i| Some(i * 1_000_000_007)).collect(), 1000),
        ] {
            let key = |r: usize| vals.get(r).copied().flatten();
            assert_eq!(count_distinct(vals.len(), key), want, "{vals:?}");
            let mut order: Vec<u32> = (0..vals.len() as u32).collect();
            order.sort_by_key(|&r| key(r as usize));
            assert_eq!(count_runs(&order, key), want, "{vals:?}");
        }
    }
}
