-- Written for zerotrace: the `android.kernel_wakelocks` module:
-- `android_kernel_wakelocks`, for each wakelock and each interval between
-- two of its readings, the time the wakelock was held in that interval,
-- the interval's awake time (suspended time taken off, from
-- `android.suspend`) and the share of the awake time it was held (between
-- 0 and 1).

INCLUDE PERFETTO MODULE counters.intervals;

INCLUDE PERFETTO MODULE android.suspend;

CREATE PERFETTO TABLE _kernel_wakelock_track AS
SELECT id, name, extract_arg(dimension_arg_set_id, 'wakelock_type') AS type
FROM track
WHERE type = 'android_kernel_wakelock';

-- Each reading's interval with the time held in it.
CREATE PERFETTO TABLE _android_kernel_wakelocks_base AS
SELECT
  iv.ts,
  iv.ts AS original_ts,
  iv.dur,
  t.name,
  hash(t.name) AS name_int,
  t.type,
  iv.next_value - iv.value AS held_dur
FROM counter_leading_intervals!((
  SELECT id, ts, track_id, value
  FROM counter
  WHERE track_id IN (SELECT id FROM _kernel_wakelock_track)
)) AS iv
JOIN _kernel_wakelock_track AS t ON t.id = iv.track_id;

CREATE VIRTUAL TABLE _android_kernel_wakelocks_joined
USING span_join(_android_kernel_wakelocks_base PARTITIONED name_int, android_suspend_state);

CREATE PERFETTO TABLE android_kernel_wakelocks(
  ts TIMESTAMP,
  dur DURATION,
  awake_dur DURATION,
  name STRING,
  type STRING,
  held_dur DURATION,
  held_ratio DOUBLE
) AS
WITH
  per_interval AS (
    SELECT
      original_ts AS ts,
      name,
      type,
      held_dur,
      sum(dur) AS dur,
      sum(iif(power_state = 'awake', dur, 0)) AS awake_dur
    FROM _android_kernel_wakelocks_joined
    GROUP BY original_ts, name, type, held_dur
  )
SELECT
  ts,
  dur,
  awake_dur,
  name,
  type,
  cast_int!(held_dur) AS held_dur,
  max(min(held_dur / awake_dur, 1.0), 0.0) AS held_ratio
FROM per_interval;
