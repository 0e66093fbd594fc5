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
-- (samples at the same ts in id order).

CREATE PERFETTO MACRO counter_leading_intervals(counter_table TableOrSubquery)
RETURNS TableOrSubquery
AS (
  WITH
    _zt_ci_input AS (
      SELECT
        cast(id AS INT) AS id,
        cast(ts AS INT) AS ts,
        cast(track_id AS INT) AS track_id,
        cast(value AS REAL) AS value
      FROM $counter_table
    ),
    _zt_ci_marked AS (
      SELECT
        id,
        ts,
        track_id,
        value,
        lag(value, 1) OVER _zt_ci_w AS before_1,
        lag(value, 2) OVER _zt_ci_w AS before_2,
        lead(value, 1) OVER _zt_ci_w AS after_1
      FROM _zt_ci_input
      WINDOW _zt_ci_w AS (PARTITION BY track_id ORDER BY ts, id)
    ),
    _zt_ci_kept AS (
      SELECT id, ts, track_id, value
      FROM _zt_ci_marked
      WHERE
        before_1 IS NULL
        OR before_2 IS NULL
        OR before_1 != value
        OR before_2 != value
        OR (after_1 IS NOT NULL AND after_1 != value AND ts != 0)
    )
  SELECT
    id,
    ts,
    coalesce(lead(ts) OVER _zt_ci_k, trace_end()) - ts AS dur,
    track_id,
    value,
    lead(value) OVER _zt_ci_k AS next_value,
    value - lag(value) OVER _zt_ci_k AS delta_value
  FROM _zt_ci_kept
  WINDOW _zt_ci_k AS (PARTITION BY track_id ORDER BY ts, id)
  ORDER BY track_id, ts, id
);
