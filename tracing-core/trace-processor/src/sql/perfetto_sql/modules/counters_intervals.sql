-- Written for zerotrace: the `counters.intervals` module. It provides
-- `counter_leading_intervals!(t)`, which turns the samples of counter-like
-- table `t` (columns id, ts, track_id, value) into intervals: each kept
-- sample holds its value until the next kept sample of its track, the
-- last one until the end of the trace. Of a run of equal values on one
-- track, the first two samples are kept and, when another value follows,
-- the run's last sample too (unless its ts is 0); the others add nothing.
-- Columns: id, ts, dur, track_id, value (DOUBLE), next_value (the next
-- kept sample's, NULL for the last) and delta_value (the change from the
-- previous kept sample, NULL for the first). Rows by track_id, then ts
-- (samples at the same ts in id order). The intervals are made by the
-- native operator __intrinsic_counter_leading_intervals
-- (src/sql/counter_intervals/) from the samples the aggregate
-- __intrinsic_counter_samples_agg gathers.

CREATE PERFETTO MACRO counter_leading_intervals(counter_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  SELECT id, ts, dur, track_id, value, next_value, delta_value
  FROM __intrinsic_counter_leading_intervals(
    (
      SELECT __intrinsic_counter_samples_agg(
        cast(id AS INT),
        cast(ts AS INT),
        cast(track_id AS INT),
        cast(value AS REAL)
      )
      FROM $counter_table
    ),
    trace_end()
  )
  ORDER BY track_id, ts, id
);
