-- android.gpu.frequency, written for zerotrace: each GPU's frequency as
-- intervals of constant value, read from the `gpufreq` counter tracks of
-- `gpu_counter_track` (one per GPU).

INCLUDE PERFETTO MODULE counters.intervals;

-- One row per interval of constant GPU frequency.
CREATE PERFETTO TABLE android_gpu_frequency(
  -- Start.
  ts TIMESTAMP,
  -- Duration.
  dur DURATION,
  -- The GPU (joins `gpu_counter_track.gpu_id`).
  gpu_id LONG,
  -- Its frequency over the interval.
  gpu_freq LONG,
  -- The frequency of the interval before.
  prev_gpu_freq LONG,
  -- The frequency of the interval after.
  next_gpu_freq LONG
)
AS
SELECT
  i.ts,
  i.dur,
  t.gpu_id,
  cast_int!(i.value) AS gpu_freq,
  cast_int!(i.value - i.delta_value) AS prev_gpu_freq,
  cast_int!(i.next_value) AS next_gpu_freq
FROM counter_leading_intervals!((
  SELECT c.*
  FROM counter AS c
  JOIN gpu_counter_track AS g ON g.id = c.track_id AND g.name = 'gpufreq'
  WHERE g.gpu_id IS NOT NULL
)) AS i
JOIN gpu_counter_track AS t ON t.id = i.track_id;
