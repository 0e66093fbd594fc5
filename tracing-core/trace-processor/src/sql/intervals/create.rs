//! Intervals from two lists of timestamps: each start is paired with the
//! first end strictly after it (several starts may share an end; a start
//! with no end after it makes no interval). Both lists sorted, one pass
//! over each. Sans-IO.

/// `(ts, dur)` of each interval `starts` and `ends` (both sorted) make.
pub(crate) fn create(starts: &[i64], ends: &[i64]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut e = 0;
    for &s in starts {
        while ends.get(e).is_some_and(|&end| end <= s) {
            e += 1;
        }
        let Some(&end) = ends.get(e) else { break };
        out.push((s, end.saturating_sub(s)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::create;

    #[test]
    fn each_start_takes_the_first_end_strictly_after_it() {
        assert_eq!(
            create(&[1, 3, 5, 10, 20], &[3, 7, 12]),
            [(1, 2), (3, 4), (5, 2), (10, 2)]
        );
        assert!(create(&[], &[1]).is_empty());
        assert!(create(&[5], &[1, 5]).is_empty());
    }
}
