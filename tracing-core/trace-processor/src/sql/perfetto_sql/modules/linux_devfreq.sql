-- Written for zerotrace: the `linux.devfreq` module, over the counters of
-- the `devfreq/devfreq_frequency` ftrace event (tracks of type
-- `linux_device_frequency`, dimension `linux_device`). It provides
-- `_get_devfreq_counters(device_name)` (the frequency, kHz, of the devices
-- whose name matches the glob, as intervals of constant value) and
-- `linux_devfreq_dsu_counter`, that of ARM's DynamIQ Shared Unit.

INCLUDE PERFETTO MODULE counters.intervals;

CREATE PERFETTO FUNCTION _get_devfreq_counters(device_name STRING)
RETURNS TABLE(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  freq LONG
) AS
SELECT iv.id, iv.ts, iv.dur, cast(iv.value AS INT) AS freq
FROM counter_leading_intervals!((
  SELECT counter.id, counter.ts, counter.track_id, counter.value
  FROM counter
  JOIN track ON track.id = counter.track_id
  WHERE
    track.type = 'linux_device_frequency'
    AND extract_arg(track.dimension_arg_set_id, 'linux_device') GLOB $device_name
)) AS iv;

CREATE PERFETTO TABLE linux_devfreq_dsu_counter(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  dsu_freq LONG
) AS
SELECT id, ts, dur, freq AS dsu_freq FROM _get_devfreq_counters('*devfreq_dsu')
UNION ALL
SELECT id, ts, dur, freq AS dsu_freq FROM _get_devfreq_counters('*dsufreq');
