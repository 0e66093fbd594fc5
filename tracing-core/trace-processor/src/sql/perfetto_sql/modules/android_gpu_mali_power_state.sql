-- android.gpu.mali_power_state, written for zerotrace: a Mali GPU's power
-- state (its counterpart of a CPU idle state) as intervals of constant
-- state, read from the `mali_gpu_power_state` counter track.

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval of constant Mali GPU power state.
CREATE PERFETTO TABLE android_mali_gpu_power_state(
  -- Start.
  ts TIMESTAMP,
  -- Duration.
  dur DURATION,
  -- The power state over the interval.
  power_state LONG
)
AS
SELECT i.ts, i.dur, cast_int!(i.value) AS power_state
FROM counter_leading_intervals!((
  SELECT c.*
  FROM counter AS c
  JOIN counter_track AS t ON t.id = c.track_id AND t.name = 'mali_gpu_power_state'
)) AS i;
