//! Counter samples as intervals of constant value, each sample leading
//! (what `counters.intervals`' `counter_leading_intervals!` answers): per
//! track, samples in (ts, id) order; of a run of equal values the first
//! two samples are kept and, when another value follows, the run's last
//! one too unless its ts is 0; each kept sample lasts until the next kept
//! one of its track, the last until the trace's end. Comparisons follow
//! SQL's: a NULL value equals and differs from nothing, and NULLs sort
//! first.

use super::samples::Sample;

/// One interval: a kept sample, how long it lasts, the next kept
/// sample's value and the change from the previous kept one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    /// The sample.
    pub sample: Sample,
    /// Until the next kept sample, or the trace's end (NULL when either
    /// end is NULL or the difference overflows).
    pub dur: Option<i64>,
    /// The next kept sample's value.
    pub next_value: Option<f64>,
    /// The value less the previous kept sample's (NULL for the first).
    pub delta_value: Option<f64>,
}

/// The samples in the order the intervals come: by track, ts, then id,
/// NULL first; equal keys keep their input order.
fn sort(samples: &mut [Sample]) {
    samples.sort_by_key(|a| (a.track, a.ts, a.id));
}

/// Whether `x` and `y` are both values and differ (SQL's `!=`, true).
fn differ(x: Option<f64>, y: Option<f64>) -> bool {
    matches!((x, y), (Some(x), Some(y)) if x != y)
}

/// SQL's `x - y` of two doubles (NULL when either is, or for NaN).
fn minus(x: Option<f64>, y: Option<f64>) -> Option<f64> {
    let d = x? - y?;
    (!d.is_nan()).then_some(d)
}

/// The intervals of `samples`, the last of each track lasting until
/// `trace_end`.
pub(crate) fn leading(mut samples: Vec<Sample>, trace_end: Option<i64>) -> Vec<Interval> {
    sort(&mut samples);
    let mut out = Vec::new();
    let mut kept: Vec<Sample> = Vec::new();
    for track in samples.chunk_by(|a, b| a.track == b.track) {
        kept.clear();
        let value = |i: Option<usize>| i.and_then(|i| track.get(i)).and_then(|s| s.value);
        for (i, s) in track.iter().enumerate() {
            let b1 = value(i.checked_sub(1));
            let b2 = value(i.checked_sub(2));
            let a1 = value(Some(i + 1));
            let keep = b1.is_none()
                || b2.is_none()
                || differ(b1, s.value)
                || differ(b2, s.value)
                || (differ(a1, s.value) && s.ts.is_some_and(|t| t != 0));
            if keep {
                kept.push(*s);
            }
        }
        for (i, s) in kept.iter().enumerate() {
            let next = kept.get(i + 1);
            let end = next.and_then(|n| n.ts).or(trace_end);
            out.push(Interval {
                sample: *s,
                dur: end.zip(s.ts).and_then(|(e, t)| e.checked_sub(t)),
                next_value: next.and_then(|n| n.value),
                delta_value: i
                    .checked_sub(1)
                    .and_then(|p| kept.get(p))
                    .and_then(|p| minus(s.value, p.value)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: i64, ts: i64, track: i64, value: f64) -> Sample {
        Sample {
            id: Some(id),
            ts: Some(ts),
            track: Some(track),
            value: Some(value),
        }
    }

    /// (id, ts, dur, track, value, next, delta) of each interval.
    type Row = (i64, i64, Option<i64>, i64, f64, Option<f64>, Option<f64>);

    fn rows(v: Vec<Interval>) -> Vec<Row> {
        v.into_iter()
            .map(|i| {
                (
                    i.sample.id.unwrap_or(-1),
                    i.sample.ts.unwrap_or(-1),
                    i.dur,
                    i.sample.track.unwrap_or(-1),
                    i.sample.value.unwrap_or(f64::NAN),
                    i.next_value,
                    i.delta_value,
                )
            })
            .collect()
    }

    #[test]
    fn runs_keep_their_first_two_and_last_samples_by_track_in_time_order() {
        // Track 2 given first and out of order; track 1 holds a run of
        // four 10s, then 30.
        let got = leading(
            vec![
                s(7, 10, 2, 20.0),
                s(6, 0, 2, 10.0),
                s(0, 0, 1, 10.0),
                s(1, 10, 1, 10.0),
                s(2, 15, 1, 10.0),
                s(3, 17, 1, 10.0),
                s(4, 20, 1, 30.0),
            ],
            Some(40),
        );
        assert_eq!(
            rows(got),
            vec![
                (0, 0, Some(10), 1, 10.0, Some(10.0), None),
                (1, 10, Some(7), 1, 10.0, Some(10.0), Some(0.0)),
                (3, 17, Some(3), 1, 10.0, Some(30.0), Some(0.0)),
                (4, 20, Some(20), 1, 30.0, None, Some(20.0)),
                (6, 0, Some(10), 2, 10.0, Some(20.0), None),
                (7, 10, Some(30), 2, 20.0, None, Some(10.0)),
            ]
        );
    }

    #[test]
    fn a_runs_last_sample_at_ts_0_and_a_run_at_the_end_add_nothing() {
        // 5, 5, 5 at ts 0 then 6: the third 5 is at ts 0, dropped. A run
        // of three at the end: its third sample is dropped too.
        let got = leading(
            vec![
                s(0, 0, 1, 5.0),
                s(1, 0, 1, 5.0),
                s(2, 0, 1, 5.0),
                s(3, 4, 1, 6.0),
                s(4, 5, 1, 6.0),
                s(5, 6, 1, 6.0),
            ],
            None,
        );
        assert_eq!(
            rows(got),
            vec![
                (0, 0, Some(0), 1, 5.0, Some(5.0), None),
                (1, 0, Some(4), 1, 5.0, Some(6.0), Some(0.0)),
                (3, 4, Some(1), 1, 6.0, Some(6.0), Some(1.0)),
                (4, 5, None, 1, 6.0, None, Some(0.0)),
            ]
        );
    }

    #[test]
    fn a_null_value_is_kept_and_differs_from_nothing() {
        let null = Sample {
            value: None,
            ..s(1, 1, 1, 0.0)
        };
        let got = leading(
            vec![s(0, 0, 1, 3.0), null, s(2, 2, 1, 3.0), s(3, 3, 1, 3.0)],
            Some(9),
        );
        // Row 2 follows a NULL (kept), row 3 follows 3 and NULL (kept).
        assert_eq!(got.len(), 4);
        assert_eq!(got[1].delta_value, None);
        assert_eq!(got[1].next_value, Some(3.0));
        assert_eq!(got[3].dur, Some(6));
    }
}
