-- Written for zerotrace: the `chrome.vsync_intervals` module.
-- `chrome_vsync_intervals`: Chrome's `VSync` slices (the `Java`
-- category), each with the time until the next one on its track (which
-- tells 60 from 90 Hz), by track then time.
-- `chrome_calculate_avg_vsync_interval(begin_ts, end_ts)`: the mean of
-- those times over the VSyncs strictly inside the range; 1e9 / 60 when
-- there are none.

CREATE PERFETTO TABLE chrome_vsync_intervals(
  slice_id LONG,
  ts TIMESTAMP,
  dur DURATION,
  track_id LONG,
  time_to_next_vsync LONG
)
AS
SELECT
  id AS slice_id,
  ts,
  dur,
  track_id,
  lead(ts) OVER (PARTITION BY track_id ORDER BY ts) - ts AS time_to_next_vsync
FROM slice
WHERE name = 'VSync'
ORDER BY track_id, ts;

CREATE PERFETTO FUNCTION chrome_calculate_avg_vsync_interval(
  begin_ts TIMESTAMP,
  end_ts TIMESTAMP
)
RETURNS DOUBLE
AS
SELECT coalesce(
  (
    SELECT cast_double!(avg(v.time_to_next_vsync))
    FROM chrome_vsync_intervals AS v
    WHERE v.time_to_next_vsync IS NOT NULL AND v.ts > $begin_ts AND v.ts < $end_ts
  ),
  1e9 / 60
);
